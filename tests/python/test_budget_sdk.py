"""--energy budget through the official MCP Python SDK client, in real time (docs/energy.md).

A deterministic `sampling_callback` answers every `sampling/createMessage` and notes when it came and for which
session's turn. With `--budget-calls 20 --budget-window-s 5`: back-to-back turns of one session never make more than
20 calls in any 5 s, their passes fall as the budget drains (to a turn that asks nothing and says so), another
session's turns are unaffected (L1), a restart on the same `--state` keeps the budget spent, and once the window has
passed the session runs all eight passes again. The passes expected are computed here, from the derivation in
docs/energy.md, not copied from the body.

Real time is the point of this test (the Ada tests turn an injected clock): the one wait is the window itself,
bounded, and nothing else sleeps.
"""

from __future__ import annotations

import re
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp import types as mcp_types

from harness.body import BodyOptions
from sampling_support import SAMPLING_ARGS
from support import REPO

CALLS = 20
WINDOW_S = 5.0
SESSION_TIMEOUT = 30.0
READ_TIMEOUT = 10.0
FULL_TURN = 9
RECOVERY_MARGIN_S = 0.5
# A turn's calls are logged when it ends, a little after the callback saw its last call
# A turn of P passes asks P + 1 calls: one a pass and the synthesis (docs/energy.md, "The calls a turn plans")


