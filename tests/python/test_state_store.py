"""Sessions kept in SQLite (`--state FILE`): they outlive the body and are shared by several bodies.

Invariants held here, each against what one in-memory body gives for the same turns (the reference):
- A restarted body, or another body on the same store, continues every session exactly where the last
  committed turn left it: the traces (turn, energy, passes, draws, recall, output) equal the reference's.
- A turn is committed before its reply is written: however often a body is SIGKILLed mid-turn, every
  reply that reached the client is reflected in the store, and no turn number is ever answered twice
  (test_state_store_pg.py, over this store and PostgreSQL).
- A store that cannot be used is refused at start-up (exit 2, one stderr line naming the file, nothing
  on stdout); a turn the store fails mid-run is answered -32010 and did not happen; the body serves on.
- The session cap and LRU eviction hold for the store, across bodies (with pipelined turns of one session from
  two bodies: test_state_store_pg.py, over this store and PostgreSQL); L1 holds across bodies and
  restarts. The tally the cap counts is the number of sessions however they go (evicted, or deleted
  by hand), and a store of schema 2 is migrated to 3 with its sessions.
- A sampled turn waiting on its client holds no lock: other bodies serve and start meanwhile. It
  commits only over the record it read; a session another body turned meanwhile fails it (-32010),
  and the store keeps the other body's turn.
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

import test_laws
import test_memcheck
from harness.client import encode_message
from harness.errors import RpcError
from sampling_support import SAMPLING, TURN_ID, answer_all, run_turn, start_sampling_body, turn_request
from support import SHIPPED_ORGANS, check_trace

STORE_FAILED = -32010
# Start-up with an unusable store ends at once; the bound only stops a hang.
STARTUP_BOUND = 10.0
# Short enough that a test waiting on a held lock stays quick.
BUSY_MS = 100
NOBODY = 65534
# Room for a dozen of the large turns below, not for all of them.
FULL_DISK_BYTES = 200_000

ROOMS = [("vito", "#tavern", "corleone"), ("michael", "#tavern", "corleone"), ("vito", "#docks", "corleone")]


def store_args(store: Path, *more: str) -> tuple[str, ...]:
    return ("--state", str(store), *more)


def script(seed: int, turns: int) -> list[tuple[tuple[str, str, str], str]]:
    """A seeded sequence of (room, input) turns over ROOMS; inputs share words so recall finds them."""
    rng = random.Random(seed)
    return [(rng.choice(ROOMS), f"remember the {rng.choice(['red', 'blue', 'green'])} door, note {n}")
            for n in range(turns)]


def reference_traces(spawn_body, turns) -> list[dict]:
    """What one in-memory body answers to `turns`, in order."""
    reference = spawn_body()
    reference.initialize()
    return [reference.call_turn(text, *room) for room, text in turns]


# -- continuity ----------------------------------------------------------------------------------

def test_a_restarted_body_continues_every_session_as_one_body_would(spawn_body, tmp_path):
    turns = script(seed=16, turns=18)
    expected = reference_traces(spawn_body, turns)
    store = tmp_path / "sessions.db"
    seen = []
    for part in (turns[:6], turns[6:12], turns[12:]):
        client = spawn_body(extra_args=store_args(store))
        client.initialize()
        seen += [client.call_turn(text, *room) for room, text in part]
        client.close()
    for trace in seen:
        check_trace(trace)
    assert seen == expected
    assert max(t["turn"] for t in seen) > 6, "the script continues some session across a restart"
    assert any(t["energy"] < 1.0 for t in seen[6:]), "energy spent before a restart stays spent"
    first_after_restart = {}
    for trace in seen[6:12]:
        first_after_restart.setdefault(json.dumps(trace["session"]), trace)
    continued = [t for t in first_after_restart.values() if t["turn"] > 1]
    assert continued, "some session's turns straddle the first restart"
    assert all("recall: '" in t["steps"][1]["detail"] for t in continued), "recall survives the restart"


def test_two_bodies_on_one_store_interleaving_turns_give_what_one_body_gives(spawn_body, tmp_path):
    turns = script(seed=7, turns=40)
    expected = reference_traces(spawn_body, turns)
    store = tmp_path / "shared.db"
    bodies = [spawn_body(extra_args=store_args(store)) for _ in range(2)]
    for client in bodies:
        client.initialize()
    rng = random.Random(11)
    chosen = [rng.randrange(2) for _ in turns]
    assert len(set(chosen)) == 2
    seen = [bodies[which].call_turn(text, *room) for which, (room, text) in zip(chosen, turns, strict=True)]
    assert seen == expected


def test_bodies_starting_at_once_on_a_new_store_all_serve_it(spawn_body, tmp_path):
    """The first to start makes the file and switches it to WAL; the others wait for it, not fail."""
    for attempt in range(6):
        store = tmp_path / f"new-{attempt}.db"
        bodies = [spawn_body(extra_args=store_args(store)) for _ in range(4)]
        for client in bodies:
            client.initialize()
        assert sorted(client.call_turn("hello", *ROOMS[0])["turn"] for client in bodies) == [1, 2, 3, 4]


# -- durability ----------------------------------------------------------------------------------

def stored_turns(store: Path) -> dict[str, int]:
    """Each stored session's turn counter, read from its record (format 1: turns at bytes 1..4)."""
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return {key.decode(): int.from_bytes(record[1:5], "little")
                for key, record in db.execute("SELECT key, record FROM sessions")}


