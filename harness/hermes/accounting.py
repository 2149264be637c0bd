"""Hermes's own record of a run: tokens, cost, and which provider and model really answered.

Two sources, one per mode (see docs/delegation.md):
- chat (`hermes chat -Q -q`): the run's row in `<home>/state.db`, found by the `session_id:` line
  Hermes prints on stderr. `sessions` holds the totals; `session_model_usage` rows with an empty
  `task` are the main agent's calls, one row per (model, provider) that answered; `messages` says
  whether the run ended on an assistant message.
- oneshot (`hermes -z --usage-file F`): the JSON file Hermes writes even when the run fails.

Invariants:
- Reading never writes: state.db is opened read-only (`mode=ro`), and a missing or unreadable
  record is `None` (the caller then estimates, and says so), never an exception.
- `failed` is Hermes's verdict, not ours: the usage file's `failed`, or for state.db no API call
  made or no final assistant message.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import strict_json
from harness.hermes.locate import Route
from harness.hermes.outcome import Usage

SESSION_ID_LINE = re.compile(r"^session_id:\s*(\S+)\s*$", re.MULTILINE)
# Hermes holds state.db briefly at exit (WAL checkpoint); a reader waits at most this long.
STATE_DB_BUSY_SECONDS = 5.0
MAX_USAGE_FILE_BYTES = 1 << 16


@dataclass(frozen=True)
class RunRecord:
    """What Hermes recorded about one run."""

    source: str
    failed: bool
    usage: Usage
    routes: tuple[Route, ...]
    session_id: str | None

    @property
    def answered(self) -> Route | None:
        return self.routes[0] if len(self.routes) == 1 else None


def session_id_from(stderr: str) -> str | None:
    found = SESSION_ID_LINE.findall(stderr)
    return found[-1] if found and found[-1] != "None" else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_state_db(home: Path, session_id: str) -> RunRecord | None:
    path = home / "state.db"
    if not path.is_file():
        return None
    try:
        # as_uri quotes the path: a home holding `#` or `%` would otherwise open (and create) another file.
        connection = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=STATE_DB_BUSY_SECONDS)
    except sqlite3.Error:
        return None
    try:
        connection.row_factory = sqlite3.Row
        row = connection.execute(
            "SELECT model, billing_provider, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,"
            " reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, api_call_count"
            " FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            return None
        routes = [Route(_str(r["billing_provider"]), _str(r["model"])) for r in connection.execute(
            "SELECT DISTINCT model, billing_provider FROM session_model_usage"
            " WHERE session_id = ? AND task = '' AND api_call_count > 0", (session_id,))]
        last = connection.execute("SELECT role FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT 1",
                                  (session_id,)).fetchone()
    except sqlite3.Error:
        return None
    finally:
        connection.close()
    if not routes and row["billing_provider"]:
        routes = [Route(_str(row["billing_provider"]), _str(row["model"]))]
    actual = _float(row["actual_cost_usd"])
    usage = Usage(source="hermes_state_db", input_tokens=_int(row["input_tokens"]),
                  output_tokens=_int(row["output_tokens"]), cache_read_tokens=_int(row["cache_read_tokens"]),
                  cache_write_tokens=_int(row["cache_write_tokens"]), reasoning_tokens=_int(row["reasoning_tokens"]),
                  api_calls=_int(row["api_call_count"]),
                  cost_usd=actual if actual is not None else _float(row["estimated_cost_usd"]),
                  cost_status=_str(row["cost_status"]))
    failed = not usage.api_calls or last is None or last["role"] != "assistant"
    return RunRecord("hermes_state_db", failed, usage, tuple(routes), session_id)


def read_usage_file(path: Path) -> RunRecord | None:
    try:  # a regular file only: a FIFO in its place must not hold the settling of the run
        report = json.loads(strict_json.read_bounded(path, MAX_USAGE_FILE_BYTES))
    except (strict_json.InputRejected, ValueError):
        return None
    if not isinstance(report, dict):
        return None
    usage = Usage(source="hermes_usage_file", input_tokens=_int(report.get("input_tokens")),
                  output_tokens=_int(report.get("output_tokens")),
                  cache_read_tokens=_int(report.get("cache_read_tokens")),
                  cache_write_tokens=_int(report.get("cache_write_tokens")),
                  reasoning_tokens=_int(report.get("reasoning_tokens")), api_calls=_int(report.get("api_calls")),
                  cost_usd=_float(report.get("estimated_cost_usd")), cost_status=_str(report.get("cost_status")))
    provider, model = _str(report.get("provider")), _str(report.get("model"))
    routes = (Route(provider, model),) if provider or model else ()
    failed = report.get("failed") is not False or report.get("completed") is False
    return RunRecord("hermes_usage_file", failed, usage, routes, _str(report.get("session_id")))
