"""Two-phase ledgering of every spawned run: a `started` record before the spawn, exactly one settlement after.

A run's journal lives beside its ledger: `<ledger dir>/hermes-runs/<run id>/` holds `started.json` (a
copy of the started record), `owner.lock`, the spools (`stdout`, `stderr`, `usage.json`) and
`child.pid` (written by the supervisor). The folder exists exactly while the run is unsettled.

Invariants:
- Order of an owner: the run folder is made under a dot-name, `owner.lock` is flocked, `started.json`
  is written, the folder is renamed to its run id, the started record is appended, and only then is
  Hermes spawned. A started record the ledger cannot take means nothing is spawned.
- The owner's flock on `owner.lock` is also held by the run's supervisor (`hold_fds`), so an unheld
  lock means the owner and the whole Hermes tree are gone: the run is orphaned.
- Settling is once: the owner (or a settler) holds `owner.lock`, appends the settlement naming
  `started_record_id`, then removes the folder. A folder whose `owner.lock` is gone is a removal that
  was cut short (the lock is never removed before the settlement is written), and is finished.
- `settle_orphans` (run by every command that opens a journal or reads the ledger) takes an orphan's
  lock without waiting, re-reads the ledger under it, and appends a settlement only when none
  exists; a started record the ledger never got means nothing was spawned, and the folder is just
  removed. So is a dot-named folder (`.<run id>.<pid>`) whose owner process no longer exists (it
  died before the run had a name); never by its lock, which a live owner leaves unheld for an
  instant between creating and locking it.
- An orphan's settlement is `cancelled` / `orphaned`, with Hermes's own record of the session when it
  left one (the `session_id:` line in the stderr spool and the profile's state.db row, or the
  usage file); otherwise an estimate, marked so.
- A journal used as a context manager settles on the way out of an exception too (`harness_error`,
  or `cancelled` when the exception is a cancellation), so no path after the spawn goes unledgered;
  the answer Hermes gave, if any, is kept at `<ledger dir>/kept-answers/<run id>.txt`.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import shutil
import stat
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from harness import strict_json
from harness.durable import DurableWriteError, atomic_write, atomic_write_json, is_flocked
from harness.hermes import cancellation
from harness.hermes.accounting import RunRecord, read_state_db, read_usage_file, session_id_from
from harness.hermes.outcome import RunOutcome, RunRequest
from harness.hermes.supervisor import CHILD_PID_FILE
from harness.hermes.transport import CWD_PREFIX, JournalRefused, RunSlot
from harness.ledger.records import orphan_record, run_record, started_record
from harness.ledger.store import AlreadySettled, LedgerEntry, LedgerError, LedgerStore, new_record_id

RUNS_DIR = "hermes-runs"
KEPT_ANSWERS_DIR = "kept-answers"
STARTED_FILE = "started.json"
OWNER_LOCK = "owner.lock"
STDERR_READ_BYTES = 1 << 16
# The supervisor writes the child's pid and a newline.
PID_FILE_MAX_BYTES = 64
# Stable reasons of the journal's own settlements.
HARNESS_ERROR = "harness_error"
ORPHANED = "orphaned"


def runs_dir(ledger: LedgerStore) -> Path:
    return ledger.scratch / RUNS_DIR


class RunJournal:
    """The journal of one spawned run (see the module invariants)."""

    def __init__(self, ledger: LedgerStore, kind: str, fields: Mapping[str, Any] | None = None,
                 hold_fds: tuple[int, ...] = (), stop: threading.Event | None = None) -> None:
        self.ledger, self.kind, self.fields = ledger, kind, dict(fields or {})
        self.extra_hold_fds = hold_fds
        self.stop = stop
        self.run_id = "run-" + secrets.token_hex(8)
        self.started_id: str | None = None
        self.outcome: RunOutcome | None = None
        self.entry: LedgerEntry | None = None
        self._lock_fd: int | None = None
        self._run_dir: Path | None = None
        self._cwd_dir: Path | None = None
        settle_orphans(ledger)

    @property
    def open(self) -> bool:
        return self.started_id is not None and self.entry is None

    def begin(self, request: RunRequest, home: Path, cwd_dir: Path) -> RunSlot:
        """Write the started record; raises JournalRefused (nothing is spawned then)."""
        try:
            with cancellation.shielded():  # a cancel lands before or after a start, never inside one
                return self._begin(request, home, cwd_dir)
        except LedgerError as exc:
            raise JournalRefused(f"the run's start could not be ledgered, so it was not started: {exc}") from None

    def _begin(self, request: RunRequest, home: Path, cwd_dir: Path) -> RunSlot:
        root = runs_dir(self.ledger)
        pending = root / f".{self.run_id}.{os.getpid()}"
        try:
            pending.mkdir(parents=True)
            fd = os.open(pending / OWNER_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise LedgerError(f"cannot make the run folder {pending}: {exc.strerror or exc}") from None
        fcntl.flock(fd, fcntl.LOCK_EX)
        self._lock_fd = fd
        record_id = new_record_id()
        record = started_record(self.kind, request, record_id=record_id, hermes_run=self.run_id, pid=os.getpid(),
                                home=home, cwd_dir=cwd_dir, **self.fields)
        try:
            atomic_write_json(pending / STARTED_FILE, record)
            os.rename(pending, root / self.run_id)
        except (DurableWriteError, OSError) as exc:
            self._drop(pending)
            raise LedgerError(f"cannot journal the run in {root}: {exc}") from None
        self._run_dir, self._cwd_dir = root / self.run_id, cwd_dir
        try:
            self.ledger.append(record)
        except LedgerError:
            self._drop(self._run_dir)
            raise
        self.started_id = record_id
        return RunSlot(self._run_dir, (fd, *self.extra_hold_fds))

    def settle(self, record: dict[str, Any]) -> LedgerEntry:
        """Append the run's one settlement; raises LedgerError (the run stays open for a settler)."""
        if self.entry is not None:
            raise LedgerError(f"run {self.run_id} is already settled")
        if self.started_id is None:  # refused before any spawn: one plain record, as for any refusal
            with cancellation.shielded():
                self.entry = self.ledger.append(record)
            return self.entry
        settled = {**record, "phase": "settled", "hermes_run": self.run_id, "started_record_id": self.started_id,
                   "hermes_pid": _child_pid(self._run_dir)}
        settled.pop("record_id", None)
        with cancellation.shielded():
            self.entry = self.ledger.append(settled)
            self.close()
        return self.entry

    def close(self) -> None:
        """Remove the run folder once settled, and let go of the owner lock (settled or not)."""
        if self.entry is not None and self._run_dir is not None:
            self._drop(self._run_dir)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _keep_answer(self, text: str) -> str | None:
        """Keep an answer whose caller failed before it could use it, beside the ledger; its path, or None."""
        if not text:
            return None
        path = self.ledger.scratch / KEPT_ANSWERS_DIR / f"{self.run_id}.txt"
        try:
            atomic_write(path, text.encode("utf-8"))
        except DurableWriteError:
            return None
        return str(path)

    def _drop(self, folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        if self._cwd_dir is not None:
            shutil.rmtree(self._cwd_dir, ignore_errors=True)

    def __enter__(self) -> RunJournal:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> None:
        try:
            if exc is not None and self.open:
                self._settle_after(exc)
        except LedgerError:
            pass  # the run stays open; the next command settles it from the run folder
        finally:
            self.close()

    def _settle_after(self, exc: BaseException) -> None:
        cancelled = isinstance(exc, cancellation.Cancelled)
        status, reason = ("cancelled", "cancelled") if cancelled else ("error", HARNESS_ERROR)
        detail = f"{type(exc).__name__}: {exc}"[:500]
        if self.outcome is not None:
            self.settle(run_record(self.kind, self.outcome, status=status, reason=reason, detail=detail,
                                   raw_response=self._keep_answer(self.outcome.text), **self.fields))
            return
        assert self._run_dir is not None  # open implies begun
        started = _started_of(self._run_dir)
        if started is None:
            return  # the folder is damaged; the next command's settler decides from what is left
        self.settle({**orphan_record(started, _hermes_record(self._run_dir, started), reason, status=status),
                     "detail": detail})


def _started_of(run_dir: Path) -> dict[str, Any] | None:
    """The run's started record, or None when its folder holds none that can be used (missing, not a regular
    file, too large, not a JSON object). Only a regular file is read: a FIFO or a device put in a run's folder
    must not hold every command that settles orphans, nor one that is not an object crash them."""
    try:
        started = json.loads(strict_json.read_bounded(run_dir / STARTED_FILE))
    except (strict_json.InputRejected, ValueError):
        return None
    return started if isinstance(started, dict) else None


def _child_pid(run_dir: Path | None) -> int | None:
    if run_dir is None:
        return None
    try:
        return int(strict_json.read_bounded(run_dir / CHILD_PID_FILE, PID_FILE_MAX_BYTES).strip())
    except (strict_json.InputRejected, ValueError):
        return None


def _open_runs(ledger: LedgerStore) -> Iterator[Path]:
    root = runs_dir(ledger)
    try:
        names = sorted(os.listdir(root))
    except FileNotFoundError:
        return
    except OSError as exc:  # e.g. the project root is a regular file: no run can be settled or started there
        raise LedgerError(f"cannot read the run journals in {root}: {exc.strerror or exc}") from None
    for name in names:
        if not name.startswith("."):
            yield root / name
        elif _owner_gone(name):
            # An owner that died before its run had a name: nothing was spawned, nothing was ledgered.
            shutil.rmtree(root / name, ignore_errors=True)


def _owner_gone(pending_name: str) -> bool:
    """Whether the process named in a dot-named run folder (`.<run id>.<pid>`) no longer exists."""
    try:
        pid = int(pending_name.rsplit(".", 1)[1])
    except (IndexError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def in_flight(ledger: LedgerStore) -> list[str]:
    """Run ids whose owner (or supervisor) still holds them."""
    return [path.name for path in _open_runs(ledger) if is_flocked(path / OWNER_LOCK, missing=False)]


def settle_orphans(ledger: LedgerStore) -> list[LedgerEntry]:
    """Settle every run whose owner and tree are gone; returns the settlements written."""
    written = []
    for folder in _open_runs(ledger):
        try:
            fd = os.open(folder / OWNER_LOCK, os.O_RDWR)
        except FileNotFoundError:
            # Only the removal of a settled (or never started) run deletes the lock: finish that removal.
            shutil.rmtree(folder, ignore_errors=True)
            continue
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # in flight
            entry = _settle_one(ledger, folder)
            if entry is not None:
                written.append(entry)
        finally:
            os.close(fd)
    return written


def _settle_one(ledger: LedgerStore, folder: Path) -> LedgerEntry | None:
    started = _started_of(folder)
    if started is None:
        shutil.rmtree(folder, ignore_errors=True)  # made by an owner that died before it spawned anything
        return None
    record_id = started.get("record_id")
    seen_started, settled = ledger.run_state(record_id) if isinstance(record_id, str) else (False, False)
    entry = None
    if seen_started and not settled:
        hermes = _hermes_record(folder, started)
        with cancellation.shielded():
            try:
                entry = ledger.append({**orphan_record(started, hermes, ORPHANED, status="cancelled"),
                                       "hermes_pid": _child_pid(folder)})
            except AlreadySettled:
                pass  # another settler (a drainer reaping the lease) was first: the run has its one settlement
    shutil.rmtree(folder, ignore_errors=True)
    _remove_cwd(started.get("cwd_dir"))
    return entry


def _remove_cwd(path: Any) -> None:
    """Remove the empty folder Hermes ran in, named by a started record; a record is data someone else may
    have written, so only a folder of ours that the transport could have made is ever removed."""
    if not isinstance(path, str) or not Path(path).name.startswith(CWD_PREFIX):
        return
    try:
        info = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
        shutil.rmtree(path, ignore_errors=True)


def _hermes_record(folder: Path, started: Mapping[str, Any]) -> RunRecord | None:
    if started.get("mode") == "oneshot":
        return read_usage_file(folder / "usage.json")
    try:
        with strict_json.open_regular(folder / "stderr") as f:
            size = os.fstat(f.fileno()).st_size
            f.seek(max(0, size - STDERR_READ_BYTES))
            stderr = f.read(STDERR_READ_BYTES).decode("utf-8", errors="replace")
    except (OSError, strict_json.InputRejected):
        return None
    session_id = session_id_from(stderr)
    home = started.get("hermes_home")
    return read_state_db(Path(home), session_id) if session_id and isinstance(home, str) else None
