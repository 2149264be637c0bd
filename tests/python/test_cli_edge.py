"""The CLI's edge: every command, fed hostile input, ends in one line and a code of the one table.

Every leaf command is found by walking the parser (`harness.cli.subcommands`), and its input slots
by reading its arguments: an option or positional typed as a file or a directory (its `type=` is a
`PathArgument`, whatever its metavar), a free text argument, and the variables (`settings.ENV_VARS`,
HERMES_HOME). A new command or option is covered without a line here, except
its baseline (BASELINES), whose absence fails `test_every_command_has_a_baseline`.

Two tiers:
- `make test`: each command's baseline is run once with what it reads recorded (its parsed
  arguments, and the environment through `settings.environment`); each slot it reads gets one case
  per failure class (LEAN_PATHS, LEAN_ENV, one nested document, one non-UTF-8 text), and each must be
  refused: no traceback, a code of the table, one stderr line, and not exit 0 unless ACCEPTED says why.
  What the files hold is the shared readers' business, tested exhaustively in test_strict_json.py,
  test_strict_yaml.py and test_typed_inputs.py.
- `make test-exhaustive` (marker `exhaustive`): the whole corpus on every slot and every variable of
  every command, each case held to the edge's shape (no traceback, a code of the table, one line).

Cases run in-process (one Python start would cost more than every case together) with a bounded
alarm, so a command that blocked on a FIFO fails the case instead of hanging the suite.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import io
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest

from harness import cli, settings, strict_json
from harness.autobot.delegate import EnvelopeStatus
from harness.autopilot.report import RunStatus
from harness.cli import OUTPUT_RULE, subcommands
from harness.cli.exit_codes import (
    EXIT_TABLE,
    ExitCode,
    Status,
    autobot_status,
    autopilot_status,
    code_for,
    dispatch_status,
    epilog,
    markdown_table,
)
from harness.cli.hermes_options import PathArgument
from harness.cli.output import PROG
from harness.dispatch.dispatch import DispatchStatus
from harness.hermes.locate import HERMES_HOME_ENV
from harness.program import build_parser, main

REPO = Path(__file__).resolve().parents[2]
# A case that has not ended by then is wedged (the slowest, `demo`, ends in well under a second).
CASE_BOUND_SECONDS = 60
TABLE_CODES = frozenset(row.code for row in EXIT_TABLE) - {ExitCode.INTERNAL_ERROR, ExitCode.HUNG_UP,
                                                           ExitCode.INTERRUPTED, ExitCode.TERMINATED}
# The codes whose result is on stdout (an envelope, a report, checks): stderr may stay empty.
RESULT_CODES = frozenset({ExitCode.OK, ExitCode.NOT_DONE, ExitCode.ESCALATE, ExitCode.REFUSED})
# `record` wires the body's stderr to its own: the body's warnings (SOUL.md not written) pass through.
BODY_PREFIX = "mafiabot: "

# A valid command line for every leaf command; `{dest}` is the value of that positional, and
# `{tmp}` the case's scratch directory. Commands that would reach Hermes find none
# (MAFIABOT_HERMES names a missing file), so they end in degraded results, not in a model call.
BASELINES: dict[tuple[str, ...], list[str]] = {
    ("turn",): ["{text}"],
    ("session",): ["{file}"],
    ("demo",): [],
    ("replay",): ["{paths}"],
    ("record",): ["-o", "{tmp}/recorded.jsonl", "--", sys.executable, "-c", "pass"],
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
    # stdin is at its end in every case (`scene`): the server sees its host hang up at once and returns.
    ("serve",): [],
    ("converge",): ["{a}", "{b}", "--output", "merged.md"],
    # A database no server listens for: every source is read (and refused, when hostile) before it connects.
    ("copy-to-database",): ["--database", "postgresql:///none?host={tmp}/no-server"],
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


def private_zero(root: Path) -> Path:
    """A character device reading like /dev/zero, of this test's own.

    Never the machine's /dev/zero: output slots (--report, --png, --out) are fed this path too, and as
    root a writer that renames its temporary file over the target would replace the machine's device
    node. As root the test makes its own node (same major and minor); any other user cannot rename over
    /dev/zero, so there the real one is safe to use.
    """
    if os.geteuid() != 0:
        return Path("/dev/zero")
    node = root / "zero"
    zero = os.stat("/dev/zero").st_rdev
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(os.major(zero), os.minor(zero)))
    return node


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
        "fifo": str(fifo), "dev_zero": str(private_zero(root)), "directory": str(directory),
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
    if isinstance(action.type, PathArgument):
        return action.type.kind
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
        for variable in (*settings.ENV_VARS, HERMES_HOME_ENV):
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
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "intent.json").write_text(intent(project))
    (scratch / "session.yaml").write_text(SESSION)
    (scratch / "plan.yaml").write_text(PLAN)
    (scratch / "a.md").write_text("Use one lock per project.\n")
    (scratch / "b.md").write_text("Use one lock per run.\n")
    shutil.copy(REPO / "tests/replays/01_legacy_handshake.jsonl", scratch / "t.jsonl")
    defaults = {"{text}": "hello", "{file}": str(scratch / "session.yaml"), "{paths}": str(scratch / "t.jsonl"),
                "{plan}": str(scratch / "plan.yaml"), "{a}": str(scratch / "a.md"), "{b}": str(scratch / "b.md")}
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
        if case.kind == "baseline":
            rest = [part.replace("{tmp}", str(scratch)) for part in BASELINES[case.command]]
            return [*case.command, *[defaults.get(part, part) for part in rest]]
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


# -- what each command reads -----------------------------------------------------------------------
#
# A hostile value only tells something where the command reads it: each command's reads are found by
# running its baseline once with the environment's one reader (`settings.environment`, which every
# `MAFIABOT_*` lookup and HERMES_HOME's go through) and its parsed arguments recorded.

VARIABLES = (*settings.ENV_VARS, HERMES_HOME_ENV)


@dataclass(frozen=True)
class Reads:
    options: frozenset[str]     # the dests of the arguments its handler read
    variables: frozenset[str]   # the VARIABLES it looked up


class RecordedEnvironment(Mapping[str, str]):
    """A mapping that notes every key looked up (`get`, `in` and `[]` all come through `__getitem__`)."""

    def __init__(self, inner: Mapping[str, str], seen: set[str]) -> None:
        self.inner, self.seen = inner, seen

    def __getitem__(self, key: str) -> str:
        self.seen.add(key)
        return self.inner[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.inner)

    def __len__(self) -> int:
        return len(self.inner)


def recording_parser(seen: set[str]) -> Callable[[Sequence[str]], argparse.ArgumentParser]:
    """`build_parser`, each leaf handler given a namespace that notes every attribute it reads."""
    class RecordedArgs(argparse.Namespace):
        def __getattribute__(self, name: str) -> object:
            if not name.startswith("_"):
                seen.add(name)
            return super().__getattribute__(name)

    real_build = cli.build_parser

    def build(groups: Sequence[str] = cli.COMMAND_MODULES) -> argparse.ArgumentParser:
        parser = real_build(groups)
        for _, command in subcommands(parser):
            handler = command.get_default("handler")
            if handler is not None:
                command.set_defaults(handler=lambda args, out, run=handler: run(RecordedArgs(**vars(args)), out))
        return parser
    return build


_READS: dict[tuple[str, ...], Reads] = {}


def reads_of(words: tuple[str, ...], scene: Callable[[Case], list[str]], capfd: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> Reads:
    """What `words`'s baseline reads (once per session: the parser and the handlers do not change)."""
    if words not in _READS:
        options: set[str] = set()
        variables: set[str] = set()
        real_environment = settings.environment
        with monkeypatch.context() as patch:
            patch.setattr(settings, "environment",
                          lambda environ=None: RecordedEnvironment(real_environment(environ), variables))
            patch.setattr(cli, "build_parser", recording_parser(options))
            run_case(scene(Case(words, "", "baseline", "")), capfd)
        _READS[words] = Reads(frozenset(options), frozenset(variables) & frozenset(VARIABLES))
    return _READS[words]