def key_of(room) -> str:
    return "\x1f".join(room)


@pytest.mark.parametrize("mode", ["normal", "full"])
def test_either_durability_keeps_committed_turns(spawn_body, tmp_path, mode):
    store = tmp_path / f"{mode}.db"
    first = spawn_body(extra_args=store_args(store, "--state-sync", mode))
    first.initialize()
    assert first.call_turn("one", *ROOMS[0])["turn"] == 1
    first.signal(signal.SIGKILL)
    first.close()
    second = spawn_body(extra_args=store_args(store, "--state-sync", mode))
    second.initialize()
    assert second.call_turn("two", *ROOMS[0])["turn"] == 2


# -- unusable stores at start-up -----------------------------------------------------------------

def start_on(body_exe, store: Path, *more: str, as_user: int | None = None) -> subprocess.CompletedProcess:
    def drop_privileges() -> None:
        os.setgroups([])
        os.setgid(as_user)
        os.setuid(as_user)

    if as_user is None:
        return _start(body_exe, SHIPPED_ORGANS, store, more, None)
    # Another user may not reach the checkout (one under a mode-0700 home): it runs copies it can reach.
    reachable = Path(tempfile.mkdtemp(prefix="mafiabot-body-"))
    try:
        reachable.chmod(0o755)
        body, organs = reachable / "mafiabot", reachable / "organs.json"
        shutil.copy2(body_exe, body)
        shutil.copy2(SHIPPED_ORGANS, organs)
        organs.chmod(0o644)
        return _start(body, organs, store, more, drop_privileges)
    finally:
        shutil.rmtree(reachable)


def _start(body: Path, organs: Path, store: Path, more: tuple[str, ...], preexec) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(body), "--organs", str(organs), "--no-soul", *store_args(store), *more],
        input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n', capture_output=True, timeout=STARTUP_BOUND,
        check=False, preexec_fn=preexec)


def assert_refused(run: subprocess.CompletedProcess, store: Path, reason: str) -> None:
    assert run.returncode == 2, run
    assert run.stdout == b"", "nothing is served from an unusable store"
    lines = run.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert str(store) in lines[0] and reason in lines[0], lines[0]


