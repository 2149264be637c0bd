"""Ledger records built from transport outcomes, the same shape for every kind of run.

Invariants:
- A record never holds the prompt or the answer, only their sizes and the prompt's SHA-256: the
  ledger is an audit of spend, safe to share, and stays small.
- `usage.source` is carried over untouched, so a reader always knows whether a figure is Hermes's
  own or an estimate; a run refused before spawning has `usage.source == "not_run"` and zero cost.
- `parent_id` (from the call or the request) links a child run to its parent, which is how a tree
  of runs is costed; it is null for a top-level run.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from harness.hermes.accounting import RunRecord
from harness.hermes.outcome import RunOutcome, RunRequest, Usage
from harness.ledger.store import STARTED, iso_utc, utc_now

# Fields of a started record that describe the start itself, not the run a settlement reports.
_STARTED_ONLY = frozenset({"record_id", "v", "ts", "status", "phase", "pid", "timeout_s", "hermes_home", "cwd_dir",
                           "mode"})


def run_record(kind: str, outcome: RunOutcome, *, status: str, reason: str | None,
               parent_id: str | None = None, **fields: Any) -> dict[str, Any]:
    """The ledger record of one transport run; `fields` add the caller's own (intent id, target...)."""
    request = outcome.request
    return {
        "kind": kind, "status": status, "reason": reason,
        "parent_id": parent_id if parent_id is not None else request.parent_id,
        "started_at": iso_utc(outcome.started_at), "duration_ms": outcome.duration_ms,
        "profile": request.profile, "provider": request.provider, "model": request.model,
        "answered_by": {"provider": outcome.answered_provider, "model": outcome.answered_model},
        "session_id": outcome.session_id, "exit_code": outcome.exit_code,
        "transport": {"mode": request.mode, "reason": outcome.reason, "detail": outcome.detail or None,
                      "warnings": list(outcome.warnings)},
        **_prompt_fields(request.prompt),
        "response_chars": len(outcome.text) if outcome.ok else 0,
        "usage": outcome.usage.to_dict(),
        **fields,
    }


def refusal_record(kind: str, *, status: str, reason: str, detail: str, profile: str | None = None,
                   provider: str | None = None, model: str | None = None, parent_id: str | None = None,
                   **fields: Any) -> dict[str, Any]:
    """The ledger record of a run refused before Hermes was called (nothing spent)."""
    return {
        "kind": kind, "status": status, "reason": reason, "parent_id": parent_id,
        "started_at": utc_now(), "duration_ms": 0,
        "profile": profile, "provider": provider, "model": model,
        "answered_by": {"provider": None, "model": None}, "session_id": None, "exit_code": None,
        "transport": {"mode": None, "reason": None, "detail": detail, "warnings": []},
        "prompt_chars": 0, "prompt_bytes": 0, "prompt_sha256": None, "response_chars": 0,
        "usage": Usage.not_run().to_dict(),
        **fields,
    }


def _prompt_fields(prompt: str) -> dict[str, Any]:
    prompt_bytes = prompt.encode("utf-8")
    return {"prompt_chars": len(prompt), "prompt_bytes": len(prompt_bytes),
            "prompt_sha256": hashlib.sha256(prompt_bytes).hexdigest()}


def started_record(kind: str, request: RunRequest, *, record_id: str, hermes_run: str, pid: int, home: Path,
                   cwd_dir: Path, **fields: Any) -> dict[str, Any]:
    """The record a journal appends before the spawn; it holds what settling an orphan needs."""
    return {
        "record_id": record_id, "kind": kind, "status": STARTED, "phase": STARTED, "hermes_run": hermes_run,
        "parent_id": request.parent_id, "started_at": utc_now(), "pid": pid,
        "profile": request.profile, "provider": request.provider, "model": request.model,
        "mode": request.mode, "timeout_s": request.timeout_s, "hermes_home": str(home), "cwd_dir": str(cwd_dir),
        **_prompt_fields(request.prompt), **fields,
    }


def orphan_record(started: dict[str, Any], hermes: RunRecord | None, reason: str, *, status: str) -> dict[str, Any]:
    """The settlement of a run whose owner never settled it, from its started record and Hermes's own record."""
    carried = {k: v for k, v in started.items() if k not in _STARTED_ONLY}
    usage = hermes.usage if hermes is not None else Usage.estimate(_int(started.get("prompt_chars")), 0)
    answered = hermes.answered if hermes is not None else None
    warnings = [] if hermes is not None else [
        "hermes_record_missing: Hermes left no record of the session; usage is an estimate of the prompt alone"]
    return {
        **carried, "status": status, "reason": reason, "phase": "settled",
        "started_record_id": started.get("record_id"), "duration_ms": None,
        "answered_by": {"provider": answered.provider if answered else None,
                        "model": answered.model if answered else None},
        "session_id": hermes.session_id if hermes is not None else None, "exit_code": None,
        "transport": {"mode": started.get("mode"), "reason": reason,
                      "detail": "the command that started this run ended without settling it; its Hermes tree "
                                "was stopped by the run's supervisor", "warnings": warnings},
        "response_chars": 0, "usage": usage.to_dict(),
    }


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
