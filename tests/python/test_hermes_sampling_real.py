"""The real Hermes Agent answering the body's sampling requests with its own model: the stub model server, offline.

`hermes chat` -> the stub model calls `turn` -> the body, mounted with `mount --cognition sampling`, sends one
`sampling/createMessage` per pass and one for the synthesis -> Hermes's SamplingHandler asks its model (the stub,
which logs each call as `sampling`) -> the answers come back into the trace -> the model quotes it. A full-energy
turn is nine calls; the trace says every one was `answered` by the model the stub named. Two turns back to back
(the second drained) are all answered under the block mount sized (its default brake, six full turns a minute), and
cut short under Hermes's default of 10 a minute: what mount's sizing is for. With `--energy budget` (docs/energy.md)
a chat's turns run fewer passes as the session's budget drains, down to a turn that asks nothing, and a budget that
lets one session spend more in a minute than mount's default brake gets a block sized for it: no call meets
Hermes's rate limit.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.hermes_mount.cognition import CALLS_PER_FULL_TURN, DEFAULT_TURNS_PER_MINUTE, INTENT_CALLS, PASS_TOTAL
from hermes_support import SCRIPTS, StubModel, offline_config, project_hermes, requires_hermes, run_hermes

pytestmark = [*requires_hermes, pytest.mark.usefixtures(project_hermes.__name__)]
PROFILE = "thinker"
THOUGHT = "stub thought {sampling_call}"
STUB_MODEL = "stub-model"
# SamplingHandler's own default (tools/mcp_tool.py): what an entry without mount's block gets.
HERMES_DEFAULT_MAX_RPM = 10


def tool_result_trace(agent_call: dict[str, Any]) -> dict[str, Any]:
    """The turn's structuredContent as the model received it: Hermes's `{"result", "structuredContent"}` document in
    the last tool message, wherever Hermes's untrusted-result wrapping puts it."""
    tool = [m for m in agent_call["body"]["messages"] if m.get("role") == "tool"][-1]
    content = tool["content"]
    text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
    decoder = json.JSONDecoder()
    for start in (match.start() for match in re.finditer(r"\{", text)):
        try:
            document, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(document, dict) and isinstance(document.get("structuredContent"), dict):
            return document["structuredContent"]
    raise AssertionError(f"no structuredContent in the tool result the model received: {text[:500]}")


def sampled_chat(tmp_path: Path, replies: list[dict[str, Any]], max_rpm: int | None = None,
                 sampling: list[dict[str, Any]] | None = None, mount_args: tuple[str, ...] = ()
                 ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]], Path]:
    """One `hermes chat` in a fresh profile mounted with --cognition sampling (and `mount_args`; its max_rpm then set
    to `max_rpm` when given), the stub model answering sampling calls with `sampling` in order; the run, the stub
    model's logged requests, and HOME."""
    home, root = tmp_path / "home", tmp_path / "hermes-root"
    home.mkdir()
    profile_home = root / "profiles" / PROFILE
    profile_home.mkdir(parents=True)
    script = {"model": STUB_MODEL, "replies": replies, "sampling": sampling or [{"text": THOUGHT}]}
    with StubModel(script, tmp_path / "model") as model:
        (profile_home / "config.yaml").write_text(offline_config(model.base_url), encoding="utf-8")
        assert main(["mount", "--hermes-home", str(root), "--profile", PROFILE, "--discovery-timeout", "30",
                     "--cognition", "sampling", *mount_args]) == 0
        if max_rpm is not None:
            config = profile_home / "config.yaml"
            config.write_text(re.sub(r"max_rpm: \d+", f"max_rpm: {max_rpm}", config.read_text(encoding="utf-8")),
                              encoding="utf-8")
        completed = run_hermes(["-p", PROFILE, "chat", "-Q", "-q", "Who sits at the head of the table?",
                                "-t", "mafiabot", "--source", "tool"], home, root, tmp_path / "cwd")
        requests = model.requests()
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed, requests, home


def kinds(requests: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in requests if r.get("kind") == kind]


def test_a_full_turn_asks_hermes_s_model_nine_times_and_every_call_is_answered_in_the_trace(body_exe, tmp_path):
    replies = json.loads((SCRIPTS / "turn_then_quote.json").read_text())["replies"]
    completed, requests, home = sampled_chat(tmp_path, replies)
    sampled, agent = kinds(requests, "sampling"), kinds(requests, "agent")
    assert len(sampled) == CALLS_PER_FULL_TURN == 9, [r["body"]["messages"][-1] for r in sampled]
    assert len(agent) == 2 and all(not r["body"].get("stream") for r in sampled)

    trace = tool_result_trace(agent[1])
    cognition = trace["cognition"]
    assert (cognition["requested"], cognition["thinker"], cognition["fallback"]) == ("sampling", "sampling", None)
    assert trace["passes_run"] == PASS_TOTAL
    calls = cognition["calls"]
    assert [call["status"] for call in calls] == ["answered"] * CALLS_PER_FULL_TURN
    assert {call["model"] for call in calls} == {STUB_MODEL}
    details = " ".join(step["detail"] for step in trace["steps"] if step["name"].endswith("-reason"))
    for number in range(1, PASS_TOTAL + 1):
        assert re.search(rf"stub thought {number}\b", details), f"pass {number}'s thought is not in its step"
    assert f"stub thought {CALLS_PER_FULL_TURN}" in trace["output"], "the synthesis is not the output"
    assert completed.stdout.startswith("The body said: ")
    assert not (home / ".hermes").exists(), "nothing may land in the real-looking ~/.hermes"


