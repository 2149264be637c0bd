"""One autobot delegation, from intent to result envelope (the seed's Phase 2 and 3).

Order: validate the intent (and its write target) → refuse when nested → take the intent lock →
read the materials → build the prompt → journal the start → run Hermes through the transport →
validate the answer → write the artifact → settle the run in the ledger → release the lock → return
the envelope.

Invariants:
- Every outcome is an `Envelope` with the seed's fields; nothing here raises for a Hermes failure,
  a held lock, a bad answer or an unwritable file; `status` and `degraded_reason` say what happened
  (the CLI alone turns them into exit codes).
- Every delegation that got past validation is ledgered exactly once, failures included; one that
  spawned Hermes has a `started` record before the spawn and one settlement after (`ledger.journal`),
  so a delegation killed mid-run is settled by the next command. An invalid intent spends nothing and
  is not ledgered.
- After the spawn nothing is left to chance: the answer's checks cannot raise anything but
  `OutputInvalid`, a write that fails or is refused (`write_failed`) or is too long (`output_too_long`,
  past `writer.WriteCap`) keeps the raw answer at `.agents/state/autobot-rejected/<intent id>.txt`,
  beside the ledger, and anything unforeseen still settles the run (`harness_error`) on its way out.
  The concluding steps run shielded from cancellation, so a cancel never cuts a write or a record in two.
- A `response` carries at most `max_chars` characters (the cut marker, which states the whole length,
  included); a longer answer is kept whole at `.agents/state/answers/<intent id>.txt`, named in
  `response_file` (`harness.answers`).
- The intent lock's descriptor is held by the run's supervisor too: the lock is held until the
  Hermes tree is gone, even when this process is killed outright.
- Nested delegation (`HERMES_AUTOBOT_DELEGATED` set in our environment) is refused before any lock
  or Hermes call. The same intent on the same project never runs twice at once (`lock_held`).
- The sub-agent gets read-only toolsets only (default `todo`), so the only write of a delegation is
  the one autobot itself makes to `write_to` (seed invariant 2).
"""

from __future__ import annotations

import math
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, InstanceOf

from harness.answers import bounded
from harness.autobot.intent import Intent, IntentError, parse_intent
from harness.autobot.materials import read_materials
from harness.autobot.output import OutputInvalid, validate_output
from harness.autobot.prompt import build_prompt, new_nonce
from harness.autobot.writer import AnswerTooLong, WriteCap, WriteTarget, resolve_write_target, write_artifact
from harness.database import INTENT_LOCK, SessionLock
from harness.durable import DurableWriteError, HolderLock, LockHeld, atomic_write
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
from harness.hermes.locate import hermes_root
from harness.hermes.outcome import CANCELLED, LEDGER_UNWRITABLE, NESTED_DELEGATION, is_transient
from harness.ledger.journal import RunJournal
from harness.ledger.pg_store import PgLedger
from harness.ledger.records import refusal_record, run_record
from harness.ledger.store import LedgerEntry, LedgerError, LedgerStore, default_ledger_path, utc_now
from harness.ledger.stores import opened_ledger
from harness.settings import state_dir
from harness.typed_inputs import BuiltModel, Items, matching

INVALID_INTENT = "invalid_intent"
LOCK_HELD = "lock_held"
OUTPUT_VALIDATION_FAILED = "output_validation_failed"
WRITE_FAILED = "write_failed"
OUTPUT_TOO_LONG = "output_too_long"
# Toolsets that cannot write files, run commands, or spawn agents; anything else breaks invariant 2.
READ_ONLY_TOOLSETS = frozenset({"todo", "web", "search", "x_search", "vision", "session_search", "clarify"})
# A bounded task with its materials inline needs a few model turns; this caps a looping sub-agent's spend.
DEFAULT_MAX_TURNS = 10


def is_retryable(reason: str | None) -> bool:
    return reason == LOCK_HELD or is_transient(reason)


