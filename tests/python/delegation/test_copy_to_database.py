"""`copy-to-database`: one machine's file queue, serve's jobs and ledger, made by the real file backends, copied into
PostgreSQL once, whole or not at all, and drained from there; a body's SQLite sessions with them, continued there."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from conftest import isolated_env
from harness.autobot import delegate, parse_intent
from harness.autobot.pg_queue import PgQueue
from harness.autobot.queue import COPIED_MARKER, Queue
from harness.body import BodyOptions
from harness.cli.exit_codes import ExitCode
from harness.client import BodyClient
from harness.database import connect
from harness.ledger import Ledger, default_ledger_path
from harness.ledger.pg_store import PgLedger
from harness.program import main
from harness.serve.job_stores import PgJobStore, file_job_store
from harness.serve.jobs import JobRunner
from harness.settings import state_dir
from sampling_support import SAMPLING_ARGS, run_turn
from test_state_store import ROOMS, key_of, script
from test_state_store_pg import DYNAMIC, PgStore, SqliteStore

from .conftest import Backend


def files_of(project: Path, fake_hermes, make_intent) -> dict[str, Any]:
    """Three items queued in the files, one drained (so the ledger holds its two records), and one settled job of
    a server: what one machine leaves behind."""
    queue = Queue.for_project(project)
    items = [queue.enqueue(parse_intent(make_intent(f"Summarise note {n}."))) for n in range(3)]
    report = queue.drain(1, lambda document, item_id: delegate(document, settings=Backend(
        "files", project, None).settings(queue_item=item_id)))
    assert [r["moved_to"] for r in report.ran] == ["done"]
    runner = JobRunner(project)
    job = runner.start("autobot_delegate", lambda stop: {"status": "ok", "degraded_reason": None},
                       ledger=default_ledger_path(project))
    done = threading.Event()
    if runner.watch(job["job_id"], done.set) is not None:
        assert done.wait(30), "the job did not settle within 30 s"
    runner.close()
    return {"items": items, "job_id": job["job_id"],
            "records": list(Ledger.for_project(project).all_records()), "hermes_calls": len(fake_hermes.calls())}


def copy(url: str, *extra: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(["copy-to-database", "--database", url, "--json", *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out else {}, err


def counts(report: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {store["store"]: (store["copied"], store["already_there"]) for store in report["stores"]}


def rows(url: str) -> dict[str, int]:
    """How many rows each table of the schema holds; {} when the database has no schema."""
    with connect(url, migrated=False) as database:
        if not database.execute("SELECT to_regclass('mafiabot_schema') IS NOT NULL")[0][0]:
            return {}
        return {table: int(database.execute(f"SELECT count(*) FROM {table}")[0][0])  # noqa: S608 (our own names)
                for table in ("queue_items", "ledger", "serve_jobs")}


def test_a_machine_s_files_are_copied_whole_then_drained_from_the_database_each_item_run_once(
        fake_hermes, project, make_intent, pg_url, capsys) -> None:
    made = files_of(project, fake_hermes, make_intent)
    code, report, err = copy(pg_url, capsys=capsys)
    assert (code, err) == (0, "")
    assert counts(report) == {"ledger": (len(made["records"]), 0), "jobs": (1, 0), "queue": (3, 0)}
    assert report["stores"][2]["by_state"] == {"pending": 2, "done": 1} and report["dry_run"] is False

    with connect(pg_url) as database:
        assert list(PgLedger(database, state_dir(project)).all_records()) == made["records"]
    assert PgJobStore(pg_url).read(made["job_id"]) == file_job_store(project).read(made["job_id"])
    assert main(["drain", "--json"]) == ExitCode.INVALID_INPUT  # the files' copy of those items is not run
    assert "was copied into postgresql://" in capsys.readouterr().err
    assert len(fake_hermes.calls()) == made["hermes_calls"]
    assert main(["drain", "--database", pg_url, "--json"]) == 0
    capsys.readouterr()
    assert len(fake_hermes.calls()) == made["hermes_calls"] + 2  # the two pending ones, and only them
    assert PgQueue(pg_url).inspect()["counts"]["done"] == 3
    assert main(["ledger", "verify", "--database", pg_url]) == 0  # every run started is settled once
    capsys.readouterr()

    # A second copy, after the database moved the items on: nothing copied, nothing refused, nothing undone.
    code, again, _ = copy(pg_url, capsys=capsys)
    assert code == 0
    assert counts(again) == {"ledger": (0, len(made["records"])), "jobs": (0, 1), "queue": (0, 3)}
    assert PgQueue(pg_url).inspect()["counts"]["done"] == 3


def test_a_dry_run_reports_the_copy_and_leaves_the_database_as_it_was(fake_hermes, project, make_intent, pg_url,
                                                                      capsys) -> None:
    made = files_of(project, fake_hermes, make_intent)
    code, report, _ = copy(pg_url, "--dry-run", capsys=capsys)
    assert code == 0 and report["dry_run"] is True
    assert counts(report) == {"ledger": (len(made["records"]), 0), "jobs": (1, 0), "queue": (3, 0)}
    assert rows(pg_url) == {}  # not even the schema: its migration was rolled back with the rest
    assert not (Queue.for_project(project).root / COPIED_MARKER).exists()
    code, report, _ = copy(pg_url, capsys=capsys)
    assert counts(report) == {"ledger": (len(made["records"]), 0), "jobs": (1, 0), "queue": (3, 0)}


def test_a_row_the_database_refuses_mid_copy_leaves_it_exactly_as_it_was(fake_hermes, project, make_intent, pg_url,
                                                                        capsys) -> None:
    files_of(project, fake_hermes, make_intent)
    with connect(pg_url) as database:
        PgLedger(database, state_dir(project)).append({"kind": "delegation", "status": "ok"})
    before = rows(pg_url)
    # The queue is written last: a pending item with more attempts than the column holds fails after the ledger
    # and the jobs were written in the same transaction.
    pending = max(Queue.for_project(project).folder("pending").glob("*.json"))
    item = json.loads(pending.read_text())
    pending.write_text(json.dumps({**item, "attempts": 2 ** 40}))
    code, report, err = copy(pg_url, capsys=capsys)
    assert (code, report) == (ExitCode.CANNOT_RUN, {})
    assert f"queue: pending/{item['item_id']}" in err and "nothing was copied" in err and len(err.splitlines()) == 1
    assert rows(pg_url) == before == {"queue_items": 0, "ledger": 1, "serve_jobs": 0}


def test_a_database_holding_other_rows_under_the_same_ids_is_refused_and_left_untouched(
        fake_hermes, project, make_intent, pg_url, capsys) -> None:
    made = files_of(project, fake_hermes, make_intent)
    other = {**made["records"][-1], "usage": {"input_tokens": 999999}}
    with connect(pg_url) as database:
        PgLedger(database, state_dir(project)).append(other)
    code, report, err = copy(pg_url, capsys=capsys)
    assert (code, report) == (ExitCode.INVALID_INPUT, {})
    assert f"ledger: record {other['record_id']}" in err and "nothing was copied" in err
    assert rows(pg_url) == {"queue_items": 0, "ledger": 1, "serve_jobs": 0}


def test_a_claim_whose_drainer_lives_refuses_the_copy_and_one_whose_drainer_died_is_dead_lettered_first(
        fake_hermes, project, make_intent, pg_url, capsys) -> None:
    queue = Queue.for_project(project)
    live, dead = (queue.enqueue(parse_intent(make_intent(f"Item {n}."))) for n in range(2))
    running = queue.folder("running")
    running.mkdir(parents=True)
    for item in (live, dead):
        os.rename(queue.folder("pending") / f"{item['item_id']}.json", running / f"{item['item_id']}.json")
    fd = os.open(running / f"{live['item_id']}.json", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as the live drainer holds its claim
        code, _, err = copy(pg_url, capsys=capsys)
        assert code == ExitCode.CANNOT_RUN and live["item_id"] in err and "live drainer" in err
        assert rows(pg_url) == {}
    finally:
        os.close(fd)
    assert [i["item_id"] for i in queue.items_in("dead_letter")] == [dead["item_id"]]
    code, report, _ = copy(pg_url, capsys=capsys)
    assert code == 0 and report["stores"][2]["by_state"] == {"dead_letter": 2}
    assert fake_hermes.calls() == []
    assert {i["history"][-1]["reason"] for i in PgQueue(pg_url).items_in("dead_letter")} == {"orphaned"}


def test_what_cannot_be_read_is_left_behind_and_named_and_the_password_is_never_printed(
        fake_hermes, project, make_intent, pg_url, capsys) -> None:
    made = files_of(project, fake_hermes, make_intent)
    with default_ledger_path(project).open("ab") as ledger:
        ledger.write(b'{"v": 1, "record_id": "rec-torn"')
    (Queue.for_project(project).folder("pending") / "20260101T000000000000-0badc0de.json").write_text("[1,")
    url = f"{pg_url}&password=s3cret-word"
    code = main(["copy-to-database", "--database", url])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert "s3cret-word" not in out and "password=***" in out
    assert f"ledger  {len(made['records'])} copied" in out
    assert f"left behind: line {len(made['records']) + 1}: truncated" in out
    assert "left behind: pending/20260101T000000000000-0badc0de.json: not JSON" in out


# -- a body's SQLite sessions, brought along with `--state FILE` -------------------------------------------------

BUDGET_ARGS = ("--energy", "budget", "--budget-calls", "40", "--budget-window-s", "3600")


def spawn_at(body: Path, state: str, tmp_path: Path, name: str, *more: str) -> BodyClient:
    options = BodyOptions(body=body, hermes_home=tmp_path / f"hermes-{name}", no_soul=True,
                          extra_args=("--state", state, *more))
    return BodyClient.from_options(options, env=isolated_env(tmp_path / "env"),
                                   stderr_log=tmp_path / f"body-{name}.stderr").start()


def keys_by_use(query: Callable[[str], list[tuple[Any, ...]]], table: str) -> list[str]:
    return [bytes(key).decode() for (key,) in query(f"SELECT key FROM {table} ORDER BY used")]  # noqa: S608


def test_a_body_s_sessions_are_copied_with_the_rest_and_continue_in_the_database_at_their_next_turn(
        body_exe, project, pg_url, tmp_path, capsys) -> None:
    if not (body_exe.parent / DYNAMIC).is_file():
        pytest.skip(f"needs {DYNAMIC} (make build-dynamic): only the dynamic build links libpq")
    pg_store = PgStore(body_exe.parent / DYNAMIC, pg_url)
    store = tmp_path / "sessions.db"
    with spawn_at(body_exe, str(store), tmp_path, "file") as on_file:
        on_file.initialize()
        for room, text in script(seed=5, turns=9):
            on_file.call_turn(text, *room)
    with spawn_at(body_exe, str(store), tmp_path, "file-budget", *SAMPLING_ARGS, *BUDGET_ARGS) as sampled:
        sampled.initialize(capabilities={"sampling": {}})
        spent = run_turn(sampled).trace["cognition"]["budget"]["turn_calls"]
    on_file_turns = SqliteStore(body_exe, store).turns()
    sessions = ("--state", str(store), "--body", str(body_exe))  # the static body: its dynamic build makes the schema

    code, report, err = copy(pg_url, *sessions, "--dry-run", capsys=capsys)
    assert (code, err) == (0, "") and counts(report)["sessions"] == (len(on_file_turns), 0)
    assert rows(pg_url) == {}, "a dry run writes nothing, not even the body's schema"
    with connect(pg_url, migrated=False) as database:
        assert database.execute("SELECT to_regclass('body_sessions') IS NULL")[0][0]

    with spawn_at(pg_store.body, pg_url, tmp_path, "db-first") as first:
        first.initialize()
        assert first.call_turn("already here", *ROOMS[0])["turn"] == 1
    code, report, err = copy(pg_url, *sessions, capsys=capsys)
    assert (code, err) == (0, "")
    assert counts(report)["sessions"] == (len(on_file_turns) - 1, 1), "the database's own session is kept"
    assert pg_store.turns() == {**on_file_turns, key_of(ROOMS[0]): 1}
    with pg_store.connect() as db:
        db_order = keys_by_use(lambda sql: db.execute(sql).fetchall(), "body_sessions")
    with closing(sqlite3.connect(store)) as file:
        file_order = keys_by_use(lambda sql: file.execute(sql).fetchall(), "sessions")
    assert db_order == [key_of(ROOMS[0]), *(key for key in file_order if key != key_of(ROOMS[0]))], (
        "the copied sessions keep their order of use, after the database's own")

    shutil.copy(store, tmp_path / "unmoved.db")
    traces = []
    for name, body, state in (("unmoved", body_exe, str(tmp_path / "unmoved.db")), ("moved", pg_store.body, pg_url)):
        with spawn_at(body, state, tmp_path, name) as client:
            client.initialize()
            traces.append(client.call_turn("what was the door?", *ROOMS[1]))
    assert traces[0] == traces[1] and traces[1]["turn"] == on_file_turns[key_of(ROOMS[1])] + 1
    with spawn_at(pg_store.body, pg_url, tmp_path, "db-budget", *SAMPLING_ARGS, *BUDGET_ARGS) as sampled:
        sampled.initialize(capabilities={"sampling": {}})
        assert run_turn(sampled).trace["cognition"]["budget"]["calls_used"] == spent, "the budget moved with it"

    code, again, _ = copy(pg_url, *sessions, capsys=capsys)
    assert code == 0 and counts(again)["sessions"] == (0, len(on_file_turns)), "a session turned since is kept"
    assert pg_store.turns()[key_of(ROOMS[1])] == on_file_turns[key_of(ROOMS[1])] + 1


def test_sessions_the_body_cannot_bring_refuse_the_whole_copy_and_say_why(body_exe, project, make_intent, pg_url,
                                                                          tmp_path, capsys) -> None:
    if not (body_exe.parent / DYNAMIC).is_file():
        pytest.skip(f"needs {DYNAMIC} (make build-dynamic): only the dynamic build links libpq")
    store = tmp_path / "sessions.db"
    with spawn_at(body_exe, str(store), tmp_path, "file") as on_file:
        on_file.initialize()
        on_file.call_turn("one", *ROOMS[0])
    Queue.for_project(project).enqueue(parse_intent(make_intent("Summarise.")))
    missing = pg_url.replace("/test_", "/missing_", 1)
    code, report, err = copy(missing, "--state", str(store), "--body", str(body_exe), capsys=capsys)
    assert (code, report) == (ExitCode.CANNOT_RUN, {})
    assert "the body refuses the database" in err and "database missing_" in err and len(err.splitlines()) == 1
    code, _, err = copy(pg_url, "--state", str(tmp_path / "none.db"), "--body", str(body_exe), capsys=capsys)
    assert code == ExitCode.INVALID_INPUT and "does not exist" in err
    code, _, err = copy(pg_url, "--body", str(body_exe), capsys=capsys)
    assert code == ExitCode.INVALID_INPUT and "no --state was given" in err
    assert rows(pg_url) == {}, "the queue's item waited for the sessions: nothing was copied"
