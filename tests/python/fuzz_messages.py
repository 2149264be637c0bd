"""Hypothesis strategies for lines sent to the body, each carrying the answer the contract promises.

Invariants:
- Every `Line` carries its `Expect`ation, derived by construction from docs/wire-contract.md for
  a body that has completed the legacy handshake and runs with `--max-depth 64` and
  `--max-elements FUZZ_MAX_ELEMENTS`. A line never contains LF.
- An expected reply is exactly one line whose id is `Expect.id_raw`, byte for byte as sent.
- Members of a generated object come in any order, keys are sometimes spelled with `\\u`
  escapes, whitespace and a trailing CR vary: none of that may change the answer.
- A successful turn names its session by index into the caller's list of session keys
  (`Line.session`) and keeps its input (`Line.text`), so callers can check law L1.
- The hostile categories each plant exactly one defect in an otherwise valid ping, so the
  expected refusal is unambiguous.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from support import check_text_block

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
UNSUPPORTED_VERSION = -32022

MAX_DEPTH = 64
FUZZ_MAX_ELEMENTS = 2_000
MODERN = "2026-07-28"
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LEGACY_LATEST = LEGACY_VERSIONS[-1]
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
KNOWN_METHODS = ("initialize", "ping", "server/discover", "tools/list", "tools/call")
KEY_PARTS = ("uid", "channel", "server")
MAX_KEY_PART_BYTES = 256

# Hypothesis profiles: the default one runs in `make test` (seeded, bounded); `make fuzz`
# selects the long one with MAFIABOT_FUZZ=long (random seed, many more cases, failures kept).
settings.register_profile(
    "mafiabot-ci", derandomize=True, database=None, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "mafiabot-long", deadline=None, print_blob=True,
    max_examples=int(os.environ.get("MAFIABOT_FUZZ_EXAMPLES", "20000")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
LONG_RUN = os.environ.get("MAFIABOT_FUZZ") == "long"
settings.load_profile("mafiabot-long" if LONG_RUN else "mafiabot-ci")


def examples(ci_count: int) -> settings:
    """Settings for one fuzz test: `ci_count` cases in the seeded run, the profile's in a long one."""
    return settings() if LONG_RUN else settings(max_examples=ci_count)


@dataclass(frozen=True)
class Expect:
    """The body's answer to one line: nothing, or one reply with this id, code and shape."""

    reply: bool
    id_raw: bytes = b"null"
    code: int | None = None  # None: a result
    shape: str = ""          # for results: empty, modern, tools, discover, turn, tool_error


NO_REPLY = Expect(reply=False)


@dataclass(frozen=True)
class Line:
    """One line to send (no LF), what must come back, and for a turn its session and input."""

    data: bytes
    expect: Expect
    label: str                 # the category, for failure messages
    session: int | None = None  # a successful turn: index into the caller's session keys
    text: str | None = None     # and the input it said


def error(code: int, id_raw: bytes = b"null") -> Expect:
    return Expect(True, id_raw, code)


def result(id_raw: bytes, shape: str) -> Expect:
    return Expect(True, id_raw, None, shape)


# -- JSON text -------------------------------------------------------------------------------

def dumps(value: object, ascii_only: bool = False) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=ascii_only)


spaces = st.sampled_from(("", "", " ", "\t", "  "))
json_leaves = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70)
               | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=16))
json_values = st.recursive(json_leaves, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)
json_objects = st.dictionaries(st.text(max_size=6), json_values, max_size=3)
non_string_values = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70)
                     | st.floats(allow_nan=False, allow_infinity=False) | st.lists(json_values, max_size=3))
non_objects = non_string_values | st.text(max_size=16)

valid_ids = st.one_of(
    st.integers(-(2 ** 70), 2 ** 70).map(str),
    st.sampled_from(("0", "-0", "1.5", "1e400", "1E2", "-7.25e-3", "12345678901234567890")),
    st.builds(dumps, st.text(max_size=12), st.booleans()),
)
bad_ids = st.sampled_from(("null", "true", "false", "{}", "[]", '{"id":1}', "[1,2]"))


KEY_MASKS = st.integers(0, 2 ** 48 - 1)
MEMBER_RANKS = st.lists(st.integers(0, 7), min_size=8, max_size=8)
EXTRA_NAMES = st.sampled_from(("extra", "x", "_note"))
LINE_ENDS = st.sampled_from(("", "", "\r"))


