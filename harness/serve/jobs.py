"""Jobs of `serve`: one delegation, dispatch or auto-pilot run a host agent can leave and come back to.

A job is a JSON document kept by a `JobStore` (harness.serve.job_stores): the file
`<state dir>/serve-jobs/<job id>.json` of the server's project root, or with serve's `--database` a row of
that database, so a server on another machine finds it by its handle. It is `{"job": 1, "job_id", "tool",
"state": "running" | "settled", "runner", "created_at", "settled_at", "intent_id", "ledger", "envelope"}`.
`envelope` is the seed's envelope once settled. A job whose runs are ledgered in serve's `--database`
names that database (without its password) as `ledger` and the folder of its run journals, on the machine
that ran it, as `journal`; the URL stays in memory. A job names in advance what its runs' ledger records
carry (RECOVERIES): a delegation its `intent_id`, a dispatch its `dispatch_id`, an auto-pilot run its
`run_id` and `run_dir`.

Invariants:
- A job is written `running` before its work starts and `settled` (with its envelope) once, after the
  work returned; nothing else changes a job file, so a reader sees one whole state or the other. A job this
  runner settled is answered from memory, so a store that failed to take the settlement (a full disk, a
  dropped database session) loses no answer; the write is tried again at each read until it is taken. The
  writes are atomic renames, not fsynced (`durable`'s `sync=False`): the ledger, fsynced, holds every
  run, and a job file a power loss took is re-derived from it (a `running` one) or reported unknown.
- The runner (one `JobRunner`, one per server process) holds its store's liveness lock (an flock on
  `runners/<runner id>.lock`, or its database session's advisory lock) for its whole life: a `running`
  job whose runner's lock is unheld has lost its runner (the server was killed or restarted). Its runs
  were stopped by their supervisors when the server died and are settled through the journal
  (`settle_orphans`). A run of it still in flight (its journal started, unsettled, its owner alive) keeps
  the job `running` until it is settled; the job is then settled from the ledger, by the records that name
  what the job named in advance: a delegation or a dispatch by its run's settlement, an auto-pilot run by
  the envelope.json its kernel wrote in its folder. Only a job whose runs left no such end is settled
  `runner_gone`.
- The jobs folder (or session) and the runner's lock are made on the first `start` (`open`), not before:
  a server that never runs a job leaves nothing behind in the folder it was started in.
- A waiter never holds a thread: `watch` registers a callback the job's thread calls once the job is
  settled (its file written), so an event loop waits on an event of its own.
- Each job runs in a thread of its own with a `stop` event, the per-run stop of the delegation and
  dispatch layers; `cancel` sets it and waits, bounded, for the run's own settlement (`cancelled`,
  the tree killed by the supervisor). At most MAX_RUNNING_JOBS run at once; past that `start`
  refuses (JobRefused) and nothing runs.
- `shutdown` stops every running job of this runner and waits for them, bounded, so a server told to
  stop ledgers its runs as `cancelled` itself; what outlives the bound is settled by the next reader.
- The work of a job never raises through the runner: the seeds' layers turn every run failure into an
  envelope, and what escapes them is caught at this thread edge, logged, and settled `harness_error`.
"""

from __future__ import annotations

import re
import secrets
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.autopilot.run import recovered_envelope
from harness.database import shown_url
from harness.dispatch.dispatch import recovered_envelope as dispatch_envelope
from harness.durable import DurableWriteError
from harness.errors import HarnessError
from harness.hermes import cancellation
from harness.ledger.journal import in_flight, settle_orphans
from harness.ledger.store import LedgerError, LedgerStore, is_started, utc_now
from harness.ledger.stores import opened_ledger
from harness.serve.job_stores import (
    RUNNING,
    SETTLED,
    JobStore,
    JobStoreUnusable,
    PgJobStore,
    UnknownJob,
    file_job_store,
)

JOB_ID = re.compile(r"^job-[0-9a-f]{16}$")
# Hermes runs cost money and a 2-core machine runs a few dozen Python children at most; a host that
# fans out wider waits for a slot (the refusal says so) rather than starting a spawn storm.
MAX_RUNNING_JOBS = 32
# Reasons of the settlements this module writes itself.
RUNNER_GONE = "runner_gone"
HARNESS_ERROR = "harness_error"

