"""`python -m bench.recall`: what `--recall relevance` costs a stored turn, in callgrind instructions.

Invariants:
- Instruction counts come from valgrind's callgrind (repeatable on a shared machine, unlike time):
  per-turn figures are (run with N turns - run with the handshake only) / N, each run a fresh store.
- The turns are one pinned 8-pass session's, with `--state`: the same lines with `--recall fixture`
  (the default) and with `--recall relevance`; the ratio is relevance / fixture (issue 24's target
  is at most 1.2).
- Two inputs: `varied`, a cycle of sentences on different subjects sharing some words, and `same`,
  the one bench input every turn (every kept turn then matches every query word: the ranking's worst
  case for its memory's size).
- Writes bench/results/recall.md and prints the same text.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from bench import profile, workloads

RESULTS = workloads.ROOT / "bench" / "results"
# callgrind runs ~50x slower than native; 300 turns fill the 16-deep memory many times over.
TURNS = 300
VARIED = [
    "what is the shape of the moon tonight?",
    "the harbour boats sail out at dawn with the tide",
    "a recipe for lemon cake needs sugar and butter",
    "the weather forecast says heavy rain over the harbour",
    "my bicycle chain snapped on the hill near the moon tower",
    "how much sugar goes into the lemon cake tonight?",
]


def requests(directory: Path, name: str, inputs: list[str], turns: int) -> Path:
    key = workloads.PINNED[8][0]
    path = directory / f"recall-{name}-{turns}.jsonl"
    lines = [workloads.turn_line(1 + n, key, inputs[n % len(inputs)]) for n in range(turns)]
    path.write_bytes(workloads.initialize_line() + b"".join(lines))
    return path


def per_turn(fixture: Path, work: Path, recall: str, name: str, inputs: list[str], turns: int) -> float:
    def run(count: int) -> int:
        store = work / f"store-{recall}-{name}-{count}.db"
        argv = [*profile.body_argv(fixture), "--state", str(store), "--recall", recall]
        return profile.callgrind(argv, requests(work, name, inputs, count), work / f"cg-{recall}-{name}.out")
    return (run(turns) - run(0)) / turns


def rows(turns: int) -> list[dict]:
    """Per input: a stored turn's instructions with each recall, and their ratio (what `make bench` reports)."""
    work = Path(tempfile.mkdtemp(prefix="mafiabot-bench-recall-"))
    try:
        fixture = workloads.write_bench_fixture(work)
        out = []
        for name, inputs in (("varied", VARIED), ("same", [workloads.TURN_INPUT])):
            fixture_cost = per_turn(fixture, work, "fixture", name, inputs, turns)
            relevance_cost = per_turn(fixture, work, "relevance", name, inputs, turns)
            out.append({"inputs": name, "turns": turns, "fixture": round(fixture_cost),
                        "relevance": round(relevance_cost), "ratio": round(relevance_cost / fixture_cost, 3)})
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(turns: int) -> list[str]:
    lines = ["# Recall by relevance: a stored turn's instructions (callgrind)", "",
             f"{turns} turns of one pinned 8-pass session with `--state`, less the handshake alone.", "",
             "| inputs | `--recall fixture` | `--recall relevance` | relevance / fixture |",
             "| --- | --- | --- | --- |"]
    lines += [f"| {row['inputs']} | {row['fixture']:,} | {row['relevance']:,} | {row['ratio']:.3f} |"
              for row in rows(turns)]
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall", description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=TURNS, help=f"turns per run (default {TURNS})")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("bench.recall: valgrind is not installed")
        return 1
    text = "\n".join(measure(args.turns))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "recall.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
