"""`python -m bench.sampling`: what --cognition sampling costs the body, and what a turn costs the client.

Two tables, one run, written to bench/results/sampling.{md,json,svg}:
1. The body's own time per sampled pass, with a client that answers every `sampling/createMessage`
   at once: the body's CPU per turn (`/proc/<pid>/task/*/schedstat`) divided by its model calls
   (passes run + 1), beside the same turns through the stub cognition: the figure held to the
   target, at most 0.2 ms per pass. Beside it, the wall time per call left once the client's own
   handling of each request is taken out (the body works on its own CPU while the client handles a
   request, so this can fall below the body's CPU per call: it is what the client waits, not what the
   body spends).
2. A turn's wall time against the passes that ran, with a client whose model takes a scripted
   latency per request (0, 2 and 10 ms): the line a Hermes operator reads to size a tool timeout.
3. The 2026-07-28 input-required form: the body's CPU per round (each round replays the turn from
   its start with the answers so far), a client answering every round at once.
4. The body's instructions per sampled call (callgrind, repeatable on a shared machine): the answers to
   every request are written into stdin ahead of time (the body's request ids are whole numbers from 1
   and a pinned session's turn asks a known number of them), so no client runs at all; per call is
   (run of N turns - run of the handshake alone) / (N x calls a turn). Tables 1 and 4 have rows with
   `--intent model` (one call more a turn: the intent question, answered with an intent's name).

Invariants:
- Sessions are the bench fixture's pinned ones (workloads.PINNED), so a turn runs 1, 4 or 8 passes
  whatever came before it.
- Every conversation is bounded by PipeClient's watchdog; the scripted latency is the only sleep.
- Client and body stay unpinned: the sampled turn is a conversation, and the client's wake-ups are
  part of what a real client costs.
- A turn's model calls are passes + 1, and + 1 more with `--intent model` (`calls_of`): the body's own
  count is `Energy_Gate.Planned_Calls`, and every run here asserts the body asked exactly that many.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench import servers, stats, workloads
from bench.pipe_client import PipeClient

RESULTS = workloads.ROOT / "bench" / "results"
SAMPLING = b'"method":"sampling/createMessage"'
PASS_LEVELS = (1, 4, 8)
LATENCIES_MS = (0, 2, 10)
TARGET_MS_PER_PASS = 0.2
INTENTS = ("rules", "model")
INTENT_SYSTEM = b'"systemPrompt":"You are the intent organ'
# callgrind runs ~50x slower than native; a few hundred sampled calls take seconds.
CALLGRIND_TURNS = 60
CALLGRIND_TIMEOUT = 600.0


@dataclass(frozen=True)
class Plan:
    cpu_turns: int = 400
    latency_turns: int = 10

    @classmethod
    def quick(cls) -> Plan:
        return cls(cpu_turns=40, latency_turns=2)


@dataclass
class Turns:
    wall_s: list[float]
    client_s: list[float]
    # per turn: the client's own time between reading each request and writing its answer, summed
    calls: int
    cpu_s: float


THOUGHT = "a thought of about the length a model would give: " + "w " * 40
INTENT_PICK = "ask"


def calls_of(passes: int, intent: str) -> int:
    """A turn's model calls: one a pass, the synthesis, and the intent question with --intent model."""
    return passes + 1 + (intent == "model")


def result_line(request_id: int, text: str) -> bytes:
    return workloads.line({"jsonrpc": "2.0", "id": request_id, "result": {
        "role": "assistant", "model": "bench-model", "stopReason": "endTurn",
        "content": {"type": "text", "text": text}}})


def answer(request: bytes, latency_s: float) -> bytes:
    request_id = json.loads(request)["id"]
    if latency_s:
        time.sleep(latency_s)
    return result_line(request_id, INTENT_PICK if INTENT_SYSTEM in request else THOUGHT)


def initialize_sampling(client: PipeClient) -> None:
    client.exchange(workloads.line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
        "clientInfo": {"name": "mafiabot-bench", "version": "1"}}}))
    client.send(workloads.initialized_line())


def run_turns(client: PipeClient, key: tuple[str, str, str], count: int, latency_s: float, first_id: int) -> Turns:
    wall, handling, calls = [], [], 0
    cpu_before = client.cpu_seconds()
    for n in range(count):
        line = workloads.turn_line(first_id + n, key)
        spent = 0.0
        started = time.perf_counter()
        client.send(line)
        while True:
            message = client.recv()
            if SAMPLING in message:
                taken = time.perf_counter()
                client.send(answer(message, latency_s))
                spent += time.perf_counter() - taken
                calls += 1
            else:
                break
        wall.append(time.perf_counter() - started)
        handling.append(spent)
        if b'"isError":false' not in message:
            raise RuntimeError(f"turn {first_id + n} failed: {message[:300]!r}")
    return Turns(wall, handling, calls, client.cpu_seconds() - cpu_before)


