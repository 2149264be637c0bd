"""Sessions in PostgreSQL (`--state postgresql://...`, the dynamic body), held to the SQLite store's contract.

Invariants held here:
- The key cases of the SQLite store's suite (test_state_store.py) run over both stores (`store`, one
  parametrised fixture), each against what one in-memory body gives for the same turns: a restarted body and
  two bodies interleaving continue every session as one body would; turns of one session pipelined to two
  bodies lose none; however often a body is SIGKILLed mid-turn, no reply the client saw is undone and no turn
  number is answered twice; the cap evicts the least recently used session across bodies, its tally exact; a record
  that does not decode fails its session alone, by name (-32010); a budget stays spent across a restart; every
  body on a store accepts the others' requestState (the store's secret); a sampled turn whose session another
  body turned meanwhile keeps nothing.
- PostgreSQL alone: a stub turn is two round trips to the server (a new session's, and with a budget, too),
  counted by a relay between the body and the server's socket; a connection the server ended while the body was
  idle is made again by the next turn, which runs; one lost mid-turn fails that turn alone (-32010 naming the
  server), which wrote nothing, and the next turn connects again and continues the session; one lost while the
  turn's COMMIT is on its way is refused as maybe kept, never as nothing kept; a statement refused in the middle
  of a turn's batch (the statements sent in one round trip) rolls the whole turn back; a session's row locked by
  another transaction (FOR UPDATE, as a turn's read locks it to its commit) holds a turn of it at that read, before
  its work, and past --state-busy-ms fails it there (-32010), which kept nothing, the next turn numbered as if it
  never ran; the cap's eviction passes over a locked session, neither waiting for it nor evicting it, and evicts
  the next least recently used instead; a server that cannot be reached, or a database of a newer schema, is
  refused at start (exit 2, one line naming the server, never the password); the static body refuses a URL at
  start, naming the build that has the client.
- A role that must give its password (the cluster's scram-sha-256 line): the body reads it from the `PGPASSFILE`
  in its environment, as Hermes gives it the entry's `env:`, and without it (or with a wrong one) refuses at start
  naming the server and never the password; the URL's libpq parameters reach libpq as written (`sslmode`); mount
  writes no password into config.yaml and keeps the entry's `PGPASSFILE`, and doctor opens the database with it.
"""

from __future__ import annotations

import json
import random
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from harness.cli import main
from harness.client import BodyClient
from harness.errors import RpcError
from pg_support import PASSWORD_ROLE, Cluster, database_of
from sampling_support import run_turn, start_sampling_body
from support import SHIPPED_ORGANS
from test_sampling_wire import created, first_round_state, modern_turn
from test_state_store import (
    BUSY_MS,
    ROOMS,
    STARTUP_BOUND,
    STORE_FAILED,
    key_of,
    park_sampled_turn,
    reference_traces,
    resume_sampled_turn,
    room_of,
    script,
)

DYNAMIC = "mafiabot-dynamic"


class Store:
    """One store the bodies share: its --state, the body that can open it, and a reader of what it holds."""

    body: Path
    state: str
    # What a failure's line names the store by.
    named: str

    def records(self) -> dict[str, bytes]:
        raise NotImplementedError

    def execute(self, sql: str, *params: object) -> int:
        """Run one statement by hand (an operator's, a damaged record's); the rows it changed."""
        raise NotImplementedError

    def tally(self) -> int:
        """The count of sessions the cap is held to, as the store keeps it."""
        raise NotImplementedError

    def turns(self) -> dict[str, int]:
        """Each stored session's turn counter, read from its record (format 1: turns at bytes 1..4)."""
        return {key: int.from_bytes(record[1:5], "little") for key, record in self.records().items()}


@dataclass
class SqliteStore(Store):
    body: Path
    path: Path

    @property
    def state(self) -> str:  # type: ignore[override]
        return str(self.path)

    @property
    def named(self) -> str:  # type: ignore[override]
        return str(self.path)

    def records(self) -> dict[str, bytes]:
        import sqlite3
        with closing(sqlite3.connect(self.path)) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            return {bytes(key).decode(): bytes(record) for key, record in db.execute("SELECT key, record FROM sessions")}

    def execute(self, sql: str, *params: object) -> int:
        import sqlite3
        with closing(sqlite3.connect(self.path)) as db, db:
            return db.execute(sql.replace("body_sessions", "sessions").replace("%s", "?"), params).rowcount

    def tally(self) -> int:
        import sqlite3
        with closing(sqlite3.connect(self.path)) as db:
            return int(db.execute("SELECT sessions FROM tally").fetchone()[0])