def spelled_key(draw, name: str) -> str:
    """A member name as JSON text, sometimes with some characters as \\u escapes."""
    mask = draw(KEY_MASKS) if draw(st.booleans()) else 0
    return '"' + "".join(f"\\u{ord(c):04x}" if mask >> i & 1 else c for i, c in enumerate(name)) + '"'


def compose(draw, members: dict[str, str], extras: bool = True) -> bytes:
    """An object text from {name: raw JSON value text}, members in a drawn order."""
    items = list(members.items())
    if extras and draw(st.integers(0, 4)) == 0:
        items.append((draw(EXTRA_NAMES), dumps(draw(json_values))))
    ranks = draw(MEMBER_RANKS)
    items = [item for _, _, item in sorted((ranks[i % 8], i, item) for i, item in enumerate(items))]
    gap = draw(spaces)
    body = f",{gap}".join(f"{spelled_key(draw, k)}{gap}:{gap}{v}" for k, v in items)
    return f"{draw(spaces)}{{{gap}{body}{gap}}}{draw(LINE_ENDS)}".encode()


def request(method: str, id_raw: str | None, params: str | None = None) -> dict[str, str]:
    members = {"jsonrpc": '"2.0"', "method": dumps(method)}
    if id_raw is not None:
        members["id"] = id_raw
    if params is not None:
        members["params"] = params
    return members


def modern_meta(draw, version: object = MODERN, caps: bool = True) -> dict:
    meta = {VERSION_KEY: version, "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "0"}}
    if caps:
        meta[CAPS_KEY] = draw(json_objects)
    return meta


# -- valid requests ----------------------------------------------------------------------------

@st.composite
def pings(draw) -> Line:
    ident = draw(valid_ids)
    params = draw(st.sampled_from((None, "{}", '{"_meta":{"progressToken":7}}')))
    return Line(compose(draw, request("ping", ident, params)), result(ident.encode(), "empty"), "ping")


@st.composite
def modern_requests(draw) -> Line:
    """ping, tools/list or server/discover with a `_meta` that is good, of another version, or capless."""
    ident = draw(valid_ids)
    method = draw(st.sampled_from(("ping", "tools/list", "server/discover")))
    variant = draw(st.sampled_from(("good", "good", "version", "no-caps", "bad-caps")))
    if variant == "version":
        version = draw(st.text(max_size=12).filter(lambda v: v != MODERN) | st.integers() | st.none())
        meta = modern_meta(draw, version)
        expect = error(UNSUPPORTED_VERSION, ident.encode())
    elif variant in ("no-caps", "bad-caps"):
        meta = modern_meta(draw, caps=False)
        if variant == "bad-caps":
            meta[CAPS_KEY] = draw(non_objects)
        expect = error(INVALID_PARAMS, ident.encode())
    else:
        meta = modern_meta(draw)
        shape = {"ping": "modern", "tools/list": "tools", "server/discover": "discover"}[method]
        expect = result(ident.encode(), shape)
    return Line(compose(draw, request(method, ident, dumps({"_meta": meta}))), expect, f"modern {variant}")


@st.composite
def tools_lists(draw) -> Line:
    ident = draw(valid_ids)
    if draw(st.booleans()):
        params = draw(st.sampled_from((None, "{}")))
        return Line(compose(draw, request("tools/list", ident, params)), result(ident.encode(), "tools"),
                    "tools/list")
    params = dumps({"cursor": draw(json_values)})
    return Line(compose(draw, request("tools/list", ident, params)), error(INVALID_PARAMS, ident.encode()),
                "tools/list cursor")


def key_part_text() -> st.SearchStrategy[str]:
    """Text a key part may hold after a unique prefix: no control characters, short."""
    return st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=24)


turn_inputs = st.one_of(st.text(max_size=80), st.text(st.characters(codec="ascii"), max_size=400),
                        st.sampled_from(("what is the moon?", "please remember this", "run the plan", "")))


