"""JSON inputs read with their limits checked first: the one way the harness reads a JSON file or text it is given.

Invariants:
- A file is opened without following it into a FIFO or device (`O_NONBLOCK`, then `fstat`): only a
  regular file is read, and never more than `max_bytes` + 1 bytes of it, so `/dev/zero`, a FIFO or a
  directory is one clear refusal, never a hang or an exhausted memory.
- Bytes must be UTF-8. One leading UTF-8 byte-order mark is dropped (editors write it and it means
  nothing in UTF-8); a UTF-16 or UTF-32 mark is refused by name rather than read as garbage.
- The nesting depth is measured before parsing, by one linear scan with strings blanked out, so a
  100,000-level document is refused with its depth and `RecursionError` can never happen.
- Refused while parsing: duplicate keys in an object (naming the key), `NaN`/`Infinity`/`-Infinity`,
  a number that does not fit a double (`1e400`) or an integer beyond 64 bits, and a `\\ud800`-style
  escape that leaves a lone surrogate (no UTF-8 encoding exists for it). Only `as_sent=True` keeps
  the last three, for transcripts, which spell exactly what a client sent, valid or not (raw bytes
  as `\\udcXX`, a `NaN` the body must refuse); size, depth and duplicate keys hold there too.
- Every refusal is an `InputRejected` whose message is one line: where (file, and line when the
  parser knows it) and why, never the input's text (no key, number or string of it): a file named by
  mistake or by a host (a `.env`) must not come back in the error. Callers re-raise it as their own
  layer's error; nothing else escapes.
"""

from __future__ import annotations

import codecs
import json
import math
import os
import re
import stat
from collections.abc import Iterable
from itertools import accumulate
from pathlib import Path
from typing import Any, BinaryIO

from harness.errors import HarnessError

# An intent, a plan or a dispatch input is a few kB; 1 MiB leaves room for large context without letting a
# mistaken path (a log, an image) be read whole.
DEFAULT_MAX_BYTES = 1 << 20
# The deepest input the harness defines is four levels (a plan's subtask's list); 64 leaves room for the free
# JSON of a context or an `expect` pattern while staying far from the interpreter's recursion limit.
DEFAULT_MAX_DEPTH = 64
INT64_MAX = (1 << 63) - 1
# An integer spelt with more digits than INT64_MAX cannot fit, and is refused before int() reads it.
_INT64_DIGITS = len(str(INT64_MAX))

