"""--cognition sampling on raw pipes: JSON-RPC both ways on one stdio pair, and every hostile answer.

The body asks each pass, and the synthesis, of the client's model with `sampling/createMessage` while
the client's `tools/call` waits (docs/wire-contract.md, "Sampling"). These tests script the client
byte for byte, for what the official SDK client cannot be made to send (unknown ids, malformed JSON,
a 10 MB text, a cancel at an exact point). Each asserts what the body must do: the turn answers with
what ran, every failed pass is marked, and the body keeps serving.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from harness.client import BodyClient, encode_message, modern_params
from sampling_support import (
    CALL_KEYS,
    SAMPLING,
    STATUSES,
    TURN_ID,
    Turn,
    answer_all,
    dumps,
    prompt_of,
    reply_for,
    run_turn,
    start_sampling_body,
    text_result,
    turn_request,
)
from support import assert_answers_ping_next, check_trace, load_corpus, step_of_pass

REASONING_STEPS = [step_of_pass(pass_number)[1] for pass_number in range(1, 9)]
SYNTHESIS_STEP = 22


def call_steps(turn: Turn) -> list[int]:
    return [call["step"] for call in turn.cognition["calls"]]


def test_each_pass_that_runs_and_the_synthesis_is_one_request_and_the_count_falls_as_the_session_drains(
        spawn_body):
    client = start_sampling_body(spawn_body)
    passes, counts = [], []
    for _ in range(4):
        turn = run_turn(client)
        passes.append(turn.trace["passes_run"])
        counts.append(len(turn.requests))
        assert call_steps(turn) == [*REASONING_STEPS[:turn.trace["passes_run"]], SYNTHESIS_STEP]
        assert turn.statuses() == ["answered"] * len(turn.requests)
    assert counts == [p + 1 for p in passes]
    assert passes[0] == 8 and passes[-1] < passes[0], passes


def test_each_reply_is_in_its_reasoning_step_and_the_synthesis_is_the_output(spawn_body):
    client = start_sampling_body(spawn_body)
    turn = run_turn(client)
    trace = turn.trace
    passes = trace["passes_run"]
    for rank, step in enumerate(REASONING_STEPS[:passes], start=1):
        detail = trace["steps"][step - 1]["detail"]
        assert detail.endswith(": " + reply_for(rank)), detail
    assert trace["output"] == reply_for(passes + 1)
    assert trace["cognition"]["thinker"] == "sampling" and trace["cognition"]["fallback"] is None
    assert all(call["model"] == "scripted-model" and list(call) == CALL_KEYS for call in trace["cognition"]["calls"])
    check_trace({key: value for key, value in trace.items() if key != "cognition"})


def test_a_pass_prompt_carries_its_move_its_draw_the_previous_thought_and_never_coherence(spawn_body):
    client = start_sampling_body(spawn_body)
    turn = run_turn(client)
    steps = turn.trace["steps"]
    first, second = prompt_of(turn.requests[0]), prompt_of(turn.requests[1])
    assert "move: abstract" in first and steps[2]["detail"] in first and "none (this is the first pass)" in first
    assert "move: question" in second and steps[3]["detail"] in second and steps[4]["detail"] in second
    synthesis = prompt_of(turn.requests[-1])
    assert "knowledge.answer" in synthesis and all(steps[s - 1]["detail"] in synthesis for s in REASONING_STEPS)
    for request in turn.requests:
        assert "coheren" not in json.dumps(request).lower() and "drift" not in json.dumps(request).lower()
        assert request["params"]["maxTokens"] == 256 and request["params"]["includeContext"] == "none"


def test_the_body_ids_its_requests_in_its_own_space_never_reusing_one(spawn_body):
    client = start_sampling_body(spawn_body)
    ids = [request["id"] for _ in range(2) for request in run_turn(client).requests]
    assert ids == list(range(1, len(ids) + 1))


def test_the_sampling_result_validates_against_the_outputschema_the_body_advertises(spawn_body):
    client = start_sampling_body(spawn_body)
    [tool] = client.list_tools()
    schema = tool["outputSchema"]
    Draft202012Validator.check_schema(schema)
    assert "cognition" in schema["required"]
    validator = Draft202012Validator(schema)
    # every request answered, then every request refused (all failed: the nulls and the texts of the schema)
    for script in (answer_all, lambda request, rank: [encode_message({"jsonrpc": "2.0", "id": request["id"],
                                                                      "error": {"code": 1, "message": "no"}})]):
        turn = run_turn(client, script)
        validator.validate(turn.trace)
        text = turn.response["result"]["content"][0]["text"]  # type: ignore[index]
        assert json.loads(text.split("\n\n", 1)[1]) == turn.trace, "the text block copies structuredContent"
    no_capability = start_sampling_body(spawn_body, capabilities={})
    validator.validate(run_turn(no_capability).trace)


def test_the_stub_body_advertises_no_cognition_member(ready_body):
    [tool] = ready_body.list_tools()
    assert "cognition" not in tool["outputSchema"]["properties"]


# -- what comes back instead of an answer ------------------------------------------------------------


def hostile(first: list[bytes] | None) -> Any:
    """A script that answers the first request with `first` (the real answer after it, if None)."""
    def script(request: dict[str, Any], rank: int) -> list[bytes]:
        if rank == 1:
            return first if first is not None else []
        return [text_result(request["id"], reply_for(rank))]
    return script


def raw_result(request_id: Any, result: Any) -> bytes:
    return encode_message({"jsonrpc": "2.0", "id": request_id, "result": result})


@pytest.mark.parametrize("case, lines, why", [
    ("error object", lambda i: [encode_message({"jsonrpc": "2.0", "id": i, "error": {
        "code": -1, "message": "Sampling rate limit exceeded"}})], "the client answered error -1"),
    ("no content", lambda i: [raw_result(i, {"role": "assistant", "model": "m"})], "no text content"),
    ("image content", lambda i: [raw_result(i, {"role": "assistant", "model": "m", "content": {
        "type": "image", "data": "AAAA", "mimeType": "image/png"}})], "no text content"),
    ("text not a string", lambda i: [raw_result(i, {"content": {"type": "text", "text": 7}})], "no text content"),
    ("result not an object", lambda i: [raw_result(i, "yes")], "result is not an object"),
    ("malformed JSON", lambda i: [b'{"jsonrpc":"2.0","id":' + str(i).encode() + b',"result":{\n'],
     "not JSON"),
])
def test_a_hostile_answer_fails_its_pass_and_the_turn_goes_on(spawn_body, case, lines, why):
    client = start_sampling_body(spawn_body)
    turn = run_turn(client, lambda request, rank: lines(request["id"]) if rank == 1
                    else [text_result(request["id"], reply_for(rank))])
    first = turn.cognition["calls"][0]
    assert first["status"] == "failed" and why in first["error"], (case, first)
    assert "no thought (failed: " in turn.trace["steps"][3]["detail"]
    assert turn.statuses()[1:] == ["answered"] * (len(turn.requests) - 1)
    assert turn.trace["output"] == reply_for(len(turn.requests))
    if case == "malformed JSON":
        # answered at once, as any such line is, while the turn goes on
        assert [m["error"]["code"] for m in turn.others] == [-32700]
    assert_answers_ping_next(client)


def refuse_all(request: dict[str, Any], rank: int) -> list[bytes]:
    return [encode_message({"jsonrpc": "2.0", "id": request["id"], "error": {
        "code": -1, "message": f"refusal {rank}"}})]


def test_a_turn_whose_every_request_fails_says_the_model_gave_no_thought(spawn_body):
    """Not the stub's canned text as if it were the answer: the output and the fallback say there was none."""
    client = start_sampling_body(spawn_body)
    turn = run_turn(client, refuse_all)
    assert turn.statuses() == ["failed"] * len(turn.requests)
    assert turn.cognition["thinker"] == "sampling"
    assert "gave no thought" in turn.cognition["fallback"]
    output = turn.trace["output"]
    assert output == (f"[{turn.trace['route']['target']}] No thought: the model answered none of the {len(turn.requests)}"
                      " questions of this turn (the first: failed: the client answered error -1: refusal 1).")
    # one answer is a thought: the turn is the model's again, and says nothing of a fallback
    some = run_turn(client, lambda request, rank: refuse_all(request, rank) if rank > 1
                    else [text_result(request["id"], reply_for(rank))])
    assert some.cognition["fallback"] is None and "No thought" not in some.trace["output"]


