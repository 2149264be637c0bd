#!/usr/bin/env python3
"""The C3 pass-through stub body: a second MCP stdio server with the Ada body's `turn` contract.

It answers every message the way docs/wire-contract.md says the Ada body does (framing, input
guard, message shape, both protocol eras, error codes, ids echoed byte for byte), but its cycle
is a pass-through: each turn's trace has the Ada body's shape (23 steps in the static order, 8
passes, a route, coherence, identity) and its output echoes the input. Transport tests and
transport replays run against both bodies, so the harness is tested without the Ada build and
the two bodies are held to agree on the wire.

Invariants:
- File descriptor 1 carries only protocol messages, one `os.write` sequence per message: at
  start the real stdout is duplicated for the protocol and fd 1 is pointed at stderr, so a
  stray print (ours or a library's) can never reach the client.
- Every request gets exactly one response; notifications and responses none. Ids are echoed
  as the raw text of the line's top-level `id` member, never re-serialized.
- A line is checked by the guard before any JSON parser sees it: invalid UTF-8, raw control
  bytes and lone surrogate escapes in strings, nesting deeper than --max-depth and more than
  --max-elements elements (opening brackets plus commas, as the Ada guard counts) are refused,
  the first finding from the left deciding.
- Method dispatch goes through jsonrpcserver; the checks that come before it (shape, params,
  era, initialization) are this module's, in the Ada body's order.
- Session state is a turn counter per (uid, channel, server), at most --max-sessions of them
  (least recently used evicted): nothing crosses sessions.
- End of stdin exits 0 at once; SIGTERM exits 0, after finishing a reply being written.
- It writes no SOUL.md: `--hermes-home` and `--no-soul` are accepted for command-line parity.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import signal
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    from jsonrpcserver import Error, Success
    from jsonrpcserver.exceptions import JsonRpcError
    from jsonrpcserver.main import dispatch_to_serializable
    from jsonrpcserver.sentinels import NODATA
except ImportError:
    # An optional dependency of the harness: say how to get it rather than show a traceback.
    sys.exit("passthrough_body: jsonrpcserver is not installed; pip install 'mafiabot-harness[stub-body]'")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
UNSUPPORTED_VERSION = -32022

LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSION = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "mafiabot-passthrough", "title": "mafiabot pass-through stub body", "version": "0.1.0"}
TOOLS_TTL_MS = 3_600_000
INSTRUCTIONS = ("Call `turn` once per user message with the message as `input` and the speaker's uid, "
                "channel and server. This is the pass-through stub body: the trace has the cycle's "
                "shape and the output echoes the input.")
TOOL_FILE = Path(__file__).resolve().parent / "turn_tool.json"
KEY_PARTS = ("uid", "channel", "server")
# Optional: who chose the key (the Level1 Hermes plugin), echoed as the trace's session.origin.
KEY_ORIGIN = "key_origin"
MAX_KEY_PART_BYTES = 256
DRAIN_CHUNK = 64 * 1024

# The Ada body's static order (law L3): (name, organ) of steps 1..23.
STEPS: tuple[tuple[str, str], ...] = (
    ("scope", "C1"), ("sense", "A1+F1 via D1"),
    *[(f"{half}-{k}-{kind}", "B3" if kind == "draw" else "C2")
      for half in ("descent", "ascent") for k in range(1, 5) for kind in ("draw", "reason")],
    ("pack", "D3"), ("intend", "C3"), ("route", "D1"), ("synthesize", "C2"), ("cohere", "C2"),
)
assert len(STEPS) == 23


# -- options -------------------------------------------------------------------------------

def positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def thresholds(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None
    if len(values) != 8 or values[0] != 0.0 or any(not 0.0 <= v <= 1.0 for v in values) \
            or any(b < a for a, b in itertools.pairwise(values)):
        raise argparse.ArgumentTypeError("8 thresholds in [0, 1], the first 0, never decreasing")
    return values


def existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text} is not a readable file")
    return path


def parse_options(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="passthrough_body",
                                     description="The pass-through stub body (MCP over stdio).")
    parser.add_argument("--organs", type=existing_file, help="accepted for parity; not read")
    parser.add_argument("--thresholds", type=thresholds, help="checked like the Ada body's; not used")
    parser.add_argument("--max-line-bytes", type=positive, default=4 * 1024 * 1024)
    parser.add_argument("--max-depth", type=positive, default=64)
    parser.add_argument("--max-elements", type=positive, default=1_000_000)
    parser.add_argument("--max-sessions", type=positive, default=10_000)
    parser.add_argument("--hermes-home", help="accepted for parity; this body writes no SOUL.md")
    parser.add_argument("--no-soul", action="store_true", help="accepted for parity")
    return parser.parse_args(argv)


# -- the guard -----------------------------------------------------------------------------

# A string literal (possibly unterminated), or one structural byte outside strings.
_TOKEN = re.compile(rb'"(?:[^"\\]+|\\.)*"?|[\[{\]},]', re.DOTALL)
_CONTROL = re.compile(rb"[\x00-\x1f]")
_ESCAPE = re.compile(rb"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)


@dataclass(frozen=True)
class Refusal:
    code: int
    message: str


def guard(line: bytes, max_depth: int, max_elements: int) -> Refusal | None:
    """The first lexical finding in `line` from the left, or None when it is clean."""
    findings: list[tuple[int, Refusal]] = []
    try:
        line.decode("utf-8")
        scan_end = len(line)
    except UnicodeDecodeError as exc:
        findings.append((exc.start, Refusal(PARSE_ERROR, f"Parse error: invalid UTF-8 at byte {exc.start + 1}")))
        scan_end = exc.start
    depth = elements = 0
    for token in _TOKEN.finditer(line, 0, scan_end):
        text, start = token.group(), token.start()
        if text.startswith(b'"'):
            finding = _string_finding(text, start)
            if finding is not None:
                findings.append(finding)
                break
        elif text in (b"[", b"{"):
            depth += 1
            elements += 1
            if depth > max_depth:
                findings.append((start, Refusal(INVALID_REQUEST, f"Invalid Request: nested deeper than {max_depth} "
                                                                 f"levels (--max-depth) at byte {start + 1}")))
                break
        elif text == b",":
            elements += 1
        else:
            depth -= 1
        if elements > max_elements:
            findings.append((start, Refusal(INVALID_REQUEST, f"Invalid Request: more than {max_elements} "
                                                             f"elements (--max-elements) at byte {start + 1}")))
            break
    return min(findings, key=lambda f: f[0])[1] if findings else None


def _string_finding(literal: bytes, start: int) -> tuple[int, Refusal] | None:
    control = _CONTROL.search(literal)
    if control is not None:
        at = start + control.start()
        return at, Refusal(PARSE_ERROR, f"Parse error: raw control character in a string at byte {at + 1}")
    pending_high: int | None = None  # where a high-surrogate escape waits for its low half
    pending_end = -1
    for escape in _ESCAPE.finditer(literal):
        body = escape.group(1)
        # A \u cut short by the end of the line is the parser's to report, not a surrogate
        unit = int(body[1:], 16) if body.startswith(b"u") and len(body) == 5 else -1
        at = start + escape.start()
        is_low = 0xDC00 <= unit <= 0xDFFF
        if pending_high is not None:
            if is_low and escape.start() == pending_end:
                pending_high = None
                continue
            return pending_high, _lone_surrogate(pending_high)
        if 0xD800 <= unit <= 0xDBFF:
            pending_high, pending_end = at, escape.end()
        elif is_low:
            return at, _lone_surrogate(at)
    if pending_high is not None:
        return pending_high, _lone_surrogate(pending_high)
    return None


def _lone_surrogate(at: int) -> Refusal:
    return Refusal(PARSE_ERROR, f"Parse error: lone UTF-16 surrogate escape at byte {at + 1}")


# -- parsing -------------------------------------------------------------------------------

def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse(text: str) -> Any:
    return json.loads(text, parse_constant=_refuse_constant)


def raw_member(text: str, name: str) -> str | None:
    """The raw text of the last top-level member `name` of a JSON object text (already parsed once)."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")
    index = ws.match(text, ws.match(text).end() + 1).end()  # past the opening brace
    found = None
    while index < len(text) and text[index] != "}":
        key, index = json.decoder.scanstring(text, index + 1)
        index = ws.match(text, index).end() + 1  # the colon
        index = ws.match(text, index).end()
        _, end = decoder.raw_decode(text, index)
        if key == name:
            found = text[index:end]
        index = ws.match(text, end).end()
        if text[index] == ",":
            index = ws.match(text, index + 1).end()
    return found