def make_store(body_exe, store: Path) -> None:
    run = start_on(body_exe, store)
    assert run.returncode == 0 and json.loads(run.stdout)["result"] == {}, run


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can enter: where a test runs the body as `nobody` when it runs as root
    (root writes read-only files, so read-only stores are tried by an unprivileged user)."""
    path = Path(tempfile.mkdtemp(prefix="mafiabot-store-"))
    path.chmod(0o755)
    yield path
    for directory in [path, *(p for p in path.rglob("*") if p.is_dir())]:
        directory.chmod(0o755)  # a test made it read-only: rmtree needs to write in it
    shutil.rmtree(path)


def unprivileged() -> int | None:
    return NOBODY if os.geteuid() == 0 else None


def give_away(path: Path) -> None:
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)


@pytest.mark.parametrize(("content", "reason"), [
    (b"\x00\xffnot a database at all" * 300, "not a database"),
    (b"SQLite format 3\x00" + b"\x07" * 2000, "not a database"),
    (b"hello", "not a database"),
])
def test_a_corrupt_store_refuses_to_start(body_exe, tmp_path, content, reason):
    store = tmp_path / "corrupt.db"
    store.write_bytes(content)
    assert_refused(start_on(body_exe, store), store, reason)


def test_a_directory_for_a_store_refuses_to_start(body_exe, tmp_path):
    store = tmp_path / "a-directory"
    store.mkdir()
    assert_refused(start_on(body_exe, store), store, "is a directory")


def test_a_fifo_or_a_device_for_a_store_refuses_to_start(body_exe, tmp_path):
    fifo = tmp_path / "a-fifo"
    os.mkfifo(fifo)
    assert_refused(start_on(body_exe, fifo), fifo, "is not a regular file")
    assert_refused(start_on(body_exe, Path(os.devnull)), Path(os.devnull), "is not a regular file")


def test_a_store_in_a_missing_directory_refuses_to_start(body_exe, tmp_path):
    store = tmp_path / "missing" / "sessions.db"
    assert_refused(start_on(body_exe, store), store, "cannot be opened")


def test_a_read_only_store_refuses_to_start(body_exe, shared_dir):
    store = shared_dir / "read-only.db"
    make_store(body_exe, store)
    give_away(shared_dir)
    store.chmod(0o444)
    assert_refused(start_on(body_exe, store, as_user=unprivileged()), store, "read-only")


@pytest.mark.parametrize("existing", [True, False])
def test_a_store_in_a_read_only_directory_refuses_to_start(body_exe, shared_dir, existing):
    directory = shared_dir / "read-only-dir"
    directory.mkdir()
    store = directory / "sessions.db"
    if existing:
        make_store(body_exe, store)
        give_away(store)
        for leftover in directory.glob("sessions.db-*"):
            leftover.unlink()
    give_away(directory)
    directory.chmod(0o555)
    run = start_on(body_exe, store, as_user=unprivileged())
    assert_refused(run, store, "cannot be written" if existing else "cannot be opened")


def test_a_store_locked_past_the_busy_timeout_refuses_to_start(body_exe, tmp_path):
    store = tmp_path / "locked.db"
    make_store(body_exe, store)
    holder = sqlite3.connect(store, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        run = start_on(body_exe, store, "--state-busy-ms", str(BUSY_MS))
    finally:
        holder.close()
    assert_refused(run, store, "locked")
    make_store(body_exe, store)  # the lock released, the same store serves


def test_a_store_in_another_journal_mode_held_past_the_busy_timeout_refuses_to_start_in_about_that_time(
        body_exe, tmp_path):
    """SQLite's busy handler waits the whole timeout for the lock of such a store: once, not once a pass
    of the wait for its switch to WAL (300 passes of 300 ms, some 90 s, would pass the start-up bound)."""
    store = tmp_path / "rollback-journal.db"
    make_store(body_exe, store)
    with closing(sqlite3.connect(store)) as db:
        assert db.execute("PRAGMA journal_mode = DELETE").fetchone() == ("delete",)
    holder = sqlite3.connect(store, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        run = start_on(body_exe, store, "--state-busy-ms", "300")
    finally:
        holder.close()
    assert_refused(run, store, "locked")
    make_store(body_exe, store)  # the lock released, the store is switched to WAL and serves


def test_a_database_that_is_not_a_store_and_a_store_of_another_schema_refuse_to_start(body_exe, tmp_path):
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE notes (text)")
    assert_refused(start_on(body_exe, foreign), foreign, "not a mafiabot session store")
    newer = tmp_path / "newer.db"
    make_store(body_exe, newer)
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 99")
    assert_refused(start_on(body_exe, newer), newer, "schema version 99")
    older = tmp_path / "older.db"
    make_store(body_exe, older)
    with sqlite3.connect(older) as db:
        db.execute("PRAGMA user_version = 1")
    assert_refused(start_on(body_exe, older), older, "schema version 1")


@pytest.mark.parametrize("args", [("--state", ""), ("--state-sync", "sometimes"), ("--state-busy-ms", "0")])
def test_bad_store_options_are_usage_errors(body_exe, tmp_path, args):
    run = subprocess.run([str(body_exe), "--no-soul", *args], capture_output=True, timeout=STARTUP_BOUND,
                         stdin=subprocess.DEVNULL, check=False)
    assert run.returncode == 2 and run.stdout == b""
    assert args[0].encode() in run.stderr.splitlines()[0]


# -- failures mid-run ----------------------------------------------------------------------------

def assert_store_failed(client, room, text: str, store: Path) -> None:
    with pytest.raises(RpcError) as failed:
        client.call_turn(text, *room)
    assert failed.value.code == STORE_FAILED
    assert str(store) in failed.value.message


def test_a_store_locked_mid_run_fails_that_turn_alone(spawn_body, tmp_path):
    store = tmp_path / "held.db"
    client = spawn_body(extra_args=store_args(store, "--state-busy-ms", str(BUSY_MS)))
    client.initialize()
    assert client.call_turn("one", *ROOMS[0])["turn"] == 1
    holder = sqlite3.connect(store, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        assert_store_failed(client, ROOMS[0], "two", store)
        assert client.ping() == {}
    finally:
        holder.close()
    assert client.call_turn("two again", *ROOMS[0])["turn"] == 2, "the failed turn did not happen"


def test_a_record_that_does_not_decode_fails_its_session_alone(spawn_body, tmp_path):
    store = tmp_path / "damaged.db"
    client = spawn_body(extra_args=store_args(store))
    client.initialize()
    for room in ROOMS[:2]:
        assert client.call_turn("one", *room)["turn"] == 1
    with sqlite3.connect(store) as db:
        damaged = db.execute("UPDATE sessions SET record = x'01ff' WHERE key = ?", (key_of(ROOMS[0]).encode(),))
        assert damaged.rowcount == 1
    assert_store_failed(client, ROOMS[0], "two", store)
    assert client.call_turn("two", *ROOMS[1])["turn"] == 2
    with sqlite3.connect(store) as db:
        db.execute("UPDATE sessions SET record = x'09' WHERE key = ?", (key_of(ROOMS[1]).encode(),))
    with pytest.raises(RpcError) as other_format:
        client.call_turn("three", *ROOMS[1])
    assert other_format.value.code == STORE_FAILED and "another format" in other_format.value.message
    assert client.ping() == {}


def set_record(store: Path, room, record: bytes) -> None:
    with closing(sqlite3.connect(store)) as db, db:
        assert db.execute("UPDATE sessions SET record = ? WHERE key = ?", (record, key_of(room).encode())).rowcount == 1


def test_a_record_whose_recall_is_not_utf8_is_refused_by_name_and_never_reaches_the_wire(spawn_body, tmp_path):
    store = tmp_path / "not-utf8.db"
    client = spawn_body(extra_args=store_args(store))
    client.initialize()
    assert client.call_turn("remember the door", *ROOMS[0])["turn"] == 1
    record = stored_record(store, ROOMS[0])
    assert record is not None and record[16] == 1, "one excerpt kept"
    set_record(store, ROOMS[0], record[:19] + b"\xff" + record[20:])
    with pytest.raises(RpcError) as refused:
        client.call_turn("remember the door again", *ROOMS[0])
    assert refused.value.code == STORE_FAILED and "not UTF-8" in refused.value.message
    assert client.call_turn("one", *ROOMS[1])["turn"] == 1, "the body serves on"


def test_a_session_at_the_last_turn_number_goes_on_at_that_number(spawn_body, tmp_path):
    store = tmp_path / "last-turn.db"
    client = spawn_body(extra_args=store_args(store))
    client.initialize()
    assert client.call_turn("one", *ROOMS[0])["turn"] == 1
    record = stored_record(store, ROOMS[0])
    assert record is not None
    last = 2**31 - 1
    set_record(store, ROOMS[0], record[:1] + (last - 1).to_bytes(4, "little") + record[5:])
    assert [client.call_turn(f"again {n}", *ROOMS[0])["turn"] for n in range(2)] == [last, last]
    assert stored_turns(store) == {key_of(ROOMS[0]): last}


def remove_store(store: Path) -> None:
    """What "removing the file forgets the sessions" means for a WAL store: the file, its journal, its index."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store}{suffix}").unlink()


