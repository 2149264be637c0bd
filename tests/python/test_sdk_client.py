"""The official MCP Python SDK client (mcp 2.3.0), a client nobody on this project wrote, against
the Ada body: legacy mode, and the default auto mode that probes server/discover first.

The SDK validates every `structuredContent` against the tool's cached `outputSchema` itself
(ClientSession.validate_tool_result); the last test shows that validation really bites.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from harness.body import BodyOptions
from harness.hermes_mount.mount import COMPACT_TEXT_BLOCK

# The SDK's own patience with a silent server is 10 s; a whole session gets 30 s.
READ_TIMEOUT = 10.0
SESSION_TIMEOUT = 30.0
TOOL = json.loads((Path(__file__).resolve().parents[2] / "stubs" / "turn_tool.json").read_text())
SPEAKERS = [("vito", "#docks", "corleone"), ("michael", "#tavern", "corleone")]


def server(argv: list[str], home: Path) -> StdioServerParameters:
    return StdioServerParameters(command=argv[0], args=argv[1:], env={"HERMES_HOME": str(home), "PATH": "/usr/bin:/bin"})


async def session(params: StdioServerParameters, mode: str) -> dict[str, Any]:
    seen: dict[str, Any] = {"turns": []}
    with anyio.fail_after(SESSION_TIMEOUT):
        async with Client(params, mode=mode, read_timeout_seconds=READ_TIMEOUT) as client:
            seen["version"] = client.protocol_version
            seen["server"] = client.server_info.name if client.server_info else None
            listed = await client.list_tools()
            seen["tools"] = [tool.name for tool in listed.tools]
            seen["has_output_schema"] = all(tool.output_schema for tool in listed.tools)
            for uid, channel, srv in SPEAKERS * 2:
                result = await client.call_tool("turn", {"input": f"{uid} speaks", "uid": uid,
                                                         "channel": channel, "server": srv})
                seen["turns"].append((result.is_error, result.structured_content))
            bad = await client.call_tool("turn", {"input": "x", "uid": "", "channel": "c", "server": "s"})
            seen["refusal"] = (bad.is_error, bad.content[0].text)
    return seen


@pytest.mark.parametrize("mode, version", [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_the_sdk_client_runs_two_sessions_through_the_ada_body(body_exe, tmp_path, mode, version):
    seen = anyio.run(session, server(BodyOptions(body=body_exe).argv(), tmp_path / "home"), mode)
    assert seen["version"] == version
    assert seen["server"] == "mafiabot"
    assert seen["tools"] == ["turn"] and seen["has_output_schema"]
    turns = [(trace["session"]["uid"], trace["turn"]) for is_error, trace in seen["turns"] if not is_error]
    assert turns == [("vito", 1), ("michael", 1), ("vito", 2), ("michael", 2)]
    assert all(len(trace["steps"]) == 23 for _, trace in seen["turns"])
    assert seen["refusal"] == (True, "invalid argument 'uid': must not be empty")
    assert (tmp_path / "home" / "SOUL.md").exists()


def test_the_sdk_client_in_auto_mode_gets_the_same_traces_as_in_legacy_mode(body_exe, tmp_path):
    argv = BodyOptions(body=body_exe, no_soul=True).argv()
    legacy = anyio.run(session, server(argv, tmp_path), "legacy")
    auto = anyio.run(session, server(argv, tmp_path), "auto")
    assert legacy["turns"] == auto["turns"]


LYING_SERVER = textwrap.dedent('''
    import json, sys
    tool = json.loads(sys.argv[1])
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method, reply = message["method"], None
        if method == "initialize":
            reply = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                     "serverInfo": {"name": "liar", "version": "0"}}
        elif method == "tools/list":
            reply = {"tools": [tool]}
        elif method == "tools/call":
            reply = {"content": [{"type": "text", "text": "{}"}], "isError": False,
                     "structuredContent": {"session": {"uid": "u", "channel": "c", "server": "s"}, "turn": 0}}
        body = {"result": reply} if reply is not None else {"error": {"code": -32601, "message": "no"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **body}) + "\\n")
        sys.stdout.flush()
''')


def test_the_sdk_client_refuses_a_trace_that_breaks_the_output_schema(tmp_path):
    liar = tmp_path / "liar.py"
    liar.write_text(LYING_SERVER)

    async def call() -> str:
        params = StdioServerParameters(command=sys.executable, args=[str(liar), json.dumps(TOOL)])
        with anyio.fail_after(SESSION_TIMEOUT):
            async with Client(params, mode="legacy", read_timeout_seconds=READ_TIMEOUT) as client:
                await client.list_tools()
                try:
                    await client.call_tool("turn", {"input": "x", "uid": "u", "channel": "c", "server": "s"})
                except RuntimeError as exc:
                    return str(exc)
        return "the SDK accepted it"

    assert anyio.run(call).startswith("Invalid structured content returned by tool turn: 'energy' is a required")


def test_the_sdk_client_validates_the_compact_bodys_structured_content_and_gets_the_full_traces(body_exe, tmp_path):
    full = BodyOptions(body=body_exe, no_soul=True).argv()
    compact = BodyOptions(body=body_exe, no_soul=True, extra_args=COMPACT_TEXT_BLOCK).argv()
    assert anyio.run(session, server(compact, tmp_path), "legacy")["turns"] == \
        anyio.run(session, server(full, tmp_path), "legacy")["turns"]