# -- one case per argument role and failure class ---------------------------------------------------
#
# The readers behind every file (strict_json, strict_yaml, typed_inputs) are tested exhaustively in their
# own files; here each slot a command reads gets one of each way a value can be unusable: a place that
# blocks (fifo), never ends (a device), cannot be resolved (a loop), is past the system's limits, or is a
# directory where a file is meant; one content case (a document nested past the limit) per file slot; the
# one text no command can take (not UTF-8). Each must be refused: not exit 0, one line. A missing or
# empty place is no failure class of its own (an output is created, an empty option is the default):
# the exhaustive tier has them with the rest of the corpus.

LEAN_PATHS = ("fifo", "dev_zero", "symlink_loop", "name_300_chars", "directory")
LEAN_ENV = ("fifo", "symlink_loop", "name_300_chars", "deep_json_file")

# Hostile values a command runs through with exit 0, each with why, as its help or docs say it. An entry
# the command refuses again fails (`test_every_accepted_case_is_still_accepted`), so the list cannot drift.
# Each group: (commands, slot, the classes accepted, why): how the command is meant to work.
ALL_PATHS = (*LEAN_PATHS, "content:deep_json")
UNMOUNTED = ("fifo", "dev_zero", "symlink_loop")
_ACCEPTED_GROUPS: list[tuple[tuple[str, ...], str, tuple[str, ...], str]] = [
    (("turn", "session", "demo"), "--hermes-home", UNMOUNTED,
     "where the body writes SOUL.md: one it cannot write is the body's one-line warning, and the turns run"),
    (("unmount",), "--hermes-home", UNMOUNTED, "nothing is mounted in a home that is not one: nothing to remove"),
    (("unmount",), HERMES_HOME_ENV, ("fifo", "symlink_loop", "deep_json_file"),
     "nothing is mounted in a home that is not one: nothing to remove"),
    (("turn", "session", "demo", "replay", "record", "mount"), settings.PROJECT_ROOT_ENV,
     ("fifo", "symlink_loop", "deep_json_file"),
     "read as the checkout, for a body and organs the scene names itself ($MAFIABOT_BODY): never opened"),
    (("record",), "-o", ("fifo", "dev_zero", "symlink_loop", "directory", "content:deep_json"),
     "an existing name is never written: FILE-2.jsonl, ... are used (--help says so)"),
    (("mount",), "--record", ("fifo", "dev_zero", "symlink_loop", "content:deep_json"),
     "written into the entry for the body to open when Hermes starts it; mount does not open it"),
    (("mount",), "--state", ("fifo", "dev_zero", "symlink_loop", "directory", "content:deep_json"),
     "written into the entry for the body to open when Hermes starts it; mount does not open it"),
    (("autopilot check", "ledger"), "--ledger", ("content:deep_json",),
     "a line that is no entry is skipped, as the ledger's readers do"),
    (("autopilot check",), settings.AUTOPILOT_LEDGER_ENV, ("deep_json_file",),
     "a line that is no entry is skipped, as the ledger's readers do"),
    (("ledger",), "--png", ("symlink_loop", "content:deep_json"), "an output: replaced, as a chart is"),
]


