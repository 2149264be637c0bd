"""A fixed sample of mutants of the input edge, run against a suite: how many does it kill?

    .venv/bin/python tests/tools/mutants.py --tests-from main --out /tmp/old.json
    .venv/bin/python tests/tools/mutants.py --tests-from WORKTREE --out /tmp/new.json

Each mutant changes one operator or constant in one of TARGETS (a comparison flipped, `and`/`or`
swapped, a `not` dropped, an integer moved by one, True/False swapped, `+`/`-` swapped); the sample is
SAMPLE of them drawn with SEED, so both runs meet the same mutants in the same order (a run stopped early
has met a prefix: compare two runs on the mutants both have met). A mutant is run in a scratch copy
(the harness of this checkout with the one change, the tests of `--tests-from`: a git revision, or
WORKTREE for the files as they are here), with `pytest -x` over SUITE_FILES and the marker expression
`make test` uses (`--marker`); it is killed when the run fails or outlives MUTANT_BOUND. The checkout
itself is never written.

Invariants:
- The mutation points are found by walking each target's syntax tree in source order, docstrings and
  type annotations left out (a mutated annotation is no behaviour); the sample is a pure function of
  the files, SEED and SAMPLE.
- The unmutated harness must pass the suite first, or nothing is reported.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGETS = ("harness/strict_json.py", "harness/strict_yaml.py", "harness/typed_inputs.py",
           *sorted(str(p.relative_to(REPO)) for p in (REPO / "harness" / "cli").glob("*.py")))
# The tests of these modules, quickest first (-x stops at the first failure).
SUITE_FILES = ("test_strict_json.py", "test_strict_yaml.py", "test_typed_inputs.py", "test_settings.py",
               "test_cli.py", "test_cli_edge.py")
SEED = 26
SAMPLE = 150
# A mutant still running after this long hangs (a loop bound moved): killed.
MUTANT_BOUND = 900.0
# What the scratch copy needs beside harness/ and tests/: read in place, never written by these tests.
LINKED = ("mafiabot_core", "stubs", "examples", "docs", "skills", "README.md", "pyproject.toml")
WORKTREE = "WORKTREE"

COMPARE_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


@dataclass(frozen=True)
class Mutant:
    file: str
    index: int      # the how-manieth mutable node of the file, in walk order
    line: int
    what: str


def annotation_nodes(tree: ast.AST) -> set[int]:
    """ids of every node inside a type annotation, or a docstring."""
    inside: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            inside.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, (ast.arg, ast.AnnAssign)):
            mark(node.annotation)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mark(node.returns)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                mark(first)
    return inside


def mutable(node: ast.AST) -> str | None:
    """What mutating `node` would do, or None when it is no mutation point."""
    if isinstance(node, ast.Compare) and type(node.ops[0]) in COMPARE_SWAP:
        return f"{type(node.ops[0]).__name__} -> {COMPARE_SWAP[type(node.ops[0])].__name__}"
    if isinstance(node, ast.BoolOp):
        return "and <-> or"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return "not dropped"
    if isinstance(node, ast.Constant) and type(node.value) is bool:
        return f"{node.value} -> {not node.value}"
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return f"{node.value} -> {node.value + 1}"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return "+ <-> -"
    return None


class Mutator(ast.NodeTransformer):
    """Walks a module in source order (pre-order), numbering its mutation points; mutates number `target`."""

    def __init__(self, relative: str, tree: ast.AST, target: int = -1) -> None:
        self.relative, self.skip, self.target = relative, annotation_nodes(tree), target
        self.found: list[Mutant] = []

    def visit(self, node: ast.AST) -> ast.AST:
        what = mutable(node) if id(node) not in self.skip else None
        if what is not None:
            self.found.append(Mutant(self.relative, len(self.found), getattr(node, "lineno", 0), what))
            if self.found[-1].index == self.target:
                node = mutate(node)
        return self.generic_visit(node)


def mutate(node: ast.AST) -> ast.AST:
    if isinstance(node, ast.Compare):
        node.ops[0] = COMPARE_SWAP[type(node.ops[0])]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.UnaryOp):
        return node.operand
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        node.value = not node.value
    elif isinstance(node, ast.Constant):
        node.value += 1
    elif isinstance(node, ast.BinOp):
        node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
    return node


def points(relative: str) -> list[Mutant]:
    tree = ast.parse((REPO / relative).read_text(encoding="utf-8"))
    mutator = Mutator(relative, tree)
    mutator.visit(tree)
    return mutator.found


def mutated_source(mutant: Mutant) -> str:
    tree = ast.parse((REPO / mutant.file).read_text(encoding="utf-8"))
    Mutator(mutant.file, tree, mutant.index).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def sample() -> list[Mutant]:
    everything = [mutant for relative in TARGETS for mutant in points(relative)]
    # In drawn order, not sorted: a run cut short has met a random sample of its own (a prefix of this one).
    return random.Random(SEED).sample(everything, min(SAMPLE, len(everything)))


def scratch(tests_from: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix="mafiabot-mutants-"))
    shutil.copytree(REPO / "harness", root / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    for name in LINKED:
        (root / name).symlink_to(REPO / name)
    if tests_from == WORKTREE:
        shutil.copytree(REPO / "tests", root / "tests", ignore=shutil.ignore_patterns("__pycache__", "tools"))
    else:
        archive = subprocess.run(["git", "archive", tests_from, "tests"], cwd=REPO, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    return root


def run_suite(root: Path, marker: str) -> tuple[bool, float]:
    """Whether the suite passed in `root`, and how long it took."""
    files = [f"tests/python/{name}" for name in SUITE_FILES if (root / "tests" / "python" / name).exists()]
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-m", "pytest", *files, "-x", "-q", "-p", "no:randomly",
                              "-p", "no:cacheprovider", "-m", marker], cwd=root, env=env, capture_output=True,
                             timeout=MUTANT_BOUND, check=False)
        passed = run.returncode == 0
    except subprocess.TimeoutExpired:
        passed = False
    return passed, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests-from", required=True, help=f"a git revision, or {WORKTREE}")
    parser.add_argument("--marker", default="not exhaustive", help="the -m expression (default: make test's)")
    parser.add_argument("--out", type=Path, required=True, help="where the results go (JSON)")
    parser.add_argument("--list", action="store_true", help="print the sample and stop")
    args = parser.parse_args()
    mutants = sample()
    if args.list:
        for mutant in mutants:
            print(f"{mutant.file}:{mutant.line} #{mutant.index} {mutant.what}")
        return 0
    root = scratch(args.tests_from)
    try:
        passed, seconds = run_suite(root, args.marker)
        if not passed:
            print(f"the unmutated harness fails the suite of {args.tests_from}: nothing to compare", file=sys.stderr)
            return 1
        results = []
        for number, mutant in enumerate(mutants, 1):
            target = root / mutant.file
            original = target.read_text(encoding="utf-8")
            target.write_text(mutated_source(mutant), encoding="utf-8")
            try:
                survived, seconds = run_suite(root, args.marker)
            finally:
                target.write_text(original, encoding="utf-8")
            results.append({**asdict(mutant), "killed": not survived, "seconds": round(seconds, 1)})
            print(f"[{number}/{len(mutants)}] {'killed ' if not survived else 'SURVIVED'} {mutant.file}:{mutant.line} "
                  f"{mutant.what} ({seconds:.0f} s)", flush=True)
            args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
        killed = sum(r["killed"] for r in results)
        print(f"{args.tests_from}: killed {killed} of {len(results)} ({100 * killed / len(results):.1f} %)")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