def test_a_store_removed_under_a_running_body_is_opened_afresh_so_two_bodies_never_split(spawn_body, tmp_path):
    store = tmp_path / "removed.db"
    first = spawn_body(extra_args=store_args(store))
    first.initialize()
    assert [first.call_turn(f"turn {n}", *ROOMS[0])["turn"] for n in range(3)] == [1, 2, 3]
    remove_store(store)
    second = spawn_body(extra_args=store_args(store))
    second.initialize()
    assert second.call_turn("after the removal", *ROOMS[0])["turn"] == 1, "the removal forgot the session"
    assert first.call_turn("still running", *ROOMS[0])["turn"] == 2, "the running body turns the new file"
    assert second.call_turn("and again", *ROOMS[0])["turn"] == 3
    first.close()
    assert stored_turns(store) == {key_of(ROOMS[0]): 3}, "no turn the first body answered was lost with it"


def test_a_store_replaced_beside_its_old_journal_refuses_its_turns_until_the_journal_goes(spawn_body, tmp_path):
    store = tmp_path / "replaced.db"
    running = spawn_body(extra_args=store_args(store))
    running.initialize()
    assert running.call_turn("one", *ROOMS[0])["turn"] == 1
    other = tmp_path / "other.db"
    maker = spawn_body(extra_args=store_args(other))
    maker.initialize()
    assert [maker.call_turn(f"turn {n}", *ROOMS[0])["turn"] for n in range(4)] == [1, 2, 3, 4]
    maker.close()
    os.replace(other, store)
    with pytest.raises(RpcError) as refused:
        running.call_turn("two", *ROOMS[0])
    assert refused.value.code == STORE_FAILED
    assert "removed or replaced" in refused.value.message and "journal" in refused.value.message
    assert running.ping() == {}
    for suffix in ("-wal", "-shm"):
        Path(f"{store}{suffix}").unlink()
    assert running.call_turn("two", *ROOMS[0])["turn"] == 5, "the running body turns the file now at the path"


