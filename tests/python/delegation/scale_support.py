"""What the `scale` tier's kill races share: drainers as "machines" on one database, and the exact audit after.

Invariants:
- A drainer is its own `mafiabot-harness drain --database URL` process with a Hermes home of its own (a
  copy of the test's profiles), as another machine would have; its stderr goes to a file of its own, so
  what it said on the way out can be read after it exited.
- `exact_audit` is the one statement of what a kill must never cost, whatever was killed: every item is
  done or dead-lettered (none lost, none left running), no intent reached Hermes twice, every started run
  is settled exactly once, and every run the fake Hermes logged is exactly one settlement in the ledger
  (matched by the Hermes pid the supervisor recorded): Hermes's own count of runs equals the ledger's
  settlements of runs that reached it. It runs the last word first (a drain that reaps what the killed
  left running, `ledger verify` settling this machine's journals), as a user's next command would.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.autobot import parse_intent
from harness.autobot.pg_queue import PgQueue
from harness.cli import main
from harness.database import connect
from harness.ledger.pg_store import PgLedger
from harness.ledger.report import reconcile
from harness.settings import state_dir

from .delegation_support import PROCESS_BOUND_S, processes_marked, wait_all_gone

TASK = re.compile(r"task #(\d{3})\.")


def task_intent(n: int) -> str:
    """The intent text of item `n`, which the audit finds again in the prompt Hermes was given."""
    return f"Summarise task #{n:03d}."


def machine_home(hermes_root: Path, folder: Path) -> Path:
    """A Hermes home of its own for one drainer: a copy of the test's profiles."""
    shutil.copytree(hermes_root, folder)
    return folder


def start_drainer(url: str, project: Path, home: Path, max_items: int,
                  stderr: Path | None = None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    err = subprocess.DEVNULL if stderr is None else stderr.open("wb")
    try:
        return subprocess.Popen([sys.executable, "-m", "harness", "drain", "--database", url, "--max",
                                 str(max_items), "--compact"], cwd=project, env=env, stdout=subprocess.DEVNULL,
                                stderr=err)
    finally:
        if stderr is not None:
            err.close()  # type: ignore[union-attr]


def filled_queue(url: str, fake_hermes: Any, make_intent: Any, items: int, work_s: float) -> PgQueue:
    """The queue at `url` holding `items` intents, each of which takes the fake Hermes `work_s` to answer."""
    fake_hermes.script({"work_s": work_s, "usage": {"input": 40, "output": 4, "cost": 0.001}})
    queue = PgQueue(url)
    for n in range(items):
        queue.enqueue(parse_intent(make_intent(task_intent(n))))
    return queue


def one_item_s(url: str, project: Path, home: Path) -> float:
    """How long one whole drain of one item takes here, undisturbed: the calibration a race's pauses are drawn
    from, so a loaded machine stretches the window with the work."""
    began = time.monotonic()
    calibration = subprocess.run([sys.executable, "-m", "harness", "drain", "--database", url, "--max", "1",
                                  "--compact"], cwd=project, capture_output=True, timeout=PROCESS_BOUND_S, check=False,
                                 env={**os.environ, "HERMES_HOME": str(home)})
    assert calibration.returncode == 0, calibration.stderr
    return time.monotonic() - began


def counts(queue: PgQueue) -> Counter[str]:
    return Counter(item["state"] for item in queue.inspect()["items"])


def command_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return f"{pid} (gone)"


@dataclass
class Audit:
    final: Counter[str]
    hermes_runs: int
    # The settlements' reasons, of every started run.
    endings: Counter[str]


def exact_audit(url: str, project: Path, fake_hermes: Any, items: int, seed: int,
                capsys: pytest.CaptureFixture[str]) -> Audit:
    """The audit of the module docstring, after the last word; what it saw."""
    marker = f"FAKE_HERMES_LOG={fake_hermes.log}"
    left = wait_all_gone(marker, bound_s=3 * PROCESS_BOUND_S)
    assert left == [], f"left running (seed {seed}): {[command_of(pid) for pid in left]}"
    assert main(["drain", "--database", url, "--max", str(items), "--compact"]) in (0, 1)
    capsys.readouterr()
    assert main(["ledger", "verify", "--json", "--database", url]) == 0, capsys.readouterr().out

    final = counts(PgQueue(url))
    assert final["done"] + final["dead_letter"] == items and set(final) <= {"done", "dead_letter"}, (final, seed)
    calls = fake_hermes.calls()
    tasks = Counter(match.group(1) for call in calls if (match := TASK.search(call.get("prompt") or "")))
    assert sum(tasks.values()) == len(calls), "a Hermes call carried no task of this test"
    assert all(n == 1 for n in tasks.values()), f"an intent reached Hermes twice (seed {seed}): {tasks}"
    with connect(url) as database:
        records = list(PgLedger(database, state_dir(project)).all_records())
    runs = reconcile(records)
    assert (runs.open, runs.unmatched, runs.duplicated) == ([], [], []), f"seed {seed}"
    assert runs.started == runs.settled
    settled_by_pid = Counter(r.get("hermes_pid") for r in records if r.get("started_record_id"))
    ran = [call["pid"] for call in calls]
    assert len(ran) == len(set(ran)) and all(settled_by_pid[pid] == 1 for pid in ran), f"seed {seed}"
    assert sum(n for pid, n in settled_by_pid.items() if pid in set(ran)) == len(ran)
    assert processes_marked(marker) == []
    assert list((project / ".agents" / "state" / "hermes-runs").iterdir()) == []
    return Audit(final, len(ran), Counter(r["reason"] for r in records if r.get("started_record_id")))
