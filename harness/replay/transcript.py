"""The transcript format: one JSON object per line, each holding exactly one step.

Steps (docs/replays.md has examples):
- `{"transcript": {"title": ..., "bodies": [...], "args": [...]}}`: optional header, first step only.
- `{"comment": "..."}`: ignored by the runner; a transcript explains itself with these.
- `{"send": VALUE}`: VALUE as compact JSON plus LF.
- `{"send-raw": "TEXT", "newline": true}`: TEXT's bytes exactly, LF appended unless `newline` is
  false. Characters U+DC80..U+DCFF stand for the raw bytes 0x80..0xFF (Python's surrogateescape),
  so any byte sequence, invalid UTF-8 included, has a spelling in a JSON string.
- `{"expect": PATTERN, "within": SECONDS}`: the next line the body writes, parsed as JSON, must
  match PATTERN (see `matching`).
- `{"expect-raw": "TEXT", "within": SECONDS}`: the next line must be exactly TEXT's bytes.
- `{"close": "stdin"}`: close the body's stdin.
- `{"signal": "TERM"}`: send the body a signal (TERM, INT, HUP or KILL).
- `{"expect-exit": CODE, "within": SECONDS}`: nothing more on stdout, then exit with CODE.

Invariants:
- A transcript is parsed completely before any body starts: a bad file costs no process and
  every error names the file and line. The file is read by `strict_json` (regular file, at most
  MAX_TRANSCRIPT_BYTES, UTF-8) and each line parsed by it as sent (depth and duplicate keys
  bounded; lone surrogates, NaN and big integers kept, since a transcript replays what a client
  sent); the header is the strict model `Header`.
- Every wait has a bound: `within` when given, else DEFAULT_WITHIN (expect) or DEFAULT_EXIT_WITHIN
  (expect-exit). No step waits without one.
- `step_line(step)` writes a step back in this format; `parse_step(json.loads(step_line(s)))`
  gives back an equal step (the recorder relies on it).
"""

from __future__ import annotations

import json
import re
import signal
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from harness import strict_json
from harness.errors import ConfigError
from harness.replay.matching import check_pattern
from harness.typed_inputs import Items, StrictModel, validate

# A reply of the body takes milliseconds; 10 s is the client's own patience (REQUEST_TIMEOUT).
DEFAULT_WITHIN = 10.0
# The body exits within ~100 ms of EOF; 5 s allows for a loaded machine.
DEFAULT_EXIT_WITHIN = 5.0
# Ten minutes is past any honest wait on a body; a larger `within` is a typo that would stall a replay.
MAX_WITHIN = 600.0
SIGNALS = {"TERM": signal.SIGTERM, "INT": signal.SIGINT, "HUP": signal.SIGHUP, "KILL": signal.SIGKILL}
# The longest recorded session in tests/replays is 20 kB; 8 MiB is room for hours of recording, not for a wrong file.
MAX_TRANSCRIPT_BYTES = 8 << 20


class TranscriptError(ConfigError):
    """A transcript that cannot be parsed; the message names the file and line."""


@dataclass(frozen=True)
class Comment:
    text: str


@dataclass(frozen=True)
class Send:
    data: bytes
    message: Any = None  # the JSON value when the step was `send`, for display


@dataclass(frozen=True)
class Expect:
    pattern: Any
    within: float = DEFAULT_WITHIN


@dataclass(frozen=True)
class ExpectRaw:
    data: bytes
    within: float = DEFAULT_WITHIN


@dataclass(frozen=True)
class Close:
    pass


@dataclass(frozen=True)
class Signal:
    name: str


@dataclass(frozen=True)
class ExpectExit:
    code: int
    within: float = DEFAULT_EXIT_WITHIN


Step = Comment | Send | Expect | ExpectRaw | Close | Signal | ExpectExit


class Header(StrictModel):
    """`{"transcript": {title?, bodies?, args?}}`: which bodies the transcript is for and their extra arguments."""

    title: str = ""
    bodies: Items[str] = ()
    args: Items[str] = ()


