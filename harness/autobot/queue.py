"""The autobot work queue: enqueue now, drain later, retry with backoff, then dead-letter.

Layout under the queue folder: `pending/`, `running/`, `done/`, `dead_letter/` (one JSON file per
item, named `<enqueued time>-<random>.json` so names sort first-in first-out), `corrupt/` (items that
cannot be read, each moved there as it was, with `<name>.reason` beside it) and `queue.lock`.

Invariants:
- A drain inside a delegated run (`HERMES_AUTOBOT_DELEGATED` set) refuses to start (`NestedDrain`)
  before it reads, moves or creates anything: a nested drain is the caller's mistake, not the items'.
- A pending item that cannot be read (not JSON, not an object, fields of the wrong type) is moved to
  `corrupt/` with its reason and counted in the drain's report; it never blocks the queue and is
  never retried.
- The queue of a project is `<project root>/.agents/state/autobot-queue/`, and `enqueue` files an
  intent in the queue of the intent's own `project_root` (the root its ledger follows), unless a
  queue folder is named explicitly: an item and its ledger never part ways.
- A cancelled drain (SIGTERM, SIGINT, SIGHUP) finishes settling the item it was running (its run is
  ledgered `cancelled` and the item dead-lettered with that reason) and claims nothing more.
- An item lives in exactly one state folder; it moves by rename, and every rewrite is atomic.
- Claiming happens under `queue.lock` (flock) and includes taking an flock on the claimed file,
  so two drainers never claim the same item: draining twice never runs an item twice.
- A `running/` item whose flock nobody holds belongs to a drainer that died mid-run. It is never
  re-run silently: it goes to `dead_letter/` as `orphaned`; its run, stopped by its supervisor, is
  settled in its project's ledger from Hermes's own record (`journal.settle_orphans`).
- A degraded run is retried only when its reason is transient (provider errors, timeouts, a held
  lock), after `backoff_base_s * 2^(attempt-1)` seconds, at most `max_attempts` runs in all; then,
  or at once for a permanent reason, the item goes to `dead_letter/` with its last envelope.
- Draining never sleeps: items not yet due stay pending and are reported with their due time.
- A queue copied into a database (`copy-to-database`, `COPIED_MARKER` beside the state folders) is not
  drained from the files: its pending items run from the database now, and a drain here would run them
  twice. The drain refuses (`QueueCopied`) before it claims anything; removing the marker undoes that.
- `QueueStore` is the seam the commands and `serve` go through: these folders (`Queue`, the default)
  or a table of a PostgreSQL database (`harness.autobot.pg_queue`), with the same items, states,
  retries and reports.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from harness import strict_json
from harness.autobot.delegate import Envelope, EnvelopeStatus
from harness.autobot.intent import MAX_CHARS_CEILING, Intent
from harness.durable import atomic_write, atomic_write_json, flocked, is_flocked, lock_exclusive
from harness.errors import ConfigError, HarnessError
from harness.hermes import DELEGATED_ENV, cancellation, delegated_marker
from harness.hermes.outcome import CANCELLED, NESTED_DELEGATION
from harness.ledger.journal import settle_orphans
from harness.ledger.store import Ledger, iso_utc
from harness.settings import DATABASE_URL_ENV, STATE_DIR

STATES = ("pending", "running", "done", "dead_letter", "corrupt")
REASON_SUFFIX = ".reason"
QUEUE_DIR = STATE_DIR / "autobot-queue"
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_BASE_S = 30.0
MAX_BACKOFF_S = 3600.0
ORPHANED = "orphaned"
COPIED_MARKER = "copied-to-database.json"
# The most an item may weigh when read back. Its bulk is the last envelope's `response`, at most
# MAX_CHARS_CEILING characters, each written as at most 6 bytes (a control character's \\u escape); the
# normalised intent (16,000 characters, 64 paths, 32 tags), its history and the envelope's other fields
# stay well under the 1 MiB added for them.
ITEM_MAX_BYTES = 6 * MAX_CHARS_CEILING + (1 << 20)
# A set-aside item's `.reason` and the copied marker: a few hundred bytes as written.
NOTE_MAX_BYTES = 1 << 16

Runner = Callable[[dict[str, Any], str], Envelope]


class NestedDrain(HarnessError):
    """A drain was started inside a delegated run; it refused before touching the queue."""

    reason = NESTED_DELEGATION


class QueueCopied(ConfigError):
    """A drain of a queue whose items were copied into a database; it refused before claiming anything."""


def refuse_if_nested(environ: Mapping[str, str]) -> None:
    marker = delegated_marker(environ)
    if marker is not None:
        raise NestedDrain(f"{NESTED_DELEGATION}: {DELEGATED_ENV}={marker}: this process runs inside a delegated "
                          f"sub-agent, and a drain there would run delegations nested; nothing was drained")


@dataclass
class DrainReport:
    ran: list[dict[str, Any]] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)
    corrupt: list[dict[str, str]] = field(default_factory=list)
    pending: int = 0
    next_due: str | None = None
    cancelled: str | None = None

    @property
    def all_ok(self) -> bool:
        return (all(item["status"] == "ok" for item in self.ran) and not self.orphaned and not self.corrupt
                and self.cancelled is None)

    def to_dict(self) -> dict[str, Any]:
        return {"ran": self.ran, "orphaned": self.orphaned, "corrupt": self.corrupt, "pending": self.pending,
                "next_due": self.next_due, "cancelled": self.cancelled}


class QueueStore(Protocol):
    """Where queued intents wait and how they are claimed; above it the commands (`enqueue`, `drain`,
    `queue`), below it folders or a database. An item runs at most once, whoever drains."""

    @property
    def where(self) -> str:
        """The queue as a user is shown it (a folder, or a URL without its password)."""

    def enqueue(self, intent: Intent) -> dict[str, Any]:
        """File `intent` as a pending item; the item."""

    def drain(self, max_items: int, runner: Runner, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
              backoff_base_s: float = DEFAULT_BACKOFF_BASE_S) -> DrainReport:
        """Claim and run due items one at a time, at most `max_items`, settling each."""

    def inspect(self, max_items: int | None = None) -> dict[str, Any]:
        """The counts of every state and its items, pending first, each state first in first out, in the shape
        `queue --json` prints; with `max_items`, only the first that many items are read (the counts stay
        whole), so a queue of many settled items answers as fast as a short one."""

    def items_in(self, state: str) -> list[dict[str, Any]]:
        """The whole items of one state, first in first out."""


def receipt(queue: QueueStore, item: dict[str, Any]) -> dict[str, Any]:
    """What an enqueue answers (the command and serve's autobot_enqueue): the item and where it waits."""
    return {"status": "queued", "item_id": item["item_id"], "intent_hash": item["intent_hash"],
            "queue": queue.where}


class Queue:
    """The queue as folders of JSON files (the default store)."""

    def __init__(self, root: Path, clock: Callable[[], float] = time.time) -> None:
        self.root = root
        self.clock = clock

    @property
    def where(self) -> str:
        return str(self.root)

    def items_in(self, state: str) -> list[dict[str, Any]]:
        return [item for item in map(_read_item, self._files(state)) if item is not None]

    def entries(self, state: str) -> list[tuple[str, dict[str, Any] | None, str | None]]:
        """Every file of one state, first in first out: its name, and its item or why it cannot be used."""
        return [(path.name, *_check_item(path)) for path in self._files(state)]

    @contextmanager
    def held_still(self) -> Iterator[list[str]]:
        """Hold `queue.lock` (so no drainer claims or settles an item meanwhile), the running items whose drainer
        died dead-lettered first as the next claim would (`orphaned`, their runs settled); yields the ids of the
        running items whose drainer is still alive. A queue that is no folder yet is left uncreated."""
        if not self.root.is_dir():
            yield []
            return
        with flocked(self.root / "queue.lock"):
            self._dead_letter_orphans()
            yield [path.stem for path in self._files("running")]  # the orphans are gone: these are claimed

    @classmethod
    def for_project(cls, project_root: Path) -> Queue:
        return cls(project_root / QUEUE_DIR)

    def folder(self, state: str) -> Path:
        return self.root / state

    def enqueue(self, intent: Intent) -> dict[str, Any]:
        now = self.clock()
        item_id = new_item_id(now)
        item = new_item(item_id, now, intent)
        atomic_write_json(self.folder("pending") / f"{item_id}.json", item)
        return item

    def drain(self, max_items: int, runner: Runner, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
              backoff_base_s: float = DEFAULT_BACKOFF_BASE_S) -> DrainReport:
        self._refuse_if_copied()
        report = DrainReport()
        while len(report.ran) < max_items:
            signum = cancellation.requested()
            if signum is not None:
                report.cancelled = cancellation.signal_name(signum)
                break
            claim = self._claim_next(report)
            if claim is None:
                break
            path, fd, item = claim
            try:
                try:
                    envelope = runner(item["intent"], item["item_id"])
                except cancellation.Cancelled as exc:
                    # Cut before its envelope: its run, if any, was settled by its journal; the item is not re-run.
                    with cancellation.shielded():
                        self._give_up(path, item, f"the drain got {cancellation.signal_name(exc.signum)} while "
                                                  f"this item ran; see the ledger for its run")
                    raise
                with cancellation.shielded():
                    report.ran.append(self._settle(path, item, envelope, max_attempts, backoff_base_s))
            finally:
                os.close(fd)
        report.pending, report.next_due = self._pending()
        return report

    def inspect(self, max_items: int | None = None) -> dict[str, Any]:
        """QueueStore.inspect; ConfigError when the queue cannot be a folder (it, or the nearest of its parents
        that exists, is something else), so an unusable queue never lists as an empty one. A count is of the
        state's files, read or not."""
        nearest = next(folder for folder in (self.root, *self.root.parents) if folder.exists())
        if not nearest.is_dir():
            raise ConfigError(f"the queue {self.root} cannot be a folder: {nearest} is not a directory")
        files = {state: self._files(state) for state in STATES}
        listed = [(state, path) for state in STATES for path in files[state]]
        items = []
        for state, path in listed[:max_items]:
            item = _read_item(path)
            if item is None:
                items.append({"item_id": path.stem, "state": state, "problem": _reason_beside(path)})
                continue
            last = item.get("last_envelope") or {}
            entry = {"item_id": item["item_id"], "state": state, "attempts": item.get("attempts", 0),
                     "enqueued_at": item.get("enqueued_at"), "not_before": due_iso(item.get("not_before")),
                     "last_reason": last.get("degraded_reason"), "intent": item["intent"]["intent"][:80]}
            if state == "running" and not _locked(path):
                entry["problem"] = "orphaned: its drainer died; the next drain dead-letters it"
            items.append(entry)
        return {"queue": self.where, "counts": {state: len(files[state]) for state in STATES}, "items": items}

    def mark_copied(self, database: str, at: float) -> None:
        """Remember that this queue's items were copied into `database` (shown without its password)."""
        if self.root.is_dir():
            atomic_write_json(self.root / COPIED_MARKER, {"database": database, "copied_at": iso_utc(at)})

    # -- internals ---------------------------------------------------------------------------
    def _refuse_if_copied(self) -> None:
        marker = self.root / COPIED_MARKER
        if not os.path.lexists(marker):
            return
        try:
            copied = json.loads(strict_json.read_bounded(marker, NOTE_MAX_BYTES))
        except (strict_json.InputRejected, ValueError):
            copied = {}
        where = copied.get("database") if isinstance(copied, dict) else None
        raise QueueCopied(f"the queue {self.root} was copied into {where or 'a database'}: its items run from there "
                          f"now (drain with --database or ${DATABASE_URL_ENV}), and a drain of these files would "
                          f"run them twice; nothing was drained (remove {marker} to drain the files anyway)")

    def _files(self, state: str) -> list[Path]:
        folder = self.folder(state)
        return sorted(folder.glob("*.json")) if folder.is_dir() else []

    def _claim_next(self, report: DrainReport) -> tuple[Path, int, dict[str, Any]] | None:
        with flocked(self.root / "queue.lock"):
            report.orphaned += self._dead_letter_orphans()
            now = self.clock()
            for path in self._files("pending"):
                item, problem = _check_item(path)
                if item is None:
                    report.corrupt.append(self._set_aside(path, problem or "unreadable"))
                    continue
                if (item.get("not_before") or 0) > now:
                    continue
                running = self.folder("running") / path.name
                running.parent.mkdir(parents=True, exist_ok=True)
                os.rename(path, running)
                fd = os.open(running, os.O_RDONLY)
                # Besides us (under queue.lock) only `inspect` takes this flock, for the instant of a probe.
                lock_exclusive(fd, running)
                return running, fd, item
        return None

    def _dead_letter_orphans(self) -> list[str]:
        orphans = []
        for path in self._files("running"):
            if _locked(path):
                continue
            item = _read_item(path)
            if item is None:
                self._set_aside(path, "an orphaned running item that cannot be read")
                continue
            item.setdefault("history", []).append(orphaned_entry(self.clock()))
            root = item["intent"].get("project_root")
            if isinstance(root, str):
                settle_orphans(Ledger.for_project(Path(root)))
            self._move(path, "dead_letter", item)
            orphans.append(item["item_id"])
        return orphans

    def _give_up(self, running: Path, item: dict[str, Any], detail: str) -> None:
        item["history"].append(cancelled_entry(self.clock(), detail))
        with flocked(self.root / "queue.lock"):
            self._move(running, "dead_letter", item)

    def _set_aside(self, path: Path, problem: str) -> dict[str, str]:
        """Move an unreadable item to `corrupt/` as it is, its reason beside it (call under queue.lock)."""
        folder = self.folder("corrupt")
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / (path.name + REASON_SUFFIX),
                     json.dumps({"at": iso_utc(self.clock()), "from": path.parent.name, "reason": problem}).encode())
        os.rename(path, folder / path.name)
        return {"item_id": path.stem, "reason": problem}

    def _settle(self, running: Path, item: dict[str, Any], envelope: Envelope, max_attempts: int,
                backoff_base_s: float) -> dict[str, Any]:
        destination = settle_item(item, envelope, self.clock(), max_attempts, backoff_base_s)
        with flocked(self.root / "queue.lock"):
            self._move(running, destination, item)
        return settled_summary(item, envelope, destination)

    def _move(self, source: Path, state: str, item: dict[str, Any]) -> None:
        atomic_write_json(self.folder(state) / source.name, item)
        source.unlink()

    def _pending(self) -> tuple[int, str | None]:
        due_times = [(_read_item(p) or {}).get("not_before") or 0 for p in self._files("pending")]
        return pending_summary(due_times, self.clock())


