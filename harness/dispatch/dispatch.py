"""agent-dispatch: deliver a task to a named agent over a Hermes profile query, with the seed's envelopes.

Invariants:
- Inputs are validated before anything else, as the strict model `DispatchInputs` (then the
  target against the registry); a bad one is an `error` envelope with code `invalid_input`
  naming the field, and nothing runs or is ledgered. A JSON context is read by `strict_json`.
- `delivered` means the transport says ok: Hermes exited 0, printed a non-empty reply, and its own
  record does not say the run failed. Anything else is an `error` envelope; `retryable` is true for
  transient causes only (provider errors, timeouts). Delivery never claims the task was done.
- The envelope carries at most `max_chars` of the reply (default the seed intent's 4000); a longer one is
  cut with its length said, and kept whole in a file under the state folder that the envelope names.
- The prompt has the seed's shape and stays short: context is one line of text or compact JSON,
  at most MAX_CONTEXT_CHARS; the full artifact travels by `reference_id`, never inline.
- Every dispatch that ran (or was refused as nested) is ledgered once, like a delegation: a run that
  spawned Hermes has its `started` record before the spawn and one settlement after (`ledger.journal`).
  Each of its records carries its `dispatch_id` (the caller's, named in advance, or a new one), so a reader
  whose writer died finds its settlement (`recovered_envelope`).
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from harness import strict_json
from harness.answers import DEFAULT_MAX_CHARS, bounded
from harness.dispatch.registry import Registry, default_registry, normalize
from harness.errors import FieldError
from harness.hermes import (
    DELEGATED_ENV,
    HermesTransport,
    RunOutcome,
    RunRequest,
    Transport,
    TransportSettings,
    cancellation,
    delegated_marker,
)
from harness.hermes import outcome as reasons
from harness.ledger.journal import RunJournal
from harness.ledger.records import refusal_record, run_record
from harness.ledger.store import LedgerError, LedgerStore
from harness.ledger.stores import opened_ledger
from harness.typed_inputs import StrictModel, line, matching, validate

TRANSPORT_NAME = "hermes-profile-query"
# The error code of inputs refused before anything ran (the seed's envelope `code`).
INVALID_INPUT = "invalid_input"
# The seed's minimum for email triage; a profile query that does real work takes minutes.
DEFAULT_TIMEOUT_S = 180.0
MAX_CONTEXT_CHARS = 2000
MAX_FIELD_CHARS = 200
REFERENCE_ID = re.compile(r"^[^\s\x00-\x1f]{1,200}$")


class DispatchInputError(FieldError):
    """A dispatch input is unusable (the envelope's `invalid_input`)."""


def context_line(context: str | dict[str, Any]) -> str:
    """The context as the prompt's one line: compact JSON for an object, whitespace runs collapsed for text."""
    if isinstance(context, dict):
        return json.dumps(context, ensure_ascii=False, separators=(",", ":"))
    return " ".join(context.split())


def _short_context(value: Any) -> str | dict[str, Any]:
    if not isinstance(value, (str, dict)):
        # ValueError, not TypeError: pydantic turns only a ValueError into a field error naming the field.
        raise ValueError("must be a string or a JSON object")  # noqa: TRY004
    shown = context_line(value)
    if not shown.strip() or shown == "{}":
        raise ValueError("must not be empty")
    if len(shown) > MAX_CONTEXT_CHARS:
        raise ValueError(f"is {len(shown)} characters; keep it under {MAX_CONTEXT_CHARS} and let the target fetch "
                         f"the artifact by reference_id")
    return value


FieldText = Annotated[str, line(MAX_FIELD_CHARS)]


class DispatchInputs(StrictModel):
    """The seed's four inputs; `target` is normalised once the registry has found it."""

    target: FieldText
    task_source: Annotated[str, line(MAX_FIELD_CHARS, strip=True)]
    context: Annotated[Any, AfterValidator(_short_context)]
    reference_id: Annotated[FieldText, matching(REFERENCE_ID, "an identifier without spaces or control characters")]

    def context_line(self) -> str:
        return context_line(self.context)


@dataclass(frozen=True)
class DispatchSettings:
    ledger_path: Path
    registry: Registry = field(default_factory=default_registry)
    timeout_s: float = DEFAULT_TIMEOUT_S
    # What of the reply the envelope carries (the rest is kept in a file the envelope names).
    max_chars: int = DEFAULT_MAX_CHARS
    transport: TransportSettings = field(default_factory=TransportSettings)
    parent_id: str | None = None
    # Set by a host that cancels this one dispatch (not the whole command); see `cancellation`.
    stop: threading.Event | None = field(default=None, compare=False)
    # A libpq URL: the ledger is that database's, its run journals beside `ledger_path` (harness.ledger.stores).
    database: str | None = None
    # Written on every record of the dispatch; named in advance by a caller that must find them again (serve's jobs).
    dispatch_id: str | None = None


def new_dispatch_id() -> str:
    return "dsp-" + secrets.token_hex(8)


def parse_context(text: str) -> str | dict[str, Any]:
    """A command-line context: a JSON object when it looks like one, else the text itself."""
    if not text.lstrip().startswith("{"):
        return text
    try:
        value = strict_json.loads(text, "the context")
    except strict_json.InputRejected as exc:
        raise DispatchInputError("context", f"starts like a JSON object but does not parse: {exc}") from None
    if not isinstance(value, dict):
        raise DispatchInputError("context", "must be a string or a JSON object")
    return value


def parse_inputs(raw: Mapping[str, Any], registry: Registry) -> DispatchInputs:
    """Validated inputs (target normalised); DispatchInputError naming the first bad field otherwise."""
    inputs = validate(DispatchInputs, dict(raw), DispatchInputError, root="(inputs)")
    if registry.lookup(inputs.target) is None:
        raise DispatchInputError("target", f"{inputs.target!r} is not a known target "
                                           f"(known: {', '.join(registry.names)})")
    return inputs.model_copy(update={"target": normalize(inputs.target)})


def build_prompt(inputs: DispatchInputs, sender: str) -> str:
    return (f"Delegated task from {sender}.\n"
            f"target={inputs.target}\n"
            f"task_source={inputs.task_source}\n"
            f"reference_id={inputs.reference_id}\n"
            f"context={inputs.context_line()}\n\n"
            "Fetch the full artifact using reference_id if needed, process it using your own workflow, "
            "and reply with a concise summary.\n")


def error_code(reason: str | None) -> str:
    if reason in (reasons.PROFILE_NOT_FOUND, reasons.SESSION_NOT_FOUND):
        return "not_found"
    if reasons.is_auth(reason):
        return "auth_error"
    if reason is not None and reasons.TIMEOUT_PATTERN.match(reason):
        return "timeout"
    if reason == reasons.PROMPT_TOO_LARGE:
        return INVALID_INPUT
    return "transport_error"


class DispatchStatus(StrEnum):
    """What a dispatch came to: its envelope's `status`, with an `error` whose code is INVALID_INPUT told apart."""

    DELIVERED = "delivered"
    # Nothing was run: the inputs (or the registry) were refused.
    INVALID_INPUT = INVALID_INPUT
    # Run, and not delivered.
    ERROR = "error"


@dataclass
class DispatchResult:
    envelope: dict[str, Any]

    @property
    def status(self) -> DispatchStatus:
        if self.envelope["status"] == DispatchStatus.DELIVERED:
            return DispatchStatus.DELIVERED
        return DispatchStatus.INVALID_INPUT if self.envelope["code"] == INVALID_INPUT else DispatchStatus.ERROR


def _timestamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _echo(raw: Mapping[str, Any]) -> dict[str, Any]:
    return {name: raw.get(name) if isinstance(raw.get(name), str) else None
            for name in ("target", "task_source", "reference_id")}


def error_envelope(code: str, message: str, retryable: bool, details: dict[str, Any],
                   echo: Mapping[str, Any]) -> dict[str, Any]:
    return {"status": "error", "timestamp": _timestamp(), "code": code, "message": message, "retryable": retryable,
            "details": details, **_echo(echo)}


def dispatch(raw: Mapping[str, Any], settings: DispatchSettings, transport: Transport | None = None,
             environ: Mapping[str, str] | None = None) -> DispatchResult:
    """Deliver one task and say honestly whether it was delivered."""
    try:
        inputs = parse_inputs(raw, settings.registry)
    except DispatchInputError as exc:
        return DispatchResult(error_envelope(INVALID_INPUT, str(exc), False, {"field": exc.field}, raw))
    with opened_ledger(settings.ledger_path, settings.database) as ledger:
        return _deliver(inputs, raw, settings, ledger, transport, environ)


def _deliver(inputs: DispatchInputs, raw: Mapping[str, Any], settings: DispatchSettings, ledger: LedgerStore,
             transport: Transport | None, environ: Mapping[str, str] | None) -> DispatchResult:
    agent = settings.registry.lookup(inputs.target)
    assert agent is not None  # parse_inputs checked it
    fields = {"target": inputs.target, "task_source": inputs.task_source, "reference_id": inputs.reference_id,
              "dispatch_id": settings.dispatch_id or new_dispatch_id()}
    echo = {**raw, "target": inputs.target}
    marker = delegated_marker(settings.transport.env() if environ is None else environ)
    if marker is not None:
        detail = f"{DELEGATED_ENV}={marker}: this process runs inside a delegated sub-agent; dispatches do not nest"
        record = refusal_record("dispatch", status="error", reason=reasons.NESTED_DELEGATION, detail=detail,
                                profile=agent.profile, parent_id=settings.parent_id, code="transport_error", **fields)
        details: dict[str, Any] = {"reason": reasons.NESTED_DELEGATION, "profile": agent.profile}
        return DispatchResult(_ledgered(ledger, record, error_envelope("transport_error", detail, False, details, echo)))
    request = RunRequest(prompt=build_prompt(inputs, settings.registry.sender), profile=agent.profile,
                         provider=agent.provider, model=agent.model, toolsets=agent.toolsets,
                         max_turns=agent.max_turns, timeout_s=settings.timeout_s, parent_id=settings.parent_id,
                         label=f"dispatch:{inputs.target}:{inputs.reference_id}")
    with RunJournal(ledger, "dispatch", fields, stop=settings.stop) as journal:
        outcome = (transport or HermesTransport(settings.transport)).run(request, journal=journal)
        with cancellation.shielded():
            return DispatchResult(_settled(journal, outcome, fields, agent.profile, echo, settings))


def _settled(journal: RunJournal, outcome: RunOutcome, fields: dict[str, Any], profile: str,
             echo: Mapping[str, Any], settings: DispatchSettings) -> dict[str, Any]:
    if outcome.ok:
        record = run_record("dispatch", outcome, status="delivered", reason=None, code=None, **fields)
        envelope = {"status": "delivered", "timestamp": _timestamp(),
                    "transport": {"name": TRANSPORT_NAME, "details": _details(outcome, profile, settings)},
                    "transport_message_id": outcome.session_id, **_echo(fields)}
        return _ledgered(journal, record, envelope)
    code = error_code(outcome.reason)
    status = "cancelled" if outcome.reason == reasons.CANCELLED else "error"
    record = run_record("dispatch", outcome, status=status, reason=outcome.reason, code=code, **fields)
    details = {"reason": outcome.reason, "exit_code": outcome.exit_code, **_details(outcome, profile, settings)}
    envelope = error_envelope(code, outcome.detail, outcome.retryable, details, echo)
    return _ledgered(journal, record, envelope)


def _details(outcome: RunOutcome, profile: str, settings: DispatchSettings) -> dict[str, Any]:
    details: dict[str, Any] = {"profile": profile, "session_id": outcome.session_id,
                               "duration_ms": outcome.duration_ms, "usage": outcome.usage.to_dict()}
    if outcome.ok:
        # The ledger's folder is the project's state folder: the whole reply is kept beside it when cut.
        name = f"dispatch-{datetime.now(UTC):%Y-%m-%d-%H%M%S}-{secrets.token_hex(3)}"
        reply = bounded(outcome.text, settings.max_chars, settings.ledger_path.parent, name)
        details.update(reply.to_fields("reply"), reply_chars=reply.total_chars)
    if outcome.warnings:
        details["warnings"] = list(outcome.warnings)
    return details


def recovered_envelope(record: Mapping[str, Any]) -> dict[str, Any]:
    """The envelope of a dispatch whose caller died before answering, from its ledger settlement `record`: what
    the ledger holds of it, which is never the reply."""
    details: dict[str, Any] = {"profile": record.get("profile"), "session_id": record.get("session_id"),
                               "duration_ms": record.get("duration_ms"), "usage": record.get("usage"),
                               "record_id": record.get("record_id"),
                               "recovered": "the process that ran this dispatch stopped before it answered; this is "
                                            "its ledger settlement, which keeps no reply"}
    timestamp = record.get("ts") if isinstance(record.get("ts"), str) else _timestamp()
    if record.get("status") == DispatchStatus.DELIVERED:
        return {"status": "delivered", "timestamp": timestamp,
                "transport": {"name": TRANSPORT_NAME, "details": details},
                "transport_message_id": record.get("session_id"), **_echo(record)}
    reason, code, transport = record.get("reason"), record.get("code"), record.get("transport")
    reason = reason if isinstance(reason, str) else None
    detail = transport.get("detail") if isinstance(transport, dict) else None
    code = code if isinstance(code, str) else error_code(reason)
    message = detail if isinstance(detail, str) else f"not delivered: {reason}"
    details.update(reason=reason, exit_code=record.get("exit_code"))
    return {**error_envelope(code, message, reasons.is_transient(reason), details, record), "timestamp": timestamp}


def _ledgered(ledger: LedgerStore | RunJournal, record: dict[str, Any], envelope: dict[str, Any]) -> dict[str, Any]:
    details = envelope["transport"]["details"] if envelope["status"] == "delivered" else envelope["details"]
    try:
        entry = ledger.settle(record) if isinstance(ledger, RunJournal) else ledger.append(record)
    except LedgerError as exc:
        details["ledger_error"] = str(exc)
        return envelope
    details["ledger_entry"] = entry.ref()
    details["record_id"] = entry.record_id
    return envelope
