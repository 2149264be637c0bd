"""The autobot work queue as a table of the team's PostgreSQL database: many drainers, many machines, one queue.

The items, states, retries, dead letters and reports are those of the file queue (`harness.autobot.queue`);
what changes is how an item is claimed and how a dead drainer is noticed.

Invariants:
- A drain holds one session for its whole life. It claims an item in one transaction: the oldest due
  pending row `FOR UPDATE SKIP LOCKED` (concurrent drainers skip each other's rows, never wait on them),
  a session-level advisory lock on the item (its lease), and the row turned `running`, committed
  together. The lease is held until the item is settled; PostgreSQL drops it when the session ends,
  so a drainer that dies, however, gives its lease up without anyone's clock deciding it.
- A `running` row whose lease nobody holds belongs to a drainer that died mid-run, or lost its lease
  when the server restarted (a row claimed before `pg_postmaster_start_time()`; its history says so).
  The next claim takes its row lock and the lease (transaction-level) and dead-letters it as `orphaned`,
  never re-runs it. Its runs are settled in the same transaction: those journalled on this machine from Hermes's own
  record (`journal.settle_orphans`), those journalled elsewhere from their started record (an estimate,
  marked so); a run still being stopped here is left to its journal. The ledger's unique settlement
  index makes the settler that comes second write nothing.
- A settled item moves (done, pending with its due time, dead_letter) in one transaction, after the
  delegation committed its ledger settlement: an item never leaves `running` before its run's account.
- A drain inside a delegated run refuses before it connects (`refuse_if_nested`, as for the file queue).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.autobot.delegate import Envelope
from harness.autobot.intent import Intent
from harness.autobot.queue import (
    DEFAULT_BACKOFF_BASE_S,
    DEFAULT_MAX_ATTEMPTS,
    ORPHANED,
    STATES,
    DrainReport,
    Runner,
    cancelled_detail,
    cancelled_entry,
    due_iso,
    new_item,
    new_item_id,
    orphaned_entry,
    pending_summary,
    settle_item,
    settled_summary,
)
from harness.database import LEASE_LOCK, Database, application_name, connect, jsonb_text
from harness.errors import HarnessError
from harness.hermes import cancellation
from harness.ledger.journal import runs_dir, settle_orphans
from harness.ledger.pg_store import PgLedger
from harness.ledger.records import orphan_record
from harness.ledger.store import AlreadySettled
from harness.settings import state_dir

_COLUMNS = "seq, item_id, enqueued_at, attempts, not_before, intent_hash, intent, history, last_envelope"
_SERVER_RESTARTED_DETAIL = (
    "the database server restarted while it ran, and its lease ended with the server (a lock does not outlive "
    "a restart): its drainer stopped at the crash, and its Hermes run, if it was in one, is settled in the "
    "ledger (reason orphaned, same intent_hash); re-enqueue it if it should run again")
_REMOTE_DETAIL = ("settled by the drainer that reaped its lease: the run was journalled on another machine, so the "
                  "usage is an estimate from its started record")
# The statements format in only these module constants (values always go as parameters): ruff's S608 is
# silenced for them alone.
_LEASE_HELD = ("EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.classid = %s::bigint::oid "
               "AND l.objid = (q.seq & 4294967295)::oid AND l.objsubid = 2 AND l.granted)")


def lease_key(seq: int) -> int:
    """The item's lease key: its sequence number as a signed 32-bit int (the advisory lock's second key)."""
    wrapped = seq & 0xFFFFFFFF
    return wrapped - (1 << 32) if wrapped >= 1 << 31 else wrapped


class PgQueue:
    """The queue in the database at `url` (see the module invariants)."""

    def __init__(self, url: str, clock: Callable[[], float] = time.time) -> None:
        self.url = url
        self.clock = clock
        with connect(url) as database:  # migrated, and unreachable said now rather than mid-drain
            self._shown = database.shown

    @property
    def where(self) -> str:
        return self._shown

    def enqueue(self, intent: Intent) -> dict[str, Any]:
        now = self.clock()
        item = new_item(new_item_id(now), now, intent)
        with connect(self.url) as database:
            if not insert_item(database, item, "pending"):
                raise HarnessError(f"the queue {self.where} already holds an item {item['item_id']}; nothing was "
                                   f"queued, enqueue again")
        return item

    def drain(self, max_items: int, runner: Runner, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
              backoff_base_s: float = DEFAULT_BACKOFF_BASE_S) -> DrainReport:
        report = DrainReport()
        with connect(self.url) as database:
            while len(report.ran) < max_items:
                signum = cancellation.requested()
                if signum is not None:
                    report.cancelled = cancellation.signal_name(signum)
                    break
                item = self._claim_next(database, report)
                if item is None:
                    break
                try:
                    try:
                        envelope = runner(item["intent"], item["item_id"])
                    except cancellation.Cancelled as exc:
                        with cancellation.shielded():
                            item["history"].append(cancelled_entry(self.clock(), cancelled_detail(exc)))
                            self._move(database, item, "dead_letter")
                        raise
                    with cancellation.shielded():
                        report.ran.append(self._settle(database, item, envelope, max_attempts, backoff_base_s))
                finally:
                    database.unlock(LEASE_LOCK, lease_key(item["seq"]))
            report.pending, report.next_due = self._pending(database)
        return report

    def inspect(self, max_items: int | None = None) -> dict[str, Any]:
        """QueueStore.inspect: the items in the order of STATES, then of their filing (seq)."""
        with connect(self.url) as database:
            tallies = dict(database.execute("SELECT state, count(*) FROM queue_items GROUP BY state"))
            rows = database.execute(
                f"SELECT {_COLUMNS}, state, {_LEASE_HELD} FROM queue_items q "  # noqa: S608
                f"ORDER BY array_position(%s::text[], state), seq LIMIT %s", (LEASE_LOCK, list(STATES), max_items))
        items = []
        for row in rows:
            item, state, leased = _item(row), row[-2], row[-1]
            last = item.get("last_envelope") or {}
            entry = {"item_id": item["item_id"], "state": state, "attempts": item["attempts"],
                     "enqueued_at": item["enqueued_at"], "not_before": due_iso(item.get("not_before")),
                     "last_reason": last.get("degraded_reason"), "intent": item["intent"]["intent"][:80]}
            if state == "running" and not leased:
                entry["problem"] = "orphaned: its drainer died; the next drain dead-letters it"
            items.append(entry)
        return {"queue": self.where, "counts": {state: tallies.get(state, 0) for state in STATES}, "items": items}

    def items_in(self, state: str) -> list[dict[str, Any]]:
        with connect(self.url) as database:
            rows = database.execute(f"SELECT {_COLUMNS} FROM queue_items WHERE state = %s ORDER BY seq",  # noqa: S608
                                    (state,))
        return [_item(row) for row in rows]

    # -- internals ---------------------------------------------------------------------------
    def _claim_next(self, database: Database, report: DrainReport) -> dict[str, Any] | None:
        with database.transaction():
            report.orphaned += self._reap_orphans(database)
            rows = database.execute(
                f"SELECT {_COLUMNS} FROM queue_items WHERE state = 'pending' AND coalesce(not_before, 0) <= %s "  # noqa: S608
                f"ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED", (self.clock(),))
            if not rows:
                return None
            item = _item(rows[0])
            # Session-level inside the transaction: it outlives the commit, and ends with the session.
            database.execute("SELECT pg_advisory_lock(%s, %s)", (LEASE_LOCK, lease_key(item["seq"])))
            database.execute("UPDATE queue_items SET state = 'running', claimed_by = %s, claimed_at = now() "
                             "WHERE seq = %s", (application_name(), item["seq"]))
        return item

    def _reap_orphans(self, database: Database) -> list[str]:
        """Dead-letter the running items whose drainer died, settling their runs (inside the claim's transaction)."""
        orphans = []
        # Claimed before the server's own start: the lease ended with the server, not with its drainer.
        for row in database.execute(f"SELECT {_COLUMNS}, claimed_at < pg_postmaster_start_time() FROM queue_items "  # noqa: S608
                                    f"WHERE state = 'running' ORDER BY seq FOR UPDATE SKIP LOCKED"):
            item, restarted = _item(row), bool(row[-1])
            if not database.execute("SELECT pg_try_advisory_xact_lock(%s, %s)",
                                    (LEASE_LOCK, lease_key(item["seq"])))[0][0]:
                continue  # its drainer holds the lease: still running
            item["history"].append(orphaned_entry(self.clock(), _SERVER_RESTARTED_DETAIL if restarted else None))
            self._settle_runs_of(database, item)
            self._move(database, item, "dead_letter")
            orphans.append(item["item_id"])
        return orphans

    def _settle_runs_of(self, database: Database, item: dict[str, Any]) -> None:
        root = item["intent"].get("project_root")
        scratch = state_dir(Path(root)) if isinstance(root, str) else Path("/nonexistent")
        ledger = PgLedger(database, scratch)
        if isinstance(root, str):
            settle_orphans(ledger)  # the runs journalled on this machine, from Hermes's own record
        for started in ledger.unsettled_of_item(item["item_id"]):
            run = started.get("hermes_run")
            if isinstance(run, str) and (runs_dir(ledger) / run).exists():
                continue  # journalled here and still being stopped: its journal settles it
            record = orphan_record(started, None, ORPHANED, status="cancelled")
            record["transport"] = {**record["transport"], "detail": _REMOTE_DETAIL}
            try:
                ledger.append(record)
            except AlreadySettled:
                pass  # its journal was first

    def _settle(self, database: Database, item: dict[str, Any], envelope: Envelope, max_attempts: int,
                backoff_base_s: float) -> dict[str, Any]:
        destination = settle_item(item, envelope, self.clock(), max_attempts, backoff_base_s)
        self._move(database, item, destination)
        return settled_summary(item, envelope, destination)

    def _move(self, database: Database, item: dict[str, Any], state: str) -> None:
        database.execute(
            "UPDATE queue_items SET state = %s, attempts = %s, not_before = %s, history = %s::jsonb, "
            "last_envelope = %s::jsonb, claimed_by = NULL WHERE seq = %s",
            (state, item["attempts"], item.get("not_before"), jsonb_text(item["history"]),
             None if item.get("last_envelope") is None else jsonb_text(item["last_envelope"]), item["seq"]))

    def _pending(self, database: Database) -> tuple[int, str | None]:
        rows = database.execute("SELECT coalesce(not_before, 0) FROM queue_items WHERE state = 'pending'")
        return pending_summary([float(row[0]) for row in rows], self.clock())


def insert_item(database: Database, item: dict[str, Any], state: str) -> bool:
    """Write `item` whole (its attempts, due time, history and last envelope too) as a row in `state`; whether
    it was written (False: a row of that item id is there already, and was left as it is)."""
    return bool(database.execute(
        "INSERT INTO queue_items (item_id, state, enqueued_at, not_before, attempts, intent_hash, intent, history, "
        "last_envelope) VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s::jsonb) "
        "ON CONFLICT (item_id) DO NOTHING RETURNING seq",
        (item["item_id"], state, item["enqueued_at"], item.get("not_before"), item.get("attempts", 0),
         item["intent_hash"], jsonb_text(item["intent"]), jsonb_text(item.get("history", [])),
         None if item.get("last_envelope") is None else jsonb_text(item["last_envelope"]))))


def items_named(database: Database, item_ids: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    """The rows of these item ids that the database holds: each one's state and item."""
    rows = database.execute(f"SELECT {_COLUMNS}, state FROM queue_items WHERE item_id = ANY(%s)",  # noqa: S608
                            (item_ids,))
    return {row[1]: (row[-1], _item(row)) for row in rows}


def _item(row: tuple[Any, ...]) -> dict[str, Any]:
    seq, item_id, enqueued_at, attempts, not_before, intent_hash, intent, history, last_envelope = row[:9]
    return {"seq": int(seq), "item_id": item_id, "enqueued_at": enqueued_at, "attempts": int(attempts),
            "not_before": not_before, "intent_hash": intent_hash, "intent": intent, "history": list(history),
            "last_envelope": last_envelope}