def new_item_id(now: float) -> str:
    """Names that sort first in first out: the enqueue time, then a random tail."""
    return f"{datetime.fromtimestamp(now, UTC):%Y%m%dT%H%M%S%f}-{secrets.token_hex(4)}"


def new_item(item_id: str, now: float, intent: Intent) -> dict[str, Any]:
    return {"item_id": item_id, "enqueued_at": iso_utc(now), "attempts": 0, "not_before": None,
            "intent_hash": intent.hash, "intent": intent.to_document(), "history": [], "last_envelope": None}


def settle_item(item: dict[str, Any], envelope: Envelope, now: float, max_attempts: int,
                backoff_base_s: float) -> str:
    """Record a run's envelope in `item` (attempts, history, the retry's due time); the state it goes to."""
    item["attempts"] = item.get("attempts", 0) + 1
    item["last_envelope"] = envelope.to_dict()
    item["history"].append({"at": iso_utc(now), "status": envelope.status, "reason": envelope.degraded_reason,
                            "ledger_entry": envelope.ledger_entry})
    if envelope.status == EnvelopeStatus.OK:
        return "done"
    if envelope.retryable and item["attempts"] < max_attempts:
        item["not_before"] = now + min(MAX_BACKOFF_S, backoff_base_s * 2 ** (item["attempts"] - 1))
        return "pending"
    return "dead_letter"


