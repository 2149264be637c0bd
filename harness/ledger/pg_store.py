"""The cost ledger as a table of the team's PostgreSQL database (`--database`): the same records as the file.

Invariants:
- One record is one row (`record` jsonb, numbered by `seq`), inserted in its own transaction and
  committed before `append` returns, so a record a caller was told of survives the server's crash
  (fsync is on in any cluster worth the name). Rows are never updated or deleted.
- A run is settled exactly once, whoever settles it (its owner, a settler on the owner's machine, a
  drainer reaping the owner's lease on another): a unique index on `started_record_id` refuses the
  second settlement, which `append` reports as `AlreadySettled` with nothing written.
- The journal's run folders (spools, the owner's lock, the supervisor's pid file) stay on the machine
  that spawned the run: `scratch` is that machine's state folder of the project.
- The database is one ledger: every project whose commands name it shares it (a team keeps separate
  ledgers in separate databases, or schemas through libpq's `options=-csearch_path=...`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from harness.database import Database, DatabaseUnavailable, RowRefused, jsonb_text
from harness.ledger.store import (
    AlreadySettled,
    LedgerEntry,
    LedgerError,
    LedgerLine,
    Verification,
    check_record,
    is_started,
)

# Rows read per round trip when the ledger is read whole.
FETCH_ROWS = 1000


class PgLedger:
    """The ledger in `database` (see the module invariants); `scratch` is this machine's journal folder."""

    def __init__(self, database: Database, scratch: Path) -> None:
        self.database = database
        self._scratch = scratch

    @property
    def where(self) -> str:
        return self.database.shown

    @property
    def scratch(self) -> Path:
        return self._scratch

    def append(self, record: Mapping[str, Any]) -> LedgerEntry:
        full = check_record(record)
        started = full.get("started_record_id")
        item = full.get("queue_item")
        document = jsonb_text(full)
        try:
            rows = self.database.execute(
                "INSERT INTO ledger (record_id, started_record_id, queue_item, record) VALUES (%s, %s, %s, %s::jsonb) "
                "ON CONFLICT DO NOTHING RETURNING seq",
                (full["record_id"], started if isinstance(started, str) else None,
                 item if isinstance(item, str) else None, document))
        except (DatabaseUnavailable, RowRefused) as exc:
            raise LedgerError(str(exc)) from None
        if not rows:
            raise AlreadySettled(f"run {started} already has its settlement in {self.where}; nothing was written")
        return LedgerEntry(self._scratch, int(rows[0][0]), full["record_id"], database=self.where)

    def lines(self) -> Iterator[LedgerLine]:
        after = 0
        while True:
            try:
                rows = self.database.execute("SELECT seq, record FROM ledger WHERE seq > %s ORDER BY seq LIMIT %s",
                                             (after, FETCH_ROWS))
            except DatabaseUnavailable as exc:
                raise LedgerError(str(exc)) from None
            for seq, record in rows:
                yield LedgerLine(int(seq), record, None)
            if len(rows) < FETCH_ROWS:
                return
            after = int(rows[-1][0])

    def all_records(self) -> Iterator[dict[str, Any]]:
        for line in self.lines():
            if line.record is not None:
                yield line.record

    def records(self) -> Iterator[dict[str, Any]]:
        for record in self.all_records():
            if not is_started(record):
                yield record

    def verify(self) -> Verification:
        result = Verification(self.where)
        for _line in self.lines():
            result.lines += 1
            result.good += 1
        return result

    def run_state(self, started_record_id: str) -> tuple[bool, bool]:
        try:
            rows = self.database.execute(
                "SELECT EXISTS (SELECT 1 FROM ledger WHERE record_id = %s), "
                "EXISTS (SELECT 1 FROM ledger WHERE started_record_id = %s)", (started_record_id, started_record_id))
        except DatabaseUnavailable as exc:
            raise LedgerError(str(exc)) from None
        return bool(rows[0][0]), bool(rows[0][1])

    def records_named(self, record_ids: list[str]) -> dict[str, dict[str, Any]]:
        """The records of these ids that the ledger holds."""
        try:
            rows = self.database.execute("SELECT record_id, record FROM ledger WHERE record_id = ANY(%s)",
                                         (record_ids,))
        except DatabaseUnavailable as exc:
            raise LedgerError(str(exc)) from None
        return {str(record_id): record for record_id, record in rows}

    def unsettled_of_item(self, item_id: str) -> list[dict[str, Any]]:
        """The started records of queue item `item_id` that have no settlement yet."""
        try:
            rows = self.database.execute(
                "SELECT s.record FROM ledger s WHERE s.queue_item = %s AND s.record->>'status' = 'started' "
                "AND NOT EXISTS (SELECT 1 FROM ledger t WHERE t.started_record_id = s.record_id) ORDER BY s.seq",
                (item_id,))
        except DatabaseUnavailable as exc:
            raise LedgerError(str(exc)) from None
        return [row[0] for row in rows]
