"""Round trips, pipelined throughput and CPU per request, for any server on the same client.

Invariants:
- A measurement starts its own servers, performs the legacy handshake, warms each up with
  `WARMUP` requests (untimed), and closes them before returning. Comparisons alternate
  between servers in `ROUNDS` blocks, so the machine's noise falls on all of them alike.
- Round trips are sequential: one request in flight; each sample is write→reply read.
- Pipelined runs keep as many requests in flight as the pipes hold: a writer thread
  pushes every request while the caller reads; the figure is replies ÷ wall time.
- CPU per request is the server's on-CPU time over the timed part only, ÷ requests.
- Sequential round trips run with the client and the server pinned to one CPU (`ONE_CPU`):
  on this VM a wake-up across vCPUs costs ~40 µs each way and lands at random, which made
  unpinned medians bimodal (floor 15 µs pinned, ~100 µs client and server on different CPUs).
  `cross_cpu` measures that placement on purpose. Pipelined runs are not pinned: client and
  server are both busy there and need a CPU each.
- Every reply must carry the id of its request (in order, for round trips); a mismatch raises.
- A unit's server is started by its `start(deadline)`, which gives a client with the plain pipe
  client's interface: `PipeClient` for every server, and `bench.harness_overhead`'s adapter
  for the body driven by the harness's own client (round trips only: `pipelined=False`).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from bench import workloads
from bench.pipe_client import pinned
from bench.servers import Server

WARMUP = 200
ONE_CPU = {min(os.sched_getaffinity(0))}
# Measurements alternate between servers in this many blocks (see `interleaved`).
ROUNDS = 10
# A conversation with one server may take this long at most (SDK peer at ~1 ms per turn
# needs ~10 s for 10,000 turns; this leaves room for a loaded machine).
CONVERSATION_DEADLINE = 300.0
ID_PATTERN = re.compile(rb'"id":(-?\d+|"[^"]*")')


class WrongReply(AssertionError):
    """A server answered with an id other than the one awaited."""


@dataclass
class RoundTrips:
    samples_s: list[float]
    cpu_s: float
    reply_bytes: int

    @property
    def cpu_per_request_s(self) -> float:
        return self.cpu_s / len(self.samples_s)


@dataclass
class Pipelined:
    requests: int
    wall_s: float
    cpu_s: float

    @property
    def per_second(self) -> float:
        return self.requests / self.wall_s

    @property
    def cpu_per_request_s(self) -> float:
        return self.cpu_s / self.requests


def reply_id(reply: bytes) -> bytes:
    found = ID_PATTERN.search(reply)
    return found.group(1) if found else b""


def _check(reply: bytes, request_id: int) -> None:
    if reply_id(reply) != str(request_id).encode():
        raise WrongReply(f"awaited id {request_id}, got {reply[:160]!r}")


def _handshake_and_warm(client, key: tuple[str, str, str]) -> int:
    """Initialize, then WARMUP untimed turns; returns the next free request id."""
    client.exchange(workloads.initialize_line())
    client.send(workloads.initialized_line())
    for request_id in range(1, WARMUP + 1):
        _check(client.exchange(workloads.turn_line(request_id, key)), request_id)
    return WARMUP + 1


class Startable(Protocol):
    """A server as a comparison starts it: a client with the plain pipe client's interface."""

    @property
    def name(self) -> str: ...

    def start(self, deadline: float) -> Any: ...


@dataclass
class Unit:
    """One thing to measure: a server and the session its turns go to."""

    name: str
    server: Startable
    key: tuple[str, str, str]
    # False for a client that cannot be written by one thread while another reads it.
    pipelined: bool = True


