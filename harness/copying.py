"""Copying one machine's delegation state into the team's PostgreSQL database (`copy-to-database`, docs/scale-out.md).

`copy_into` runs a list of `StoreCopier`s, one per store: the file queue and the file ledger here, serve's jobs in
`harness.serve.job_copy`, the body's sessions of an SQLite store in `harness.session_copy`.

Invariants:
- Each store is written through its database backend's own write path (`pg_queue.insert_item`, `PgLedger.append`,
  `PgJobStore.write`), so the schema has one source of truth.
- Every store is copied in one transaction, the schema's migration included, under a transaction-level advisory
  lock (two copies run one after the other): a row the server refuses, a dropped connection or a conflict leaves
  the database as it was. A dry run does all of it and rolls it back, so it reports what the copy would do,
  a row the server would refuse included, and writes nothing to the database. A schema another program makes
  (the body's) is made before that transaction (`prepare`), and not in a dry run.
- A row whose id the database holds already, as the same row, is skipped and counted (`already_there`): a second
  copy copies nothing. The same id held as another row is a conflict, and any conflict refuses the whole copy
  (`CopyConflict`, exit 2). "The same": a ledger record or a job equal whole (neither changes once written, or once
  settled); a queue item by what makes it that item (its id, enqueue time, intent and the intent's hash), because
  the database's drainers move it on after the copy, and their progress is kept.
- The source is held still, and what died in it is settled first, as its own next reader would: the queue's lock
  is held for the whole copy, a claimed item whose drainer died is dead-lettered `orphaned` (never re-run), a run
  whose owner died is settled from Hermes's own record here, where its journal is (a reaper on another machine
  could only estimate it). A claim is a lease of a process of this machine, which means nothing in the database,
  so what still lives refuses the copy (`SourceBusy`) before the database is touched: its settlement would land in
  the files after the copy.
- What cannot be read (a torn ledger line, a corrupt queue item) is left behind and listed, never guessed at.
- The files are left as they are (a copy, not a move), but the queue remembers it was copied: a drain of its
  files refuses, since its items run from the database now (`autobot.queue.COPIED_MARKER`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from harness.autobot.pg_queue import insert_item, items_named
from harness.autobot.queue import Queue
from harness.database import COPY_LOCK, Database, RowRefused, connect, migrate
from harness.errors import ConfigError, HarnessError
from harness.ledger.journal import in_flight, settle_orphans
from harness.ledger.pg_store import PgLedger
from harness.ledger.store import AlreadySettled, Ledger

# The queue's states a copy carries over, in the file queue's order: `running` is settled before (see above) and
# `corrupt/` holds what a drain could not read.
COPIED_STATES = ("pending", "done", "dead_letter")
# What makes a queue item that item, whatever the database's drainers did with it since.
ITEM_IDENTITY = ("enqueued_at", "intent_hash", "intent")
# The fields a row of the database's queue needs as texts, which a file item's reader does not check.
ITEM_TEXTS = ("enqueued_at", "intent_hash")
# How many conflicting ids a refusal names; the JSON report lists them all.
NAMED_CONFLICTS = 5


def same_item(there: dict[str, Any], item: dict[str, Any]) -> bool:
    return all(there.get(key) == item.get(key) for key in ITEM_IDENTITY)


class CopyConflict(ConfigError):
    """The database holds other rows under ids the copy would write; nothing was copied."""


class SourceBusy(HarnessError):
    """Something of the source still runs (a drainer's claim, a run, a server's job); nothing was copied."""


class CopyFailed(HarnessError):
    """The database refused a row mid-copy; the copy's transaction was rolled back, so nothing was copied."""


@dataclass
class StoreCopy:
    """What a copy did with one store (or, in a dry run, would do)."""

    store: str
    source: str
    copied: int = 0
    already_there: int = 0
    by_state: dict[str, int] = field(default_factory=dict)
    left_behind: list[dict[str, str]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    def leave(self, what: str, why: str) -> None:
        self.left_behind.append({"what": what, "why": why})

    def to_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"store": self.store, "source": self.source, "copied": self.copied,
                                 "already_there": self.already_there, "left_behind": self.left_behind}
        if self.by_state:
            shown["by_state"] = self.by_state
        if self.conflicts:
            shown["conflicts"] = self.conflicts
        return shown


