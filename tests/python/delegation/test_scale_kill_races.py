"""Kill races on one PostgreSQL queue: several drainers as separate processes ("machines"), SIGKILLed mid-run.

Each drainer is its own `mafiabot-harness drain --database URL` process with a Hermes home of its own
(its own profiles and memories, as another machine would have); all of them share one database, in a
cluster of its own with fsync on. While the queue is being drained, a drainer chosen at random is
SIGKILLed after a random pause and a fresh one (a fresh home) takes its place, until nothing is pending
or running; the pauses are drawn from the time one delegation took just before (a first, unkilled drain),
so a loaded machine stretches the window with the work. Nothing is synchronised by those pauses:
everything checked afterwards waits on events (process exits, pidfds), bounded.

Afterwards, exactly: every item is done or dead-lettered (none lost, none left running), no intent
reached Hermes twice, every started run is settled exactly once, and every run the fake Hermes logged is
one settlement in the ledger (matched by the Hermes pid the supervisor recorded): Hermes's own count of
runs equals the ledger's settlements of runs that reached it.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.autobot import parse_intent
from harness.autobot.pg_queue import PgQueue
from harness.cli import main
from harness.database import connect
from harness.ledger.pg_store import PgLedger
from harness.ledger.report import reconcile
from harness.settings import state_dir
from pg_support import Cluster, throwaway_cluster

from .delegation_support import PROCESS_BOUND_S, processes_marked, wait_all_gone

pytestmark = pytest.mark.scale

ITEMS = 40
DRAINERS = 4
KILLS = 12
# Long enough for a kill to land in any phase: before the spawn, while Hermes works, while it is settled.
WORK_S = 0.4
TASK = re.compile(r"task #(\d{3})\.")


@pytest.fixture(scope="module")
def durable_cluster() -> Iterator[Cluster]:
    """A cluster of this module's own with fsync on: what a kill leaves must be what a real server keeps."""
    with throwaway_cluster(fsync=True) as cluster:
        yield cluster


def machine_home(hermes_root: Path, folder: Path) -> Path:
    """A Hermes home of its own for one drainer: a copy of the test's profiles."""
    shutil.copytree(hermes_root, folder)
    return folder


def start_drainer(url: str, project: Path, home: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    return subprocess.Popen([sys.executable, "-m", "harness", "drain", "--database", url, "--max", str(ITEMS),
                             "--compact"], cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def counts(queue: PgQueue) -> Counter[str]:
    return Counter(item["state"] for item in queue.inspect()["items"])


def test_drainers_on_several_machines_killed_mid_run_run_every_item_at_most_once_and_settle_every_run(
        durable_cluster, fake_hermes, hermes_root, project, make_intent, tmp_path, capsys) -> None:
    seed = random.randrange(1 << 30)
    chooser = random.Random(seed)
    url = durable_cluster.new_database()
    fake_hermes.script({"work_s": WORK_S, "usage": {"input": 40, "output": 4, "cost": 0.001}})
    queue = PgQueue(url)
    for n in range(ITEMS):
        queue.enqueue(parse_intent(make_intent(f"Summarise task #{n:03d}.")))
    homes = (tmp_path / f"machine-{n}" for n in range(DRAINERS + KILLS + 1))

    began = time.monotonic()  # the calibration: one whole drain of one item, unkilled
    calibration = subprocess.run([sys.executable, "-m", "harness", "drain", "--database", url, "--max", "1",
                                  "--compact"], cwd=project, capture_output=True, timeout=PROCESS_BOUND_S, check=False,
                                 env={**os.environ, "HERMES_HOME": str(machine_home(hermes_root, next(homes)))})
    assert calibration.returncode == 0, calibration.stderr
    one_item_s = time.monotonic() - began

    drainers = [start_drainer(url, project, machine_home(hermes_root, next(homes))) for _ in range(DRAINERS)]
    kills = 0
    deadline = time.monotonic() + 20 * PROCESS_BOUND_S
    while kills < KILLS and time.monotonic() < deadline:
        victim = chooser.randrange(len(drainers))
        try:
            drainers[victim].wait(timeout=chooser.uniform(0, one_item_s))
        except subprocess.TimeoutExpired:
            drainers[victim].send_signal(signal.SIGKILL)
            kills += 1
        drainers[victim].wait(timeout=PROCESS_BOUND_S)
        if not counts(queue)["pending"]:
            break
        drainers[victim] = start_drainer(url, project, machine_home(hermes_root, next(homes)))
    for drainer in drainers:
        drainer.wait(timeout=ITEMS * PROCESS_BOUND_S)
    marker = f"FAKE_HERMES_LOG={fake_hermes.log}"
    assert wait_all_gone(marker, bound_s=3 * PROCESS_BOUND_S) == [], f"left running (seed {seed})"
    # The last word: a drain reaps what the killed left running; `ledger verify` settles this machine's journals.
    assert main(["drain", "--database", url, "--max", str(ITEMS), "--compact"]) in (0, 1)
    capsys.readouterr()
    assert main(["ledger", "verify", "--json", "--database", url]) == 0, capsys.readouterr().out

    final = counts(queue)
    assert final["done"] + final["dead_letter"] == ITEMS and set(final) <= {"done", "dead_letter"}, (final, seed)
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
    endings = Counter(r["reason"] for r in records if r.get("started_record_id"))
    print(f"seed {seed}: {kills} kills, {len(ran)} Hermes runs, queue {dict(final)}; settlements {dict(endings)}")
    assert kills and final["dead_letter"], f"the kills never landed mid-run (seed {seed}): {final}, {endings}"
    assert list((project / ".agents" / "state" / "hermes-runs").iterdir()) == []