def _accepted_name(words: str, slot: str, hostile: str) -> str:
    kind, _, value = hostile.rpartition(":")
    kind = kind or ("env" if slot.isupper() else "path")
    return f"{words}|{slot}|{kind}:{value}"


ACCEPTED: dict[str, str] = {_accepted_name(words, slot, hostile): why
                            for commands, slot, hostiles, why in _ACCEPTED_GROUPS
                            for words in commands for hostile in hostiles}


def lean_cases(words: tuple[str, ...], reads: Reads) -> Iterator[Case]:
    for action in dict(leaf_commands())[words]._actions:
        kind = slot_kind(action)
        if kind is None or action.dest not in reads.options:
            continue
        slot = slot_name(action)
        if kind == "text":
            yield Case(words, slot, "text", "not_utf8")
            continue
        yield from (Case(words, slot, "path", p) for p in LEAN_PATHS if kind == "file" or p != "directory")
        if kind == "file":
            yield Case(words, slot, "content", "deep_json")
    for variable in sorted(reads.variables):
        yield from (Case(words, variable, "env", hostile) for hostile in LEAN_ENV)


def refused_or_accepted(case: Case, code: int, err: str) -> bool:
    """The case ended at the edge (assert_at_the_edge) and, unless ACCEPTED says why not, was refused."""
    assert_at_the_edge(case.name, code, err)
    if case.name in ACCEPTED:
        return code == ExitCode.OK
    assert code != ExitCode.OK, f"{case.name}: a hostile value accepted with exit 0: {err[-500:]}"
    return True