def body_argv(fixture: Path, cognition: str, intent: str = "rules") -> list[str]:
    return [str(servers.body_path()), "--organs", str(fixture), "--no-soul", "--cognition", cognition,
            "--intent", intent]


def own_time(plan: Plan, fixture: Path) -> list[dict]:
    rows = []
    for intent in INTENTS:
        for passes in PASS_LEVELS:
            key = workloads.PINNED[passes][0]
            calls = calls_of(passes, intent)
            with PipeClient(body_argv(fixture, "sampling", intent)) as sampled, \
                    PipeClient(body_argv(fixture, "stub")) as stub:
                initialize_sampling(sampled)
                initialize_sampling(stub)
                run_turns(sampled, key, 5, 0.0, 1)  # warm: templates written, pages touched
                run_turns(stub, key, 5, 0.0, 1)
                asked = run_turns(sampled, key, plan.cpu_turns, 0.0, 100)
                plain = run_turns(stub, key, plan.cpu_turns, 0.0, 100)
            calls_per_turn = asked.calls / plan.cpu_turns
            assert calls_per_turn == calls, (passes, intent, calls_per_turn)
            cpu_turn = asked.cpu_s / plan.cpu_turns
            beyond = [w - c for w, c in zip(asked.wall_s, asked.client_s, strict=True)]
            rows.append({
                "intent": intent, "passes": passes, "calls_per_turn": calls,
                "body_cpu_per_turn_us": round(cpu_turn * 1e6, 1),
                "body_cpu_per_call_us": round(cpu_turn / calls * 1e6, 1),
                "stub_cpu_per_turn_us": round(plain.cpu_s / plan.cpu_turns * 1e6, 1),
                "wall_less_client_per_call_us": round(stats.median(beyond) / calls * 1e6, 1),
                "turn_wall_median_us": round(stats.median(asked.wall_s) * 1e6, 1),
            })
    return rows


def scripted_stdin(directory: Path, passes: int, intent: str, turns: int) -> Path:
    """The handshake, then `turns` calls each followed by the answers to every request it will send, in order."""
    key = workloads.PINNED[passes][0]
    calls = calls_of(passes, intent)
    lines = [workloads.line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                 "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
                 "clientInfo": {"name": "mafiabot-bench", "version": "1"}}}),
             workloads.initialized_line()]
    request_id = 0
    for turn in range(turns):
        lines.append(workloads.turn_line(100 + turn, key))
        for rank in range(1, calls + 1):
            request_id += 1
            is_intent = intent == "model" and rank == passes + 1
            lines.append(result_line(request_id, INTENT_PICK if is_intent else THOUGHT))
    path = directory / f"sampled-{passes}-{intent}-{turns}.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def callgrind_total(argv: list[str], stdin: Path, out: Path) -> tuple[int, bytes]:
    """Total instructions of one run, and what the body wrote."""
    with open(stdin, "rb") as source:
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv], stdin=source,
                             capture_output=True, timeout=CALLGRIND_TIMEOUT, check=False)
    found = re.search(rb"Collected : (\d+)", run.stderr)
    if found is None:
        raise RuntimeError(f"callgrind failed: {run.stderr[-500:]!r}")
    return int(found.group(1)), run.stdout


def instructions_per_call(fixture: Path, work: Path, turns: int) -> list[dict]:
    rows = []
    for intent in INTENTS:
        for passes in PASS_LEVELS:
            calls = calls_of(passes, intent)
            argv = body_argv(fixture, "sampling", intent)
            base, _ = callgrind_total(argv, scripted_stdin(work, passes, intent, 0), work / "cg-base.out")
            total, written = callgrind_total(argv, scripted_stdin(work, passes, intent, turns), work / "cg.out")
            asked = written.count(SAMPLING)
            answered = written.count(b'"isError":false')
            assert asked == turns * calls and answered == turns, (passes, intent, asked, answered)
            per_turn = (total - base) / turns
            rows.append({"intent": intent, "passes": passes, "calls_per_turn": calls,
                         "instructions_per_turn": round(per_turn),
                         "instructions_per_call": round(per_turn / calls)})
    return rows


