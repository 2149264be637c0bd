"""tests/tools/mutants.py runs a mutant over fewer tests only where no other test can meet it.

The rule is what keeps "killed" meaning "the whole suite fails": a mutant that runs at import, or on a
line some code ran outside every test (collection), goes to every test; one in a function body goes to
the tests that executed its lines, in suite order; one no test executed survives without a run.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

SOURCE = '''\
LIMIT = 3


@decorated(flag=True)
def reader(text, strict=False):
    if len(text) > LIMIT and not strict:
        return (
            text
            + "!"
        )
    return text


class Holder:
    size = 1

    def grow(self):
        return self.size + 1
'''


def load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutants_tool", REPO / "tests" / "tools" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


mutants = load_tool()


def found(source: str = SOURCE) -> dict[tuple[int, str], Any]:
    tree = ast.parse(source)
    mutator = mutants.Mutator("m.py", tree)
    mutator.visit(tree)
    return {(m.line, m.what): m for m in mutator.found}


def test_what_runs_at_import_is_told_from_what_runs_in_a_call() -> None:
    points = found()
    at_import = {key for key, mutant in points.items() if mutant.at_import}
    assert at_import == {(1, "3 -> 4"), (4, "True -> False"), (5, "False -> True"), (15, "1 -> 2")}
    assert {key for key in points if key not in at_import} == {
        (6, "Gt -> GtE"), (6, "and <-> or"), (6, "not dropped"), (8, "+ <-> -"), (18, "+ <-> -"), (18, "1 -> 2")}


def test_a_mutant_inside_a_statement_of_many_lines_names_each_line_and_the_statement_s_first() -> None:
    assert found()[(8, "+ <-> -")].lines == (7, 8, 9)
    assert found()[(6, "Gt -> GtE")].lines == (6,)


def suite(by_line: dict[int, set[str]]) -> Any:
    return mutants.Map(["t::a", "t::b", "t::c"], {}, {"m.py": by_line}, {})


def test_a_mutant_in_a_body_meets_the_tests_that_ran_its_lines_in_suite_order() -> None:
    mutant = found()[(8, "+ <-> -")]
    assert mutants.tests_meeting(mutant, suite({7: {"t::c"}, 9: {"t::a"}, 12: {"t::b"}})) == ["t::a", "t::c"]
    assert mutants.tests_meeting(mutant, suite({12: {"t::b"}})) == []


def test_a_mutant_run_at_import_or_during_collection_meets_every_test() -> None:
    assert mutants.tests_meeting(found()[(1, "3 -> 4")], suite({1: {"t::a"}})) is None
    assert mutants.tests_meeting(found()[(8, "+ <-> -")], suite({8: {"", "t::a"}})) is None


def test_a_saved_map_reads_back_as_it_was(tmp_path: Path) -> None:
    saved = mutants.Map(["t::a", "t::b[x|y]"], {"t::old": "AssertionError: no"},
                        {"m.py": {3: {"", "t::b[x|y]"}, 4: {"t::a"}}}, {"plain": 1.5})
    mutants.save_map(saved, tmp_path / "map.json")
    assert mutants.load_map(tmp_path / "map.json") == saved


class FakeSuite:
    """run_suite's stand-in: records each run's selection and fails where a listed test is run."""

    def __init__(self, failing: set[str], collected: list[str]) -> None:
        self.failing, self.collected = failing, collected
        self.runs: list[tuple[list[str] | None, set[str]]] = []

    def __call__(self, root: Path, marker: str, *, select: list[str] | None = None,
                 deselect: Any = (), bound: float = 0.0, **_: Any) -> Any:
        self.runs.append((select, set(deselect)))
        ran = [t for t in self.collected if t not in set(deselect) and (select is None or t in select)]
        failed = [t for t in ran if t in self.failing]
        missing = set(select or []) - set(self.collected)
        return mutants.Run(not failed, 1.0, 1.0, [failed[0], "boom"] if failed else None, missing)


def every_test(monkeypatch: Any, failing: set[str], collected: list[str]) -> tuple[Any, FakeSuite]:
    fake = FakeSuite(failing, collected)
    monkeypatch.setattr(mutants, "run_suite", fake)
    suite = mutants.Map(["t::a", "t::b", "t::c"], {"t::old": "why"}, {"m.py": {3: {"t::b"}, 4: {"t::c"}}}, {})
    return mutants.run_every_test(Path("/nowhere"), "m", found()[(1, "3 -> 4")], suite, 10.0), fake


def test_a_mutant_at_import_meets_the_tests_of_its_file_first_and_stops_where_one_fails(monkeypatch: Any) -> None:
    run, fake = every_test(monkeypatch, {"t::c", "t::a"}, ["t::a", "t::b", "t::c"])
    assert not run.passed and run.first_failure == ["t::c", "boom"]
    assert fake.runs == [(["t::b", "t::c"], {"t::old"})]


def test_a_mutant_at_import_the_tests_of_its_file_miss_meets_every_other_test(monkeypatch: Any) -> None:
    run, fake = every_test(monkeypatch, {"t::a"}, ["t::a", "t::b", "t::c", "t::new"])
    assert not run.passed and run.first_failure == ["t::a", "boom"] and run.seconds == 2.0
    assert fake.runs == [(["t::b", "t::c"], {"t::old"}), (None, {"t::old", "t::b", "t::c"})]
    survived, _ = every_test(monkeypatch, set(), ["t::a", "t::b", "t::c"])
    assert survived.passed


def test_a_mutant_at_import_that_changes_the_collection_meets_every_test_at_once(monkeypatch: Any) -> None:
    run, fake = every_test(monkeypatch, {"t::a"}, ["t::a", "t::b"])
    assert not run.passed
    assert fake.runs == [(["t::b", "t::c"], {"t::old"}), (None, {"t::old"})]


def test_a_test_that_fails_only_under_the_map_runs_once_more_alone_and_a_second_failure_stops(
        monkeypatch: Any, tmp_path: Path) -> None:
    mapped_outcomes = tmp_path / "mapped-outcomes.json"
    mapped_outcomes.write_text('{"t::a": ["passed", ""], "t::b": ["failed", "start-up bound"]}', encoding="utf-8")
    first = mutants.Run(False, 5.0, 4.0, ["t::b", "start-up bound"], set())
    runs: list[list[str] | None] = []

    def rerun(passes: bool) -> Any:
        def run_suite(root: Path, marker: str, *, select: list[str] | None = None, outcomes: Path, **_: Any) -> Any:
            runs.append(select)
            outcomes.write_text(f'{{"t::b": ["{"passed" if passes else "failed"}", ""]}}', encoding="utf-8")
            return mutants.Run(passes, 1.0, 1.0, None if passes else ["t::b", "again"], set())
        return run_suite

    monkeypatch.setattr(mutants, "run_suite", rerun(True))
    run = mutants.retry_mapped(tmp_path, "m", mapped_outcomes, first)
    assert run.passed and (run.seconds, run.cpu_seconds) == (6.0, 5.0) and runs == [["t::b"]]
    assert json.loads(mapped_outcomes.read_text(encoding="utf-8"))["t::b"][0] == "passed"

    mapped_outcomes.write_text('{"t::b": ["failed", "start-up bound"]}', encoding="utf-8")
    monkeypatch.setattr(mutants, "run_suite", rerun(False))
    with pytest.raises(SystemExit, match="again"):
        mutants.retry_mapped(tmp_path, "m", mapped_outcomes, first)


def test_survivors_first_puts_what_the_other_suite_let_live_first_then_what_it_never_met() -> None:
    points = sorted(found().values(), key=lambda m: m.index)
    other = [{"file": "m.py", "index": points[0].index, "killed": True},
             {"file": "m.py", "index": points[2].index, "killed": False}]
    ordered = mutants.survivors_first(points, other)
    assert ordered[0] == points[2] and ordered[-1] == points[0]
    assert ordered[1:-1] == [m for m in points if m not in (points[0], points[2])]