@dataclass
class PgStore(Store):
    body: Path
    url: str

    @property
    def state(self) -> str:  # type: ignore[override]
        return self.url

    @property
    def named(self) -> str:  # type: ignore[override]
        return f"database {database_of(self.url)}"

    def connect(self) -> Any:
        import psycopg
        return psycopg.connect(self.url, autocommit=True)

    def records(self) -> dict[str, bytes]:
        with self.connect() as db:
            return {bytes(key).decode(): bytes(record)
                    for key, record in db.execute("SELECT key, record FROM body_sessions").fetchall()}

    def rows(self) -> dict[str, tuple[bytes, int]]:
        """Each stored session's record and rank of use (`used`, drawn from a sequence by every write)."""
        with self.connect() as db:
            return {bytes(key).decode(): (bytes(record), int(used))
                    for key, record, used in db.execute("SELECT key, record, used FROM body_sessions").fetchall()}

    def execute(self, sql: str, *params: object) -> int:
        with self.connect() as db:
            return int(db.execute(sql, params).rowcount)

    def tally(self) -> int:
        with self.connect() as db:
            return int(db.execute("SELECT sessions FROM body_tally").fetchone()[0])


@pytest.fixture
def dynamic_exe(body_exe: Path) -> Path:
    dynamic = body_exe.parent / DYNAMIC
    if not dynamic.is_file():
        pytest.skip(f"needs {DYNAMIC} (make build-dynamic): only the dynamic build has the PostgreSQL store")
    return dynamic


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, body_exe: Path, tmp_path: Path) -> Store:
    if request.param == "sqlite":
        return SqliteStore(body_exe, tmp_path / "sessions.db")
    return PgStore(request.getfixturevalue("dynamic_exe"), request.getfixturevalue("pg_url"))


SpawnOn = Callable[..., BodyClient]


@pytest.fixture
def spawn_on(store: Store, spawn_body: Callable[..., BodyClient]) -> SpawnOn:
    """spawn_on(*more_args, **BodyOptions overrides): a started body on the store (not initialized)."""

    def spawn(*more: str, **overrides: Any) -> BodyClient:
        extra = ("--state", store.state, *overrides.pop("extra_args", ()), *more)
        return spawn_body(body=store.body, extra_args=extra, **overrides)

    return spawn


def started(spawn_on: SpawnOn, *more: str, **overrides: Any) -> BodyClient:
    client = spawn_on(*more, **overrides)
    client.initialize()
    return client


def assert_store_failed(client: BodyClient, room: tuple[str, str, str], store: Store, says: str = "") -> RpcError:
    with pytest.raises(RpcError) as failed:
        client.call_turn("this turn fails", *room)
    assert failed.value.code == STORE_FAILED
    assert store.named in failed.value.message and says in failed.value.message, failed.value.message
    return failed.value


# -- over both stores ----------------------------------------------------------------------------

def test_a_restarted_body_and_two_bodies_continue_every_session_as_one_body_would(spawn_body, spawn_on, store):
    turns = script(seed=16, turns=18)
    expected = reference_traces(spawn_body, turns)
    seen = []
    for part in (turns[:6], turns[6:12]):
        client = started(spawn_on)
        seen += [client.call_turn(text, *room) for room, text in part]
        client.close()
    bodies = [started(spawn_on) for _ in range(2)]
    seen += [bodies[n % 2].call_turn(text, *room) for n, (room, text) in enumerate(turns[12:])]
    assert seen == expected
    assert max(t["turn"] for t in seen[6:12]) > 2, "the script continues some session across a restart"


def test_turns_of_one_session_pipelined_to_two_bodies_lose_no_turn(spawn_on):
    """Both bodies run turns of the same session concurrently: the store's lock serializes them."""
    bodies = [started(spawn_on) for _ in range(2)]
    each = 30
    sent = {client: [client.send_request("tools/call", {"name": "turn", "arguments": {
        "input": f"hello {n}", "uid": "u", "channel": "c", "server": "s"}}) for n in range(each)]
        for client in bodies}
    numbers = [client.wait_response(request_id)["result"]["structuredContent"]["turn"]
               for client, ids in sent.items() for request_id in ids]
    assert sorted(numbers) == list(range(1, 2 * each + 1))


