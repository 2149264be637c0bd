"""Memory: resident set with many live sessions, and its flatness over a long soak.

Invariants:
- Turns are pipelined in blocks of `BLOCK` (a writer thread, the caller reads), so a
  million turns take seconds of client time, not minutes; RSS is read between blocks,
  when no request is in flight.
- Live sessions: every turn opens a new session; the table is sized to hold them all
  (`--max-sessions` = the largest count), so after N turns N sessions are live.
- Soak: keys cycle over twice the session cap, so after the first lap every new key evicts
  the least recently used one; a correct table keeps RSS flat from then on.
- Only the number of replies is checked here (lines are counted, not parsed): the other
  measurements check the replies' content.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from bench import workloads
from bench.pipe_client import PipeClient, rss_kib
from bench.servers import Server

BLOCK = 10_000
# Bound for one memory measurement: a million turns at the body's slowest rate seen here
# (~5,000 turns/s) is 200 s.
MEMORY_DEADLINE = 900.0
SOAK_CAP = 10_000
SOAK_SAMPLES = 20


@dataclass
class Sample:
    turns: int
    rss_kib: int
    hwm_kib: int
    seconds: float


def _serve_block(client: PipeClient, lines: list[bytes]) -> None:
    writer = threading.Thread(target=client.send_all, args=(b"".join(lines),), daemon=True)
    writer.start()
    for _ in lines:
        client.recv()
    writer.join(MEMORY_DEADLINE)


def _sample(client: PipeClient, turns: int, start: float) -> Sample:
    fields = rss_kib(client.pid)
    return Sample(turns, fields["VmRSS"], fields["VmHWM"], time.perf_counter() - start)


def _lines_for(keys: range, first_id: int, prefix: str) -> list[bytes]:
    return [workloads.turn_line(first_id + n, (f"{prefix}-{k}", "bench", "bench"))
            for n, k in enumerate(keys)]


def live_sessions(body: Server, checkpoints: tuple[int, ...]) -> list[Sample]:
    """RSS after `checkpoints` sessions were opened in one body (table holds them all)."""
    largest = max(checkpoints)
    server = Server(body.name, (*body.argv, "--max-sessions", str(largest)))
    samples = []
    with server.start(MEMORY_DEADLINE) as client:
        client.exchange(workloads.initialize_line())
        samples.append(_sample(client, 0, time.perf_counter()))
        start, opened = time.perf_counter(), 0
        for target in sorted(checkpoints):
            while opened < target:
                count = min(BLOCK, target - opened)
                _serve_block(client, _lines_for(range(opened, opened + count), opened + 1, "live"))
                opened += count
            samples.append(_sample(client, opened, start))
    return samples


def soak(body: Server, turns: int) -> list[Sample]:
    """RSS every turns/SOAK_SAMPLES turns over `turns` turns, keys cycling over 2 × cap."""
    server = Server(body.name, (*body.argv, "--max-sessions", str(SOAK_CAP)))
    every = max(BLOCK, turns // SOAK_SAMPLES)
    keys = 2 * SOAK_CAP
    samples = []
    with server.start(MEMORY_DEADLINE) as client:
        client.exchange(workloads.initialize_line())
        start, served = time.perf_counter(), 0
        samples.append(_sample(client, 0, start))
        while served < turns:
            count = min(BLOCK, turns - served)
            block = range(served, served + count)
            _serve_block(client, [workloads.turn_line(served + 1 + n, (f"soak-{k % keys}", "bench", "bench"))
                                  for n, k in enumerate(block)])
            served += count
            if served % every == 0 or served == turns:
                samples.append(_sample(client, served, start))
    return samples


def growth_after_fill(samples: list[Sample], fill_turns: int) -> tuple[int, int]:
    """(RSS at the first sample once `fill_turns` were served, growth since, KiB)."""
    settled = [s for s in samples if s.turns >= fill_turns]
    if not settled:
        return 0, 0
    return settled[0].rss_kib, settled[-1].rss_kib - settled[0].rss_kib