LEAF_WORDS = sorted(BASELINES)


@pytest.mark.parametrize("words", LEAF_WORDS, ids=[" ".join(w) for w in LEAF_WORDS])
def test_each_command_refuses_one_of_each_hostility_in_what_it_reads(
        words: tuple[str, ...], scene: Callable[[Case], list[str]], capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for case in lean_cases(words, reads_of(words, scene, capfd, monkeypatch)):
        before = os.environ.get(case.slot)
        code, _, err = run_case(scene(case), capfd)
        if case.kind == "env":  # the next case sees the scene's value again
            os.environ.pop(case.slot) if before is None else os.environ.__setitem__(case.slot, before)
        assert refused_or_accepted(case, code, err), f"{case.name}: ACCEPTED names it, and it is refused now"


def test_every_variable_is_read_by_some_command_and_every_accepted_case_is_a_case(
        scene: Callable[[Case], list[str]], capfd: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorder sees every reader (a variable read past it would be tested nowhere), and ACCEPTED names
    only cases that exist."""
    reads = {words: reads_of(words, scene, capfd, monkeypatch) for words in LEAF_WORDS}
    assert set().union(*(r.variables for r in reads.values())) == set(VARIABLES)
    names = {case.name for words in LEAF_WORDS for case in lean_cases(words, reads[words])}
    assert set(ACCEPTED) <= names, set(ACCEPTED) - names


# -- the exhaustive tier: every hostile value on every slot of every command -----------------------

@pytest.mark.exhaustive
@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
def test_every_command_meets_hostile_input_with_one_line_and_a_code_of_the_table(
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


# -- hostile places inside an intent (the issue's write_to and target_paths) --------------------

INTENT_FIELDS = ("write_to", "target_paths", "project_root")


@pytest.mark.parametrize("command", ["delegate", "enqueue"])
@pytest.mark.parametrize("field", INTENT_FIELDS)
@pytest.mark.parametrize("hostile", [h if h in LEAN_PATHS else pytest.param(h, marks=pytest.mark.exhaustive)
                                     for h in PATH_NAMES])
def test_hostile_places_named_inside_an_intent_end_at_the_edge(
        command: str, field: str, hostile: str, scene: Callable[[Case], list[str]], tmp_path: Path,
        capfd: pytest.CaptureFixture[str]) -> None:
    scene(Case((command,), "--intent-file", "path", "regular_file"))  # builds the project and the hostile places
    place = make_paths(tmp_path / "inside")[hostile]
    project = tmp_path / "project"
    document: dict[str, object] = {"intent": "Summarize.", "project_root": str(project)}
    if field == "project_root":
        document["project_root"] = place
    elif field == "target_paths":
        document["target_paths"] = [place]
    else:
        document["payload"] = {"write_to": place}
    intent_file = tmp_path / "hostile-intent.json"
    intent_file.write_text(json.dumps(document))
    code, _, err = run_case([command, "--intent-file", str(intent_file)], capfd)
    assert_at_the_edge(f"{command} {field}={hostile}", code, err)


# -- the issue's cases, in a real process: nothing but one line reaches the terminal --------------

def harness_process(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, errors="replace",
                          timeout=CASE_BOUND_SECONDS, env={**os.environ, **(env or {})}, cwd=cwd, check=False)


def test_the_issues_cases_end_in_one_line_and_their_codes_in_a_real_process(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    regular = tmp_path / "regular"
    regular.write_text("not a directory")
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * DEEP + "]" * DEEP)
    surrogate = tmp_path / "surrogate.json"
    surrogate.write_text(f'{{"intent": "\\ud800", "project_root": "{project}"}}')
    loop_write = tmp_path / "loop-write.json"
    loop_write.write_text(json.dumps({"intent": "i", "project_root": str(project),
                                      "payload": {"write_to": str(tmp_path / "loop-a")}}))
    long_target = tmp_path / "long-target.json"
    long_target.write_text(json.dumps({"intent": "i", "project_root": str(project),
                                       "target_paths": [str(project / ("n" * 300))]}))
    no_hermes = {settings.HERMES_BIN_ENV: str(tmp_path / "no-hermes"), settings.PROJECT_ROOT_ENV: str(project)}
    runs = {
        "HERMES_HOME a regular file, mount": (["mount", "--no-check"], {"HERMES_HOME": str(regular)},
                                              ExitCode.INVALID_INPUT),
        "--hermes-home /proc/x, mount": (["mount", "--no-check", "--hermes-home", "/proc/x"], {},
                                         ExitCode.INVALID_INPUT),
        "deep intent, delegate": (["delegate", "--intent-file", str(deep)], no_hermes, ExitCode.INVALID_INPUT),
        "deep dispatch input": (["dispatch", "--input-file", str(deep)], no_hermes, ExitCode.INVALID_INPUT),
        "lone surrogate, delegate": (["delegate", "--intent-file", str(surrogate)], no_hermes,
                                     ExitCode.INVALID_INPUT),
        "lone surrogate, enqueue": (["enqueue", "--intent-file", str(surrogate)], no_hermes,
                                    ExitCode.INVALID_INPUT),
        "symlink loop in write_to": (["delegate", "--intent-file", str(loop_write)], no_hermes,
                                     ExitCode.INVALID_INPUT),
        # No file name has more than 255 bytes: the intent's model refuses it before anything runs.
        "300-character name in target_paths": (["delegate", "--intent-file", str(long_target)], no_hermes,
                                               ExitCode.INVALID_INPUT),
    }
    for name, (argv, env, expected) in runs.items():
        run = harness_process(*argv, env=env, cwd=project)
        assert "Traceback" not in run.stderr, f"{name}: {run.stderr}"
        assert run.returncode == expected, f"{name}: exit {run.returncode}: {run.stderr}"
        assert len(run.stderr.splitlines()) <= 1, f"{name}: {run.stderr}"


# -- the last resort: present, one line, and reached by none of the above -------------------------

def test_a_bug_reaching_main_is_one_line_naming_an_internal_error(monkeypatch: pytest.MonkeyPatch,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    def broken(args: argparse.Namespace, out: object) -> str:
        raise ZeroDivisionError("division by zero\nsecond line")

    from harness.cli import ledger_commands
    monkeypatch.setattr(ledger_commands, "cmd_ledger", broken)
    code, out, err = run_case(["ledger"], capfd)
    assert code == ExitCode.INTERNAL_ERROR and out == ""
    assert err == (f"{PROG}: internal error (a bug; please report it): ZeroDivisionError: division by zero | "
                   f"second line\n")


# -- the table: one meaning per code, every status of the domains in it, shown alike everywhere -----

def test_every_code_has_one_row_and_every_status_one_code() -> None:
    assert [row.code for row in EXIT_TABLE] == sorted(ExitCode)
    statuses = [status for row in EXIT_TABLE for status in row.statuses]
    assert sorted(statuses) == sorted(Status)
    assert all(row.statuses for row in EXIT_TABLE)


def test_every_domain_status_reaches_the_code_its_contract_gives() -> None:
    """docs/autopilot.md's contract (0, 1, 3, 4), autobot's seed (0, 1) and dispatch's (0, 1, 2 when nothing ran)."""
    by_code: dict[ExitCode, set[str]] = {}
    for status in RunStatus:
        by_code.setdefault(code_for(autopilot_status(status)), set()).add(status)
    assert by_code == {ExitCode.OK: {"completed"}, ExitCode.ESCALATE: {"escalate"}, ExitCode.REFUSED: {"refused"},
                       ExitCode.NOT_DONE: {"partial", "failed", "stopped", "no-convergence-possible"}}
    assert {code_for(autobot_status(s)) for s in EnvelopeStatus} == {ExitCode.OK, ExitCode.NOT_DONE}
    assert [code_for(dispatch_status(s)) for s in DispatchStatus] == [ExitCode.OK, ExitCode.INVALID_INPUT,
                                                                      ExitCode.NOT_DONE]
    with pytest.raises(ValueError):
        Status("autopilot:no-such-status")


def test_every_commands_help_ends_with_the_one_table(capfd: pytest.CaptureFixture[str]) -> None:
    for words, _ in [((), None), *leaf_commands()]:
        code = main([*words, "--help"])
        out, _ = capfd.readouterr()
        assert code == ExitCode.OK and out.endswith(f"{epilog()}\n\n{OUTPUT_RULE}\n"), words


def test_the_readme_shows_the_table_as_the_code_holds_it() -> None:
    assert markdown_table() in (REPO / "README.md").read_text(encoding="utf-8")


# -- exact output, with paths and ids masked -------------------------------------------------------


INTENT_ID = re.compile(r"intent-\d{4}-\d{2}-\d{2}-\d{6}-[0-9a-f]{6}")


def masked(text: str, tmp_path: Path) -> str:
    return INTENT_ID.sub("<intent-id>", text.replace(str(tmp_path), "<tmp>"))


def test_the_epilog_is_the_table_rendered_one_aligned_line_per_row() -> None:
    """Derived from EXIT_TABLE, not restated: a line per row (code, name, meaning), meanings in one column,
    a seed's note under its row in that column."""
    lines = epilog().splitlines()
    assert lines[0] == "exit codes (the same in every command):"
    rows = [line for line in lines[1:] if line.lstrip()[:1].isdigit()]
    assert [line.split()[:2] for line in rows] == [[str(row.code.value), row.code.name.lower()] for row in EXIT_TABLE]
    assert all(line.endswith(f"  {row.meaning}") for line, row in zip(rows, EXIT_TABLE, strict=True))
    column = {line.index(row.meaning) for line, row in zip(rows, EXIT_TABLE, strict=True)}
    seeds = [line for line in lines[1:] if line not in rows]
    assert seeds == [" " * min(column) + f"(the autobot seed's rule: {row.seed})" for row in EXIT_TABLE if row.seed]
    assert len(column) == 1


@pytest.mark.parametrize("argv,expected_code,expected_err", [
    (["session", "<tmp>/absent.yaml"], ExitCode.INVALID_INPUT,
     "mafiabot-harness: error: session file: cannot read <tmp>/absent.yaml: No such file or directory\n"),
    (["turn"], ExitCode.INVALID_INPUT,
     "mafiabot-harness turn: error: the following arguments are required: text (see mafiabot-harness turn --help)\n"),
    (["turn", os.fsdecode(b"a\xff")], ExitCode.INVALID_INPUT,
     "mafiabot-harness: error: argument 2 is not valid UTF-8: 'a\\udcff'\n"),
    (["ledger", "--ledger", "<tmp>/loop-a"], ExitCode.INVALID_INPUT,
     "mafiabot-harness: error: --ledger: <tmp>/loop-a: cannot be resolved: Symlink loop from '<tmp>/loop-a'\n"),
    (["delegate", "--intent-file", "<tmp>/dup.json", "--compact"], ExitCode.INVALID_INPUT,
     "mafiabot-harness: invalid intent: (file): <tmp>/dup.json: a key appears twice in one object\n"),
])
def test_error_lines_are_exactly_as_written(argv: list[str], expected_code: ExitCode, expected_err: str,
                                            tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    (tmp_path / "dup.json").write_text('{"intent": "x", "intent": "y", "project_root": "/"}')
    code, _, err = run_case([a.replace("<tmp>", str(tmp_path)) for a in argv], capfd)
    assert (code, masked(err, tmp_path)) == (expected_code, expected_err)


@pytest.mark.parametrize("argv,expected_err", [
    (["autopilot", "check", "{plan}", "--hermes", "<tmp>/folder"],
     "mafiabot-harness: error: --hermes: the Hermes executable <tmp>/folder does not exist or is not executable\n"),
    (["drain", "--hermes-home", "<tmp>/fifo"], "mafiabot-harness: error: --hermes-home: <tmp>/fifo is not a directory\n"),
    (["serve", "--hermes-home", "<tmp>/loop-a"],
     "mafiabot-harness: error: --hermes-home: <tmp>/loop-a: cannot be resolved: Symlink loop from '<tmp>/loop-a'\n"),
    (["autopilot", "check", "{plan}", "--ledger", "<tmp>/folder"],
     "mafiabot-harness: error: ledger: <tmp>/folder is not a regular file (a directory)\n"),
    (["autopilot", "check", "{plan}", "--project-root", "<tmp>/fifo"],
     "mafiabot-harness: error: --project-root: <tmp>/fifo is not a directory\n"),
    (["ledger", "--project-root", "<tmp>/missing"],
     "mafiabot-harness: error: --project-root: <tmp>/missing is a directory that does not exist\n"),
    (["serve", "--project-root", "<tmp>/missing"],
     "mafiabot-harness: error: --project-root: <tmp>/missing is a directory that does not exist\n"),
])
def test_commands_that_start_no_run_refuse_what_would_keep_one_from_starting(
        argv: list[str], expected_err: str, scene: Callable[[Case], list[str]], tmp_path: Path,
        capfd: pytest.CaptureFixture[str]) -> None:
    plan = scene(Case(("autopilot", "check"), "", "baseline", ""))[-1]
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    code, out, err = run_case([a.replace("<tmp>", str(tmp_path)).replace("{plan}", plan) for a in argv], capfd)
    assert (code, out, masked(err, tmp_path)) == (ExitCode.INVALID_INPUT, "", expected_err)


def test_an_invalid_intents_envelope_is_exactly_as_written(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dup.json").write_text('{"intent": "x", "intent": "y", "project_root": "/"}')
    code, out, _ = run_case(["delegate", "--intent-file", str(tmp_path / "dup.json"), "--compact"], capfd)
    assert code == ExitCode.INVALID_INPUT
    assert masked(out, tmp_path) == (
        '{"status": "degraded", "degraded_reason": "invalid_intent", "intent_id": "<intent-id>", "duration_ms": 0, '
        '"response_chars": 0, "est_prompt_tokens": 0, "est_response_tokens": 0, "model": null, '
        '"hermes_profile": null, "wrote_to": null, "ledger_entry": null, "retryable": false, '
        '"detail": "(file): <tmp>/dup.json: a key appears twice in one object", "field": "(file)"}\n')


def test_version_is_the_packages(capfd: pytest.CaptureFixture[str]) -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert main(["--version"]) == ExitCode.OK and capfd.readouterr().out == f"mafiabot-harness {declared}\n"