def test_a_store_that_cannot_grow_fails_the_turns_that_need_room_and_keeps_every_answered_one(body_exe, tmp_path):
    """The file size limit (RLIMIT_FSIZE) stands in for a full disk: commits start failing mid-run."""
    store = tmp_path / "full.db"

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, it does not kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (FULL_DISK_BYTES, FULL_DISK_BYTES))

    lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                         "params": {"protocolVersion": "2025-11-25"}})]
    lines += [json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "turn", "arguments": {
        "input": f"{'x' * 900} {n}", "uid": f"u{n}", "channel": "c", "server": "s"}}}) for n in range(1, 200)]
    lines.append(json.dumps({"jsonrpc": "2.0", "id": "last", "method": "ping"}))
    run = subprocess.run(
        [str(body_exe), "--organs", str(SHIPPED_ORGANS), "--no-soul", *store_args(store)],
        input="\n".join(lines).encode() + b"\n", capture_output=True, timeout=STARTUP_BOUND, check=False,
        preexec_fn=small_disk)
    replies = [json.loads(line) for line in run.stdout.splitlines()]
    answered = [r for r in replies if "structuredContent" in r.get("result", {})]
    failed = [r for r in replies if "error" in r]
    assert run.returncode == 0
    assert answered and failed, "the store filled up partway"
    assert {r["error"]["code"] for r in failed} == {STORE_FAILED}
    assert all(str(store) in r["error"]["message"] for r in failed)
    assert replies[-1] == {"jsonrpc": "2.0", "id": "last", "result": {}}, "the body served on"
    kept = stored_turns(store)
    assert set(kept) == {key_of((r["result"]["structuredContent"]["session"]["uid"], "c", "s")) for r in answered}


# -- the cap, and L1 -----------------------------------------------------------------------------

def room_of(uid: str) -> tuple[str, str, str]:
    return (uid, "c", "s")


def tally_and_count(store: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(store)) as db:
        (tally,) = db.execute("SELECT sessions FROM tally").fetchone()
        (count,) = db.execute("SELECT count(*) FROM sessions").fetchone()
    return tally, count


def forget_by_hand(store: Path, *uids: str) -> None:
    """What an operator does to forget users: their sessions' rows deleted with sqlite3."""
    with closing(sqlite3.connect(store)) as db, db:
        deleted = db.executemany("DELETE FROM sessions WHERE key = ?",
                                 [(key_of(room_of(uid)).encode(),) for uid in uids])
        assert deleted.rowcount == len(uids)


def test_sessions_deleted_by_hand_are_forgotten_and_the_cap_counts_only_the_sessions_left(spawn_body, tmp_path):
    store = tmp_path / "forgetting.db"
    client = spawn_body(max_sessions=3, extra_args=store_args(store))
    client.initialize()
    for uid in "abc":
        assert client.call_turn("one", *room_of(uid))["turn"] == 1
    forget_by_hand(store, "a", "b")
    assert client.call_turn("one", *room_of("d"))["turn"] == 1
    assert set(stored_turns(store)) == {key_of(room_of("c")), key_of(room_of("d"))}, "c is not evicted"
    assert "evict" not in client.stderr_text().lower()
    assert tally_and_count(store) == (2, 2)
    assert client.call_turn("again", *room_of("a"))["turn"] == 1, "a was forgotten"


def test_the_tally_is_the_count_of_sessions_through_turns_evictions_and_hand_deletions(spawn_body, tmp_path):
    """Two bodies and an operator against an LRU model of the store: after every step the tally is the
    number of rows and the rows are the model's, and every turn number is the model's."""
    rng = random.Random(1603)
    cap = 4
    store = tmp_path / "tally.db"
    bodies = [spawn_body(max_sessions=cap, extra_args=store_args(store)) for _ in range(2)]
    for client in bodies:
        client.initialize()
    used: list[str] = []  # the model: least recently used first
    turns: dict[str, int] = {}
    evictions = deletions = 0
    for _step in range(80):
        if used and rng.random() < 0.2:
            gone = rng.choice(used)
            forget_by_hand(store, gone)
            used.remove(gone)
            del turns[gone]
            deletions += 1
        else:
            uid = f"user-{rng.randrange(7)}"
            if uid in used:
                used.remove(uid)
            used.append(uid)
            turns[uid] = turns.get(uid, 0) + 1
            if len(used) > cap:
                del turns[used.pop(0)]
                evictions += 1
            assert rng.choice(bodies).call_turn("hello", *room_of(uid))["turn"] == turns[uid]
        assert tally_and_count(store) == (len(used), len(used))
    assert stored_turns(store) == {key_of(room_of(uid)): number for uid, number in turns.items()}
    assert evictions and deletions, "the script both evicts and deletes by hand"