def test_with_intent_model_hermes_s_model_names_the_intent_and_the_static_table_routes_it(body_exe, tmp_path):
    replies = json.loads((SCRIPTS / "turn_then_quote.json").read_text())["replies"]
    # The passes, then the intent question (the request after the last pass), then the synthesis
    sampling = [{"text": THOUGHT}] * PASS_TOTAL + [{"text": "Remember."}, {"text": THOUGHT}]
    _, requests, _ = sampled_chat(tmp_path, replies, sampling=sampling,
                                  mount_args=("--body-arg=--intent", "--body-arg=model"))
    sampled, agent = kinds(requests, "sampling"), kinds(requests, "agent")
    assert len(sampled) == CALLS_PER_FULL_TURN + INTENT_CALLS
    assert "You are the intent organ" in json.dumps(sampled[PASS_TOTAL]["body"]["messages"])
    trace = tool_result_trace(agent[1])
    table = dict(entry.split("->") for entry in trace["steps"][18]["detail"].removeprefix("packed schema ").split("|"))
    assert trace["route"] == {"intent": "remember", "target": table["remember"]}
    assert trace["cognition"]["intent"] == {"stated_by": "model", "said": "Remember.", "fallback": None}
    assert [call["status"] for call in trace["cognition"]["calls"]] == ["answered"] * len(sampled)


TWO_TURNS = [{"tool_call": {"name": "mcp__mafiabot__turn", "arguments": {
                 "input": f"{question}?", "uid": "hermes-op", "channel": "tavern", "server": "corleone"}}}
             for question in ("who sits at the head of the table", "and who pours the wine")
             ] + [{"text": "The body said: {last_tool_result}"}]


@pytest.mark.parametrize("max_rpm", [None, HERMES_DEFAULT_MAX_RPM], ids=["as mount sized it", "hermes default"])
def test_back_to_back_turns_are_answered_under_mount_s_block_and_cut_short_under_hermes_s_default(
        body_exe, tmp_path, max_rpm):
    _, requests, _ = sampled_chat(tmp_path, TWO_TURNS, max_rpm)
    agent = kinds(requests, "agent")
    assert len(agent) == 3
    first, second = tool_result_trace(agent[1]), tool_result_trace(agent[2])
    assert first["passes_run"] == PASS_TOTAL and second["passes_run"] < PASS_TOTAL, "the session did not drain"
    calls = first["cognition"]["calls"] + second["cognition"]["calls"]
    assert len(calls) == first["passes_run"] + second["passes_run"] + 2
    statuses = [call["status"] for call in calls]
    if max_rpm is None:
        # Two turns are within the default brake, so none of their calls may meet it.
        assert len(calls) <= DEFAULT_TURNS_PER_MINUTE * CALLS_PER_FULL_TURN
        assert statuses == ["answered"] * len(calls)
        assert len(kinds(requests, "sampling")) == len(calls)
    else:
        # Hermes's sliding minute lets max_rpm calls through; it refuses the rest, and the body says so.
        assert statuses == ["answered"] * max_rpm + ["failed"] * (len(calls) - max_rpm)
        assert len(kinds(requests, "sampling")) == max_rpm
        assert all("rate limit" in str(call["error"]) for call in calls[max_rpm:])


BUDGET_CALLS = 20
# Six turns spend it (9, 4, 3, 2 and 2 calls, then none): a short chat, within the default window of 300 s.
BUDGET_ARGS = ("--body-arg=--energy", "--body-arg=budget", "--body-arg=--budget-calls", f"--body-arg={BUDGET_CALLS}")


def test_a_mounted_body_on_a_budget_runs_fewer_passes_as_the_chat_goes_on_and_never_meets_the_rate_limit(
        body_exe, tmp_path):
    # The full first turn, then turns of at least two calls each until the budget is spent, then one that finds it so
    turns = 1 + math.ceil((BUDGET_CALLS - CALLS_PER_FULL_TURN) / 2) + 1
    replies: list[dict[str, Any]] = [
        {"tool_call": {"name": "mcp__mafiabot__turn", "arguments": {
            "input": f"question {number}?", "uid": "hermes-op", "channel": "tavern", "server": "corleone"}}}
        for number in range(1, turns + 1)] + [{"text": "The body said: {last_tool_result}"}]
    _, requests, _ = sampled_chat(tmp_path, replies, mount_args=BUDGET_ARGS)
    config = (tmp_path / "hermes-root" / "profiles" / PROFILE / "config.yaml").read_text(encoding="utf-8")
    [max_rpm] = [int(found) for found in re.findall(r"max_rpm: (\d+)", config)]
    assert max_rpm >= BUDGET_CALLS, "mount's block must let through all one session's budget allows a minute"
    traces = [tool_result_trace(agent) for agent in kinds(requests, "agent")[1:]]
    passes = [trace["passes_run"] for trace in traces]
    assert passes[0] == PASS_TOTAL and passes == sorted(passes, reverse=True) and passes[-1] == 1, passes
    calls = [call for trace in traces for call in trace["cognition"]["calls"]]
    assert [call["status"] for call in calls] == ["answered"] * len(calls), "a call met Hermes's rate limit"
    assert len(calls) == len(kinds(requests, "sampling")) == BUDGET_CALLS
    last = traces[-1]["cognition"]
    assert last["calls"] == [] and "budget" in str(last["fallback"]) and last["budget"]["calls_left"] == 0