def test_content_as_a_list_of_blocks_keeps_the_text_blocks(spawn_body):
    client = start_sampling_body(spawn_body)
    blocks = [{"type": "text", "text": "one, "}, {"type": "image", "data": "AA", "mimeType": "image/png"},
              {"type": "text", "text": "two"}]
    turn = run_turn(client, lambda request, rank: [raw_result(request["id"], {"model": "m", "content": blocks})])
    assert turn.trace["steps"][3]["detail"] == "abstract: one, two"
    assert turn.statuses() == ["answered"] * len(turn.requests)


def test_a_response_with_an_unknown_id_is_dropped_and_the_pending_request_still_waits(spawn_body):
    client = start_sampling_body(spawn_body)
    turn = run_turn(client, lambda request, rank: [text_result(request["id"] + 1000, "stray"),
                                                   text_result(request["id"], reply_for(rank))])
    assert turn.statuses() == ["answered"] * len(turn.requests)
    assert "stray" not in json.dumps(turn.trace)


def test_a_ten_megabyte_text_is_cut_at_the_thought_bound_visibly(spawn_body):
    client = start_sampling_body(spawn_body, "--max-line-bytes", str(16 * 1024 * 1024))
    huge = "é" * (5 * 1024 * 1024)
    turn = run_turn(client, lambda request, rank: [text_result(request["id"], huge if rank == 1 else "short")])
    detail = turn.trace["steps"][3]["detail"]
    assert detail.startswith("abstract: éé") and detail.endswith(" [cut]") and len(detail.encode()) <= 1024
    assert turn.statuses() == ["answered"] * len(turn.requests)


