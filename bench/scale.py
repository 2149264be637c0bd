"""Benchmark (not a test): the PostgreSQL queue with 1, 4 and 16 drainers on the fake Hermes.

    .venv/bin/python -m bench.scale [--items 64] [--work-s 0.0] [--drainers 1,4,16] [--files 1,4] [--quick]

A throwaway cluster (the tests' `pg_support`, fsync on) and, per drainer count, a fresh database. Each
drainer is a process of its own with a Hermes home of its own (another machine, as far as the queue can
tell) running real delegations (`delegate`: the prompt, the journal's started record and settlement in the
database, the supervisor, the fake `hermes` of the delegation tests doing `--work-s` seconds of work).

Two figures per count, both wall clock:
- throughput: `--items` items enqueued at once, the drainers started together; items / (last settled - start).
- enqueue -> claimed: with the drainers idle and polling (`POLL_S` between empty drains, this script's
  loop: `drain` itself never waits), items enqueued one at a time, `PACE_ITEMS_PER_DRAINER_S` per
  drainer per second (below what they can take); the time from the enqueue's commit to the runner's
  start in the drainer that claimed it, median and p95.
The file queue (`--files`: its drainer counts) is measured the same way beside it, on one machine, for what
the database costs. Writes bench/results/scale.{md,json}. On a shared machine these are indicative (say the load, as it does).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import stat
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))  # the cluster and the fake Hermes are the tests' own

from harness.autobot import AutobotSettings, delegate, parse_intent  # noqa: E402
from harness.autobot.pg_queue import PgQueue  # noqa: E402
from harness.autobot.queue import Queue, QueueStore  # noqa: E402
from pg_support import Cluster  # noqa: E402

FAKE = REPO / "tests" / "python" / "delegation" / "fake_hermes.py"
RESULTS = REPO / "bench" / "results"
# An idle drainer's pause between empty drains: the floor under the enqueue -> claimed figure.
POLL_S = 0.1
# Items per drainer per second in the latency run: well under what one drainer takes, so nothing queues up.
PACE_ITEMS_PER_DRAINER_S = 1.0
# Bounds: a drainer that has not finished by then is wedged, not slow.
RUN_BOUND_S = 900.0


def world(root: Path, work_s: float) -> None:
    """The fake Hermes and a project; the variables every drainer inherits (its HERMES_HOME is its own)."""
    executable = root / "bin" / "hermes"
    executable.parent.mkdir(parents=True)
    executable.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    executable.chmod(executable.stat().st_mode | stat.S_IXUSR)
    (root / "scenario.json").write_text(json.dumps([{"work_s": work_s, "stdout": "done"}]))
    (root / "project").mkdir()
    os.environ.update({"MAFIABOT_HERMES": str(executable), "FAKE_HERMES_SCENARIO": str(root / "scenario.json"),
                       "FAKE_HERMES_LOG": str(root / "calls.jsonl"), "HOME": str(root)})
    for name in [n for n in os.environ if n.startswith(("HERMES_AUTOBOT", "MAFIABOT_DATABASE"))]:
        del os.environ[name]


def machine_home(root: Path, name: str) -> Path:
    home = root / "machines" / name
    (home / "profiles" / "tester").mkdir(parents=True)
    (home / "profiles" / "tester" / "config.yaml").write_text("agent: {api_max_retries: 0}\n")
    (home / "memories").mkdir()
    return home


def intent(root: Path, n: int) -> Any:
    return parse_intent({"intent": f"Summarise item {n}.", "project_root": str(root / "project"),
                         "payload": {"hermes_profile": "tester"}})


def queue_at(where: str) -> QueueStore:
    """The queue at `where`: a database URL, else a folder."""
    return PgQueue(where) if where.startswith("postgresql://") else Queue(Path(where))


def drainer(url: str, home: str, until: float, idle_exit: bool, out: str) -> None:
    """One drainer: drain until the queue is empty (`idle_exit`), `until`, or the stop file beside `out`
    appears; each run's start time by item."""
    os.environ["HERMES_HOME"] = home
    queue = queue_at(url)
    database = url if url.startswith("postgresql://") else None
    starts: dict[str, float] = {}

    def run(document: dict[str, Any], item_id: str) -> Any:
        starts[item_id] = time.time()
        return delegate(document, settings=AutobotSettings(database=database, queue_item=item_id))

    stop = Path(out).with_name("stop")
    while time.time() < until and not stop.exists():
        report = queue.drain(1000, run)
        if not report.ran:
            if idle_exit:
                break
            time.sleep(POLL_S)
    Path(out).write_text(json.dumps(starts))


def start_drainers(root: Path, url: str, count: int, until: float, idle_exit: bool,
                   tag: str) -> list[tuple[multiprocessing.process.BaseProcess, Path]]:
    context = multiprocessing.get_context("fork")
    started = []
    for n in range(count):
        out = root / f"{tag}-{n}.json"
        home = machine_home(root, f"{tag}-{n}")
        process = context.Process(target=drainer, args=(url, str(home), until, idle_exit, str(out)))
        process.start()
        started.append((process, out))
    return started


