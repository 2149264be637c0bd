"""Message-level rules: id echo, notifications, tool-call errors, argument validation, output form."""

from __future__ import annotations

import json

import pytest

from harness.errors import RpcError, ToolError
from support import assert_answers_ping_next, assert_compact, raw_ping, turn_arguments

INVALID_PARAMS = -32602


@pytest.mark.parametrize("id_raw", [b"0", b"12345678901234567890", b'"abc"', b"-1", b"1.5", b'""',
                                    b'"with \\"quotes\\""'])
def test_request_ids_are_echoed_byte_for_byte(body, id_raw):
    body.send_raw(raw_ping(id_raw))
    line = body.read_line(awaiting=f"the reply to a ping with id {id_raw!r}")
    assert line == b'{"jsonrpc":"2.0","id":' + id_raw + b',"result":{}}'


@pytest.mark.parametrize("method,params", [
    ("notifications/initialized", None),
    ("notifications/cancelled", {"requestId": 1}),
    ("notifications/cancelled", {"requestId": "never-sent", "reason": "test"}),
    ("notifications/progress", {"progressToken": 1, "progress": 1}),
    ("ping", None),
    ("tools/list", None),
    ("no/such/method", {}),
])
def test_notifications_are_never_answered(ready_body, method, params):
    ready_body.notify(method, params)
    assert_answers_ping_next(ready_body)


def test_notifications_before_initialize_are_never_answered(body):
    body.notify("notifications/initialized")
    body.notify("tools/list")
    assert_answers_ping_next(body)


def test_cancelling_a_finished_request_changes_nothing(ready_body):
    request_id = ready_body.send_request("tools/call", {"name": "turn", "arguments": turn_arguments()})
    reply = ready_body.wait_response(request_id)
    ready_body.notify("notifications/cancelled", {"requestId": request_id})
    assert reply["result"]["isError"] is False
    assert_answers_ping_next(ready_body)


def test_every_reply_is_one_compact_line_with_keys_in_contract_order(ready_body):
    for method, params in [("ping", None), ("tools/list", None),
                           ("tools/call", {"name": "turn", "arguments": turn_arguments("compact?")}),
                           ("no/such", None)]:
        request_id = ready_body.send_request(method, params)
        line = ready_body.read_line()
        assert_compact(line)
        reply = json.loads(line)
        assert reply["id"] == request_id
        assert list(reply) in (["jsonrpc", "id", "result"], ["jsonrpc", "id", "error"])
        if "error" in reply:
            assert list(reply["error"])[:2] == ["code", "message"]


# -- tools/call errors that are protocol errors ---------------------------------------------------

def test_an_unknown_tool_is_invalid_params_naming_it(ready_body):
    with pytest.raises(RpcError) as caught:
        ready_body.request("tools/call", {"name": "nope", "arguments": {}})
    assert caught.value.code == INVALID_PARAMS
    assert "Unknown tool: nope" in caught.value.message


@pytest.mark.parametrize("params", [{"arguments": turn_arguments()}, {"name": 7, "arguments": turn_arguments()},
                                    {"name": None, "arguments": turn_arguments()}])
def test_a_missing_or_non_string_tool_name_is_invalid_params(ready_body, params):
    with pytest.raises(RpcError) as caught:
        ready_body.request("tools/call", params)
    assert caught.value.code == INVALID_PARAMS


# -- invalid arguments are tool execution errors that name the field ------------------------------

def _without(key):
    arguments = turn_arguments()
    del arguments[key]
    return arguments


def _with(**changes):
    return {**turn_arguments(), **changes}


@pytest.mark.parametrize("arguments,field", [
    (_without("input"), "input"),
    (_without("uid"), "uid"),
    (_without("channel"), "channel"),
    (_without("server"), "server"),
    (_with(input=1), "input"),
    (_with(uid=None), "uid"),
    (_with(channel=["c"]), "channel"),
    (_with(server={"s": 1}), "server"),
    (_with(uid=""), "uid"),
    (_with(channel=""), "channel"),
    (_with(server=""), "server"),
    (_with(uid="u" * 257), "uid"),
    (_with(channel="€" * 86), "channel"),  # 86 characters, 258 bytes
    (_with(server="s\x07"), "server"),
    (_with(uid="line\nbreak"), "uid"),
    (_with(channel="\x00"), "channel"),
    (_with(server="del\x7f"), "server"),
    (_with(mood="grim"), "mood"),
], ids=["missing-input", "missing-uid", "missing-channel", "missing-server", "input-number", "uid-null",
        "channel-array", "server-object", "empty-uid", "empty-channel", "empty-server", "uid-257-bytes",
        "channel-258-bytes-86-chars", "server-bell", "uid-newline", "channel-nul", "server-del",
        "extra-argument"])
def test_invalid_arguments_are_a_tool_error_naming_the_field(ready_body, arguments, field):
    with pytest.raises(ToolError) as caught:
        ready_body.call_tool("turn", arguments)
    assert f"invalid argument '{field}'" in caught.value.text
    assert_answers_ping_next(ready_body)


def test_a_tool_error_result_has_one_text_block_and_is_error_true(ready_body):
    result = ready_body.request("tools/call", {"name": "turn", "arguments": _without("uid")})
    assert result["isError"] is True
    assert [block["type"] for block in result["content"]] == ["text"]
    assert "structuredContent" not in result


@pytest.mark.parametrize("params", [{"name": "turn"}, {"name": "turn", "arguments": "x"},
                                    {"name": "turn", "arguments": []}])
def test_absent_or_non_object_arguments_are_refused(ready_body, params):
    reply = ready_body.exchange("tools/call", params)
    if "error" in reply:
        assert reply["error"]["code"] == INVALID_PARAMS
    else:
        assert reply["result"]["isError"] is True


@pytest.mark.parametrize("arguments", [
    _with(uid="u" * 256),
    _with(channel="é" * 128),  # 256 bytes
    _with(server="a:b/c|d #é"),
    _with(input=""),
    _with(input="line one\nline two\ttabbed \x01 and \u2028"),
], ids=["uid-256-bytes", "channel-256-bytes-multibyte", "server-punctuation", "empty-input",
        "input-with-control-chars"])
def test_boundary_arguments_are_accepted(ready_body, arguments):
    trace = ready_body.call_turn(**arguments)
    assert trace["session"] == {k: arguments[k] for k in ("uid", "channel", "server")}