@st.composite
def turns(draw, sessions: Sequence[tuple[str, str, str]], secrets: Sequence[str]) -> Line:
    """A successful turn of one of `sessions`, legacy or modern, whose input may say its secret."""
    index = draw(st.integers(0, len(sessions) - 1))
    text = draw(turn_inputs)
    if draw(st.integers(0, 2)) == 0:
        text = f"remember the password {secrets[index]} {text}"
    arguments = dict(zip(KEY_PARTS, sessions[index], strict=True), input=text)
    params: dict = {"name": "turn", "arguments": dict(draw(st.permutations(list(arguments.items()))))}
    modern = draw(st.booleans())
    if modern:
        params["_meta"] = modern_meta(draw)
    ident = draw(valid_ids)
    line = compose(draw, request("tools/call", ident, dumps(params, draw(st.booleans()))))
    return Line(line, result(ident.encode(), "turn"), "turn modern" if modern else "turn",
                session=index, text=text)


# -- requests the contract refuses -------------------------------------------------------------

BAD_ARGUMENTS = ("missing", "not-string", "empty", "too-long", "control", "unknown", "not-object")


@st.composite
def bad_turns(draw) -> Line:
    """tools/call turn with arguments the tool refuses: a result with isError true."""
    arguments: object = {"input": draw(st.text(max_size=20)), "uid": "u", "channel": "c", "server": "s"}
    kind = draw(st.sampled_from(BAD_ARGUMENTS))
    field = draw(st.sampled_from(KEY_PARTS))
    if kind == "missing":
        del arguments[draw(st.sampled_from(("input", *KEY_PARTS)))]
    elif kind == "not-string":
        arguments[draw(st.sampled_from(("input", *KEY_PARTS)))] = draw(non_string_values | json_objects)
    elif kind == "empty":
        arguments[field] = ""
    elif kind == "too-long":
        arguments[field] = draw(st.sampled_from(("x", "é", "月", "😀"))) * 257
    elif kind == "control":
        arguments[field] = "a" + chr(draw(st.sampled_from((*range(0x20), 0x7F)))) + "b"
    elif kind == "unknown":
        arguments[draw(st.text(min_size=1, max_size=8).filter(lambda k: k not in ("input", *KEY_PARTS)))] = "v"
    else:
        arguments = draw(non_objects)
    params = {"name": "turn"} if kind == "not-object" and draw(st.booleans()) else {"name": "turn",
                                                                                      "arguments": arguments}
    ident = draw(valid_ids)
    return Line(compose(draw, request("tools/call", ident, dumps(params))), result(ident.encode(), "tool_error"),
                f"bad turn {kind}")


@st.composite
def bad_tool_calls(draw) -> Line:
    """tools/call without a usable tool name: -32602."""
    ident = draw(valid_ids)
    kind = draw(st.sampled_from(("missing", "not-string", "empty", "unknown")))
    params: dict = {"arguments": {"input": "x", "uid": "u", "channel": "c", "server": "s"}}
    if kind == "not-string":
        params["name"] = draw(non_string_values)
    elif kind == "empty":
        params["name"] = ""
    elif kind == "unknown":
        params["name"] = draw(st.text(min_size=1, max_size=12).filter(lambda n: n != "turn"))
    return Line(compose(draw, request("tools/call", ident, dumps(params))), error(INVALID_PARAMS, ident.encode()),
                f"tool name {kind}")


@st.composite
def unknown_methods(draw) -> Line:
    ident = draw(valid_ids)
    method = draw(st.text(max_size=20).filter(lambda m: m not in KNOWN_METHODS)
                  | st.sampled_from(("notifications/initialized", "resources/list", "Ping", "tools/call ")))
    params = draw(st.none() | json_objects.map(dumps))
    return Line(compose(draw, request(method, ident, params)), error(METHOD_NOT_FOUND, ident.encode()),
                "unknown method")


@st.composite
def second_initializes(draw) -> Line:
    ident = draw(valid_ids)
    params = draw(st.sampled_from((None, "{}", '{"protocolVersion":"2025-11-25"}', '{"protocolVersion":7}')))
    return Line(compose(draw, request("initialize", ident, params)), error(INVALID_REQUEST, ident.encode()),
                "initialize again")


@st.composite
def non_object_params(draw) -> Line:
    ident = draw(valid_ids)
    method = draw(st.sampled_from(KNOWN_METHODS) | st.text(max_size=10))
    params = dumps(draw(non_objects))
    return Line(compose(draw, request(method, ident, params)), error(INVALID_PARAMS, ident.encode()),
                "params not an object")


