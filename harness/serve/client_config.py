"""What each host agent's configuration needs to start `mafiabot-harness serve`, in that host's own format.

One entry (`ServerEntry`: the command, its arguments, the project root) rendered three ways: Claude
Code's `.mcp.json` plus the `claude mcp add` line, Gemini CLI's `settings.json`, Codex's
`config.toml`. The command is this environment's own `mafiabot-harness` (beside the running Python)
when it exists, so the host starts the same harness the operator ran; every path is absolute, since
a host starts servers from a directory of its own choosing.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLIENTS = ("claude-code", "gemini", "codex")
SERVER_KEY = "mafiabot"
# Hosts end a tool call after about 60 s by default; `serve` answers within 50 s (a handle if need be),
# so the host's own bound only needs to be no shorter than that.
TOOL_TIMEOUT_S = 60


@dataclass(frozen=True)
class ServerEntry:
    command: str
    args: tuple[str, ...]

    @classmethod
    def for_project(cls, project_root: Path) -> ServerEntry:
        beside = Path(sys.executable).with_name("mafiabot-harness")
        command = str(beside) if beside.exists() else "mafiabot-harness"
        return cls(command, ("serve", "--project-root", str(project_root)))


def render(client: str, entry: ServerEntry) -> str:
    """The configuration text for `client` (one of CLIENTS)."""
    args = list(entry.args)
    if client == "claude-code":
        server = {"type": "stdio", "command": entry.command, "args": args, "env": {}}
        document: dict[str, Any] = {"mcpServers": {SERVER_KEY: server}}
        line = shlex.join(["claude", "mcp", "add", "--scope", "project", SERVER_KEY, "--", entry.command, *args])
        return (f"# .mcp.json at the project's root (or run: {line})\n"
                f"{json.dumps(document, indent=2)}\n")
    if client == "gemini":
        document = {"mcpServers": {SERVER_KEY: {"command": entry.command, "args": args,
                                                "timeout": TOOL_TIMEOUT_S * 1000, "trust": False}}}
        return f"# .gemini/settings.json (project) or ~/.gemini/settings.json (user)\n{json.dumps(document, indent=2)}\n"
    if client == "codex":
        quoted = ", ".join(json.dumps(a) for a in args)
        return (f"# ~/.codex/config.toml\n[mcp_servers.{SERVER_KEY}]\ncommand = {json.dumps(entry.command)}\n"
                f"args = [{quoted}]\nstartup_timeout_sec = 20\ntool_timeout_sec = {TOOL_TIMEOUT_S}\n")
    raise ValueError(f"unknown client {client!r} ({', '.join(CLIENTS)})")