class StoreCopier(Protocol):
    """One store's part of a copy; above it `copy_into`, below it the store's file and database backends."""

    @property
    def store(self) -> str:
        """The store's name in the report (`queue`, `ledger`, `jobs`, `sessions`)."""

    def held_still(self) -> AbstractContextManager[None]:
        """Settle what died in the source, keep it from changing until the exit, and raise `SourceBusy` for what
        still runs in it; the database is not touched yet."""

    def prepare(self, url: str) -> None:
        """Still held still, before the copy's transaction, and not in a dry run (which writes nothing): what the
        database needs made by another program, which commits on its own (the body's schema)."""

    def copy(self, database: Database) -> StoreCopy:
        """Inside the caller's transaction: the source's rows the database lacks written, the ones it holds counted,
        the conflicting ones listed (and then nothing of this store written); `CopyFailed` for a refused row."""

    def committed(self, database: str) -> None:
        """After the copy committed (not after a dry run): what the source keeps of it (`database` is shown
        without its password), still held still."""


@dataclass(frozen=True)
class CopyReport:
    database: str
    dry_run: bool
    stores: tuple[StoreCopy, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"database": self.database, "dry_run": self.dry_run,
                "stores": [store.to_dict() for store in self.stores]}


class _DryRun(Exception):
    """Not an error: how a dry run leaves its transaction, rolled back, with what it did."""

    def __init__(self, stores: tuple[StoreCopy, ...]) -> None:
        super().__init__("dry run")
        self.stores = stores


def copy_into(url: str, copiers: Sequence[StoreCopier], *, dry_run: bool = False) -> CopyReport:
    """Copy every copier's store into the database at `url` in one transaction (see the module invariants)."""
    with ExitStack() as still:
        for copier in copiers:
            still.enter_context(copier.held_still())
        if not dry_run:
            for copier in copiers:
                copier.prepare(url)
        with connect(url, migrated=False) as database:
            try:
                stores = _copied(database, copiers, dry_run)
            except _DryRun as rolled_back:
                return CopyReport(database.shown, dry_run, rolled_back.stores)
            for copier in copiers:
                copier.committed(database.shown)
            return CopyReport(database.shown, dry_run, stores)


def _copied(database: Database, copiers: Sequence[StoreCopier], dry_run: bool) -> tuple[StoreCopy, ...]:
    with database.transaction():
        database.execute("SELECT pg_advisory_xact_lock(%s, 0)", (COPY_LOCK,))
        migrate(database)
        stores = tuple(copier.copy(database) for copier in copiers)
        refuse_conflicts(database, stores)
        if dry_run:
            raise _DryRun(stores)
    return stores


def refuse_conflicts(database: Database, stores: Sequence[StoreCopy]) -> None:
    conflicts = [f"{store.store}: {conflict}" for store in stores for conflict in store.conflicts]
    if conflicts:
        named = "; ".join(conflicts[:NAMED_CONFLICTS]) + ("; ..." if len(conflicts) > NAMED_CONFLICTS else "")
        raise CopyConflict(f"the database {database.shown} holds {len(conflicts)} other row(s) under ids this copy "
                           f"would write ({named}): it is another team's, or these files are not the ones copied "
                           f"before; nothing was copied")


def refused(store: str, what: str, exc: RowRefused) -> CopyFailed:
    return CopyFailed(f"{store}: {what}: {exc}; the copy was rolled back, nothing was copied")


def busy(what: str, names: Sequence[str], until: str) -> SourceBusy:
    """The refusal of a copy for `names`, the `what` of the source that still run."""
    named = ", ".join(names[:NAMED_CONFLICTS]) + (", ..." if len(names) > NAMED_CONFLICTS else "")
    return SourceBusy(f"{len(names)} {what} ({named}): copy once {until}; nothing was copied")


Row = TypeVar("Row")


@dataclass(frozen=True)
class Candidate(Generic[Row]):
    """A row of the source, as a copier offers it: its id in the database, the document compared with what the
    database holds under that id, how a conflict names it, and what the copier writes."""

    key: str
    document: Any
    label: str
    row: Row


