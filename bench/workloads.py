"""What the bench sends: request lines and the bench's organ fixture.

Invariants:
- Every request is one compact JSON line, LF included, encoded before any clock starts.
- The bench fixture is the shipped `stubs/organs/default.json` plus three pinned sessions
  whose energy never changes, so a session serves the same number of passes on every turn:
  `PINNED[8]` runs 8 passes, `PINNED[4]` 4 and `PINNED[1]` 1 (thresholds 0, 1/8, ..., 7/8).
- Turn inputs are fixed strings: the reply size depends only on the session's history.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FIXTURE = ROOT / "stubs" / "organs" / "default.json"

# passes -> (session key, pinned energy); energy e runs every pass whose threshold is <= e
PINNED: dict[int, tuple[tuple[str, str, str], float]] = {
    8: (("bench-full", "bench", "bench"), 1.0),
    4: (("bench-half", "bench", "bench"), 0.4),
    1: (("bench-empty", "bench", "bench"), 0.0),
}
TURN_INPUT = "what is the shape of the moon tonight?"


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def initialize_line(request_id: int = 0) -> bytes:
    return line({"jsonrpc": "2.0", "id": request_id, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "mafiabot-bench", "version": "1"}}})


def initialized_line() -> bytes:
    return line({"jsonrpc": "2.0", "method": "notifications/initialized"})


def ping_line(request_id: int) -> bytes:
    return line({"jsonrpc": "2.0", "id": request_id, "method": "ping"})


def turn_line(request_id: int, key: tuple[str, str, str], text: str = TURN_INPUT) -> bytes:
    uid, channel, server = key
    return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                 "params": {"name": "turn", "arguments": {"input": text, "uid": uid,
                                                          "channel": channel, "server": server}}})


def turn_lines(count: int, key: tuple[str, str, str], first_id: int = 1) -> list[bytes]:
    return [turn_line(first_id + n, key) for n in range(count)]


def fresh_session_lines(count: int, prefix: str, first_id: int = 1) -> list[bytes]:
    """`count` turns, each opening a new session (`prefix`-N, bench, bench)."""
    return [turn_line(first_id + n, (f"{prefix}-{n}", "bench", "bench")) for n in range(count)]


def write_bench_fixture(directory: Path) -> Path:
    """The shipped fixture with the PINNED sessions added; returns its path."""
    fixture = json.loads(DEFAULT_FIXTURE.read_text(encoding="utf-8"))
    pins = fixture["drive_box"].setdefault("pinned", [])
    for (uid, channel, server), energy in PINNED.values():
        pins.append({"uid": uid, "channel": channel, "server": server, "energy": energy})
    path = directory / "bench-organs.json"
    path.write_text(json.dumps(fixture, indent=1), encoding="utf-8")
    return path