def modern_line(request_id: int, key: tuple[str, str, str], extra: dict) -> bytes:
    uid, channel, server = key
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
    params = {"name": "turn", "_meta": meta,
              "arguments": {"input": workloads.TURN_INPUT, "uid": uid, "channel": channel, "server": server}}
    return workloads.line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params | extra})


def modern_rounds(plan: Plan, fixture: Path) -> list[dict]:
    rows = []
    for passes in PASS_LEVELS:
        key = workloads.PINNED[passes][0]
        with PipeClient(body_argv(fixture, "sampling")) as body:
            rounds, next_id, turns = 0, 1, max(plan.cpu_turns // 10, 2)
            cpu_before = body.cpu_seconds()
            for _ in range(turns):
                extra: dict = {}
                while True:
                    result = json.loads(body.exchange(modern_line(next_id, key, extra)))["result"]
                    next_id += 1
                    if result["resultType"] == "complete":
                        break
                    rounds += 1
                    [(call, _)] = result["inputRequests"].items()
                    extra = {"requestState": result["requestState"], "inputResponses": {call: {
                        "role": "assistant", "model": "bench-model",
                        "content": {"type": "text", "text": "a thought of about a model's length: " + "w " * 40}}}}
            cpu = body.cpu_seconds() - cpu_before
        assert rounds == turns * (passes + 1), (passes, rounds)
        rows.append({"passes": passes, "rounds_per_turn": passes + 1, "calls_per_turn": passes + 2,
                     "body_cpu_per_turn_us": round(cpu / turns * 1e6, 1),
                     "body_cpu_per_round_us": round(cpu / (turns * (passes + 2)) * 1e6, 1)})
    return rows


def wall_by_latency(plan: Plan, fixture: Path) -> list[dict]:
    rows = []
    with PipeClient(body_argv(fixture, "sampling")) as sampled:
        initialize_sampling(sampled)
        next_id = 1
        for latency_ms in LATENCIES_MS:
            for passes in PASS_LEVELS:
                turns = run_turns(sampled, workloads.PINNED[passes][0], plan.latency_turns, latency_ms / 1e3, next_id)
                next_id += plan.latency_turns
                rows.append({"latency_ms": latency_ms, "passes": passes, "calls": passes + 1,
                             "turn_wall_median_ms": round(stats.median(turns.wall_s) * 1e3, 2),
                             "model_time_ms": (passes + 1) * latency_ms})
    return rows


def render(results: dict) -> str:
    out = ["# --cognition sampling: the body's own time per pass, and a turn's wall time", "",
           (f"{results['meta']['when']}, {results['meta']['cpus']} CPUs, load {results['meta']['load']}; "
           "`python -m bench.sampling` (bench/sampling.py)."), "",
           "## The body's own time per sampled pass (client answers at once)", "",
           ("| --intent | passes | model calls | body CPU / turn (µs) | body CPU / call (µs) | stub CPU / turn (µs) "
           "| wall − client, per call (µs) | turn wall, median (µs) |"),
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    out += [f"| {row['intent']} | {row['passes']} | {row['calls_per_turn']} | {row['body_cpu_per_turn_us']} | "
            f"{row['body_cpu_per_call_us']} | {row['stub_cpu_per_turn_us']} | "
            f"{row['wall_less_client_per_call_us']} | {row['turn_wall_median_us']} |" for row in results["own_time"]]
    worst = max(row["body_cpu_per_call_us"] for row in results["own_time"])
    verdict = "met" if worst <= TARGET_MS_PER_PASS * 1000 else "NOT met"
    out += ["", (f"Target: the body's own time per sampled pass ≤ {TARGET_MS_PER_PASS} ms: **{verdict}** "
            f"(worst {worst} µs of CPU per call)."), "",
            "## A turn's wall time against passes, scripted model latency per request", "",
            "| model latency (ms) | passes | calls | turn wall, median (ms) | model time alone (ms) |",
            "| ---: | ---: | ---: | ---: | ---: |"]
    for row in results["wall_by_latency"]:
        out.append(f"| {row['latency_ms']} | {row['passes']} | {row['calls']} | {row['turn_wall_median_ms']} | "
                   f"{row['model_time_ms']} |")
    out += ["", ("A turn costs (passes run + 1) model calls in sequence: at Hermes's default 30 s sampling timeout "
            "and a host's ~60 s tool call, the body's defaults (20 s a request, 50 s a turn) answer in time."), "",
            "![turn wall time against passes](sampling.svg)", "",
            "## The 2026-07-28 input-required form: the body's CPU per round (client answers at once)", "",
            "| passes | rounds asking | tools/call per turn | body CPU / turn (µs) | body CPU / tools/call (µs) |",
            "| ---: | ---: | ---: | ---: | ---: |"]
    out += [f"| {row['passes']} | {row['rounds_per_turn']} | {row['calls_per_turn']} | {row['body_cpu_per_turn_us']} | "
            f"{row['body_cpu_per_round_us']} |" for row in results["modern_rounds"]]
    out += ["", ("Each tools/call runs the whole turn again with the answers so far (P + 2 runs for P passes): "
            "the body's share of a round stays tens of microseconds, far below a model's time.")]
    if results.get("instructions"):
        out += ["", "## The body's instructions per sampled call (callgrind, answers scripted in stdin)", "",
                "| --intent | passes | model calls | instructions / turn | instructions / call |",
                "| --- | ---: | ---: | ---: | ---: |"]
        out += [f"| {row['intent']} | {row['passes']} | {row['calls_per_turn']} | {row['instructions_per_turn']:,} | "
                f"{row['instructions_per_call']:,} |" for row in results["instructions"]]
        out += ["", ("No client runs: every answer is in stdin ahead of time, so these are the body's own "
                "instructions (reading and checking each answer, writing each request and the reply), the same on "
                "every run.")]
    return "\n".join(out)


def svg(rows: list[dict]) -> str:
    """Turn wall time (ms) against passes, one line per scripted latency: a small self-contained SVG."""
    width, height, left, bottom, top, right = 520, 320, 60, 40, 30, 130
    top_ms = max(row["turn_wall_median_ms"] for row in rows) * 1.1 or 1.0
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]

    def x(passes: int) -> float:
        return left + (passes - 1) / 7 * (width - left - right)

    def y(ms: float) -> float:
        return height - bottom - ms / top_ms * (height - bottom - top)
    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             'font-size="11">'), f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{left}" y="18" font-size="13">Sampled turn: wall time against passes</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>']
    parts += [f'<text x="{x(passes):.1f}" y="{height - bottom + 14}" text-anchor="middle">{passes}</text>'
              for passes in range(1, 9)]
    parts.append(f'<text x="{(left + width - right) / 2:.1f}" y="{height - 8}" text-anchor="middle">passes run '
                 '(model calls = passes + 1)</text>')
    for tick in range(5):
        ms = top_ms * tick / 4
        parts.append(f'<text x="{left - 6}" y="{y(ms) + 4:.1f}" text-anchor="end">{ms:.0f}</text>')
    parts.append(f'<text x="14" y="{(top + height - bottom) / 2:.1f}" transform="rotate(-90 14 '
                 f'{(top + height - bottom) / 2:.1f})" text-anchor="middle">turn wall, median (ms)</text>')
    for index, latency in enumerate(sorted({row["latency_ms"] for row in rows})):
        points = [(x(r["passes"]), y(r["turn_wall_median_ms"])) for r in rows if r["latency_ms"] == latency]
        colour = colours[index % len(colours)]
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{colour}"/>' for px, py in points]
        parts.append(f'<text x="{width - right + 10}" y="{top + 16 * index + 10}" fill="{colour}">model {latency} ms '
                     'a call</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sampling", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke run")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where sampling.{md,json,svg} go")
    parser.add_argument("--no-callgrind", action="store_true", help="leave out table 4 (valgrind)")
    options = parser.parse_args(argv)
    plan = Plan.quick() if options.quick else Plan()
    if not servers.body_path().is_file():
        parser.error(f"no body at {servers.body_path()}: run `make build` first")

    with tempfile.TemporaryDirectory(prefix="mafiabot-bench-sampling-") as work:
        fixture = workloads.write_bench_fixture(Path(work))
        results = {"meta": {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
                            "plan": plan.__dict__, "load": None},
                   "own_time": own_time(plan, fixture), "wall_by_latency": wall_by_latency(plan, fixture),
                   "modern_rounds": modern_rounds(plan, fixture),
                   "instructions": ([] if options.no_callgrind or shutil.which("valgrind") is None
                                    else instructions_per_call(fixture, Path(work), CALLGRIND_TURNS))}
    results["meta"]["load"] = round(os.getloadavg()[0], 2)
    table = render(results)
    print(table)
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "sampling.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (options.out / "sampling.md").write_text(table + "\n", encoding="utf-8")
    (options.out / "sampling.svg").write_text(svg(results["wall_by_latency"]), encoding="utf-8")
    print(f"wrote {options.out}/sampling.json, sampling.md, sampling.svg", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