def settled_summary(item: dict[str, Any], envelope: Envelope, destination: str) -> dict[str, Any]:
    """One entry of a drain report's `ran`."""
    return {"item_id": item["item_id"], "status": envelope.status, "reason": envelope.degraded_reason,
            "attempts": item["attempts"], "moved_to": destination, "not_before": due_iso(item.get("not_before")),
            "ledger_entry": envelope.ledger_entry}


def cancelled_detail(exc: cancellation.Cancelled) -> str:
    return f"the drain got {cancellation.signal_name(exc.signum)} while this item ran; see the ledger for its run"


def cancelled_entry(now: float, detail: str) -> dict[str, Any]:
    return {"at": iso_utc(now), "status": "degraded", "reason": CANCELLED, "detail": detail}


def orphaned_entry(now: float, detail: str | None = None) -> dict[str, Any]:
    """The history entry of an item dead-lettered because its lease ended mid-run; `detail` says how, when it
    is not the usual way (its drainer died)."""
    return {"at": iso_utc(now), "status": "degraded", "reason": ORPHANED, "detail": detail or _ORPHAN_DETAIL}


def pending_summary(due_times: list[float], now: float) -> tuple[int, str | None]:
    """A drain report's `pending` and `next_due` from the pending items' due times."""
    later = [t for t in due_times if t > now]
    return len(due_times), due_iso(min(later)) if later else None