@dataclass(frozen=True)
class Transcript:
    path: Path
    header: Header
    steps: tuple[tuple[int, Step], ...] = field(default_factory=tuple)  # (line number, step)

    @property
    def name(self) -> str:
        return self.path.name


# -- bytes in JSON strings -----------------------------------------------------------------

def text_of(data: bytes) -> str:
    """Bytes as a str that survives JSON: invalid UTF-8 bytes become U+DC80..U+DCFF."""
    return data.decode("utf-8", errors="surrogateescape")


def bytes_of(text: str) -> bytes:
    """The inverse of `text_of`."""
    return text.encode("utf-8", errors="surrogateescape")


def compact(value: Any) -> bytes:
    """A JSON value as one compact UTF-8 line (no LF); lone surrogates stay \\uXXXX escapes."""
    return _escape_surrogates(json.dumps(value, separators=(",", ":"), ensure_ascii=False)).encode("utf-8")


def json_line(document: Any) -> str:
    """A step as transcript text: readable UTF-8, lone surrogates (raw bytes) as \\udcXX escapes."""
    return _escape_surrogates(json.dumps(document, ensure_ascii=False))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogates(text: str) -> str:
    # In JSON text a surrogate can only sit inside a string, where its escape means the same.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# -- parsing -------------------------------------------------------------------------------

def load_transcript(path: Path) -> Transcript:
    try:
        data = strict_json.read_bounded(path, MAX_TRANSCRIPT_BYTES)
    except strict_json.InputRejected as exc:
        raise TranscriptError(f"transcript: {exc}") from None
    try:
        text = strict_json.decode_utf8(data, f"transcript {path}")
    except strict_json.InputRejected as exc:
        raise TranscriptError(f"{exc} (raw bytes go in send-raw as \\udcXX escapes)") from None
    return parse_transcript(text, path)


