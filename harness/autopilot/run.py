"""One auto-pilot run, end to end: identify, lock, select, run the mode, finalize.

Invariants:
- A plan naming an unknown agent raises `PlanInvalid` before anything else; a run that may not
  start (bad or forbidden DNA, nested without DNA, the same plan already running here) returns a
  `refused` result, ledgered, with nothing spawned.
- The same plan never runs twice at once for the same parent (a holder lock keyed by the plan's
  hash and the parent agent), so a host agent that repeats itself gets `lock_held`, not a duplicate tree.
- The run directory (`<state>/autopilot/<run id>/`) gets `run.json` before the first spawn (if it
  cannot, `AutopilotError`, nothing spawned), each answer as it arrives, then `envelope.json` and
  `report.md`. A run with `run.json` and no `envelope.json` is one whose kernel died.
- A caller that must find a run again after its own death names the run id in advance (`run_plan`'s
  `run_id`): every record of the run carries it, and its folder is `run_folder` of it.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import strict_json
from harness.autopilot.errors import AutopilotError
from harness.autopilot.identity import LOCK_HELD, Identity, Refusal, identify, new_run_id
from harness.autopilot.kernel import Kernel, KernelSettings
from harness.autopilot.modes import run_debate, run_ordered, run_side_by_side
from harness.autopilot.plan import Plan
from harness.autopilot.report import RunStatus, build_envelope, refused_envelope, render_markdown
from harness.autopilot.selection import check_agents, select_agents
from harness.autopilot.tree import KIND
from harness.durable import DurableWriteError, HolderLock, LockHeld, atomic_write, atomic_write_json
from harness.errors import ConfigError
from harness.hermes import HermesTransport, Transport
from harness.hermes.transport import DEFAULT_MAX_OUTPUT_BYTES
from harness.ledger.records import refusal_record
from harness.ledger.store import Ledger, LedgerError, utc_now
from harness.ledger.stores import opened_ledger

ENVELOPE_FILE = "envelope.json"
# A run's envelope holds its children's answers whole, each at most the transport's cap: a recovery reads no more
# than one such answer's worth (a larger envelope is left in its folder, unread).
RECOVERED_ENVELOPE_MAX_BYTES = DEFAULT_MAX_OUTPUT_BYTES
# What a recovered envelope shows of each child: where its answer and its ledger record are, not the answer.
RECOVERED_CHILD_FIELDS = ("subtask", "child_id", "agent", "attempt", "status", "reason", "answer_file", "record_id")


@dataclass(frozen=True)
class RunResult:
    envelope: dict[str, Any]
    markdown: str

    @property
    def status(self) -> RunStatus:
        return RunStatus(self.envelope["status"])


def check_startable(settings: KernelSettings) -> None:
    """What a run needs of its settings before it spawns anything, checked without running (`autopilot check`):
    ConfigError for a project root that is there and no folder, or a ledger its readers cannot open (a FIFO, a
    folder, a device). What the ledger's lines hold is for its readers to judge. A database's ledger is not
    opened: a check connects to nothing."""
    root = settings.project_root
    if root.exists() and not root.is_dir():
        raise ConfigError(f"project root: {root} is not a directory")
    if settings.database is not None:
        return
    lines = Ledger(settings.ledger_path).lines()
    try:
        next(lines, None)
    except LedgerError as exc:
        raise ConfigError(f"ledger: {exc}") from None
    finally:
        lines.close()


def run_folder(settings: KernelSettings, run_id: str) -> Path:
    """The folder of the run `run_id`: its run.json, answers, envelope.json and report."""
    return settings.state_dir / run_id


def run_plan(plan: Plan, settings: KernelSettings, transport: Transport | None = None,
             environ: Mapping[str, str] | None = None, run_id: str | None = None) -> RunResult:
    """Run `plan`; `run_id` names the run in advance (a new one otherwise)."""
    check_agents(plan, settings.registry)
    environ = settings.transport.env() if environ is None else environ
    run_id, started_at, t0 = run_id or new_run_id(), utc_now(), time.monotonic()
    ident = identify(plan, settings.project_root, environ, settings.sentinel, run_id)
    if isinstance(ident, Refusal):
        return _refused(settings, run_id, ident, started_at)
    parent = ident.inherited.agent_id if ident.inherited else "root"
    lock_key = hashlib.sha256(f"{plan.hash}\n{parent}".encode()).hexdigest()[:16]
    lock = HolderLock(settings.state_dir / "locks" / f"plan.{lock_key}.lock", label=run_id)
    try:
        lock.acquire(started_at)
    except LockHeld as exc:
        return _refused(settings, run_id, Refusal(LOCK_HELD, f"the same plan is already running: {exc}",
                                                  ident.inherited), started_at)
    except DurableWriteError as exc:
        raise AutopilotError(f"cannot take the plan lock: {exc}") from None
    with lock:
        return _run(plan, settings, ident, transport or HermesTransport(settings.transport), started_at, t0)


def _run(plan: Plan, settings: KernelSettings, ident: Identity, transport: Transport, started_at: str,
         t0: float) -> RunResult:
    run_dir = run_folder(settings, ident.run_id)
    try:
        atomic_write_json(run_dir / "run.json", {"run_id": ident.run_id, "tree_id": ident.tree_id,
                                                  "agent_id": ident.agent_id, "depth": ident.depth,
                                                  "plan": plan.source, "pid": os.getpid(), "started_at": started_at})
    except DurableWriteError as exc:
        raise AutopilotError(f"cannot write the run directory, so nothing is spawned: {exc}") from None
    picks = select_agents(plan, settings.registry, ident.chain)
    with opened_ledger(settings.ledger_path, settings.database) as ledger:
        kernel = Kernel(plan, settings, ident, transport, run_dir, picks, ledger)
        if plan.mode == "debate-converge":
            run_debate(kernel)
        elif plan.mode == "parallel":
            run_side_by_side(kernel)
        else:
            run_ordered(kernel)
        envelope = build_envelope(kernel, picks, started_at, int((time.monotonic() - t0) * 1000))
    report_path = settings.report_path or run_dir / "report.md"
    envelope["report"] = str(report_path)
    markdown = render_markdown(envelope)
    try:
        atomic_write(report_path, markdown.encode("utf-8"))
        atomic_write_json(run_dir / ENVELOPE_FILE, envelope)
    except DurableWriteError as exc:
        envelope["warnings"] = [f"the report or envelope could not be saved: {exc}"]
    return RunResult(envelope, markdown)


def _refused(settings: KernelSettings, run_id: str, refusal: Refusal, started_at: str) -> RunResult:
    dna = refusal.dna
    context: dict[str, Any] = {"tree_id": dna.tree_id if dna else run_id, "depth": dna.depth if dna else 0,
                               "parent_agent_id": dna.agent_id if dna else None}
    record = refusal_record(KIND, status="refused", reason=refusal.reason, detail=refusal.detail,
                            parent_id=dna.agent_id if dna else None, tree_id=context["tree_id"], run_id=run_id,
                            child_id=None, depth=context["depth"], spawned=False, failed_attempt=False)
    try:
        with opened_ledger(settings.ledger_path, settings.database) as ledger:
            entry = ledger.append(record)
        context["ledger_entry"] = entry.ref(settings.project_root)
    except LedgerError as exc:
        context["ledger_error"] = str(exc)
    envelope = refused_envelope(run_id, refusal.reason, refusal.detail, started_at, context)
    return RunResult(envelope, render_markdown(envelope))


def recovered_envelope(run_dir: Path, run_id: str) -> dict[str, Any] | None:
    """What a caller that died before answering is owed of the run `run_id` in `run_dir`: a summary of its
    `envelope.json` (its status, its children, where the whole envelope is), or None when the run wrote no usable
    one (its kernel died, or the file is no regular file, too large, or not an envelope)."""
    path = run_dir / ENVELOPE_FILE
    try:
        envelope = strict_json.load_file(path, max_bytes=RECOVERED_ENVELOPE_MAX_BYTES)
    except (FileNotFoundError, strict_json.InputRejected):
        return None
    if not isinstance(envelope, dict) or envelope.get("status") not in set(RunStatus):
        return None
    children = [{name: child.get(name) for name in RECOVERED_CHILD_FIELDS}
                for child in envelope.get("children") or [] if isinstance(child, dict)]
    return {"autopilot": 1, "status": envelope["status"], "run_id": run_id, "children": children,
            "envelope_file": str(path), "report": envelope.get("report"),
            "detail": "the server that ran this job stopped before it answered; the run's whole envelope is "
                      "envelope_file"}


__all__ = ["RunResult", "recovered_envelope", "run_folder", "run_plan"]