_ORPHAN_DETAIL = ("its drainer died while running it; its Hermes run was stopped with it and is settled in the "
                  "ledger as cancelled (reason orphaned, same intent_hash); re-enqueue it if it should run again")
# The fields a queue item must have to be claimed, with the types they must have.
_ITEM_FIELDS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("item_id", (str,)), ("intent", (dict,)), ("attempts", (int,)), ("history", (list,)))


def _check_item(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The item, or None and why it cannot be used. Only a regular file is read, and at most ITEM_MAX_BYTES of
    it: a FIFO or a device put among the items (or a link to one) is an item that cannot be read, never a
    drain or a listing waiting forever or reading without end."""
    try:
        item = json.loads(strict_json.read_bounded(path, ITEM_MAX_BYTES).decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at line {exc.lineno})"
    except strict_json.InputRejected as exc:
        return None, f"cannot be read: {exc}"
    if not isinstance(item, dict):
        return None, "not a JSON object"
    for name, kinds in _ITEM_FIELDS:
        value = item.get(name)
        if not isinstance(value, kinds) or isinstance(value, bool):
            return None, f"field {name!r} is missing or not a {kinds[0].__name__}"
    if not isinstance(item["intent"].get("intent"), str):  # what every listing shows of an item
        return None, "field 'intent.intent' is missing or not a str"
    not_before = item.get("not_before")
    if not_before is not None and (isinstance(not_before, bool) or not isinstance(not_before, (int, float))):
        return None, "field 'not_before' is not a number"
    return item, None


def _read_item(path: Path) -> dict[str, Any] | None:
    return _check_item(path)[0]


def _reason_beside(path: Path) -> str:
    try:
        note = strict_json.read_bounded(path.with_name(path.name + REASON_SUFFIX), NOTE_MAX_BYTES)
        return "corrupt: " + str(json.loads(note)["reason"])
    except (strict_json.InputRejected, ValueError, KeyError, TypeError):
        return "unreadable"


def _locked(path: Path) -> bool:
    return is_flocked(path, missing=True)  # a file gone was moved on by its drainer: not an orphan


def due_iso(epoch: Any) -> str | None:
    return iso_utc(epoch) if isinstance(epoch, (int, float)) and epoch else None
