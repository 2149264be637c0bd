"""The body's PostgreSQL server itself crashed mid-turn, again and again, under bodies that are never restarted.

Three dynamic bodies (`mafiabot-dynamic --state postgresql://...`, each its own process and Hermes home)
share one database of a cluster of its own with fsync on and synchronous_commit on (the server's default).
Each is sent a burst of pipelined turns, of sessions the bodies share and of its own; while they work
through them the whole server is SIGKILLed at once (the postmaster and every backend: a machine's crash),
and after a random outage started again on the same data directory, where it recovers from its WAL. CRASHES
is the number of crashes. The bodies keep running throughout: none is restarted.

What each reply may be, and what the audit holds:
- Every request is answered, within a bound, while the server is down too: a success, or -32010 naming
  the server. Nothing hangs.
- A success is never undone: after the crashes the store holds, for every session, at least the turn
  number of the last success a client saw, and no turn number of a session was answered twice.
- A refusal says whether it kept anything. One that met the lost connection before its COMMIT kept nothing
  (the server rolls an uncommitted transaction back, in its recovery too); one whose COMMIT was on its way
  when the connection dropped may or may not have been committed, and says so. So a session's successes
  skip a turn number only where such a COMMIT-in-flight refusal was committed after all: the numbers a
  session's successes skip are at most its COMMIT-in-flight refusals, and the turns the store holds are
  at least its last success's number and at most its successes and those refusals together.
- After the server is back, every body's next turn reconnects and succeeds (no restart of the body), and
  every session continues from what the store kept.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

from harness.client import BodyClient
from pg_support import Cluster, throwaway_cluster
from test_state_store import ROOMS, STORE_FAILED, key_of
from test_state_store_pg import DYNAMIC, PgStore

pytestmark = pytest.mark.scale

BODIES = 3
CRASHES = 6
# Turns in flight per body when the crash comes: enough that it lands before, inside and after turns.
MOST_PIPELINED = 40
# What a refusal that met the lost connection says, before its COMMIT and while its COMMIT was on its way.
NOTHING_KEPT = "nothing of this turn was kept"
MAYBE_KEPT = "may or may not have kept this turn"
# A reply comes within this, while the server is down too: a turn that meets no server fails at once.
REPLY_BOUND_S = 20.0


@pytest.fixture(scope="module")
def crashing_cluster() -> Iterator[Cluster]:
    """A cluster of this module's own, fsync on: what a crash leaves must be what a real server keeps."""
    with throwaway_cluster(fsync=True) as cluster:
        yield cluster


def own_room(body: int, n: int) -> tuple[str, str, str]:
    return (f"body{body}-user{n}", "#own", "corleone")


class Ledger:
    """What the clients saw, per session: the turn numbers of its successes, and its refusals by kind."""

    def __init__(self) -> None:
        self.successes: dict[str, list[int]] = defaultdict(list)
        self.maybe_kept: Counter[str] = Counter()
        self.refusals = 0

    def saw(self, key: str, reply: dict[str, Any], store: PgStore) -> bool:
        """Take one reply to a turn of session `key`; whether it succeeded."""
        if "result" in reply:
            self.successes[key].append(reply["result"]["structuredContent"]["turn"])
            return True
        error = reply["error"]
        assert error["code"] == STORE_FAILED and store.named in error["message"], error
        self.refusals += 1
        if MAYBE_KEPT in error["message"]:
            self.maybe_kept[key] += 1
        return False


def turn_request(client: BodyClient, room: tuple[str, str, str], text: str) -> int:
    uid, channel, server = room
    return client.send_request("tools/call", {"name": "turn", "arguments": {
        "input": text, "uid": uid, "channel": channel, "server": server}})


def test_bodies_outlive_server_crashes_mid_turn_and_no_reply_a_client_saw_is_undone(
        crashing_cluster, body_exe, spawn_body, tmp_path) -> None:
    dynamic = body_exe.parent / DYNAMIC
    if not dynamic.is_file():
        pytest.skip(f"needs {DYNAMIC} (make build-dynamic): only the dynamic build links libpq")
    seed = random.randrange(1 << 30)
    chooser = random.Random(seed)
    store = PgStore(dynamic, crashing_cluster.new_database())
    bodies = [spawn_body(body=dynamic, extra_args=("--state", store.state)) for _ in range(BODIES)]
    for client in bodies:
        client.initialize()
    pids = [client.pid for client in bodies]
    rooms = {n: [*ROOMS, own_room(n, 1), own_room(n, 2)] for n in range(BODIES)}
    seen = Ledger()
    killed = 0

    for crash in range(CRASHES):
        waiting: dict[BodyClient, list[tuple[int, str]]] = {}
        for n, client in enumerate(bodies):
            rooms_now = [chooser.choice(rooms[n]) for _ in range(chooser.randrange(1, MOST_PIPELINED))]
            waiting[client] = [(turn_request(client, room, f"crash {crash} turn {k}"), key_of(room))
                               for k, room in enumerate(rooms_now)]
        for client, replies in waiting.items():  # some answered before the crash, in the order they were sent
            for _ in range(chooser.randrange(len(replies) // 2 + 1)):
                request_id, key = replies.pop(0)
                seen.saw(key, client.wait_response(request_id, REPLY_BOUND_S), store)
        killed += crashing_cluster.crash()
        for client, replies in waiting.items():  # the rest while the server is down: answered, never hung
            for request_id, key in replies:
                seen.saw(key, client.wait_response(request_id, REPLY_BOUND_S), store)
        crashing_cluster.restart()
        for n, client in enumerate(bodies):  # the next turn after the server is back connects again and runs
            room = chooser.choice(rooms[n])
            assert seen.saw(key_of(room), client.wait_response(turn_request(client, room, "back"), REPLY_BOUND_S),
                            store), f"body {n} did not reconnect (seed {seed}): {client.stderr_text()[-400:]}"

    kept = store.turns()
    for key, numbers in seen.successes.items():
        assert len(numbers) == len(set(numbers)), f"a turn number of {key!r} was answered twice (seed {seed})"
        skipped = set(range(1, max(numbers) + 1)) - set(numbers)
        assert len(skipped) <= seen.maybe_kept[key], (
            f"{key!r}: turns {sorted(skipped)} skipped, but only {seen.maybe_kept[key]} refusals may have been "
            f"kept (seed {seed}): a refusal that said {NOTHING_KEPT!r} was kept")
        # Every committed turn is one more: the successes, and those of the maybe-kept refusals the server kept.
        assert max(numbers) <= kept[key] <= len(numbers) + seen.maybe_kept[key], (
            f"{key!r}: {len(numbers)} successes up to turn {max(numbers)} and {seen.maybe_kept[key]} maybe-kept "
            f"refusals were seen, the store holds {kept[key]} (seed {seed})")
    assert [client.pid for client in bodies] == pids and all(client.poll() is None for client in bodies)
    for n, client in enumerate(bodies):
        for room in rooms[n]:
            key = key_of(room)
            assert client.call_turn("after the crashes", *room)["turn"] == kept.get(key, 0) + 1, key
            kept[key] = kept.get(key, 0) + 1
        assert "connected again" in client.stderr_text()
    successes = sum(len(numbers) for numbers in seen.successes.values())
    print(f"seed {seed}: {CRASHES} server crashes ({killed} server processes SIGKILLed), {successes} turns "
          f"answered, {seen.refusals} refused ({sum(seen.maybe_kept.values())} with the COMMIT in flight)")
    assert seen.refusals, f"no crash landed mid-turn (seed {seed})"
