"""Kill races on one PostgreSQL queue: several drainers as separate processes ("machines"), SIGKILLed mid-run.

Each drainer is its own `mafiabot-harness drain --database URL` process with a Hermes home of its own
(its own profiles and memories, as another machine would have); all of them share one database, in a
cluster of its own with fsync on. While the queue is being drained, a drainer chosen at random is
SIGKILLed after a random pause and a fresh one (a fresh home) takes its place, until nothing is pending
or running; the pauses are drawn from the time one delegation took just before (a first, unkilled drain),
so a loaded machine stretches the window with the work. Nothing is synchronised by those pauses:
everything checked afterwards waits on events (process exits, pidfds), bounded.

Afterwards, exactly (`scale_support.exact_audit`): every item is done or dead-lettered (none lost, none
left running), no intent reached Hermes twice, every started run is settled exactly once, and every run the
fake Hermes logged is one settlement in the ledger: Hermes's own count of runs equals the ledger's
settlements of runs that reached it.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest

from pg_support import Cluster, throwaway_cluster

from .delegation_support import PROCESS_BOUND_S
from .scale_support import counts, exact_audit, filled_queue, machine_home, one_item_s, start_drainer

pytestmark = pytest.mark.scale

ITEMS = 40
DRAINERS = 4
KILLS = 12
# Long enough for a kill to land in any phase: before the spawn, while Hermes works, while it is settled.
WORK_S = 0.4


@pytest.fixture(scope="module")
def durable_cluster() -> Iterator[Cluster]:
    """A cluster of this module's own with fsync on: what a kill leaves must be what a real server keeps."""
    with throwaway_cluster(fsync=True) as cluster:
        yield cluster


def test_drainers_on_several_machines_killed_mid_run_run_every_item_at_most_once_and_settle_every_run(
        durable_cluster, fake_hermes, hermes_root, project, make_intent, tmp_path, capsys) -> None:
    seed = random.randrange(1 << 30)
    chooser = random.Random(seed)
    url = durable_cluster.new_database()
    queue = filled_queue(url, fake_hermes, make_intent, ITEMS, WORK_S)
    homes = (tmp_path / f"machine-{n}" for n in range(DRAINERS + KILLS + 1))

    pause_s = one_item_s(url, project, machine_home(hermes_root, next(homes)))

    drainers = [start_drainer(url, project, machine_home(hermes_root, next(homes)), ITEMS) for _ in range(DRAINERS)]
    kills = 0
    deadline = time.monotonic() + 20 * PROCESS_BOUND_S
    while kills < KILLS and time.monotonic() < deadline:
        victim = chooser.randrange(len(drainers))
        try:
            drainers[victim].wait(timeout=chooser.uniform(0, pause_s))
        except subprocess.TimeoutExpired:
            drainers[victim].send_signal(signal.SIGKILL)
            kills += 1
        drainers[victim].wait(timeout=PROCESS_BOUND_S)
        if not counts(queue)["pending"]:
            break
        drainers[victim] = start_drainer(url, project, machine_home(hermes_root, next(homes)), ITEMS)
    for drainer in drainers:
        drainer.wait(timeout=ITEMS * PROCESS_BOUND_S)
    audit = exact_audit(url, project, fake_hermes, ITEMS, seed, capsys)
    print(f"seed {seed}: {kills} kills, {audit.hermes_runs} Hermes runs, queue {dict(audit.final)}; "
          f"settlements {dict(audit.endings)}")
    assert kills and audit.final["dead_letter"], (
        f"the kills never landed mid-run (seed {seed}): {audit.final}, {audit.endings}")