@st.composite
def notifications(draw) -> Line:
    method = draw(st.sampled_from(("notifications/initialized", "notifications/cancelled", *KNOWN_METHODS))
                  | st.text(max_size=16))
    params = draw(st.none() | json_values.map(dumps))
    return Line(compose(draw, request(method, None, params)), NO_REPLY, "notification")


@st.composite
def responses(draw) -> Line:
    members = {"id": draw(valid_ids)}
    for member in draw(st.sampled_from((("result",), ("error",), ("result", "error")))):
        members[member] = dumps(draw(json_values))
    if draw(st.booleans()):
        members["jsonrpc"] = draw(st.sampled_from(('"2.0"', '"1.0"', "2")))
    return Line(compose(draw, members, extras=False), NO_REPLY, "response")


@st.composite
def bad_ids_lines(draw) -> Line:
    members = request(draw(st.sampled_from(("ping", "tools/list", "nope"))), draw(bad_ids))
    if draw(st.booleans()):
        # a response, whatever its id, is never answered
        members.pop("method")
        members["result"] = "{}"
        return Line(compose(draw, members, extras=False), NO_REPLY, "response with a bad id")
    return Line(compose(draw, members, extras=False), error(INVALID_REQUEST), "bad id type")


@st.composite
def bad_jsonrpc(draw) -> Line:
    ident = draw(st.none() | valid_ids)
    members = request(draw(st.sampled_from(("ping", "tools/list", "nope"))), ident)
    version = draw(st.sampled_from((None, '"1.0"', "2.0", '"2.00"', "null", '" 2.0"')))
    if version is None:
        members.pop("jsonrpc")
    else:
        members["jsonrpc"] = version
    id_raw = ident.encode() if ident is not None else b"null"
    return Line(compose(draw, members), error(INVALID_REQUEST, id_raw), "bad jsonrpc")


@st.composite
def bad_methods(draw) -> Line:
    ident = draw(st.none() | valid_ids)
    members = request("ping", ident)
    if draw(st.booleans()):
        members.pop("method")
    else:
        members["method"] = dumps(draw(non_string_values | json_objects))
    if ident is None and "method" not in members:
        members["params"] = "{}"  # still not a response: no id, no result
    id_raw = ident.encode() if ident is not None else b"null"
    return Line(compose(draw, members), error(INVALID_REQUEST, id_raw), "bad method")


# -- lines the guard or the parser refuses -----------------------------------------------------

