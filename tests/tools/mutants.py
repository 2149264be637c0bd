"""A fixed sample of mutants of the input edge, run against a suite: how many does it kill?

    .venv/bin/pip install -e '.[mutants]'         # coverage.py, for the map of which test runs which line
    .venv/bin/python tests/tools/mutants.py --tests-from d63c46c --out bench/results/mutants-old.json
    .venv/bin/python tests/tools/mutants.py --tests-from WORKTREE --out bench/results/mutants-new.json
    .venv/bin/python tests/tools/mutants.py --compare bench/results/mutants-old.json \
        bench/results/mutants-new.json --markdown bench/results/mutants.md

Each mutant changes one operator or constant in one of TARGETS (a comparison flipped, `and`/`or`
swapped, a `not` dropped, an integer moved by one, True/False swapped, `+`/`-` swapped); the sample is
SAMPLE of them drawn with SEED, so both runs meet the same mutants in the same order (a run stopped early
has met a prefix: compare two runs on the mutants both have met). A mutant is run in a scratch copy (the
harness of this checkout with the one change, the tests of `--tests-from`: a git revision, or WORKTREE
for the files as they are here) over SUITE_FILES with the marker expression `make test` uses
(`--marker`); it is killed when a test fails or the run outlives MUTANT_BOUND. The checkout itself is
never written.

A mutant is killed exactly when `pytest -x` over the whole suite would fail on it; the tool only avoids
running tests that cannot meet the change. First the unmutated suite runs once plainly (its failures are
deselected for every mutant: tests of the past that the harness has since legitimately outgrown) and once
under coverage.py, each test's lines (in process and in every subprocess it starts) recorded under its
node id. Then a mutant inside a function body runs only the tests that executed one of its lines, in
suite order with `-x`; a mutant no test executes survives without a run. A mutant executed at import
(module or class level, a default, a decorator) or during collection reaches every test: it runs them
all, as does one whose recorded tests are no longer collected. `--full` runs every mutant over every test
(the slow, map-free way, to check the map on a few).

Invariants:
- The mutation points are found by walking each target's syntax tree in source order, docstrings and
  type annotations left out (a mutated annotation is no behaviour); the sample is a pure function of
  the files, SEED and SAMPLE.
- The unmutated harness must pass the suite (less what it deselects) under the map, or nothing is
  reported; every deselected test is listed in the results with its first failure line.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TOOLS = Path(__file__).resolve().parent
TARGETS = ("harness/strict_json.py", "harness/strict_yaml.py", "harness/typed_inputs.py",
           *sorted(str(p.relative_to(REPO)) for p in (REPO / "harness" / "cli").glob("*.py")))
# The tests of these modules, quickest first (-x stops at the first failure).
SUITE_FILES = ("test_strict_json.py", "test_strict_yaml.py", "test_typed_inputs.py", "test_cli_inputs.py",
               "test_settings.py", "test_cli.py", "test_cli_edge.py")
SEED = 26
SAMPLE = 150
# A mutant still running after this long, plus three times the unmutated suite's own run, hangs (a loop
# bound moved): killed. The suite's share keeps a whole-suite run on a loaded machine from counting as one.
MUTANT_BOUND = 900.0
# The plain and the mapped run of the unmutated suite (the old suite under coverage takes minutes).
BASELINE_BOUND = 5400.0
# What the scratch copy needs beside harness/ and tests/: read in place, never written by these tests.
LINKED = ("mafiabot_core", "stubs", "examples", "docs", "skills", "README.md", "pyproject.toml")
WORKTREE = "WORKTREE"
EVERY_TEST = "every test"
# Every subprocess a test starts reads this rc file (COVERAGE_PROCESS_START) and records under the test's id.
COVERAGE_RC = """[run]
data_file = {root}/.coverage
parallel = true
sigterm = true
include = {root}/harness/*
context = ${{MUTANTS_TEST}}
"""

COMPARE_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
                ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


@dataclass(frozen=True)
class Mutant:
    file: str
    index: int      # the how-manieth mutable node of the file, in walk order
    line: int
    what: str
    lines: tuple[int, ...]  # where a test that meets it has been: the node's lines and its statement's first
    at_import: bool         # outside every function body: it runs at import, before any test


def placements(tree: ast.AST) -> dict[int, tuple[int, bool]]:
    """For the id of every node: the first line of the innermost statement holding it, and whether that
    statement runs at import (no function body encloses it; defaults and decorators run at import)."""
    found: dict[int, tuple[int, bool]] = {}

    def walk(node: ast.AST, statement_line: int, at_import: bool) -> None:
        if isinstance(node, ast.stmt):
            statement_line = node.lineno
        found[id(node)] = (statement_line, at_import)
        for field, value in ast.iter_fields(node):
            body = field == "body" and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    walk(child, statement_line, at_import and not body)

    walk(tree, 0, True)
    return found


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
        self.placed = placements(tree)
        self.found: list[Mutant] = []

    def visit(self, node: ast.AST) -> ast.AST:
        what = mutable(node) if id(node) not in self.skip else None
        if what is not None:
            line = getattr(node, "lineno", 0)
            statement_line, at_import = self.placed[id(node)]
            lines = tuple(sorted({statement_line, *range(line, (getattr(node, "end_lineno", None) or line) + 1)}))
            self.found.append(Mutant(self.relative, len(self.found), line, what, lines, at_import))
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
    if tests_from == WORKTREE or Path(tests_from).is_dir():
        # A folder: the tests of another checkout (a `git worktree add` of an old commit, outside this tree).
        source = REPO if tests_from == WORKTREE else Path(tests_from)
        shutil.copytree(source / "tests", root / "tests", ignore=shutil.ignore_patterns("__pycache__", "tools"))
    else:
        archive = subprocess.run(["git", "archive", tests_from, "tests"], cwd=REPO, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    return root


@dataclass
class Run:
    passed: bool
    seconds: float
    cpu_seconds: float                 # user + system of the run's processes: the figure load does not move much
    first_failure: list[str] | None   # [node id, first line], or None (passed, or no test reached)
    missing: set[str]                  # selected ids the run did not collect


def run_suite(root: Path, marker: str, *, exit_first: bool = True, select: Iterable[str] | None = None,
              deselect: Iterable[str] = (), coverage: bool = False, outcomes: Path | None = None,
              bound: float = MUTANT_BOUND) -> Run:
    """pytest over SUITE_FILES in `root` with mutants_plugin; `select`: only these node ids."""
    files = [f"tests/python/{name}" for name in SUITE_FILES if (root / "tests" / "python" / name).exists()]
    if select is not None:
        select = list(select)
        # Only the files of the chosen tests are collected (the old edge file alone collects 4,417 cases).
        files = [name for name in files if any(nodeid.startswith(f"{name}::") for nodeid in select)]
    work = Path(tempfile.mkdtemp(prefix="run-", dir=root))
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{TOOLS}", "PYTHONDONTWRITEBYTECODE": "1",
           "MUTANTS_FIRST_FAILURE": str(work / "first_failure.json")}
    (work / "deselect").write_text("".join(f"{nodeid}\n" for nodeid in deselect), encoding="utf-8")
    env["MUTANTS_DESELECT"] = str(work / "deselect")
    if select is not None:
        (work / "select").write_text("".join(f"{nodeid}\n" for nodeid in select), encoding="utf-8")
        env["MUTANTS_SELECT"], env["MUTANTS_MISSING"] = str(work / "select"), str(work / "missing")
    if outcomes is not None:
        env["MUTANTS_OUTCOMES"] = str(outcomes)
    command = [sys.executable, "-m", "pytest"]
    if coverage:
        rc = root / ".mutants-coveragerc"
        rc.write_text(COVERAGE_RC.format(root=root), encoding="utf-8")
        env["MUTANTS_COVERAGE_RC"] = str(rc)
        command = [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", "-m", "pytest"]
    command += [*files, "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "mutants_plugin",
                "-m", marker, *(["-x"] if exit_first else [])]
    started, cpu_before = time.monotonic(), children_cpu()
    try:
        run = subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=bound, check=False)
        passed, timed_out = run.returncode == 0, False
    except subprocess.TimeoutExpired:
        passed, timed_out = False, True
    seconds, cpu_seconds = time.monotonic() - started, children_cpu() - cpu_before
    failure_file = work / "first_failure.json"
    first_failure = json.loads(failure_file.read_text(encoding="utf-8")) if failure_file.exists() else None
    if timed_out:
        first_failure = ["(timeout)", f"the run outlived {bound:.0f} s"]
    elif not passed and first_failure is None:
        # pytest stopped before any test failed: a collection or usage error (the mutant broke an import).
        tail = run.stdout.decode(errors="replace").strip().splitlines()[-1:] or ["(no output)"]
        first_failure = ["(collection)", tail[0][:300]]
    missing_file = work / "missing"
    missing = set(missing_file.read_text(encoding="utf-8").splitlines()) if missing_file.exists() else set()
    shutil.rmtree(work, ignore_errors=True)
    return Run(passed, seconds, cpu_seconds, first_failure, missing - {""})


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Map:
    tests: list[str]                            # every test the unmutated suite ran and passed, in order
    deselected: dict[str, str]                  # node id -> why (its first failure line)
    by_line: dict[str, dict[int, set[str]]]     # target -> line -> ids of the tests that executed it
    seconds: dict[str, float]


def baseline(root: Path, marker: str) -> Map:
    """The plain run (what fails unmutated), then the mapped run (which test runs which line)."""
    plain_outcomes, mapped_outcomes = root / "plain-outcomes.json", root / "mapped-outcomes.json"
    plain = run_suite(root, marker, exit_first=False, outcomes=plain_outcomes, bound=BASELINE_BOUND)
    outcomes = json.loads(plain_outcomes.read_text(encoding="utf-8")) if plain_outcomes.exists() else {}
    if not outcomes:
        raise SystemExit(f"the unmutated suite ran no test: {plain.first_failure}")
    deselected = {nodeid: message for nodeid, (outcome, message) in outcomes.items() if outcome == "failed"}
    mapped = run_suite(root, marker, exit_first=False, deselect=deselected, coverage=True,
                       outcomes=mapped_outcomes, bound=BASELINE_BOUND)
    if not mapped.passed:
        mapped = retry_mapped(root, marker, mapped_outcomes, mapped)
    subprocess.run([sys.executable, "-m", "coverage", "combine", "-q", f"--rcfile={root / '.mutants-coveragerc'}"],
                   cwd=root, check=True, capture_output=True)
    return read_map(root, deselected, {"plain": round(plain.seconds, 1), "mapped": round(mapped.seconds, 1),
                                       "plain_cpu": round(plain.cpu_seconds, 1),
                                       "mapped_cpu": round(mapped.cpu_seconds, 1)})


def retry_mapped(root: Path, marker: str, mapped_outcomes: Path, mapped: Run) -> Run:
    """The tests that failed under the map, once more under it, alone; the mapped run as if they had passed.

    Coverage slows every process a test starts (the recording relay is Python): on a loaded machine a
    bounded start-up that passed in the plain run can run out under the map. Their lines from both
    attempts are kept, so a mutant meets them wherever either attempt went.
    """
    outcomes = json.loads(mapped_outcomes.read_text(encoding="utf-8")) if mapped_outcomes.exists() else {}
    failed = [nodeid for nodeid, (outcome, _) in outcomes.items() if outcome == "failed"]
    retry_outcomes = root / "mapped-retry-outcomes.json"
    retry = run_suite(root, marker, exit_first=False, select=failed, coverage=True, outcomes=retry_outcomes,
                      bound=BASELINE_BOUND) if failed else mapped
    if not failed or not retry.passed or retry.missing:
        raise SystemExit(f"the unmutated suite fails under the map: {retry.first_failure or mapped.first_failure}")
    print(f"under the map, {len(failed)} test(s) failed once and passed alone: {failed}", file=sys.stderr, flush=True)
    outcomes.update(json.loads(retry_outcomes.read_text(encoding="utf-8")))
    mapped_outcomes.write_text(json.dumps(outcomes, indent=0), encoding="utf-8")
    return Run(True, mapped.seconds + retry.seconds, mapped.cpu_seconds + retry.cpu_seconds, None, set())


def read_map(root: Path, deselected: dict[str, str], seconds: dict[str, float]) -> Map:
    """The map from the mapped run's outcomes and its combined coverage data in `root`."""
    import coverage  # only this step needs it: `--list` and `--compare` run without

    data = coverage.CoverageData(basename=str(root / ".coverage"))
    data.read()
    by_line: dict[str, dict[int, set[str]]] = {}
    for relative in TARGETS:
        contexts = data.contexts_by_lineno(str(root / relative))
        by_line[relative] = {line: set(ids) for line, ids in contexts.items()}
    mapped_tests = json.loads((root / "mapped-outcomes.json").read_text(encoding="utf-8"))
    tests = [nodeid for nodeid, (outcome, _) in mapped_tests.items() if outcome != "failed"]
    return Map(tests, deselected, by_line, seconds)


def save_map(suite: Map, path: Path) -> None:
    """The map as JSON, each test by its place in `tests` ("" as -1): the old suite's is megabytes else."""
    place = {nodeid: number for number, nodeid in enumerate(suite.tests)}
    place[""] = -1
    by_line = {relative: {str(line): sorted(place[nodeid] for nodeid in ids if nodeid in place)
                          for line, ids in lines.items()} for relative, lines in suite.by_line.items()}
    document = {"tests": suite.tests, "deselected": suite.deselected, "seconds": suite.seconds, "by_line": by_line}
    temporary = path.with_name(path.name + ".part")
    temporary.write_text(json.dumps(document), encoding="utf-8")
    temporary.replace(path)


def load_map(path: Path) -> Map:
    document = json.loads(path.read_text(encoding="utf-8"))
    tests = document["tests"]
    by_line = {relative: {int(line): {tests[number] if number >= 0 else "" for number in numbers}
                          for line, numbers in lines.items()} for relative, lines in document["by_line"].items()}
    return Map(tests, document["deselected"], by_line, document["seconds"])


def tests_meeting(mutant: Mutant, suite: Map) -> list[str] | None:
    """The tests that executed the mutant's lines, in suite order; None: every test (it runs at import)."""
    if mutant.at_import:
        return None
    met: set[str] = set()
    for line in mutant.lines:
        met |= suite.by_line[mutant.file].get(line, set())
    if "" in met:  # executed outside any test: at collection, where it may change what is collected
        return None
    return [nodeid for nodeid in suite.tests if nodeid in met]


def run_mutants(args: argparse.Namespace, mutants: list[Mutant]) -> int:
    root = scratch(args.tests_from)
    started = time.monotonic()
    try:
        if args.full:
            plain = run_suite(root, args.marker, bound=BASELINE_BOUND)
            if not plain.passed:
                print(f"the unmutated harness fails the suite of {args.tests_from}: {plain.first_failure}",
                      file=sys.stderr)
                return 1
            suite = Map([], {}, {}, {"plain": round(plain.seconds, 1), "plain_cpu": round(plain.cpu_seconds, 1)})
        elif args.map and args.map.exists():
            suite = load_map(args.map)
        else:
            suite = baseline(root, args.marker)
            if args.map:
                save_map(suite, args.map)
        print(f"{args.tests_from}: {len(suite.tests)} tests, {len(suite.deselected)} deselected "
              f"(fail unmutated), baseline {suite.seconds}", flush=True)
        results: list[dict[str, Any]] = []
        if args.resume and args.out.exists():
            results = json.loads(args.out.read_text(encoding="utf-8"))["mutants"]
            if args.retry_survivors:  # tests added since: what survived may not now (what was killed stays so)
                results = [r for r in results if r["killed"]]
        met = {(r["file"], r["index"]) for r in results}
        chosen = mutants[:args.limit or None]
        if args.survivors_first:
            chosen = survivors_first(chosen, json.loads(args.survivors_first.read_text(encoding="utf-8"))["mutants"])
        for number, mutant in enumerate(chosen, 1):
            if (mutant.file, mutant.index) in met:
                continue
            result = run_one(root, args, mutant, suite)
            results.append(result)
            print(f"[{number}/{len(mutants)}] {'killed ' if result['killed'] else 'SURVIVED'} {mutant.file}:"
                  f"{mutant.line} {mutant.what} ({result['tests']} tests, {result['seconds']:.0f} s) "
                  f"{result['how']}", flush=True)
            write_results(args, suite, results)
        killed = sum(r["killed"] for r in results)
        print(f"{args.tests_from}: killed {killed} of {len(results)} ({100 * killed / max(len(results), 1):.1f} %)"
              f" in {time.monotonic() - started:.0f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def survivors_first(mutants: list[Mutant], other: list[dict[str, Any]]) -> list[Mutant]:
    """The mutants another suite's results let survive, then those it has not met, then those it killed.

    Only the order changes: a run cut short has met first the mutants that decide whether this suite
    kills one the other does not.
    """
    killed = {(r["file"], r["index"]): bool(r["killed"]) for r in other}
    rank = {None: 1, False: 0, True: 2}
    return sorted(mutants, key=lambda m: rank[killed.get((m.file, m.index))])


def run_one(root: Path, args: argparse.Namespace, mutant: Mutant, suite: Map) -> dict[str, Any]:
    select = None if args.full else tests_meeting(mutant, suite)
    result: dict[str, Any] = asdict(mutant)
    result["lines"] = list(mutant.lines)
    if select == []:
        return {**result, "killed": False, "tests": 0, "seconds": 0.0, "cpu_seconds": 0.0,
                "how": "no test executes it"}
    target = root / mutant.file
    original = target.read_text(encoding="utf-8")
    target.write_text(mutated_source(mutant), encoding="utf-8")
    try:
        bound = MUTANT_BOUND + 3 * suite.seconds.get("plain", 0.0)
        if select is None and not args.full:
            run = run_every_test(root, args.marker, mutant, suite, bound)
        else:
            run = run_suite(root, args.marker, select=select, deselect=suite.deselected, bound=bound)
            if run.missing and run.passed:
                # The mutant changed what is collected: the map no longer describes it; every test decides.
                select = None
                run = run_suite(root, args.marker, deselect=suite.deselected, bound=bound)
    finally:
        target.write_text(original, encoding="utf-8")
    how = "passed" if run.passed else "failed: " + " — ".join(run.first_failure or ["?"])
    return {**result, "killed": not run.passed, "tests": EVERY_TEST if select is None else len(select),
            "seconds": round(run.seconds, 1), "cpu_seconds": round(run.cpu_seconds, 1), "how": how}


def run_every_test(root: Path, marker: str, mutant: Mutant, suite: Map, bound: float) -> Run:
    """Every test over a mutant the map cannot place, the likeliest to fail on it first.

    The same verdict as one `-x` run over the suite (it fails exactly when a test fails), in two runs: the
    tests that executed some line of the mutated file, then all the others. Most mutants at import are
    killed by the first few, and the suite's other files are never collected for them.
    """
    near = [nodeid for nodeid in suite.tests
            if any(nodeid in ids for ids in suite.by_line.get(mutant.file, {}).values())]
    first = run_suite(root, marker, select=near, deselect=suite.deselected, bound=bound) if near else None
    if first is not None and (not first.passed or first.missing):
        if not first.passed:
            return first
        # The mutant changed what is collected: one run of every test, as the map no longer describes it.
        return run_suite(root, marker, deselect=suite.deselected, bound=bound)
    rest = run_suite(root, marker, deselect=[*suite.deselected, *near], bound=bound)
    if first is None:
        return rest
    return Run(rest.passed, first.seconds + rest.seconds, first.cpu_seconds + rest.cpu_seconds,
               rest.first_failure, rest.missing)


def write_results(args: argparse.Namespace, suite: Map, results: list[dict[str, Any]]) -> None:
    document = {"tests_from": args.tests_from, "marker": args.marker, "seed": SEED, "sample": SAMPLE,
                "suite_files": list(SUITE_FILES), "mode": "full" if args.full else "map",
                "tests": len(suite.tests), "deselected": suite.deselected, "baseline_seconds": suite.seconds,
                "seconds": round(sum(r["seconds"] for r in results), 1),
                "cpu_seconds": round(sum(r.get("cpu_seconds", 0.0) for r in results), 1),
                "killed": sum(r["killed"] for r in results), "met": len(results),
                "mutants": results}
    temporary = args.out.with_name(args.out.name + ".part")
    temporary.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    temporary.replace(args.out)


def reach(old_map: Path, new_map: Path) -> list[str]:
    """Over the whole sample, from the two maps alone: the mutants one suite executes and the other never does."""
    old, new = load_map(old_map), load_map(new_map)
    lines = []
    for title, first, second in (("executed by the old suite's tests only", old, new),
                                 ("executed by the new suite's tests only", new, old)):
        only = [m for m in sample() if tests_meeting(m, first) != [] and tests_meeting(m, second) == []]
        lines += ["", f"## Of the whole sample, {title}: {len(only)}", ""]
        lines += [f"- `{m.file}:{m.line}` {m.what}" for m in only]
    return lines


def compare(old_path: Path, new_path: Path, maps: list[Path] | None = None) -> str:
    """A markdown account of two runs, on the mutants both met (and their reach, given both maps)."""
    old, new = (json.loads(path.read_text(encoding="utf-8")) for path in (old_path, new_path))
    old_by, new_by = ({(m["file"], m["index"]): m for m in doc["mutants"]} for doc in (old, new))
    both = [key for key in old_by if key in new_by]
    lines = [f"# Mutants: the suite of {old['tests_from']} against the suite of {new['tests_from']}", "",
             f"Sample: seed {old['seed']}, {old['sample']} mutants; met by both: {len(both)}.", "",
             "| suite | tests | deselected | killed | of | rate | baseline | mutants: wall s | CPU s |",
             "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for doc, by in ((old, old_by), (new, new_by)):
        killed = sum(by[key]["killed"] for key in both)
        base = doc["baseline_seconds"]
        baseline_text = f"{base.get('plain', 0):.0f} s plain, {base.get('mapped', 0):.0f} s mapped"
        lines.append(f"| {doc['tests_from']} | {doc['tests']} | {len(doc['deselected'])} | {killed} | {len(both)} | "
                     f"{100 * killed / max(len(both), 1):.1f} % | {baseline_text} | "
                     f"{sum(by[key]['seconds'] for key in both):.0f} | "
                     f"{sum(by[key].get('cpu_seconds', 0.0) for key in both):.0f} |")
    for title, first, second in (("Killed by the old suite only", old_by, new_by),
                                 ("Killed by the new suite only", new_by, old_by)):
        only = [key for key in both if first[key]["killed"] and not second[key]["killed"]]
        lines += ["", f"## {title}: {len(only)}", ""]
        lines += [f"- `{key[0]}:{first[key]['line']}` {first[key]['what']} — {first[key]['how']}" for key in only]
    for doc in (old, new):
        heading = f"## Deselected from {doc['tests_from']} (fail on the unmutated harness): {len(doc['deselected'])}"
        lines += ["", heading, ""]
        lines += [f"- `{nodeid}`: {why[:160]}" for nodeid, why in sorted(doc["deselected"].items())]
    if maps:
        lines += reach(*maps)
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tests-from", help=f"a git revision, a checkout's folder, or {WORKTREE}")
    parser.add_argument("--marker", default="not exhaustive", help="the -m expression (default: make test's)")
    parser.add_argument("--out", type=Path, help="where the results go (JSON, rewritten after every mutant)")
    parser.add_argument("--list", action="store_true", help="print the sample and stop")
    parser.add_argument("--full", action="store_true", help="every mutant over every test (no map)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N mutants of the sample")
    parser.add_argument("--map", type=Path, help="the map of the unmutated suite: read if it exists, else written")
    parser.add_argument("--resume", action="store_true", help="keep the mutants --out has met; run the rest")
    parser.add_argument("--retry-survivors", action="store_true", help="with --resume: run its survivors again")
    parser.add_argument("--survivors-first", type=Path, metavar="RESULTS",
                        help="first the mutants another run's results file lets survive (then unmet, then killed)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"), help="compare two results files")
    parser.add_argument("--markdown", type=Path, help="with --compare: write the account here, not to stdout")
    parser.add_argument("--maps", nargs=2, type=Path, metavar=("OLD", "NEW"),
                        help="with --compare: the two --map files, to add what each suite reaches")
    args = parser.parse_args()
    if args.compare:
        text = compare(*args.compare, maps=args.maps)
        if args.markdown:
            args.markdown.write_text(text, encoding="utf-8")
        else:
            print(text, end="")
        return 0
    mutants = sample()
    if args.list:
        for mutant in mutants:
            print(f"{mutant.file}:{mutant.line} #{mutant.index} {mutant.what}"
                  f"{' (at import)' if mutant.at_import else ''}")
        return 0
    if not args.tests_from or not args.out:
        parser.error("--tests-from and --out are needed to run the mutants")
    return run_mutants(args, mutants)


if __name__ == "__main__":
    sys.exit(main())
