"""Starting the body the way Hermes starts it, and talking to it once.

Invariants:
- The body sees the environment Hermes gives an MCP child (tools/mcp_tool.py): only PATH, HOME,
  USER, LANG, LC_ALL, TERM, SHELL, TMPDIR and XDG_* from ours, plus the entry's `env:`. A body
  that only works with more than that fails here too, not first under Hermes.
- A probe runs the entry's own command line, the recording relay included (its interpreter, its
  module, its body), from a scratch folder as Hermes runs it from its own, so what fails under
  Hermes fails here first. Three things differ, all so that a check writes nothing: `--soul off` is
  added last for the Ada body, so it wins over the entry's own `--soul` (the operator's home is not
  a check's to change), so is a `--state` into the scratch folder when the entry keeps sessions in a
  store (a probe's turn is no session of the operator's; `probe_store` alone keeps the entry's own
  store, and sends no turn), and the relay's `--out` points
  into the probe's scratch folder, which goes with its transcript. The folder the relay will
  really record into is checked by the relay's own rule (`recorded_into`, `unwritable_reason`).
- Start-up time is measured from spawn to the `initialize` answer, through the relay when there
  is one: what Hermes's mcp_discovery_timeout bounds.
- Every wait is bounded by the client's REQUEST_TIMEOUT; the body is always shut down.
- `probe_sampling` runs one turn with `--cognition sampling` added last (it wins over the entry's)
  from a client that declares `capabilities.sampling` and answers every `sampling/createMessage`
  itself with SCRIPTED_MODEL's text: the body's side of sampling is tested end to end, and no
  model is asked, so it costs nothing. Its turn is bounded by the body's own turn deadline plus
  REQUEST_TIMEOUT.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.client import REQUEST_TIMEOUT, BodyClient
from harness.errors import BodyNotFound, ProtocolViolation, RpcError
from harness.hermes_mount.cognition import COGNITION_OPTION, SAMPLING
from harness.hermes_mount.entry import STATE_OPTION, TOOL, body_argv, is_ada_body, is_relay, state_of
from harness.hermes_mount.soul import SOUL_OFF
from harness.replay.recorder import unwritable_reason

HERMES_PASSED_ENV = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR")
PROBE_INPUT = "mafiabot doctor: is the cycle running?"
PROBE_KEY = {"uid": "doctor", "channel": "health", "server": "mafiabot-harness"}
RELAY_OUT = "--out"
PROBE_TRANSCRIPT = "probe.jsonl"
PROBE_STATE = "probe-sessions.db"
METHOD_NOT_FOUND = -32601
SAMPLING_METHOD = "sampling/createMessage"
SAMPLING_CAPABILITIES: dict[str, Any] = {"sampling": {}}
# Names itself in every call of the trace it answers: what answered is plainly not a model.
SCRIPTED_MODEL = "mafiabot-doctor-script"


@dataclass(frozen=True)
class ProbeResult:
    startup_seconds: float
    protocol_version: str
    tool_names: tuple[str, ...]
    trace: dict[str, Any] | None
    turn_arguments: tuple[str, ...] = ()  # the arguments the body's `turn` takes (its inputSchema's properties)


def hermes_child_env(entry_env: Mapping[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in HERMES_PASSED_ENV or k.startswith("XDG_")}
    env.update({str(k): str(v) for k, v in (entry_env or {}).items()})
    return env


def recorded_into(command: str, args: Sequence[str]) -> Path | None:
    """The transcript an entry's relay records into; None when the entry runs the body directly."""
    argv = [command, *args]
    if not is_relay(argv):
        return None
    relay_args = argv[:argv.index("--")]
    if RELAY_OUT not in relay_args[:-1]:
        return None
    return Path(relay_args[relay_args.index(RELAY_OUT) + 1])


def record_problem(command: str, args: Sequence[str]) -> str | None:
    """Why the entry's relay could not record (so Hermes would never see the tool); None when it can."""
    target = recorded_into(command, args)
    if target is None:
        return None
    reason = unwritable_reason(target)
    return f"the relay records into {target}, but {reason}" if reason else None