# -- the server ----------------------------------------------------------------------------

@dataclass
class State:
    max_sessions: int
    tool: dict[str, Any]
    initialized: bool = False
    turns: OrderedDict[tuple[str, str, str], int] = field(default_factory=OrderedDict)

    def next_turn(self, key: tuple[str, str, str]) -> int:
        number = self.turns.pop(key, 0) + 1
        self.turns[key] = number
        if len(self.turns) > self.max_sessions:
            evicted, _ = self.turns.popitem(last=False)
            print(f"passthrough body: evicted session {'/'.join(evicted)}", file=sys.stderr)
        return number


@dataclass(frozen=True)
class Era:
    modern: bool


def era_of(params: dict[str, Any]) -> Era:
    """The era of a request; JsonRpcError for a bad modern `_meta` (checked before anything else)."""
    meta = params.get("_meta")
    if not (isinstance(meta, dict) and VERSION_KEY in meta):
        return Era(modern=False)
    asked = meta[VERSION_KEY]
    if asked != MODERN_VERSION:
        raise JsonRpcError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                           {"supported": [MODERN_VERSION], "requested": asked if isinstance(asked, str) else None})
    if not isinstance(meta.get(CAPABILITIES_KEY), dict):
        raise JsonRpcError(INVALID_PARAMS, f"Invalid params: _meta needs {CAPABILITIES_KEY} (an object)")
    return Era(modern=True)


