"""The bench's verdicts and its Markdown report.

Invariants:
- Every target of the issue is listed with what was wanted, what was measured and a verdict:
  "met", "NOT met", or "not measured" (a figure missing because a server was unavailable).
- Ratios are only ever taken between figures of the same run.
- Rendering is a pure function of the results dict (the JSON written beside it).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from bench import sampling, store, workloads, worst_case
from bench.harness_overhead import HARNESS_ROW

# Allocator noise on a flat process is a few pages; a leak of even 10 bytes per turn over
# a million turns is ~10 MB. One MiB separates the two.
SOAK_TOLERANCE_KIB = 1024
MB_IN_KIB = 1_000_000 / 1024  # targets say MB: 10^6 bytes


@dataclass
class Verdict:
    target: str
    wanted: str
    measured: str
    met: bool | None

    @property
    def word(self) -> str:
        return "not measured" if self.met is None else ("met" if self.met else "NOT met")


def machine() -> dict:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass  # not Linux: the model stays unknown
    return {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "cpu": cpu, "cpus": os.cpu_count(),
            "kernel": platform.release(), "python": platform.python_version(),
            "load_average_at_start": round(os.getloadavg()[0], 2),
            "commit": _git("rev-parse", "--short", "HEAD"),
            "dirty": bool(_git("status", "--porcelain", "--", "mafiabot_core"))}


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=workloads.ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _get(results: dict, *path: str):
    node = results
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def targets(results: dict) -> list[dict]:
    body_rt = _get(results, "servers", "body", "round_trip", "median_us")
    floor_rt = _get(results, "servers", "C floor", "round_trip", "median_us")
    sdk_rt = _get(results, "servers", "SDK MCPServer", "round_trip", "median_us")
    harness_rt = _get(results, "servers", HARNESS_ROW, "round_trip", "median_us")
    cpu8 = _get(results, "cpu_by_passes", "8", "cpu_per_turn_us")
    cpu1 = _get(results, "cpu_by_passes", "1", "cpu_per_turn_us")
    piped = _get(results, "servers", "body", "pipelined_turns_per_s")
    dyn = _get(results, "startup", "body (dynamic)", "median_ms")
    sta = _get(results, "startup", "body (static)", "median_ms")
    floor_start = _get(results, "startup", "C floor (static)", "median_ms")
    rss = {kind: _rss_at(results, kind, 100_000) for kind in ("dynamic", "static")}
    growth = _get(results, "soak", "growth_after_fill_kib")
    failures = _get(results, "load", "failures")
    worst = _get(results, "worst_case", "rows")
    worst_ms = worst_case.worst_ms(worst) if worst else None
    full_size = _get(results, "worst_case", "bytes") == worst_case.FULL_SIZE
    sampled = _get(results, "sampled_pass")
    per_pass_us = max(row["body_cpu_per_call_us"] for row in sampled) if sampled else None
    recalled = _get(results, "recall")
    recall_ratio = max(row["ratio"] for row in recalled) if recalled else None

    def ratio(a, b):
        return None if a is None or b is None else a / b

    body_floor, sdk_body, harness_pipe = ratio(body_rt, floor_rt), ratio(sdk_rt, body_rt), ratio(harness_rt, body_rt)
    net = f" ({sta - floor_start:.2f} ms over the static C floor's {floor_start:.2f})" \
        if sta is not None and floor_start is not None else ""
    verdicts = [
        _verdict("round trip: body ÷ floor (medians)", "≤ 1.5", body_floor, lambda v: v <= 1.5, "{:.2f}×"),
        _verdict("round trip: SDK server ÷ body (medians)", "≥ 7", sdk_body, lambda v: v >= 7, "{:.2f}×"),
        _verdict("round trip: body over the harness client ÷ over plain pipes (medians)", "≤ 2", harness_pipe,
                 lambda v: v <= 2, "{:.2f}×"),
        _verdict("body CPU per 8-pass turn", "≤ 25 µs", cpu8, lambda v: v <= 25, "{:.1f} µs"),
        _verdict("body CPU per 1-pass turn", "≤ 15 µs", cpu1, lambda v: v <= 15, "{:.1f} µs"),
        _verdict("pipelined throughput, body", "≥ 40,000 turns/s", piped, lambda v: v >= 40_000, "{:,.0f}/s"),
        _verdict("start-up, dynamic link (median)", "≤ 5 ms", dyn, lambda v: v <= 5, "{:.2f} ms"),
        _verdict("start-up, static link (median)", "≤ 1 ms", sta, lambda v: v <= 1, "{:.2f} ms" + net),
        _verdict("peak RSS at 100,000 live sessions, dynamic", "≤ 64 MB", rss["dynamic"],
                 lambda v: v <= 64 * MB_IN_KIB, "{:,.0f} KiB"),
        _verdict("peak RSS at 100,000 live sessions, static", "≤ 64 MB", rss["static"],
                 lambda v: v <= 64 * MB_IN_KIB, "{:,.0f} KiB"),
        _verdict("soak: RSS growth once the table is full", f"≤ {SOAK_TOLERANCE_KIB} KiB", growth,
                 lambda v: v <= SOAK_TOLERANCE_KIB, "{:,} KiB"),
        _verdict("load: failures among all turns", "0", failures, lambda v: v == 0, "{}"),
        _verdict("CPU of the costliest 4 MB worst-case turn", f"≤ {worst_case.TARGET_MS:g} ms",
                 worst_ms if full_size else None, lambda v: v <= worst_case.TARGET_MS, "{:.1f} ms"),
        _verdict("body's own CPU per sampled pass (the most of 1, 4, 8 passes; bench.sampling)",
                 f"≤ {sampling.TARGET_MS_PER_PASS} ms", per_pass_us, lambda v: v <= sampling.TARGET_MS_PER_PASS * 1000,
                 "{:.1f} µs"),
        _verdict("stored turn, --recall relevance ÷ fixture (callgrind, the worse input; bench.recall)", "≤ 1.2",
                 recall_ratio, lambda v: v <= 1.2, "{:.3f}×"),
    ]
    return [asdict(v) | {"verdict": v.word} for v in verdicts]


def _rss_at(results: dict, kind: str, sessions: int):
    for sample in _get(results, "memory", kind) or []:
        if sample["turns"] == sessions:
            return sample["hwm_kib"]
    return None


def _verdict(target, wanted, value, test, fmt) -> Verdict:
    if value is None:
        return Verdict(target, wanted, "—", None)
    return Verdict(target, wanted, fmt.format(value), bool(test(value)))


# -- rendering -----------------------------------------------------------------------------

def _row(*cells) -> str:
    return "| " + " | ".join("—" if c is None else str(c) for c in cells) + " |"


def _table(header: tuple[str, ...], rows: list[tuple]) -> list[str]:
    return [_row(*header), _row(*("---" for _ in header)), *(_row(*r) for r in rows)]


def render(results: dict) -> str:
    meta = results["meta"]
    lines = [f"## mafiabot bench — {meta['date']}",
             "",
             (f"{meta['cpu']}, {meta['cpus']} CPUs, Linux {meta['kernel']}, Python {meta['python']}; "
              f"commit {meta['commit']}{' + uncommitted body changes' if meta.get('dirty') else ''}; "
              f"body {meta.get('body', '?')}; "
              f"one run of {meta.get('wall_seconds', '?')} s, 1-minute load average "
              f"{meta.get('load_average_at_start', '?')} at its start and {meta.get('load_average_at_end', '?')} "
              f"at its end. Same plain-pipe client for every server (the \"{HARNESS_ROW}\" row: the body on the harness's "
              "own client), servers measured in alternating blocks; "
              "medians and ratios from this run only."),
             ""]
    lines += _servers_table(results) + [""]
    lines += _table(("body (pinned energy)", "passes", "CPU per turn µs", "round trip median µs", "reply bytes"),
                    [(_energy_label(level), level.split()[0], v["cpu_per_turn_us"], v["round_trip_median_us"], v["reply_bytes"])
                     for level, v in results["cpu_by_passes"].items()]) + [""]
    crossed = results.get("cross_cpu") or {}
    if crossed:
        lines += [("Placement: the round trips above pin the client and the server to one CPU. With the client "
                   "on one CPU and the server on the other (each turn then wakes a vCPU across the VM): "
                   + "; ".join(f"{name} {v['median_us']} µs median (p99 {v['p99_us']}), server CPU "
                               f"{v['cpu_per_turn_us']} µs per turn" for name, v in crossed.items()) + "."), ""]
    lines += _table(("start-up (spawn → initialize answered)", "median ms", "p99 ms"),
                    [(name, v.get("median_ms"), v.get("p99_ms", v.get("unavailable")))
                     for name, v in results["startup"].items()]) + [""]
    lines += _memory_table(results) + [""]
    soak = results["soak"]
    lines += [(f"Soak: {soak['turns']:,} turns over {soak['keys']:,} keys with a cap of {soak['cap']:,} "
               f"sessions: RSS {soak['rss_after_fill_kib']:,} KiB once full, then "
               f"{soak['growth_after_fill_kib']:+,} KiB to the end."), ""]
    harness = results["harness"]
    lines += [(f"Harness overhead (same body, 8-pass turns): the round-trip table's \"{HARNESS_ROW}\" row is the "
               f"body driven by `BodyClient` (`send_raw`, `read_line`) in the same blocks as the plain pipes; "
               f"a whole `BodyClient.call_tool` (JSON encode and decode, id match) takes "
               f"{harness['call_tool']['median_us']} µs median vs plain pipes {harness['pipe']['median_us']} µs "
               f"= {harness['call_tool']['median_us'] / harness['pipe']['median_us']:.1f}×; "
               f"ping round trip {results['ping']['median_us']} µs."), ""]
    lines += _table(("input bytes", "round trip median µs", "p99 µs"),
                    [(f"{int(size):,}", v["median_us"], v["p99_us"])
                     for size, v in results["input_size"].items()]) + [""]
    worst = results.get("worst_case")
    if worst:
        lines += [(f"Worst-case turns ({worst['bytes']:,}-byte lines; tests/corpus/worst_case.py): the CPU of one "
                   "turn, the conversation with it minus the one without, lowest of the repeats."), ""]
        lines += _table(("input", "aimed at", "why it is a worst case", "line bytes", "CPU ms"),
                        [(r["case"], r["target"], r["why"], f"{r['line_bytes']:,}",
                          "overran" if r["cpu_ms"] is None else r["cpu_ms"]) for r in worst["rows"]]) + [""]
    if "postgres_store" in results:
        lines += ["The session stores (`python -m bench.store --postgres` explains this table):", "",
                  *store.postgres_markdown(results["postgres_store"]), ""]
    ld = results["load"]
    lines += [(f"Load: {ld['bodies']} bodies × {ld['seconds']} s, one turn in flight each: "
               f"{ld['turns']:,} turns, {ld['turns_per_s']:,}/s in all, latency median "
               f"{ld['latency_median_us']} µs, p99 {ld['latency_p99_us']} µs, peak RSS per body "
               f"{ld['peak_rss_per_body_kib']:,} KiB, failures {ld['failures']}."), ""]
    lines += _table(("target", "wanted", "measured", "verdict"),
                    [(t["target"], t["wanted"], t["measured"], t["verdict"]) for t in results["targets"]])
    return "\n".join(lines)


def _energy_label(level: str) -> str:
    passes, _, variant = level.partition(" ")
    return f"energy {workloads.PINNED[int(passes)][1]:.1f} {variant}".strip()


def _servers_table(results: dict) -> list[str]:
    body = results["servers"]["body"]["round_trip"]["median_us"]
    rows = []
    for name, figures in results["servers"].items():
        if "unavailable" in figures:
            rows.append((name, None, None, None, None, None, f"unavailable: {figures['unavailable']}"))
            continue
        median = figures["round_trip"]["median_us"]
        if name == "body":
            ratio = "—"
        elif name == "C floor":
            ratio = f"body ÷ floor = {body / median:.2f}×"
        elif name == HARNESS_ROW:
            ratio = f"harness ÷ plain pipes = {median / body:.2f}×"
        else:
            ratio = f"peer ÷ body = {median / body:.2f}×"
        piped = figures["pipelined_turns_per_s"]
        rows.append((name, median, figures["round_trip"]["p99_us"], figures["cpu_per_turn_us"],
                     None if piped is None else f"{piped:,}", figures["reply_bytes"], ratio))
    return _table(("server (tools/call turn)", "round trip median µs", "p99 µs", "server CPU per turn µs",
                   "pipelined turns/s", "reply bytes", "ratio"), rows)


def _memory_table(results: dict) -> list[str]:
    rows = [(kind, f"{sample['turns']:,}", f"{sample['rss_kib']:,}", f"{sample['hwm_kib']:,}")
            for kind, samples in results["memory"].items() for sample in samples]
    return _table(("body link", "live sessions", "RSS KiB", "peak RSS KiB"), rows)


if __name__ == "__main__":
    import json
    with open(sys.argv[1], encoding="utf-8") as results_file:
        print(render(json.load(results_file)))