def parse_transcript(text: str, path: Path) -> Transcript:
    header = Header()
    steps: list[tuple[int, Step]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            document = strict_json.loads(line, where, max_bytes=MAX_TRANSCRIPT_BYTES, as_sent=True)
        except strict_json.InputRejected as exc:
            raise TranscriptError(str(exc)) from None
        if isinstance(document, dict) and set(document) == {"transcript"}:
            if steps or header != Header():
                raise TranscriptError(f"{where}: the transcript header must be the first step")
            header = validate(Header, document["transcript"],
                              partial(_line_error, where),
                              root="transcript", prefix="transcript.")
            continue
        steps.append((number, parse_step(document, where)))
    if not any(isinstance(step, (Send, Expect, ExpectRaw)) for _, step in steps):
        raise TranscriptError(f"{path}: a transcript needs at least one send or expect step")
    return Transcript(path=path, header=header, steps=tuple(steps))


def _line_error(where: str, field_name: str, message: str) -> TranscriptError:
    return TranscriptError(f"{where}: {field_name}: {message}")


def parse_step(document: Any, where: str = "step") -> Step:
    if not isinstance(document, dict):
        raise TranscriptError(f"{where}: each line must be a JSON object holding one step")
    kinds = [k for k in document if k in _PARSERS]
    if len(kinds) != 1:
        raise TranscriptError(f"{where}: a step has exactly one of {', '.join(_PARSERS)} (found {sorted(document)})")
    kind = kinds[0]
    allowed = {kind} | _OPTIONS.get(kind, set())
    extra = set(document) - allowed
    if extra:
        raise TranscriptError(f"{where}: '{kind}' does not take {', '.join(sorted(extra))}")
    return _PARSERS[kind](document, where)


def _within(document: dict[str, Any], default: float, where: str) -> float:
    within = document.get("within", default)
    if isinstance(within, bool) or not isinstance(within, (int, float)) or not 0 < within <= MAX_WITHIN:
        raise TranscriptError(f"{where}: 'within' must be a number of seconds in (0, {MAX_WITHIN:g}]")
    return float(within)


def _string(document: dict[str, Any], key: str, where: str) -> str:
    value = document[key]
    if not isinstance(value, str):
        raise TranscriptError(f"{where}: '{key}' must be a string")
    return value


def _comment(document: dict[str, Any], where: str) -> Step:
    return Comment(_string(document, "comment", where))


def _send(document: dict[str, Any], _where: str) -> Step:
    return Send(compact(document["send"]) + b"\n", document["send"])


def _send_raw(document: dict[str, Any], where: str) -> Step:
    newline = document.get("newline", True)
    if not isinstance(newline, bool):
        raise TranscriptError(f"{where}: 'newline' must be true or false")
    try:
        data = bytes_of(_string(document, "send-raw", where))
    except UnicodeEncodeError as exc:
        raise TranscriptError(f"{where}: U+{ord(exc.object[exc.start]):04X} in send-raw stands for no byte "
                              "(only \\udc80..\\udcff stand for raw bytes)") from None
    return Send(data + (b"\n" if newline else b""))


def _expect(document: dict[str, Any], where: str) -> Step:
    problem = check_pattern(document["expect"])
    if problem is not None:
        raise TranscriptError(f"{where}: {problem}")
    return Expect(document["expect"], _within(document, DEFAULT_WITHIN, where))


def _expect_raw(document: dict[str, Any], where: str) -> Step:
    return ExpectRaw(bytes_of(_string(document, "expect-raw", where)), _within(document, DEFAULT_WITHIN, where))


def _close(document: dict[str, Any], where: str) -> Step:
    if document["close"] != "stdin":
        raise TranscriptError(f"{where}: the only thing to close is \"stdin\"")
    return Close()


def _signal(document: dict[str, Any], where: str) -> Step:
    name = _string(document, "signal", where)
    if name not in SIGNALS:
        raise TranscriptError(f"{where}: signal must be one of {', '.join(SIGNALS)}")
    return Signal(name)


def _expect_exit(document: dict[str, Any], where: str) -> Step:
    code = document["expect-exit"]
    if isinstance(code, bool) or not isinstance(code, int):
        raise TranscriptError(f"{where}: 'expect-exit' must be an integer exit code (negative: killed by signal)")
    return ExpectExit(code, _within(document, DEFAULT_EXIT_WITHIN, where))


_PARSERS = {"comment": _comment, "send": _send, "send-raw": _send_raw, "expect": _expect,
            "expect-raw": _expect_raw, "close": _close, "signal": _signal, "expect-exit": _expect_exit}
_OPTIONS = {"send-raw": {"newline"}, "expect": {"within"}, "expect-raw": {"within"}, "expect-exit": {"within"}}


# -- writing -------------------------------------------------------------------------------

def header_line(header: Header) -> str:
    fields: dict[str, Any] = {"title": header.title}
    if header.bodies:
        fields["bodies"] = list(header.bodies)
    if header.args:
        fields["args"] = list(header.args)
    return json_line({"transcript": fields})


def step_line(step: Step) -> str:
    """One step in the transcript format (raw bytes stay \\udcXX escapes, so ASCII-safe JSON)."""
    if isinstance(step, Comment):
        document: dict[str, Any] = {"comment": step.text}
    elif isinstance(step, Send):
        document = send_document(step.data)
    elif isinstance(step, Expect):
        document = {"expect": step.pattern}
    elif isinstance(step, ExpectRaw):
        document = {"expect-raw": text_of(step.data)}
    elif isinstance(step, Close):
        document = {"close": "stdin"}
    elif isinstance(step, Signal):
        document = {"signal": step.name}
    else:
        document = {"expect-exit": step.code}
    within = getattr(step, "within", None)
    default = DEFAULT_EXIT_WITHIN if isinstance(step, ExpectExit) else DEFAULT_WITHIN
    if within is not None and within != default:
        document["within"] = within
    return json_line(document)


def send_document(data: bytes) -> dict[str, Any]:
    """`send` when the bytes are exactly a compact JSON value and LF, else `send-raw`."""
    if data.endswith(b"\n"):
        try:
            value = json.loads(data[:-1].decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            value = _NOT_JSON
        if value is not _NOT_JSON and compact(value) + b"\n" == data:
            return {"send": value}
        return {"send-raw": text_of(data[:-1])}
    return {"send-raw": text_of(data), "newline": False}


_NOT_JSON = object()
