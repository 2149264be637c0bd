"""The bench's PNG: six panels drawn from the results dict, target lines dashed."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on build machines
import matplotlib.pyplot as plt

from bench.report import MB_IN_KIB


def _available(results: dict) -> dict:
    return {name: f for name, f in results["servers"].items() if "unavailable" not in f}


def draw(results: dict, path: Path) -> None:
    servers = _available(results)
    fig, axes = plt.subplots(2, 3, figsize=(16, 8.5))
    fig.suptitle(f"mafiabot bench — {results['meta']['date']}, {results['meta']['cpu']}, "
                 f"{results['meta']['cpus']} CPUs (one run)")

    ax = axes[0][0]
    names = list(servers)
    ax.barh(names, [servers[n]["round_trip"]["median_us"] for n in names], color="tab:blue", label="median")
    ax.scatter([servers[n]["round_trip"]["p99_us"] for n in names], names, color="black", marker="|",
               s=200, label="p99", zorder=3)
    ax.set_xscale("log")
    ax.set_title("tools/call turn round trip (µs)")
    ax.legend(loc="lower right")

    ax = axes[0][1]
    piped = [n for n in names if servers[n]["pipelined_turns_per_s"] is not None]
    ax.barh(piped, [servers[n]["pipelined_turns_per_s"] for n in piped], color="tab:green")
    ax.axvline(40_000, linestyle="--", color="red", label="target 40,000")
    ax.set_xscale("log")
    ax.set_title("pipelined throughput (turns/s)")
    ax.legend(loc="lower right")

    ax = axes[0][2]
    levels = [("1", 15.0), ("4", None), ("8", 25.0)]
    ax.bar([f"{p} pass{'es' if p != '1' else ''}" for p, _ in levels],
           [results["cpu_by_passes"][p]["cpu_per_turn_us"] for p, _ in levels], color="tab:orange")
    for index, (_, target) in enumerate(levels):
        if target is not None:
            ax.hlines(target, index - 0.4, index + 0.4, linestyles="--", color="red")
    ax.set_title("body CPU per turn (µs), targets dashed")

    ax = axes[1][0]
    starts = {n: v for n, v in results["startup"].items() if "median_ms" in v}
    ax.barh(list(starts), [v["median_ms"] for v in starts.values()], color="tab:purple")
    ax.axvline(5, linestyle="--", color="red", label="dynamic target 5 ms")
    ax.axvline(1, linestyle=":", color="red", label="static target 1 ms")
    ax.set_xscale("log")
    ax.set_title("start-up: spawn → initialize answered (ms)")
    ax.legend(loc="lower right")

    ax = axes[1][1]
    for kind, samples in results["memory"].items():
        ax.plot(range(len(samples)), [s["hwm_kib"] / 1024 for s in samples], marker="o", label=kind)
        ax.set_xticks(range(len(samples)), [f"{s['turns']:,}" for s in samples])
    ax.axhline(64 * MB_IN_KIB / 1024, linestyle="--", color="red", label="target 64 MB")
    ax.set_xlabel("live sessions")
    ax.set_title("peak RSS (MiB)")
    ax.legend()

    ax = axes[1][2]
    soak = results["soak"]["samples"]
    ax.plot([s["turns"] for s in soak], [s["rss_kib"] / 1024 for s in soak], marker=".")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("turns")
    ax.set_title(f"soak RSS (MiB), cap {results['soak']['cap']:,} sessions")

    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
