"""Kill races: random SIGKILLs and SIGTERMs during delegations and drains, then an exact audit.

The stimulus is a kill at a random moment: each round waits for its command a random fraction of the
time one whole delegation took on this machine just before (measured by a first, unkilled round, so a
loaded machine stretches the window with the work instead of killing every command before its spawn),
with `Popen.wait` and a timeout (it returns at once if the command ends first), then kills it.
Nothing is synchronised by that wait; everything checked afterwards waits on events (pidfds), bounded.
Two last rounds wait for Hermes's start before their SIGKILL and SIGTERM, so that both kinds of kill
land mid-run whatever the draws gave.

Afterwards: no process of the fake's is left (/proc), every started record is settled exactly once,
and every run the fake itself logged is one settlement in the ledger (matched by the Hermes pid the
supervisor recorded), so Hermes's own count of runs equals the ledger's settled runs that reached it.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter

from harness.cli import main
from harness.ledger import Ledger, default_ledger_path
from harness.ledger.report import reconcile

from .delegation_support import PROCESS_BOUND_S, processes_marked, wait_all_gone

# Random rounds (half delegations, half drains), then the two that wait for Hermes's start.
ROUNDS = 20
# Long enough for a kill to land in any phase: before the spawn, while Hermes works, while it is settled.
WORK_S = 0.6


def test_random_kills_during_delegations_and_drains_leave_nothing_running_and_every_run_settled_once(
        fake_hermes, project, make_intent, tmp_path, capsys) -> None:
    seed = random.randrange(1 << 30)
    chooser = random.Random(seed)
    fake_hermes.script({"work_s": WORK_S, "usage": {"input": 40, "output": 4, "cost": 0.001}})
    longest_pause_s = 0.0
    for n in range(ROUNDS):
        intent = tmp_path / f"intent-{n}.json"
        intent.write_text(json.dumps(make_intent(f"task {n}")))
        if n % 2:
            assert main(["enqueue", "--intent-file", str(intent)]) == 0
            args = ["drain", "--max", "2"]
        else:
            args = ["delegate", "--intent-file", str(intent)]
        began = time.monotonic()
        command = subprocess.Popen([sys.executable, "-m", "harness", *args, "--compact"], cwd=project,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if n == 0:  # the calibration round: one whole delegation, unkilled
            assert command.wait(timeout=PROCESS_BOUND_S) == 0
            longest_pause_s = time.monotonic() - began
            continue
        try:
            command.wait(timeout=chooser.uniform(0, longest_pause_s))
        except subprocess.TimeoutExpired:
            command.send_signal(chooser.choice([signal.SIGKILL, signal.SIGTERM]))
        command.wait(timeout=PROCESS_BOUND_S)
    # Whatever the draws gave (a loaded machine may land every one before a spawn or after a settlement),
    # one kill of each kind lands while Hermes works: the fake logs its start, then works WORK_S.
    for n, kill in enumerate((signal.SIGKILL, signal.SIGTERM), start=ROUNDS):
        intent = tmp_path / f"intent-{n}.json"
        intent.write_text(json.dumps(make_intent(f"task {n}")))
        runs_before = len(fake_hermes.calls())
        command = subprocess.Popen([sys.executable, "-m", "harness", "delegate", "--intent-file", str(intent),
                                    "--compact"], cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + PROCESS_BOUND_S
        while len(fake_hermes.calls()) == runs_before and command.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        command.send_signal(kill)
        command.wait(timeout=PROCESS_BOUND_S)
    marker = f"FAKE_HERMES_LOG={fake_hermes.log}"
    assert wait_all_gone(marker, bound_s=3 * PROCESS_BOUND_S) == [], f"left running (seed {seed})"
    capsys.readouterr()
    assert main(["ledger", "verify", "--json"]) == 0, capsys.readouterr().out
    records = list(Ledger(default_ledger_path(project)).all_records())
    runs = reconcile(records)
    assert (runs.open, runs.unmatched, runs.duplicated) == ([], [], []), f"seed {seed}"
    assert runs.started == runs.settled
    settled_by_pid = Counter(r.get("hermes_pid") for r in records if r.get("started_record_id"))
    ran = [call["pid"] for call in fake_hermes.calls()]
    assert len(ran) == len(set(ran)) and all(settled_by_pid[pid] == 1 for pid in ran), f"seed {seed}"
    reached = sum(n for pid, n in settled_by_pid.items() if pid in set(ran))
    assert reached == len(ran) and processes_marked(marker) == []
    endings = Counter(r["reason"] for r in records if r.get("started_record_id"))
    print(f"seed {seed}: {len(ran)} Hermes runs; settlements by reason {dict(endings)}")
    assert endings["orphaned"] and endings["cancelled"], f"the kills never landed mid-run (seed {seed}): {endings}"
    assert list((project / ".agents" / "state" / "hermes-runs").iterdir()) == []
