"""--cognition sampling through the official MCP Python SDK client (mcp 2.3.0) and its `sampling_callback`.

The SDK answers the body's `sampling/createMessage` requests with a deterministic callback, validates
every `structuredContent` against the advertised outputSchema itself, and sends `notifications/cancelled`
when a caller abandons a call: the same path Hermes takes (its SamplingHandler is such a callback). In
its default auto mode it speaks 2026-07-28, where the body asks in the input-required form instead, and
the SDK's own SEP-2322 driver answers each round through the same callback.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp import types as mcp_types

from harness.body import BodyOptions
from sampling_support import SAMPLING_ARGS

SESSION_TIMEOUT = 30.0
READ_TIMEOUT = 10.0
ARGUMENTS = {"input": "who sits at the head of the table?", "uid": "vito", "channel": "#docks", "server": "corleone"}


def server(body_exe, home) -> StdioServerParameters:
    argv = BodyOptions(body=body_exe, no_soul=True, extra_args=SAMPLING_ARGS).argv()
    return StdioServerParameters(command=argv[0], args=argv[1:], env={"HERMES_HOME": str(home), "PATH": "/usr/bin:/bin"})


class ScriptedModel:
    """A sampling callback: the n-th request of the session answered `model says n`, or refused where told."""

    def __init__(self, refuse: set[int] | None = None) -> None:
        self.prompts: list[str] = []
        self.refuse = refuse or set()

    async def __call__(self, context: Any, params: mcp_types.CreateMessageRequestParams
                       ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        self.prompts.append(params.messages[0].content.text)  # type: ignore[union-attr]
        number = len(self.prompts)
        if number in self.refuse:
            return mcp_types.ErrorData(code=-1, message=f"refused request {number}")
        return mcp_types.CreateMessageResult(role="assistant", model="sdk-scripted",
                                             content=mcp_types.TextContent(type="text", text=f"model says {number}"),
                                             stop_reason="endTurn")


async def turns(params: StdioServerParameters, model: ScriptedModel | None, count: int) -> list[dict[str, Any]]:
    traces = []
    with anyio.fail_after(SESSION_TIMEOUT):
        async with Client(params, mode="legacy", read_timeout_seconds=READ_TIMEOUT,
                          sampling_callback=model) as client:
            for _ in range(count):
                result = await client.call_tool("turn", ARGUMENTS)
                assert not result.is_error
                traces.append(result.structured_content)
    return traces


def test_the_sdk_answers_one_request_per_pass_plus_the_synthesis_and_fewer_as_the_session_drains(body_exe, tmp_path):
    model = ScriptedModel()
    traces = anyio.run(turns, server(body_exe, tmp_path), model, 4)
    asked = 0
    for trace in traces:
        calls = trace["cognition"]["calls"]
        assert len(calls) == trace["passes_run"] + 1
        assert [c["status"] for c in calls] == ["answered"] * len(calls)
        assert all(c["model"] == "sdk-scripted" for c in calls)
        for number, call in enumerate(calls[:-1], start=asked + 1):
            assert trace["steps"][call["step"] - 1]["detail"].endswith(f": model says {number}")
        asked += len(calls)
        assert trace["output"] == f"model says {asked}"
    assert len(model.prompts) == asked
    passes = [trace["passes_run"] for trace in traces]
    assert passes[0] == 8 and passes[-1] < passes[0]


def test_a_refused_request_fails_its_pass_alone(body_exe, tmp_path):
    model = ScriptedModel(refuse={3})
    [trace] = anyio.run(turns, server(body_exe, tmp_path), model, 1)
    calls = trace["cognition"]["calls"]
    assert [c["status"] for c in calls] == ["answered", "answered", "failed"] + ["answered"] * (len(calls) - 3)
    assert "refused request 3" in calls[2]["error"]
    assert "no thought (failed: " in trace["steps"][calls[2]["step"] - 1]["detail"]


def test_without_a_sampling_callback_the_sdk_gets_the_stub_and_the_reason(body_exe, tmp_path):
    [trace] = anyio.run(turns, server(body_exe, tmp_path), None, 1)
    assert trace["cognition"]["thinker"] == "stub" and trace["cognition"]["calls"] == []
    assert "capabilities.sampling" in trace["cognition"]["fallback"]


async def cancelled_then_next(params: StdioServerParameters) -> tuple[list[int], dict[str, Any]]:
    """Cancel the first turn from inside its third sampling request; then run one more turn.

    Returns how many sampling requests each turn made (a new turn's first prompt is its pass 1)."""
    scope = anyio.CancelScope()
    per_turn: list[int] = []

    async def cancel_on_third(context: Any, params: mcp_types.CreateMessageRequestParams
                              ) -> mcp_types.CreateMessageResult:
        if params.messages[0].content.text.startswith("Pass 1 of 8"):  # type: ignore[union-attr]
            per_turn.append(0)
        per_turn[-1] += 1
        if len(per_turn) == 1 and per_turn[0] == 3:
            scope.cancel()
        return mcp_types.CreateMessageResult(role="assistant", model="m",
                                             content=mcp_types.TextContent(type="text", text="r"))
    with anyio.fail_after(SESSION_TIMEOUT):
        async with Client(params, mode="legacy", read_timeout_seconds=READ_TIMEOUT,
                          sampling_callback=cancel_on_third) as client:
            with scope:
                await client.call_tool("turn", ARGUMENTS)
            result = await client.call_tool("turn", ARGUMENTS)
            return per_turn, result.structured_content  # type: ignore[return-value]


def test_a_call_the_sdk_abandons_stops_the_body_sampling_and_the_session_goes_on(body_exe, tmp_path):
    per_turn, trace = anyio.run(cancelled_then_next, server(body_exe, tmp_path))
    # The third answer and the cancel cross on the wire: the body may have sent the fourth request
    # before it read the cancel, never a fifth
    assert per_turn[0] in (3, 4), per_turn
    assert trace["turn"] == 2 and per_turn[1] == trace["passes_run"] + 1 and len(per_turn) == 2
    assert [c["status"] for c in trace["cognition"]["calls"]] == ["answered"] * (trace["passes_run"] + 1)


def test_in_the_modern_era_the_sdk_is_asked_in_the_input_required_form(body_exe, tmp_path):
    model = ScriptedModel()

    async def two() -> list[dict[str, Any]]:
        with anyio.fail_after(SESSION_TIMEOUT):
            async with Client(server(body_exe, tmp_path), mode="auto", read_timeout_seconds=READ_TIMEOUT,
                              sampling_callback=model) as client:
                assert client.protocol_version == "2026-07-28"
                return [(await client.call_tool("turn", ARGUMENTS)).structured_content  # type: ignore[misc]
                        for _ in range(2)]
    first, second = anyio.run(two)
    assert first["turn"] == 1 and second["turn"] == 2, "each call is one turn, however many rounds it took"
    assert len(first["cognition"]["calls"]) == 9 and first["output"] == "model says 9"
    assert len(model.prompts) == 9 + second["passes_run"] + 1
    assert all(c["status"] == "answered" for trace in (first, second) for c in trace["cognition"]["calls"])


# -- --intent model: the intent asked of the model, routed by the static table ------------------------

INTENT_ARGS = (*SAMPLING_ARGS, "--intent", "model")


def intent_server(body_exe, home, *extra: str) -> StdioServerParameters:
    argv = BodyOptions(body=body_exe, no_soul=True, extra_args=(*INTENT_ARGS, *extra)).argv()
    return StdioServerParameters(command=argv[0], args=argv[1:], env={"HERMES_HOME": str(home), "PATH": "/usr/bin:/bin"})


class IntentModel(ScriptedModel):
    """A sampling callback that answers the intent question with the next of `picks` (None: refuses it),
    and every other request as ScriptedModel does; it tells the two apart by the system prompt alone."""

    def __init__(self, picks: list[str | None]) -> None:
        super().__init__()
        self.picks = list(picks)
        self.intent_prompts: list[str] = []

    async def __call__(self, context: Any, params: mcp_types.CreateMessageRequestParams
                       ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        if not (params.system_prompt or "").startswith("You are the intent organ"):
            return await super().__call__(context, params)
        self.intent_prompts.append(params.messages[0].content.text)  # type: ignore[union-attr]
        pick = self.picks.pop(0)
        if pick is None:
            return mcp_types.ErrorData(code=-1, message="refused the intent question")
        return mcp_types.CreateMessageResult(role="assistant", model="sdk-scripted",
                                             content=mcp_types.TextContent(type="text", text=pick),
                                             stop_reason="endTurn")


def packed_table(trace: dict[str, Any]) -> dict[str, str]:
    """The static table as the turn's own step 19 packed it: intent -> route."""
    detail = trace["steps"][18]["detail"]
    assert detail.startswith("packed schema ")
    return dict(entry.split("->") for entry in detail.removeprefix("packed schema ").split("|"))


def test_with_intent_model_the_models_pick_is_routed_by_the_static_table(body_exe, tmp_path):
    picks = ["remember", "Act.", "  CHAT\n", "ask"]
    model = IntentModel(picks)
    traces = anyio.run(turns, intent_server(body_exe, tmp_path), model, len(picks))
    for pick, trace in zip(picks, traces, strict=True):
        named = pick.strip().rstrip(".").lower()
        assert trace["route"] == {"intent": named, "target": packed_table(trace)[named]}
        assert trace["cognition"]["intent"] == {"stated_by": "model", "said": pick, "fallback": None}
        calls = trace["cognition"]["calls"]
        assert len(calls) == trace["passes_run"] + 2, "one request more than the passes and the synthesis"
        assert [c["step"] for c in calls[-2:]] == [20, 22] and calls[-2]["status"] == "answered"
        assert trace["steps"][19]["detail"] == f"intent {named} (named by the model)"
    assert len(model.intent_prompts) == len(picks)
    offered = model.intent_prompts[0]
    assert all(f"- {name}: routed to {route}" in offered for name, route in packed_table(traces[0]).items())
    assert ARGUMENTS["input"] in offered and "model says" not in offered, "the turn, never the passes' thoughts"


def test_with_intent_model_an_answer_outside_the_set_falls_back_to_the_rules_said_in_the_trace(body_exe, tmp_path):
    outside: list[str | None] = ["knowledge.answer", "I would say ask", "ask..", None]
    model = IntentModel(outside)
    traces = anyio.run(turns, intent_server(body_exe, tmp_path / "model"), model, len(outside))
    by_rules = anyio.run(turns, server(body_exe, tmp_path / "rules"), ScriptedModel(), len(outside))
    for said, trace, rules in zip(outside, traces, by_rules, strict=True):
        assert trace["route"] == rules["route"], "the rules' intent and route, as without --intent model"
        statement = trace["cognition"]["intent"]
        assert statement["stated_by"] == "rules" and statement["said"] == said
        if said is None:
            assert "no answer to the intent question (failed: " in statement["fallback"]
            assert "refused the intent question" in statement["fallback"]
            assert trace["cognition"]["calls"][-2]["status"] == "failed"
            assert trace["steps"][19]["detail"].endswith("; the model gave no answer)")
        else:
            assert statement["fallback"] == "the model's answer names none of the intents offered"
            assert trace["steps"][19]["detail"].endswith("; the model named no intent)")
        assert trace["output"].startswith("model says"), "the turn goes on: the synthesis is the model's"


def test_with_intent_model_and_no_sampling_callback_the_rules_state_it_saying_why(body_exe, tmp_path):
    [trace] = anyio.run(turns, intent_server(body_exe, tmp_path), None, 1)
    assert trace["cognition"]["calls"] == []
    assert trace["cognition"]["intent"] == {"stated_by": "rules", "said": None,
                                            "fallback": trace["cognition"]["fallback"]}
    assert "capabilities.sampling" in trace["cognition"]["fallback"]


def test_with_intent_model_in_the_modern_era_a_full_turn_is_ten_rounds(body_exe, tmp_path):
    model = IntentModel(["remember"])

    async def one() -> dict[str, Any]:
        with anyio.fail_after(SESSION_TIMEOUT):
            async with Client(intent_server(body_exe, tmp_path), mode="auto", read_timeout_seconds=READ_TIMEOUT,
                              sampling_callback=model) as client:
                assert client.protocol_version == "2026-07-28"
                return (await client.call_tool("turn", ARGUMENTS)).structured_content  # type: ignore[return-value]
    trace = anyio.run(one)
    assert trace["passes_run"] == 8 and len(trace["cognition"]["calls"]) == 10
    assert trace["route"]["intent"] == "remember" and trace["cognition"]["intent"]["stated_by"] == "model"