SCHEMA_2 = [
    "CREATE TABLE sessions (used INTEGER PRIMARY KEY, key BLOB NOT NULL UNIQUE, record BLOB NOT NULL)",
    "CREATE TABLE tally (one INTEGER PRIMARY KEY CHECK (one = 1), sessions INTEGER NOT NULL)",
    "INSERT INTO tally VALUES (1, 0)",
    "PRAGMA user_version = 2",
]
# What the body of the last release made a new store with (session_store.adb at schema 2), after its
# PRAGMA page_size = 1024 and journal_mode = WAL: no triggers, a tally the body kept by hand.


def test_a_store_of_schema_2_is_migrated_in_place_and_its_sessions_continue(spawn_body, tmp_path):
    turns = script(seed=2, turns=12)
    expected = reference_traces(spawn_body, turns)
    made = tmp_path / "records.db"
    first = spawn_body(extra_args=store_args(made))
    first.initialize()
    seen = [first.call_turn(text, *room) for room, text in turns[:6]]
    first.close()
    with closing(sqlite3.connect(made)) as db:
        rows = db.execute("SELECT used, key, record FROM sessions").fetchall()
    old = tmp_path / "schema-2.db"
    with closing(sqlite3.connect(old, isolation_level=None)) as db:
        db.execute("PRAGMA page_size = 1024")
        assert db.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
        db.execute("BEGIN")
        for statement in SCHEMA_2:
            db.execute(statement)
        db.executemany("INSERT INTO sessions VALUES (?, ?, ?)", rows)
        # Drifted high, as a hand deletion left a store of schema 2
        db.execute("UPDATE tally SET sessions = ?", (len(rows) + 5,))
        db.execute("COMMIT")
    second = spawn_body(extra_args=store_args(old))
    second.initialize()
    seen += [second.call_turn(text, *room) for room, text in turns[6:]]
    assert seen == expected
    assert min(t["turn"] for t in seen[6:]) > 1, "every session of the old store continues"
    assert "schema 2 migrated to 3" in second.stderr_text()
    with closing(sqlite3.connect(old)) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (3,)
        assert {name for (name,) in db.execute("SELECT name FROM sqlite_schema WHERE type = 'trigger'")} == {
            "counted_in", "counted_out"}
    tally, count = tally_and_count(old)
    assert tally == count == len({key_of(room) for room, _ in turns})
    with closing(sqlite3.connect(old)) as db, db:
        db.execute("DELETE FROM sessions WHERE key = ?", (key_of(turns[0][0]).encode(),))
    assert tally_and_count(old) == (count - 1, count - 1), "the migrated store's triggers keep its tally"


# -- sampled turns: no lock while the client thinks -----------------------------------------------

def park_sampled_turn(client, uid: str = "u") -> dict:
    """Send a sampled turn of room_of(uid) and read its first sampling request, left unanswered."""
    client.send_raw(turn_request(uid=uid))
    request = client.read_message(awaiting="the turn's first sampling request")
    assert request["method"] == SAMPLING
    return request


def resume_sampled_turn(client, parked: dict):
    """Answer the parked request and every later one: the turn's end (its response)."""
    client.send_raw(answer_all(parked, 1)[0])
    return run_turn(client, request=b"")


def stored_record(store: Path, room) -> bytes | None:
    with closing(sqlite3.connect(store)) as db:
        found = db.execute("SELECT record FROM sessions WHERE key = ?", (key_of(room).encode(),)).fetchone()
    return None if found is None else bytes(found[0])


def test_a_sampled_turn_waiting_on_its_client_lets_other_bodies_start_and_serve_then_commits(spawn_body, tmp_path):
    store = tmp_path / "sampled.db"
    sampled = start_sampling_body(spawn_body, *store_args(store))
    parked = park_sampled_turn(sampled)
    # Started meanwhile with a short busy timeout: a held write lock would end it with exit 2
    other = spawn_body(extra_args=store_args(store, "--state-busy-ms", "300"))
    other.initialize()
    assert other.call_turn("meanwhile", *room_of("other"))["turn"] == 1
    turn = resume_sampled_turn(sampled, parked)
    assert turn.trace["turn"] == 1 and turn.cognition["thinker"] == "sampling"
    assert stored_turns(store) == {key_of(room_of("u")): 1, key_of(room_of("other")): 1}
    assert resume_sampled_turn(sampled, park_sampled_turn(sampled)).trace["turn"] == 2


