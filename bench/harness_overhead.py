"""Harness overhead: the project's own body client (`harness.client.BodyClient`) on the body.

Invariants:
- `HarnessServer` is the body with the harness's client in place of the plain pipe client:
  the same command line as the "body" row, driven through the same `exchange(line) -> line`
  interface (`send_raw`, then `read_line`), so it runs in the same alternating blocks as
  every other server and its median differs from the body's only by the client. It takes
  no part in the pipelined runs: the client is not thread-safe, and those need a writer
  thread beside the reader.
- `call_tool_round_trips` measures what a harness user pays per turn on top: one
  `BodyClient.call_tool` (JSON encode, write, read the line, JSON decode, id match), same
  body, fixture, pinned 8-pass session and warm-up as the round trips in `bench.latency`.
- Pinned like the pipe client's round trips: this process and the body on one CPU.
- `python -m bench.harness_overhead` runs only this part of the bench (body over plain pipes
  and over the harness client, interleaved, then `call_tool`) and prints the medians.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench import latency, servers, stats, workloads
from bench.pipe_client import pinned, task_cpu_seconds
from harness.body import BodyOptions
from harness.client import BodyClient

# A turn through the harness client takes tens of µs; 120 s bounds even a wedged run on a
# machine ten times slower than this one.
HARNESS_REQUEST_TIMEOUT = 120.0
HARNESS_ROW = "harness client"


class HarnessPipe:
    """A `BodyClient` behind the plain pipe client's interface, as `bench.latency` drives it."""

    def __init__(self, client: BodyClient) -> None:
        self.client = client

    @property
    def pid(self) -> int:
        return self.client.pid

    def send(self, line: bytes) -> None:
        self.client.send_raw(line)

    def recv(self) -> bytes:
        # The plain pipe client's lines keep their LF; so do these, so reply sizes agree.
        return self.client.read_line() + b"\n"

    def exchange(self, line: bytes) -> bytes:
        self.client.send_raw(line)
        return self.recv()

    def cpu_seconds(self) -> float:
        return task_cpu_seconds(self.pid)

    def close(self) -> int | None:
        return self.client.close()

    def __enter__(self) -> HarnessPipe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class HarnessServer:
    """A server's command line, driven by the harness's client instead of the plain pipes."""

    name: str
    argv: tuple[str, ...]

    def start(self, deadline: float) -> HarnessPipe:
        timeout = min(deadline, HARNESS_REQUEST_TIMEOUT)
        return HarnessPipe(BodyClient(self.argv, request_timeout=timeout).start())


def harness_unit(body: servers.Server, key: tuple[str, str, str]) -> latency.Unit:
    """The body's command line as the "harness client" row of a comparison."""
    return latency.Unit(HARNESS_ROW, HarnessServer(HARNESS_ROW, body.argv), key, pipelined=False)


def call_tool_round_trips(body: Path, fixture: Path, count: int) -> list[float]:
    key = workloads.PINNED[8][0]
    arguments = dict(zip(("uid", "channel", "server"), key, strict=True), input=workloads.TURN_INPUT)
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


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.harness_overhead", description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000, help="round trips per client (default 10,000)")
    parser.add_argument("--call-tool-turns", type=int, default=2_000, help="call_tool samples (default 2,000)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mafiabot-bench-harness-") as work:
        fixture = workloads.write_bench_fixture(Path(work))
        body = servers.body_server(fixture)
        key = workloads.PINNED[8][0]
        trips = latency.interleaved([latency.Unit(body.name, body, key), harness_unit(body, key)], args.turns)
        typed = call_tool_round_trips(servers.body_path(), fixture, args.call_tool_turns)
    pipe = stats.summary_us(trips[body.name][0].samples_s)
    harness = stats.summary_us(trips[HARNESS_ROW][0].samples_s)
    print(f"plain pipe client: median {pipe['median_us']} µs, p99 {pipe['p99_us']} µs")
    print(f"{HARNESS_ROW}: median {harness['median_us']} µs, p99 {harness['p99_us']} µs "
          f"= {harness['median_us'] / pipe['median_us']:.2f}× the plain pipe")
    print(f"BodyClient.call_tool (JSON both ways): median {stats.summary_us(typed)['median_us']} µs")


if __name__ == "__main__":
    main()
