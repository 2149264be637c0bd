"""Under valgrind's memcheck the body reads and writes only memory it owns, and loses none.

Hostile lines, turns of several sessions and LRU evictions (a table of 7 sessions) go through
the dynamically linked body (`make build-dynamic`): memcheck cannot follow a statically linked
glibc's allocator. The body suppresses index checks in one loop, the escaping in Json_Text, on
the strength of a reservation; this is where that reasoning is checked on real traffic.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from support import load_corpus

# valgrind runs the body tens of times slower: outside the quick loop, in `make test`.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DYNAMIC = ROOT / "mafiabot_core/bin/mafiabot-dynamic"
# memcheck slows the body ~50x; these few hundred messages take a few seconds
MEMCHECK_BOUND_SECONDS = 120


def traffic() -> bytes:
    lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                         "params": {"protocolVersion": "2025-11-25"}}).encode()]
    lines += [json.dumps({
        "jsonrpc": "2.0", "id": number + 1, "method": "tools/call",
        "params": {"name": "turn", "arguments": {
            "input": f"turn {number}: what does \"caf\u00e9\" remember?\n\u2603",
            "uid": f"u{number % 11}", "channel": "c", "server": "s"}}}).encode() for number in range(120)]
    lines += [case.line for case in load_corpus().CASES if not case.body]
    return b"\n".join(lines) + b"\n"


def test_the_body_makes_no_invalid_access_and_loses_no_memory_under_memcheck(tmp_path):
    valgrind = shutil.which("valgrind")
    if valgrind is None or not DYNAMIC.exists():
        pytest.skip("needs valgrind and mafiabot-dynamic (make build-dynamic)")
    done = subprocess.run(
        [valgrind, "--error-exitcode=9", "--leak-check=full", "--errors-for-leak-kinds=definite",
         str(DYNAMIC), "--no-soul", "--max-sessions", "7"],
        input=traffic(), capture_output=True, timeout=MEMCHECK_BOUND_SECONDS, cwd=tmp_path)
    report = done.stderr.decode(errors="replace")
    assert done.returncode == 0, report[-3000:]
    assert "ERROR SUMMARY: 0 errors" in report
    assert done.stdout.count(b"\n") > 120


def sampled_traffic(turns: int) -> bytes:
    """A whole --cognition sampling session written ahead: every fresh session runs 8 passes, so each turn
    is answered 9 sampling responses, ids counted from 1 in the body's own space. Between them: pings, a
    tools/list answered while a request waits, an error, a result without text, a long text, a stale id and the hostile corpus."""
    def line(message: dict) -> bytes:
        return json.dumps(message).encode()
    hostile = [case.line for case in load_corpus().CASES if not case.body]
    lines = [line({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}}}})]
    request_id = 0
    for turn in range(turns):
        lines.append(line({"jsonrpc": "2.0", "id": f"turn-{turn}", "method": "tools/call", "params": {
            "name": "turn", "arguments": {"input": f"turn {turn}: who speaks \u2603?", "uid": f"u{turn}",
                                          "channel": "c", "server": "s"}}}))
        for call in range(9):
            request_id += 1
            lines.append(line({"jsonrpc": "2.0", "id": f"ping-{request_id}", "method": "ping"}))
            lines += hostile[request_id % len(hostile):][:2] if call == 4 else []
            if call == 2:
                lines.append(line({"jsonrpc": "2.0", "id": request_id + 1000, "result": {}}))
                lines.append(line({"jsonrpc": "2.0", "id": f"list-{turn}", "method": "tools/list"}))
            result = ({"role": "assistant", "model": "m", "content": {"type": "text", "text": "w\u00e9 " * 20_000}}
                      if call == 5 else {"model": "m"} if call == 6 else
                      {"role": "assistant", "model": "m", "content": {"type": "text", "text": f"thought {call}"}})
            lines.append(line({"jsonrpc": "2.0", "id": request_id, "error": {"code": -1, "message": "no"}} if call == 7
                              else {"jsonrpc": "2.0", "id": request_id, "result": result}))
    return b"\n".join(lines) + b"\n"


def test_a_sampled_session_makes_no_invalid_access_and_loses_no_memory_under_memcheck(tmp_path):
    valgrind = shutil.which("valgrind")
    if valgrind is None or not DYNAMIC.exists():
        pytest.skip("needs valgrind and mafiabot-dynamic (make build-dynamic)")
    done = subprocess.run(
        [valgrind, "--error-exitcode=9", "--leak-check=full", "--errors-for-leak-kinds=definite",
         str(DYNAMIC), "--no-soul", "--max-sessions", "7", "--cognition", "sampling"],
        input=sampled_traffic(12), capture_output=True, timeout=MEMCHECK_BOUND_SECONDS, cwd=tmp_path)
    report = done.stderr.decode(errors="replace")
    assert done.returncode == 0, report[-3000:]
    assert "ERROR SUMMARY: 0 errors" in report
    replies = [json.loads(reply) for reply in done.stdout.splitlines()]
    turns = [r for r in replies if str(r.get("id", "")).startswith("turn-")]
    assert len(turns) == 12 and all(r["result"]["structuredContent"]["cognition"]["thinker"] == "sampling"
                                    for r in turns)
    assert sum(1 for r in replies if str(r.get("id", "")).startswith("ping-")) == 12 * 9
