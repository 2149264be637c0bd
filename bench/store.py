"""`python -m bench.store`: what `--state FILE` costs, beside the C floor, in one run;
`python -m bench.store --postgres`: what `--state postgresql://...` costs, beside it.

Rows (targets from issues 16 and 23):
1. Round trips of 8-pass turns, sequential, client and servers pinned to one CPU, alternating blocks
   (bench.latency.interleaved, its 10 rounds, as bench.roundtrip: in 100 rounds of 100 round trips
   each block's first, cold turns lifted the body's median by ~5 %): the body in memory,
   the body with a store (synchronous NORMAL, the default) and the C floor; targets: the store at
   most 3x the floor's median, and at most 1.6x the store floor's (below). What the store adds to
   the body in memory, in µs (median and CPU), is given too: the ratio moves with the floor (13-21
   µs on this shared machine within one hour).
   Beside them the store floor: the C floor committing one SQLite transaction a reply (BEGIN
   IMMEDIATE, one record of the body's size rewritten, COMMIT; bench/floor/floor.c -DFLOOR_SQLITE),
   what a turn on a store costs a server that does nothing else; what it adds to the C floor is
   SQLite's own least for a committed turn here, to hold beside what the store adds to the body.
   Then a short run with `--state-sync full` (an fsync per turn), which depends on the disk under
   the store.
2. Start-up, spawn -> `initialize` answered: no store, an empty store, a store of 100,000 sessions
   (target: at most 5 ms), samples taken in turn.
3. The store's size at 100,000 sessions (each with one turn of recall), file plus WAL.

With --postgres, instead (`postgres_rows`, also `make bench`'s row, issue 25 item 5): round trips of
8-pass turns, alternating blocks as in row 1, of the C floor, the body with `--state FILE`, the dynamic
body (the build with libpq) with `--state FILE` and with `--state-sync full`, and the dynamic body on a
throwaway PostgreSQL cluster (the tests' `pg_support`: Debian's server, a Unix socket, fsync on), once
with `synchronous_commit` off (a commit returns before its WAL is flushed: what SQLite's default
`synchronous=NORMAL` promises) and once as the server comes (each commit waits for its flush: what
`--state-sync full` promises). Then the round trips to the server a turn takes, counted with strace
(the body's `sendto` calls, `SERVER_TRIPS_TURNS` turns less a start with none). When no cluster can be
started (or the dynamic body cannot be built), the rows are one line saying why.

Invariants:
- Every figure is of this run, on this machine; the ratios are between figures of this run.
- Stores live in a temporary directory removed at the end (the cluster is stopped and removed); results
  go to bench/results/store.{md,json} (store-postgres.{md,json} with --postgres), nothing else in the
  tree is written.
- A store is filled by the body itself (pipelined turns, one new session each), so what is measured
  is what a body writes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from bench import latency, servers, startup, stats, workloads

sys.path.insert(0, str(workloads.ROOT / "tests" / "python"))  # the throwaway cluster is the tests' own
from pg_support import Cluster, ClusterUnavailable

RESULTS = workloads.ROOT / "bench" / "results"
SESSIONS = 100_000
TARGET_RATIO = 3.0
# Issue 23 item 8: a stored turn costs at most this many times the store floor's (the C floor
# committing the same one-record transaction), a ratio that, unlike the one to the C floor, does
# not move with SQLite's own cost on the shared machine.
TARGET_STORE_FLOOR_RATIO = 1.6
TARGET_STARTUP_MS = 5.0
FILL_DEADLINE = 600.0
FILL_BATCH = 10_000
# Turns of the strace count of round trips to the server: a handful gives the exact figure (each turn
# sends the same statements), more only lengthens the run.
SERVER_TRIPS_TURNS = 20
# Round trips of each --postgres row (make bench's plan names its own): a PostgreSQL turn takes
# 0.2-1 ms here, so 3,000 keep the run near a minute.
POSTGRES_ROUND_TRIPS = 3_000
STRACE_DEADLINE = 120.0
# The names of the --postgres rows; ratios are taken to these two.
DYNAMIC_FILE = "body-dynamic --state FILE"
DYNAMIC_PG_ASYNC = "body-dynamic --state postgresql, synchronous_commit off"


def fill(body: servers.Server, count: int) -> float:
    """`count` new sessions written through `body`, in pipelined batches; returns seconds taken."""
    start = time.perf_counter()
    with body.start(FILL_DEADLINE) as client:
        client.exchange(workloads.initialize_line())
        for first in range(0, count, FILL_BATCH):
            lines = workloads.fresh_session_lines(min(FILL_BATCH, count - first), f"filled-{first}", first + 1)
            # latency's own pipelined burst: a writer thread while this one reads, every id checked
            latency._pipelined_block(client, lines)
    return time.perf_counter() - start


def store_bytes(store: Path) -> int:
    return sum(path.stat().st_size for path in store.parent.glob(store.name + "*"))


def record_bytes(stored_body: servers.Server, store: Path, work: Path) -> int:
    """The size of the pinned session's record once its recall is as full as in the bench's turns."""
    servers.capture_canned(stored_body, work)
    with closing(sqlite3.connect(store)) as db:
        (size,) = db.execute("SELECT max (length (record)) FROM sessions").fetchone()
    return int(size)


def run(round_trips: int, full_sync_trips: int, startups: int, sessions: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="mafiabot-bench-store-") as scratch:
        work = Path(scratch)
        fixture = workloads.write_bench_fixture(work)
        memory_body = servers.body_server(fixture)
        reply, _trace = servers.capture_canned(memory_body, work)
        floor = servers.floor_server(servers.build_floor(work), reply)
        stored = servers.body_server(fixture, name="body --state", extra=("--state", str(work / "trips.db")))
        sizing = work / "sizing"
        sizing.mkdir()
        record_size = record_bytes(servers.body_server(fixture, extra=("--state", str(sizing / "s.db"))),
                                   sizing / "s.db", sizing)
        store_floor = servers.store_floor_server(servers.build_floor(work, sqlite=True), reply,
                                                 work / "floor.db", record_size)
        key = workloads.PINNED[8][0]
        units = [latency.Unit("C floor", floor, key), latency.Unit(store_floor.name, store_floor, key),
                 latency.Unit("body", memory_body, key), latency.Unit("body --state", stored, key)]
        print(f"round trips: {round_trips} per server", file=sys.stderr)
        trips = latency.interleaved(units, round_trips)
        full = servers.body_server(fixture, name="body --state-sync full",
                                   extra=("--state", str(work / "full.db"), "--state-sync", "full"))
        full_trips = latency.interleaved([latency.Unit(full.name, full, key)], full_sync_trips)

        big = work / "big.db"
        print(f"filling a store with {sessions} sessions", file=sys.stderr)
        fill_s = fill(servers.body_server(fixture, extra=("--state", str(big), "--max-sessions", str(sessions))),
                      sessions)
        size = store_bytes(big)
        empty = work / "empty.db"
        contenders = {
            "no store": memory_body,
            "empty store": servers.body_server(fixture, extra=("--state", str(empty))),
            f"{sessions:,} sessions": servers.body_server(fixture, extra=("--state", str(big))),
        }
        print(f"start-ups: {startups} each", file=sys.stderr)
        boots = startup.interleaved_startups(contenders, startups)
        size_after_boots = store_bytes(big)

    floor_median = stats.median(trips["C floor"][0].samples_s)
    store_floor_median = stats.median(trips[store_floor.name][0].samples_s)
    rows = {name: {**stats.summary_us(t.samples_s), "cpu_per_turn_us": round(t.cpu_per_request_s * 1e6, 1),
                   "ratio_to_floor": round(stats.median(t.samples_s) / floor_median, 2),
                   "ratio_to_store_floor": round(stats.median(t.samples_s) / store_floor_median, 2)}
            for name, (t, _) in trips.items()}
    # What the store itself costs, in µs: unlike the ratio, it does not move with the floor
    def added_by(stored: str, bare: str) -> dict:
        return {"median_us": round(rows[stored]["median_us"] - rows[bare]["median_us"], 1),
                "cpu_per_turn_us": round(rows[stored]["cpu_per_turn_us"] - rows[bare]["cpu_per_turn_us"], 1)}
    added = added_by("body --state", "body")
    sqlite_least = {**added_by(store_floor.name, "C floor"), "record_bytes": record_size}
    full_row = {**stats.summary_us(full_trips[full.name][0].samples_s),
                "ratio_to_floor": round(stats.median(full_trips[full.name][0].samples_s) / floor_median, 2)}
    boot_rows = {name: stats.summary_ms(samples) for name, samples in boots.items()}
    return {
        "round_trips": rows, "store_added": added, "sqlite_least": sqlite_least, "full_sync": full_row,
        "startup": boot_rows,
        "store": {"sessions": sessions, "bytes": size, "bytes_per_session": round(size / sessions, 1),
                  "fill_seconds": round(fill_s, 2), "bytes_after_startups": size_after_boots},
        "targets": {
            "round trip with the store <= 3x the C floor": rows["body --state"]["ratio_to_floor"] <= TARGET_RATIO,
            "round trip with the store <= 1.6x the store floor":
                rows["body --state"]["ratio_to_store_floor"] <= TARGET_STORE_FLOOR_RATIO,
            f"start-up with {sessions:,} stored sessions <= 5 ms":
                boot_rows[f"{sessions:,} sessions"]["median_ms"] <= TARGET_STARTUP_MS,
        },
    }


def markdown(result: dict) -> str:
    out = ["# --state FILE: the session store's cost (bench/store.py)", "",
           "| 8-pass turn, sequential | median µs | p99 µs | server CPU/turn µs | ÷ C floor | ÷ store floor |",
           "| --- | --- | --- | --- | --- | --- |"]
    for name, row in result["round_trips"].items():
        out.append(f"| {name} | {row['median_us']} | {row['p99_us']} | {row['cpu_per_turn_us']} "
                   f"| {row['ratio_to_floor']}x | {row['ratio_to_store_floor']}x |")
    added = result["store_added"]
    full = result["full_sync"]
    out += [(f"| body --state-sync full ({full['samples']} turns, an fsync each) | {full['median_us']} "
             f"| {full['p99_us']} | | {full['ratio_to_floor']}x | |"), "",
            (f"The store adds {added['median_us']} µs to the body's median turn and {added['cpu_per_turn_us']} µs "
             "of its CPU a turn; one SQLite transaction alone (a record of "
             f"{result['sqlite_least']['record_bytes']} bytes) adds {result['sqlite_least']['median_us']} µs and "
             f"{result['sqlite_least']['cpu_per_turn_us']} µs of CPU to the C floor's."), "",
            "| start-up, spawn → initialize answered | median ms | p99 ms |", "| --- | --- | --- |"]
    for name, row in result["startup"].items():
        out.append(f"| {name} | {row['median_ms']} | {row['p99_ms']} |")
    store = result["store"]
    out += ["", (f"Store at {store['sessions']:,} sessions (one turn of recall each): {store['bytes']:,} bytes "
                 f"({store['bytes_per_session']} a session, file and WAL), filled by one body in "
                 f"{store['fill_seconds']} s."), "", "Targets:"]
    out += [f"- {name}: **{'met' if met else 'NOT met'}**" for name, met in result["targets"].items()]
    return "\n".join(out) + "\n"


def server_round_trips(dynamic: Path, fixture: Path, url: str, turns: int) -> float | None:
    """Round trips to the server a stub turn takes: the body's `sendto` calls (libpq's, on its socket: the
    replies go to stdout by `write`) over `turns` turns of one session, less a start with no turn, on a
    database whose schema exists. None without strace."""
    if shutil.which("strace") is None:
        return None
    key = workloads.PINNED[8][0]

    def sends(count: int, trace: Path) -> int:
        lines = [workloads.initialize_line(), *workloads.turn_lines(count, key)]
        subprocess.run(["strace", "-f", "-e", "trace=sendto", "-o", str(trace), str(dynamic), "--organs",
                        str(fixture), "--no-soul", "--state", url], input=b"".join(lines), capture_output=True,
                       check=True, timeout=STRACE_DEADLINE)
        return trace.read_text(encoding="utf-8", errors="replace").count("sendto(")

    with tempfile.TemporaryDirectory(prefix="mafiabot-bench-strace-") as scratch:
        sends(1, Path(scratch) / "made")  # the schema and the session, before either count
        return (sends(turns, Path(scratch) / "turns") - sends(0, Path(scratch) / "none")) / turns


def postgres_rows(round_trips: int, dynamic: Path | servers.Unavailable) -> dict:
    """The body's round trip with the PostgreSQL store against the SQLite store and the C floor, one run.

    {"unavailable": why} when the dynamic body or a cluster is missing; else the rows (median, p99, the
    body's CPU a turn, ratios to the C floor and to the dynamic body on SQLite), the round trips to the
    server a turn takes, and how the cluster ran."""
    if isinstance(dynamic, servers.Unavailable):
        return {"unavailable": f"{dynamic.name}: {dynamic.reason}"}
    cluster = Cluster(fsync=True)
    try:
        cluster.start()
    except ClusterUnavailable as exc:
        return {"unavailable": str(exc)}
    try:
        with tempfile.TemporaryDirectory(prefix="mafiabot-bench-store-pg-") as scratch:
            work = Path(scratch)
            fixture = workloads.write_bench_fixture(work)
            reply, _trace = servers.capture_canned(servers.body_server(fixture), work)
            async_url = cluster.new_database() + "&options=-csynchronous_commit%3Doff"
            flushed_url = cluster.new_database()
            contenders = [
                servers.floor_server(servers.build_floor(work), reply),
                servers.body_server(fixture, name="body --state FILE", extra=("--state", str(work / "static.db"))),
                servers.body_server(fixture, dynamic, DYNAMIC_FILE, ("--state", str(work / "dynamic.db"))),
                servers.body_server(fixture, dynamic, f"{DYNAMIC_FILE} --state-sync full",
                                    ("--state", str(work / "full.db"), "--state-sync", "full")),
                servers.body_server(fixture, dynamic, DYNAMIC_PG_ASYNC, ("--state", async_url)),
                servers.body_server(fixture, dynamic, "body-dynamic --state postgresql, as the server comes "
                                    "(a commit waits for its WAL flush)", ("--state", flushed_url)),
            ]
            key = workloads.PINNED[8][0]
            print(f"round trips, PostgreSQL store beside SQLite: {round_trips} per server", file=sys.stderr)
            trips = latency.interleaved([latency.Unit(s.name, s, key) for s in contenders], round_trips)
            per_turn = server_round_trips(dynamic, fixture, async_url, SERVER_TRIPS_TURNS)
    finally:
        cluster.stop()
    medians = {name: stats.median(t.samples_s) for name, (t, _) in trips.items()}
    rows = {name: {**stats.summary_us(t.samples_s), "cpu_per_turn_us": round(t.cpu_per_request_s * 1e6, 1),
                   "ratio_to_floor": round(medians[name] / medians["C floor"], 2),
                   "ratio_to_sqlite": round(medians[name] / medians[DYNAMIC_FILE], 2)}
            for name, (t, _) in trips.items()}
    return {"rows": rows, "server_round_trips_per_turn": per_turn,
            "cluster": "Debian's PostgreSQL on a Unix socket, fsync on; its backends not pinned to the body's CPU"}


def postgres_markdown(result: dict) -> list[str]:
    """`postgres_rows` as a table and a line (for store-postgres.md and `make bench`'s report)."""
    if "unavailable" in result:
        return [f"The PostgreSQL store's row: not measured ({result['unavailable']})."]
    out = [("| 8-pass turn, sequential, session store | median µs | p99 µs | body CPU/turn µs | ÷ C floor "
            f"| ÷ {DYNAMIC_FILE} |"), "| --- | --- | --- | --- | --- | --- |"]
    for name, row in result["rows"].items():
        out.append(f"| {name} | {row['median_us']} | {row['p99_us']} | {row['cpu_per_turn_us']} "
                   f"| {row['ratio_to_floor']}x | {row['ratio_to_sqlite']}x |")
    trips = result["server_round_trips_per_turn"]
    counted = ("not counted (no strace)" if trips is None
               else f"{trips:g} a turn (strace: the body's sendto calls, {SERVER_TRIPS_TURNS} turns less none)")
    return [*out, "", f"{result['cluster']}. Round trips to the server: {counted}."]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.store", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run, not for quoting")
    parser.add_argument("--postgres", action="store_true",
                        help="the PostgreSQL store beside the SQLite store and the C floor, instead")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.postgres:
        print("building the dynamic body out of tree", file=sys.stderr)
        pg = postgres_rows(500 if args.quick else POSTGRES_ROUND_TRIPS, servers.build_variant("dynamic"))
        (RESULTS / "store-postgres.json").write_text(json.dumps(pg, indent=1) + "\n", encoding="utf-8")
        text = "\n".join(["# --state postgresql://: the PostgreSQL store's cost (bench/store.py --postgres)", "",
                          *postgres_markdown(pg)]) + "\n"
        (RESULTS / "store-postgres.md").write_text(text, encoding="utf-8")
        print(text)
        return 0
    counts = (1_000, 100, 20, 10_000) if args.quick else (10_000, 500, 200, SESSIONS)
    result = run(*counts)
    (RESULTS / "store.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    text = markdown(result)
    (RESULTS / "store.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
