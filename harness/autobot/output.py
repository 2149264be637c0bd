"""Checking an answer against the intent's `expected_output`.

Invariants:
- `json`: the whole answer parses, or exactly one fenced block parses; the artifact is that JSON
  text. Two parseable fenced blocks are ambiguous and fail (which one did the agent mean?).
- JSON is strict: `NaN`, `Infinity` and `-Infinity` (which Python's reader accepts and no other JSON
  reader does) are refused, and so is nesting deeper than MAX_JSON_DEPTH. The depth is measured by
  the input readers' own linear scan (`strict_json.nesting_depth`) before the parser runs, so no
  answer can drive the recursive parser into `RecursionError`: every answer ends in an artifact or
  in `OutputInvalid`.
- `markdown`: any non-empty text. `plain`: non-empty text without code fences.
- A failure raises `OutputInvalid` with the rule that was broken; the caller keeps the raw answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness import strict_json
from harness.errors import HarnessError

FENCED_BLOCK = re.compile(r"^```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)\n```[ \t]*$", re.MULTILINE | re.DOTALL)
# Far deeper than any document a model writes for a person or a parser, far below Python's recursion limit.
MAX_JSON_DEPTH = 64


class OutputInvalid(HarnessError):
    """The answer does not meet `expected_output`."""


class _NotStrict(ValueError):
    pass


def validate_output(text: str, expected: str) -> str:
    """The artifact text to write; raises OutputInvalid when the answer breaks the format."""
    if not text.strip():
        raise OutputInvalid("the answer is empty")
    if expected == "json":
        return _json_artifact(text)
    if expected == "plain" and "```" in text:
        raise OutputInvalid("expected plain text, but the answer contains a code fence")
    return text


def _refuse_constant(name: str) -> Any:
    raise _NotStrict(f"{name} is not JSON")


def parse_strict(text: str) -> Any:
    """json.loads without NaN/Infinity and without deep nesting; ValueError (a JSONDecodeError or
    the strictness rule broken) otherwise."""
    depth = strict_json.nesting_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise _NotStrict(f"it nests {depth} levels deep; at most {MAX_JSON_DEPTH}")
    return json.loads(text, parse_constant=_refuse_constant)


def _json_artifact(text: str) -> str:
    try:
        parse_strict(text)
        return text.strip()
    except ValueError as whole_error:
        parsed = []
        for match in FENCED_BLOCK.finditer(text):
            try:
                parse_strict(match.group(2))
                parsed.append(match.group(2).strip())
            except ValueError:
                continue
        if len(parsed) == 1:
            return parsed[0]
        if len(parsed) > 1:
            raise OutputInvalid(f"expected JSON, but {len(parsed)} fenced blocks parse; which one is the answer "
                                f"is ambiguous") from None
        raise OutputInvalid(f"expected JSON, but the answer does not parse ({_why(whole_error)}) and no fenced "
                            f"block parses either") from None


def _why(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno}"
    return str(error)
