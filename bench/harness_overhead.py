"""Harness overhead: the project's pexpect driver (`harness.client.BodyClient`) on the body.

Invariants:
- Same body, same fixture, same pinned 8-pass session and the same warm-up as the plain
  pipe client's round trips in `bench.latency`, so the two medians differ only by driver.
- Each sample is one `BodyClient.call_tool` (encode, pexpect write, expect the line, JSON
  decode, id match): what a harness user pays per turn.
- Pinned like the pipe client's round trips: this process (pexpect's reader thread included)
  and the body on one CPU.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench import latency, workloads
from bench.pipe_client import pinned
from harness.body import BodyOptions
from harness.client import BodyClient

# pexpect round trips are ~0.4 ms; 120 s bounds even a 10x slower machine.
HARNESS_REQUEST_TIMEOUT = 120.0


def pexpect_round_trips(body: Path, fixture: Path, count: int) -> list[float]:
    key = workloads.PINNED[8][0]
    arguments = dict(zip(("uid", "channel", "server"), key), input=workloads.TURN_INPUT)
    options = BodyOptions(body=body, organs=fixture, no_soul=True)
    samples = []
    with BodyClient.from_options(options, request_timeout=HARNESS_REQUEST_TIMEOUT) as client:
        client.initialize()
        for _ in range(latency.WARMUP):
            client.call_tool("turn", arguments)
        with pinned(latency.ONE_CPU, [client.pid], latency.ONE_CPU):
            for _ in range(count):
                start = time.perf_counter()
                client.call_tool("turn", arguments)
                samples.append(time.perf_counter() - start)
    return samples
