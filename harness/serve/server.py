"""`mafiabot-harness serve`: the tools of `harness.serve.tools` over MCP stdio, on the official SDK's lowlevel server.

Invariants:
- stdout carries MCP messages only (`harness.serve.wire` points fd 1 at stderr while serving, so
  Hermes and its children never write on the wire); diagnostics go to stderr. Every line of stdin
  is answered or ignored as JSON-RPC says, the ones the SDK would drop included (`wire.screen`).
- A cancelling signal (SIGTERM, SIGINT, SIGHUP) ends serving at once, stdin open or not: the jobs
  are stopped and waited for as below, and the command exits 128 + the signal's number.
- An unknown tool is a protocol error (-32602, as the specification's example); bad arguments, an
  unknown job or a refused start are `isError` results with one line saying what was wrong. A
  result with structured content also carries it serialised as text, for clients that read text.
- A call that starts a job (or waits on one) waits at most its `wait_seconds`, sending a progress
  notification when the job starts and every PROGRESS_INTERVAL_S while it runs, when the client
  gave a progress token; then it answers the envelope or the job's handle.
- `notifications/cancelled` for a call that started a job stops that job (the host cancelled the
  delegation): its tree is killed and the run ledgered `cancelled`; unless its reason says the caller
  timed out (the SDK client's "timed out after N s"): a host that gave up waiting keeps the job, whose
  id came in the call's first progress notification. Cancelling a `delegation_result` only stops
  that wait; the job goes on. The call itself is never answered (the SDK drops its result).
- The tasks extension (task-augmented `tools/call`, `tasks/get`...) is not offered: the SDK (2.3.0)
  leaves tasks/* out of its method tables, so a `task` field in a call is ignored and the call answers
  as any other; job handles give a host the same leave-and-come-back.
- When stdin closes (or a cancelling signal comes) every running job of this server is stopped and
  waited for within SHUTDOWN_WAIT_S, so its runs are ledgered `cancelled` by their owner; a run that
  outlives the bound is killed by its supervisor when this process exits, and settled by the next reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from harness.errors import HarnessError
from harness.hermes import cancellation
from harness.resolve import ServeSettings
from harness.serve.jobs import RECOVERY_POLL_S, JobRunner
from harness.serve.tools import (
    CANCEL_WAIT_S,
    MAX_WAIT_S,
    TOOLS,
    TOOLS_BY_NAME,
    ServeContext,
    Started,
    ToolFailure,
    delegation_envelope,
)
from harness.serve.wire import stdio_transport
from harness.version import version

SERVER_NAME = "mafiabot-harness"
# Often enough that a host sees a long run is alive; rare enough to cost nothing beside a Hermes run.
PROGRESS_INTERVAL_S = 5.0
# A cancelled Hermes run settles in about a second (its SIGTERM grace is 1.5 s); the SDK client SIGTERMs
# 2 s after closing stdin (shielded here) and SIGKILLs 2 s later, hosts that wait longer get up to this
# bound; whatever is still running when this process dies is swept by its supervisor and settled later.
SHUTDOWN_WAIT_S = 10.0
# Tools whose call starts the job it waits on: a cancel of that call is a cancel of the job.
STARTING_TOOLS = frozenset({"autobot_delegate", "agent_dispatch", "autopilot_run"})
# The SDK cancels a call's scope before its `notifications/cancelled` reaches the notification handler;
# this bounds how long a cancelled call waits to read the reason before taking the cancel as a stop.
CANCEL_REASON_WAIT_S = 1.0
TIMED_OUT = re.compile(r"tim(ed|e) ?out", re.IGNORECASE)


class CancelReasons:
    """The reasons of the `notifications/cancelled` for this connection's job-starting calls, by request id.

    Only the ids of calls that are waiting on a job they started are kept (`expecting`), and only while
    they wait: a cancel of any other id (unknown, finished, or of a call that stops nothing) costs nothing
    that stays."""

    def __init__(self) -> None:
        self._reasons: dict[int | str | None, str] = {}
        self._arrived: dict[int | str | None, anyio.Event] = {}

    def __len__(self) -> int:
        return len(self._arrived)

    @contextlib.contextmanager
    def expecting(self, request_id: int | str | None) -> Iterator[None]:
        key = request_id
        self._arrived[key] = anyio.Event()
        try:
            yield
        finally:
            self._arrived.pop(key, None)
            self._reasons.pop(key, None)

    async def received(self, _ctx: ServerRequestContext[Any], params: types.CancelledNotificationParams) -> None:
        key = params.request_id
        arrived = self._arrived.get(key)
        if arrived is not None:
            self._reasons[key] = params.reason or ""
            arrived.set()

    async def gave_up_waiting(self, request_id: int | str | None) -> bool:
        """Whether the cancel of `request_id` says its caller timed out (waiting, bounded, for it to arrive)."""
        key = request_id
        arrived = self._arrived.get(key)
        if arrived is not None:
            with anyio.move_on_after(CANCEL_REASON_WAIT_S):
                await arrived.wait()
        return bool(TIMED_OUT.search(self._reasons.get(key, "")))


def tool_list() -> list[types.Tool]:
    return [types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema(),
                       output_schema=spec.output_schema(), annotations=spec.annotations) for spec in TOOLS]


def build_server(context: ServeContext) -> Server[Any]:
    tools = tool_list()
    reasons = CancelReasons()

    async def list_tools(_ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = TOOLS_BY_NAME.get(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        try:
            arguments = spec.parse(params.arguments)
            outcome = await anyio.to_thread.run_sync(spec.handler, context, arguments)
            if isinstance(outcome, Started):
                document = await _wait(ctx, context, outcome, reasons if spec.name in STARTING_TOOLS else None)
            else:
                document = outcome
        except (ToolFailure, HarnessError) as exc:  # HarnessError: the domain's one-line failures (a state file, a lock)
            return types.CallToolResult(content=[types.TextContent(text=str(exc))], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(document, ensure_ascii=False))],
                                    structured_content=document)

    server: Server[Any] = Server(SERVER_NAME, version=version(),
                                 instructions="Delegation to Hermes sub-agents with job handles: see the skills "
                                              "autobot, agent-dispatch and auto-pilot.",
                                 on_list_tools=list_tools, on_call_tool=call_tool)
    server.add_notification_handler("notifications/cancelled", types.CancelledNotificationParams, reasons.received)
    return server


async def _wait(ctx: ServerRequestContext[Any], context: ServeContext, started: Started,
                reasons: CancelReasons | None) -> dict[str, Any]:
    """Wait for the job within the caller's bound; `reasons` is given when a cancel of this call stops the job."""
    if reasons is None:
        return await _await_job(ctx, context.jobs, started)
    with reasons.expecting(ctx.request_id):
        try:
            return await _await_job(ctx, context.jobs, started)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                if not await reasons.gave_up_waiting(ctx.request_id):
                    context.jobs.stop(started.job["job_id"])
            raise


