"""Quick figures for the body: turn round trip, ping round trip, start-up.

One run, medians and p99 over many samples, through plain pipes (the floor of
what a client can see).  Not a test: machines here are shared and noisy.
Usage: python bench/quick.py [--turns N] [--starts N] [--body PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def spawn(body: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [body, "--no-soul", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=-1,
    )


def exchange(proc: subprocess.Popen, message: dict) -> bytes:
    proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    proc.stdin.flush()
    return proc.stdout.readline()


def round_trips(body: str, count: int, method: str, params: dict | None) -> list[float]:
    proc = spawn(body)
    exchange(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "bench", "version": "0"}}})
    samples = []
    for index in range(count):
        message = {"jsonrpc": "2.0", "id": index + 1, "method": method}
        if params is not None:
            message["params"] = params(index) if callable(params) else params
        start = time.perf_counter()
        reply = exchange(proc, message)
        samples.append(time.perf_counter() - start)
        if not reply:
            raise SystemExit("the body closed its stdout")
    proc.stdin.close()
    proc.wait(timeout=5)
    return samples


def startups(body: str, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        proc = spawn(body)
        exchange(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                        "params": {"protocolVersion": "2025-11-25"}})
        samples.append(time.perf_counter() - start)
        proc.stdin.close()
        proc.wait(timeout=5)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=5000)
    parser.add_argument("--starts", type=int, default=100)
    parser.add_argument("--body", default=str(ROOT / "mafiabot_core/bin/mafiabot"))
    options = parser.parse_args()

    # A fresh session per turn keeps all 8 passes running (full energy).
    def full_turn(index: int) -> dict:
        return {"name": "turn", "arguments": {"input": "what is the shape of the moon?",
                                              "uid": f"u{index}", "channel": "c", "server": "s"}}

    figures = {
        "turn (8 passes)": round_trips(options.body, options.turns, "tools/call", full_turn),
        "ping": round_trips(options.body, options.turns, "ping", None),
        "start-up to initialize": startups(options.body, options.starts),
    }
    print(f"{'what':<26}{'median µs':>12}{'p99 µs':>12}{'samples':>10}")
    for name, samples in figures.items():
        print(f"{name:<26}{statistics.median(samples) * 1e6:>12.1f}"
              f"{percentile(samples, 0.99) * 1e6:>12.1f}{len(samples):>10}")


if __name__ == "__main__":
    main()
