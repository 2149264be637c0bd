"""Starting the body the way Hermes starts it, and talking to it once.

Invariants:
- The body sees the environment Hermes gives an MCP child (tools/mcp_tool.py): only PATH, HOME,
  USER, LANG, LC_ALL, TERM, SHELL, TMPDIR and XDG_* from ours, plus the entry's `env:`. A body
  that only works with more than that fails here too, not first under Hermes.
- A probe never writes SOUL.md: `--soul off` is added last for the Ada body, so it wins over the
  entry's own `--soul` (a probe is a check, the operator's home is not its to change). Behind the
  recording relay, the body itself is probed, so a check never leaves a recording behind.
- Start-up time is measured from spawn to the `initialize` answer: what Hermes's
  mcp_discovery_timeout bounds.
- Every wait is bounded by the client's REQUEST_TIMEOUT; the body is always shut down.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.client import BodyClient
from harness.errors import BodyNotFound, ProtocolViolation
from harness.hermes_mount.entry import TOOL
from harness.hermes_mount.soul import SOUL_OFF, is_ada_body
from harness.replay.recorder import RELAY_MODULE

HERMES_PASSED_ENV = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR")
PROBE_INPUT = "mafiabot doctor: is the cycle running?"
PROBE_KEY = {"uid": "doctor", "channel": "health", "server": "mafiabot-harness"}


@dataclass(frozen=True)
class ProbeResult:
    startup_seconds: float
    protocol_version: str
    tool_names: tuple[str, ...]
    trace: dict[str, Any] | None


def hermes_child_env(entry_env: Mapping[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in HERMES_PASSED_ENV or k.startswith("XDG_")}
    env.update({str(k): str(v) for k, v in (entry_env or {}).items()})
    return env


def body_argv(command: str, args: Sequence[str]) -> list[str]:
    """The body's own command line in an entry: the relay's body when the entry records."""
    argv = [command, *args]
    if RELAY_MODULE in argv and "--" in argv:
        argv = argv[argv.index("--") + 1:]
    return argv


def probe_argv(command: str, args: Sequence[str]) -> list[str]:
    """The command line a probe runs for an entry: the body itself, never writing SOUL.md."""
    argv = body_argv(command, args)
    if is_ada_body(argv[0]):
        argv += SOUL_OFF
    return argv


def check_executable(command: str) -> Path:
    path = Path(command)
    if not path.is_absolute():
        raise BodyNotFound(f"the command {command!r} is not an absolute path; Hermes runs it from its own "
                           "working directory, so mount writes absolute paths")
    if not path.is_file():
        raise BodyNotFound(f"the body {path} does not exist (build it with `make build`, then run mount again)")
    if not os.access(path, os.X_OK):
        raise BodyNotFound(f"the body {path} is not executable")
    return path


def probe_body(argv: Sequence[str], env: Mapping[str, str], run_turn: bool) -> ProbeResult:
    """Handshake (and one turn when asked); BodyDied, BodyTimeout, RpcError... on failure."""
    started = time.monotonic()
    with BodyClient(argv, env=env) as client:
        result = client.initialize()
        startup = time.monotonic() - started
        tools = tuple(tool.get("name", "") for tool in client.list_tools())
        trace = None
        if run_turn:
            if TOOL not in tools:
                raise ProtocolViolation(f"the body does not list the tool '{TOOL}' (it lists {list(tools)})")
            trace = client.call_turn(PROBE_INPUT, **PROBE_KEY)
        return ProbeResult(startup, str(result.get("protocolVersion", "?")), tools, trace)
