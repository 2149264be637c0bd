"""The cost ledger file: `<project_root>/.agents/state/autobot-cost-ledger.jsonl`.

Invariants:
- One record is one line of compact JSON, appended whole under an exclusive lock and fsynced
  (`durable.append_line`); `append` returns the record's line number, counted under that same lock,
  so `path#L<n>` always points at the record just written, however many writers there are.
- Every record carries `v`, `record_id`, `ts`, `kind` and `status`; `parent_id` is optional and
  links a run to the run that spawned it. Records are never rewritten or removed.
- A record with status `started` is a journal's promise that a run was spawned, not its account:
  `records()` leaves those out (one record per run, for every total), `all_records()` keeps them
  (for reconciling them with their settlements, which name them by `started_record_id`).
- Reading tolerates damage: a line torn by a crash, or not JSON, is reported with its number by
  `verify` and skipped by readers; it never hides the lines after it.
- `LedgerStore` is the seam every writer and reader of the ledger goes through: this file (`Ledger`,
  the default) or a table of a PostgreSQL database (`harness.ledger.pg_store`), with the same records.
  Either way the journal's run folders stay on the machine that spawned the run, in `scratch`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from harness import strict_json
from harness.durable import DurableWriteError, append_line
from harness.errors import HarnessError
from harness.settings import state_dir

LEDGER_NAME = "autobot-cost-ledger.jsonl"
SCHEMA_VERSION = 1
REQUIRED_FIELDS = ("v", "record_id", "ts", "kind", "status")
STARTED = "started"


class LedgerError(HarnessError):
    """The ledger cannot be read or written."""


def is_started(record: Mapping[str, Any]) -> bool:
    """Whether `record` is a journal's `started` record (see `harness.ledger.journal`)."""
    return record.get("status") == STARTED


def default_ledger_path(project_root: Path) -> Path:
    return state_dir(project_root) / LEDGER_NAME


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_utc(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_record_id() -> str:
    return "rec-" + secrets.token_hex(8)


@dataclass(frozen=True)
class LedgerEntry:
    """Where a record landed: line `line` of the file `path`, or row `line` of the database `database`
    (shown without its password)."""

    path: Path
    line: int
    record_id: str
    database: str | None = None

    def ref(self, relative_to: Path | None = None) -> str:
        if self.database is not None:
            return f"{self.database}#ledger/{self.line}"
        shown = self.path
        if relative_to is not None:
            try:
                shown = self.path.relative_to(relative_to)
            except ValueError:
                pass
        return f"{shown}#L{self.line}"


@dataclass(frozen=True)
class LedgerLine:
    number: int
    record: dict[str, Any] | None
    problem: str | None


@dataclass
class Verification:
    path: Path | str
    lines: int = 0
    good: int = 0
    problems: list[tuple[int, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


class LedgerStore(Protocol):
    """Where the ledger's records are kept; above it the journal, the delegation and dispatch layers and the
    reports, below it a file or a database. Records are appended whole and never rewritten."""

    @property
    def where(self) -> str:
        """The ledger as a user is shown it (a path, or a URL without its password)."""

    @property
    def scratch(self) -> Path:
        """The local folder of the journal's run folders and kept answers (this machine's, whatever the store)."""

    def append(self, record: Mapping[str, Any]) -> LedgerEntry:
        """Append one record (v, record_id and ts filled in when absent); LedgerError when it cannot be kept,
        `AlreadySettled` when it settles a run that already has its settlement."""

    def lines(self) -> Iterator[LedgerLine]:
        """Every record in the order written, with its number, or the problem of a damaged one."""

    def all_records(self) -> Iterator[dict[str, Any]]:
        """Every readable record, the journal's `started` records included."""

    def records(self) -> Iterator[dict[str, Any]]:
        """The accounted records: settlements and refusals, one per run."""

    def verify(self) -> Verification:
        """Every record whole and readable (a file's torn lines are its problems)."""

    def run_state(self, started_record_id: str) -> tuple[bool, bool]:
        """Whether the started record `started_record_id` is in the ledger, and whether its run is settled."""


class AlreadySettled(LedgerError):
    """A settlement of a run that already has one; nothing was written."""


class Ledger:
    """The ledger as a JSON-lines file (the default store)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def for_project(cls, project_root: Path) -> Ledger:
        return cls(default_ledger_path(project_root))

    @property
    def where(self) -> str:
        return str(self.path)

    @property
    def scratch(self) -> Path:
        return self.path.parent

    def run_state(self, started_record_id: str) -> tuple[bool, bool]:
        seen_started = settled = False
        for record in self.all_records():
            if record.get("record_id") == started_record_id:
                seen_started = True
            elif record.get("started_record_id") == started_record_id:
                settled = True
        return seen_started, settled

    def append(self, record: Mapping[str, Any]) -> LedgerEntry:
        """Append one record (v, record_id and ts are filled in when absent); returns where it landed."""
        full = check_record(record)
        line = json.dumps(full, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")
        try:
            number = append_line(self.path, line)
        except DurableWriteError as exc:
            raise LedgerError(str(exc)) from None
        return LedgerEntry(self.path, number, full["record_id"])

    def lines(self) -> Generator[LedgerLine, None, None]:
        """Every line with its record or its problem; a missing ledger has no lines."""
        try:
            handle = strict_json.open_regular(self.path)
        except FileNotFoundError:
            return
        except strict_json.InputRejected as exc:
            raise LedgerError(str(exc)) from None
        with handle:
            for number, raw in enumerate(handle, start=1):
                yield _parse_line(number, raw)

    def all_records(self) -> Iterator[dict[str, Any]]:
        """Every readable record, the journal's `started` records included."""
        for line in self.lines():
            if line.record is not None:
                yield line.record

    def records(self) -> Iterator[dict[str, Any]]:
        """The accounted records: settlements and refusals, one per run (a `started` record is not a run's
        account, only the promise of one; see `journal`)."""
        for record in self.all_records():
            if not is_started(record):
                yield record

    def verify(self) -> Verification:
        result = Verification(self.path)
        for line in self.lines():
            result.lines += 1
            if line.problem is None:
                result.good += 1
            else:
                result.problems.append((line.number, line.problem))
        return result


def check_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """`record` with v, record_id and ts filled in when absent; LedgerError when a required field is empty."""
    full = {"v": SCHEMA_VERSION, "record_id": new_record_id(), "ts": utc_now(), **record}
    missing = [name for name in REQUIRED_FIELDS if full.get(name) in (None, "")]
    if missing:
        raise LedgerError(f"a ledger record needs {', '.join(missing)}")
    return full


def _parse_line(number: int, raw: bytes) -> LedgerLine:
    if not raw.endswith(b"\n"):
        return LedgerLine(number, None, "truncated: the last line has no newline (a writer died mid-append)")
    try:
        text = raw.decode("utf-8")
        record = strict_json.loads(text, "the line", max_bytes=len(text))
    except UnicodeDecodeError:
        return LedgerLine(number, None, "not UTF-8")
    except strict_json.InputRejected as exc:
        return LedgerLine(number, None, f"not a JSON record ({exc}); a torn write?")
    if not isinstance(record, dict):
        return LedgerLine(number, None, "not a JSON object")
    missing = [name for name in REQUIRED_FIELDS if name not in record]
    if missing:
        return LedgerLine(number, None, f"missing field(s): {', '.join(missing)}")
    return LedgerLine(number, record, None)
