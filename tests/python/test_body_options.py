"""The body's command line: every option that takes a value takes it as `--opt VALUE` or `--opt=VALUE`.

Invariants:
- The options that take a value are read from the body's own `--help` (an option line whose first word
  after the option is a placeholder: FILE, N, a|b), so an option added later without a sample here fails
  `test_every_option_the_help_lists_has_a_sample_here` instead of going untested.
- Both forms of one option give the same conversation, byte for byte, as the body's replies to
  one short turn and one line longer than --max-line-bytes's sample: the attached value is the one used.
- A refusal is exit 2, nothing on stdout, and the first line on stderr names the option.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support import SHIPPED_ORGANS

# Informational flags and refused configurations end at once; the bound only stops a hang.
RUN_BOUND = 10.0
USAGE_STATUS = 2
# An option line of --help: two blanks, the option, one blank, its value's placeholder.
VALUE_OPTION = re.compile(r"^  (--[a-z-]+) ([A-Z]+|[a-z]+(?:\|[a-z]+)+)(?=\s|$)", re.MULTILINE)
FLAGS = ("--no-soul", "--soul-state", "--soul-restore", "--help", "--version")


def samples(tmp: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    """option -> (a value it accepts, the options it needs beside it), for a body whose files are in tmp."""
    budget = ("--energy", "budget")
    return {
        # A value with '=' in it: only the first '=' ends the option's name.
        "--organs": (str(tmp / "organs=fixture.json"), ()),
        "--thresholds": ("0,0,0,0,0.5,0.5,0.5,0.5", ()),
        "--max-line-bytes": ("400", ()),
        "--max-depth": ("9", ()),
        "--max-elements": ("64", ()),
        "--max-sessions": ("3", ()),
        "--hermes-home": (str(tmp / "home=dir"), ()),
        "--soul": ("keep", ()),
        "--text-block": ("compact", ()),
        "--state": (str(tmp / "state.db"), ()),
        "--state-busy-ms": ("250", ()),
        "--state-sync": ("full", ()),
        "--cognition": ("stub", ()),
        "--intent": ("rules", ()),
        "--sampling-timeout-ms": ("1500", ()),
        "--turn-deadline-ms": ("2500", ()),
        "--sampling-max-tokens": ("32", ()),
        "--energy": ("budget", ()),
        "--budget-calls": ("27", budget),
        "--budget-window-s": ("60", budget),
        "--budget-tokens": ("1000", budget),
        "--recall": ("relevance", ()),
    }


VALUE_OPTIONS = tuple(samples(Path("names-only")))


def body_dir(tmp: Path) -> Path:
    """A directory holding the files the samples name."""
    tmp.mkdir()
    shutil.copyfile(SHIPPED_ORGANS, tmp / "organs=fixture.json")
    return tmp


def conversation() -> bytes:
    def line(message: dict[str, object]) -> bytes:
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"

    def turn(request_id: int, text: str) -> bytes:
        return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                     "params": {"name": "turn", "arguments": {"input": text, "uid": "u", "channel": "c",
                                                              "server": "s"}}})

    return b"".join([
        line({"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "options-test", "version": "1"}}}),
        turn(1, "what is the shape of the moon tonight?"),
        turn(2, "longer than the sampled --max-line-bytes " * 12),
    ])


def run_body(body_exe: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    # The home comes first, so that an option under test given after it is the one in force.
    return subprocess.run([str(body_exe), "--hermes-home", str(tmp / "home"), "--soul", "off", *args],
                          input=conversation(), capture_output=True, timeout=RUN_BOUND, check=False)


def assert_refused(run: subprocess.CompletedProcess[bytes], says: str) -> None:
    """Refused in two lines, the first saying why: the tail a Hermes log or doctor shows keeps it."""
    assert run.returncode == USAGE_STATUS and run.stdout == b"", run.stderr
    assert says.encode() in run.stderr.splitlines()[0]
    assert run.stderr.splitlines()[1:] == [b"(mafiabot --help lists the options)"], run.stderr


def test_every_option_the_help_lists_has_a_sample_here(body_exe: Path) -> None:
    text = subprocess.run([str(body_exe), "--help"], capture_output=True, timeout=RUN_BOUND,
                          check=True).stdout.decode()
    assert {option for option, _ in VALUE_OPTION.findall(text)} == set(VALUE_OPTIONS)


@pytest.mark.parametrize("option", VALUE_OPTIONS)
def test_an_attached_value_is_the_same_as_the_next_argument(body_exe: Path, tmp_path: Path, option: str) -> None:
    runs = []
    for name, attach in (("separate", False), ("attached", True)):
        directory = body_dir(tmp_path / name)
        value, needs = samples(directory)[option]
        given = (f"{option}={value}",) if attach else (option, value)
        runs.append(run_body(body_exe, directory, *needs, *given))
    separate, attached = runs
    assert separate.returncode == 0, separate.stderr
    assert attached.returncode == 0, attached.stderr
    assert attached.stdout.count(b"\n") == 3
    assert attached.stdout == separate.stdout


def test_an_attached_value_is_used(body_exe: Path, tmp_path: Path) -> None:
    """The short turn is answered and the line past --max-line-bytes=400 refused; with no limit, both answered."""
    replies = [json.loads(line) for line in run_body(body_exe, body_dir(tmp_path / "b"), "--max-line-bytes=400")
               .stdout.splitlines()]
    assert [("error" in reply) for reply in replies] == [False, False, True]
    unlimited = run_body(body_exe, body_dir(tmp_path / "c")).stdout.splitlines()
    assert ["error" in json.loads(line) for line in unlimited] == [False, False, False]


def test_a_value_may_hold_an_equals_sign(body_exe: Path, tmp_path: Path) -> None:
    directory = body_dir(tmp_path / "b")
    run = run_body(body_exe, directory, f"--hermes-home={directory / 'a=b'}", "--soul=keep")
    assert run.returncode == 0, run.stderr
    assert (directory / "a=b" / "SOUL.md").is_file()


# The options whose value is a free text: an empty one would read as the option left out.
TEXT_OPTIONS = ("--organs", "--thresholds", "--hermes-home", "--state")


@pytest.mark.parametrize("option", VALUE_OPTIONS)
@pytest.mark.parametrize("attach", [True, False], ids=["attached", "separate"])
def test_an_empty_value_is_refused_naming_the_option(body_exe: Path, tmp_path: Path, option: str,
                                                     attach: bool) -> None:
    """A text says it got an empty value; a count or a choice what it needs, as for any value it does not take."""
    directory = body_dir(tmp_path / "b")
    given = (f"{option}=",) if attach else (option, "")
    says = (f"{option} needs a value, got an empty one" if option in TEXT_OPTIONS
            else f"{option} needs ")
    run = run_body(body_exe, directory, *samples(directory)[option][1], *given)
    assert_refused(run, says)
    if option not in TEXT_OPTIONS:
        assert b"got ''" in run.stderr.splitlines()[0]


def test_a_missing_value_is_refused_naming_the_option(body_exe: Path, tmp_path: Path) -> None:
    assert_refused(run_body(body_exe, body_dir(tmp_path / "b"), "--max-depth"), "--max-depth needs a value")


@pytest.mark.parametrize("flag", FLAGS)
def test_a_value_attached_to_a_flag_is_refused(body_exe: Path, tmp_path: Path, flag: str) -> None:
    assert_refused(run_body(body_exe, body_dir(tmp_path / "b"), f"{flag}=yes"), f"{flag} takes no value")


@pytest.mark.parametrize("given", ["--frobnicate=1", "--organ=x", "--=x", "--max-depth-x=3"])
def test_an_unknown_option_is_refused_by_its_name(body_exe: Path, tmp_path: Path, given: str) -> None:
    assert_refused(run_body(body_exe, body_dir(tmp_path / "b"), given),
                   f"unknown option '{given.split('=', 1)[0]}'")


def test_an_attached_value_out_of_range_is_refused_as_a_separate_one_is(body_exe: Path, tmp_path: Path) -> None:
    directory = body_dir(tmp_path / "b")
    separate = run_body(body_exe, directory, "--max-depth", "1")
    attached = run_body(body_exe, directory, "--max-depth=1")
    assert_refused(attached, "--max-depth must lie in")
    assert attached.stderr.splitlines()[0] == separate.stderr.splitlines()[0]