def test_sigkill_mid_turn_never_undoes_a_reply_the_client_saw(spawn_on, store):
    rng = random.Random(1616)
    answered: dict[str, list[int]] = {key_of(room): [] for room in ROOMS}

    def saw(reply: dict[str, Any]) -> None:
        trace = reply["result"]["structuredContent"]
        session = trace["session"]
        answered[key_of((session["uid"], session["channel"], session["server"]))].append(trace["turn"])

    for _round in range(30):
        client = started(spawn_on)
        pipelined = rng.randrange(1, 12)
        for n in range(pipelined):
            room = rng.choice(ROOMS)
            client.send_request("tools/call", {"name": "turn", "arguments": {
                "input": f"turn {n}", "uid": room[0], "channel": room[1], "server": room[2]}})
        for _ in range(rng.randrange(0, pipelined)):
            saw(client.read_message())
        # Killed while it works through the rest of the pipelined turns: before, within or after one.
        client.signal(signal.SIGKILL)
        for line in client.read_until_eof().splitlines():
            saw(json.loads(line))
        client.close()
    kept = store.turns()
    assert any(answered.values()), "some replies were seen before the kills"
    for key, numbers in answered.items():
        assert numbers == sorted(set(numbers)), f"a turn number of {key!r} was answered twice: {numbers}"
        if numbers:
            assert kept[key] >= numbers[-1], f"{key!r}: a reply of turn {numbers[-1]} was seen, {kept[key]} kept"
    survivor = started(spawn_on)
    for room in ROOMS:
        assert survivor.call_turn("after the kills", *room)["turn"] == kept.get(key_of(room), 0) + 1


def test_the_store_evicts_the_least_recently_used_session_across_bodies(spawn_on, store):
    first, second = (started(spawn_on, max_sessions=2) for _ in range(2))
    a, b, c = ROOMS
    assert first.call_turn("one", *a)["turn"] == 1
    assert first.call_turn("one", *b)["turn"] == 1
    assert second.call_turn("one", *c)["turn"] == 1  # the store is full: a is the least recently used
    assert first.call_turn("two", *b)["turn"] == 2
    assert second.call_turn("again", *a)["turn"] == 1
    assert "evict" in second.stderr_text().lower()
    assert store.turns() == {key_of(b): 2, key_of(a): 1} and store.tally() == 2
    assert store.execute("DELETE FROM body_sessions WHERE key = %s", key_of(b).encode()) == 1
    assert store.tally() == 1, "the tally follows a deletion by hand"
    assert first.call_turn("new", *c)["turn"] == 1, "a session deleted by hand leaves room: nothing evicted"
    assert store.turns() == {key_of(a): 1, key_of(c): 1} and store.tally() == 2


def test_a_record_that_does_not_decode_fails_its_session_alone_by_name(spawn_on, store):
    client = started(spawn_on)
    for room in ROOMS[:2]:
        assert client.call_turn("one", *room)["turn"] == 1
    assert store.execute("UPDATE body_sessions SET record = %s WHERE key = %s", b"\x01\xff",
                         key_of(ROOMS[0]).encode()) == 1
    assert_store_failed(client, ROOMS[0], store, "for this session")
    assert client.call_turn("two", *ROOMS[1])["turn"] == 2
    assert store.execute("UPDATE body_sessions SET record = %s WHERE key = %s", b"\x09",
                         key_of(ROOMS[1]).encode()) == 1
    assert_store_failed(client, ROOMS[1], store, "another format")
    assert client.ping() == {}


def sampled_turn_calls(client: BodyClient) -> dict[str, Any]:
    """One sampled turn of room_of('u'), every request answered: its budget as the trace reports it."""
    budget: dict[str, Any] = run_turn(client).trace["cognition"]["budget"]
    return budget


def test_a_session_s_budget_stays_spent_across_a_restart(spawn_on, store):
    budget_args = ("--energy", "budget", "--budget-calls", "40", "--budget-window-s", "3600")
    first = start_sampling_body(spawn_on, *budget_args)
    spent = [sampled_turn_calls(first) for _ in range(2)]
    assert spent[0]["turn_calls"] > 0 and spent[1]["calls_used"] == spent[0]["turn_calls"]
    first.close()
    restarted = start_sampling_body(spawn_on, *budget_args)
    after = sampled_turn_calls(restarted)
    assert after["calls_used"] == spent[0]["turn_calls"] + spent[1]["turn_calls"], "the log came back from the store"
    assert after["calls_left"] == 40 - after["calls_used"]


def test_every_body_on_a_store_accepts_the_request_state_of_the_others(spawn_on):
    state = first_round_state(spawn_on("--cognition", "sampling", no_soul=True))
    other = spawn_on("--cognition", "sampling", no_soul=True)
    other.send_raw(modern_turn({"sampling": {}}, request_id=3, requestState=state,
                               inputResponses={"call-2": created("round 2")}))
    result = other.read_message()["result"]
    assert result["resultType"] == "input_required" and list(result["inputRequests"]) == ["call-3"]