def mcp_method(allowed_before_initialize: bool = False, always_modern: bool = False):
    """Wrap a handler `(state, era, params) -> dict` as a jsonrpcserver method with the era checks.

    `always_modern`: the result ends like a modern one in either era (server/discover's does).
    """
    def wrap(handler):
        def method(state: State, /, **params: Any):
            era = era_of(params)
            if not era.modern and not state.initialized and not allowed_before_initialize:
                return Error(INVALID_REQUEST, "Invalid Request: not initialized (send initialize first, "
                                              f"or use protocol version {MODERN_VERSION} in _meta)")
            result = handler(state, era, params)
            if era.modern or always_modern:
                result.update({"resultType": "complete", "_meta": {SERVER_INFO_KEY: dict(SERVER_INFO)}})
            return Success(result)
        return method
    return wrap


CAPABILITIES = {"tools": {"listChanged": False}}


@mcp_method(allowed_before_initialize=True)
def initialize(state: State, era: Era, params: dict[str, Any]) -> dict[str, Any]:
    if state.initialized:
        raise JsonRpcError(INVALID_REQUEST, "Invalid Request: already initialized")
    asked = params.get("protocolVersion")
    if not isinstance(asked, str) or not asked:
        raise JsonRpcError(INVALID_PARAMS, "Invalid params: initialize needs protocolVersion (a string)")
    state.initialized = True
    return {"protocolVersion": asked if asked in LEGACY_VERSIONS else LEGACY_VERSIONS[-1],
            "capabilities": CAPABILITIES, "serverInfo": dict(SERVER_INFO), "instructions": INSTRUCTIONS}


@mcp_method(allowed_before_initialize=True)
def ping(state: State, era: Era, params: dict[str, Any]) -> dict[str, Any]:
    return {}


@mcp_method(allowed_before_initialize=True, always_modern=True)
def discover(state: State, era: Era, params: dict[str, Any]) -> dict[str, Any]:
    return {"supportedVersions": [MODERN_VERSION], "capabilities": CAPABILITIES, "instructions": INSTRUCTIONS,
            "ttlMs": TOOLS_TTL_MS, "cacheScope": "public"}


