"""`mafiabot-harness replay` and `record` as a developer runs them (against the pass-through body,
so these need no Ada build; the transcripts suite covers the Ada body)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from harness.cli import main
from harness.replay.bodies import body_argv
from harness.replay.runner import run_transcript
from harness.replay.transcript import Close, Expect, ExpectExit, Send, load_transcript

REPLAYS = Path(__file__).resolve().parents[1] / "replays"
PING = '{"send": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}\n'
PONG = '{"expect": {"id": 1, "result": {}}}\n'

# A client that spawns its server from its own argv, like Hermes or the SDK client do.
SPAWNING_CLIENT = textwrap.dedent('''
    import json, subprocess, sys
    server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for n, method in enumerate(["ping", "tools/list"], start=1):
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method}).encode() + b"\\n")
        server.stdin.flush()
        print(server.stdout.readline().decode().strip())
    server.stdin.close()
    sys.exit(server.wait())
''')
# A client that speaks MCP on its own stdio.
STDIO_CLIENT = textwrap.dedent('''
    import sys
    print('{"jsonrpc":"2.0","id":"a","method":"ping"}', flush=True)
    reply = sys.stdin.readline()
    sys.stderr.write("client got " + reply)
    print('{"jsonrpc":"2.0","id":"b","method":"no/such"}', flush=True)
    sys.stdin.readline()
''')


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_replay_of_passing_transcripts_prints_progress_and_a_summary_and_exits_0(tmp_path, capsys):
    first = write(tmp_path / "a.jsonl", PING + PONG)
    second = write(tmp_path / "b.jsonl", PING + PONG)
    assert main(["replay", str(first), str(second), "--body", "passthrough"]) == 0
    out = capsys.readouterr().out
    assert "[1/2] a.jsonl ... ok (2 steps" in out and "[2/2] b.jsonl ... ok" in out
    assert out.rstrip().endswith("2 transcripts against passthrough: 2 passed, 0 failed, 0 skipped")


def test_replay_prints_the_first_mismatch_of_each_file_as_a_diff_and_exits_1(tmp_path, capsys):
    bad = write(tmp_path / "bad.jsonl", PING + '{"expect": {"id": 1, "error": {"code": -32601}}}\n' + PING + PONG)
    good = write(tmp_path / "good.jsonl", PING + PONG)
    assert main(["replay", str(tmp_path), "--body", "passthrough"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {bad}:2: at $.error: expected 'error', it is missing" in out
    assert '+  "error": "<missing>"' in out
    assert f"[2/2] {good.name} ... ok" in out and "1 passed, 1 failed" in out


def test_replay_skips_transcripts_written_for_the_other_body(tmp_path, capsys):
    only_ada = write(tmp_path / "ada.jsonl", '{"transcript": {"title": "t", "bodies": ["ada"]}}\n' + PING + PONG)
    assert main(["replay", str(only_ada), "--body", "passthrough"]) == 0
    assert "skipped (written for ada, not passthrough)" in capsys.readouterr().out


def test_replay_refuses_a_malformed_transcript_before_starting_any_body(tmp_path, capsys):
    write(tmp_path / "ok.jsonl", PING + PONG)
    write(tmp_path / "broken.jsonl", PING + '{"expect": }\n')
    assert main(["replay", str(tmp_path), "--body", "/no/such/body"]) == 2
    err = capsys.readouterr().err
    assert "broken.jsonl:2 is not valid JSON" in err


def test_replay_of_a_missing_path_or_an_empty_directory_is_bad_input(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    assert main(["replay", str(tmp_path)]) == 2
    assert "holds no *.jsonl" in capsys.readouterr().err


def test_a_body_that_cannot_start_fails_the_transcript_with_the_reason(tmp_path, capsys):
    write(tmp_path / "a.jsonl", PING + PONG)
    assert main(["replay", str(tmp_path), "--body", str(tmp_path / "no-such-body")]) == 1
    assert "the body could not be run" in capsys.readouterr().out


def test_a_body_that_says_more_than_the_transcript_expects_fails_it(tmp_path):
    transcript = load_transcript(write(tmp_path / "t.jsonl", PING + PING.replace('"id": 1', '"id": 2') + PONG))
    outcome = run_transcript(transcript, body_argv("passthrough"), "passthrough")
    assert outcome.status == "failed" and outcome.failure.line is None
    assert "no step expected" in outcome.failure.summary and '"id":2' in outcome.failure.detail


def test_record_in_relay_mode_captures_a_spawning_client_and_the_transcript_replays(tmp_path, capsys):
    client = write(tmp_path / "client.py", SPAWNING_CLIENT)
    out = tmp_path / "session.jsonl"
    assert main(["record", "-o", str(out), "--body", "passthrough", "--", sys.executable, str(client), "{body}"]) == 0
    assert f"recorded {out}" in capsys.readouterr().out
    transcript = load_transcript(out)
    steps = [step for _, step in transcript.steps]
    assert transcript.header.bodies == ("passthrough",)
    assert [type(s) for s in steps] == [Send, Expect, Send, Expect, Close, ExpectExit]
    assert steps[1].pattern == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert main(["replay", str(out), "--body", "passthrough"]) == 0


def test_record_in_pipe_mode_keeps_byte_exact_client_lines_and_replays(tmp_path, capsys):
    client = write(tmp_path / "client.py", STDIO_CLIENT)
    out = tmp_path / "pipe.jsonl"
    assert main(["record", "-o", str(out), "--body", "passthrough", "--", sys.executable, str(client)]) == 0
    assert "recorded 4 messages to" in capsys.readouterr().out
    text = out.read_text(encoding="utf-8")
    assert '{"send": {"jsonrpc": "2.0", "id": "a", "method": "ping"}}' in text
    assert main(["replay", str(out), "--body", "passthrough"]) == 0


def test_record_never_overwrites_an_existing_transcript(tmp_path, capsys):
    client = write(tmp_path / "client.py", STDIO_CLIENT)
    out = write(tmp_path / "keep.jsonl", "precious\n")
    assert main(["record", "-o", str(out), "--body", "passthrough", "--", sys.executable, str(client)]) == 0
    assert out.read_text() == "precious\n"
    assert (tmp_path / "keep-2.jsonl").exists()
    assert "keep-2.jsonl" in capsys.readouterr().out


@pytest.mark.parametrize("argv, says", [
    (["record", "-o", "x.jsonl", "--body", "passthrough"], "client's command line"),
    (["record", "-o", "x.jsonl", "--body", "passthrough", "--", "/no/such/client", "{body}"], "cannot start the client"),
])
def test_record_explains_a_missing_or_unstartable_client(tmp_path, monkeypatch, capsys, argv, says):
    monkeypatch.chdir(tmp_path)
    assert main(argv) != 0
    assert says in capsys.readouterr().err