def test_a_sampled_turn_whose_store_was_removed_while_it_waited_keeps_nothing_and_the_next_turn_starts_afresh(
        spawn_body, tmp_path):
    store = tmp_path / "moved.db"
    sampled = start_sampling_body(spawn_body, *store_args(store))
    assert run_turn(sampled).trace["turn"] == 1
    parked = park_sampled_turn(sampled)
    remove_store(store)
    turn = resume_sampled_turn(sampled, parked)
    assert turn.response is not None and turn.response["error"]["code"] == STORE_FAILED, turn.response
    assert "removed or replaced" in turn.response["error"]["message"]
    assert run_turn(sampled).trace["turn"] == 1, "the next turn opens the path again: the removal forgot it"
    assert stored_turns(store) == {key_of(room_of("u")): 1}


@pytest.mark.parametrize("earlier_turns", [0, 1], ids=["a new session", "a session with a turn"])
def test_a_session_turned_by_another_body_while_a_sampled_turn_waits_fails_that_turn_and_keeps_the_other(
        spawn_body, tmp_path, earlier_turns):
    store = tmp_path / "conflict.db"
    sampled = start_sampling_body(spawn_body, *store_args(store))
    for _ in range(earlier_turns):
        run_turn(sampled)
    parked = park_sampled_turn(sampled)
    other = spawn_body(extra_args=store_args(store))
    other.initialize()
    assert other.call_turn("the same session", *room_of("u"))["turn"] == earlier_turns + 1
    kept = stored_record(store, room_of("u"))
    turn = resume_sampled_turn(sampled, parked)
    assert turn.response is not None and turn.response["error"]["code"] == STORE_FAILED, turn.response
    assert "the session changed in another body during this turn" in turn.response["error"]["message"]
    assert str(store) in turn.response["error"]["message"]
    assert stored_record(store, room_of("u")) == kept, "the store holds the other body's turn alone"
    assert run_turn(sampled).trace["turn"] == earlier_turns + 2, "the sampled body goes on from it"