async def _await_job(ctx: ServerRequestContext[Any], jobs: JobRunner, started: Started) -> dict[str, Any]:
    """The job's envelope once settled within the caller's bound, else its handle; progress meanwhile.

    No thread is held while waiting: a job of this server wakes an event of this loop when it settles;
    a job of another server is read again every RECOVERY_POLL_S."""
    job = started.job
    job_id = job["job_id"]
    deadline = anyio.current_time() + started.wait_seconds
    settled = anyio.Event()
    loop = asyncio.get_running_loop()

    def wake() -> None:  # called in the job's thread
        with contextlib.suppress(RuntimeError):  # the loop is closed: no one waits any more
            loop.call_soon_threadsafe(settled.set)

    unwatch = jobs.watch(job_id, wake)
    if unwatch is None:  # settled since it was read, or another server's: as it stands now
        job = await anyio.to_thread.run_sync(jobs.get, job_id)
    began = next_progress = anyio.current_time()
    try:
        while job["state"] == "running":
            now = anyio.current_time()
            if now >= deadline:
                break
            if now >= next_progress:
                waited = now - began
                await ctx.session.report_progress(round(waited), None,
                                                  f"{job['tool']} {job_id}: running for {waited:.0f} s")
                next_progress += PROGRESS_INTERVAL_S
            with anyio.move_on_after(min(next_progress, deadline) - now if unwatch is not None
                                     else min(RECOVERY_POLL_S, deadline - now)):
                await settled.wait()
            if unwatch is None or settled.is_set():
                job = await anyio.to_thread.run_sync(jobs.get, job_id)
    finally:
        if unwatch is not None:
            unwatch()
    return delegation_envelope(job)


def serving(served: ServeSettings) -> tuple[Server[Any], JobRunner]:
    """The server of `served`, not yet running, and the runner of its jobs, which `stop_jobs` ends."""
    jobs = JobRunner(served.project_root, database=served.database)
    return build_server(ServeContext.of(served, jobs)), jobs


def stop_jobs(jobs: JobRunner) -> list[str]:
    """Stop the jobs still running once serving ended, each within SHUTDOWN_WAIT_S; the ids of those left
    (their runs are then stopped by their supervisors and settled by the next reader)."""
    signum = cancellation.requested()
    left = jobs.shutdown(SHUTDOWN_WAIT_S, "serve stopping: its stdin closed" if signum is None else
                         f"serve stopping: {cancellation.signal_name(signum)}")
    jobs.close()
    return left


def serve(served: ServeSettings) -> list[str]:
    """Serve on stdio until stdin closes or a cancelling signal comes; the ids of jobs still running at
    the end (`stop_jobs`)."""
    server, jobs = serving(served)

    async def run() -> None:
        signalled = anyio.Event()
        loop = asyncio.get_running_loop()

        def wake() -> None:  # in the signal handler, between two steps of this loop
            loop.call_soon_threadsafe(signalled.set)

        with cancellation.listening(wake):
            async with anyio.create_task_group() as group:
                async def stop_on_signal() -> None:
                    await signalled.wait()
                    group.cancel_scope.cancel()

                if cancellation.requested() is not None:
                    return
                group.start_soon(stop_on_signal)
                async with stdio_transport(drain_s=MAX_WAIT_S + CANCEL_WAIT_S) as (read, write):
                    await server.run(read, write, server.create_initialization_options())
                group.cancel_scope.cancel()

    # Shielded throughout: a signal only wakes the loop (above), which stops serving at its own pace, and
    # a host's SIGTERM after closing stdin must not cut the jobs' settling.
    with cancellation.shielded():
        try:
            anyio.run(run)
        finally:
            left = stop_jobs(jobs)
    return left
