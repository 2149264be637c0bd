"""Runs never outlive their caller and are ledgered exactly once: signals, SIGKILL, orphans settled later.

Each test drives the real command line in a child process against the fake `hermes`, and checks three
things the issue found broken: nothing of the run keeps running (/proc, by the fake's environment
marker), the ledger holds one started record and one settlement for it, with Hermes's own usage,
and the intent lock is held for exactly as long as the tree lives.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.autobot import delegate
from harness.cli import main
from harness.hermes.outcome import RunRequest
from harness.hermes.supervisor import CHILD_PID_FILE
from harness.ledger.journal import OWNER_LOCK, STARTED_FILE, RunJournal, runs_dir, settle_orphans
from harness.ledger.store import Ledger, LedgerError
from harness.serve.jobs import JobRunner, JobStoreUnusable

from .delegation_support import (
    PROCESS_BOUND_S,
    make_fifo,
    parent_of,
    read_ledger,
    read_ledger_lines,
    wait_all_gone,
    wait_fifo,
    wait_gone,
)

USAGE = {"input": 77, "output": 5, "cost": 0.01}


def start_cli(project: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "harness", *args, "--compact"], cwd=project, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def write_intent(tmp_path: Path, document: dict) -> Path:
    path = tmp_path / "intent.json"
    path.write_text(json.dumps(document))
    return path


def hanging_run(fake_hermes, tmp_path: Path) -> tuple[Path, Path]:
    """A run that starts two grandchildren (one in its own session), announces itself, then waits forever."""
    started, pids = make_fifo(tmp_path / "started"), tmp_path / "pids.json"
    fake_hermes.script({"hang": True, "pids_file": str(pids), "usage": USAGE,
                        "gate": {"started": str(started), "release": str(make_fifo(tmp_path / "release"))}})
    return started, pids


def marker(fake_hermes) -> str:
    return f"FAKE_HERMES_LOG={fake_hermes.log}"


def runs_folder(project: Path) -> list[str]:
    folder = project / ".agents" / "state" / "hermes-runs"
    return sorted(os.listdir(folder)) if folder.exists() else []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_cancelling_signal_stops_the_whole_tree_and_ledgers_the_run_cancelled_with_hermes_own_usage(
        fake_hermes, project, make_intent, tmp_path, signum) -> None:
    started, pids_file = hanging_run(fake_hermes, tmp_path)
    cli = start_cli(project, "delegate", "--intent-file", str(write_intent(tmp_path, make_intent())))
    wait_fifo(started, what="the fake's start")
    tree = json.loads(pids_file.read_text())
    cli.send_signal(signum)
    out, _ = cli.communicate(timeout=PROCESS_BOUND_S)
    assert cli.returncode == 128 + signum
    envelope = json.loads(out)
    assert (envelope["status"], envelope["degraded_reason"]) == ("degraded", "cancelled")
    assert all(wait_gone(pid) for pid in tree) and wait_all_gone(marker(fake_hermes)) == []
    started_record, settled = read_ledger_lines(project)
    assert started_record["status"] == "started" and settled["started_record_id"] == started_record["record_id"]
    assert (settled["status"], settled["reason"]) == ("cancelled", "cancelled")
    assert settled["usage"]["source"] == "hermes_state_db" and settled["usage"]["input_tokens"] == USAGE["input"]
    assert settled["hermes_pid"] == tree[0] and settled["session_id"].startswith("fake_")
    assert runs_folder(project) == [] and not list((project / ".agents" / "state").glob("autobot.*.lock"))


def test_a_hermes_that_ignores_sigterm_is_killed_after_its_grace_and_the_run_still_ledgered(
        fake_hermes, project, make_intent, tmp_path) -> None:
    started, pids_file = hanging_run(fake_hermes, tmp_path)
    fake_hermes.script({**json.loads(fake_hermes.scenario.read_text())[0], "ignore_term": True})
    cli = start_cli(project, "delegate", "--intent-file", str(write_intent(tmp_path, make_intent())))
    wait_fifo(started, what="the fake's start")
    tree = json.loads(pids_file.read_text())
    cli.terminate()
    cli.communicate(timeout=PROCESS_BOUND_S)
    assert cli.returncode == 128 + signal.SIGTERM
    assert all(wait_gone(pid) for pid in tree) and wait_all_gone(marker(fake_hermes)) == []
    [settled] = [r for r in read_ledger(project) if r.get("started_record_id")]
    assert (settled["status"], settled["reason"], settled["usage"]["source"]) == ("cancelled", "cancelled",
                                                                                  "estimate")
    assert settled["transport"]["warnings"][0].startswith("hermes_record_missing")


def test_sigkill_takes_the_tree_with_it_the_lock_is_held_until_then_and_the_next_command_settles_the_run(
        fake_hermes, project, make_intent, tmp_path, capsys) -> None:
    started, pids_file = hanging_run(fake_hermes, tmp_path)
    cli = start_cli(project, "delegate", "--intent-file", str(write_intent(tmp_path, make_intent())))
    wait_fifo(started, what="the fake's start")
    tree = json.loads(pids_file.read_text())
    supervisor = parent_of(tree[0])
    os.kill(supervisor, signal.SIGSTOP)  # holds the supervisor still, so "until the tree is gone" can be observed
    try:
        cli.kill()
        cli.communicate(timeout=PROCESS_BOUND_S)
        same = delegate(make_intent())
        assert same.degraded_reason == "lock_held"
        assert main(["ledger", "verify", "--json"]) == 0  # in flight: listed, not a problem, not settled
        assert json.loads(capsys.readouterr().out)["runs"]["open"] != []
    finally:
        os.kill(supervisor, signal.SIGCONT)
    assert all(wait_gone(pid) for pid in tree) and wait_all_gone(marker(fake_hermes)) == []
    assert len(fake_hermes.calls()) == 1
    assert main(["ledger", "verify", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert (runs["started"], runs["settled"], runs["open"], runs["problems"]) == (1, 1, [], [])
    [orphan] = [r for r in read_ledger(project) if r.get("started_record_id")]
    assert (orphan["status"], orphan["reason"], orphan["hermes_pid"]) == ("cancelled", "orphaned", tree[0])
    assert orphan["usage"]["source"] == "hermes_state_db" and orphan["usage"]["input_tokens"] == USAGE["input"]
    assert orphan["intent_hash"] == same.extra["intent_hash"]
    assert main(["ledger", "verify"]) == 0 and len(read_ledger_lines(project)) == 3  # settled once, not again
    started_record = read_ledger_lines(project)[0]
    assert runs_folder(project) == [] and not Path(started_record["cwd_dir"]).exists()  # no spool or cwd leaks


def test_killing_drain_settles_its_run_and_dead_letters_the_item_as_orphaned(fake_hermes, project, make_intent,
                                                                            tmp_path, capsys) -> None:
    started, pids_file = hanging_run(fake_hermes, tmp_path)
    assert main(["enqueue", "--intent-file", str(write_intent(tmp_path, make_intent()))]) == 0
    cli = start_cli(project, "drain")
    wait_fifo(started, what="the fake's start")
    cli.kill()
    cli.communicate(timeout=PROCESS_BOUND_S)
    assert wait_all_gone(marker(fake_hermes)) == []
    capsys.readouterr()
    assert main(["drain"]) == 1
    assert len(json.loads(capsys.readouterr().out)["orphaned"]) == 1
    [settled] = [r for r in read_ledger(project) if r.get("started_record_id")]
    assert (settled["status"], settled["reason"], settled["usage"]["source"]) == ("cancelled", "orphaned",
                                                                                  "hermes_state_db")
    assert len(fake_hermes.calls()) == 1 and json.loads(pids_file.read_text())[0] == settled["hermes_pid"]


def test_a_host_that_cancels_drain_gets_the_item_dead_lettered_as_cancelled_and_nothing_more_claimed(
        fake_hermes, project, make_intent, tmp_path, capsys) -> None:
    started, _ = hanging_run(fake_hermes, tmp_path)
    for n in range(2):
        assert main(["enqueue", "--intent-file", str(write_intent(tmp_path, make_intent(f"task {n}")))]) == 0
    cli = start_cli(project, "drain")
    wait_fifo(started, what="the fake's start")
    cli.terminate()
    out, _ = cli.communicate(timeout=PROCESS_BOUND_S)
    assert cli.returncode == 128 + signal.SIGTERM
    report = json.loads(out)
    assert [(r["reason"], r["moved_to"]) for r in report["ran"]] == [("cancelled", "dead_letter")]
    assert (report["cancelled"], report["pending"]) == ("SIGTERM", 1) and len(fake_hermes.calls()) == 1


def test_sigterm_of_an_autopilot_fan_out_stops_every_child_and_settles_each_run(fake_hermes, project, tmp_path,
                                                                               capsys) -> None:
    started, _ = hanging_run(fake_hermes, tmp_path)
    registry = tmp_path / "agents.yaml"
    registry.write_text("agents:\n  andy: career-manager\n  cooper: health-coach\n")
    plan = tmp_path / "plan.yaml"
    plan.write_text("goal: Weekly check-in for Maxime\nmode: parallel\nsubtasks:\n"
                    "  - {task: Summary of the sleep log., agent: cooper}\n"
                    "  - {task: Email to the career coach., agent: andy}\n")
    cli = start_cli(project, "autopilot", "run", str(plan), "--registry", str(registry))
    wait_fifo(started, what="a child's start")
    cli.terminate()
    cli.communicate(timeout=PROCESS_BOUND_S)
    assert cli.returncode == 128 + signal.SIGTERM
    assert wait_all_gone(marker(fake_hermes)) == []
    assert main(["ledger", "verify", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert runs["started"] == runs["settled"] >= len(fake_hermes.calls()) >= 1 and runs["problems"] == []
    settled = [r for r in read_ledger(project) if r.get("started_record_id")]
    assert {r["reason"] for r in settled} == {"cancelled"} and runs_folder(project) == []


def test_sigterm_of_dispatch_stops_the_tree_and_ledgers_the_delivery_cancelled(fake_hermes, project,
                                                                               tmp_path) -> None:
    started, pids_file = hanging_run(fake_hermes, tmp_path)
    cli = start_cli(project, "dispatch", "--target", "andy", "--task-source", "t", "--context", "c",
                    "--reference-id", "r1")
    wait_fifo(started, what="the fake's start")
    tree = json.loads(pids_file.read_text())
    cli.terminate()
    out, _ = cli.communicate(timeout=PROCESS_BOUND_S)
    assert cli.returncode == 128 + signal.SIGTERM and json.loads(out)["details"]["reason"] == "cancelled"
    assert all(wait_gone(pid) for pid in tree) and wait_all_gone(marker(fake_hermes)) == []
    started_record, settled = read_ledger_lines(project)
    assert (settled["kind"], settled["status"], settled["started_record_id"]) == ("dispatch", "cancelled",
                                                                                  started_record["record_id"])
    assert settled["usage"]["input_tokens"] == USAGE["input"]


def test_one_delegation_can_be_cancelled_alone_by_its_stop_event(fake_hermes, project, make_intent,
                                                                 tmp_path) -> None:
    import threading

    from harness.autobot import AutobotSettings
    from harness.hermes import cancellation

    started, pids_file = hanging_run(fake_hermes, tmp_path)
    stop = threading.Event()
    result: list = []
    runner = threading.Thread(target=lambda: result.append(delegate(make_intent(),
                                                                    settings=AutobotSettings(stop=stop))))
    runner.start()
    wait_fifo(started, what="the fake's start")
    tree = json.loads(pids_file.read_text())
    stop.set()
    runner.join(PROCESS_BOUND_S)
    assert result and result[0].degraded_reason == "cancelled" and "a cancel request" in result[0].extra["detail"]
    assert all(wait_gone(pid) for pid in tree) and cancellation.requested() is None
    _started, settled = read_ledger_lines(project)
    assert (settled["status"], settled["usage"]["input_tokens"]) == ("cancelled", USAGE["input"])


def test_a_delegation_whose_stop_is_set_before_it_starts_spawns_nothing_and_is_ledgered_cancelled(
        fake_hermes, project, make_intent) -> None:
    import threading

    from harness.autobot import AutobotSettings

    stop = threading.Event()
    stop.set()
    result = delegate(make_intent(), settings=AutobotSettings(stop=stop))
    assert result.degraded_reason == "cancelled" and "before Hermes was started" in result.extra["detail"]
    assert fake_hermes.calls() == []
    [settled] = read_ledger_lines(project)
    assert (settled["status"], settled["usage"]["source"]) == ("cancelled", "not_run")


def test_a_project_root_that_is_a_regular_file_is_a_ledger_error_naming_the_journals_folder(tmp_path) -> None:
    regular = tmp_path / "regular"
    regular.write_text("not a directory")
    with pytest.raises(LedgerError, match=f"cannot read the run journals in {regular}/.*Not a directory"):
        settle_orphans(Ledger.for_project(regular))
    with pytest.raises(JobStoreUnusable, match=f"cannot keep serve's jobs in {regular}/.*Not a directory"):
        JobRunner(regular).open()
    assert regular.read_text() == "not a directory"


@pytest.mark.parametrize("mode", ["chat", "oneshot"])
def test_run_folders_holding_fifos_or_no_record_are_settled_or_removed_never_waited_on(project, tmp_path,
                                                                                     mode) -> None:
    ledger = Ledger.for_project(project)
    journal = RunJournal(ledger, "delegation")
    slot = journal.begin(RunRequest(prompt="p" * 40, profile="tester", mode=mode), tmp_path / "home",
                         tmp_path / "hermes-cwd-gone")
    os.close(slot.hold_fds[0])  # its owner died before writing anything more: the lock is nobody's
    for spool in ("stderr", "usage.json", CHILD_PID_FILE):  # what Hermes and its supervisor would have written
        make_fifo(slot.run_dir / spool)
    for name, started in (("run-fifo", None), ("run-not-an-object", "[1]")):
        folder = runs_dir(ledger) / name
        folder.mkdir()
        (folder / OWNER_LOCK).touch()
        if started is None:
            make_fifo(folder / STARTED_FILE)
        else:
            (folder / STARTED_FILE).write_text(started)
    try:
        listed = subprocess.run([sys.executable, "-m", "harness", "ledger", "--json"], cwd=project,
                                capture_output=True, text=True, timeout=PROCESS_BOUND_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"ledger did not end within {PROCESS_BOUND_S:g} s") from None
    assert listed.returncode == 0, listed.stderr
    assert runs_folder(project) == []
    started, settled = read_ledger_lines(project)
    assert settled["started_record_id"] == started["record_id"] and settled["reason"] == "orphaned"
    assert (settled["usage"]["source"], settled["usage"]["input_tokens"], settled["hermes_pid"]) == ("estimate", 10, None)


def test_a_run_that_swaps_its_spools_for_fifos_is_read_from_what_it_wrote_never_waited_on(
        fake_hermes, project, make_intent) -> None:
    import threading

    fake_hermes.script({"stdout": "the real answer", "swap_spools": True, "usage": USAGE})
    result: list = []
    runner = threading.Thread(target=lambda: result.append(delegate(make_intent())), daemon=True)
    runner.start()
    runner.join(PROCESS_BOUND_S)  # the read of a FIFO put at the spool's path waited for a writer for ever
    assert result, "the delegation never ended"
    assert result[0].to_dict()["response"] == "the real answer"
    [settled] = [r for r in read_ledger_lines(project) if r.get("started_record_id")]
    assert settled["status"] == "ok"