Work = Callable[[threading.Event], dict[str, Any]]


class JobRefused(HarnessError):
    """A job was not started (too many running, or its file could not be written)."""




# What the outcome of a run this runner stopped says stopped it (`cancellation.stop_cause`).
CANCEL_CALL = "delegation_cancel"
CALL_CANCELLED = "the host's cancel of the call that started it"


@dataclass
class _Live:
    stop: cancellation.StopRequest
    done: threading.Event
    thread: threading.Thread | None = None
    watchers: list[Callable[[], None]] = field(default_factory=list)
    # The job as settled here, kept whether or not the store took it, and whether the store did.
    settled: dict[str, Any] | None = None
    recorded: bool = False


@dataclass
class JobRunner:
    """The jobs of one server process (see the module invariants)."""

    project_root: Path
    # serve's --database: the jobs and the runs' ledger are that database's (harness.serve.job_stores).
    database: str | None = None
    runner_id: str = field(default_factory=lambda: "runner-" + secrets.token_hex(8))
    _live: dict[str, _Live] = field(default_factory=dict)
    # Guards _live, and is taken by the event loop (watch): held for no I/O. Opening the store and writing a new
    # job (a database may take a minute to answer) happen under _opening or under no lock.
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _opening: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.store: JobStore = (file_job_store(self.project_root) if self.database is None
                                else PgJobStore(self.database))
        self._opened = False

    def open(self) -> JobRunner:
        """Take this runner's lock; JobStoreUnusable naming the store when the jobs cannot be kept there."""
        self.store.open(self.runner_id)
        self._opened = True
        return self

    def close(self) -> None:
        self.store.close()
        self._opened = False

    # -- starting and running -------------------------------------------------------------------------

    def start(self, tool: str, work: Work, *, ledger: Path, named: Mapping[str, str] | None = None) -> dict[str, Any]:
        """Write the job `running`, start its thread, and return the job record; `named`: what the job's runs'
        records carry, named in advance (RECOVERIES)."""
        with self._opening:
            if not self._opened:
                try:
                    self.open()
                except JobStoreUnusable as exc:
                    raise JobRefused(f"the job was not started: {exc}") from None
        job_id = "job-" + secrets.token_hex(8)
        job = {"job": 1, "job_id": job_id, "tool": tool, "state": RUNNING, "runner": self.runner_id,
               "created_at": utc_now(), "settled_at": None, "intent_id": None, **(named or {}),
               "ledger": str(ledger), "envelope": None}
        if self.database is not None:  # its runs are ledgered there; their journals stay beside `ledger`
            job.update(ledger=shown_url(self.database), journal=str(ledger))
        live = _Live(cancellation.StopRequest(), threading.Event())
        with self._lock:  # its slot taken before it is written, so two starts never pass the bound together
            running = sum(1 for other in self._live.values() if not other.done.is_set())
            if running >= MAX_RUNNING_JOBS:
                raise JobRefused(f"{running} jobs are running, the most one server runs at once; wait for one "
                                 f"(delegation_result) and try again")
            self._live[job_id] = live
        try:
            self.store.write(job)
        except DurableWriteError as exc:
            with self._lock:
                del self._live[job_id]
            raise JobRefused(f"the job could not be recorded, so it was not started: {exc}") from None
        # A daemon: `shutdown` waits for the run's own settlement, within its bound; past it, a job still settling
        # (a run whose ledger or store hangs) must not keep the process alive after its host has gone. Once the
        # process ends its supervisors stop the trees and the next reader settles the runs (the module invariants).
        live.thread = threading.Thread(target=self._run, args=(job, work, live), name=job_id, daemon=True)
        live.thread.start()
        return dict(job)

    def _run(self, job: dict[str, Any], work: Work, live: _Live) -> None:
        try:
            envelope = work(live.stop)
        except Exception as exc:  # noqa: BLE001 - the thread's edge: no failure may leave a job running forever
            print(f"mafiabot-harness serve: job {job['job_id']} failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            envelope = {"status": "degraded", "degraded_reason": HARNESS_ERROR,
                        "detail": f"{type(exc).__name__}: {exc}"[:500]}
        settled = settled_job(job, envelope)
        try:
            recorded = self._record(settled)
        except Exception as exc:  # noqa: BLE001 - the thread's edge: a store that fails oddly still lets it settle
            print(f"mafiabot-harness serve: job {job['job_id']} could not be recorded as settled: "
                  f"{type(exc).__name__}: {exc}", file=sys.stderr)
            recorded = False
        with self._lock:
            live.settled, live.recorded = settled, recorded
            live.done.set()
            watchers, live.watchers = live.watchers, []
        for watcher in watchers:
            watcher()

    def watch(self, job_id: str, callback: Callable[[], None]) -> Callable[[], None] | None:
        """Have the job's thread call `callback` once this runner's job `job_id` is settled; the function
        that takes it back, or None when the job is not running here (settled, or another runner's)."""
        with self._lock:
            live = self._live.get(job_id)
            if live is None or live.done.is_set():
                return None
            live.watchers.append(callback)

        def unwatch() -> None:
            with self._lock:
                if callback in live.watchers:
                    live.watchers.remove(callback)
        return unwatch

    def _settle(self, job: dict[str, Any], envelope: Mapping[str, Any]) -> dict[str, Any]:
        settled = settled_job(job, envelope)
        self._record(settled)
        return settled

    def _record(self, settled: dict[str, Any], *, again: bool = False) -> bool:
        """Write a settled job to the store; whether it took it. The run itself is ledgered either way, and a job
        of this runner is answered from memory (`_Live.settled`) and written again when next read; other servers
        see it running meanwhile."""
        try:
            self.store.write(settled)
        except DurableWriteError as exc:
            if not again:  # said once, not at every read of a host polling for it
                print(f"mafiabot-harness serve: job {settled['job_id']} could not be recorded as settled: {exc}",
                      file=sys.stderr)
            return False
        return True

    # -- reading --------------------------------------------------------------------------------------

    def get(self, job_id: str) -> dict[str, Any]:
        """The job as it stands now; a job whose runner is gone is settled from the ledger first. A job this
        runner settled is answered from memory: a store that failed to take its settlement loses no answer."""
        live = self._live.get(job_id)
        if live is not None and live.settled is not None:
            if not live.recorded:
                live.recorded = self._record(live.settled, again=True)
            return dict(live.settled)
        job = self._read(job_id)
        if job["state"] == RUNNING and job["runner"] != self.runner_id and not self._runner_alive(job["runner"]):
            return self._recover(job)
        return job

    def cancel(self, job_id: str) -> bool:
        """Ask a job of this runner to stop for a cancel request, without waiting (the caller waits on the
        loop, holding no thread); whether it was running here."""
        live = self._live.get(job_id)
        if live is None:
            return False
        live.stop.request(CANCEL_CALL)
        return True

    def stop(self, job_id: str) -> None:
        """Ask a job of this runner to stop, without waiting (a cancelled call cannot wait)."""
        live = self._live.get(job_id)
        if live is not None:
            live.stop.request(CALL_CANCELLED)

    def is_ours(self, job_id: str) -> bool:
        return job_id in self._live

    def runs_elsewhere(self, job: Mapping[str, Any]) -> bool:
        """Whether a running job belongs to another server process that is still alive."""
        return job["state"] == RUNNING and job["runner"] != self.runner_id and self._runner_alive(job["runner"])

    def shutdown(self, bound_s: float, cause: str) -> list[str]:
        """Stop every running job (`cause` says why) and wait for them within `bound_s` in all; the ids
        still running."""
        deadline = time.monotonic() + bound_s
        with self._lock:  # a job being started meanwhile is stopped as its thread starts: its stop is set
            lives = list(self._live.items())
        for _, live in lives:
            live.stop.request(cause)
        left = []
        for job_id, live in lives:
            if live.thread is not None:
                live.thread.join(max(0.0, deadline - time.monotonic()))
            if not live.done.is_set():
                left.append(job_id)
        return left

    def _read(self, job_id: str) -> dict[str, Any]:
        if not JOB_ID.fullmatch(job_id):
            raise UnknownJob(f"{job_id!r} is not a job id (job- and 16 hex digits)")
        return self.store.read(job_id)

    def _runner_alive(self, runner_id: Any) -> bool:
        return isinstance(runner_id, str) and self.store.runner_alive(runner_id)

    def _recover(self, job: dict[str, Any]) -> dict[str, Any]:
        journal = job.get("journal")
        if isinstance(journal, str) and self.database is not None:
            with opened_ledger(Path(journal), self.database) as ledger:
                return self._recover_from(job, ledger)
        with opened_ledger(Path(job["ledger"]), None) as ledger:
            return self._recover_from(job, ledger)

    def _recover_from(self, job: dict[str, Any], ledger: LedgerStore) -> dict[str, Any]:
        try:
            settle_orphans(ledger)
            records = list(ledger.all_records())
        except LedgerError as exc:
            return {**job, "recovery": f"the ledger could not be read: {exc}"}
        field, end = RECOVERIES.get(job["tool"], RECOVERIES[DELEGATION])
        key = job.get(field)
        mine = [r for r in records if key is not None and r.get(field) == key]
        started_runs = {r.get("hermes_run") for r in mine if is_started(r)}
        if started_runs & set(in_flight(ledger)):
            return job  # a supervisor is still stopping its tree, or its runner lives on: the journal settles it
        envelope = end(job, mine)
        if envelope is not None:
            return self._settle(job, envelope)
        return self._settle(job, {"status": "degraded", "degraded_reason": RUNNER_GONE, "intent_id": job.get("intent_id"),
                                  field: key, "detail": "the server that ran this job stopped before the job settled; "
                                                        "its runs, if any started, are settled in the ledger"})


