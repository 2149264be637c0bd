"""Partial matching of a reply against a transcript pattern, and the diff shown on a mismatch.

Pattern semantics (in the spirit of the Ada Language Server tester's matchers):
- an object matches an object that has every key of the pattern with a matching value; other
  keys are allowed. A key whose pattern is "<ABSENT>" must not be there.
- a list matches a list of the same length, element by element.
- "<ANY>" matches any value (the key must be present); "<STRING>", "<NUMBER>", "<INTEGER>",
  "<BOOLEAN>", "<OBJECT>", "<ARRAY>" match any value of that JSON type.
- {"<HAS>": [p, ...]}: an array with, for each p, some element matching p.
- {"<HAS-NOT>": [p, ...]}: an array with no element matching any p.
- {"<CONTAINS>": "text"}: a string containing text.
- {"<LEN>": n}: an array, object or string of length n.
- {"<ALL>": [p, ...]}: matches what every p matches.
- any other scalar matches an equal value of the same JSON type (true is not 1; 1 equals 1.0).

Invariants:
- `first_mismatch` is a pure function of (pattern, actual) and reports the first difference in
  document order, with a JSONPath-like location (`$.result.content[0].text`).
- `render_diff` only ever shows the parts of the reply the pattern talks about, so a 9 kB trace
  whose one field differs gives a diff of a few lines.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

ANY, ABSENT = "<ANY>", "<ABSENT>"
TYPE_MATCHERS = {
    "<STRING>": lambda v: isinstance(v, str),
    "<NUMBER>": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "<INTEGER>": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "<BOOLEAN>": lambda v: isinstance(v, bool),
    "<OBJECT>": lambda v: isinstance(v, dict),
    "<ARRAY>": lambda v: isinstance(v, list),
}
OPERATORS = ("<HAS>", "<HAS-NOT>", "<CONTAINS>", "<LEN>", "<ALL>")
# Long strings in a diff are cut here: the diff is for a person, the reply is in the log.
DISPLAY_STRING = 160
_MISSING = "<missing>"


@dataclass(frozen=True)
class Mismatch:
    path: str
    reason: str


def operator_of(pattern: Any) -> str | None:
    if isinstance(pattern, dict) and len(pattern) == 1:
        (key,) = pattern
        if isinstance(key, str) and key in OPERATORS:
            return key
    return None


def first_mismatch(pattern: Any, actual: Any, path: str = "$") -> Mismatch | None:
    if isinstance(pattern, str) and pattern == ANY:
        return None
    if isinstance(pattern, str) and pattern in TYPE_MATCHERS:
        ok = TYPE_MATCHERS[pattern](actual)
        return None if ok else Mismatch(path, f"expected {pattern[1:-1].lower()}, got {_show(actual)}")
    operator = operator_of(pattern)
    if operator is not None:
        return _operator_mismatch(operator, pattern[operator], actual, path)
    if isinstance(pattern, dict):
        return _object_mismatch(pattern, actual, path)
    if isinstance(pattern, list):
        if not isinstance(actual, list):
            return Mismatch(path, f"expected an array, got {_show(actual)}")
        if len(actual) != len(pattern):
            return Mismatch(path, f"expected an array of {len(pattern)} elements, got {len(actual)}")
        for index, (p, a) in enumerate(zip(pattern, actual, strict=True)):
            found = first_mismatch(p, a, f"{path}[{index}]")
            if found is not None:
                return found
        return None
    if _scalar_equal(pattern, actual):
        return None
    return Mismatch(path, f"expected {_show(pattern)}, got {_show(actual)}")


def matches(pattern: Any, actual: Any) -> bool:
    return first_mismatch(pattern, actual) is None


def _object_mismatch(pattern: dict[str, Any], actual: Any, path: str) -> Mismatch | None:
    if not isinstance(actual, dict):
        return Mismatch(path, f"expected an object, got {_show(actual)}")
    for key, sub in pattern.items():
        where = f"{path}.{key}"
        if sub == ABSENT:
            if key in actual:
                return Mismatch(where, f"expected no '{key}', got {_show(actual[key])}")
            continue
        if key not in actual:
            return Mismatch(where, f"expected '{key}', it is missing")
        found = first_mismatch(sub, actual[key], where)
        if found is not None:
            return found
    return None


def _operator_mismatch(operator: str, argument: Any, actual: Any, path: str) -> Mismatch | None:
    if operator == "<ALL>":
        for sub in argument:
            found = first_mismatch(sub, actual, path)
            if found is not None:
                return found
        return None
    if operator == "<CONTAINS>":
        if isinstance(actual, str) and isinstance(argument, str) and argument in actual:
            return None
        return Mismatch(path, f"expected a string containing {_show(argument)}, got {_show(actual)}")
    if operator == "<LEN>":
        if isinstance(actual, (list, dict, str)) and len(actual) == argument:
            return None
        size = len(actual) if isinstance(actual, (list, dict, str)) else "no length"
        return Mismatch(path, f"expected length {argument}, got {size}")
    if not isinstance(actual, list):
        return Mismatch(path, f"expected an array, got {_show(actual)}")
    for sub in argument:
        hit = next((i for i, element in enumerate(actual) if matches(sub, element)), None)
        if operator == "<HAS>" and hit is None:
            return Mismatch(path, f"expected an element matching {_show(sub)}, none of {len(actual)} does")
        if operator == "<HAS-NOT>" and hit is not None:
            return Mismatch(f"{path}[{hit}]", f"expected no element matching {_show(sub)}, found {_show(actual[hit])}")
    return None


def check_pattern(pattern: Any) -> str | None:
    """A problem with a pattern's own matchers (a bad operator argument), or None."""
    operator = operator_of(pattern)
    if operator in ("<HAS>", "<HAS-NOT>", "<ALL>"):
        argument = pattern[operator]
        if not isinstance(argument, list):
            return f"{operator} takes a list of patterns"
        return next((p for p in map(check_pattern, argument) if p), None)
    if operator == "<CONTAINS>" and not isinstance(pattern[operator], str):
        return "<CONTAINS> takes a string"
    if operator == "<LEN>" and (isinstance(pattern[operator], bool) or not isinstance(pattern[operator], int)):
        return "<LEN> takes an integer"
    if isinstance(pattern, dict):
        return next((p for p in map(check_pattern, pattern.values()) if p), None)
    if isinstance(pattern, list):
        return next((p for p in map(check_pattern, pattern) if p), None)
    return None


