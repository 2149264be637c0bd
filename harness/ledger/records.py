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
from typing import Any

from harness.hermes.outcome import RunOutcome, Usage
from harness.ledger.store import iso_utc, utc_now


def run_record(kind: str, outcome: RunOutcome, *, status: str, reason: str | None,
               parent_id: str | None = None, **fields: Any) -> dict[str, Any]:
    """The ledger record of one transport run; `fields` add the caller's own (intent id, target...)."""
    request = outcome.request
    prompt_bytes = request.prompt.encode("utf-8")
    return {
        "kind": kind, "status": status, "reason": reason,
        "parent_id": parent_id if parent_id is not None else request.parent_id,
        "started_at": iso_utc(outcome.started_at), "duration_ms": outcome.duration_ms,
        "profile": request.profile, "provider": request.provider, "model": request.model,
        "answered_by": {"provider": outcome.answered_provider, "model": outcome.answered_model},
        "session_id": outcome.session_id, "exit_code": outcome.exit_code,
        "transport": {"mode": request.mode, "reason": outcome.reason, "detail": outcome.detail or None,
                      "warnings": list(outcome.warnings)},
        "prompt_chars": len(request.prompt), "prompt_bytes": len(prompt_bytes),
        "prompt_sha256": hashlib.sha256(prompt_bytes).hexdigest(),
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