def settled_job(job: Mapping[str, Any], envelope: Mapping[str, Any]) -> dict[str, Any]:
    return {**job, "state": SETTLED, "settled_at": utc_now(), "envelope": dict(envelope)}


# A job of a runner that is gone settles within the supervisor's grace; reading its ledger a few times a
# second finds that without a busy loop.
RECOVERY_POLL_S = 0.25


def envelope_from_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The envelope of a delegation whose server died, from its ledger settlement."""
    status = "ok" if record.get("status") == "ok" else "degraded"
    return {"status": status, "degraded_reason": None if status == "ok" else record.get("reason"),
            "intent_id": record.get("intent_id"), "ledger_record": record.get("record_id"),
            "usage": record.get("usage"), "wrote_to": record.get("wrote_to"),
            "detail": "the server that ran this job stopped before it answered; this is the ledger's settlement"}


# A job's envelope from the ledger records of its runs, or None while the ledger (or the run's folder) holds no end.
End = Callable[[Mapping[str, Any], list[dict[str, Any]]], dict[str, Any] | None]


def _settlement(envelope: Callable[[Mapping[str, Any]], dict[str, Any]]) -> End:
    """The end of a job of one run: the envelope of its settlement, once the ledger holds it."""
    def end(_job: Mapping[str, Any], records: list[dict[str, Any]]) -> dict[str, Any] | None:
        settlement = next((r for r in records if not is_started(r)), None)
        return envelope(settlement) if settlement is not None else None
    return end


def _autopilot_end(job: Mapping[str, Any], _records: list[dict[str, Any]]) -> dict[str, Any] | None:
    run_dir, run_id = job.get("run_dir"), job.get("run_id")
    return recovered_envelope(Path(run_dir), run_id) if isinstance(run_dir, str) and isinstance(run_id, str) else None


# How a job of each tool is settled once its runner is gone: the field that the job and every ledger record of its
# runs carry (named at `start`), and its end (`End`). A job of another tool is read as a delegation's.
DELEGATION = "autobot_delegate"
RECOVERIES: dict[str, tuple[str, End]] = {
    DELEGATION: ("intent_id", _settlement(envelope_from_record)),
    "agent_dispatch": ("dispatch_id", _settlement(dispatch_envelope)),
    "autopilot_run": ("run_id", _autopilot_end),
}