def test_a_line_past_the_line_cap_is_refused_as_always_and_fails_the_pass(spawn_body):
    client = start_sampling_body(spawn_body)
    huge = "x" * (10 * 1024 * 1024)
    turn = run_turn(client, hostile([text_result(1, huge)]))
    assert turn.cognition["calls"][0]["status"] == "failed"
    assert "--max-line-bytes" in turn.cognition["calls"][0]["error"]
    [refusal] = turn.others
    assert refusal["id"] is None and refusal["error"]["code"] == -32600
    assert_answers_ping_next(client)


# -- bounds: a request's timeout, the turn's deadline ------------------------------------------------


def test_an_unanswered_request_times_out_is_cancelled_towards_the_client_and_the_turn_goes_on(spawn_body):
    client = start_sampling_body(spawn_body, "--sampling-timeout-ms", "100")
    turn = run_turn(client, hostile([]))
    first = turn.cognition["calls"][0]
    assert first["status"] == "timed_out" and "--sampling-timeout-ms" in first["error"]
    assert turn.statuses()[1:] == ["answered"] * (len(turn.requests) - 1)
    cancels = [m for m in turn.others if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [turn.requests[0]["id"]]
    # the late answer to the request given up is dropped, and the body serves on
    client.send_raw(text_result(turn.requests[0]["id"], "too late"))
    assert_answers_ping_next(client)


def test_a_turn_past_its_deadline_asks_nothing_more_and_answers_with_what_ran(spawn_body):
    client = start_sampling_body(spawn_body, "--turn-deadline-ms", "150")
    turn = run_turn(client, lambda request, rank: [])
    assert len(turn.requests) == 1, "after the deadline no request leaves"
    calls = turn.cognition["calls"]
    assert len(calls) == turn.trace["passes_run"] + 1
    assert [c["status"] for c in calls] == ["timed_out"] * len(calls)
    assert "turn's deadline" in calls[0]["error"] and "before this request" in calls[1]["error"]
    assert turn.trace["output"].startswith("[knowledge.answer] No thought: the model answered none of the")
    assert turn.cognition["fallback"] is not None
    assert_answers_ping_next(client)


# -- what the client sends while a request waits ---------------------------------------------------


def test_a_ping_is_answered_while_a_request_waits(spawn_body):
    client = start_sampling_body(spawn_body)
    turn = run_turn(client, lambda request, rank: [
        encode_message({"jsonrpc": "2.0", "id": f"ping-{rank}", "method": "ping"}),
        text_result(request["id"], reply_for(rank))])
    pings = [m for m in turn.others if str(m.get("id", "")).startswith("ping-")]
    assert pings == [{"jsonrpc": "2.0", "id": f"ping-{n}", "result": {}} for n in range(1, len(turn.requests) + 1)]


def test_other_requests_are_answered_at_once_while_a_request_waits(spawn_body):
    client = start_sampling_body(spawn_body)
    extra = [encode_message({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}),
             encode_message({"jsonrpc": "2.0", "id": "nope", "method": "no/such"}),
             encode_message({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}})]
    turn = run_turn(client, lambda request, rank: (extra if rank == 1 else []) + [
        text_result(request["id"], reply_for(rank))])
    assert turn.statuses() == ["answered"] * len(turn.requests)
    assert [m["id"] for m in turn.others] == ["list", "nope"]
    assert turn.others[0]["result"]["tools"][0]["name"] == "turn" and turn.others[1]["error"]["code"] == -32601
    # answered while the first request waited, before the second was sent
    assert turn.requests[1]["id"] > turn.requests[0]["id"]