def to_write(result: StoreCopy, candidates: Sequence[Candidate[Row]], held: dict[str, Any],
             same: Callable[[Any, Any], bool] = operator.eq) -> list[Row]:
    """The rows the database lacks, in order; those it holds as the same (`same`) are counted in `result`, the
    others are its conflicts, and then nothing is to be written. An id repeated in the source is held to its first."""
    missing = []
    for candidate in candidates:
        there = held.get(candidate.key)
        if there is None:
            missing.append(candidate.row)
            held[candidate.key] = candidate.document
        elif same(there, candidate.document):
            result.already_there += 1
        else:
            result.conflicts.append(f"{candidate.label} is another one there")
    return [] if result.conflicts else missing


class LedgerCopier:
    """The ledger file at `path` (its run journals beside it) into the database's ledger."""

    store = "ledger"

    def __init__(self, path: Path) -> None:
        self.ledger = Ledger(path)

    @contextmanager
    def held_still(self) -> Iterator[None]:
        settle_orphans(self.ledger)
        flying = in_flight(self.ledger)
        if flying:
            raise busy(f"run(s) of the ledger {self.ledger.where} are in flight", flying,
                       "they settle (`ledger verify` lists them)")
        yield

    def prepare(self, url: str) -> None:
        """Nothing: the ledger's table is the harness's schema, migrated in the copy's transaction."""

    def copy(self, database: Database) -> StoreCopy:
        result = StoreCopy(self.store, self.ledger.where)
        records: list[Candidate[tuple[int, dict[str, Any]]]] = []
        for line in self.ledger.lines():
            if line.record is None:
                result.leave(f"line {line.number}", line.problem or "unreadable")
            elif not isinstance(line.record.get("record_id"), str):
                result.leave(f"line {line.number}", "its record_id is not a text")
            else:
                record_id = line.record["record_id"]
                records.append(Candidate(record_id, line.record, f"record {record_id} (line {line.number})",
                                         (line.number, line.record)))
        target = PgLedger(database, self.ledger.scratch)
        for number, record in to_write(result, records, target.records_named([r.key for r in records])):
            try:
                target.append(record)
            except AlreadySettled:
                result.conflicts.append(f"line {number} settles run {record.get('started_record_id')}, which another "
                                        f"record settles there")
            except RowRefused as exc:
                raise refused(self.store, f"line {number} (record {record['record_id']})", exc) from None
            else:
                result.copied += 1
        return result

    def committed(self, database: str) -> None:
        """Nothing: the file ledger's records are history, not work; reading them twice costs nothing."""


class QueueCopier:
    """The file queue's items, each in its state, into the database's queue."""

    store = "queue"

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    @contextmanager
    def held_still(self) -> Iterator[None]:
        with self.queue.held_still() as claimed:
            if claimed:
                raise busy(f"item(s) of the queue {self.queue.where} are being run by a live drainer", claimed,
                           "it is done (stop the drainers first)")
            yield

    def prepare(self, url: str) -> None:
        """Nothing: the queue's table is the harness's schema, migrated in the copy's transaction."""

    def copy(self, database: Database) -> StoreCopy:
        result = StoreCopy(self.store, self.queue.where)
        for name, _, problem in self.queue.entries("corrupt"):
            result.leave(f"corrupt/{name}", problem or "set aside by a drain as unreadable")
        items: list[Candidate[tuple[str, dict[str, Any]]]] = []
        for state in COPIED_STATES:
            for name, item, problem in self.queue.entries(state):
                if item is None:
                    result.leave(f"{state}/{name}", problem or "unreadable")
                elif not all(isinstance(item.get(key), str) for key in ITEM_TEXTS):
                    result.leave(f"{state}/{name}", f"one of {', '.join(ITEM_TEXTS)} is missing or not a text")
                else:
                    items.append(Candidate(item["item_id"], item, f"item {item['item_id']}", (state, item)))
        items.sort(key=lambda candidate: candidate.key)  # first in first out across states, as the ids sort
        held = {item_id: item for item_id, (_, item) in items_named(database, [c.key for c in items]).items()}
        for state, item in to_write(result, items, held, same_item):
            try:
                written = insert_item(database, item, state)
            except RowRefused as exc:
                raise refused(self.store, f"{state}/{item['item_id']}", exc) from None
            if written:
                result.copied += 1
                result.by_state[state] = result.by_state.get(state, 0) + 1
            else:
                result.already_there += 1  # the same id twice in the files: the first is kept
        return result

    def committed(self, database: str) -> None:
        """The queue remembers it was copied, so a drain of the files refuses to run its items a second time."""
        self.queue.mark_copied(database, self.queue.clock())
