"""Benchmark (not a test): what the supervisor and the two-phase journal add to one Hermes run.

    .venv/bin/python bench/run_overhead.py [--repeat 50]

Three medians over `--repeat` runs of `/bin/true` (so the figure is the harness's, not a model's):
a bare `subprocess.Popen` + wait (the floor: what the transport did before it had a supervisor, less its
pidfd wait), `process.run_bounded` (the supervisor started with `python -I`, its control and status pipes,
the tree sweep), and one journal's started record + settlement on a fresh ledger (two fsynced appends,
the run folder made and removed).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.hermes.outcome import RunRequest  # noqa: E402
from harness.hermes.process import run_bounded  # noqa: E402
from harness.ledger.journal import RunJournal  # noqa: E402
from harness.ledger.store import Ledger  # noqa: E402


def timed(action, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        action()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)

        def bare() -> None:
            subprocess.Popen(["/bin/true"], start_new_session=True).wait(timeout=10)

        def supervised() -> None:
            run_bounded(["/bin/true"], env={"PATH": "/usr/bin:/bin"}, cwd=root, spool_dir=root, timeout_s=10,
                        max_stdout_bytes=1 << 20)

        ledger = Ledger(root / "state" / "ledger.jsonl")
        request = RunRequest(prompt="bench", profile="tester")

        def journaled() -> None:
            journal = RunJournal(ledger, "bench")
            journal.begin(request, root, root / "hermes-cwd-bench")
            journal.settle({"kind": "bench", "status": "ok"})

        figures = {"bare Popen + wait": timed(bare, args.repeat),
                   "run_bounded (supervisor)": timed(supervised, args.repeat),
                   "journal started + settled": timed(journaled, args.repeat)}
    for name, ms in figures.items():
        print(f"{name:28s} median {ms:7.2f} ms")
    print(f"supervisor adds {figures['run_bounded (supervisor)'] - figures['bare Popen + wait']:.2f} ms per run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
