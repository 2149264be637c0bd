"""--intent model on the wire: the start-up rule, the intent request itself, its bounds and its schema.

The official SDK client's view (the model's pick routed, every fallback said) is in test_sampling_sdk.py;
here a scripted client on raw pipes (sampling_support) sends what the SDK cannot: a two-megabyte answer,
an answer in pieces, and the exact request the body writes. Nothing sleeps; every wait is the harness
client's bounded read.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

from jsonschema import Draft202012Validator

from harness.client import encode_message
from sampling_support import (
    Script,
    Turn,
    answer_all,
    dumps,
    prompt_of,
    run_turn,
    start_sampling_body,
    text_result,
)

INTENT = ("--intent", "model")
INTENT_SYSTEM = "You are the intent organ"
LATENCY = re.compile(r'(\\?"latency_ms\\?":\s*)\d+')


def is_intent_question(request: dict[str, Any]) -> bool:
    return str(request["params"].get("systemPrompt", "")).startswith(INTENT_SYSTEM)


def answering_intent(text: str) -> Script:
    """A script: the intent question answered `text`, every other request as answer_all does."""
    def script(request: dict[str, Any], rank: int) -> list[bytes]:
        if is_intent_question(request):
            return [text_result(request["id"], text)]
        return answer_all(request, rank)
    return script


def intent_statement(turn: Turn) -> dict[str, Any]:
    statement: dict[str, Any] = turn.cognition["intent"]
    return statement


def test_intent_model_without_sampling_cognition_refuses_to_start_saying_what_it_needs(body_exe):
    for argv in (["--intent", "model"], ["--intent", "model", "--cognition", "stub"]):
        done = subprocess.run([str(body_exe), "--no-soul", *argv], capture_output=True, text=True, timeout=10,
                              check=False, input="")
        first = done.stderr.splitlines()[0]
        assert done.returncode == 2 and done.stdout == "", (argv, done.stderr)
        assert "--intent model needs --cognition sampling" in first, first
    bad = subprocess.run([str(body_exe), "--intent", "Model"], capture_output=True, text=True, timeout=10, check=False)
    assert bad.returncode == 2 and "--intent needs rules or model" in bad.stderr.splitlines()[0]
    rules = subprocess.run([str(body_exe), "--no-soul", "--intent", "rules"], capture_output=True, text=True,
                           timeout=10, check=False, input="")
    assert rules.returncode == 0, "the default, named, needs nothing"


def test_intent_rules_named_is_the_default_byte_for_byte(spawn_body):
    written = []
    for extra in ((), ("--intent", "rules")):
        client = start_sampling_body(spawn_body, *extra)
        [tool] = client.list_tools()
        turns = [run_turn(client, request_id=n) for n in (1, 2)]
        written.append(dumps(tool) + "".join(dumps(t.response) for t in turns))
        assert all(not any(is_intent_question(r) for r in t.requests) for t in turns), "nothing asked of the intent"
    # latency_ms is the one member the clock writes (the time the scripted client took to answer)
    assert LATENCY.sub(r"\g<1>0", written[0]) == LATENCY.sub(r"\g<1>0", written[1])


def test_the_intent_request_comes_between_the_passes_and_the_synthesis_and_asks_for_one_word(spawn_body):
    client = start_sampling_body(spawn_body, *INTENT)
    turn = run_turn(client, answering_intent("ask"))
    passes = turn.trace["passes_run"]
    assert len(turn.requests) == passes + 2
    [intent_rank] = [rank for rank, request in enumerate(turn.requests, start=1) if is_intent_question(request)]
    assert intent_rank == passes + 1, "after every pass, before the synthesis (step 20 of the static order)"
    params = turn.requests[intent_rank - 1]["params"]
    assert params["maxTokens"] <= 16, "one word is asked for"
    prompt = prompt_of(turn.requests[intent_rank - 1])
    assert prompt.rstrip().endswith("Answer with exactly one of these names: ask, act, remember, chat.")
    assert "scripted thought" not in prompt and "coherence" not in prompt and "drift" not in prompt
    assert [c["step"] for c in turn.cognition["calls"]][-2:] == [20, 22]


def test_a_huge_intent_answer_is_no_intent_and_what_the_trace_keeps_of_it_is_bounded_visibly(spawn_body):
    client = start_sampling_body(spawn_body, *INTENT)
    turn = run_turn(client, answering_intent("remember " * 200_000))
    statement = intent_statement(turn)
    assert statement["stated_by"] == "rules" and statement["fallback"].startswith("the model's answer names none")
    assert len(statement["said"].encode()) <= 64 and statement["said"].endswith(" [cut]")


def test_an_intent_answer_in_text_blocks_is_read_as_their_text(spawn_body):
    client = start_sampling_body(spawn_body, *INTENT)

    def blocks(request: dict[str, Any], rank: int) -> list[bytes]:
        if not is_intent_question(request):
            return answer_all(request, rank)
        return [encode_message({"jsonrpc": "2.0", "id": request["id"], "result": {
            "role": "assistant", "model": "m", "content": [{"type": "text", "text": " Chat."}]}})]
    turn = run_turn(client, blocks)
    assert turn.trace["route"]["intent"] == "chat" and intent_statement(turn)["stated_by"] == "model"


def test_every_intent_statement_validates_against_the_schema_the_body_advertises(spawn_body):
    client = start_sampling_body(spawn_body, *INTENT)
    [tool] = client.list_tools()
    cognition = tool["outputSchema"]["properties"]["cognition"]
    assert "intent" in cognition["required"] and cognition["properties"]["calls"]["maxItems"] == 10
    validator = Draft202012Validator(tool["outputSchema"])

    def refuse_intent(request: dict[str, Any], rank: int) -> list[bytes]:
        if is_intent_question(request):
            return [encode_message({"jsonrpc": "2.0", "id": request["id"], "error": {"code": 1, "message": "no"}})]
        return answer_all(request, rank)
    sources = []
    for script in (answering_intent("act"), answering_intent("a route"), refuse_intent):
        turn = run_turn(client, script)
        validator.validate(turn.trace)
        text = turn.response["result"]["content"][0]["text"]  # type: ignore[index]
        assert json.loads(text.split("\n\n", 1)[1]) == turn.trace, "the text block copies structuredContent"
        sources.append(intent_statement(turn)["stated_by"])
    assert sources == ["model", "rules", "rules"]
    no_capability = start_sampling_body(spawn_body, *INTENT, capabilities={})
    validator.validate(run_turn(no_capability).trace)
    plain = start_sampling_body(spawn_body)
    [plain_tool] = plain.list_tools()
    plain_cognition = plain_tool["outputSchema"]["properties"]["cognition"]
    assert "intent" not in plain_cognition["properties"] and plain_cognition["properties"]["calls"]["maxItems"] == 9


def test_the_intent_is_asked_with_the_sampling_timeout_and_a_silent_client_falls_back(spawn_body):
    client = start_sampling_body(spawn_body, *INTENT, "--sampling-timeout-ms", "200")

    def silent_on_intent(request: dict[str, Any], rank: int) -> list[bytes]:
        return [] if is_intent_question(request) else answer_all(request, rank)
    turn = run_turn(client, silent_on_intent)
    statement = intent_statement(turn)
    assert statement["stated_by"] == "rules" and statement["said"] is None
    assert "(timed_out: " in statement["fallback"]
    assert turn.cognition["calls"][-2]["status"] == "timed_out" and turn.cognition["calls"][-1]["status"] == "answered"
    assert any(m.get("method") == "notifications/cancelled" for m in turn.others), "the request is cancelled"



def test_a_spent_budget_asks_nothing_not_even_the_intent(spawn_body):
    """With --energy budget, a session that has no call left runs its turn on the stub and the rules: the intent
    question is a model call like any other, never made past the budget (docs/energy.md)."""
    client = start_sampling_body(spawn_body, *INTENT, "--energy", "budget", "--budget-calls", "10")
    first = run_turn(client, answering_intent("act"), request_id=1)
    assert len(first.requests) == 10 and first.cognition["budget"]["calls_left"] == 10
    for request_id in (2, 3):
        spent = run_turn(client, answering_intent("act"), request_id=request_id)
        budget = spent.cognition["budget"]
        assert spent.requests == [], "no sampling request once the budget is spent"
        assert (budget["calls_used"], budget["turn_calls"], spent.cognition["calls"]) == (10, 0, [])
        assert intent_statement(spent)["stated_by"] == "rules"