def test_a_round_that_asks_the_client_for_more_writes_nothing(spawn_on, store):
    client = spawn_on("--cognition", "sampling", no_soul=True)
    first_round_state(client)  # two rounds of a fresh session's first turn, each asking for a model call
    assert key_of(("u", "c", "s")) not in store.records()
    assert started(spawn_on).call_turn("a stub turn", "u", "c", "s")["turn"] == 1, "the rounds counted no turn"


def test_a_session_turned_by_another_body_while_a_sampled_turn_waits_keeps_the_other_s_turn(spawn_on, store):
    sampled = start_sampling_body(spawn_on)
    run_turn(sampled)
    parked = park_sampled_turn(sampled)
    other = started(spawn_on)
    assert other.call_turn("the same session", *room_of("u"))["turn"] == 2
    kept = store.records()[key_of(room_of("u"))]
    turn = resume_sampled_turn(sampled, parked)
    assert turn.response is not None and turn.response["error"]["code"] == STORE_FAILED, turn.response
    assert "the session changed in another body during this turn" in turn.response["error"]["message"]
    assert store.records()[key_of(room_of("u"))] == kept, "the store holds the other body's turn alone"
    assert run_turn(sampled).trace["turn"] == 3, "the sampled body goes on from it"


# -- PostgreSQL alone ------------------------------------------------------------------------------

@pytest.fixture
def pg_store(dynamic_exe: Path, pg_url: str) -> PgStore:
    return PgStore(dynamic_exe, pg_url)


def end_body_connections(store: PgStore) -> int:
    """What an operator's pg_terminate_backend, or a server restart, does to every body on the database."""
    with store.connect() as db:
        ended = db.execute("SELECT count (*) FILTER (WHERE pg_terminate_backend (pid)) FROM pg_stat_activity"
                           " WHERE application_name = 'mafiabot-body' AND datname = current_database ()").fetchone()
    return int(ended[0])


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_a_connection_ended_while_the_body_is_idle_is_made_again_by_the_next_turn(spawn_on, store):
    """A server restart, or an operator's pg_terminate_backend, between turns costs no turn."""
    client = started(spawn_on)
    assert client.call_turn("one", *ROOMS[0])["turn"] == 1
    assert end_body_connections(store) == 1
    assert client.ping() == {}
    assert client.call_turn("two", *ROOMS[0])["turn"] == 2, "the next turn connected again and continued"
    assert "connected again" in client.stderr_text()


