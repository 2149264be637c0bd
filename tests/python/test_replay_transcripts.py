"""Every transcript in tests/replays/ passes against every body its header names.

Transport transcripts name both bodies and so run against the Ada body and the pass-through
stub body alike; transcripts about the cycle's semantics (laws, recorded traces) name only ada.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.body import find_body
from harness.errors import BodyNotFound
from harness.replay.bodies import KNOWN_BODIES, body_argv
from harness.replay.matching import render_diff
from harness.replay.runner import run_transcript
from harness.replay.transcript import Send, load_transcript

REPLAYS = Path(__file__).resolve().parents[1] / "replays"
TRANSCRIPTS = sorted(REPLAYS.glob("*.jsonl"))
PAIRS = [(path, kind) for path in TRANSCRIPTS for kind in load_transcript(path).header.bodies]


def body_for(kind: str) -> list[str]:
    if kind == "ada":
        try:
            find_body()
        except BodyNotFound as exc:
            pytest.skip(f"Ada body not built: {exc}")
    return body_argv(kind)


@pytest.mark.parametrize("path, kind", PAIRS, ids=[f"{p.stem}-{k}" for p, k in PAIRS])
def test_the_transcript_passes_against_the_body_it_names(path, kind):
    outcome = run_transcript(load_transcript(path), body_for(kind), kind)
    failure = outcome.failure
    assert outcome.status == "passed", f"line {failure.line}: {failure.summary}\n{failure.detail}" if failure else ""


def test_there_are_at_least_20_transcripts_and_each_names_the_bodies_it_is_for():
    assert len(TRANSCRIPTS) >= 20
    for path in TRANSCRIPTS:
        header = load_transcript(path).header
        assert header.title, path.name
        assert header.bodies and set(header.bodies) <= set(KNOWN_BODIES), path.name


def test_most_transcripts_are_about_transport_and_run_against_both_bodies():
    both = [p for p in TRANSCRIPTS if set(load_transcript(p).header.bodies) == set(KNOWN_BODIES)]
    assert len(both) >= 20


def test_the_transcripts_cover_both_protocol_eras():
    def sends(path: Path) -> list[dict]:
        return [s.message for _, s in load_transcript(path).steps if isinstance(s, Send) and isinstance(s.message, dict)]
    methods = {m.get("method") for p in TRANSCRIPTS for m in sends(p)}
    modern = [m for p in TRANSCRIPTS for m in sends(p)
              if isinstance(m.get("params"), dict) and "_meta" in m["params"]]
    assert {"initialize", "server/discover", "tools/list", "tools/call"} <= methods
    assert modern


def test_a_transcript_that_expects_the_wrong_thing_fails_with_a_diff_naming_the_line(tmp_path):
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text('{"send": {"jsonrpc": "2.0", "id": 1, "method": "no/such"}}\n'
                     '{"expect": {"id": 1, "error": {"code": -32600}}}\n', encoding="utf-8")
    outcome = run_transcript(load_transcript(wrong), body_for("passthrough"), "passthrough")
    assert outcome.status == "failed"
    assert outcome.failure.line == 2
    assert "$.error.code" in outcome.failure.summary
    assert "-    \"code\": -32600" in outcome.failure.detail
    assert "+    \"code\": -32601" in outcome.failure.detail
    assert render_diff({"a": 1}, {"a": 1}) == ""
