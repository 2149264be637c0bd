"""The transport contract, held against both bodies: the Ada body and the pass-through stub body.

Each test runs once per body (bodies_support.any_body_kind). Where the two must agree byte for
byte (ids, codes, key order of the envelope), the test says so; messages may differ in wording.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import jsonschema
import pytest

from bodies_support import any_body_kind, spawn_any  # noqa: F401  (fixtures)
from harness.body import BodyOptions
from harness.client import BodyClient, modern_params
from harness.errors import BodyNotFound
from harness.replay.bodies import PASSTHROUGH_BODY, body_argv
from support import assert_answers_ping_next, assert_compact, check_trace, load_corpus, turn_arguments
from test_hostile_corpus import check_outcome

corpus = load_corpus()
CAPPED_CASES = [case for case in corpus.CASES if case.body]


def test_every_uncapped_hostile_line_gets_its_named_outcome_from_either_body(spawn_any):
    client = spawn_any()
    for case in corpus.CASES:
        if not case.body:
            check_outcome(client, case)
    assert client.unmatched == []
    assert client.close() == 0


@pytest.mark.parametrize("case", CAPPED_CASES, ids=[c.name for c in CAPPED_CASES])
def test_hostile_lines_against_a_small_cap_get_their_named_outcome_from_either_body(spawn_any, case):
    check_outcome(spawn_any(**case.body), case)


def test_both_eras_answer_with_the_envelope_in_the_contract_order(spawn_any):
    client = spawn_any()
    client.send_raw(b'{"id":"a","method":"server/discover","jsonrpc":"2.0"}\n')
    line = client.read_line(awaiting="the discover reply")
    assert_compact(line)
    assert line.startswith(b'{"jsonrpc":"2.0","id":"a","result":{"supportedVersions":["2026-07-28"]')
    assert json.loads(line)["result"]["resultType"] == "complete"
    result = client.initialize("2025-03-26")
    assert result["protocolVersion"] == "2025-03-26"
    assert list(result)[:3] == ["protocolVersion", "capabilities", "serverInfo"]
    assert_answers_ping_next(client)


def test_a_turn_from_either_body_validates_against_the_tool_s_own_output_schema(spawn_any):
    client = spawn_any()
    client.initialize()
    (tool,) = client.list_tools()
    result = client.call_tool("turn", turn_arguments("echo me", "u", "c", "s"))
    trace = result["structuredContent"]
    jsonschema.validate(trace, tool["outputSchema"])
    check_trace(trace)
    text = result["content"][0]["text"]
    assert text.startswith(trace["output"] + "\n\n")
    assert json.loads(text[len(trace["output"]) + 2:]) == trace


def test_modern_tools_call_from_either_body_carries_result_type_and_server_info(spawn_any):
    client = spawn_any()
    result = client.request("tools/call", modern_params({"name": "turn", "arguments": turn_arguments()}))
    assert result["resultType"] == "complete"
    assert set(result["_meta"]["io.modelcontextprotocol/serverInfo"]) >= {"name", "version"}


def test_either_body_logs_evictions_on_stderr_and_nothing_but_messages_on_stdout(spawn_any):
    client = spawn_any(max_sessions=1)
    client.initialize()
    for uid in ("a", "b", "c"):
        assert client.call_turn("hi", uid, "c", "s")["turn"] == 1
    assert client.close() == 0
    assert client.unmatched == []
    assert "evict" in client.stderr_text()


def test_either_body_exits_0_on_sigterm_between_requests(spawn_any):
    client = spawn_any()
    client.ping()
    client.signal(signal.SIGTERM)
    assert client.wait_exit(5.0) == 0


def test_the_two_bodies_list_the_same_tool_contract():
    tools = {}
    for kind in ("ada", "passthrough"):
        try:
            argv = body_argv(kind, BodyOptions(no_soul=True))
        except BodyNotFound as exc:
            pytest.skip(f"the comparison needs both bodies: {exc}")
        with BodyClient(argv) as client:
            client.initialize()
            tools[kind] = client.list_tools()
    assert tools["ada"] == tools["passthrough"]


# -- what only the pass-through body does ----------------------------------------------------

def passthrough(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, str(PASSTHROUGH_BODY), *args], input=b"", capture_output=True,
                          timeout=30)


def test_the_pass_through_body_echoes_the_input_as_its_output_in_the_cycle_shape():
    with BodyClient(body_argv("passthrough")) as client:
        client.initialize()
        trace = client.call_turn("café ☃ \"quoted\"\nsecond line", "u", "c", "s")
    assert trace["output"] == "café ☃ \"quoted\"\nsecond line"
    assert trace["passes_run"] == 8 and trace["route"] == {"intent": "chat", "target": "conversation.reply"}
    assert [s["status"] for s in trace["steps"]] == ["ran"] * 23


@pytest.mark.parametrize("argv, named", [
    (["--max-depth", "0"], "--max-depth"),
    (["--thresholds", "0.1,0.2"], "--thresholds"),
    (["--organs", "/no/such/fixture.json"], "--organs"),
    (["--bogus"], "--bogus"),
])
def test_the_pass_through_body_refuses_a_bad_option_with_status_2_naming_it(argv, named):
    completed = passthrough(*argv)
    assert completed.returncode == 2
    assert named.encode() in completed.stderr
    assert completed.stdout == b""