ReadOnlyToolset = Annotated[str, matching(re.compile("|".join(map(re.escape, sorted(READ_ONLY_TOOLSETS)))),
                                           f"a read-only toolset ({', '.join(sorted(READ_ONLY_TOOLSETS))}): "
                                           f"autobot sub-agents get no other")]


class AutobotSettings(BuiltModel):
    """Operator choices that are not part of the intent; a bad one raises `IntentError` naming its field.

    Copied with `model_copy(update=...)` for one delegation's own `queue_item` or `stop`."""

    toolsets: Annotated[Items[ReadOnlyToolset], Field(min_length=1)] = ("todo",)
    max_turns: Annotated[int, Field(ge=1)] | None = DEFAULT_MAX_TURNS
    approve_sensitive_write: bool = False
    transport: InstanceOf[TransportSettings] = Field(default_factory=TransportSettings)
    parent_id: str | None = None
    queue_item: str | None = None
    # Named in advance by a caller that must find the run's ledger record later (a `serve` job whose
    # server may die before the envelope comes back); else a fresh one per delegation.
    intent_id: str | None = None
    # Set by a host that cancels this one delegation (not the whole command); see `cancellation`.
    stop: InstanceOf[threading.Event] | None = None
    # A libpq URL: the ledger and the intent lock live in that database (harness.database), not the project's files.
    database: str | None = None

    FIELD_ERROR = IntentError


class EnvelopeStatus(StrEnum):
    """The seed's two outcomes of a delegation; `degraded_reason` says why one is not `ok`."""

    OK = "ok"
    DEGRADED = "degraded"


@dataclass
class Envelope:
    """The seed's result envelope, plus what an operator needs to act on it (`extra`)."""

    status: EnvelopeStatus
    degraded_reason: str | None
    intent_id: str
    duration_ms: int
    response_chars: int = 0
    est_prompt_tokens: int = 0
    est_response_tokens: int = 0
    model: str | None = None
    hermes_profile: str | None = None
    wrote_to: str | None = None
    ledger_entry: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def retryable(self) -> bool:
        return self.status != EnvelopeStatus.OK and is_retryable(self.degraded_reason)

    def to_dict(self) -> dict[str, Any]:
        seed = {name: getattr(self, name) for name in (
            "status", "degraded_reason", "intent_id", "duration_ms", "response_chars", "est_prompt_tokens",
            "est_response_tokens", "model", "hermes_profile", "wrote_to", "ledger_entry")}
        return {**seed, "retryable": self.retryable, **self.extra}


def new_intent_id() -> str:
    return f"intent-{datetime.now(UTC):%Y-%m-%d-%H%M%S}-{secrets.token_hex(3)}"


def invalid_intent(exc: IntentError) -> Envelope:
    """The envelope of an intent (or a setting of its delegation) that cannot be used: nothing ran."""
    return Envelope(EnvelopeStatus.DEGRADED, INVALID_INTENT, new_intent_id(), 0, extra={"detail": str(exc), "field": exc.field})


def delegate(document: Any, *, settings: AutobotSettings | None = None,
             transport: Transport | None = None) -> Envelope:
    """Run one delegation (a raw intent document or a parsed `Intent`) and return its envelope."""
    settings = settings or AutobotSettings()
    intent_id = settings.intent_id or new_intent_id()
    t0 = time.monotonic()
    try:
        intent = document if isinstance(document, Intent) else parse_intent(document)
        env = settings.transport.env()
        target = None
        if intent.write_to is not None:
            target = resolve_write_target(intent.write_to, intent.project_root,
                                          hermes_root(settings.transport.hermes_home, env),
                                          settings.approve_sensitive_write)
    except IntentError as exc:
        return Envelope(EnvelopeStatus.DEGRADED, INVALID_INTENT, intent_id, _ms(t0),
                        extra={"detail": str(exc), "field": exc.field})
    chosen = transport or HermesTransport(settings.transport)
    with opened_ledger(default_ledger_path(intent.project_root), settings.database) as ledger:
        return _Delegation(intent, intent_id, target, settings, chosen, t0, ledger).execute(env)