def _scalar_equal(pattern: Any, actual: Any) -> bool:
    if isinstance(pattern, bool) or isinstance(actual, bool):
        return type(pattern) is type(actual) and pattern == actual
    if isinstance(pattern, (int, float)) and isinstance(actual, (int, float)):
        return pattern == actual
    return type(pattern) is type(actual) and pattern == actual


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= DISPLAY_STRING else text[: DISPLAY_STRING - 3] + "..."


# -- the diff ------------------------------------------------------------------------------

def projection(pattern: Any, actual: Any) -> Any:
    """`actual` cut to what `pattern` talks about; parts that match are shown as the pattern."""
    if matches(pattern, actual):
        return pattern
    if operator_of(pattern) is not None or (isinstance(pattern, str) and pattern in TYPE_MATCHERS):
        return _shortened(actual)
    if isinstance(pattern, dict) and isinstance(actual, dict):
        shown: dict[str, Any] = {}
        for key, sub in pattern.items():
            if sub == ABSENT:
                shown[key] = _shortened(actual[key]) if key in actual else ABSENT
            else:
                shown[key] = projection(sub, actual[key]) if key in actual else _MISSING
        return shown
    if isinstance(pattern, list) and isinstance(actual, list) and len(pattern) == len(actual):
        return [projection(p, a) for p, a in zip(pattern, actual, strict=True)]
    return _shortened(actual)


def _shortened(value: Any) -> Any:
    if isinstance(value, str) and len(value) > DISPLAY_STRING:
        return value[: DISPLAY_STRING - 3] + "..."
    if isinstance(value, dict):
        return {k: _shortened(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shortened(v) for v in value]
    return value


def render_diff(pattern: Any, actual: Any, expected_label: str = "expected", actual_label: str = "received") -> str:
    """A unified diff of the pattern against the projected reply, indented JSON both sides."""
    left = json.dumps(pattern, indent=2, ensure_ascii=False).splitlines()
    right = json.dumps(projection(pattern, actual), indent=2, ensure_ascii=False).splitlines()
    lines = difflib.unified_diff(left, right, expected_label, actual_label, n=2, lineterm="")
    return "\n".join(lines)