INVALID_UTF8 = (b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
                b"\xf5\x80\x80\x80", b"\xff", b"\xfe", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98")


def _ping_with_string(inner: bytes, ident: bytes = b"1") -> bytes:
    return b'{"jsonrpc":"2.0","id":' + ident + b',"method":"ping","params":{"x":"' + inner + b'"}}'


def _around(draw, defect: bytes) -> bytes:
    before = draw(st.text(st.characters(codec="ascii", blacklist_characters='"\\', min_codepoint=32), max_size=6))
    after = draw(st.text(st.characters(codec="ascii", blacklist_characters='"\\', min_codepoint=32), max_size=6))
    return before.encode() + defect + after.encode()


@st.composite
def guarded_lines(draw) -> Line:
    """One lexical defect the input guard must catch, or its nearest harmless neighbour."""
    kind = draw(st.sampled_from(("utf8", "control", "lone-surrogate", "surrogate-pair", "deep", "deep-ok",
                                 "many", "many-ok")))
    if kind == "utf8":
        line = _ping_with_string(_around(draw, draw(st.sampled_from(INVALID_UTF8))))
        return Line(line, error(PARSE_ERROR), "invalid UTF-8")
    if kind == "control":
        byte = draw(st.sampled_from((*range(0x0A), *range(0x0B, 0x20))))
        return Line(_ping_with_string(_around(draw, bytes([byte]))), error(PARSE_ERROR), "raw control byte")
    if kind == "lone-surrogate":
        high = draw(st.integers(0xD800, 0xDBFF))
        low = draw(st.integers(0xDC00, 0xDFFF))
        escape = draw(st.sampled_from([f"\\u{high:04x}", f"\\u{low:04X}", f"\\u{high:04x}\\u0041",
                                       f"\\u{low:04x}\\u{high:04x}"]))
        return Line(_ping_with_string(_around(draw, escape.encode())), error(PARSE_ERROR), "lone surrogate")
    if kind == "surrogate-pair":
        code = draw(st.integers(0x10000, 0x10FFFF))
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        return Line(_ping_with_string(f"\\u{high:04x}\\u{low:04x}".encode(), b'"pair"'),
                    result(b'"pair"', "empty"), "surrogate pair")
    if kind in ("deep", "deep-ok"):
        # the message object and params are two levels; the rest are arrays
        depth = draw(st.integers(MAX_DEPTH + 1, 4 * MAX_DEPTH) if kind == "deep" else st.integers(3, MAX_DEPTH))
        inner = b"[" * (depth - 2) + b"]" * (depth - 2)
        line = b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":' + inner + b"}}"
        expect = error(INVALID_REQUEST) if kind == "deep" else result(b'"deep"', "empty")
        return Line(line, expect, f"nesting {depth}")
    count = draw(st.integers(FUZZ_MAX_ELEMENTS + 10, 3 * FUZZ_MAX_ELEMENTS) if kind == "many"
                 else st.integers(0, FUZZ_MAX_ELEMENTS // 2))
    line = b'{"jsonrpc":"2.0","id":"many","method":"ping","params":{"x":[' + b",".join([b"0"] * count) + b"]}}"
    expect = error(INVALID_REQUEST) if kind == "many" else result(b'"many"', "empty")
    return Line(line, expect, f"{count} elements")


MALFORMED = (b"hello", b"{", b'{"jsonrpc":', b"}", b'{"a" 1}', b"{'a':1}", b"nul", b'{"a":1,}', b"[1,]", b"01",
             b"1.", b".5", b"+1", b'"abc', b"NaN", b"Infinity", b'{"a":1}}', b'{"jsonrpc":"2.0","id":1} x',
             b'{"id":1}{}', b'{"jsonrpc":"2.0","id":01,"method":"ping"}', b'{"x":"\\x"}', b'{"x":"\\u12"}',
             b"\xef\xbb\xbf{}", b'{"x":tRue}', b'{"x":1e}', b'{"a" "b"}', b"{1:2}", b'{"x":[1 2]}', b"\x0c{}")


PINGS = pings()
BATCH_ITEMS = st.lists(PINGS.map(lambda line: line.data.decode().strip()) | json_values.map(dumps), max_size=3)


@st.composite
def unparsable_lines(draw) -> Line:
    """Not JSON at all (-32700), or JSON that is not an object (-32600, batches included)."""
    kind = draw(st.sampled_from(("malformed", "truncated", "scalar", "batch", "blank")))
    if kind == "malformed":
        return Line(draw(st.sampled_from(MALFORMED)), error(PARSE_ERROR), "malformed")
    if kind == "truncated":
        whole = draw(PINGS).data.rstrip(b"\r")
        cut = draw(st.integers(1, len(whole) - 1))
        prefix = whole[:cut]
        if not prefix.strip(b" \t"):
            prefix = whole[: whole.index(b"{") + 1]
        return Line(prefix, error(PARSE_ERROR), "truncated")
    if kind == "scalar":
        return Line(dumps(draw(json_leaves)).encode(), error(INVALID_REQUEST), "not an object")
    if kind == "batch":
        batch = draw(BATCH_ITEMS)
        return Line(f"[{','.join(batch)}]".encode(), error(INVALID_REQUEST), "batch")
    return Line(draw(st.sampled_from((b"", b" ", b"\t", b"\r", b" \t \r"))), NO_REPLY, "blank")


# Any line of the categories above that needs no session.
PROTOCOL_LINES = st.one_of(PINGS, modern_requests(), tools_lists(), bad_turns(), bad_tool_calls(), unknown_methods(),
                           second_initializes(), non_object_params(), notifications(), responses(), bad_ids_lines(),
                           bad_jsonrpc(), bad_methods(), guarded_lines(), unparsable_lines())


# -- the lifecycle of a fresh body -------------------------------------------------------------

@dataclass(frozen=True)
class LifecycleLine:
    """A line whose answer depends on whether the body is initialized yet."""

    data: bytes
    label: str
    before: Expect
    after: Expect
    initializes: bool = False  # answered with a result before, it initializes the body
    negotiated: str = ""       # the protocolVersion such an initialize must get back


@st.composite
def initializes(draw) -> LifecycleLine:
    ident = draw(valid_ids)
    again = error(INVALID_REQUEST, ident.encode())
    kind = draw(st.sampled_from(("known", "known", "other", "missing", "not-string", "empty")))
    if kind in ("known", "other"):
        asked = draw(st.sampled_from(LEGACY_VERSIONS) if kind == "known"
                     else st.text(min_size=1, max_size=12).filter(lambda v: v not in LEGACY_VERSIONS))
        params = {"protocolVersion": asked, "capabilities": draw(json_objects),
                  "clientInfo": {"name": "fuzz", "version": "0"}}
        negotiated = asked if asked in LEGACY_VERSIONS else LEGACY_LATEST
        return LifecycleLine(compose(draw, request("initialize", ident, dumps(params))), f"initialize {kind}",
                             result(ident.encode(), "initialize"), again, True, negotiated)
    params = {"capabilities": {}}
    if kind == "not-string":
        params["protocolVersion"] = draw(non_string_values | json_objects)
    elif kind == "empty":
        params["protocolVersion"] = ""
    return LifecycleLine(compose(draw, request("initialize", ident, dumps(params))), f"initialize {kind}",
                         error(INVALID_PARAMS, ident.encode()), again)


@st.composite
def lifecycle_requests(draw) -> LifecycleLine:
    """Requests other than initialize: legacy ones wait for it; ping, discover and modern ones do not."""
    ident = draw(valid_ids)
    not_yet = error(INVALID_REQUEST, ident.encode())
    kind = draw(st.sampled_from(("tools/list", "turn", "ping", "server/discover", "modern tools/list")))
    if kind == "tools/list":
        data, before, after = compose(draw, request("tools/list", ident)), not_yet, result(ident.encode(), "tools")
    elif kind == "turn":
        params = {"name": "turn", "arguments": {"input": "hi", "uid": "life", "channel": "c", "server": "s"}}
        data = compose(draw, request("tools/call", ident, dumps(params)))
        before, after = not_yet, result(ident.encode(), "turn")
    elif kind == "ping":
        data = compose(draw, request("ping", ident))
        before = after = result(ident.encode(), "empty")
    elif kind == "server/discover":
        data = compose(draw, request("server/discover", ident))
        before = after = result(ident.encode(), "discover")
    else:
        data = compose(draw, request("tools/list", ident, dumps({"_meta": modern_meta(draw)})))
        before = after = result(ident.encode(), "tools")
    return LifecycleLine(data, kind, before, after)


# -- checking a reply against its expectation ----------------------------------------------------

def check_reply(raw: bytes, expect: Expect, label: str) -> dict:
    """The reply parsed, after asserting it is the one `expect` describes."""
    prefix = b'{"jsonrpc":"2.0","id":' + expect.id_raw + b","
    assert raw.startswith(prefix), f"{label}: expected id {expect.id_raw!r}, got {raw[:200]!r}"
    reply = json.loads(raw)
    if expect.code is not None:
        assert "result" not in reply, f"{label}: {reply}"
        assert reply["error"]["code"] == expect.code, f"{label}: {reply}"
        assert isinstance(reply["error"]["message"], str) and reply["error"]["message"], reply
        return reply
    assert "error" not in reply, f"{label}: {reply}"
    outcome = reply["result"]
    shape = expect.shape
    if shape == "empty":
        assert outcome == {}, f"{label}: {outcome}"
    elif shape == "modern":
        assert list(outcome) == ["resultType", "_meta"] and outcome["resultType"] == "complete", outcome
    elif shape == "tools":
        assert [tool["name"] for tool in outcome["tools"]] == ["turn"], outcome
    elif shape == "discover":
        assert outcome["supportedVersions"] == [MODERN] and outcome["resultType"] == "complete", outcome
    elif shape == "initialize":
        assert outcome["capabilities"] == {"tools": {"listChanged": False}}, outcome
        assert outcome["serverInfo"]["name"] == "mafiabot" and outcome["protocolVersion"], outcome
    elif shape == "tool_error":
        assert outcome["isError"] is True, f"{label}: {outcome}"
        assert outcome["content"][0]["text"].startswith("invalid argument"), outcome
    elif shape == "turn":
        assert outcome["isError"] is False and "structuredContent" in outcome, f"{label}: {outcome}"
        check_text_block(outcome)
    else:
        raise AssertionError(f"unknown shape {shape!r}")
    return reply
