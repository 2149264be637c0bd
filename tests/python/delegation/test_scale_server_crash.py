"""The queue's PostgreSQL server itself crashed mid-run, again and again, under drainers on several "machines".

Four drainers (their own processes and Hermes homes, as in test_scale_kill_races) drain one database of a
cluster of its own with fsync on and synchronous_commit on (the server's default). At random moments the
whole server is SIGKILLed at once (the postmaster and every backend: a machine's crash, no shutdown, no
goodbye to a client), and after a random outage started again on the same data directory, where it
recovers from its WAL. CRASHES is the number of crashes: every other one at a random point of a Hermes run
in flight (a run folder of the journal is there), the others at random moments, in any phase of an item.

What a user gets (docs/scale-out.md, "When the database server crashes"): a drain is a command run from a
loop or a supervisor, not a daemon, so a drain that meets the crash ends, with one line naming the database
and exit code 11, never a traceback and never a hang; the test restarts it as a supervisor would, once the
server is back. The Hermes run it was in goes on to its end and is settled from Hermes's own record by the
next command on this machine; its item, whose lease ended with the server, is dead-lettered `orphaned` by
the next claim, saying the server restarted, and never run again.

Afterwards the exact audit of scale_support holds: every item is done or dead-lettered with its reason
(none lost, none left running), no intent reached Hermes twice, every started run is settled exactly once,
and Hermes's own count of runs equals the ledger's settlements of the runs that reached it.
"""

from __future__ import annotations

import os
import random
import select
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.autobot.pg_queue import PgQueue
from harness.cli.exit_codes import ExitCode
from harness.ledger.journal import RUNS_DIR
from harness.settings import state_dir
from pg_support import Cluster, throwaway_cluster

from .delegation_support import PROCESS_BOUND_S
from .scale_support import counts, exact_audit, filled_queue, machine_home, one_item_s, start_drainer

pytestmark = pytest.mark.scale

ITEMS = 36
DRAINERS = 4
CRASHES = 5
# Long enough for a crash to land in any phase of a delegation: its claim, its started record, Hermes's work,
# its settlement, the item's move.
WORK_S = 0.4
# How often the run folders are looked at, waiting for a Hermes run to be in flight: nothing signals a start.
RUN_LOOK_S = 0.02
# What a drain may exit with: all done, some item degraded, or the database gone (one line naming it).
DRAIN_EXITS = {ExitCode.OK, ExitCode.NOT_DONE, ExitCode.CANNOT_RUN}


@pytest.fixture(scope="module")
def crashing_cluster() -> Iterator[Cluster]:
    """A cluster of this module's own, fsync on: what a crash leaves must be what a real server keeps."""
    with throwaway_cluster(fsync=True) as cluster:
        yield cluster


class Supervisor:
    """Keeps DRAINERS drains running while there is work, as a loop or systemd would: a drain that exited is
    started again (a fresh "machine"), and what each said on its way out is kept for the audit."""

    def __init__(self, url: str, project: Path, hermes_root: Path, folder: Path) -> None:
        self.url, self.project, self.hermes_root, self.folder = url, project, hermes_root, folder
        self.started = 0
        self.exits: Counter[int] = Counter()
        self.running: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(self) -> None:
        self.started += 1
        name = f"machine-{self.started}"
        log = self.folder / f"{name}.stderr"
        home = machine_home(self.hermes_root, self.folder / name)
        self.running.append((start_drainer(self.url, self.project, home, ITEMS, stderr=log), log))

    def watch(self, for_s: float, *, restart: bool) -> None:
        """For `for_s`, collect the drains that exit (on their pidfds: no polling), starting each again when
        `restart`."""
        deadline = time.monotonic() + for_s
        while True:
            self.collect(restart=restart)
            left = deadline - time.monotonic()
            if left <= 0 or not self.running:
                return
            fds = [os.pidfd_open(process.pid) for process, _ in self.running]
            try:
                select.select(fds, [], [], left)
            finally:
                for fd in fds:
                    os.close(fd)

    def watch_until(self, ready: Callable[[], bool], bound_s: float) -> bool:
        """Like `watch` (restarting), until `ready()` holds, looked at every RUN_LOOK_S; whether it came within
        `bound_s`."""
        deadline = time.monotonic() + bound_s
        while time.monotonic() < deadline:
            if ready():
                return True
            self.watch(RUN_LOOK_S, restart=True)
        return False

    def collect(self, *, restart: bool) -> None:
        for entry in list(self.running):
            process, log = entry
            if process.poll() is None:
                continue
            self.running.remove(entry)
            self.exits[process.returncode] += 1
            said = log.read_text(errors="replace")
            assert process.returncode in DRAIN_EXITS, f"a drain exited {process.returncode}: {said}"
            assert "Traceback" not in said and "internal error" not in said, said
            if process.returncode == ExitCode.CANNOT_RUN:
                assert said.count("\n") == 1 and "database" in said, f"not one line naming the database: {said}"
            if restart:
                self.start()

    def finish(self, bound_s: float) -> None:
        """Wait for every drain to end by itself (none may hang), within `bound_s` in all."""
        deadline = time.monotonic() + bound_s
        for process, _ in self.running:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        self.collect(restart=False)


