"""The peer a user would pick instead: the `turn` contract on the official SDK's MCPServer.

Usage: python sdk_server.py TRACE_JSON

It serves one tool, `turn(input, uid, channel, server)`, whose result has the body's shape:
`structuredContent` is a trace validated against the same model the SDK derives its
`outputSchema` from, and the text block is the output, a blank line, then the trace as
compact JSON. The trace is the canned one in TRACE_JSON (captured from the body, so the
reply has the body's size) with the session and a per-session turn counter filled in.
It runs no cycle: it is a lower bound for this peer, which can only get slower with work.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict


class Session(BaseModel):
    uid: str
    channel: str
    server: str


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    index: int
    name: str
    organ: str
    status: str
    detail: str | None = None


class Route(BaseModel):
    intent: str
    target: str


class Coherence(BaseModel):
    score: float
    drift: float


class Identity(BaseModel):
    roles: list[str] | None = None
    cards: list[str]


class Trace(BaseModel):
    session: Session
    turn: int
    energy: float
    passes_run: int
    steps: list[Step]
    route: Route
    coherence: Coherence
    output: str
    identity: Identity


def build_server(canned: dict[str, Any]) -> MCPServer:
    server = MCPServer(name="sdk-peer", instructions="Call `turn` once per user message.")
    turns: Counter[tuple[str, str, str]] = Counter()

    @server.tool(name="turn", description="One turn through the cycle (canned trace).")
    def turn(input: str, uid: str, channel: str, server: str) -> Annotated[CallToolResult, Trace]:
        key = (uid, channel, server)
        turns[key] += 1
        trace = dict(canned, session={"uid": uid, "channel": channel, "server": server},
                     turn=turns[key])
        text = trace["output"] + "\n\n" + json.dumps(trace, separators=(",", ":"))
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=trace, is_error=False)

    return server


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        canned = json.load(handle)
    build_server(canned).run("stdio")


if __name__ == "__main__":
    main()