def probe_argv(command: str, args: Sequence[str], scratch: Path, own_store: bool = False) -> list[str]:
    """The command line a probe runs for an entry: the entry's own, writing no SOUL.md and no recording, and
    keeping no session in the entry's store unless `own_store` (`probe_store` opens it, and holds none)."""
    argv = [command, *args]
    if is_relay(argv):
        relay_args = argv[:argv.index("--")]
        if RELAY_OUT in relay_args[:-1]:
            argv[relay_args.index(RELAY_OUT) + 1] = str(scratch / PROBE_TRANSCRIPT)
    if is_ada_body(body_argv(command, args)[0]):
        if not own_store and state_of(body_argv(command, args)) is not None:
            argv += (STATE_OPTION, str(scratch / PROBE_STATE))
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


def probe_entry(command: str, args: Sequence[str], env: Mapping[str, str], run_turn: bool) -> ProbeResult:
    """Start the entry's command as Hermes would (see the invariants) and talk to it once."""
    with tempfile.TemporaryDirectory(prefix="mafiabot-probe-") as scratch:
        # From the scratch folder, not ours: Hermes starts its servers from wherever it runs, so a
        # relay found only because our working directory is a checkout must fail here too.
        return probe_body(probe_argv(command, args, Path(scratch)), env, run_turn, cwd=Path(scratch))


def probe_store(command: str, args: Sequence[str], env: Mapping[str, str]) -> None:
    """Start the entry's body with its own --state store, as Hermes starts it, and hand it `initialize` only:
    the body opens the store at start (its Open takes and releases the write lock, and changes no session) and
    refuses one it cannot use by exiting 2, BodyDied carrying its words. The caller makes sure the file exists:
    the body would create a missing one."""
    with tempfile.TemporaryDirectory(prefix="mafiabot-probe-") as scratch:
        argv = probe_argv(command, args, Path(scratch), own_store=True)
        with BodyClient(argv, env=env, cwd=Path(scratch)) as client:
            client.initialize()


def probe_body(argv: Sequence[str], env: Mapping[str, str], run_turn: bool, cwd: Path | None = None) -> ProbeResult:
    """Handshake (and one turn when asked); BodyDied, BodyTimeout, RpcError... on failure."""
    started = time.monotonic()
    with BodyClient(argv, env=env, cwd=cwd) as client:
        result = client.initialize()
        startup = time.monotonic() - started
        listed = client.list_tools()
        tools = tuple(tool.get("name", "") for tool in listed)
        schema = next((tool.get("inputSchema") for tool in listed if tool.get("name") == TOOL), None)
        properties = schema.get("properties") if isinstance(schema, dict) else None
        arguments = tuple(properties) if isinstance(properties, dict) else ()
        trace = None
        if run_turn:
            if TOOL not in tools:
                raise ProtocolViolation(f"the body does not list the tool '{TOOL}' (it lists {list(tools)})")
            trace = client.call_turn(PROBE_INPUT, **PROBE_KEY)
        return ProbeResult(startup, str(result.get("protocolVersion", "?")), tools, trace, arguments)


@dataclass(frozen=True)
class SamplingProbe:
    requests: tuple[Mapping[str, Any], ...]  # the params of each sampling/createMessage, in order
    trace: dict[str, Any]


def scripted_thought(number: int) -> str:
    return f"{SCRIPTED_MODEL} answers request {number}"


def probe_sampling(command: str, args: Sequence[str], env: Mapping[str, str], turn_deadline_s: float) -> SamplingProbe:
    """One turn of the entry's body with sampling cognition, every model call answered by this client (no cost)."""
    requests: list[Mapping[str, Any]] = []

    def answer(method: str, params: Mapping[str, Any]) -> Mapping[str, Any]:
        if method != SAMPLING_METHOD:
            raise RpcError(METHOD_NOT_FOUND, f"the probe answers only {SAMPLING_METHOD}, not {method}")
        requests.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": scripted_thought(len(requests))},
                "model": SCRIPTED_MODEL, "stopReason": "endTurn"}

    with tempfile.TemporaryDirectory(prefix="mafiabot-probe-") as scratch:
        argv = [*probe_argv(command, args, Path(scratch)), COGNITION_OPTION, SAMPLING]
        with BodyClient(argv, env=env, cwd=scratch, on_server_request=answer,
                        request_timeout=turn_deadline_s + REQUEST_TIMEOUT) as client:
            client.initialize(capabilities=SAMPLING_CAPABILITIES)
            trace = client.call_turn(PROBE_INPUT, **PROBE_KEY)
    return SamplingProbe(tuple(requests), trace)
