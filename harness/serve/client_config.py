"""What each host agent's configuration needs to start `mafiabot-harness serve`, in that host's own format.

One entry (`ServerEntry`: the command, its arguments, the project root, and the environment it needs:
the Hermes home the operator named) rendered three ways: Claude Code's `.mcp.json`, Gemini CLI's
`settings.json`, Codex's `config.toml`. `render` gives the file's text alone (so `> .mcp.json` is a
valid file) and, apart, a one-line hint of where it goes (the caller prints it on stderr). The
command is this environment's own `mafiabot-harness` (beside the running Python)
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
    env: tuple[tuple[str, str], ...] = ()

    @classmethod
    def for_project(cls, project_root: Path, hermes_home: Path | None = None,
                    allowed: tuple[Path, ...] = ()) -> ServerEntry:
        """The entry for `project_root`, with the operator's `--allow-dir` folders; a named Hermes home goes
        into its environment, because hosts start servers with an environment of their own and the
        operator's $HERMES_HOME would not reach it."""
        beside = Path(sys.executable).with_name("mafiabot-harness")
        command = str(beside) if beside.exists() else "mafiabot-harness"
        env = (("HERMES_HOME", str(hermes_home)),) if hermes_home is not None else ()
        folders = tuple(word for folder in allowed for word in ("--allow-dir", str(folder)))
        return cls(command, ("serve", "--project-root", str(project_root), *folders), env)


@dataclass(frozen=True)
class Rendered:
    text: str
    hint: str


def render(client: str, entry: ServerEntry) -> Rendered:
    """The configuration file's text for `client` (one of CLIENTS) and where it goes."""
    args, env = list(entry.args), dict(entry.env)
    if client == "claude-code":
        server = {"type": "stdio", "command": entry.command, "args": args, "env": env}
        document: dict[str, Any] = {"mcpServers": {SERVER_KEY: server}}
        env_words = [word for name, value in entry.env for word in ("-e", f"{name}={value}")]
        words = ["claude", "mcp", "add", "--scope", "project", *env_words, SERVER_KEY, "--", entry.command, *args]
        return Rendered(f"{json.dumps(document, indent=2)}\n",
                        f".mcp.json at the project's root (or run: {shlex.join(words)})")
    if client == "gemini":
        gemini: dict[str, Any] = {"command": entry.command, "args": args, "timeout": TOOL_TIMEOUT_S * 1000,
                                  "trust": False}
        if env:
            gemini["env"] = env
        document = {"mcpServers": {SERVER_KEY: gemini}}
        return Rendered(f"{json.dumps(document, indent=2)}\n",
                        ".gemini/settings.json (project) or ~/.gemini/settings.json (user)")
    if client == "codex":
        quoted = ", ".join(json.dumps(a) for a in args)
        table = "".join(f"{json.dumps(name)} = {json.dumps(value)}\n" for name, value in entry.env)
        text = (f"[mcp_servers.{SERVER_KEY}]\ncommand = {json.dumps(entry.command)}\n"
                f"args = [{quoted}]\nstartup_timeout_sec = 20\ntool_timeout_sec = {TOOL_TIMEOUT_S}\n")
        if table:
            text += f"\n[mcp_servers.{SERVER_KEY}.env]\n{table}"
        return Rendered(text, "~/.codex/config.toml")
    raise ValueError(f"unknown client {client!r} ({', '.join(CLIENTS)})")