def end_own_session_sql(timing: str) -> tuple[str, str]:
    """A trigger on a session's update that ends the body's own connection: at once (mid-turn), or deferred to
    the turn's COMMIT."""
    function = ("CREATE FUNCTION end_own_session () RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "PERFORM pg_terminate_backend (pg_backend_pid ()); RETURN NULL; END $$")
    trigger = (f"CREATE CONSTRAINT TRIGGER end_own_session AFTER UPDATE ON body_sessions {timing} FOR EACH ROW "
               f"EXECUTE FUNCTION end_own_session ()")
    return function, trigger


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_a_connection_lost_mid_turn_fails_that_turn_alone_which_kept_nothing(spawn_on, store):
    client = started(spawn_on)
    assert client.call_turn("one", *ROOMS[0])["turn"] == 1
    before = store.records()
    for statement in end_own_session_sql("NOT DEFERRABLE"):
        store.execute(statement)
    assert_store_failed(client, ROOMS[0], store, "the connection to the server was lost: nothing of this turn "
                                                 "was kept")
    store.execute("DROP TRIGGER end_own_session ON body_sessions")
    assert store.records() == before, "the failed turn wrote nothing"
    assert client.call_turn("two", *ROOMS[0])["turn"] == 2, "the next turn connected again and continued"


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_a_connection_lost_while_the_commit_is_on_its_way_never_says_nothing_was_kept(spawn_on, store):
    """The server may make a COMMIT durable and die before it answers (a crash found this in
    test_state_store_pg_crash.py): the body cannot know, and must not say that nothing was kept."""
    client = started(spawn_on)
    assert client.call_turn("one", *ROOMS[0])["turn"] == 1
    for statement in end_own_session_sql("DEFERRABLE INITIALLY DEFERRED"):  # after COMMIT was sent, before its answer
        store.execute(statement)
    failed = assert_store_failed(client, ROOMS[0], store, "may or may not have kept this turn")
    assert "nothing of this turn was kept" not in failed.message
    store.execute("DROP TRIGGER end_own_session ON body_sessions")
    assert client.call_turn("two", *ROOMS[0])["turn"] == 2, "this server ended the session before its commit"


# The first key of the body's advisory locks (Lock_Namespace in store-pg/session_repositories-postgres.adb); the
# second is hashtext of the session key in hex.
LOCK_NAMESPACE = 0x6D616610


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_a_session_locked_past_the_busy_timeout_fails_that_turn_alone(spawn_on, store):
    client = started(spawn_on, "--state-busy-ms", "100")
    assert client.call_turn("one", *ROOMS[0])["turn"] == 1
    with store.connect() as holder:
        holder.execute("SELECT pg_advisory_lock (%s, hashtext (encode (%s, 'hex')))",
                       (LOCK_NAMESPACE, key_of(ROOMS[0]).encode()))
        assert_store_failed(client, ROOMS[0], store, "past --state-busy-ms")
        assert client.call_turn("another session", *ROOMS[1])["turn"] == 1, "other sessions go on meanwhile"
    assert client.call_turn("two", *ROOMS[0])["turn"] == 2, "the failed turn did not happen"


# A short turn's read of its session (Read_Record_To_Write in store-pg/session_repositories-postgres.adb), as
# pg_stat_activity shows a prepared statement: its row locked from the read to the turn's commit.
READ_TO_WRITE = "SELECT record FROM body_sessions WHERE key = $1 FOR UPDATE"
# A backend's wait for a lock shows in pg_stat_activity at once; the bound only stops a hang.
WAITING_BOUND_S = 5.0
WAITING_POLL_S = 0.005


@contextmanager
def rows_locked(store: PgStore, *rooms: tuple[str, str, str]) -> Iterator[int]:
    """The rooms' rows locked as a body's turn locks its session's (FOR UPDATE), by a transaction of the test's
    until the block ends; yields that transaction's backend pid."""
    with store.connect() as holder, holder.transaction():
        locked = holder.execute("SELECT key FROM body_sessions WHERE key = ANY (%s) FOR UPDATE",
                                ([key_of(room).encode() for room in rooms],)).fetchall()
        assert len(locked) == len(rooms), "every room has a stored session to lock"
        yield int(holder.execute("SELECT pg_backend_pid ()").fetchone()[0])


def statement_waiting_for(store: PgStore, holder: int) -> str:
    """The statement a body's connection runs while it waits for a lock the backend `holder` holds, polled
    until one waits (bounded by WAITING_BOUND_S)."""
    deadline = time.monotonic() + WAITING_BOUND_S
    with store.connect() as db:
        while time.monotonic() < deadline:
            waiting = db.execute("SELECT query FROM pg_stat_activity WHERE application_name = 'mafiabot-body'"
                                 " AND %s = ANY (pg_blocking_pids (pid))", (holder,)).fetchone()
            if waiting is not None:
                return str(waiting[0])
            time.sleep(WAITING_POLL_S)
    raise AssertionError(f"no body's connection waited for backend {holder}'s lock within {WAITING_BOUND_S} s")


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_a_session_whose_row_another_transaction_locked_fails_its_turn_at_the_read_keeping_nothing(spawn_on, store):
    """A turn's read locks its session's row (FOR UPDATE): a row locked elsewhere past --state-busy-ms (the
    connection's lock_timeout) fails the turn at that read, before its work; a read that did not lock would
    pass and the turn fail only at its write."""
    client = started(spawn_on, "--state-busy-ms", str(BUSY_MS))
    locked, other = ROOMS[:2]
    assert client.call_turn("one", *locked)["turn"] == 1
    before = store.rows()
    with rows_locked(store, locked):
        assert_store_failed(client, locked, store, "cannot read the session: ERROR:  canceling statement due to "
                                                   "lock timeout")
        assert client.call_turn("another session", *other)["turn"] == 1, "other sessions go on meanwhile"
        assert store.rows()[key_of(locked)] == before[key_of(locked)], "the refused turn wrote nothing"
    assert client.call_turn("two", *locked)["turn"] == 2, "the refused turn did not happen"


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_a_session_whose_row_another_transaction_locked_holds_its_turn_at_the_read_until_released(spawn_on, store):
    """The lock's holder is the one the turn waits for, in its read of the record (a read that did not lock would
    wait in its write, after the work); released, the turn runs on."""
    client = started(spawn_on, "--state-busy-ms", str(int(2 * WAITING_BOUND_S * 1000)))  # outlasts the poll
    room = ROOMS[0]
    assert client.call_turn("one", *room)["turn"] == 1
    with rows_locked(store, room) as holder:
        sent = client.send_request("tools/call", {"name": "turn", "arguments": {
            "input": "two", "uid": room[0], "channel": room[1], "server": room[2]}})
        assert statement_waiting_for(store, holder) == READ_TO_WRITE, "the turn waits at its read, not later"
    assert client.wait_response(sent)["result"]["structuredContent"]["turn"] == 2, "once released, the turn ran"


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_the_cap_passes_over_a_session_whose_row_is_locked_and_evicts_the_next_least_recently_used(spawn_on, store):
    """A new session's eviction skips locked rows (FOR UPDATE SKIP LOCKED): a session another body is turning,
    its row locked from its read to its commit, is neither evicted under that turn nor waited for."""
    client = started(spawn_on, "--state-busy-ms", str(BUSY_MS), max_sessions=2)
    oldest, next_oldest, new = ROOMS
    for room in (oldest, next_oldest):
        assert client.call_turn("one", *room)["turn"] == 1
    before = store.rows()
    with rows_locked(store, oldest):
        assert client.call_turn("one", *new)["turn"] == 1, "the new session's turn neither waited nor failed"
        kept = store.rows()
        assert sorted(kept) == sorted([key_of(oldest), key_of(new)]), "the next least recently used went"
        assert kept[key_of(oldest)] == before[key_of(oldest)], "the locked session is left as it was"
        assert store.tally() == 2
    assert "evicted 1 least recently used session(s)" in client.stderr_text()
    assert client.call_turn("one", *next_oldest)["turn"] == 1, "the evicted session starts again"
    assert store.turns() == {key_of(new): 1, key_of(next_oldest): 1}, "unlocked, the oldest goes in its turn"


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_a_sampled_turn_whose_connection_ends_while_it_waits_keeps_nothing(spawn_on, store):
    sampled = start_sampling_body(spawn_on)
    run_turn(sampled)
    parked = park_sampled_turn(sampled)
    before = store.records()
    assert end_body_connections(store) == 1
    turn = resume_sampled_turn(sampled, parked)
    assert turn.response is not None and turn.response["error"]["code"] == STORE_FAILED, turn.response
    assert store.records() == before
    assert run_turn(sampled).trace["turn"] == 2


@pytest.mark.parametrize("store", ["postgresql"], indirect=True)
def test_a_statement_refused_mid_batch_rolls_the_whole_turn_back(spawn_on, store):
    """A turn's write, its eviction and its commit reach the server in one batch: the eviction refused after the
    record's write ran keeps neither, and the next turn's batches run on the same connection."""
    client = started(spawn_on, max_sessions=1)
    kept, new = ROOMS[:2]
    assert client.call_turn("one", *kept)["turn"] == 1
    store.execute("CREATE FUNCTION refuse () RETURNS trigger LANGUAGE plpgsql"
                  " AS $$ BEGIN RAISE EXCEPTION 'refused by hand'; END $$")
    store.execute("CREATE TRIGGER refused BEFORE DELETE ON body_sessions FOR EACH ROW EXECUTE FUNCTION refuse ()")
    before = store.records()
    assert_store_failed(client, new, store, "cannot evict past the capacity: ERROR:  refused by hand")
    assert store.records() == before and store.tally() == 1, "the new session's record, written first, is gone"
    assert client.call_turn("two", *kept)["turn"] == 2, "a turn that evicts nothing goes on"
    store.execute("DROP TRIGGER refused ON body_sessions")
    assert client.call_turn("one again", *new)["turn"] == 1
    assert store.turns() == {key_of(new): 1} and store.tally() == 1


class CountingRelay:
    """A socket folder for libpq (`host=` it) whose every connection is relayed to the cluster's socket, counting
    round trips: one each time a client speaks after the server did (and at its first word)."""

    def __init__(self, target: Path) -> None:
        # Not under tmp_path: a Unix socket's path is at most 107 bytes
        self.folder = Path(tempfile.mkdtemp(prefix="mafiabot-relay-"))
        self.target = target
        self.round_trips = 0
        self._lock = threading.Lock()
        self._listener = socket.socket(socket.AF_UNIX)
        self._listener.bind(str(self.folder / target.name))
        self._listener.listen()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            server = socket.socket(socket.AF_UNIX)
            server.connect(str(self.target))
            threading.Thread(target=self._relay, args=(client, server), daemon=True).start()

    def _relay(self, client: socket.socket, server: socket.socket) -> None:
        spoke_last = server
        with client, server:
            while True:
                readable, _, _ = select.select([client, server], [], [])
                for side in readable:
                    data = side.recv(65536)
                    if not data:
                        return
                    if side is client and spoke_last is server:
                        with self._lock:
                            self.round_trips += 1
                    spoke_last = side
                    (server if side is client else client).sendall(data)

    def close(self) -> None:
        self._listener.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.mark.parametrize("more", [(), ("--energy", "budget")], ids=["stub", "budget"])
def test_a_stub_turn_is_two_round_trips_to_the_server(dynamic_exe, spawn_body, pg_cluster: Cluster, more):
    assert pg_cluster.folder is not None
    relay = CountingRelay(pg_cluster.folder / ".s.PGSQL.5432")
    try:
        url = pg_cluster.new_database().replace(f"host={pg_cluster.folder}", f"host={relay.folder}")
        client = spawn_body(body=dynamic_exe, extra_args=("--state", url, *more))
        client.initialize()
        for turns, room in ((1, ROOMS[0]), (5, ROOMS[0]), (1, ROOMS[1])):
            before = relay.round_trips
            for _ in range(turns):
                client.call_turn("a turn", *room)
            assert relay.round_trips - before == 2 * turns, (turns, room, relay.round_trips - before)
    finally:
        relay.close()


def start_on(body: Path, state: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(body), "--organs", str(SHIPPED_ORGANS), "--no-soul", "--state", state],
        input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True, timeout=STARTUP_BOUND, check=False)


