"""A turn's trace (the `structuredContent` of `turn`) as a plain-text table.

Invariants:
- One row per step, in the order the body sent them (the static order, 1..23); each row is
  one line: control characters in a detail become spaces and long details are shortened,
  so a row can always be found by its index at the start of a line.
- Passes are shown as desc1..desc4 (steps 3-10) and asc1..asc4 (steps 11-18); not D1/A1,
  which are organ names.
- Only the standard library: the table is a handful of padded columns.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

DETAIL_WIDTH = 64
HEADERS = ("#", "step", "organ", "pass", "status", "detail")
FIRST_PASS_STEP = 3
LAST_PASS_STEP = 18


def pass_label(step_index: int) -> str:
    """'desc1'..'desc4', 'asc1'..'asc4' for the pass a step belongs to; '' outside the passes."""
    if not FIRST_PASS_STEP <= step_index <= LAST_PASS_STEP:
        return ""
    number = (step_index - FIRST_PASS_STEP) // 2 + 1
    return f"desc{number}" if number <= 4 else f"asc{number - 4}"


def one_line(text: str, width: int | None = None) -> str:
    """`text` made safe for a single table cell."""
    flat = "".join(" " if unicodedata.category(ch).startswith("C") else ch for ch in text)
    if width is not None and len(flat) > width:
        flat = flat[: width - 3] + "..."
    return flat


def step_rows(steps: Sequence[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for step in steps:
        index = int(step.get("index", 0))
        rows.append((
            str(index),
            one_line(str(step.get("name", ""))),
            one_line(str(step.get("organ", ""))),
            pass_label(index),
            one_line(str(step.get("status", ""))),
            one_line(str(step.get("detail", "")), DETAIL_WIDTH),
        ))
    return rows


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]],
                 right_aligned: frozenset[int] = frozenset({0})) -> str:
    """Columns separated by ' | ', a rule under the headers; column 0 right-aligned."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=False)]

    def line(cells: Sequence[str]) -> str:
        padded = [cell.rjust(w) if i in right_aligned else cell.ljust(w)
                  for i, (cell, w) in enumerate(zip(cells, widths, strict=False))]
        return " | ".join(padded).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(headers), rule] + [line(row) for row in rows])


def render_trace(trace: Mapping[str, Any]) -> str:
    """The trace: a heading, the 23-step table, then energy, passes, route and coherence.

    The output is not repeated here: the CLI prints it first, above its trace.
    """
    session = trace.get("session", {})
    route = trace.get("route", {})
    coherence = trace.get("coherence", {})
    heading = (f"turn {trace.get('turn')} of session uid={session.get('uid')!r} "
               f"channel={session.get('channel')!r} server={session.get('server')!r}")
    summary = [
        ("energy E", _number(trace.get("energy"))),
        ("passes_run", f"{trace.get('passes_run')} of 8"),
        ("route", f"{route.get('intent')} -> {route.get('target')}"),
        ("coherence", f"score {_number(coherence.get('score'))}, drift {_number(coherence.get('drift'))}"),
    ]
    label_width = max(len(label) for label, _ in summary)
    footer = [f"{label.ljust(label_width)}  {value}" for label, value in summary]
    table = render_table(HEADERS, step_rows(trace.get("steps", [])))
    return "\n".join([heading, table, *footer])


def _number(value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.3f}"
    return str(value)