def test_drainers_outlive_server_crashes_mid_transaction_and_no_item_runs_twice_or_is_lost(
        crashing_cluster, fake_hermes, hermes_root, project, make_intent, tmp_path, capsys) -> None:
    seed = random.randrange(1 << 30)
    chooser = random.Random(seed)
    url = crashing_cluster.new_database()
    queue = filled_queue(url, fake_hermes, make_intent, ITEMS, WORK_S)

    pause_s = one_item_s(url, project, machine_home(hermes_root, tmp_path / "m0"))

    supervisor = Supervisor(url, project, hermes_root, tmp_path)
    for _ in range(DRAINERS):
        supervisor.start()
    runs = state_dir(project) / RUNS_DIR

    def hermes_at_work() -> bool:
        return runs.is_dir() and any(not run.name.startswith(".") for run in runs.iterdir())

    crashes, killed, mid_run = 0, 0, 0
    while crashes < CRASHES:
        if crashes % 2 == 0:  # while a Hermes run is in flight, at a random point of it
            assert supervisor.watch_until(hermes_at_work, 3 * pause_s), f"no Hermes run began (seed {seed})"
            supervisor.watch(chooser.uniform(0, WORK_S), restart=True)
            mid_run += 1
        else:  # at a random moment, once the drains had time to be at work, each in some phase of an item
            supervisor.watch(chooser.uniform(0.5, 1.5) * pause_s, restart=True)
        killed += crashing_cluster.crash()
        crashes += 1
        supervisor.watch(chooser.uniform(0, pause_s), restart=False)  # the outage: drains meet it alone
        crashing_cluster.restart()
        if not counts(queue)["pending"]:
            break
        while len(supervisor.running) < DRAINERS:
            supervisor.start()
    deadline = time.monotonic() + ITEMS * PROCESS_BOUND_S
    while counts(queue)["pending"] and time.monotonic() < deadline:
        supervisor.watch(pause_s, restart=True)
        while len(supervisor.running) < DRAINERS and counts(queue)["pending"]:
            supervisor.start()
    supervisor.finish(ITEMS * PROCESS_BOUND_S)

    audit = exact_audit(url, project, fake_hermes, ITEMS, seed, capsys)
    dead = [item["history"][-1] for item in PgQueue(url).items_in("dead_letter")]
    reasons = Counter(entry["reason"] for entry in dead)
    print(f"seed {seed}: {crashes} server crashes ({mid_run} of them while Hermes ran; {killed} server processes "
          f"SIGKILLed), drains started "
          f"{supervisor.started}, their exits {dict(supervisor.exits)}, {audit.hermes_runs} Hermes runs, queue "
          f"{dict(audit.final)}, dead letters {dict(reasons)}; settlements {dict(audit.endings)}")
    assert None not in reasons, "a dead letter without its reason"
    assert all("database server restarted" in entry["detail"] for entry in dead if entry["reason"] == "orphaned"), (
        "no drainer died here: every lease ended with the server, and the dead letter says so")
    assert crashes == CRASHES, f"the work ran out after {crashes} crashes (seed {seed})"
    assert supervisor.exits[ExitCode.CANNOT_RUN], f"no drain met a crash (seed {seed}): {supervisor.exits}"
    assert audit.final["dead_letter"], f"no crash landed mid-run (seed {seed}): {audit.final}, {audit.endings}"
