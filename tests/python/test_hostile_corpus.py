"""Every hostile line gets exactly the outcome its corpus entry names, and the body keeps serving."""

from __future__ import annotations

import json

import pytest

from harness.client import BodyClient
from support import assert_answers_ping_next, assert_compact, load_corpus

corpus = load_corpus()


def check_outcome(client: BodyClient, case: corpus.Case) -> None:
    client.send_raw(case.line + b"\n")
    expect = case.expect
    if expect.kind == "silent":
        assert_answers_ping_next(client, f"after {case.name}")
        return
    line = client.read_line(awaiting=f"the reply to hostile case {case.name}")
    assert_compact(line)
    reply = json.loads(line)
    id_raw = b"null" if expect.id_raw is None else expect.id_raw
    assert line.startswith(b'{"jsonrpc":"2.0","id":' + id_raw + b","), line[:200]
    if expect.kind == "result":
        assert "result" in reply and "error" not in reply, reply
    elif expect.kind == "error":
        assert "result" not in reply, reply
        assert reply["error"]["code"] == expect.code, reply
        assert isinstance(reply["error"]["message"], str) and reply["error"]["message"]
        if expect.message_contains is not None:
            assert expect.message_contains in reply["error"]["message"], reply
    else:
        assert ("result" in reply) != ("error" in reply), reply
    assert_answers_ping_next(client, f"after {case.name}")


@pytest.mark.parametrize("case", corpus.CASES, ids=[c.name for c in corpus.CASES])
def test_hostile_line_gets_its_named_outcome_and_the_body_still_answers_ping(spawn_body, case):
    client = spawn_body(**case.body)
    check_outcome(client, case)
    assert client.unmatched == []


def test_the_whole_corpus_through_one_body_leaves_it_serving(spawn_body):
    client = spawn_body()
    client.initialize()
    for case in corpus.CASES:
        if not case.body:
            check_outcome(client, case)
    assert client.call_turn("still here?", "u", "c", "s")["turn"] == 1
    assert client.close() == 0


def test_corpus_holds_at_least_35_named_cases():
    assert len(corpus.CASES) >= 35