def expected_passes(calls_left: int) -> int:
    """The derivation of docs/energy.md, written again: E = floor(1000 * left / N); pass K > 1 runs iff
    E >= ceil(1000 * (K + 1) / 9); a session that cannot pay for two calls runs one pass and asks nothing."""
    energy = 1000 * calls_left // CALLS
    passes = 1
    for pass_number in range(2, 9):
        if energy >= -(-1000 * (pass_number + 1) // FULL_TURN):
            passes = pass_number
    return min(passes, max(calls_left - 1, 1))


class TimedModel:
    """Answers each request at once, noting the monotonic time and the session whose turn asked."""

    def __init__(self) -> None:
        self.session = ""
        self.calls: list[tuple[str, float]] = []

    async def __call__(self, context: Any, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        self.calls.append((self.session, time.monotonic()))
        return mcp_types.CreateMessageResult(role="assistant", model="sdk-timed",
                                             content=mcp_types.TextContent(type="text", text="a thought"),
                                             stop_reason="endTurn")


def server(body_exe: Path, home: Path, state: Path, window_s: int = int(WINDOW_S),
           *extra: str) -> StdioServerParameters:
    """The sampling body on a budget of CALLS calls in `window_s`, its sessions in `state`."""
    argv = BodyOptions(body=body_exe, no_soul=True, extra_args=(
        *SAMPLING_ARGS, "--energy", "budget", "--budget-calls", str(CALLS), "--budget-window-s", str(window_s),
        "--state", str(state), *extra)).argv()
    return StdioServerParameters(command=argv[0], args=argv[1:], env={"HERMES_HOME": str(home), "PATH": "/usr/bin:/bin"})


def arguments(uid: str) -> dict[str, str]:
    return {"input": "who sits at the head of the table?", "uid": uid, "channel": "#docks", "server": "corleone"}


async def run_turns(params: StdioServerParameters, model: TimedModel, uids: list[str]) -> list[dict[str, Any]]:
    traces = []
    with anyio.fail_after(SESSION_TIMEOUT):
        async with Client(params, mode="legacy", read_timeout_seconds=READ_TIMEOUT,
                          sampling_callback=model) as client:
            for uid in uids:
                model.session = uid
                result = await client.call_tool("turn", arguments(uid))
                assert not result.is_error
                traces.append(result.structured_content)
    return traces


def most_in_any_window(times: list[float]) -> int:
    """The most calls any window of WINDOW_S seconds holds (each window starting at a call)."""
    times = sorted(times)
    return max((sum(1 for other in times if start <= other < start + WINDOW_S) for start in times), default=0)


def test_a_session_s_budget_drains_its_passes_holds_across_a_restart_and_recovers(body_exe, tmp_path):
    state = tmp_path / "sessions.db"
    model = TimedModel()
    params = server(body_exe, tmp_path, state)

    drained = anyio.run(run_turns, params, model, ["vito"] * 6 + ["tom"])
    vito, tom = drained[:-1], drained[-1]
    left = CALLS
    for trace in vito:
        budget = trace["cognition"]["budget"]
        assert budget["calls_limit"] == CALLS and budget["window_s"] == WINDOW_S
        assert budget["calls_left"] == left
        assert trace["passes_run"] == expected_passes(left)
        assert budget["turn_calls"] == len(trace["cognition"]["calls"])
        left -= budget["turn_calls"]
    passes = [trace["passes_run"] for trace in vito]
    assert passes[0] == 8 and passes == sorted(passes, reverse=True) and passes[-1] == 1
    spent = vito[-1]["cognition"]
    assert spent["calls"] == [] and spent["budget"]["calls_left"] < 2
    assert spent["fallback"] and "budget" in spent["fallback"]
    assert "spent: no model call" in vito[-1]["steps"][1]["detail"]
    assert tom["passes_run"] == 8 and tom["cognition"]["budget"]["calls_used"] == 0

    # A restart on the same store, within the window: the budget is still spent
    restarted = anyio.run(run_turns, params, model, ["vito"])[0]
    assert restarted["cognition"]["budget"]["calls_used"] > 0
    assert restarted["passes_run"] < 8

    vito_times = [at for session, at in model.calls if session == "vito"]
    # The window's own wait, bounded by it: every slot of vito's frees WINDOW_S after its turn ended
    time.sleep(max(0.0, max(vito_times) + WINDOW_S + RECOVERY_MARGIN_S - time.monotonic()))
    recovered = anyio.run(run_turns, params, model, ["vito"])[0]
    assert recovered["passes_run"] == 8 and recovered["cognition"]["budget"]["calls_used"] == 0

    vito_times = [at for session, at in model.calls if session == "vito"]
    assert most_in_any_window(vito_times) <= CALLS
    assert len(vito_times) > CALLS


def recipe_statements() -> list[str]:
    """The SQL of docs/energy.md's recipe to read and reset one session's budget, as the page gives it."""
    page = (REPO / "docs" / "energy.md").read_text(encoding="utf-8")
    block = page.split("## Reading and resetting one session's budget", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return re.findall(r'sqlite3 "\$STORE" "(.*?)"', block, re.DOTALL)


def test_the_operator_s_recipe_reads_and_resets_one_session_s_budget_and_eviction_takes_its_rows(body_exe, tmp_path):
    window_s = 300  # the recipe's window, so that nothing ages out while the test runs
    state = tmp_path / "sessions.db"
    model = TimedModel()
    params = server(body_exe, tmp_path, state, window_s, "--max-sessions", "1")
    read_window, read_one, reset = recipe_statements()

    async def scenario() -> list[dict[str, Any]]:
        traces = []
        with anyio.fail_after(SESSION_TIMEOUT):
            async with Client(params, mode="legacy", read_timeout_seconds=READ_TIMEOUT,
                              sampling_callback=model) as client:
                async def turn(uid: str) -> None:
                    result = await client.call_tool("turn", arguments(uid))
                    assert not result.is_error
                    traces.append(result.structured_content)

                await turn("vito")
                await turn("vito")
                with closing(sqlite3.connect(state)) as db:
                    spent = sum(trace["cognition"]["budget"]["turn_calls"] for trace in traces)
                    assert db.execute(read_window).fetchall() == [("vito/#docks/corleone", spent)]
                    assert [calls for _, calls, _ in db.execute(read_one)] == [
                        trace["cognition"]["budget"]["turn_calls"] for trace in traces]
                    db.execute(reset)
                    db.commit()
                await turn("vito")  # the body reads the store another process wrote: the budget is whole again
                await turn("tom")  # past --max-sessions 1: vito's record is evicted, and its budget with it
                with closing(sqlite3.connect(state)) as db:
                    assert [session for session, _ in db.execute(read_window)] == ["tom/#docks/corleone"]
        return traces

    first, drained, reset_turn, tom = anyio.run(scenario)
    assert first["passes_run"] == 8 and drained["passes_run"] < 8
    assert reset_turn["passes_run"] == 8 and reset_turn["cognition"]["budget"]["calls_used"] == 0
    assert tom["passes_run"] == 8


class WindowCrossingModel(TimedModel):
    """Answers at once, but for the first request of the turn `slow_turn` (1 = the first turn of the body): that
    one it answers only once `wait_s` have passed since the last request before it."""

    def __init__(self, slow_turn: int, wait_s: float) -> None:
        super().__init__()
        self.slow_turn, self.wait_s, self.turn = slow_turn, wait_s, 0
        self.first_of_turn = True

    async def __call__(self, context: Any, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        if self.turn == self.slow_turn and self.first_of_turn and self.calls:
            await anyio.sleep(max(0.0, self.calls[-1][1] + self.wait_s - time.monotonic()))
        self.first_of_turn = False
        return await super().__call__(context, params)


def test_a_turn_in_rounds_plans_every_round_as_its_first_even_when_a_slot_frees_between_them(body_exe, tmp_path):
    """The 2026-07-28 form (the SDK's default mode): the body runs a sampled turn once per round of the client's.
    A slot that frees between two rounds of one turn must not change the passes its later rounds plan, or their
    replayed answers would shift by a call (docs/energy.md, "The trace")."""
    window_s = 3
    model = WindowCrossingModel(slow_turn=2, wait_s=window_s + RECOVERY_MARGIN_S)
    params = server(body_exe, tmp_path, tmp_path / "sessions.db", window_s)

    async def two_turns() -> list[dict[str, Any]]:
        traces = []
        with anyio.fail_after(SESSION_TIMEOUT):
            async with Client(params, read_timeout_seconds=READ_TIMEOUT, sampling_callback=model) as client:
                for turn in (1, 2):
                    model.turn, model.first_of_turn = turn, True
                    result = await client.call_tool("turn", arguments("vito"))
                    assert not result.is_error
                    traces.append(result.structured_content)
        return traces

    first, crossing = anyio.run(two_turns)
    assert first["passes_run"] == 8
    budget = crossing["cognition"]["budget"]
    assert budget["calls_used"] == 9, "the turn's first round must have sensed the first turn's calls"
    assert crossing["passes_run"] == expected_passes(CALLS - 9)
    assert budget["turn_calls"] == len(crossing["cognition"]["calls"]) == crossing["passes_run"] + 1
    assert len(model.calls) == 9 + crossing["passes_run"] + 1