@mcp_method()
def tools_list(state: State, era: Era, params: dict[str, Any]) -> dict[str, Any]:
    if "cursor" in params:
        raise JsonRpcError(INVALID_PARAMS, "Invalid params: unknown cursor (the tool list has a single page)")
    result: dict[str, Any] = {"tools": [state.tool]}
    if era.modern:
        result.update({"ttlMs": TOOLS_TTL_MS, "cacheScope": "public"})
    return result


@mcp_method()
def tools_call(state: State, era: Era, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise JsonRpcError(INVALID_PARAMS, "Invalid params: tools/call needs name (a string)")
    if name != state.tool["name"]:
        raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    arguments = params.get("arguments", {})
    problem = argument_problem(arguments)
    if problem is not None:
        return {"content": [{"type": "text", "text": problem}], "isError": True}
    key = (arguments["uid"], arguments["channel"], arguments["server"])
    trace = passthrough_trace(arguments["input"], key, state.next_turn(key), arguments.get(KEY_ORIGIN))
    text = trace["output"] + "\n\n" + json.dumps(trace, separators=(",", ":"), ensure_ascii=False)
    return {"content": [{"type": "text", "text": text}], "structuredContent": trace, "isError": False}


def argument_problem(arguments: Any) -> str | None:
    """The Ada body's refusal text for bad `turn` arguments, in its order; None when they are good."""
    if not isinstance(arguments, dict):
        return "invalid arguments: expected an object with input, uid, channel and server"
    for unknown in arguments:
        if unknown not in ("input", *KEY_PARTS, KEY_ORIGIN):
            return f"invalid argument '{unknown}': unknown (the tool takes input, uid, channel and server)"
    for name in ("input", *KEY_PARTS, KEY_ORIGIN):
        if name not in arguments:
            if name == KEY_ORIGIN:
                continue
            return f"invalid argument '{name}': missing (a string is required)"
        value = arguments[name]
        if not isinstance(value, str):
            return f"invalid argument '{name}': expected a string"
        if name == "input":
            continue
        if not value:
            return f"invalid argument '{name}': must not be empty"
        if len(value.encode("utf-8")) > MAX_KEY_PART_BYTES:
            return f"invalid argument '{name}': longer than {MAX_KEY_PART_BYTES} bytes"
        if any(ch < " " or ch == "\x7f" for ch in value):
            return f"invalid argument '{name}': control characters are not allowed"
    return None


def passthrough_trace(text: str, key: tuple[str, str, str], turn: int, origin: str | None = None) -> dict[str, Any]:
    """The trace of one pass-through turn: the cycle's shape, every step ran, the input echoed."""
    uid, channel, server = key
    session = {"uid": uid, "channel": channel, "server": server} | ({"origin": origin} if origin else {})
    details = {1: f"session {uid}/{channel}/{server}, turn {turn}", 20: "intent chat (pass-through)",
               21: "chat -> conversation.reply (pass-through)", 22: "output echoes the input"}
    steps = [{"index": index, "name": name, "organ": organ, "status": "ran",
              "detail": details.get(index, "pass-through")}
             for index, (name, organ) in enumerate(STEPS, start=1)]
    return {"session": session, "turn": turn, "energy": 1.0,
            "passes_run": 8, "steps": steps, "route": {"intent": "chat", "target": "conversation.reply"},
            "coherence": {"score": 1.0, "drift": 0.0}, "output": text,
            "identity": {"roles": ["sun", "moon", "rising"],
                         "cards": ["The Fool", "The Magician", "The High Priestess"]}}


def accept_notification(state: State, /, *args: Any, **params: Any):
    return Success(None)


METHODS = {
    "initialize": initialize, "ping": ping, "server/discover": discover,
    "tools/list": tools_list, "tools/call": tools_call,
    "notifications/initialized": accept_notification, "notifications/cancelled": accept_notification,
}


def handle(state: State, text: str) -> tuple[str, dict[str, Any]] | None:
    """The reply to one guarded line: (raw id, response body) or None for no reply at all."""
    try:
        message = parse(text)
    except (ValueError, RecursionError) as exc:
        return "null", _error(PARSE_ERROR, f"Parse error: {exc}")
    if isinstance(message, list):
        return "null", _error(INVALID_REQUEST, "Invalid Request: batches are not supported "
                                               "(MCP removed JSON-RPC batching in 2025-06-18)")
    if not isinstance(message, dict):
        return "null", _error(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
    has_id, method = "id" in message, message.get("method")
    if "method" not in message and ("result" in message or "error" in message):
        return None  # a response, whatever its id: never answered (two answering peers would loop)
    if has_id and (isinstance(message["id"], bool) or not isinstance(message["id"], (int, float, str))):
        return "null", _error(INVALID_REQUEST, "Invalid Request: id must be a string or a number")
    raw_id = raw_member(text, "id") if has_id else "null"
    if message.get("jsonrpc") != "2.0":
        return raw_id, _error(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
    if not isinstance(method, str):
        return raw_id, _error(INVALID_REQUEST, "Invalid Request: method must be a string")
    if not has_id:
        if method in METHODS:
            _dispatch(state, message)
        return None
    if not isinstance(message.get("params", {}), dict):
        return raw_id, _error(INVALID_PARAMS, "Invalid params: params must be an object")
    if method not in METHODS or method.startswith("notifications/"):
        return raw_id, _error(-32601, f"Method not found: {method}")
    response = _dispatch(state, message)
    return raw_id, {"result": response["result"]} if "result" in response else {"error": response["error"]}


def _dispatch(state: State, message: dict[str, Any]) -> Any:
    """jsonrpcserver's answer to a message this module has already parsed and shape-checked."""
    return dispatch_to_serializable("", METHODS, context=state, deserializer=lambda _: message,
                                    validator=lambda _: None)


def _error(code: int, message: str, data: Any = NODATA) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not NODATA:
        error["data"] = data
    return {"error": error}


def encode(raw_id: str, body: dict[str, Any]) -> bytes:
    (member, value), = body.items()
    payload = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return f'{{"jsonrpc":"2.0","id":{raw_id},"{member}":{payload}}}\n'.encode()


class Output:
    """The protocol stream: whole messages only, and SIGTERM waits for the one being written."""

    def __init__(self) -> None:
        self.fd = os.dup(1)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        self.writing = False
        self.stop_requested = False
        signal.signal(signal.SIGTERM, self._on_term)

    def _on_term(self, signum: int, frame: Any) -> None:
        if self.writing:
            self.stop_requested = True
        else:
            raise SystemExit(0)

    def send(self, data: bytes) -> None:
        self.writing = True
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]
        self.writing = False
        if self.stop_requested:
            raise SystemExit(0)


def read_lines(stream: Any, max_bytes: int):
    """Lines without LF (one trailing CR removed); an oversized line yields its length as an int."""
    while True:
        line = stream.readline(max_bytes + 2)
        if not line:
            return
        if not line.endswith(b"\n") and len(line) > max_bytes:
            length = len(line)
            while not line.endswith(b"\n"):
                line = stream.readline(DRAIN_CHUNK)
                if not line:
                    break
                length += len(line)
            yield length - (1 if line.endswith(b"\n") else 0)
            continue
        line = line[:-1] if line.endswith(b"\n") else line
        line = line[:-1] if line.endswith(b"\r") else line
        if len(line) > max_bytes:
            yield len(line)
        else:
            yield line


def serve(options: argparse.Namespace) -> int:
    tool = json.loads(TOOL_FILE.read_text(encoding="utf-8"))
    state = State(max_sessions=options.max_sessions, tool=tool)
    output = Output()
    for line in read_lines(sys.stdin.buffer, options.max_line_bytes):
        if isinstance(line, int):
            output.send(encode("null", _error(INVALID_REQUEST, f"Invalid Request: line of {line} bytes exceeds "
                                                               f"the limit of {options.max_line_bytes} bytes "
                                                               "(--max-line-bytes)")))
            continue
        if not line.strip(b" \t\r"):
            continue
        refusal = guard(line, options.max_depth, options.max_elements)
        if refusal is not None:
            output.send(encode("null", _error(refusal.code, refusal.message)))
            continue
        reply = handle(state, line.decode("utf-8"))
        if reply is not None:
            output.send(encode(*reply))
    return 0


def main(argv: list[str] | None = None) -> int:
    options = parse_options(argv)
    try:
        return serve(options)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
