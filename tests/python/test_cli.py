"""`mafiabot-harness` end to end, as a subprocess: output, trace tables, exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.exit_codes import ExitCode

# Starting Python, the body and a dozen turns takes well under a second; the bound only keeps a
# wedged run from hanging the suite.
CLI_BOUND = 60.0
STEP_ROW = re.compile(rb"^\s*(\d{1,2}) \| ", re.MULTILINE)


def harness(*args: str, body: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if body is not None:
        env["MAFIABOT_BODY"] = str(body)
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                          timeout=CLI_BOUND, env=env, check=False)


def step_tables(stdout: bytes) -> list[list[int]]:
    """The step indexes of each trace table printed, table by table."""
    tables, current = [], []
    for match in STEP_ROW.finditer(stdout):
        index = int(match.group(1))
        if index == 1 and current:
            tables.append(current)
            current = []
        current.append(index)
    if current:
        tables.append(current)
    return tables


def test_turn_prints_the_output_and_a_23_row_trace(body_exe, tmp_path):
    run = harness("turn", "who is the mafia?", "--uid", "u", "--channel", "c", "--server", "s",
                  "--hermes-home", str(tmp_path / "h"), body=body_exe)
    assert run.returncode == 0, run.stderr
    assert step_tables(run.stdout) == [list(range(1, 24))]
    assert b"output: " in run.stdout
    assert b"energy E" in run.stdout and b"passes_run" in run.stdout


def test_turn_writes_soul_md_only_into_the_home_it_is_told(body_exe, tmp_path):
    hermes_home = tmp_path / "hermes-home"
    hermes_home.mkdir()
    env_home = {**os.environ, "HERMES_HOME": str(hermes_home), "MAFIABOT_BODY": str(body_exe)}
    quiet = subprocess.run([sys.executable, "-m", "harness", "turn", "hi"], capture_output=True, timeout=CLI_BOUND,
                           env=env_home, check=False)
    assert quiet.returncode == 0 and list(hermes_home.iterdir()) == [], quiet.stderr
    told = harness("turn", "hi", "--hermes-home", str(tmp_path / "told"), body=body_exe)
    assert told.returncode == 0 and (tmp_path / "told" / "SOUL.md").is_file(), told.stderr


def test_turn_json_prints_the_structured_trace(body_exe):
    run = harness("turn", "hi", "--json", "--no-soul", body=body_exe)
    assert run.returncode == 0, run.stderr
    trace = json.loads(run.stdout)
    assert len(trace["steps"]) == 23


def test_session_runs_every_turn_of_the_file_through_one_body(body_exe, tmp_path):
    session = tmp_path / "s.yaml"
    session.write_text("uid: ana\nserver: s1\nturns:\n"
                       "  - {input: 'hello', channel: '#a'}\n"
                       "  - {input: 'hello again', channel: '#a'}\n"
                       "  - {input: 'elsewhere', channel: '#b', uid: bob}\n")
    run = harness("session", str(session), "--no-soul", body=body_exe)
    assert run.returncode == 0, run.stderr
    assert step_tables(run.stdout) == [list(range(1, 24))] * 3
    assert re.findall(rb"^turn (\d+) of session", run.stdout, re.MULTILINE) == [b"1", b"2", b"1"]


def test_demo_ends_with_a_short_summary_and_the_hammered_room_loses_passes(body_exe):
    run = harness("demo", "--no-soul", body=body_exe)
    assert run.returncode == 0, run.stderr
    traces, _, summary = run.stdout.partition(b"energy and passes per turn:")
    assert traces == b"" and step_tables(summary) == [list(range(1, 18))], "one summary row per turn, nothing before"
    passes = [int(row.split(b"|")[-1]) for row in summary.splitlines() if STEP_ROW.match(row)]
    assert passes[0] == 8 and min(passes) < 8
    assert len(run.stdout.splitlines()) < 40 and b"demo --full" in summary


def test_demo_full_prints_a_trace_per_turn_before_the_summary(body_exe):
    run = harness("demo", "--no-soul", "--full", body=body_exe)
    assert run.returncode == 0, run.stderr
    traces, _, summary = run.stdout.partition(b"energy and passes per turn:")
    tables = step_tables(traces)
    assert len(step_tables(summary)) == 1, "the closing summary has one row per turn"
    assert len(tables) >= 10 and all(t == list(range(1, 24)) for t in tables)
    passes = [int(p) for p in re.findall(rb"^passes_run\s+(\d) of 8", run.stdout, re.MULTILINE)]
    assert passes[0] == 8 and min(passes) < 8


@pytest.mark.parametrize("content,needle", [
    ("turns: [unclosed\n", "not valid YAML"),
    ("- just\n- a list\n", "mapping"),
    ("turns: []\n", "non-empty"),
    ("turns:\n  - {input: hi, uid: u, channel: c}\n", "'server'"),
    ("turns:\n  - {input: 3, uid: u, channel: c, server: s}\n", "turns[0].input: must be a string, got integer"),
    ("turns:\n  - {input: no, uid: u, channel: c, server: s}\n", "turns[0].input: must be a string, got boolean"),
    ("turns: [{input: a}]\nturns: [{input: b}]\n", "a key appears twice in one mapping (line 2 column 1)"),
    ("turns:\n  - {input: hi, uid: u, channel: c, server: s, colour: red}\n", "colour"),
])
def test_a_malformed_session_file_is_invalid_input_with_a_clear_message(tmp_path, content, needle):
    session = tmp_path / "bad.yaml"
    session.write_text(content)
    run = harness("session", str(session), body=tmp_path / "never-started")
    assert run.returncode == ExitCode.INVALID_INPUT
    assert needle in run.stderr.decode()
    assert run.stdout == b""


def test_a_missing_session_file_is_invalid_input(tmp_path):
    run = harness("session", str(tmp_path / "absent.yaml"))
    assert run.returncode == ExitCode.INVALID_INPUT
    assert "absent.yaml" in run.stderr.decode()


def test_a_missing_body_exits_body_not_found_saying_where_it_looked(tmp_path):
    run = harness("turn", "hi", body=tmp_path / "no-body")
    assert run.returncode == ExitCode.BODY_NOT_FOUND
    assert "no-body" in run.stderr.decode() and "Traceback" not in run.stderr.decode()


def test_an_invalid_key_part_exits_body_tool_error_with_the_bodys_explanation(body_exe):
    run = harness("turn", "hi", "--uid", "", "--no-soul", body=body_exe)
    assert run.returncode == ExitCode.BODY_TOOL_ERROR
    assert "uid" in run.stderr.decode()


def test_the_console_script_is_installed_next_to_the_interpreter():
    script = Path(sys.executable).with_name("mafiabot-harness")
    if not script.exists():
        pytest.skip(f"no console script beside {sys.executable}: the package is not installed in this environment")
    run = subprocess.run([str(script), "--help"], capture_output=True, timeout=CLI_BOUND, check=False)
    assert run.returncode == 0
    for command in (b"turn", b"session", b"demo"):
        assert command in run.stdout


def test_queue_without_a_queue_option_reads_the_project_root_s(tmp_path, capsys):
    # No --queue, $MAFIABOT_AUTOBOT_QUEUE or database (the fixtures clear every MAFIABOT_ variable): the queue
    # is the project root's, which queue_of names only when the command has no intent root of its own.
    from harness.cli import main

    expected = tmp_path / ".agents" / "state" / "autobot-queue"
    assert main(["queue", "--project-root", str(tmp_path), "--json"]) == ExitCode.OK
    assert json.loads(capsys.readouterr().out)["queue"] == str(expected)
