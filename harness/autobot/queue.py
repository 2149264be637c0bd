"""The autobot work queue: enqueue now, drain later, retry with backoff, then dead-letter.

Layout under the queue folder: `pending/`, `running/`, `done/`, `dead_letter/` (one JSON file per
item, named `<enqueued time>-<random>.json` so names sort first-in first-out) and `queue.lock`.

Invariants:
- An item lives in exactly one state folder; it moves by rename, and every rewrite is atomic.
- Claiming happens under `queue.lock` (flock) and includes taking an flock on the claimed file,
  so two drainers never claim the same item: draining twice never runs an item twice.
- A `running/` item whose flock nobody holds belongs to a drainer that died mid-run. Whether Hermes
  was paid for it is unknown, so it is never re-run silently: it goes to `dead_letter/` as
  `orphaned`, with the ledger as the place to look.
- A degraded run is retried only when its reason is transient (provider errors, timeouts, a held
  lock), after `backoff_base_s * 2^(attempt-1)` seconds, at most `max_attempts` runs in all; then,
  or at once for a permanent reason, the item goes to `dead_letter/` with its last envelope.
- Draining never sleeps: items not yet due stay pending and are reported with their due time.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.autobot.delegate import Envelope
from harness.autobot.intent import Intent
from harness.durable import atomic_write_json, flocked, lock_exclusive
from harness.ledger.store import iso_utc
from harness.settings import STATE_DIR

STATES = ("pending", "running", "done", "dead_letter")
QUEUE_DIR = STATE_DIR / "autobot-queue"
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_BASE_S = 30.0
MAX_BACKOFF_S = 3600.0
ORPHANED = "orphaned"

Runner = Callable[[dict[str, Any], str], Envelope]


@dataclass
class DrainReport:
    ran: list[dict[str, Any]] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)
    pending: int = 0
    next_due: str | None = None

    @property
    def all_ok(self) -> bool:
        return all(item["status"] == "ok" for item in self.ran) and not self.orphaned

    def to_dict(self) -> dict[str, Any]:
        return {"ran": self.ran, "orphaned": self.orphaned, "pending": self.pending, "next_due": self.next_due}


class Queue:
    def __init__(self, root: Path, clock: Callable[[], float] = time.time) -> None:
        self.root = root
        self.clock = clock

    @classmethod
    def for_project(cls, project_root: Path) -> Queue:
        return cls(project_root / QUEUE_DIR)

    def folder(self, state: str) -> Path:
        return self.root / state

    def enqueue(self, intent: Intent) -> dict[str, Any]:
        now = self.clock()
        item_id = f"{datetime.fromtimestamp(now, UTC):%Y%m%dT%H%M%S%f}-{secrets.token_hex(4)}"
        item = {"item_id": item_id, "enqueued_at": iso_utc(now), "attempts": 0, "not_before": None,
                "intent_hash": intent.hash, "intent": intent.to_document(), "history": [], "last_envelope": None}
        atomic_write_json(self.folder("pending") / f"{item_id}.json", item)
        return item

    def drain(self, max_items: int, runner: Runner, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
              backoff_base_s: float = DEFAULT_BACKOFF_BASE_S) -> DrainReport:
        report = DrainReport()
        while len(report.ran) < max_items:
            claim = self._claim_next(report)
            if claim is None:
                break
            path, fd, item = claim
            try:
                envelope = runner(item["intent"], item["item_id"])
                report.ran.append(self._settle(path, item, envelope, max_attempts, backoff_base_s))
            finally:
                os.close(fd)
        report.pending, report.next_due = self._pending()
        return report

    def inspect(self) -> dict[str, Any]:
        items = []
        for state in STATES:
            for path in self._files(state):
                item = _read_item(path)
                if item is None:
                    items.append({"item_id": path.stem, "state": state, "problem": "unreadable"})
                    continue
                last = item.get("last_envelope") or {}
                entry = {"item_id": item["item_id"], "state": state, "attempts": item.get("attempts", 0),
                         "enqueued_at": item.get("enqueued_at"), "not_before": _iso(item.get("not_before")),
                         "last_reason": last.get("degraded_reason"), "intent": item["intent"]["intent"][:80]}
                if state == "running" and not _locked(path):
                    entry["problem"] = "orphaned: its drainer died; the next drain dead-letters it"
                items.append(entry)
        counts = {state: sum(1 for i in items if i["state"] == state) for state in STATES}
        return {"queue": str(self.root), "counts": counts, "items": items}

    # -- internals ---------------------------------------------------------------------------
    def _files(self, state: str) -> list[Path]:
        folder = self.folder(state)
        return sorted(folder.glob("*.json")) if folder.is_dir() else []

    def _claim_next(self, report: DrainReport) -> tuple[Path, int, dict[str, Any]] | None:
        with flocked(self.root / "queue.lock"):
            report.orphaned += self._dead_letter_orphans()
            now = self.clock()
            for path in self._files("pending"):
                item = _read_item(path)
                if item is None or (item.get("not_before") or 0) > now:
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
            item = _read_item(path) or {"item_id": path.stem, "history": []}
            item.setdefault("history", []).append({"at": iso_utc(self.clock()), "status": "degraded",
                                                   "reason": ORPHANED, "detail": _ORPHAN_DETAIL})
            self._move(path, "dead_letter", item)
            orphans.append(item["item_id"])
        return orphans

    def _settle(self, running: Path, item: dict[str, Any], envelope: Envelope, max_attempts: int,
                backoff_base_s: float) -> dict[str, Any]:
        summary = envelope.to_dict()
        item["attempts"] = item.get("attempts", 0) + 1
        item["last_envelope"] = summary
        item["history"].append({"at": iso_utc(self.clock()), "status": envelope.status,
                                "reason": envelope.degraded_reason, "ledger_entry": envelope.ledger_entry})
        if envelope.status == "ok":
            destination = "done"
        elif envelope.retryable and item["attempts"] < max_attempts:
            destination = "pending"
            delay = min(MAX_BACKOFF_S, backoff_base_s * 2 ** (item["attempts"] - 1))
            item["not_before"] = self.clock() + delay
        else:
            destination = "dead_letter"
        with flocked(self.root / "queue.lock"):
            self._move(running, destination, item)
        return {"item_id": item["item_id"], "status": envelope.status, "reason": envelope.degraded_reason,
                "attempts": item["attempts"], "moved_to": destination, "not_before": _iso(item.get("not_before")),
                "ledger_entry": envelope.ledger_entry}

    def _move(self, source: Path, state: str, item: dict[str, Any]) -> None:
        atomic_write_json(self.folder(state) / source.name, item)
        source.unlink()

    def _pending(self) -> tuple[int, str | None]:
        due_times = [(_read_item(p) or {}).get("not_before") or 0 for p in self._files("pending")]
        later = [t for t in due_times if t > self.clock()]
        return len(due_times), _iso(min(later)) if later else None


_ORPHAN_DETAIL = ("its drainer died while running it; Hermes may or may not have been called (see the ledger "
                  "for its intent_hash); re-enqueue it if it should run again")


def _read_item(path: Path) -> dict[str, Any] | None:
    try:
        item = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return item if isinstance(item, dict) and isinstance(item.get("intent"), dict) else None


def _locked(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _iso(epoch: Any) -> str | None:
    return iso_utc(epoch) if isinstance(epoch, (int, float)) and epoch else None
