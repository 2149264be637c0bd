"""`python -m bench`: every measurement of the benchmark issue, in one run, one client.

Invariants:
- One run measures every server in the same process, machine and minute; ratios are
  computed only between figures of that run.
- Sections run in a fixed order, the noise-sensitive round trips first and the 100-body
  load last. Each is bounded in count and time (see the named counts in `Plan`).
- A server that is unavailable is reported with its reason; its figures are null, and the
  targets that need it are "not measured", never "met".
- Results go to bench/results/latest.{json,md,png}; nothing else in the tree is written.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench import (
    chart,
    harness_overhead,
    latency,
    load,
    memory,
    recall,
    report,
    sampling,
    servers,
    startup,
    stats,
    store,
    workloads,
    worst_case,
)

RESULTS = workloads.ROOT / "bench" / "results"


@dataclass(frozen=True)
class Plan:
    """How many of everything; `quick` shrinks every count for a smoke run."""

    round_trips: int = 10_000
    pipelined: int = 10_000
    pings: int = 10_000
    cross_cpu_turns: int = 3_000
    startups: int = 200
    session_checkpoints: tuple[int, ...] = (1_000, 10_000, 100_000)
    soak_turns: int = 1_000_000
    harness_turns: int = 2_000
    input_sizes: tuple[int, ...] = (16, 1_024, 65_536, 1_048_576)
    input_turns: int = 30
    worst_case_bytes: int = worst_case.FULL_SIZE
    worst_case_repeats: int = 5
    load_bodies: int = 100
    load_seconds: float = 60.0
    sampled_turns: int = 400
    recall_turns: int = recall.TURNS
    postgres_round_trips: int = store.POSTGRES_ROUND_TRIPS

    @classmethod
    def quick(cls) -> Plan:
        return cls(round_trips=500, pipelined=500, pings=1_000, cross_cpu_turns=300, startups=20,
                   session_checkpoints=(1_000, 5_000), soak_turns=40_000, harness_turns=200, input_sizes=(16, 65_536),
                   input_turns=5, worst_case_bytes=262_144, worst_case_repeats=1, load_bodies=10, load_seconds=3.0,
                   sampled_turns=40, recall_turns=30, postgres_round_trips=300)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Setup:
    """What every section needs: the fixture, the servers and the body's variants."""

    work: Path
    fixture: Path
    body: servers.Server
    peers: list
    floor_exe: Path
    canned_reply: Path
    variants: dict  # link -> Path | Unavailable
    unchecked: object  # Path | Unavailable


def prepare(work: Path) -> Setup:
    fixture = workloads.write_bench_fixture(work)
    body = servers.body_server(fixture)
    reply, trace = servers.capture_canned(body, work)
    floor_exe = servers.build_floor(work)
    log("building the body's variants out of tree (other link, contracts off)")
    variants = {link: servers.build_variant(link) for link in ("dynamic", "static")}
    peers = [servers.floor_server(floor_exe, reply), servers.sdk_server(trace), servers.passthrough_server()]
    return Setup(work, fixture, body, peers, floor_exe, reply, variants,
                 servers.build_variant("static", contracts="off"))


def measure(plan: Plan, work: Path) -> dict:
    setup = prepare(work)
    results: dict = {"meta": report.machine(), "plan": asdict(plan)}
    results["meta"]["body"] = f"{servers.body_path()} ({servers.linkage(servers.body_path())} link)"
    results |= _comparisons(plan, setup)
    results |= _memory(plan, setup)
    results |= _extras(plan, setup, results["servers"]["body"]["round_trip"])
    results["targets"] = report.targets(results)
    return results


def _comparisons(plan: Plan, setup: Setup) -> dict:
    log("round trips and pipelined throughput, servers interleaved")
    available = [s for s in [setup.body, *setup.peers] if not isinstance(s, servers.Unavailable)]
    key = workloads.PINNED[8][0]
    units = [latency.Unit(s.name, s, key) for s in available]
    units.insert(1, harness_overhead.harness_unit(setup.body, key))  # beside the body over plain pipes
    figures = latency.interleaved(units, plan.round_trips, plan.pipelined)
    out = {"servers": {u.name: _serve_figures(*figures[u.name]) for u in units}}
    out["servers"] |= {s.name: {"unavailable": s.reason} for s in setup.peers
                       if isinstance(s, servers.Unavailable)}
    log("body CPU by energy level, variants interleaved")
    out["cpu_by_passes"] = _cpu_by_passes(plan, setup)
    out["ping"] = stats.summary_us(latency.ping_round_trips(setup.body, plan.pings))
    out["cross_cpu"] = _cross_cpu(plan, setup, key)
    log("start-up")
    out["startup"] = _startups(plan, setup)
    return out


def _memory(plan: Plan, setup: Setup) -> dict:
    log("memory: live sessions")
    out: dict = {"memory": {}}
    for link, exe in setup.variants.items():
        if isinstance(exe, Path):
            server = servers.body_server(setup.fixture, exe, f"body ({link})")
            out["memory"][link] = [asdict(s) for s in memory.live_sessions(server, plan.session_checkpoints)]
    log(f"memory: soak of {plan.soak_turns} turns")
    soak = memory.soak(setup.body, plan.soak_turns)
    fill_rss, growth = memory.growth_after_fill(soak, 2 * memory.SOAK_CAP)
    out["soak"] = {"cap": memory.SOAK_CAP, "keys": 2 * memory.SOAK_CAP, "turns": plan.soak_turns,
                   "rss_after_fill_kib": fill_rss, "growth_after_fill_kib": growth,
                   "samples": [asdict(s) for s in soak]}
    return out