def interleaved(units: list[Unit], count: int, pipelined_count: int = 0,
                rounds: int = ROUNDS) -> dict[str, tuple[RoundTrips, Pipelined | None]]:
    """Round trips (and pipelined blocks, for the units that take them) of every unit, alternating.

    All servers stay up for the whole measurement. Round trips alternate in `rounds` blocks
    (unit A's first tenth, unit B's first tenth, ...), so noise on the shared machine lands on
    every unit alike; a server's CPU is read before and after each of its blocks (it is idle
    while the others answer). Pipelined bursts then alternate in `rounds` blocks too.
    """
    clients, next_ids = {}, {}
    try:
        for unit in units:
            clients[unit.name] = unit.server.start(CONVERSATION_DEADLINE)
            next_ids[unit.name] = _handshake_and_warm(clients[unit.name], unit.key)
        with pinned(ONE_CPU, (c.pid for c in clients.values()), ONE_CPU):
            trips = _alternating_blocks(units, clients, next_ids, count, rounds)
        piped = {u.name: Pipelined(0, 0.0, 0.0) for u in units}
        for _ in range(rounds if pipelined_count else 0):
            for unit in (u for u in units if u.pipelined):
                lines = workloads.turn_lines(pipelined_count // rounds, unit.key, next_ids[unit.name])
                burst = _pipelined_block(clients[unit.name], lines)
                piped[unit.name].requests += burst.requests
                piped[unit.name].wall_s += burst.wall_s
                piped[unit.name].cpu_s += burst.cpu_s
                next_ids[unit.name] += len(lines)
    finally:
        for client in clients.values():
            client.close()
    return {u.name: (trips[u.name], piped[u.name] if pipelined_count and u.pipelined else None) for u in units}


def _alternating_blocks(units: list[Unit], clients: dict, next_ids: dict, count: int,
                        rounds: int) -> dict[str, RoundTrips]:
    trips = {u.name: RoundTrips([], 0.0, 0) for u in units}
    for _ in range(rounds):
        for unit in units:
            lines = workloads.turn_lines(count // rounds, unit.key, next_ids[unit.name])
            block = _round_trip_block(clients[unit.name], lines)
            trips[unit.name].samples_s += block.samples_s
            trips[unit.name].cpu_s += block.cpu_s
            trips[unit.name].reply_bytes = block.reply_bytes
            next_ids[unit.name] += len(lines)
    return trips


def _round_trip_block(client, lines: list[bytes]) -> RoundTrips:
    samples = []
    clock = time.perf_counter
    cpu_before = client.cpu_seconds()
    for request in lines:
        start = clock()
        reply = client.exchange(request)
        samples.append(clock() - start)
        if reply_id(reply) != reply_id(request):
            raise WrongReply(f"awaited the reply to {request[:80]!r}, got {reply[:160]!r}")
    return RoundTrips(samples, client.cpu_seconds() - cpu_before, len(reply))


def cross_cpu(units: list[Unit], count: int) -> dict[str, RoundTrips] | None:
    """Round trips with the client on one CPU and the servers on another (None on one CPU)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    clients, next_ids = {}, {}
    try:
        for unit in units:
            clients[unit.name] = unit.server.start(CONVERSATION_DEADLINE)
            next_ids[unit.name] = _handshake_and_warm(clients[unit.name], unit.key)
        with pinned({cpus[0]}, (c.pid for c in clients.values()), {cpus[1]}):
            return _alternating_blocks(units, clients, next_ids, count, ROUNDS)
    finally:
        for client in clients.values():
            client.close()


def _pipelined_block(client, lines: list[bytes]) -> Pipelined:
    """Every request written up front by a thread while this thread reads the replies."""
    writer = threading.Thread(target=client.send_all, args=(b"".join(lines),), daemon=True)
    cpu_before = client.cpu_seconds()
    start = time.perf_counter()
    writer.start()
    seen = {reply_id(client.recv()) for _ in lines}
    wall = time.perf_counter() - start
    cpu = client.cpu_seconds() - cpu_before
    writer.join(CONVERSATION_DEADLINE)
    if seen != {reply_id(line) for line in lines}:
        raise WrongReply("pipelined replies do not answer exactly the requests sent")
    return Pipelined(len(lines), wall, cpu)


def ping_round_trips(server: Server, count: int) -> list[float]:
    with server.start(CONVERSATION_DEADLINE) as client, pinned(ONE_CPU, [client.pid], ONE_CPU):
        client.exchange(workloads.initialize_line())
        samples = []
        for request_id in range(1, count + 1):
            start = time.perf_counter()
            reply = client.exchange(workloads.ping_line(request_id))
            samples.append(time.perf_counter() - start)
            _check(reply, request_id)
    return samples


def input_size_round_trips(server: Server, sizes: tuple[int, ...], count: int) -> dict[int, list[float]]:
    """Round trips of 8-pass turns whose input is `size` bytes of prose."""
    key = workloads.PINNED[8][0]
    out: dict[int, list[float]] = {}
    with server.start(CONVERSATION_DEADLINE) as client, pinned(ONE_CPU, [client.pid], ONE_CPU):
        client.exchange(workloads.initialize_line())
        request_id = 0
        for size in sizes:
            text = ("the moon is a stone " * (size // 20 + 1))[:size]
            samples = []
            for _ in range(count):
                request_id += 1
                request = workloads.turn_line(request_id, key, text)
                start = time.perf_counter()
                reply = client.exchange(request)
                samples.append(time.perf_counter() - start)
                _check(reply, request_id)
            json.loads(reply)  # a reply quoting a large input is still one valid message
            out[size] = samples
    return out
