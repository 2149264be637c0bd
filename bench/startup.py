"""Start-up: spawn → `initialize` answered, as a client sees it.

Invariants:
- Each sample spawns a new process with `PipeClient` (the same spawn path for every
  server), sends `initialize` and stops the clock when the reply line is read.
- Bodies boot the real way: they write SOUL.md into a private HERMES_HOME (after the
  first boot the content is unchanged, so later boots only compare it), as under Hermes.
- Processes are closed (stdin EOF) after each sample, outside the timed part.
"""

from __future__ import annotations

import time
from pathlib import Path

from bench import workloads
from bench.servers import Server

SAMPLE_DEADLINE = 10.0


def startups(server: Server, count: int) -> list[float]:
    samples = []
    request = workloads.initialize_line()
    for _ in range(count):
        start = time.perf_counter()
        client = server.start(SAMPLE_DEADLINE)
        try:
            client.exchange(request)
            samples.append(time.perf_counter() - start)
        finally:
            client.close()
    return samples


def interleaved_startups(contenders: dict[str, Server], count: int) -> dict[str, list[float]]:
    """`count` samples of each server, taken in turn (one of each, then again), so the
    machine's noise is shared alike."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(count):
        for name, server in contenders.items():
            samples[name] += startups(server, 1)
    return samples


def booting_body(body: Server, home: Path) -> Server:
    """The body server with SOUL.md written to `home` instead of --no-soul."""
    argv = (*tuple(arg for arg in body.argv if arg != "--no-soul"), "--hermes-home", str(home))
    return Server(body.name, argv)
