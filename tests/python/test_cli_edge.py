"""The CLI's edge: every command, fed hostile input, ends in one line and a code of the one table.

Every leaf command is found by walking the parser (`harness.cli.subcommands`), and its input slots
by reading its arguments: an option or positional whose metavar names a file (FILE, FILE.yaml,
PLAN.yaml, FILE|DIR, BODY, BIN) or a directory (DIR) gets every hostile path and content; a free
text argument gets every hostile text; every `MAFIABOT_*` variable (settings.ENV_VARS) and HERMES_HOME
get hostile values too. A new command or a new option is covered without a line here, except its
baseline (BASELINES), whose absence fails `test_every_command_has_a_baseline`.

Each case asserts: no traceback, an exit code from EXIT_TABLE that is not the last-resort internal
error, and, when the command failed, exactly one line on stderr. Cases run in-process (one Python
start would cost more than every case together) with a bounded alarm, so a command that blocked on
a FIFO fails the case instead of hanging the suite.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest

from harness import settings, strict_json
from harness.cli import PROG, build_parser, main, subcommands
from harness.cli.exit_codes import EXIT_TABLE, ExitCode, code_for, epilog, markdown_table
from harness.autopilot.report import STATUSES

REPO = Path(__file__).resolve().parents[2]
# A case that has not ended by then is wedged (the slowest, `demo`, ends in well under a second).
CASE_BOUND_SECONDS = 60
TABLE_CODES = frozenset(row.code for row in EXIT_TABLE) - {ExitCode.INTERNAL_ERROR, ExitCode.INTERRUPTED}
# The codes whose result is on stdout (an envelope, a report, checks): stderr may stay empty.
RESULT_CODES = frozenset({ExitCode.OK, ExitCode.NOT_DONE, ExitCode.ESCALATE, ExitCode.REFUSED})
# `record` wires the body's stderr to its own: the body's warnings (SOUL.md not written) pass through.
BODY_PREFIX = "mafiabot: "
PATH_METAVARS = frozenset({"FILE", "FILE.yaml", "PLAN.yaml", "FILE|DIR", "BODY", "BIN"})
DIR_METAVARS = frozenset({"DIR"})

# A valid command line for every leaf command; `{dest}` is the value of that positional, and
# `{tmp}` the case's scratch directory. Commands that would reach Hermes find none
# (MAFIABOT_HERMES names a missing file), so they end in degraded results, not in a model call.
BASELINES: dict[tuple[str, ...], list[str]] = {
    ("turn",): ["{text}"],
    ("session",): ["{file}"],
    ("demo",): [],
    ("replay",): ["{paths}"],
    ("record",): ["--out", "{tmp}/recorded.jsonl", "--", sys.executable, "-c", "pass"],
    ("mount",): [],
    ("unmount",): [],
    ("doctor",): ["--no-hermes"],
    ("delegate",): ["--intent-file", "{tmp}/intent.json"],
    ("enqueue",): ["--intent-file", "{tmp}/intent.json"],
    ("drain",): [],
    ("queue",): [],
    ("dispatch",): ["--target", "andy", "--task-source", "s", "--context", "c", "--reference-id", "r"],
    ("ledger",): [],
    ("autopilot", "run"): ["{plan}"],
    ("autopilot", "check"): ["{plan}"],
}

SESSION = "uid: u\nchannel: c\nserver: s\nturns:\n  - {input: hello}\n"
PLAN = ("goal: a goal\nmode: sequential\nband: L1\nsubtasks:\n  - {id: one, task: say hello, agent: andy}\n")


def intent(project: Path) -> str:
    return f'{{"intent": "Summarize the notes.", "project_root": "{project}"}}'


# -- the corpus --------------------------------------------------------------------------------

DEEP = 100_000
CONTENTS: dict[str, bytes] = {
    "deep_json": b"[" * DEEP + b"]" * DEEP,
    "deep_yaml_mapping": b"".join(b"  " * n + b"k:\n" for n in range(2000)) + b"  " * 2000 + b"v\n",
    "lone_surrogate": b'{"intent": "\\ud800", "a": "\\udfff"}',
    "bom_then_object": codecs.BOM_UTF8 + b'{"a": 1}',
    "utf16_bom": codecs.BOM_UTF16_LE + '{"a": 1}'.encode("utf-16-le"),
    "nul": b'{"a": "x\x00y"}\x00',
    "not_utf8": b'{"a": "\xff\xfe\xc3"}',
    "duplicate_keys": b'{"a": 1, "a": 2}\na: 1\na: 2\n',
    "nan": b'{"a": NaN, "b": Infinity}',
    "huge_number": b'{"a": 1e400, "b": 123456789012345678901234567890}',
    "past_every_limit": b" " * (strict_json.DEFAULT_MAX_BYTES + 1) + b"{}",
    "empty": b"",
    "yaml_bomb": b"a: &a [x, x, x, x, x, x, x, x, x]\n" + b"".join(
        f"{chr(98 + n)}: &{chr(98 + n)} [*{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)},"
        f" *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}]\n".encode()
        for n in range(8)),
}


def make_paths(root: Path) -> dict[str, str]:
    """Hostile places, made under `root`: what exists is what the name says."""
    root.mkdir(parents=True, exist_ok=True)
    regular = root / "regular"
    regular.write_text("{}")
    fifo = root / "fifo"
    os.mkfifo(fifo)
    (root / "loop-a").symlink_to(root / "loop-b")
    (root / "loop-b").symlink_to(root / "loop-a")
    (root / "dangling").symlink_to(root / "nowhere")
    directory = root / "directory"
    directory.mkdir()
    read_only_dir = root / "read-only-dir"
    read_only_dir.mkdir()
    (read_only_dir / "file").write_text("{}")
    (read_only_dir / "file").chmod(0o444)
    read_only_dir.chmod(0o555)
    unreadable = root / "unreadable"
    unreadable.write_text("{}")
    unreadable.chmod(0o000)
    unreadable_dir = root / "unreadable-dir"
    unreadable_dir.mkdir()
    unreadable_dir.chmod(0o000)
    return {
        "fifo": str(fifo), "dev_zero": "/dev/zero", "directory": str(directory),
        "symlink_loop": str(root / "loop-a"), "dangling_symlink": str(root / "dangling"),
        "name_300_chars": str(root / ("n" * 300)), "missing_parent": str(root / "missing" / "deeper" / "leaf"),
        "under_a_file": str(regular / "child"), "read_only_file": str(read_only_dir / "file"),
        "in_read_only_dir": str(read_only_dir / "new"), "unreadable_file": str(unreadable),
        "unreadable_dir": str(unreadable_dir), "proc": "/proc/x", "regular_file": str(regular),
        "empty_string": "",
    }


PATH_NAMES = ("fifo", "dev_zero", "directory", "symlink_loop", "dangling_symlink", "name_300_chars", "missing_parent",
              "under_a_file", "read_only_file", "in_read_only_dir", "unreadable_file", "unreadable_dir", "proc",
              "regular_file", "empty_string")
# Lone surrogates in argv are what Python makes of bytes that are not UTF-8 (os.fsdecode).
TEXTS: dict[str, str] = {
    "nul": "a\x00b", "not_utf8": os.fsdecode(b"\xff\xfe"), "name_300_chars": "n" * 300,
    "one_mib": "x" * (1 << 20), "deep_json": "[" * DEEP + "]" * DEEP, "newlines": "a\nb\r\nc",
    "nan": "nan", "inf": "inf", "huge_number": "1e400", "negative": "-1", "empty": "",
}


# -- cases -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    command: tuple[str, ...]
    slot: str          # the option or positional fed, or the environment variable
    kind: str          # "path", "content", "text" or "env"
    hostile: str       # the corpus entry's name

    @property
    def name(self) -> str:
        return f"{' '.join(self.command)}|{self.slot}|{self.kind}:{self.hostile}"


def leaf_commands() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    return [(words, parser) for words, parser in subcommands(build_parser()) if parser.get_default("handler")]


def slot_kind(action: argparse.Action) -> str | None:
    if isinstance(action, (argparse._HelpAction, argparse._StoreTrueAction, argparse._VersionAction)):
        return None
    if action.metavar in PATH_METAVARS:
        return "file"
    if action.metavar in DIR_METAVARS:
        return "dir"
    if action.choices is not None or action.nargs == argparse.REMAINDER:
        return None
    return "text"


def slot_name(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else "{" + action.dest + "}"


def cases() -> Iterator[Case]:
    for words, parser in leaf_commands():
        for action in parser._actions:
            kind = slot_kind(action)
            if kind is None:
                continue
            if kind == "text":
                yield from (Case(words, slot_name(action), "text", t) for t in TEXTS)
                continue
            yield from (Case(words, slot_name(action), "path", p) for p in PATH_NAMES)
            if kind == "file":
                yield from (Case(words, slot_name(action), "content", c) for c in CONTENTS)
        for variable in (*settings.ENV_VARS, "HERMES_HOME"):
            yield from (Case(words, variable, "env", p) for p in PATH_NAMES if p != "empty_string")
            yield Case(words, variable, "env", "deep_json_file")


ALL_CASES = list(cases())


class Wedged(BaseException):
    """A case outlived CASE_BOUND_SECONDS (a BaseException, so main's last resort cannot swallow it)."""


@contextlib.contextmanager
def bounded(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise Wedged(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def scene(tmp_path: Path, body_exe: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Case], list[str]]:
    """A project with valid defaults for every baseline, and a builder of each case's argv and environment."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv(settings.PROJECT_ROOT_ENV, str(project))
    monkeypatch.setenv(settings.HERMES_BIN_ENV, str(tmp_path / "no-hermes"))
    monkeypatch.setenv(settings.BODY_ENV, str(body_exe))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "intent.json").write_text(intent(project))
    (scratch / "session.yaml").write_text(SESSION)
    (scratch / "plan.yaml").write_text(PLAN)
    shutil.copy(REPO / "tests/replays/01_legacy_handshake.jsonl", scratch / "t.jsonl")
    defaults = {"{text}": "hello", "{file}": str(scratch / "session.yaml"), "{paths}": str(scratch / "t.jsonl"),
                "{plan}": str(scratch / "plan.yaml")}
    paths = make_paths(tmp_path / "hostile")
    contents = tmp_path / "contents"
    contents.mkdir()

    def hostile_value(case: Case) -> str:
        if case.kind == "path" or (case.kind == "env" and case.hostile in paths):
            return paths[case.hostile]
        if case.kind == "text":
            return TEXTS[case.hostile]
        name = "deep_json" if case.hostile == "deep_json_file" else case.hostile
        path = contents / name
        path.write_bytes(CONTENTS[name])
        return str(path)

    def argv(case: Case) -> list[str]:
        value = hostile_value(case)
        if case.kind == "env":
            monkeypatch.setenv(case.slot, value)
        rest = [part.replace("{tmp}", str(scratch)) for part in BASELINES[case.command]]
        if case.kind != "env" and case.slot.startswith("{"):
            rest = [value if part == case.slot else part for part in rest]
        elif case.kind != "env":
            if case.slot in rest:
                at = rest.index(case.slot)
                rest = rest[:at] + rest[at + 2:]
            rest = [case.slot, value, *rest]
        return [*case.command, *[defaults.get(part, part) for part in rest]]

    return argv


def run_case(argv: list[str], capfd: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with bounded(CASE_BOUND_SECONDS):
        code = main(argv)
    out, err = capfd.readouterr()
    return code, out, err


def assert_at_the_edge(case_name: str, code: int, err: str) -> None:
    """No traceback, a code of the table, and one line: an error's own, or at most one beside a result."""
    assert "Traceback" not in err, f"{case_name}: {err[-2000:]}"
    assert code in TABLE_CODES, f"{case_name}: exit {code}, stderr: {err[-2000:]}"
    lines = [line for line in err.splitlines() if line.strip()]
    if code in RESULT_CODES:
        assert len(lines) <= 1, f"{case_name}: exit {code} with {len(lines)} stderr lines: {err[-2000:]}"
    else:
        assert len(lines) == 1, f"{case_name}: exit {code} with {len(lines)} stderr lines: {err[-2000:]}"
    if lines:
        assert lines[0].startswith((PROG, BODY_PREFIX)), f"{case_name}: {lines[0][:300]}"


@pytest.mark.slow
@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_every_command_meets_hostile_input_with_one_line_and_a_code_of_the_table(
        case: Case, scene: Callable[[Case], list[str]], capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_case(scene(case), capfd)
    assert_at_the_edge(case.name, code, err)


# The quick loop's share: one of each kind of hostility for each command, the known cases among them.
QUICK = [c for c in ALL_CASES if (c.kind, c.hostile) in {("path", "symlink_loop"), ("content", "deep_json"),
                                                         ("content", "lone_surrogate"), ("text", "not_utf8"),
                                                         ("env", "regular_file")}]


@pytest.mark.parametrize("case", QUICK, ids=[c.name for c in QUICK])
def test_each_command_meets_one_of_each_hostility_at_the_edge(
        case: Case, scene: Callable[[Case], list[str]], capfd: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_case(scene(case), capfd)
    assert_at_the_edge(case.name, code, err)


def test_every_command_has_a_baseline() -> None:
    assert sorted(words for words, _ in leaf_commands()) == sorted(BASELINES)


def test_the_corpus_reaches_every_command_and_every_kind_of_slot() -> None:
    commands = {c.command for c in ALL_CASES}
    assert commands == set(BASELINES)
    for words in commands:
        assert {c.kind for c in ALL_CASES if c.command == words} >= {"path", "env"}, words
    assert {c.kind for c in ALL_CASES} == {"path", "content", "text", "env"}
