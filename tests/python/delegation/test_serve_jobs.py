"""serve's job runner in process: what a host is answered when the job store fails it, and how the store comes back."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from harness.database import RUNNER_LOCK, connect
from harness.durable import DurableWriteError
from harness.ledger import default_ledger_path
from harness.serve.job_stores import PgJobStore, file_job_store
from harness.serve.jobs import JobRunner

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