def test_a_cancelled_sampled_turn_whose_commit_is_refused_still_gets_no_response(spawn_body, tmp_path):
    """MCP: a cancelled request is never answered, not even with the store's -32010."""
    store = tmp_path / "cancelled.db"
    sampled = start_sampling_body(spawn_body, *store_args(store))
    parked = park_sampled_turn(sampled)
    other = spawn_body(extra_args=store_args(store))
    other.initialize()
    assert other.call_turn("the same session", *room_of("u"))["turn"] == 1
    kept = stored_record(store, room_of("u"))
    sampled.send_raw(encode_message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": TURN_ID, "reason": "user pressed stop"}}))
    sampled.send_raw(encode_message({"jsonrpc": "2.0", "id": "after-cancel", "method": "ping"}))
    seen = [sampled.read_message(awaiting="what the body writes after the cancel")]
    while seen[-1].get("id") != "after-cancel" and len(seen) < 4:
        seen.append(sampled.read_message(awaiting="the ping's response after the cancel"))
    assert seen[-1] == {"jsonrpc": "2.0", "id": "after-cancel", "result": {}}
    # The body withdraws its own sampling request; the cancelled turn itself gets nothing
    assert [m for m in seen if m.get("id") == TURN_ID] == [], seen
    assert [m["params"]["requestId"] for m in seen[:-1]] == [parked["id"]]
    assert "the session changed in another body during this turn" in sampled.stderr_text()
    assert stored_record(store, room_of("u")) == kept


def test_a_sampled_turn_takes_its_rank_of_use_at_its_commit_so_the_cap_keeps_it(spawn_body, tmp_path):
    """u is the most recent session when the sampled turn reads it; another body's new session y is,
    when it commits; the sampled turn made u the most recent again, so a third session evicts y."""
    store = tmp_path / "ranked.db"
    sampled = start_sampling_body(spawn_body, *store_args(store), max_sessions=2)
    other = spawn_body(max_sessions=2, extra_args=store_args(store))
    other.initialize()
    run_turn(sampled)
    parked = park_sampled_turn(sampled)
    assert other.call_turn("new", *room_of("y"))["turn"] == 1
    assert resume_sampled_turn(sampled, parked).trace["turn"] == 2
    assert other.call_turn("new", *room_of("z"))["turn"] == 1
    assert stored_turns(store) == {key_of(room_of("u")): 2, key_of(room_of("z")): 1}


def test_a_secret_said_in_one_room_never_reaches_another_across_bodies_and_restarts(spawn_body, tmp_path):
    store = tmp_path / "secrets.db"
    secrets = {room: f"secret-{n}-{'xyzzy' * (n + 1)}" for n, room in enumerate(ROOMS)}
    results: dict[tuple[str, str, str], list[dict]] = {room: [] for room in ROOMS}
    for round_number in range(4):
        bodies = [spawn_body(extra_args=store_args(store)) for _ in range(2)]
        for client in bodies:
            client.initialize()
        for n, room in enumerate(ROOMS):
            text = (f"remember the password {secrets[room]}" if round_number == 0
                    else f"what was the password? remember it (round {round_number})")
            results[room].append(bodies[n % 2].call_tool("turn", dict(zip(
                ("uid", "channel", "server"), room, strict=True), input=text)))
        for client in bodies:
            client.close()
    for room, seen in results.items():
        assert [r["structuredContent"]["turn"] for r in seen] == [1, 2, 3, 4]
        assert any(secrets[room] in r["structuredContent"]["output"] + json.dumps(r["structuredContent"]["steps"])
                   for r in seen[1:]), "the room's own secret is recalled across restarts"
        for result in seen:
            text = json.dumps(result, ensure_ascii=False)
            for other, secret in secrets.items():
                if other != room:
                    assert secret not in text, f"{secret} of {other} reached {room}"


def test_a_body_without_state_writes_no_store(spawn_body, tmp_path):
    client = spawn_body()
    client.initialize()
    client.call_turn("one", *ROOMS[0])
    client.close()
    assert not list(tmp_path.rglob("*.db*"))



# -- the laws, through the store -----------------------------------------------------------------

LAWS_THROUGH_THE_STORE = [
    test_laws.test_a_secret_said_in_one_room_never_appears_in_another_room,
    test_laws.test_turn_counters_and_energy_are_per_session,
    test_laws.test_keys_that_concatenate_alike_are_different_sessions,
    test_laws.test_passes_are_monotone_in_energy_a_prefix_and_full_at_full_energy,
    test_laws.test_a_hammered_session_drops_below_a_fresh_one_while_its_neighbour_stays_full,
    test_laws.test_a_sessions_traces_do_not_change_when_other_sessions_talk_in_between,
    test_laws.test_coherence_never_feeds_the_next_turn,
]


@pytest.mark.parametrize("law", LAWS_THROUGH_THE_STORE, ids=lambda law: law.__name__.removeprefix("test_"))
def test_the_laws_hold_with_every_body_on_a_store(law, spawn_body, tmp_path):
    """test_laws' own L1, L3 and L4 tests, each body they start keeping its sessions in a store of its own."""
    stores = iter(tmp_path / f"law-{n}.db" for n in range(100))

    def stored_spawn(**overrides: object):
        return spawn_body(extra_args=store_args(next(stores)), **overrides)

    fixtures = {"spawn_body": stored_spawn}
    if "ready_body" in law.__code__.co_varnames[:law.__code__.co_argcount]:
        fixtures = {"ready_body": stored_spawn()}
        fixtures["ready_body"].initialize()
    law(**fixtures)
    assert list(tmp_path.glob("law-*.db")), "the law ran on stores"


def test_help_names_the_store_options(body_exe):
    run = subprocess.run([str(body_exe), "--help"], capture_output=True, timeout=STARTUP_BOUND,
                         stdin=subprocess.DEVNULL, check=True)
    for flag in (b"--state FILE", b"--state-busy-ms", b"--state-sync"):
        assert flag in run.stdout


@pytest.mark.slow
def test_the_body_on_a_store_makes_no_invalid_access_and_loses_no_memory_under_memcheck(tmp_path):
    """test_memcheck's traffic (turns of eleven sessions past a cap of 7, hostile lines) through a store."""
    valgrind = shutil.which("valgrind")
    if valgrind is None or not test_memcheck.DYNAMIC.exists():
        pytest.skip("needs valgrind and mafiabot-dynamic (make build-dynamic)")
    store = tmp_path / "memcheck.db"
    done = subprocess.run(
        [valgrind, "--error-exitcode=9", "--leak-check=full", "--errors-for-leak-kinds=definite",
         str(test_memcheck.DYNAMIC), "--no-soul", "--max-sessions", "7", *store_args(store)],
        input=test_memcheck.traffic(), capture_output=True, timeout=test_memcheck.MEMCHECK_BOUND_SECONDS,
        cwd=tmp_path)
    report = done.stderr.decode(errors="replace")
    assert done.returncode == 0, report[-3000:]
    assert "ERROR SUMMARY: 0 errors" in report
    assert done.stdout.count(b"\n") > 120
    assert stored_turns(store), "the turns went through the store"
