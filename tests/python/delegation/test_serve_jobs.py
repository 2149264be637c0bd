"""serve's job runner in process: what a host is answered when the job store fails it, and how the store comes back;
how a job whose runner is gone is settled from the ledger by the next reader."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from harness.database import RUNNER_LOCK, connect
from harness.durable import DurableWriteError
from harness.ledger import default_ledger_path
from harness.program import build_parser, serve_settings
from harness.serve.job_stores import PgJobStore, file_job_store
from harness.serve.jobs import JobRunner
from harness.serve.tools import TOOLS_BY_NAME, ServeContext, Started

from .delegation_support import make_fifo, read_ledger, release_fifo, wait_fifo

# How long the server may take to end a backend it was told to terminate (a loaded 2-core machine).
TERMINATE_BOUND_MS = 20_000


def settled_in(runner: JobRunner, job_id: str) -> None:
    done = threading.Event()
    if runner.watch(job_id, done.set) is not None:
        assert done.wait(30), "the job did not settle within 30 s"


def test_an_answer_the_store_did_not_take_is_still_answered_and_written_once_the_store_takes_it(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    runner = JobRunner(project)
    store_full = threading.Event()
    store_full.set()
    write = runner.store.write

    def failing_write(job: dict[str, Any]) -> None:
        if job["state"] == "settled" and store_full.is_set():
            raise DurableWriteError("No space left on device")
        write(job)

    monkeypatch.setattr(runner.store, "write", failing_write)
    job = runner.start("autobot_delegate", lambda stop: {"status": "ok", "response": "the answer"},
                       ledger=default_ledger_path(project))
    settled_in(runner, job["job_id"])
    for _ in range(2):  # a host polling for its answer
        answered = runner.get(job["job_id"])
        assert (answered["state"], answered["envelope"]["response"]) == ("settled", "the answer")
    assert file_job_store(project).read(job["job_id"])["state"] == "running"
    store_full.clear()
    assert runner.get(job["job_id"]) == answered
    assert file_job_store(project).read(job["job_id"]) == answered  # what another server reads now
    runner.close()
    assert capsys.readouterr().err.count("could not be recorded as settled") == 1


def test_a_dropped_database_session_is_replaced_and_the_runner_seen_alive_again(
        project: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    runner = JobRunner(project, database=pg_url)
    release = threading.Event()

    def work(stop: threading.Event) -> dict[str, Any]:
        assert release.wait(30), "the test never released the job"
        return {"status": "ok", "response": "the answer"}

    job = runner.start("autobot_delegate", work, ledger=default_ledger_path(project))
    other_server = PgJobStore(pg_url)
    assert other_server.runner_alive(runner.runner_id)
    with connect(pg_url) as admin:  # the server ends the runner's session, as a restart or a network cut would
        [(pid,)] = admin.execute("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s::bigint::oid",
                                 (RUNNER_LOCK,))
        # Its locks go when its backend is gone: wait for that, bounded, rather than for a guessed time.
        assert admin.execute("SELECT pg_terminate_backend(%s, %s)", (pid, TERMINATE_BOUND_MS))[0][0]
    assert not other_server.runner_alive(runner.runner_id)
    release.set()
    settled_in(runner, job["job_id"])
    assert runner.get(job["job_id"])["envelope"]["response"] == "the answer"
    assert other_server.read(job["job_id"])["envelope"]["response"] == "the answer"
    assert other_server.runner_alive(runner.runner_id)
    runner.close()
    other_server.close()
    assert "could not be recorded" not in capsys.readouterr().err  # the write that met the drop was run again


def test_a_nul_character_in_an_answer_is_kept_marked_in_the_database_and_the_job_settles(
        project: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """jsonb holds no NUL: the rows used to be refused, the job left running for ever, its run's settlement lost."""
    from harness.ledger.stores import opened_ledger
    runner = JobRunner(project, database=pg_url)
    job = runner.start("autobot_delegate", lambda stop: {"status": "ok", "response": "a\x00b"},
                       ledger=default_ledger_path(project))
    settled_in(runner, job["job_id"])
    assert runner.get(job["job_id"])["envelope"]["response"] == "a\x00b"  # the host gets what it was given
    assert PgJobStore(pg_url).read(job["job_id"])["envelope"]["response"] == "a\ufffdb"
    runner.close()
    with opened_ledger(default_ledger_path(project), pg_url) as ledger:
        entry = ledger.append({"v": 1, "kind": "delegation", "status": "degraded", "detail": "HTTP 5\x0003"})
        assert [line.record["detail"] for line in ledger.lines() if line.record
                and line.record["record_id"] == entry.record_id] == ["HTTP 5\ufffd03"]
    assert "could not be recorded" not in capsys.readouterr().err


