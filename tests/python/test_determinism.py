"""Same fixture, same message sequence: byte-identical stdout from two fresh bodies."""

from __future__ import annotations

from harness.client import encode_message, modern_params
from support import turn_arguments


def transcript() -> bytes:
    def request(n, method, params=None):
        message = {"jsonrpc": "2.0", "id": n, "method": method}
        if params is not None:
            message["params"] = params
        return encode_message(message)

    lines = [
        request(0, "ping"),
        request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "det", "version": "1"}}),
        encode_message({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        request(2, "tools/list"),
        request(3, "server/discover", modern_params()),
        b"{broken\n",
        b"\xff\n",
        b"[" * 1000 + b"\n",
    ]
    rooms = [("ana", "#a", "s1"), ("bob", "#a", "s1"), ("ana", "#b", "s1"), ("demo-tired", "general", "demo")]
    n = 10
    for round_number in range(6):
        for uid, channel, server in rooms:
            text = f"round {round_number}: remember the {uid} clue? é☃ \"quoted\""
            lines.append(request(n, "tools/call", {"name": "turn",
                                                   "arguments": turn_arguments(text, uid, channel, server)}))
            n += 1
    lines.append(request(n, "tools/call", {"name": "turn", "arguments": {"input": 1}}))
    lines.append(request("last", "no/such"))
    return b"".join(lines)


def run(spawn_body, hermes_home) -> bytes:
    client = spawn_body(hermes_home=hermes_home)
    client.send_raw(transcript())
    client.close_stdin()
    out = client.read_until_eof()
    assert client.wait_exit(2.0) == 0
    return out


def test_one_transcript_through_two_fresh_bodies_gives_identical_bytes(spawn_body, tmp_path):
    first = run(spawn_body, tmp_path / "hermes")
    second = run(spawn_body, tmp_path / "hermes")
    # 4 setup requests, 3 bad lines, 24 turns, 2 failing requests: each answered exactly once
    assert first.count(b"\n") == 4 + 3 + 24 + 2
    assert first == second
