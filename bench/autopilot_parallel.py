"""Benchmark (not a test): does a parallel auto-pilot run of 3 children take about the time of one?

    .venv/bin/python bench/autopilot_parallel.py [--work-s 1.0] [--repeat 3]

Each child is the scriptable fake `hermes` of the delegation tests doing `--work-s` seconds of
simulated model latency, so the figure is the kernel's fan-out (threads, one transport run per
child, gates, ledger appends), not a model's speed. For every repeat, a one-child plan and a
three-child `swarm` plan run in fresh projects (so the retry-storm count never carries over), and
the median wall times are compared: 1.00 would be perfect overlap, 3.00 a serial run.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from harness.autopilot import KernelSettings, parse_plan, run_plan  # noqa: E402
from harness.dispatch.registry import parse_registry  # noqa: E402
from harness.ledger import default_ledger_path  # noqa: E402

FAKE = REPO / "tests" / "python" / "delegation" / "fake_hermes.py"
REGISTRY = {"agents": {"andy": {"profile": "tester", "good_at": ["career"]},
                       "cooper": {"profile": "tester", "good_at": ["health"]},
                       "scribe": {"profile": "tester", "good_at": ["summary"]}}}
TASKS = ["A summary of the career notes.", "A summary of the health notes.", "A summary of the week."]


def world(root: Path, work_s: float) -> dict[str, str]:
    (root / "hermes" / "profiles" / "tester").mkdir(parents=True)
    (root / "hermes" / "profiles" / "tester" / "config.yaml").write_text("agent: {api_max_retries: 0}\n")
    executable = root / "bin" / "hermes"
    executable.parent.mkdir()
    executable.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    executable.chmod(executable.stat().st_mode | stat.S_IXUSR)
    (root / "scenario.json").write_text(json.dumps([{"work_s": work_s, "stdout": "done"}]))
    return {**{k: v for k, v in os.environ.items() if not k.startswith(("HERMES_AUTOBOT", "MAFIABOT_AUTOPILOT"))},
            "HOME": str(root), "HERMES_HOME": str(root / "hermes"), "MAFIABOT_HERMES": str(executable),
            "FAKE_HERMES_SCENARIO": str(root / "scenario.json"), "FAKE_HERMES_LOG": str(root / "calls.jsonl")}


def timed(root: Path, name: str, tasks: list[str], mode: str, environ: dict[str, str]) -> float:
    project = root / name
    project.mkdir()
    plan = parse_plan({"goal": "Benchmark the fan-out", "mode": mode, "subtasks": tasks}, base_dir=project)
    settings = KernelSettings(project_root=project, ledger_path=default_ledger_path(project),
                              registry=parse_registry(REGISTRY, "bench"))
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(environ)
    try:
        start = time.perf_counter()
        result = run_plan(plan, settings)
        elapsed = time.perf_counter() - start
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if result.status != "completed":
        raise SystemExit(f"{name}: the run ended {result.status}: {result.envelope.get('escalation')}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work-s", type=float, default=1.0, help="simulated seconds of work per child")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each plan (the median is reported)")
    args = parser.parse_args()
    one, three = [], []
    with tempfile.TemporaryDirectory(prefix="bench-autopilot-") as scratch:
        root = Path(scratch)
        environ = world(root, args.work_s)
        for number in range(args.repeat):
            one.append(timed(root, f"one-{number}", TASKS[:1], "sequential", environ))
            three.append(timed(root, f"three-{number}", TASKS, "swarm", environ))
    single, fanned = statistics.median(one), statistics.median(three)
    print(f"auto-pilot fan-out: fake hermes, {args.work_s:g} s of simulated work per child, "
          f"{os.cpu_count()} cores, median of {args.repeat}")
    print(f"  1 child (sequential):       {single:6.2f} s")
    print(f"  3 children (swarm, N = 3):  {fanned:6.2f} s")
    print(f"  ratio 3 vs 1:               {fanned / single:6.2f}  (1.00 = full overlap, 3.00 = serial)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
