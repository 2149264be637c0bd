"""Typed inputs: the shared kinds of text, the dotted field names, each model's errors, and the commands that read them.

The commands are driven in-process with hostile files: each answers exit 2 with one line on stderr naming the
file or field and the cause, and no traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import pytest

from harness.autopilot import PlanInvalid, parse_plan
from harness.cli import main
from harness.cli.body_commands import Turn, parse_session
from harness.errors import ConfigError, FieldError
from harness.typed_inputs import MAX_NAME_BYTES, MAX_PATH_CHARS, Items, PathText, StrictModel, block, dotted, line, validate


class Inner(StrictModel):
    name: Annotated[str, line(10, strip=True)]
    note: Annotated[str, block(20)] = "-"


class Outer(StrictModel):
    count: int = 0
    inner: Inner | None = None
    items: Items[Inner] = ()
    paths: Items[PathText] = ()
    table: dict[str, Inner] = {}  # noqa: RUF012 (a pydantic field: each model gets its own copy)


def first_error(document: object) -> FieldError:
    with pytest.raises(FieldError) as caught:
        validate(Outer, document, FieldError, root="(outer)")
    return caught.value


def test_a_location_is_spelt_as_the_project_spells_fields() -> None:
    assert dotted(("payload", "tags", 1)) == "payload.tags[1]"
    assert dotted(("subtasks", 0, "uses", 2)) == "subtasks[0].uses[2]"
    assert dotted(("agents", "andy", "profile")) == "agents.andy.profile"


@pytest.mark.parametrize("document, field, cause", [
    ([], "(outer)", "must be a mapping, got list"),
    ({"count": "1"}, "count", "must be an integer, got string"),
    ({"count": True}, "count", "must be an integer, got boolean"),
    ({"count": 1.0}, "count", "must be an integer, got number"),
    ({"inner": {}}, "inner.name", "is required"),
    ({"inner": {"name": " "}}, "inner.name", "must not be empty"),
    ({"inner": {"name": "a\nb"}}, "inner.name", "must be one line"),
    ({"inner": {"name": "a\0"}}, "inner.name", "contains a NUL character"),
    ({"inner": {"name": "x" * 11}}, "inner.name", "is 11 characters long; at most 10"),
    ({"inner": {"name": "a", "colour": 1}}, "inner.colour", "is not a known field (known: name, note)"),
    ({"items": [{"name": "a"}, {"name": 5}]}, "items[1].name", "must be a string, got integer"),
    ({"items": "a,b"}, "items", "must be a list, got string"),
    ({"table": {"k": {"name": "a", "x": 0}}}, "table.k.x", "is not a known field (known: name, note)"),
    ({"paths": ["ok/" + "n" * (MAX_NAME_BYTES + 1)]}, "paths[0]", f"has a component of more than {MAX_NAME_BYTES}"),
    ({"paths": ["a/" * (MAX_PATH_CHARS // 2 + 1)]}, "paths[0]", f"at most {MAX_PATH_CHARS}"),
    ({"count": 1, "extra": 2}, "extra", "is not a known field (known: count, inner, items, paths, table)"),
])
def test_the_first_bad_field_is_named_dotted_with_its_cause(document: object, field: str, cause: str) -> None:
    error = first_error(document)
    assert error.field == field and cause in error.message, error


def test_text_is_stripped_only_where_the_kind_says_so_and_block_text_keeps_its_lines() -> None:
    outer = validate(Outer, {"inner": {"name": "  a  ", "note": "two\nlines "},
                             "paths": ["é/" + "n" * MAX_NAME_BYTES]}, FieldError)
    assert outer.inner is not None and (outer.inner.name, outer.inner.note) == ("a", "two\nlines ")
    assert isinstance(outer.paths, tuple)


def test_a_model_is_frozen_once_validated() -> None:
    inner = validate(Inner, {"name": "a"}, FieldError)
    with pytest.raises(Exception, match="frozen"):
        inner.name = "b"  # type: ignore[misc]


# -- each model's field errors (the suites of each layer hold the rest) -------------------

def session_error(document: object) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_session(document, "s.yaml")
    return str(caught.value)


def test_a_session_turn_inherits_the_key_parts_it_does_not_give() -> None:
    turns = parse_session({"uid": "ana", "channel": "c", "server": "s",
                           "turns": [{"input": "hi"}, {"input": "yo", "uid": "bo"}]}, "s.yaml")
    assert turns == [Turn("hi", "ana", "c", "s"), Turn("yo", "bo", "c", "s")]


@pytest.mark.parametrize("document, says", [
    ({"turns": [{"input": "a", "uid": "u", "channel": "c", "server": "s"}, {"input": "b"}]},
     "s.yaml: turns[1]: has no 'uid' (and no top-level default)"),
    ({"uid": 7, "turns": [{"input": "a"}]}, "s.yaml: uid: must be a string, got integer"),
    ({"turns": [{"input": "a", "uid": ["u"]}]}, "s.yaml: turns[0].uid: must be a string, got list"),
    ({"turns": {"input": "a"}}, "s.yaml: turns: must be a list, got mapping"),
    ({"turn": []}, "s.yaml: turns: is required"),
])
def test_a_bad_session_file_names_the_dotted_field(document: object, says: str) -> None:
    assert says in session_error(document)


@pytest.mark.parametrize("document, field", [
    ({"goal": "g", "subtasks": ["a", {"task": "b", "expected_output_tokens": "9"}]}, "subtasks[1].expected_output_tokens"),
    ({"goal": "g", "subtasks": ["a"], "limits": {"max_turns": 0}}, "limits.max_turns"),
    ({"goal": "g", "subtasks": ["a"], "limits": {"child_timeout_s": float("nan")}}, "limits.child_timeout_s"),
    ({"goal": "g", "subtasks": [{"task": "a", "id": "Bad Id"}]}, "subtasks[0].id"),
    ({"goal": "g", "subtasks": [{"task": "a", "write_to": "d/" + "n" * 300}]}, "subtasks[0].write_to"),
    ({"goal": "g", "subtasks": ["a"], "dna": 5}, "dna"),
    ({"subtasks": ["a"]}, "goal"),
])
def test_a_bad_plan_field_is_named_dotted(document: dict[str, object], field: str) -> None:
    with pytest.raises(PlanInvalid) as caught:
        parse_plan(document, base_dir=Path("/tmp"))
    assert caught.value.field == field


def test_a_plan_numbers_its_subtasks_and_normalises_agent_names() -> None:
    plan = parse_plan({"goal": " g ", "default_agent": " Andy ",
                       "subtasks": ["a", {"task": "b", "agent": "COOPER"}, {"id": "z", "task": "c"}]}, Path("/tmp"))
    assert [s.id for s in plan.subtasks] == ["s1", "s2", "z"]
    assert (plan.goal, plan.default_agent, plan.subtasks[1].agent) == ("g", "andy", "cooper")


# -- the commands that read these inputs, with hostile files ------------------------------

HOSTILE_JSON = {
    "deep.json": ("[" * 100_000 + "]" * 100_000).encode(),
    "surrogate.json": b'{"intent": "x\\ud800", "project_root": "."}',
    "bom16.json": '\ufeff{"intent": "x"}'.encode("utf-16"),
    "nul.json": b'{"intent": "x\x00"}',
    "latin1.json": b'{"intent": "caf\xe9"}',
    "duplicate.json": b'{"intent": "a", "intent": "b"}',
    "nan.json": b'{"intent": NaN}',
    "infinity.json": b'{"intent": -Infinity}',
    "huge.json": b'{"intent": 1e400}',
    "big.json": b'"' + b"x" * (2 << 20) + b'"',
}


# The readers meet every one of these in test_strict_json.py and test_strict_yaml.py; each edge here gets one
# (a duplicate key: the standard readers would keep the last one, so only the strict reader refuses it),
# the others are in the exhaustive tier.
def one_per_edge(corpus: dict[str, bytes], representative: str) -> list[object]:
    return [name if name == representative else pytest.param(name, marks=pytest.mark.exhaustive)
            for name in sorted(corpus)]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_clean_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize("name", one_per_edge(HOSTILE_JSON, "duplicate.json"))
@pytest.mark.parametrize("command", ["delegate", "enqueue"])
def test_a_hostile_intent_file_is_an_invalid_intent_naming_the_file(tmp_path: Path, capsys, command: str,
                                                                    name: str) -> None:
    path = tmp_path / name
    path.write_bytes(HOSTILE_JSON[name])
    code, out, err = run_cli([command, "--intent-file", str(path)], capsys)
    assert code == 2 and json.loads(out)["field"] == "(file)"
    assert_one_clean_line(err, "invalid intent: (file): ", name)


@pytest.mark.parametrize("name", one_per_edge(HOSTILE_JSON, "duplicate.json"))
def test_a_hostile_dispatch_input_file_is_invalid_input(tmp_path: Path, capsys, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(HOSTILE_JSON[name])
    code, out, _ = run_cli(["dispatch", "--input-file", str(path), "--project-root", str(tmp_path)], capsys)
    envelope = json.loads(out)
    assert (code, envelope["code"], envelope["details"]["field"]) == (2, "invalid_input", "(input file)")
    assert name in envelope["message"] and "\n" not in envelope["message"]


HOSTILE_YAML = {
    "deep.yaml": b"[" * 100_000,
    "laughs.yaml": ("l0: &l0 [a, a, a, a, a, a, a, a, a]\n" + "".join(
        f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]\n" for n in range(1, 9))).encode(),
    "duplicate.yaml": b"goal: a\ngoal: b\nsubtasks: [x]\n",
    "latin1.yaml": b"goal: caf\xe9\nsubtasks: [x]\n",
    "python.yaml": b"!!python/object/apply:os.system [true]\n",
    "big.yaml": b"goal: " + b"x" * (2 << 20) + b"\n",
}


@pytest.mark.parametrize("name", one_per_edge(HOSTILE_YAML, "duplicate.yaml"))
def test_a_hostile_plan_is_refused_by_autopilot_check_naming_the_file(tmp_path: Path, capsys, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(HOSTILE_YAML[name])
    code, out, err = run_cli(["autopilot", "check", str(path), "--project-root", str(tmp_path)], capsys)
    assert code == 2 and json.loads(out)["field"] == "plan"
    assert_one_clean_line(err, "invalid plan: plan: ", name)


@pytest.mark.parametrize("name", one_per_edge(HOSTILE_YAML, "duplicate.yaml"))
def test_a_hostile_session_file_exits_2_before_any_body_starts(tmp_path: Path, capsys, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(HOSTILE_YAML[name])
    code, out, err = run_cli(["session", str(path), "--body", str(tmp_path / "never-started")], capsys)
    assert (code, out) == (2, "")
    assert_one_clean_line(err, "session file: ", name)
