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
