"""What only the PostgreSQL store has: leases held by sessions, runs journalled on another machine, the schema,
the intent lock across machines, a URL that is never written down, and a password read from where libpq reads it
(`PGPASSFILE`, a service file), never from the harness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.autobot import delegate, parse_intent
from harness.autobot.pg_queue import PgQueue, lease_key
from harness.cli import main
from harness.cli.exit_codes import ExitCode
from harness.database import (
    INTENT_LOCK,
    LEASE_LOCK,
    MIGRATIONS,
    SCHEMA_VERSION,
    DatabaseUnavailable,
    SessionLock,
    connect,
    shown_url,
)
from harness.errors import ConfigError
from harness.ledger.pg_store import PgLedger
from harness.settings import DATABASE_URL_ENV, state_dir
from pg_support import PASSWORD_ROLE, Cluster, database_of

from .conftest import Backend


def runner_of(backend: Backend):
    def runner(document: dict, item_id: str):
        return delegate(document, settings=backend.settings(queue_item=item_id))
    return runner


def left_running(url: str, item_id: str) -> None:
    """As a drainer that died right after its claim leaves an item: running, its lease gone with its session."""
    with connect(url) as database:
        database.execute("UPDATE queue_items SET state = 'running' WHERE item_id = %s", (item_id,))


def test_an_item_whose_drainer_holds_its_lease_is_neither_claimed_nor_reaped_until_that_session_ends(
        fake_hermes, backend_pg, make_intent) -> None:
    queue = backend_pg.queue()
    item = queue.enqueue(parse_intent(make_intent()))
    left_running(backend_pg.url, item["item_id"])
    [seq] = [i["seq"] for i in queue.items_in("running")]
    with connect(backend_pg.url) as other_machine:
        assert other_machine.try_lock(LEASE_LOCK, lease_key(seq))
        assert "problem" not in queue.inspect()["items"][0]
        report = queue.drain(5, runner_of(backend_pg))
        assert report.ran == [] and report.orphaned == [] and fake_hermes.calls() == []
    assert queue.inspect()["items"][0]["problem"].startswith("orphaned")
    report = queue.drain(5, runner_of(backend_pg))
    assert report.orphaned == [item["item_id"]] and fake_hermes.calls() == []
    assert [i["history"][-1]["reason"] for i in queue.items_in("dead_letter")] == ["orphaned"]


def test_a_run_journalled_on_another_machine_is_settled_once_from_its_started_record_when_its_lease_is_reaped(
        fake_hermes, backend_pg, make_intent) -> None:
    queue = backend_pg.queue()
    item = queue.enqueue(parse_intent(make_intent()))
    left_running(backend_pg.url, item["item_id"])
    with backend_pg.ledger() as ledger:
        started = ledger.append({"kind": "delegation", "status": "started", "phase": "started",
                                 "queue_item": item["item_id"], "hermes_run": "run-elsewhere", "mode": "chat",
                                 "prompt_chars": 400})
    report = queue.drain(5, runner_of(backend_pg))
    assert report.orphaned == [item["item_id"]] and fake_hermes.calls() == []
    settlements = [r for r in backend_pg.all_records() if r.get("started_record_id") == started.record_id]
    assert [(r["status"], r["reason"]) for r in settlements] == [("cancelled", "orphaned")]
    assert "another machine" in settlements[0]["transport"]["detail"]
    assert settlements[0]["usage"]["source"] == "estimate"
    assert main(["ledger", "verify", *backend_pg.cli()]) == 0


def test_a_session_bounds_its_wait_on_a_server_that_vanished_unless_the_url_says_otherwise(pg_url: str) -> None:
    with connect(pg_url) as database:
        given = database.connection.info.get_parameters()
    assert (given["keepalives_idle"], given["tcp_user_timeout"]) == ("30", "60000")
    with connect(f"{pg_url}&tcp_user_timeout=5000") as database:
        assert database.connection.info.get_parameters()["tcp_user_timeout"] == "5000"


def test_an_item_claimed_before_the_server_restarted_is_dead_lettered_saying_its_lease_ended_with_the_server(
        fake_hermes, backend_pg, make_intent) -> None:
    queue = backend_pg.queue()
    died, restarted = (queue.enqueue(parse_intent(make_intent(f"task {n}"))) for n in range(2))
    left_running(backend_pg.url, died["item_id"])
    left_running(backend_pg.url, restarted["item_id"])
    with connect(backend_pg.url) as database:  # as a claim made before the server's last start leaves it
        database.execute("UPDATE queue_items SET claimed_at = pg_postmaster_start_time() - interval '1 second' "
                         "WHERE item_id = %s", (restarted["item_id"],))
    report = queue.drain(5, runner_of(backend_pg))
    assert sorted(report.orphaned) == sorted([died["item_id"], restarted["item_id"]]) and fake_hermes.calls() == []
    details = {i["item_id"]: i["history"][-1]["detail"] for i in queue.items_in("dead_letter")}
    assert "database server restarted" in details[restarted["item_id"]]
    assert "its drainer died" in details[died["item_id"]]


def test_a_delegation_whose_intent_runs_on_another_machine_is_refused_lock_held_and_ledgered(
        fake_hermes, backend_pg, make_intent) -> None:
    intent = parse_intent(make_intent())
    with connect(backend_pg.url) as other_machine:
        SessionLock(other_machine, INTENT_LOCK, f"intent {intent.hash}").acquire("now")
        envelope = delegate(intent, settings=backend_pg.settings())
    assert envelope.degraded_reason == "lock_held" and fake_hermes.calls() == []
    assert "mafiabot-harness" in envelope.extra["lock_holder"]["label"]
    assert [r["reason"] for r in backend_pg.settled()] == ["lock_held"]
    assert delegate(intent, settings=backend_pg.settings()).status == "ok"


def test_a_database_of_an_older_harness_is_migrated_in_place_keeping_its_rows(pg_url: str) -> None:
    import psycopg
    version, name, statements = MIGRATIONS[0]
    with psycopg.connect(pg_url, autocommit=True) as older:  # what the first release left behind
        older.execute(b"CREATE TABLE mafiabot_schema (version integer PRIMARY KEY, name text NOT NULL, "
                      b"applied_at timestamptz NOT NULL DEFAULT now())")
        older.execute(statements.encode())
        older.execute("INSERT INTO mafiabot_schema (version, name) VALUES (%s, %s)", (version, name))
        older.execute("INSERT INTO ledger (record_id, record) VALUES ('rec-old', '{\"status\": \"ok\"}')")
    with connect(pg_url) as database:
        assert [v for (v,) in database.execute("SELECT version FROM mafiabot_schema ORDER BY version")] == [
            v for v, _, _ in MIGRATIONS]
        assert database.execute("SELECT record_id FROM ledger") == [("rec-old",)]
        assert database.execute("SELECT count(*) FROM serve_jobs") == [(0,)]


def test_the_schema_is_migrated_once_however_often_it_is_opened_and_a_newer_one_is_refused(pg_url: str) -> None:
    for _ in range(3):
        connect(pg_url).close()
    with connect(pg_url) as database:
        assert database.execute("SELECT version FROM mafiabot_schema ORDER BY version") == [
            (version,) for version, _, _ in MIGRATIONS]
        database.execute("INSERT INTO mafiabot_schema (version, name) VALUES (%s, 'from the future')",
                         (SCHEMA_VERSION + 1,))
    with pytest.raises(ConfigError, match="newer than this harness knows"):
        connect(pg_url)


def test_a_password_in_the_url_is_never_shown_nor_written(fake_hermes, backend_pg, make_intent, tmp_path: Path,
                                                          capsys) -> None:
    secret = "hunter2-not-for-files"  # noqa: S105 (a password the test must never find written)
    url = backend_pg.url.replace("&user=", f"&password={secret}&user=")
    assert secret not in shown_url(url) and shown_url("postgresql://me:pw@db/x") == "postgresql://me:***@db/x"
    intent_file = tmp_path / "intent.json"
    intent_file.write_text(json.dumps(make_intent()))
    assert main(["enqueue", "--intent-file", str(intent_file), "--database", url]) == 0
    assert main(["queue", "--json", "--database", url]) == 0
    assert main(["drain", "--database", url]) == 0
    assert main(["ledger", "--json", "--database", url]) == 0
    printed = capsys.readouterr()
    assert secret not in printed.out + printed.err and "password=***" in printed.out
    assert [p for p in tmp_path.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()] == []
    assert secret not in json.dumps(backend_pg.all_records())


@pytest.mark.parametrize("url", ["postgresql://u:SECRET3@[::1/db", "postgresql://u:SECRET8%zz@127.0.0.1:1/db",
                                 "postgresql://u:SEC/RET5@127.0.0.1:1/db",
                                 "postgresql://u@127.0.0.1:1/db?sslmode=disable&pass%77ord=SECRET7"])
def test_a_password_libpq_would_read_is_masked_however_the_url_spells_it(url: str, capsys) -> None:
    # A '/' in the password, a percent-encoded key, a URL libpq cannot read: libpq's own messages quote the
    # URL or the token that failed, so neither they nor the shown form may carry the password.
    assert "SECRET" not in shown_url(url) and "RET5" not in shown_url(url)
    assert main(["queue", "--database", url]) in (ExitCode.INVALID_INPUT, ExitCode.CANNOT_RUN)
    printed = capsys.readouterr()
    assert "SECRET" not in printed.out + printed.err and "RET5" not in printed.err and "Traceback" not in printed.err


def test_a_role_that_must_give_a_password_connects_with_pgpassfile_or_a_service_file_and_not_without(
        pg_cluster: Cluster, tmp_path: Path, monkeypatch, capsys) -> None:
    for name in ("PGPASSFILE", "PGPASSWORD", "PGSERVICEFILE", "PGSERVICE"):
        monkeypatch.delenv(name, raising=False)  # HOME, so ~/.pgpass, is a temp dir already
    url = pg_cluster.password_database() + "&sslmode=disable"
    database = database_of(url)
    assert main(["queue", "--database", url]) == ExitCode.CANNOT_RUN
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot connect to the database {url}: " in err, err
    assert "no password supplied" in err and pg_cluster.password not in err and "Traceback" not in err
    monkeypatch.setenv("PGPASSFILE", str(pg_cluster.write_passfile(tmp_path / "pgpass")))
    assert main(["queue", "--json", "--database", url]) == 0
    service = tmp_path / "pg_service.conf"
    service.write_text(f"[team]\nhost={pg_cluster.folder}\nuser={PASSWORD_ROLE}\ndbname={database}\n")
    monkeypatch.setenv("PGSERVICEFILE", str(service))
    assert main(["ledger", "--json", "--database", "postgresql:///?service=team&sslmode=disable"]) == 0
    printed = capsys.readouterr()
    assert pg_cluster.password not in printed.out + printed.err
    with connect(pg_cluster.url(database)) as admin:
        assert admin.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'queue_items'") == [
            (PASSWORD_ROLE,)], "the harness made its schema as the role whose password it read"


def test_an_unreachable_database_is_one_line_naming_it_and_nothing_runs(fake_hermes, project, make_intent,
                                                                       tmp_path: Path, monkeypatch, capsys) -> None:
    intent_file = tmp_path / "intent.json"
    intent_file.write_text(json.dumps(make_intent()))
    nowhere = f"postgresql://me:sesame@/x?host={tmp_path / 'no-server'}"
    monkeypatch.setenv(DATABASE_URL_ENV, nowhere)
    assert main(["enqueue", "--intent-file", str(intent_file)]) == ExitCode.CANNOT_RUN
    assert main(["drain"]) == ExitCode.CANNOT_RUN
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "cannot connect to the database postgresql://me:***@/x" in err
    assert "sesame" not in err and "Traceback" not in err and fake_hermes.calls() == []
    monkeypatch.setenv(DATABASE_URL_ENV, "mysql://db/x")
    assert main(["queue"]) == ExitCode.INVALID_INPUT
    assert "not a PostgreSQL URL" in capsys.readouterr().err


def test_a_drained_item_leaves_its_run_folder_on_this_machine_and_its_records_in_the_database(
        fake_hermes, backend_pg, project, make_intent) -> None:
    queue = backend_pg.queue()
    queue.enqueue(parse_intent(make_intent()))
    assert [r["moved_to"] for r in queue.drain(5, runner_of(backend_pg)).ran] == ["done"]
    assert not (project / ".agents" / "state" / "autobot-cost-ledger.jsonl").exists()
    with connect(backend_pg.url) as database:
        assert [r["status"] for r in PgLedger(database, state_dir(project)).records()] == ["ok"]
    assert list((project / ".agents" / "state" / "hermes-runs").iterdir()) == []
    assert isinstance(queue, PgQueue)


def test_serve_with_a_database_delegates_queues_sums_and_keeps_its_jobs_there_for_any_server(
        fake_hermes, backend_pg, project, make_intent, monkeypatch) -> None:
    from .test_serve import call, scenario, served
    monkeypatch.setenv(DATABASE_URL_ENV, backend_pg.url)
    seen: dict[str, Any] = {}

    async def body() -> None:
        async with served() as session:
            seen["delegated"] = await call(session, "autobot_delegate", intent=make_intent(), wait_seconds=50)
            seen["queued"] = await call(session, "autobot_enqueue", intent=make_intent("Summarise later."))
            seen["queue"] = await call(session, "queue_status")
            seen["ledger"] = await call(session, "ledger_summary")
        async with served() as another_server:  # another process: it finds the job by its handle alone
            seen["again"] = await call(another_server, "delegation_result", job_id=seen["delegated"]["job_id"],
                                       wait_seconds=0)
    scenario(body)
    assert seen["delegated"]["status"] == "ok" and seen["queued"]["queue"] == shown_url(backend_pg.url)
    assert seen["again"] == seen["delegated"]
    assert seen["queue"]["counts"]["pending"] == 1 and seen["ledger"]["ledger"] == shown_url(backend_pg.url)
    assert [r["status"] for r in backend_pg.settled()] == ["ok"]
    assert [i["item_id"] for i in backend_pg.queue().items_in("pending")] == [seen["queued"]["item_id"]]
    state = project / ".agents" / "state"
    assert not (state / "autobot-cost-ledger.jsonl").exists() and not (state / "autobot-queue").exists()
    assert not (state / "serve-jobs").exists()
    with connect(backend_pg.url) as database:
        [(job,)] = database.execute("SELECT job FROM serve_jobs")
    assert job["ledger"] == shown_url(backend_pg.url) and job["journal"].startswith(str(state))


def test_a_drainer_whose_connection_drops_mid_run_fails_in_one_line_and_its_item_is_reaped_not_rerun(
        fake_hermes, backend_pg, make_intent) -> None:
    queue = backend_pg.queue()
    item = queue.enqueue(parse_intent(make_intent()))

    def runner(document: dict, item_id: str):
        envelope = delegate(document, settings=backend_pg.settings(queue_item=item_id))
        with connect(backend_pg.url) as admin:  # the server ends the drainer's session, as a failover would
            [(ended,)] = admin.execute(
                "SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND "
                "l.classid = %s::bigint::oid AND l.granted", (LEASE_LOCK,))
        assert ended
        return envelope

    with pytest.raises(DatabaseUnavailable, match="dropped the connection"):
        queue.drain(5, runner)
    assert [i["item_id"] for i in queue.items_in("running")] == [item["item_id"]]
    report = queue.drain(5, runner_of(backend_pg))
    assert report.orphaned == [item["item_id"]] and report.ran == [] and len(fake_hermes.calls()) == 1
    assert [r["status"] for r in backend_pg.settled()] == ["ok"]
    assert main(["ledger", "verify", *backend_pg.cli()]) == 0
