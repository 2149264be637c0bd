"""Hostile input lines for the body, each with the outcome docs/wire-contract.md promises.

Raw bytes, so a Python module rather than JSON lines: invalid UTF-8, NUL bytes and 100k-deep
nesting cannot live in a .jsonl file. Each `line` excludes its LF; the runner appends b"\\n".

Outcomes:
- `error(code)`: one error reply with `id: null`; `error(code, b"7")`: the id echoed byte for byte.
- `result(b"1")`: one success reply echoing the id.
- `answered(b"1")`: one reply echoing the id, success or error (where the contract is silent).
- `SILENT`: no reply at all (blank lines, valid notifications, responses).
`body` holds BodyOptions overrides for cases that need a small cap.
After every case the body must still answer `ping`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

SMALL_CAP = 4096


@dataclass(frozen=True)
class Outcome:
    kind: str  # "error" | "result" | "answered" | "silent"
    code: int | None = None
    id_raw: bytes | None = None  # None: the reply's id must be null
    message_contains: str | None = None


def error(code: int, id_raw: bytes | None = None, message_contains: str | None = None) -> Outcome:
    return Outcome("error", code, id_raw, message_contains)


def result(id_raw: bytes) -> Outcome:
    return Outcome("result", None, id_raw)


def answered(id_raw: bytes) -> Outcome:
    return Outcome("answered", None, id_raw)


SILENT = Outcome("silent")


@dataclass(frozen=True)
class Case:
    name: str
    line: bytes
    expect: Outcome
    body: dict[str, Any] = field(default_factory=dict)


def ping(id_raw: bytes = b"1", params: bytes | None = None) -> bytes:
    tail = b',"params":' + params if params is not None else b""
    return b'{"jsonrpc":"2.0","id":' + id_raw + b',"method":"ping"' + tail + b"}"


def ping_with_string(inner: bytes) -> bytes:
    """A ping whose params hold one string spelled with exactly these bytes."""
    return ping(params=b'{"s":"' + inner + b'"}')


def nested_params(depth: int) -> bytes:
    """A ping whose nesting depth is exactly `depth` (the message object counts as 1)."""
    arrays = depth - 2  # the message object and the params object
    return ping(params=b'{"x":' + b"[" * arrays + b"]" * arrays + b"}")


def padded_ping(total: int) -> bytes:
    """A valid ping line of exactly `total` bytes (LF excluded)."""
    empty = ping(params=b'{"pad":""}')
    return ping(params=b'{"pad":"' + b"x" * (total - len(empty)) + b'"}')


P = b'{"jsonrpc":"2.0",'

CASES: list[Case] = [
    # -- not JSON ------------------------------------------------------------------------------
    Case("malformed_unclosed_object", b'{"jsonrpc":"2.0","id":1,"method":"ping"', error(PARSE_ERROR)),
    Case("malformed_bare_words", b"{not json", error(PARSE_ERROR)),
    Case("malformed_trailing_comma", b'{"jsonrpc":"2.0","id":1,"method":"ping",}', error(PARSE_ERROR)),
    Case("malformed_single_quotes", b"{'jsonrpc':'2.0','id':1,'method':'ping'}", error(PARSE_ERROR)),
    Case("malformed_unquoted_keys", b'{jsonrpc:"2.0",id:1,method:"ping"}', error(PARSE_ERROR)),
    Case("malformed_unterminated_string", b'{"jsonrpc":"2.0","id":1,"method":"ping', error(PARSE_ERROR)),
    Case("malformed_nan_literal", ping(params=b'{"n":NaN}'), error(PARSE_ERROR)),
    Case("malformed_leading_zero_number", ping(id_raw=b"01"), error(PARSE_ERROR)),
    Case("malformed_lone_closing_brace", b"}", error(PARSE_ERROR)),
    Case("trailing_garbage_after_object", ping() + b" x", error(PARSE_ERROR)),
    Case("two_objects_on_one_line", ping() + ping(id_raw=b"2"), error(PARSE_ERROR)),
    Case("malformed_non_ascii_token", b'{"jsonrpc":"2.0","id":1,"method":\xc3\xa9}', error(PARSE_ERROR)),
    Case("bom_prefix", b"\xef\xbb\xbf" + ping(), error(PARSE_ERROR)),
    # -- bad UTF-8 and bad escapes: the guard answers before any parser, so the id stays null -
    Case("invalid_utf8_ff_byte", ping_with_string(b"a\xffb"), error(PARSE_ERROR)),
    Case("invalid_utf8_overlong_slash", ping_with_string(b"\xc0\xaf"), error(PARSE_ERROR)),
    Case("invalid_utf8_truncated_sequence", ping_with_string(b"\xe2\x82"), error(PARSE_ERROR)),
    Case("invalid_utf8_encoded_surrogate", ping_with_string(b"\xed\xa0\x80"), error(PARSE_ERROR)),
    Case("invalid_utf8_above_max_code_point", ping_with_string(b"\xf4\x90\x80\x80"), error(PARSE_ERROR)),
    Case("invalid_utf8_outside_strings", b"\xff" + ping(), error(PARSE_ERROR)),
    Case("invalid_utf8_in_method_name", b'{"jsonrpc":"2.0","id":1,"method":"pi\xffng"}', error(PARSE_ERROR)),
    Case("lone_high_surrogate_escape", ping_with_string(b"\\ud800"), error(PARSE_ERROR)),
    Case("lone_low_surrogate_escape", ping_with_string(b"\\udc00"), error(PARSE_ERROR)),
    Case("reversed_surrogate_pair_escape", ping_with_string(b"\\udc00\\ud800"), error(PARSE_ERROR)),
    Case("valid_surrogate_pair_escape", ping_with_string(b"\\ud83d\\ude00"), result(b"1")),
    Case("valid_multibyte_utf8", ping_with_string("é☃😀".encode()), result(b"1")),
    # -- control bytes -------------------------------------------------------------------------
    Case("raw_nul_in_string", ping_with_string(b"a\x00b"), error(PARSE_ERROR)),
    Case("raw_nul_outside_strings", b'{"jsonrpc":"2.0",\x00"id":1,"method":"ping"}', error(PARSE_ERROR)),
    Case("raw_control_char_in_string", ping_with_string(b"a\x01b"), error(PARSE_ERROR)),
    Case("raw_tab_in_string", ping_with_string(b"a\tb"), error(PARSE_ERROR)),
    Case("raw_cr_inside_string", ping_with_string(b"a\rb"), error(PARSE_ERROR)),
    Case("escaped_control_chars_are_fine", ping_with_string(b"\\u0000\\n\\t\\u001f"), result(b"1")),
    # -- nesting and size ----------------------------------------------------------------------
    Case("nesting_100k_arrays", b"[" * 100_000, error(INVALID_REQUEST)),
    Case("nesting_100k_objects", b'{"a":' * 100_000, error(INVALID_REQUEST)),
    Case("nesting_65_deep", nested_params(65), error(INVALID_REQUEST)),
    Case("nesting_64_deep_is_accepted", nested_params(64), result(b"1")),
    Case("brackets_inside_strings_are_not_nesting", ping_with_string(b"[{" * 50_000), result(b"1")),
    Case("too_many_elements", ping(params=b'{"a":[' + b",".join([b"0"] * 2000) + b"]}"),
         error(INVALID_REQUEST), body={"max_elements": 1000}),
    Case("oversized_line", padded_ping(SMALL_CAP + 1000),
         error(INVALID_REQUEST, message_contains=str(SMALL_CAP)), body={"max_line_bytes": SMALL_CAP}),
    Case("oversized_invalid_utf8_line", b"\xff" * (3 * SMALL_CAP),
         error(INVALID_REQUEST, message_contains=str(SMALL_CAP)), body={"max_line_bytes": SMALL_CAP}),
    Case("line_of_exactly_the_cap_is_accepted", padded_ping(SMALL_CAP), result(b"1"),
         body={"max_line_bytes": SMALL_CAP}),
    # -- numbers -------------------------------------------------------------------------------
    Case("huge_float_in_params", ping(params=b'{"n":1e400}'), result(b"1")),
    Case("huge_integer_id", ping(id_raw=b"123456789012345678901234567890"),
         result(b"123456789012345678901234567890")),
    Case("negative_zero_id", ping(id_raw=b"-0"), result(b"-0")),
    Case("exponent_id", ping(id_raw=b"1e3"), result(b"1e3")),
    # -- wrong types ---------------------------------------------------------------------------
    Case("method_is_a_number", P + b'"id":7,"method":1}', error(INVALID_REQUEST, b"7")),
    Case("method_is_null", P + b'"id":7,"method":null}', error(INVALID_REQUEST, b"7")),
    Case("method_missing", P + b'"id":3}', error(INVALID_REQUEST, b"3")),
    Case("params_is_an_array", ping(id_raw=b"8", params=b"[]"), error(INVALID_PARAMS, b"8")),
    Case("params_is_a_string", ping(id_raw=b"8", params=b'"x"'), error(INVALID_PARAMS, b"8")),
    Case("params_is_null", ping(id_raw=b"8", params=b"null"), error(INVALID_PARAMS, b"8")),
    Case("jsonrpc_is_a_number", b'{"jsonrpc":2.0,"id":9,"method":"ping"}', error(INVALID_REQUEST, b"9")),
    Case("jsonrpc_is_1_0", b'{"jsonrpc":"1.0","id":9,"method":"ping"}', error(INVALID_REQUEST, b"9")),
    Case("jsonrpc_missing", b'{"id":9,"method":"ping"}', error(INVALID_REQUEST, b"9")),
    Case("id_true", ping(id_raw=b"true"), error(INVALID_REQUEST)),
    Case("id_null", ping(id_raw=b"null"), error(INVALID_REQUEST)),
    Case("id_object", ping(id_raw=b'{"a":1}'), error(INVALID_REQUEST)),
    Case("id_array", ping(id_raw=b"[1]"), error(INVALID_REQUEST)),
    Case("method_empty_string", P + b'"id":5,"method":""}', error(METHOD_NOT_FOUND, b"5")),
    Case("unknown_method", P + b'"id":5,"method":"no/such"}', error(METHOD_NOT_FOUND, b"5")),
    # -- batches and scalars -------------------------------------------------------------------
    Case("batch_empty", b"[]", error(INVALID_REQUEST)),
    Case("batch_with_a_ping", b"[" + ping() + b"]", error(INVALID_REQUEST)),
    Case("batch_of_notifications", b'[{"jsonrpc":"2.0","method":"notifications/initialized"}]',
         error(INVALID_REQUEST)),
    Case("top_level_number", b"1", error(INVALID_REQUEST)),
    Case("top_level_string", b'"str"', error(INVALID_REQUEST)),
    Case("top_level_null", b"null", error(INVALID_REQUEST)),
    Case("top_level_true", b"true", error(INVALID_REQUEST)),
    # -- duplicate keys ------------------------------------------------------------------------
    Case("duplicate_keys_same_value", b'{"jsonrpc":"2.0","id":4,"method":"ping","method":"ping"}',
         result(b"4")),
    Case("duplicate_method_keys_differing", b'{"jsonrpc":"2.0","id":4,"method":"no/such","method":"ping"}',
         answered(b"4")),
    # -- blank lines, notifications, responses: never answered ---------------------------------
    Case("empty_line", b"", SILENT),
    Case("whitespace_only_line", b"  \t  ", SILENT),
    Case("trailing_cr_is_tolerated", ping() + b"\r", result(b"1")),
    Case("whitespace_before_the_object", b"  \t" + ping(), result(b"1")),
    Case("line_ends_inside_a_unicode_escape", b'{"jsonrpc":"2.0","id":8,"method":"ping","x":"\\u12', error(PARSE_ERROR)),
    Case("notification_unknown_method", P + b'"method":"notifications/whatever"}', SILENT),
    Case("notification_with_array_params", P + b'"method":"notifications/initialized","params":[]}', SILENT),
    # Without an id but not a valid notification: JSON-RPC 2.0 answers -32600 with id null.
    Case("idless_message_with_jsonrpc_1_0", b'{"jsonrpc":"1.0","method":"ping"}', error(INVALID_REQUEST)),
    Case("idless_message_with_numeric_method", P + b'"method":1}', error(INVALID_REQUEST)),
    Case("notification_of_a_request_method", P + b'"method":"tools/call","params":{"name":"turn"}}', SILENT),
    Case("cancel_of_unknown_request", P + b'"method":"notifications/cancelled","params":{"requestId":99}}',
         SILENT),
    Case("empty_object", b"{}", error(INVALID_REQUEST)),
    Case("response_with_result_is_ignored", P + b'"id":5,"result":{}}', SILENT),
    Case("response_with_error_is_ignored", P + b'"id":5,"error":{"code":-32601,"message":"x"}}', SILENT),
    # A response is never answered, whatever its id: two peers that answer responses would loop.
    Case("response_with_null_id_error_is_ignored", P + b'"id":null,"error":{"code":-32600,"message":"x"}}', SILENT),
    Case("response_with_null_id_result_is_ignored", P + b'"id":null,"result":{}}', SILENT),
    Case("response_without_id_is_ignored", P + b'"error":{"code":-32700,"message":"x"}}', SILENT),
    Case("response_with_object_id_is_ignored", P + b'"id":{"a":1},"result":{}}', SILENT),
]

assert len({case.name for case in CASES}) == len(CASES), "case names must be unique"
