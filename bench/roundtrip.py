"""`python -m bench.roundtrip`: the body's round trip against the C floor's alone, in seconds rather than minutes.

Invariants:
- Each run is the full bench's first comparison (`latency.interleaved`): the body and the floor (a canned
  reply of the body's own bytes) up together, alternating request by request, pinned to one CPU, the
  8-pass pinned session; a ratio is only taken between two medians of one run.
- `--baseline BODY` runs a second body (another build, e.g. the commit before a change) in the same
  alternation, so a change is compared with what it changed under the same load: the ratio of each body
  to the floor, never of two runs.
- `--store` adds each body with a store (`--state`, a file of its own) and the store floor (the C floor
  committing the same one-record SQLite transaction before each reply, as `bench.store` builds it):
  a stored turn is given against the store floor (issue 23's target: at most 1.6x).
- Runs are reported one by one, never pooled or filtered: the figures are what the machine gave, with
  its load average at the end of each run beside them (the VM is shared; figures move between runs).
- Writes bench/results/roundtrip.md and prints the same text.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench import latency, servers, store, workloads

RESULTS = workloads.ROOT / "bench" / "results"
TURNS = 6_000
RUNS = 2
FLOOR, STORE_FLOOR = "C floor", "store floor"


def runs(turns: int, count: int, baseline: Path | None, with_store: bool) -> tuple[list[str], list[dict]]:
    """The bodies' names (the body first) and, for each run, every unit's figures by name."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="mafiabot-roundtrip-") as name:
        work = Path(name)
        fixture = workloads.write_bench_fixture(work)
        bodies = {"body": servers.body_path(), **({"baseline": baseline} if baseline else {})}
        body = servers.body_server(fixture, bodies["body"])
        reply, _ = servers.capture_canned(body, work)
        key = workloads.PINNED[8][0]
        floor = servers.floor_server(servers.build_floor(work), reply)
        units = [latency.Unit("body", body, key), latency.Unit(FLOOR, floor, key)]
        if baseline:
            units.append(latency.Unit("baseline", servers.body_server(fixture, baseline, name="baseline"), key))
        if with_store:
            sizing = work / "sizing"
            sizing.mkdir()
            record = store.record_bytes(servers.body_server(fixture, bodies["body"], extra=("--state", str(sizing / "s.db"))),
                                        sizing / "s.db", sizing)
            floor_exe = servers.build_floor(work, sqlite=True)
            units.append(latency.Unit(STORE_FLOOR, servers.store_floor_server(floor_exe, reply, work / "floor.db", record), key))
            units += [latency.Unit(f"{who} --state", servers.body_server(fixture, path, name=f"{who} --state",
                                                                          extra=("--state", str(work / f"{who}.db"))), key)
                      for who, path in bodies.items()]
        for _ in range(count):
            figures = latency.interleaved(units, turns)
            rows.append({"load": round(os.getloadavg()[0], 2),
                         **{unit: {"median_us": round(statistics.median(trips.samples_s) * 1e6, 1),
                                   "cpu_us": round(trips.cpu_per_request_s * 1e6, 2)}
                            for unit, (trips, _) in figures.items()}})
    return list(bodies), rows


def render(bodies: list[str], rows: list[dict], turns: int) -> str:
    stored = STORE_FLOOR in rows[0]
    lines = [f"# Round trip: body ÷ C floor ({servers.body_path()})", "",
             (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {turns:,} turns each per run, "
              "alternating, one CPU, 8 passes (`python -m bench.roundtrip`)."), "",
             "| run | server | median µs | CPU per turn µs | ÷ C floor | ÷ store floor | load average |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for number, row in enumerate(rows, start=1):
        floor, store_floor = row[FLOOR]["median_us"], row.get(STORE_FLOOR, {}).get("median_us")
        names = [FLOOR, *bodies, *([STORE_FLOOR, *(f"{who} --state" for who in bodies)] if stored else [])]
        for name in names:
            figures = row[name]
            to_store = (f"{figures['median_us'] / store_floor:.2f}×"
                        if store_floor and (name == STORE_FLOOR or name.endswith("--state")) else "")
            lines.append(f"| {number} | {name} | {figures['median_us']} | {figures['cpu_us']} "
                         f"| {figures['median_us'] / floor:.2f}× | {to_store} | {row['load']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.roundtrip", description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--baseline", type=Path, help="a second body, run in the same alternation")
    parser.add_argument("--store", action="store_true", help="each body with a store too, and the store floor")
    options = parser.parse_args(argv)
    if options.baseline is not None and not options.baseline.is_file():
        parser.error(f"--baseline {options.baseline}: no such file")
    bodies, rows = runs(options.turns, options.runs, options.baseline, options.store)
    text = render(bodies, rows, options.turns)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "roundtrip.md").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
