"""`mafiabot-harness serve`: the tools of `harness.serve.tools` over MCP stdio, on the official SDK's lowlevel server.

Invariants:
- stdout carries MCP messages only (the SDK's stdio transport points fd 1 at stderr while serving, so
  Hermes and its children never write on the wire); diagnostics go to stderr.
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

import json
import re
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from harness.hermes import TransportSettings, cancellation
from harness.resolve import ReadRoots
from harness.serve.jobs import JobRunner
from harness.serve.tools import (
    TOOLS,
    TOOLS_BY_NAME,
    ServeContext,
    Started,
    ToolFailure,
    delegation_envelope,
)

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
    """The reasons of the `notifications/cancelled` this connection received, by request id."""

    def __init__(self) -> None:
        self._reasons: dict[str, str] = {}
        self._arrived: dict[str, anyio.Event] = {}

    def _event(self, request_id: str) -> anyio.Event:
        return self._arrived.setdefault(request_id, anyio.Event())

    async def received(self, _ctx: ServerRequestContext[Any], params: types.CancelledNotificationParams) -> None:
        if params.request_id is not None:
            key = str(params.request_id)
            self._reasons[key] = params.reason or ""
            self._event(key).set()

    async def gave_up_waiting(self, request_id: Any) -> bool:
        """Whether the cancel of `request_id` says its caller timed out (waiting, bounded, for it to arrive)."""
        key = str(request_id)
        with anyio.move_on_after(CANCEL_REASON_WAIT_S):
            await self._event(key).wait()
        self._arrived.pop(key, None)
        return bool(TIMED_OUT.search(self._reasons.pop(key, "")))


def tool_list() -> list[types.Tool]:
    return [types.Tool(name=spec.name, description=spec.description, input_schema=spec.input_schema(),
                       output_schema=spec.output_schema, annotations=spec.annotations) for spec in TOOLS]


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
        except ToolFailure as exc:
            return types.CallToolResult(content=[types.TextContent(text=str(exc))], is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(document, ensure_ascii=False))],
                                    structured_content=document)

    server: Server[Any] = Server(SERVER_NAME, instructions="Delegation to Hermes sub-agents with job handles: see "
                                                           "the skills autobot, agent-dispatch and auto-pilot.",
                                 on_list_tools=list_tools, on_call_tool=call_tool)
    server.add_notification_handler("notifications/cancelled", types.CancelledNotificationParams, reasons.received)
    return server


async def _wait(ctx: ServerRequestContext[Any], context: ServeContext, started: Started,
                reasons: CancelReasons | None) -> dict[str, Any]:
    """Wait for the job within the caller's bound; `reasons` is given when a cancel of this call stops the job."""
    job, jobs = started.job, context.jobs
    job_id = job["job_id"]
    deadline = anyio.current_time() + started.wait_seconds
    waited = 0.0
    try:
        while job["state"] == "running":
            left = deadline - anyio.current_time()
            if left <= 0:
                break
            await ctx.session.report_progress(waited, None, f"{job['tool']} {job_id}: running for {waited:.0f} s")
            slice_s = min(PROGRESS_INTERVAL_S, left)
            job = await anyio.to_thread.run_sync(jobs.wait, job_id, slice_s, abandon_on_cancel=True)
            waited += slice_s
    except anyio.get_cancelled_exc_class():
        if reasons is not None:
            with anyio.CancelScope(shield=True):
                if not await reasons.gave_up_waiting(ctx.request_id):
                    jobs.stop(job_id)
        raise
    return delegation_envelope(job)


def serve(project_root: Path, transport: TransportSettings, read_roots: ReadRoots | None = None) -> list[str]:
    """Serve on stdio until stdin closes; the ids of jobs still running at the end (their runs are then
    stopped by their supervisors and settled by the next reader). `read_roots`: where a host may name files
    (default: the project root alone)."""
    jobs = JobRunner(project_root).open()
    context = ServeContext(project_root=project_root, transport=transport, jobs=jobs, read_roots=read_roots)
    server = build_server(context)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        with cancellation.shielded():  # a host's SIGTERM after closing stdin must not cut the jobs' settling
            left = jobs.shutdown(SHUTDOWN_WAIT_S)
            jobs.close()
    return left
