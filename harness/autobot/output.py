"""Checking an answer against the intent's `expected_output`.

Invariants:
- `json`: the whole answer parses, or exactly one fenced block parses; the artifact is that JSON
  text. Two parseable fenced blocks are ambiguous and fail (which one did the agent mean?).
- `markdown`: any non-empty text. `plain`: non-empty text without code fences.
- A failure raises `OutputInvalid` with the rule that was broken; the caller keeps the raw answer.
"""

from __future__ import annotations

import json
import re

from harness.errors import HarnessError

FENCED_BLOCK = re.compile(r"^```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)\n```[ \t]*$", re.MULTILINE | re.DOTALL)


class OutputInvalid(HarnessError):
    """The answer does not meet `expected_output`."""


def validate_output(text: str, expected: str) -> str:
    """The artifact text to write; raises OutputInvalid when the answer breaks the format."""
    if not text.strip():
        raise OutputInvalid("the answer is empty")
    if expected == "json":
        return _json_artifact(text)
    if expected == "plain" and "```" in text:
        raise OutputInvalid("expected plain text, but the answer contains a code fence")
    return text


def _json_artifact(text: str) -> str:
    try:
        json.loads(text)
        return text.strip()
    except json.JSONDecodeError as whole_error:
        parsed = []
        for match in FENCED_BLOCK.finditer(text):
            try:
                json.loads(match.group(2))
                parsed.append(match.group(2).strip())
            except json.JSONDecodeError:
                continue
        if len(parsed) == 1:
            return parsed[0]
        if len(parsed) > 1:
            raise OutputInvalid(f"expected JSON, but {len(parsed)} fenced blocks parse; which one is the answer "
                                f"is ambiguous") from None
        raise OutputInvalid(f"expected JSON, but the answer does not parse ({whole_error.msg} at line "
                            f"{whole_error.lineno}) and no fenced block parses either") from None