def _extras(plan: Plan, setup: Setup, pipe_round_trip: dict) -> dict:
    log("harness overhead")
    typed = harness_overhead.call_tool_round_trips(servers.body_path(), setup.fixture, plan.harness_turns)
    out = {"harness": {"call_tool": stats.summary_us(typed), "pipe": pipe_round_trip}}
    log("input size")
    by_size = latency.input_size_round_trips(setup.body, plan.input_sizes, plan.input_turns)
    out["input_size"] = {str(size): stats.summary_us(samples) for size, samples in by_size.items()}
    log(f"worst-case turns of {plan.worst_case_bytes:,} bytes")
    out["worst_case"] = {"bytes": plan.worst_case_bytes,
                         "rows": worst_case.rows(servers.body_path(), plan.worst_case_bytes,
                                                 plan.worst_case_repeats)}
    log("issue 25: the body's round trip with the PostgreSQL store, beside the SQLite store and the C floor")
    out["postgres_store"] = store.postgres_rows(plan.postgres_round_trips, setup.variants["dynamic"])
    log(f"load: {plan.load_bodies} bodies for {plan.load_seconds:g} s")
    load_body = servers.Server("body", (str(servers.body_path()), "--organs", str(workloads.DEFAULT_FIXTURE),
                                        "--no-soul"))
    out["load"] = load.summary(load.run(load_body, plan.load_bodies, plan.load_seconds))
    log("issue 24: the body's own CPU per sampled pass, and a stored turn's cost with relevance recall")
    out["sampled_pass"] = sampling.own_time(sampling.Plan(cpu_turns=plan.sampled_turns), setup.fixture)
    out["recall"] = recall.rows(plan.recall_turns) if shutil.which("valgrind") else None
    return out


def _cross_cpu(plan: Plan, setup: Setup, key: tuple[str, str, str]) -> dict:
    log("placement: client and server on different CPUs")
    floor = next(s for s in setup.peers if s.name == "C floor")
    crossed = latency.cross_cpu([latency.Unit(s.name, s, key) for s in (setup.body, floor)], plan.cross_cpu_turns)
    return {name: stats.summary_us(t.samples_s) | {"cpu_per_turn_us": round(t.cpu_per_request_s * 1e6, 2)}
            for name, t in (crossed or {}).items()}


def _cpu_by_passes(plan: Plan, setup: Setup) -> dict:
    bodies = [(setup.body, "")]
    if isinstance(setup.unchecked, Path):
        bodies.append((servers.body_server(setup.fixture, setup.unchecked, "unchecked"), " (contracts off)"))
    units = [latency.Unit(f"{passes}{label}", server, session)
             for server, label in bodies for passes, (session, _) in workloads.PINNED.items()]
    out = {}
    for name, (trips, _) in latency.interleaved(units, plan.round_trips).items():
        out[name] = {"cpu_per_turn_us": round(trips.cpu_per_request_s * 1e6, 2),
                     "round_trip_median_us": round(stats.median(trips.samples_s) * 1e6, 1),
                     "reply_bytes": trips.reply_bytes}
    return out


def _serve_figures(trips: latency.RoundTrips, piped: latency.Pipelined | None) -> dict:
    return {"round_trip": stats.summary_us(trips.samples_s),
            "cpu_per_turn_us": round(trips.cpu_per_request_s * 1e6, 2),
            "reply_bytes": trips.reply_bytes,
            "pipelined_turns_per_s": None if piped is None else round(piped.per_second),
            "pipelined_cpu_per_turn_us": None if piped is None else round(piped.cpu_per_request_s * 1e6, 2)}


def _startups(plan: Plan, setup: Setup) -> dict:
    """Start-up samples of each body link and of the C floor, taken in alternation."""
    contenders, out = {}, {}
    for link, exe in setup.variants.items():
        if isinstance(exe, servers.Unavailable):
            out[f"body ({link})"] = {"unavailable": exe.reason}
        else:
            contenders[f"body ({link})"] = startup.booting_body(
                servers.body_server(setup.fixture, exe, f"body ({link})"), setup.work / f"home-{link}")
    floors = (("static", servers.build_floor(setup.work, static=True)), ("dynamic", setup.floor_exe))
    for link, exe in floors:
        contenders[f"C floor ({link})"] = servers.floor_server(exe, setup.canned_reply)
    samples = startup.interleaved_startups(contenders, plan.startups)
    return out | {name: stats.summary_ms(values) for name, values in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run of a minute")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where latest.{json,md,png} go")
    options = parser.parse_args(argv)
    plan = Plan.quick() if options.quick else Plan()
    if not servers.body_path().is_file():
        parser.error(f"no body at {servers.body_path()}: run `make build` first")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mafiabot-bench-") as work:
        results = measure(plan, Path(work))
    results["meta"]["wall_seconds"] = round(time.perf_counter() - started, 1)
    results["meta"]["load_average_at_end"] = round(os.getloadavg()[0], 2)
    table = report.render(results)
    print(table)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "latest.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (options.out / "latest.md").write_text(table + "\n", encoding="utf-8")
    chart.draw(results, options.out / "latest.png")
    log(f"wrote {options.out}/latest.json, latest.md, latest.png")
    return 0
