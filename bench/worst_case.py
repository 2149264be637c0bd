"""Worst-case turns: the CPU of one turn of each adversarial input of `tests/corpus/worst_case.py`.

Invariants:
- A figure is the body's own CPU (user + system, from the kernel's accounting of the child)
  for a conversation with the worst-case turn minus the same conversation without it, the
  lowest of `repeats` alternating pairs: what one turn of that input costs, start-up and the
  memory turns taken out, with the machine's noise (which only adds) kept low.
- Every conversation is fed from a file, so no pipe wake-up is counted, and is bounded by
  `CONVERSATION_DEADLINE`; a body that overruns it is reported as such, not measured.
- The target is issue 12's: at most 50 ms of CPU for a 4 MB turn of any content.

`python -m bench.worst_case [--size BYTES] [--repeats N] [--body PATH]` measures the rows alone, prints
them and writes them to bench/results/worst_case.md (the full run puts them in latest.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

from bench import servers, workloads

CORPUS = workloads.ROOT / "tests" / "corpus" / "worst_case.py"
RESULTS = workloads.ROOT / "bench" / "results"
FULL_SIZE = 4_000_000
TARGET_MS = 50.0
# The slowest case before issue 12 ran for about a minute at 4 MB; a body that takes this
# long for one turn has regressed beyond measuring.
CONVERSATION_DEADLINE = 120.0


def corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location("worst_case_corpus", CORPUS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["worst_case_corpus"] = module  # dataclasses look their module up while building
    spec.loader.exec_module(module)
    return module


def _child_cpu_s(body: Path, fixture: Path, conversation: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with conversation.open("rb") as stdin:
        subprocess.run([str(body), "--organs", str(fixture), "--no-soul"], stdin=stdin,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                       timeout=CONVERSATION_DEADLINE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def rows(body: Path, size: int = FULL_SIZE, repeats: int = 5) -> list[dict]:
    cases = corpus()
    out = []
    with tempfile.TemporaryDirectory(prefix="mafiabot-worst-") as name:
        work = Path(name)
        fixtures = {largest: cases.write_fixture(work, largest) for largest in (False, True)}
        for number, case in enumerate(cases.CASES):
            with_turn, without = work / f"case-{number}.jsonl", work / f"case-{number}-base.jsonl"
            with_turn.write_bytes(cases.requests(case, size))
            without.write_bytes(cases.requests(case, None))
            row = {"case": case.name, "target": case.target, "why": case.why,
                   "line_bytes": cases.line_bytes(case, size)}
            try:
                turn_ms = min((_child_cpu_s(body, fixtures[case.largest], with_turn)
                               - _child_cpu_s(body, fixtures[case.largest], without)) * 1000
                              for _ in range(repeats))
                row["cpu_ms"] = round(max(turn_ms, 0.0), 1)
            except subprocess.TimeoutExpired:
                row["cpu_ms"] = None
                row["overran_s"] = CONVERSATION_DEADLINE
            out.append(row)
    return out


def worst_ms(results: list[dict]) -> float | None:
    """The costliest case, or None when one overran (a regression, never a pass)."""
    figures = [row["cpu_ms"] for row in results]
    return None if any(f is None for f in figures) else max(figures)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.worst_case")
    parser.add_argument("--size", type=int, default=FULL_SIZE, help="bytes of the turn's line")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--body", type=Path, default=servers.body_path())
    options = parser.parse_args(argv)
    measured = rows(options.body, options.size, options.repeats)
    for row in measured:
        figure = "overran" if row["cpu_ms"] is None else f"{row['cpu_ms']:.1f} ms"
        print(f"{row['case']:<48} {row['target']:<24} {row['line_bytes']:>9,} B  {figure}")
    lines = [f"# Worst-case turns ({options.body})", "",
             (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {options.size:,}-byte lines, the CPU of one "
              f"turn (the conversation with it minus the one without), lowest of {options.repeats}; target "
              f"≤ {TARGET_MS:g} ms; load average {os.getloadavg()[0]:.2f} at the end (`python -m bench.worst_case`)."),
             "", "| input | aimed at | line bytes | CPU ms |", "| --- | --- | --- | --- |"]
    lines += [f"| {r['case']} | {r['target']} | {r['line_bytes']:,} | "
              f"{'overran' if r['cpu_ms'] is None else r['cpu_ms']} |" for r in measured]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "worst_case.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