def refusal(run: subprocess.CompletedProcess[bytes]) -> str:
    assert run.returncode == 2, run
    assert run.stdout == b"", "nothing is served without a store"
    lines = run.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_server_that_cannot_be_reached_is_refused_at_start_naming_it_never_the_password(dynamic_exe, tmp_path):
    line = refusal(start_on(dynamic_exe, f"postgresql://vito:omerta-pw@localhost/family?host={tmp_path}"))
    assert "cannot connect" in line and "database family" in line and str(tmp_path) in line, line
    assert "omerta-pw" not in line


def test_a_database_of_a_newer_schema_is_refused_and_left_as_it_is(pg_store):
    assert start_on(pg_store.body, pg_store.url).returncode == 0, "the first start makes the schema"
    assert pg_store.execute("UPDATE body_meta SET value = '99' WHERE name = 'schema_version'") == 1
    line = refusal(start_on(pg_store.body, pg_store.url))
    assert pg_store.named in line and "schema version 99" in line, line
    with pg_store.connect() as db:
        assert db.execute("SELECT value FROM body_meta WHERE name = 'schema_version'").fetchone() == ("99",)


def test_bodies_starting_at_once_on_a_new_database_make_one_schema_and_share_one_secret(pg_store):
    starts = [subprocess.Popen([str(pg_store.body), "--organs", str(SHIPPED_ORGANS), "--no-soul", "--state",
                                pg_store.url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
              for _ in range(4)]
    for process in starts:
        out, err = process.communicate(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', timeout=STARTUP_BOUND)
        assert process.returncode == 0 and json.loads(out)["result"] == {}, err
    with pg_store.connect() as db:
        assert db.execute("SELECT name FROM body_meta ORDER BY name").fetchall() == [
            ("request_state_key",), ("schema_version",)]


def test_the_static_body_refuses_a_url_naming_the_build_that_has_the_client(body_exe):
    line = refusal(start_on(body_exe, "postgresql://mafiabot@localhost/mafiabot"))
    assert DYNAMIC in line and "no PostgreSQL client" in line, line


# -- mount and doctor --------------------------------------------------------------------------------

def hermes_entry(home: Path) -> dict[str, Any]:
    entry: dict[str, Any] = YAML(typ="safe").load((home / "config.yaml").read_text(encoding="utf-8"))["mcp_servers"][
        "mafiabot"]
    return entry


def doctor_line(home: Path, capsys: pytest.CaptureFixture[str], check: str) -> tuple[int, str]:
    capsys.readouterr()
    status = main(["doctor", "--hermes-home", str(home), "--no-hermes"])
    [line] = [line for line in capsys.readouterr().out.splitlines() if line.split()[1:2] == [check]]
    return status, line


def test_mount_writes_a_database_with_the_dynamic_body_and_doctor_opens_it(dynamic_exe, pg_url, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home), "--state", pg_url]) == 0
    entry = hermes_entry(home)
    assert entry["command"] == str(dynamic_exe.absolute()), "only the dynamic body has a PostgreSQL client"
    assert entry["args"][entry["args"].index("--state") + 1] == pg_url
    out = capsys.readouterr().out
    assert f"sessions: kept in the database {pg_url}" in out and "PostgreSQL client" in out
    assert not (home / "mafiabot").exists(), "a database needs no folder in the home"
    status, line = doctor_line(home, capsys, "state")
    assert status == 0 and line.split()[0] == "ok" and "sessions: the database" in line, line
    assert main(["mount", "--hermes-home", str(home), "--timeout", "90"]) == 0
    assert hermes_entry(home)["command"] == entry["command"] and hermes_entry(home)["args"] == entry["args"], (
        "a remount that does not ask keeps the database, and the body that can open it")


def test_doctor_fails_a_database_the_body_refuses_in_the_body_s_own_words(dynamic_exe, pg_url, tmp_path, capsys):
    home = tmp_path / "home"
    missing = pg_url.replace("/test_", "/missing_", 1)
    assert main(["mount", "--hermes-home", str(home), "--state", missing]) == 0, "mount never opens the store"
    status, line = doctor_line(home, capsys, "state")
    assert status == 1 and line.split()[0] == "fail", line
    assert "the body refuses its database (exit code 2" in line and "database missing_" in line, line


def test_mount_refuses_a_url_holding_a_password_and_writes_nothing(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    assert main(["mount", "--hermes-home", str(home), "--state", "postgresql://vito:omerta-pw@db/family"]) != 0
    said = capsys.readouterr()
    assert "PGPASSFILE" in said.err and "omerta-pw" not in said.err + said.out
    assert not (home / "config.yaml").exists()


# -- a role that must give its password ------------------------------------------------------------

@pytest.fixture
def no_password_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing of the developer's gives libpq a password: HOME (so ~/.pgpass) is a temp dir already."""
    for name in ("PGPASSFILE", "PGPASSWORD", "PGSERVICEFILE", "PGSERVICE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("no_password_anywhere")
def test_the_body_reads_its_role_s_password_from_pgpassfile_and_refuses_without_it(
        dynamic_exe, spawn_body, pg_cluster: Cluster, tmp_path, monkeypatch):
    url = pg_cluster.password_database() + "&sslmode=disable"
    named = f"database {database_of(url)}"
    wrong = pg_cluster.write_passfile(tmp_path / "wrong", "not-the-password")
    for passfile, says in ((None, "no password supplied"), (wrong, "password authentication failed")):
        if passfile is not None:
            monkeypatch.setenv("PGPASSFILE", str(passfile))
        line = refusal(start_on(dynamic_exe, url))
        assert "cannot connect" in line and says in line and named in line and str(pg_cluster.folder) in line, line
        assert pg_cluster.password not in line
    monkeypatch.setenv("PGPASSFILE", str(pg_cluster.write_passfile(tmp_path / "pgpass")))
    client = spawn_body(body=dynamic_exe, extra_args=("--state", url))
    client.initialize()
    assert client.call_turn("one", *ROOMS[0])["turn"] == 1
    with PgStore(dynamic_exe, pg_cluster.url(database_of(url))).connect() as admin:
        assert admin.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'body_sessions'").fetchone() == (
            PASSWORD_ROLE,), "the body made its tables as the role whose password it read"
    bogus = refusal(start_on(dynamic_exe, url.replace("sslmode=disable", "sslmode=bogus")))
    assert 'invalid sslmode value: "bogus"' in bogus, "libpq read the URL's own parameter, as written"


@pytest.mark.usefixtures("no_password_anywhere")
def test_mount_writes_no_password_and_doctor_opens_the_database_with_the_entry_s_pgpassfile(
        dynamic_exe, pg_cluster: Cluster, tmp_path, capsys):
    home = tmp_path / "home"
    url = pg_cluster.password_database() + "&sslmode=disable"
    assert main(["mount", "--hermes-home", str(home), "--state", url]) == 0
    status, line = doctor_line(home, capsys, "state")
    assert status == 1 and "no password supplied" in line and f"database {database_of(url)}" in line, line
    config = home / "config.yaml"
    yaml = YAML()
    document = yaml.load(config.read_text(encoding="utf-8"))
    document["mcp_servers"]["mafiabot"].setdefault("env", {})["PGPASSFILE"] = str(
        pg_cluster.write_passfile(tmp_path / "pgpass"))
    with config.open("w", encoding="utf-8") as out:
        yaml.dump(document, out)
    status, line = doctor_line(home, capsys, "state")
    assert status == 0 and line.split()[0] == "ok" and "sessions: the database" in line, line
    assert main(["mount", "--hermes-home", str(home), "--timeout", "90"]) == 0
    entry = hermes_entry(home)
    assert entry["args"][entry["args"].index("--state") + 1] == url, "sslmode=disable kept as written"
    assert entry["env"]["PGPASSFILE"] == str(tmp_path / "pgpass"), "a remount keeps the operator's key"
    assert pg_cluster.password not in config.read_text(encoding="utf-8") + capsys.readouterr().out


def test_the_dynamic_body_loads_libpq_only_for_a_database(dynamic_exe, spawn_body, pg_url):
    """libpq brings GSSAPI, LDAP and TLS, whose start-up took most of the dynamic body's: it is loaded when a
    --state URL asks for it, not linked."""
    def libraries(client: BodyClient) -> str:
        client.initialize()
        return Path(f"/proc/{client.pid}/maps").read_text()

    assert "libpq" not in libraries(spawn_body(body=dynamic_exe, no_soul=True))
    assert "libpq.so.5" in libraries(spawn_body(body=dynamic_exe, no_soul=True, extra_args=("--state", pg_url)))