def test_a_second_turn_sent_meanwhile_runs_after_the_first_and_samples_too(spawn_body):
    client = start_sampling_body(spawn_body)
    second = turn_request(input_text="and the second?", uid="other", request_id="second")

    def script(request: dict[str, Any], rank: int) -> list[bytes]:
        return ([second] if rank == 1 else []) + [text_result(request["id"], reply_for(rank))]
    first = run_turn(client, script)
    assert first.trace["session"]["uid"] == "u"
    later = run_turn(client, request=b"", request_id="second")
    assert later.trace["session"]["uid"] == "other" and later.cognition["thinker"] == "sampling"


def unknown_tool_call(request_id: Any) -> bytes:
    return encode_message({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                           "params": {"name": "no-such-tool", "arguments": {}}})


def test_the_queue_of_calls_is_bounded_and_a_call_past_it_is_refused_at_once(spawn_body):
    client = start_sampling_body(spawn_body)
    flood = [unknown_tool_call(n) for n in range(70)]
    turn = run_turn(client, lambda request, rank: (flood if rank == 1 else []) + [
        text_result(request["id"], reply_for(rank))])
    busy = [m for m in turn.others if m.get("error", {}).get("code") == -32000]
    assert [m["id"] for m in busy] == list(range(64, 70))
    answered = [client.read_message() for _ in range(64)]
    assert [m["id"] for m in answered] == list(range(64))
    assert all(m["error"]["code"] == -32602 for m in answered)
    assert_answers_ping_next(client)


def test_a_call_cancelled_while_queued_spends_nothing_and_gets_no_answer(spawn_body):
    client = start_sampling_body(spawn_body)
    queued = turn_request(input_text="and the second?", uid="other", request_id="queued")
    cancel = encode_message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": "queued", "reason": "changed my mind"}})
    turn = run_turn(client, lambda request, rank: ([queued, cancel] if rank == 1 else []) + [
        text_result(request["id"], reply_for(rank))])
    assert turn.response is not None and turn.statuses() == ["answered"] * len(turn.requests)
    # the next message is the marker's reply: no sampling request, no answer for the cancelled call
    client.send_raw(encode_message({"jsonrpc": "2.0", "id": "marker", "method": "ping"}))
    assert client.read_message() == {"jsonrpc": "2.0", "id": "marker", "result": {}}