# Possessive: an unterminated string fails in one pass instead of backtracking through itself.
_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE = re.compile("[\ud800-\udfff]")
_FOREIGN_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                 (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


class InputRejected(HarnessError):
    """A JSON or YAML input broke a limit or does not parse; the message names where and why, on one line."""


def read_bounded(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of the regular file at `path`, at most `max_bytes` of them; InputRejected otherwise."""
    try:
        with open_regular(path) as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputRejected(f"cannot read {_shown(path)}: {exc.strerror or exc}") from None
    return _within_size(data, _shown(path), max_bytes)


def open_regular(path: Path) -> BinaryIO:
    """The regular file at `path` open for reading, never blocking on a FIFO; InputRejected otherwise.

    FileNotFoundError passes as it is, for callers to whom a missing file means an empty one."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InputRejected(f"cannot read {_shown(path)}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(descriptor).st_mode
    except OSError as exc:
        os.close(descriptor)
        raise InputRejected(f"cannot read {_shown(path)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise InputRejected(f"{_shown(path)} is not a regular file ({_kind(mode)})")
    # Non-blocking only mattered for opening: a regular file's reads never wait anyway.
    return os.fdopen(descriptor, "rb")


def _within_size(data: bytes, where: str, max_bytes: int) -> bytes:
    if len(data) > max_bytes:
        raise InputRejected(f"{where} is larger than {max_bytes} bytes")
    return data


def decode_utf8(data: bytes, where: str) -> str:
    """`data` as text: UTF-8 only, one leading UTF-8 BOM dropped; InputRejected naming the first bad byte."""
    for mark, encoding in _FOREIGN_BOMS:
        if data.startswith(mark):
            raise InputRejected(f"{where} is {encoding} text (it starts with a {encoding} byte-order mark); "
                                f"save it as UTF-8")
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputRejected(f"{where} is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def load_file(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The JSON value in the file at `path`, every limit of the module checked."""
    return load_bytes(read_bounded(path, max_bytes), _shown(path), max_bytes=max_bytes, max_depth=max_depth)


def load_stream(stream: BinaryIO, where: str, *, max_bytes: int = DEFAULT_MAX_BYTES,
                max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The JSON value read from `stream` (stdin), never more than `max_bytes` + 1 bytes of it read."""
    try:
        data = stream.read(max_bytes + 1)
    except OSError as exc:
        raise InputRejected(f"cannot read {where}: {exc.strerror or exc}") from None
    return load_bytes(data, where, max_bytes=max_bytes, max_depth=max_depth)


def load_bytes(data: bytes, where: str, *, max_bytes: int = DEFAULT_MAX_BYTES,
               max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The JSON value of `data`, every limit of the module checked; `where` names it in errors."""
    return loads(decode_utf8(_within_size(data, where, max_bytes), where), where, max_bytes=max_bytes, max_depth=max_depth)


def loads(text: str, where: str, *, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH,
          as_sent: bool = False) -> Any:
    """The JSON value of `text` (already decoded), every limit of the module checked; `where` names it in errors."""
    if len(text) > max_bytes:
        raise InputRejected(f"{where} is longer than {max_bytes} characters")
    text = text.removeprefix("\ufeff")
    # Fewer opening brackets than the limit cannot nest deeper than it, so ordinary inputs skip the scan.
    depth = 0 if text.count("[") + text.count("{") <= max_depth else nesting_depth(text)
    if depth > max_depth:
        raise InputRejected(f"{where} nests {depth} levels deep; at most {max_depth}")
    try:
        numbers: dict[str, Any] = {} if as_sent else {"parse_constant": _no_constant, "parse_float": _finite_float,
                                                      "parse_int": _bounded_int}
        value = json.loads(text, object_pairs_hook=_unique_keys, **numbers)
    except json.JSONDecodeError as exc:
        raise InputRejected(f"{where} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") \
            from None
    except ValueError as exc:  # a hook's refusal, or (as sent) an integer past Python's 4300-digit conversion limit
        raise InputRejected(f"{where}: {exc}") from None
    if not as_sent:
        refuse_lone_surrogates(value, where)
    return value


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of JSON `text`, brackets inside strings not counted; linear, no recursion."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets), initial=0))


class _Refused(ValueError):
    """Raised from inside `json.loads` hooks (which may raise only ValueError); `loads` adds the input's name."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise _Refused("a key appears twice in one object")
        document[key] = value
    return document


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _finite_float(spelling: str) -> float:
    value = float(spelling)
    if not math.isfinite(value):
        raise _Refused("a number does not fit a double")
    return value


def _bounded_int(spelling: str) -> int:
    # Checked on the spelling first: int() of a 5,000-digit string is itself an error (and slow).
    if len(spelling.lstrip("-")) > _INT64_DIGITS or abs(value := int(spelling)) > INT64_MAX:
        raise _Refused(f"an integer of {len(spelling.lstrip('-'))} digits does not fit 64 bits")
    return value


def refuse_lone_surrogates(value: Any, where: str) -> None:
    """InputRejected when a string of `value` (a key or a value, at any depth) holds a lone surrogate."""
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str) and (found := _SURROGATE.search(item)):
            raise InputRejected(f"{where}: a string holds a lone surrogate \\u{ord(found.group()):04x}, which is "
                                f"no character")


def _shown(path: Path | str) -> str:
    # A path can hold a lone surrogate (undecodable bytes in a file name); shown escaped, it cannot break stderr.
    return str(path).encode("utf-8", errors="backslashreplace").decode("utf-8")


def _kind(mode: int) -> str:
    kinds: Iterable[tuple[Any, str]] = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                                        (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                                        (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a file")
