"""The body's contracts are checks, never behaviour.

`make build-unchecked` builds the body without -gnata. A transcript of valid, hostile and
turn-heavy traffic must produce the same bytes from both builds: no contract (Pre, Post,
Loop_Invariant, predicate) may have a side effect the body depends on.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support import load_corpus

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ROOT / "mafiabot_core/bin/mafiabot"
UNCHECKED = ROOT / "mafiabot_core/bin/mafiabot-unchecked"
RUN_BOUND_SECONDS = 60  # a few thousand messages take well under a second


def transcript() -> bytes:
    lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                         "params": {"protocolVersion": "2025-11-25"}}).encode()]
    lines += [case.line for case in load_corpus().CASES if not case.body]
    for number in range(600):
        lines.append(json.dumps({
            "jsonrpc": "2.0", "id": number + 1, "method": "tools/call",
            "params": {"name": "turn", "arguments": {
                "input": f"turn {number}: remember the moon? caf\u00e9 \u2603",
                "uid": f"u{number % 7}", "channel": "c", "server": "s"}}}).encode())
    return b"\n".join(lines) + b"\n"


def run(body: Path, data: bytes, tmp_path: Path) -> bytes:
    done = subprocess.run([str(body), "--no-soul"], input=data, capture_output=True,
                          timeout=RUN_BOUND_SECONDS, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


def test_the_body_without_contract_checks_answers_byte_for_byte_the_same(tmp_path):
    if not UNCHECKED.exists():
        pytest.skip("mafiabot-unchecked not built (make build-unchecked)")
    data = transcript()
    checked = run(CHECKED, data, tmp_path)
    assert checked.count(b"\n") > 600
    assert run(UNCHECKED, data, tmp_path) == checked