def test_tools_list_is_answered_while_a_sampled_turn_waits(spawn_body):
    client = start_sampling_body(spawn_body)
    listing = encode_message({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
    turn = run_turn(client, lambda request, rank: [listing] if rank == 1 else [],
                    until_id="list")
    assert turn.response is None and len(turn.requests) == 1, "answered while the first request still waits"
    assert turn.others[-1]["result"]["tools"][0]["name"] == "turn"


@pytest.mark.parametrize("turn_id", [TURN_ID, 0, "turn-7", "x" * 300], ids=["number", "zero", "string", "long"])
def test_a_cancelled_turn_stops_sampling_and_gets_no_response(spawn_body, turn_id):
    client = start_sampling_body(spawn_body)
    cancel = encode_message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": turn_id, "reason": "user pressed stop"}})
    marker = encode_message({"jsonrpc": "2.0", "id": "after-cancel", "method": "ping"})

    def script(request: dict[str, Any], rank: int) -> list[bytes]:
        return [text_result(request["id"], reply_for(rank))] if rank < 3 else [cancel, marker]
    turn = run_turn(client, script, request=turn_request(request_id=turn_id), request_id=turn_id,
                    until_id="after-cancel")
    assert turn.response is None, "a cancelled request gets no response"
    assert len(turn.requests) == 3
    cancels = [m for m in turn.others if m.get("method") == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [3]
    assert turn.others[-1] == {"jsonrpc": "2.0", "id": "after-cancel", "result": {}}
    # the session went on: the next turn is its second
    assert run_turn(client).trace["turn"] == 2


@pytest.mark.parametrize("other", [1, str(TURN_ID)], ids=["the first sampling id", "the turn's id as a string"])
def test_a_cancel_of_another_id_is_ignored(spawn_body, other):
    client = start_sampling_body(spawn_body)
    cancel = encode_message({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": other}})
    turn = run_turn(client, lambda request, rank: [cancel, text_result(request["id"], reply_for(rank))])
    assert turn.statuses() == ["answered"] * len(turn.requests)


def test_stdin_closing_mid_turn_fails_the_pass_answers_the_turn_and_exits_cleanly(spawn_body):
    client = start_sampling_body(spawn_body)
    client.send_raw(turn_request())
    first = client.read_message()
    assert first["method"] == SAMPLING
    client.close_stdin()
    response = client.read_message()
    calls = response["result"]["structuredContent"]["cognition"]["calls"]
    assert calls[0]["status"] == "failed" and "stdin closed" in calls[0]["error"]
    assert all(c["status"] == "failed" for c in calls[1:])
    assert client.wait_exit(10) == 0


# -- no model to ask ---------------------------------------------------------------------------------


def without_cognition(trace: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in trace.items() if key != "cognition"}


def test_without_the_capability_the_stub_thinks_and_the_trace_says_why(spawn_body):
    sampling = start_sampling_body(spawn_body, capabilities={})
    stub = spawn_body(no_soul=True)
    stub.initialize()
    turn = run_turn(sampling)
    assert turn.requests == []
    assert turn.cognition == {"requested": "sampling", "thinker": "stub",
                              "fallback": "the client did not declare capabilities.sampling", "calls": [],
                              "budget": None}
    assert dumps(without_cognition(turn.trace)) == dumps(stub.call_turn("who sits at the head of the table?",
                                                                        "u", "c", "s"))


def modern_turn(capabilities: dict[str, Any], request_id: Any = TURN_ID, **extra: Any) -> bytes:
    params = modern_params({"name": "turn", "arguments": {"input": "hi", "uid": "u", "channel": "c", "server": "s"}},
                           capabilities=capabilities)
    params.update(extra)
    return encode_message({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def test_a_modern_request_without_the_capability_falls_back_to_the_stub_saying_so(spawn_body):
    client = spawn_body(no_soul=True, extra_args=("--cognition", "sampling"))
    turn = run_turn(client, request=modern_turn({}))
    assert turn.requests == [] and turn.cognition["thinker"] == "stub"
    assert turn.cognition["fallback"] == "the client did not declare capabilities.sampling"


def input_required_rounds(client: BodyClient, answer: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Drive a 2026-07-28 sampled turn round by round, as SEP-2322 has it: every input_required result
    is answered (`answer(request, number)` gives the CreateMessageResult) and the call sent again with
    inputResponses and the requestState echoed. Returns the rounds' results and the final result."""
    rounds, extra = [], {}
    for _ in range(12):
        client.send_raw(modern_turn({"sampling": {}}, request_id=len(rounds) + 1, **extra))
        result = client.read_message()["result"]
        if result["resultType"] == "complete":
            return rounds, result
        rounds.append(result)
        [(key, request)] = result["inputRequests"].items()
        extra = {"inputResponses": {key: answer(request, len(rounds))}, "requestState": result["requestState"]}
    raise AssertionError("no complete result after 12 rounds")


def created(text: str) -> dict[str, Any]:
    return {"role": "assistant", "model": "modern-model", "content": {"type": "text", "text": text}}


def test_a_modern_client_with_the_capability_is_asked_in_the_input_required_form(spawn_body):
    client = spawn_body(no_soul=True, extra_args=("--cognition", "sampling"))
    rounds, result = input_required_rounds(client, lambda request, number: created(f"round {number}"))
    trace = result["structuredContent"]
    assert len(rounds) == trace["passes_run"] + 1 == 9
    for number, round_result in enumerate(rounds, start=1):
        [(key, request)] = round_result["inputRequests"].items()
        assert key == f"call-{number}" and request["method"] == SAMPLING
        assert request["params"]["maxTokens"] == 256 and request["params"]["messages"][0]["role"] == "user"
        assert round_result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mafiabot"
    assert prompt_of(rounds[1]["inputRequests"]["call-2"]).count("abstract: round 1") == 1
    assert trace["steps"][3]["detail"] == "abstract: round 1" and trace["output"] == "round 9"
    assert trace["cognition"]["thinker"] == "sampling"
    assert [c["model"] for c in trace["cognition"]["calls"]] == ["modern-model"] * 9
    assert trace["turn"] == 1, "the rounds before the last left the session as it was"
    _, again = input_required_rounds(client, lambda request, number: created("x"))
    assert again["structuredContent"]["turn"] == 2 and again["structuredContent"]["passes_run"] < 8


def test_a_modern_answer_without_text_fails_its_pass_and_the_rounds_go_on(spawn_body):
    client = spawn_body(no_soul=True, extra_args=("--cognition", "sampling"))
    _, result = input_required_rounds(
        client, lambda request, number: {"model": "m"} if number == 2 else created(f"round {number}"))
    calls = result["structuredContent"]["cognition"]["calls"]
    assert [c["status"] for c in calls] == ["answered", "failed"] + ["answered"] * 7
    assert calls[1]["error"] == "the result holds no text content"


@pytest.mark.parametrize("state", ["not json", '{"call":"0000000000000000","answers":[]}', '{"answers":[]}',
                                   "[1]"], ids=["not JSON", "another call's", "no call", "not an object"])
def test_a_request_state_the_body_did_not_give_for_this_call_is_refused(spawn_body, state):
    client = spawn_body(no_soul=True, extra_args=("--cognition", "sampling"))
    client.send_raw(modern_turn({"sampling": {}}, requestState=state))
    reply = client.read_message()
    assert reply["error"]["code"] == -32602 and "requestState" in reply["error"]["message"]
    assert reply["id"] == TURN_ID


def test_a_refused_round_on_a_store_releases_its_lock_for_the_other_bodies(spawn_body, tmp_path):
    store = str(tmp_path / "sessions.db")
    sampled = spawn_body(no_soul=True, extra_args=("--cognition", "sampling", "--state", store))
    sampled.send_raw(modern_turn({"sampling": {}}, requestState="not json"))
    assert sampled.read_message()["error"]["code"] == -32602
    # Another body on the store gets the write lock at once: the refused round took nothing and holds nothing.
    other = spawn_body(no_soul=True, extra_args=("--state", store, "--state-busy-ms", "200"))
    other.initialize()
    assert other.call_turn("hi", uid="u", channel="c", server="s")["turn"] == 1
    _, result = input_required_rounds(sampled, lambda request, number: created(f"round {number}"))
    assert result["structuredContent"]["turn"] == 2, "the refused round was no turn; the other body's was"


def test_a_request_state_given_for_one_input_is_refused_for_another(spawn_body):
    client = spawn_body(no_soul=True, extra_args=("--cognition", "sampling"))
    client.send_raw(modern_turn({"sampling": {}}))
    state = client.read_message()["result"]["requestState"]
    other = modern_params({"name": "turn", "arguments": {"input": "something else", "uid": "u", "channel": "c",
                                                         "server": "s"}}, capabilities={"sampling": {}})
    other["requestState"] = state
    client.send_raw(encode_message({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": other}))
    assert client.read_message()["error"]["code"] == -32602


def test_every_status_the_trace_can_show_is_one_the_schema_allows(spawn_body):
    client = start_sampling_body(spawn_body)
    [tool] = client.list_tools()
    calls = tool["outputSchema"]["properties"]["cognition"]["properties"]["calls"]["items"]
    assert set(calls["properties"]["status"]["enum"]) == STATUSES
    assert calls["required"] == CALL_KEYS


def test_the_options_refuse_bad_values_with_one_line(body_exe):
    for argv in (["--cognition", "model"], ["--sampling-timeout-ms", "0"], ["--turn-deadline-ms", "x"],
                 ["--sampling-max-tokens", "-1"]):
        done = subprocess.run([str(body_exe), *argv], capture_output=True, text=True, timeout=10, check=False)
        assert done.returncode == 2 and argv[0] in done.stderr.splitlines()[0], (argv, done.stderr)


# -- the hostile corpus, sent while a request waits --------------------------------------------------

corpus = load_corpus()


@pytest.mark.parametrize("case", corpus.CASES, ids=[c.name for c in corpus.CASES])
def test_a_hostile_line_sent_while_a_request_waits_gets_its_outcome_and_breaks_nothing(spawn_body, case):
    client = start_sampling_body(spawn_body, **case.body)

    def script(request: dict[str, Any], rank: int) -> list[bytes]:
        return ([case.line + b"\n"] if rank == 1 else []) + [text_result(request["id"], reply_for(rank))]
    turn = run_turn(client, script)
    # The first pass is answered, or failed when the line may have been its answer (not JSON, or a
    # response with its id); every other pass is answered
    statuses = turn.statuses()
    assert statuses[0] in ("answered", "failed") and statuses[1:] == ["answered"] * (len(statuses) - 1)
    assert len(statuses) == turn.trace["passes_run"] + 1
    replies = list(turn.others)
    if case.expect.kind == "silent":
        assert replies == [], replies
    else:
        if not replies:  # a tools/call: queued, answered once the turn was
            replies.append(client.read_message(awaiting=f"the reply to hostile case {case.name}"))
        [reply] = replies
        expect = case.expect
        assert reply["id"] == (None if expect.id_raw is None else json.loads(expect.id_raw)), reply
        if expect.kind == "error":
            assert reply["error"]["code"] == expect.code, reply
        elif expect.kind == "result":
            assert "result" in reply, reply
    assert_answers_ping_next(client, f"after {case.name}")


def test_a_line_half_read_when_a_turn_ends_is_whole_for_the_turn_queued_after_it(spawn_body):
    # The synthesis of the first turn times out while half of a ping is in: the turn queued
    # meanwhile then samples, and the ping's second half, sent during it, completes the same line
    client = start_sampling_body(spawn_body, "--sampling-timeout-ms", "300")
    second = turn_request(input_text="and the second?", uid="other", request_id="second")
    ping = encode_message({"jsonrpc": "2.0", "id": "halves", "method": "ping"})
    first_half, second_half = ping[:20], ping[20:]
    passes = {"u": 8}

    def first_turn(request: dict[str, Any], rank: int) -> list[bytes]:
        if rank <= passes["u"]:
            return [text_result(request["id"], reply_for(rank))]
        return [second, first_half]  # the synthesis is never answered
    turn = run_turn(client, first_turn)
    assert turn.statuses()[-1] == "timed_out"

    def second_turn(request: dict[str, Any], rank: int) -> list[bytes]:
        return ([second_half] if rank == 1 else []) + [text_result(request["id"], reply_for(rank))]
    later = run_turn(client, second_turn, request=b"", request_id="second")
    assert later.statuses() == ["answered"] * len(later.requests)
    pings = [m for m in turn.others + later.others if m.get("id") == "halves"]
    assert pings == [{"jsonrpc": "2.0", "id": "halves", "result": {}}]
    assert not [m for m in turn.others + later.others if "error" in m]


# -- requestState is authenticated: a keyed MAC, the key the body's (or the store's) -------------------


def first_round_state(client: BodyClient, **answers: Any) -> str:
    """The requestState of a second round: the first call answered, as the body wrote it."""
    client.send_raw(modern_turn({"sampling": {}}))
    first = client.read_message()["result"]
    client.send_raw(modern_turn({"sampling": {}}, request_id=2, requestState=first["requestState"],
                                inputResponses={"call-1": created("round 1")}))
    second = client.read_message()["result"]
    assert second["resultType"] == "input_required"
    return str(second["requestState"])


def test_a_state_whose_answers_a_client_rewrote_is_refused(spawn_body):
    client = spawn_body(no_soul=True, extra_args=("--cognition", "sampling"))
    state = json.loads(first_round_state(client))
    assert state["state"]["answers"][0]["text"] == "round 1"
    state["state"]["answers"][0]["text"] = "a thought the model never had"
    client.send_raw(modern_turn({"sampling": {}}, request_id=3, requestState=dumps(state)))
    reply = client.read_message()
    assert reply["error"]["code"] == -32602 and "not one the body gave" in reply["error"]["message"]


def test_a_state_minted_before_a_restart_without_a_store_is_refused_saying_why(spawn_body):
    state = first_round_state(spawn_body(no_soul=True, extra_args=("--cognition", "sampling")))
    restarted = spawn_body(no_soul=True, extra_args=("--cognition", "sampling"))
    restarted.send_raw(modern_turn({"sampling": {}}, request_id=3, requestState=state))
    reply = restarted.read_message()
    assert reply["error"]["code"] == -32602 and "another key" in reply["error"]["message"]
    assert_answers_ping_next(restarted)


def test_with_a_store_every_body_on_it_accepts_the_states_of_the_others(spawn_body, tmp_path):
    args = ("--cognition", "sampling", "--state", str(tmp_path / "sessions.db"))
    state = first_round_state(spawn_body(no_soul=True, extra_args=args))
    other = spawn_body(no_soul=True, extra_args=args)
    other.send_raw(modern_turn({"sampling": {}}, request_id=3, requestState=state,
                               inputResponses={"call-2": created("round 2")}))
    result = other.read_message()["result"]
    assert result["resultType"] == "input_required" and list(result["inputRequests"]) == ["call-3"]