class _Delegation:
    def __init__(self, intent: Intent, intent_id: str, target: WriteTarget | None, settings: AutobotSettings,
                 transport: Transport, t0: float, ledger: LedgerStore) -> None:
        self.intent, self.intent_id, self.target = intent, intent_id, target
        self.settings, self.transport, self.t0 = settings, transport, t0
        self.ledger = ledger
        self.state = state_dir(intent.project_root)
        self.journal: RunJournal | None = None

    def execute(self, env: Mapping[str, str]) -> Envelope:
        marker = delegated_marker(env)
        if marker is not None:
            return self._refused(NESTED_DELEGATION, f"{DELEGATED_ENV}={marker}: this process runs inside a "
                                                    f"delegated sub-agent, and delegations do not nest")
        # The intent lock lives where the ledger does: a file on this machine, or the database's session lock.
        lock: HolderLock | SessionLock = (
            SessionLock(self.ledger.database, INTENT_LOCK, f"intent {self.intent.hash}", label=self.intent_id)
            if isinstance(self.ledger, PgLedger)
            else HolderLock(self.state / f"autobot.{self.intent.hash}.lock", label=self.intent_id))
        try:
            lock.acquire(utc_now())
        except LockHeld as exc:
            return self._refused(LOCK_HELD, f"the same intent is running: {exc}", lock_holder=exc.holder.to_dict())
        except DurableWriteError as exc:
            return self._refused(WRITE_FAILED, f"cannot take the intent lock: {exc}")
        with lock:
            return self._run(lock)

    def _run(self, lock: HolderLock | SessionLock) -> Envelope:
        intent = self.intent
        materials = read_materials(intent.target_paths, intent.project_root)
        prompt = build_prompt(intent, materials, new_nonce(materials))
        request = RunRequest(prompt=prompt, profile=intent.hermes_profile, provider=intent.provider,
                             model=intent.model, session=intent.session_name, toolsets=self.settings.toolsets,
                             max_turns=self.settings.max_turns, timeout_s=float(intent.timeout_seconds),
                             parent_id=self.settings.parent_id, label=self.intent_id)
        extra: dict[str, Any] = {"materials": [m.to_dict() for m in materials]}
        held = () if lock.fd is None else (lock.fd,)
        with RunJournal(self.ledger, "delegation", self._common(), hold_fds=held, stop=self.settings.stop) as journal:
            self.journal = journal
            outcome = self.transport.run(request, journal=journal)
            with cancellation.shielded():
                return self._conclude(outcome, extra)

    def _conclude(self, outcome: RunOutcome, extra: dict[str, Any]) -> Envelope:
        intent = self.intent
        if not outcome.ok:
            return self._finish(outcome, outcome.reason, outcome.detail, extra)
        try:
            artifact = validate_output(outcome.text, intent.expected_output)
        except OutputInvalid as exc:
            extra["raw_response"] = self._keep_raw(outcome.text)
            return self._finish(outcome, OUTPUT_VALIDATION_FAILED, str(exc), extra)
        if len(artifact) > intent.max_chars:
            extra["warnings"] = [f"the answer is {len(artifact)} characters; max_chars asked for {intent.max_chars}"]
        if self.target is None:
            # The caller (a host's context) gets at most max_chars; the whole answer is kept beside the ledger.
            extra.update(bounded(artifact, intent.max_chars, self.state, self.intent_id).to_fields("response"))
            return self._finish(outcome, None, "", extra)
        try:
            write_artifact(self.target, artifact, intent.append_with_separator,
                           WriteCap.for_target(self.target, intent.max_chars))
        except AnswerTooLong as exc:
            extra["raw_response"] = self._keep_raw(outcome.text)
            return self._finish(outcome, OUTPUT_TOO_LONG, f"{exc}; the answer was not written", extra)
        except DurableWriteError as exc:
            extra["raw_response"] = self._keep_raw(outcome.text)
            return self._finish(outcome, WRITE_FAILED, str(exc), extra)
        return self._finish(outcome, None, "", extra, wrote_to=str(self.target))

    def _keep_raw(self, text: str) -> str | None:
        path = self.state / "autobot-rejected" / f"{self.intent_id}.txt"
        try:
            atomic_write(path, text.encode("utf-8"))
        except DurableWriteError:
            return None
        return str(path)

    def _common(self) -> dict[str, Any]:
        intent = self.intent
        return {"intent_id": self.intent_id, "intent_hash": self.intent.hash, "tags": list(intent.tags),
                "expected_output": intent.expected_output, "queue_item": self.settings.queue_item}

    def _finish(self, outcome: RunOutcome, reason: str | None, detail: str, extra: dict[str, Any],
                wrote_to: str | None = None) -> Envelope:
        status = EnvelopeStatus.OK if reason is None else EnvelopeStatus.DEGRADED
        record = run_record("delegation", outcome, status=CANCELLED if reason == CANCELLED else status,
                            reason=reason, wrote_to=wrote_to,
                            raw_response=extra.get("raw_response"), detail=detail or None,
                            materials=_material_counts(extra["materials"]), **self._common())
        response_chars = len(outcome.text) if outcome.ok else 0
        envelope = Envelope(status, reason, self.intent_id, _ms(self.t0), response_chars=response_chars,
                            est_prompt_tokens=math.ceil(outcome.prompt_chars / 4),
                            est_response_tokens=math.ceil(response_chars / 4), model=self.intent.model,
                            hermes_profile=self.intent.hermes_profile, wrote_to=wrote_to)
        usage = outcome.usage
        envelope.extra = {"detail": detail or None, "intent_hash": self.intent.hash,
                          "tokens": {"input": usage.input_tokens, "output": usage.output_tokens,
                                     "total": usage.total_tokens, "source": usage.source},
                          "cost_usd": usage.cost_usd, "cost_status": usage.cost_status,
                          "session_id": outcome.session_id,
                          "answered_by": {"provider": outcome.answered_provider, "model": outcome.answered_model},
                          **extra}
        if outcome.warnings:
            envelope.extra["warnings"] = [*envelope.extra.get("warnings", []), *outcome.warnings]
        return self._ledgered(envelope, record, self.journal)

    def _refused(self, reason: str, detail: str, **extra: Any) -> Envelope:
        intent = self.intent
        record = refusal_record("delegation", status=EnvelopeStatus.DEGRADED, reason=reason, detail=detail,
                                profile=intent.hermes_profile, provider=intent.provider, model=intent.model,
                                parent_id=self.settings.parent_id, **self._common())
        envelope = Envelope(EnvelopeStatus.DEGRADED, reason, self.intent_id, _ms(self.t0), model=intent.model,
                            hermes_profile=intent.hermes_profile,
                            extra={"detail": detail, "intent_hash": intent.hash, **extra})
        return self._ledgered(envelope, record)

    def _ledgered(self, envelope: Envelope, record: dict[str, Any], journal: RunJournal | None = None) -> Envelope:
        record["total_ms"] = envelope.duration_ms
        try:
            entry: LedgerEntry = journal.settle(record) if journal is not None else self.ledger.append(record)
        except LedgerError as exc:
            envelope.status, envelope.degraded_reason = EnvelopeStatus.DEGRADED, LEDGER_UNWRITABLE
            envelope.extra["detail"] = f"the delegation's ledger record could not be written: {exc}"
            return envelope
        envelope.ledger_entry = entry.ref(self.intent.project_root)
        envelope.extra["record_id"] = entry.record_id
        return envelope


def _material_counts(materials: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for material in materials:
        counts[material["status"]] = counts.get(material["status"], 0) + 1
    return counts


def _ms(t0: float) -> int:
    return int((time.monotonic() - t0) * 1000)


__all__ = ["AutobotSettings", "Envelope", "EnvelopeStatus", "delegate", "is_retryable"]
