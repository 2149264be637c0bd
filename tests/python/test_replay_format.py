"""The transcript format and the matchers, without any process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.replay.matching import first_mismatch, matches, projection, render_diff
from harness.replay.transcript import (
    Close,
    Comment,
    Expect,
    ExpectExit,
    ExpectRaw,
    Send,
    Signal,
    TranscriptError,
    bytes_of,
    parse_step,
    parse_transcript,
    send_document,
    step_line,
    text_of,
)

HERE = Path("t.jsonl")


def parse(text: str):
    return parse_transcript(text, HERE)


# -- matchers ------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern, actual", [
    ({"id": 1}, {"id": 1, "result": {}}),
    ({"a": "<ANY>"}, {"a": None}),
    ({"a": "<ABSENT>"}, {"b": 1}),
    ({"a": "<STRING>", "b": "<NUMBER>", "c": "<INTEGER>", "d": "<BOOLEAN>", "e": "<OBJECT>", "f": "<ARRAY>"},
     {"a": "", "b": 1.5, "c": 2, "d": False, "e": {}, "f": []}),
    ({"<HAS>": [{"n": 2}]}, [{"n": 1}, {"n": 2, "x": 0}]),
    ({"<HAS-NOT>": [{"status": "failed"}]}, [{"status": "ran"}]),
    ({"<CONTAINS>": "cursor"}, "unknown cursor here"),
    ({"<LEN>": 3}, [1, 2, 3]),
    ({"<ALL>": [{"<LEN>": 2}, {"<HAS>": [5]}]}, [4, 5]),
    (1, 1.0),
    ([{"a": 1}, "<ANY>"], [{"a": 1, "b": 2}, 7]),
])
def test_a_pattern_matches_replies_that_have_what_it_names(pattern, actual):
    assert first_mismatch(pattern, actual) is None


@pytest.mark.parametrize("pattern, actual, path", [
    ({"id": 1}, {"id": 2}, "$.id"),
    ({"a": "<ANY>"}, {}, "$.a"),
    ({"a": "<ABSENT>"}, {"a": 0}, "$.a"),
    ({"a": "<INTEGER>"}, {"a": True}, "$.a"),
    ({"r": {"<HAS>": [{"n": 3}]}}, {"r": [{"n": 1}]}, "$.r"),
    ({"r": {"<HAS-NOT>": [{"n": 1}]}}, {"r": [{"n": 0}, {"n": 1}]}, "$.r[1]"),
    ({"m": {"<CONTAINS>": "x"}}, {"m": "y"}, "$.m"),
    ({"s": [1, 2]}, {"s": [1, 2, 3]}, "$.s"),
    ({"s": [1, {"k": "v"}]}, {"s": [1, {"k": "w"}]}, "$.s[1].k"),
    (True, 1, "$"),
    ("1", 1, "$"),
])
def test_a_pattern_reports_the_first_difference_with_its_location(pattern, actual, path):
    mismatch = first_mismatch(pattern, actual)
    assert mismatch is not None and mismatch.path == path


def test_the_diff_shows_only_what_the_pattern_talks_about():
    reply = {"jsonrpc": "2.0", "id": 3, "result": {"isError": True, "content": [{"text": "x" * 5000}]}}
    diff = render_diff({"id": 3, "result": {"isError": False}}, reply)
    assert "-    \"isError\": false" in diff and "+    \"isError\": true" in diff
    assert "xxxx" not in diff and len(diff) < 400


def test_the_projection_of_a_matching_reply_is_the_pattern_itself():
    pattern = {"id": "<ANY>", "result": {"tools": {"<LEN>": 1}}}
    assert projection(pattern, {"id": 9, "result": {"tools": [{}], "x": 1}}) == pattern
    assert matches(pattern, {"id": 9, "result": {"tools": [{}]}})


# -- parsing -------------------------------------------------------------------------------

def test_a_transcript_parses_into_numbered_steps_of_every_kind():
    text = "\n".join([
        '{"transcript": {"title": "all kinds", "bodies": ["ada"], "args": ["--max-depth", "8"]}}',
        '{"comment": "hello"}',
        '{"send": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}',
        '',
        '{"send-raw": "x\\udcff", "newline": false}',
        '{"expect": {"id": 1}, "within": 2}',
        '{"expect-raw": "{}"}',
        '{"signal": "TERM"}',
        '{"close": "stdin"}',
        '{"expect-exit": 0, "within": 1.5}',
    ])
    transcript = parse(text)
    assert transcript.header.args == ("--max-depth", "8") and transcript.header.bodies == ("ada",)
    lines = [line for line, _ in transcript.steps]
    steps = [step for _, step in transcript.steps]
    assert lines == [2, 3, 5, 6, 7, 8, 9, 10]
    assert steps[0] == Comment("hello")
    assert steps[1].data == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    assert steps[2] == Send(b"x\xff")
    assert steps[3] == Expect({"id": 1}, 2.0)
    assert steps[4] == ExpectRaw(b"{}")
    assert steps[5:] == [Signal("TERM"), Close(), ExpectExit(0, 1.5)]


@pytest.mark.parametrize("text, says", [
    ('{"send": 1}\nnot json', "t.jsonl:2 is not valid JSON"),
    ('{"send": 1}\n{"send": 2, "send": 3}', "t.jsonl:2: a key appears twice"),
    ('{"send": ' + "[" * 100_000 + "]" * 100_000 + "}", "t.jsonl:1 nests 100001 levels deep"),
    ('{"send": 1, "expect": 2}', "exactly one of"),
    ('{"expect": {}, "within": 0}', "'within'"),
    ('{"expect": {"a": {"<LEN>": "3"}}}', "<LEN> takes an integer"),
    ('{"send-raw": "\\ud800"}', "stands for no byte"),
    ('{"close": "stdout"}', "stdin"),
    ('{"signal": "USR1"}', "signal must be one of"),
    ('{"expect-exit": "0"}', "integer exit code"),
    ('{"send": 1, "within": 3}', "'send' does not take within"),
    ('{"comment": "only words"}', "at least one send or expect"),
    ('{"send": 1}\n{"transcript": {"title": "late"}}', "header must be the first step"),
    ('{"transcript": {"bodies": "ada"}}\n{"send": 1}', "t.jsonl:1: transcript.bodies: must be a list, got string"),
    ('{"transcript": {"args": ["-v", 8]}}\n{"send": 1}', "t.jsonl:1: transcript.args[1]: must be a string"),
    ('{"transcript": {"titel": "x"}}\n{"send": 1}', "transcript.titel: is not a known field (known: title, bodies,"),
])
def test_a_malformed_transcript_is_refused_naming_file_line_and_problem(text, says):
    with pytest.raises(TranscriptError) as caught:
        parse(text)
    assert says in str(caught.value)


@pytest.mark.parametrize("data", [
    b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
    b'{"jsonrpc": "2.0", "id": 1}\n',
    b'\xff\xfe not json\n',
    b'{"a":"\\ud800"}\n',
    b'no newline at the end',
    b'{"x":1.50}\r\n',
])
def test_recorded_client_bytes_survive_writing_and_parsing_exactly(data):
    line = step_line(Send(data))
    step = parse_step(json.loads(line))
    assert isinstance(step, Send) and step.data == data
    line.encode("utf-8")  # always writable as UTF-8


def test_exact_compact_json_is_written_as_send_and_anything_else_as_send_raw():
    assert "send" in send_document(b'{"id":1}\n')
    assert "send-raw" in send_document(b'{"id": 1}\n')
    assert send_document(b"x") == {"send-raw": "x", "newline": False}


def test_raw_bytes_round_trip_through_their_surrogate_spelling():
    every_byte = bytes(range(256))
    assert bytes_of(text_of(every_byte)) == every_byte
