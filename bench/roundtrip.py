"""`python -m bench.roundtrip`: the body's round trip against the C floor's alone, in seconds rather than minutes.

Invariants:
- Each run is the full bench's first comparison (`latency.interleaved`): the body and the floor (a canned
  reply of the body's own bytes) up together, alternating request by request, pinned to one CPU, the
  8-pass pinned session; a ratio is only taken between the two medians of one run.
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

from bench import latency, servers, workloads

RESULTS = workloads.ROOT / "bench" / "results"
TURNS = 6_000
RUNS = 2


def runs(turns: int, count: int) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="mafiabot-roundtrip-") as name:
        work = Path(name)
        body = servers.body_server(workloads.write_bench_fixture(work))
        reply, _ = servers.capture_canned(body, work)
        floor = servers.floor_server(servers.build_floor(work), reply)
        key = workloads.PINNED[8][0]
        units = [latency.Unit("body", body, key), latency.Unit("floor", floor, key)]
        for _ in range(count):
            figures = latency.interleaved(units, turns)
            body_trips, floor_trips = figures["body"][0], figures["floor"][0]
            body_us = statistics.median(body_trips.samples_s) * 1e6
            floor_us = statistics.median(floor_trips.samples_s) * 1e6
            rows.append({"body_us": round(body_us, 1), "floor_us": round(floor_us, 1),
                         "ratio": round(body_us / floor_us, 2),
                         "body_cpu_us": round(body_trips.cpu_per_request_s * 1e6, 2),
                         "load": round(os.getloadavg()[0], 2)})
    return rows


def render(rows: list[dict], turns: int) -> str:
    lines = [f"# Round trip: body ÷ C floor ({servers.body_path()})", "",
             (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {turns:,} turns each per run, "
              "alternating, one CPU, 8 passes (`python -m bench.roundtrip`)."), "",
             "| run | body median µs | floor median µs | body ÷ floor | body CPU per turn µs | load average |",
             "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {n} | {r['body_us']} | {r['floor_us']} | {r['ratio']:.2f}× | {r['body_cpu_us']} | {r['load']} |"
              for n, r in enumerate(rows, start=1)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.roundtrip", description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--runs", type=int, default=RUNS)
    options = parser.parse_args(argv)
    text = render(runs(options.turns, options.runs), options.turns)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "roundtrip.md").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