def collect(started: list[tuple[multiprocessing.process.BaseProcess, Path]]) -> dict[str, float]:
    starts: dict[str, float] = {}
    for process, out in started:
        process.join(RUN_BOUND_S)
        if process.exitcode != 0:
            raise SystemExit(f"a drainer ended with {process.exitcode}")
        starts.update(json.loads(out.read_text()))
    return starts


def fresh_queue(root: Path, cluster: Cluster, store: str) -> str:
    """Where a fresh queue of `store` is: a new database, or a new folder."""
    if store == "postgresql":
        return cluster.new_database()
    folder = Path(tempfile.mkdtemp(prefix="queue-", dir=root))
    return str(folder)


def throughput(root: Path, cluster: Cluster, store: str, drainers: int, items: int) -> dict[str, Any]:
    url = fresh_queue(root, cluster, store)
    queue = queue_at(url)
    for n in range(items):
        queue.enqueue(intent(root, n))
    began = time.time()
    starts = collect(start_drainers(root, url, drainers, began + RUN_BOUND_S, True, f"t{store}{drainers}"))
    elapsed = time.time() - began
    done = len(queue.items_in("done"))
    return {"items": items, "done": done, "ran": len(starts), "seconds": round(elapsed, 2),
            "items_per_s": round(done / elapsed, 2)}


def latency(root: Path, cluster: Cluster, store: str, drainers: int, items: int) -> dict[str, Any]:
    url = fresh_queue(root, cluster, store)
    queue = queue_at(url)
    pause = 1.0 / (PACE_ITEMS_PER_DRAINER_S * drainers)
    until = time.time() + items * pause + 30.0
    started = start_drainers(root, url, drainers, until, False, f"l{store}{drainers}")
    time.sleep(2.0)  # let every drainer connect and go idle before the first enqueue
    enqueued: dict[str, float] = {}
    for n in range(items):
        item = queue.enqueue(intent(root, 10_000 + n))
        enqueued[item["item_id"]] = time.time()
        time.sleep(pause)
    while len(queue.items_in("done")) + len(queue.items_in("dead_letter")) < items and time.time() < until:
        time.sleep(0.2)
    (root / "stop").touch()
    starts = collect(started)
    (root / "stop").unlink()
    waits = sorted((starts[i] - t) * 1000 for i, t in enqueued.items() if i in starts)
    return {"items": items, "claimed": len(waits), "median_ms": round(statistics.median(waits), 1),
            "p95_ms": round(waits[max(0, int(len(waits) * 0.95) - 1)], 1), "max_ms": round(waits[-1], 1)}


def render(figures: dict[str, Any]) -> str:
    setting = (f"{figures['machine']}; fake Hermes work {figures['work_s']} s per run; cluster with fsync on; "
               f"load average {figures['load_before']} before, {figures['load_after']} after. Wall clock on a shared "
               f"machine: indicative, not for decisions.")
    lines = [f"# The PostgreSQL queue on the fake Hermes ({figures['when']})", "", setting, "",
             "| store | drainers | items | items/s | enqueue -> claimed median | p95 | max |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in figures["rows"]:
        t, lat = row["throughput"], row["latency"]
        lines.append(f"| {row['store']} | {row['drainers']} | {t['done']}/{t['items']} | {t['items_per_s']} | "
                     f"{lat['median_ms']} ms | {lat['p95_ms']} ms | {lat['max_ms']} ms |")
    lines += ["", (f"Idle drainers poll every {POLL_S * 1000:g} ms (this script's loop); the latency items arrive at "
                   f"{PACE_ITEMS_PER_DRAINER_S:g} per drainer per second.")]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=64, help="items of the throughput run (default 64)")
    parser.add_argument("--latency-items", type=int, default=24, help="items of the latency run (default 24)")
    parser.add_argument("--work-s", type=float, default=0.0, help="the fake Hermes's work per run (default 0)")
    parser.add_argument("--drainers", default="1,4,16", help="drainer counts, comma-separated (default 1,4,16)")
    parser.add_argument("--files", default="1,4", help="drainer counts of the file queue beside it (default 1,4; "
                                                       "'' for none)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 8 items, 4 latency items")
    args = parser.parse_args(argv)
    if args.quick:
        args.items, args.latency_items = 8, 4
    root = Path(tempfile.mkdtemp(prefix="mafiabot-bench-scale-"))
    cluster = Cluster(fsync=True).start()
    try:
        world(root, args.work_s)
        load_before = os.getloadavg()[0]
        rows = []
        runs = [("postgresql", int(c)) for c in args.drainers.split(",") if c]
        runs += [("files", int(c)) for c in args.files.split(",") if c]
        for store, count in runs:
            rows.append({"store": store, "drainers": count,
                         "throughput": throughput(root, cluster, store, count, max(args.items, count)),
                         "latency": latency(root, cluster, store, count, args.latency_items)})
            print(json.dumps(rows[-1]), flush=True)
        figures = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "work_s": args.work_s,
                   "machine": f"{os.cpu_count()} CPUs", "load_before": round(load_before, 1),
                   "load_after": round(os.getloadavg()[0], 1), "rows": rows}
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "scale.json").write_text(json.dumps(figures, indent=2) + "\n")
        (RESULTS / "scale.md").write_text(render(figures))
    print(render(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