def test_an_answer_with_a_lone_surrogate_is_recorded_and_a_store_that_fails_oddly_still_lets_its_job_settle(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A JSON escape such as \\ud800 in a model's output decodes to a text UTF-8 cannot encode: it is kept
    escaped. Whatever else a store raises, the job's thread settles the job and says so."""
    runner = JobRunner(project)
    lone = runner.start("autobot_delegate", lambda stop: {"status": "ok", "response": "x\ud800y"},
                        ledger=default_ledger_path(project))
    settled_in(runner, lone["job_id"])
    assert file_job_store(project).read(lone["job_id"])["envelope"]["response"] == "x\ud800y"
    write, failed = runner.store.write, threading.Event()

    def odd_write(job: dict[str, Any]) -> None:
        if job["state"] == "settled" and not failed.is_set():
            failed.set()
            raise TypeError("Object of type bytes is not JSON serializable")
        write(job)

    monkeypatch.setattr(runner.store, "write", odd_write)
    job = runner.start("autobot_delegate", lambda stop: {"status": "ok", "response": "the answer"},
                       ledger=default_ledger_path(project))
    settled_in(runner, job["job_id"])
    assert runner.get(job["job_id"])["envelope"]["response"] == "the answer"
    assert file_job_store(project).read(job["job_id"])["state"] == "settled"  # written again when next read
    runner.close()
    assert "could not be recorded as settled: TypeError" in capsys.readouterr().err


def test_a_slow_store_holds_no_waiter_of_another_job(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The event loop registers its waiters (watch) under the runner's lock: a job start writing to a database
    that takes a minute to answer must not hold it."""
    runner = JobRunner(project)
    release_first = threading.Event()
    first = runner.start("autobot_delegate", lambda stop: {"status": "ok"} if release_first.wait(30) else {},
                         ledger=default_ledger_path(project))
    writing, release_write = threading.Event(), threading.Event()
    write = runner.store.write

    def slow_write(job: dict[str, Any]) -> None:
        if job["state"] == "running":
            writing.set()
            assert release_write.wait(30), "the test never released the write"
        write(job)

    monkeypatch.setattr(runner.store, "write", slow_write)
    starting = threading.Thread(target=lambda: runner.start("autobot_delegate", lambda stop: {"status": "ok"},
                                                            ledger=default_ledger_path(project)), daemon=True)
    starting.start()
    assert writing.wait(30)
    watched = threading.Thread(target=lambda: runner.watch(first["job_id"], lambda: None), daemon=True)
    watched.start()
    watched.join(5)
    alive = watched.is_alive()
    release_write.set()
    release_first.set()
    starting.join(30)
    settled_in(runner, first["job_id"])
    runner.close()
    assert not alive, "watch waited for another job's write"


def dying_before_its_settled_job(runner: JobRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's settled jobs never reach its store, as when its server dies between the run's settlement and
    the job's."""
    write = runner.store.write

    def write_running_only(job: dict[str, Any]) -> None:
        if job["state"] == "settled":
            raise DurableWriteError("the server died before it wrote the settled job")
        write(job)

    monkeypatch.setattr(runner.store, "write", write_running_only)


def tool_job(runner: JobRunner, tool: str, **arguments: Any) -> str:
    """Start `tool` as serve's handler does, on `runner`; the job's id."""
    ctx = ServeContext.of(serve_settings(build_parser().parse_args(["serve"])), runner)
    spec = TOOLS_BY_NAME[tool]
    started = spec.handler(ctx, spec.parse(arguments))
    assert isinstance(started, Started), started
    return str(started.job["job_id"])


def test_a_delivered_dispatch_whose_runner_died_before_writing_its_job_is_answered_from_the_ledger(
        fake_hermes, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_hermes.script({"stdout": "Noted, I will reply by Friday."})
    runner = JobRunner(project)
    dying_before_its_settled_job(runner, monkeypatch)
    job_id = tool_job(runner, "agent_dispatch", wait_seconds=0, inputs={
        "target": "andy", "task_source": "email-triage", "context": "Offer from ACME", "reference_id": "mail-4711"})
    settled_in(runner, job_id)
    runner.close()  # its lock let go, as the kernel lets go of a dead server's
    assert file_job_store(project).read(job_id)["state"] == "running"
    job = JobRunner(project).get(job_id)
    [settlement] = [r for r in read_ledger(project) if r.get("kind") == "dispatch"]
    envelope = job["envelope"]
    assert (job["state"], envelope["status"]) == ("settled", "delivered")
    assert (envelope["target"], envelope["reference_id"]) == ("andy", "mail-4711")
    assert envelope["transport_message_id"] == settlement["session_id"] is not None
    assert envelope["transport"]["details"]["record_id"] == settlement["record_id"]
    assert file_job_store(project).read(job_id) == job  # what every later reader gets


PLAN = ("goal: Prepare the check-in\nmode: sequential\nband: L1\nsubtasks:\n"
        "  - {id: habits, task: List three sleep habits worth keeping., agent: cooper}\n")


def test_an_autopilot_job_whose_runner_is_gone_stays_running_while_its_child_is_in_flight_then_settles_from_its_run(
        fake_hermes, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's lock is gone while its process, and the run's child, go on (a database session that dropped): a
    reader keeps the job running until the run ends, then answers it from the run's envelope.json."""
    started, release = make_fifo(tmp_path / "started"), make_fifo(tmp_path / "release")
    fake_hermes.script({"gate": {"started": str(started), "release": str(release)}})
    (project / "plan.yaml").write_text(PLAN)
    runner = JobRunner(project)
    dying_before_its_settled_job(runner, monkeypatch)
    job_id = tool_job(runner, "autopilot_run", plan_file="plan.yaml")
    wait_fifo(started)
    runner.close()
    reader = JobRunner(project)
    assert reader.get(job_id)["state"] == "running"  # its child is in flight
    release_fifo(release)
    settled_in(runner, job_id)
    job = reader.get(job_id)
    envelope = job["envelope"]
    assert (job["state"], envelope["status"]) == ("settled", "completed")
    assert [(c["subtask"], c["status"]) for c in envelope["children"]] == [("habits", "ok")]
    run = Path(envelope["envelope_file"]).parent
    assert (run.name, envelope["run_id"]) == (job["run_id"], job["run_id"])
    assert [r["run_id"] for r in read_ledger(project) if r.get("phase") == "settled"] == [job["run_id"]]


def test_an_autopilot_job_whose_run_left_no_readable_envelope_is_runner_gone_naming_its_run(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO put where the envelope would be holds no reader: it is not read, and the job names the run it had."""
    run_dir = tmp_path / "ap-0123456789ab"
    run_dir.mkdir()
    make_fifo(run_dir / "envelope.json")
    runner = JobRunner(project)
    dying_before_its_settled_job(runner, monkeypatch)
    job = runner.start("autopilot_run", lambda stop: {"autopilot": 1, "status": "completed", "children": []},
                       ledger=default_ledger_path(project), named={"run_id": run_dir.name, "run_dir": str(run_dir)})
    settled_in(runner, job["job_id"])
    runner.close()
    envelope = JobRunner(project).get(job["job_id"])["envelope"]
    assert (envelope["status"], envelope["degraded_reason"], envelope["run_id"]) == (
        "degraded", "runner_gone", run_dir.name)
