"""Load: many bodies at once, each serving its own session stream, for a bounded time.

Invariants:
- One driver process multiplexes every body's stdout with `selectors`; each body has one
  request in flight at a time (as under Hermes), so latency is per turn under contention.
- Each body serves `SESSIONS_PER_BODY` sessions round-robin; each session first says its
  own secret, then keeps asking for "the password". Every reply is checked: its id is the
  awaited one, it is a successful turn, and no other session's secret appears in it (L1).
  Every `DEEP_CHECK_EVERY`-th reply is parsed and checked in full: energy in [0, 1], the
  passes a prefix, the session its own.
- The run stops sending at `duration`, waits at most `DRAIN_BOUND` for replies in flight,
  then closes every body (stdin EOF) and expects exit status 0. A reply slower than
  `REPLY_TIMEOUT`, a body that exits early, or any failed check is counted as a failure.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import statistics
import time
from dataclasses import dataclass, field

from bench import workloads
from bench.pipe_client import PipeClient, rss_kib
from bench.servers import Server

SESSIONS_PER_BODY = 4
DEEP_CHECK_EVERY = 10
# A turn takes ~0.1 ms alone; with 100 bodies on two cores a reply can wait behind ~100
# others. 10 s is the SDK client's patience and far beyond any healthy queue.
REPLY_TIMEOUT = 10.0
DRAIN_BOUND = 15.0
PASS_STEPS = [(3 + 2 * k, 4 + 2 * k) for k in range(8)]
ID_PATTERN = re.compile(rb'"id":(\d+)')


@dataclass
class Stream:
    """One body and the conversation the driver holds with it."""

    number: int
    client: PipeClient
    sessions: list[tuple[str, str, str]]
    secrets: list[bytes]
    buffer: bytes = b""
    next_id: int = 1
    sent_at: float = 0.0
    in_flight: int | None = None
    served: int = 0

    def session_of(self, request_id: int) -> int:
        return (request_id - 1) % len(self.sessions)

    def request(self) -> bytes:
        index = self.session_of(self.next_id)
        first_round = self.next_id <= len(self.sessions)
        text = (f"remember the password {self.secrets[index].decode()}" if first_round
                else f"what was the password? (turn {self.next_id})")
        return workloads.turn_line(self.next_id, self.sessions[index], text)


@dataclass
class LoadResult:
    bodies: int
    seconds: float
    turns: int
    latencies_s: list[float]
    failures: list[str] = field(default_factory=list)
    peak_rss_kib: int = 0
    exit_codes: list[int] = field(default_factory=list)

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.seconds if self.seconds else 0.0


def _check_reply(stream: Stream, line: bytes, result: LoadResult) -> None:
    found = ID_PATTERN.search(line)
    if found is None or int(found.group(1)) != stream.in_flight:
        result.failures.append(f"body {stream.number}: awaited id {stream.in_flight}, got {line[:120]!r}")
        return
    if b'"isError":false' not in line:
        result.failures.append(f"body {stream.number}: turn failed: {line[:200]!r}")
        return
    own = stream.session_of(stream.in_flight)
    for index, secret in enumerate(stream.secrets):
        if index != own and secret in line:
            result.failures.append(f"body {stream.number}: secret of session {index} in session {own}")
    if stream.served % DEEP_CHECK_EVERY == 0:
        problem = _trace_problem(json.loads(line)["result"]["structuredContent"], stream.sessions[own])
        if problem:
            result.failures.append(f"body {stream.number}: {problem}")


def _trace_problem(trace: dict, session: tuple[str, str, str]) -> str:
    if not 0.0 <= trace["energy"] <= 1.0:
        return f"energy {trace['energy']} out of [0, 1]"
    if trace["session"] != dict(zip(("uid", "channel", "server"), session, strict=True)):
        return f"trace of {trace['session']} answered {session}"
    ran = [all(trace["steps"][i - 1]["status"] == "ran" for i in pair) for pair in PASS_STEPS]
    if ran != [k < trace["passes_run"] for k in range(8)]:
        return f"passes not a prefix of length {trace['passes_run']}: {ran}"
    return ""


def _send(stream: Stream) -> None:
    stream.client.send(stream.request())
    stream.in_flight = stream.next_id
    stream.sent_at = time.perf_counter()
    stream.next_id += 1


def run(body: Server, bodies: int, duration: float) -> LoadResult:
    """Drive `bodies` bodies for `duration` seconds; never runs past duration + bounds."""
    result = LoadResult(bodies, 0.0, 0, [])
    hard_deadline = duration + DRAIN_BOUND + REPLY_TIMEOUT + 30.0
    selector = selectors.DefaultSelector()
    streams: list[Stream] = []
    try:
        for number in range(bodies):
            sessions = [(f"load-{number}-{s}", f"#room-{s}", "load") for s in range(SESSIONS_PER_BODY)]
            secrets = [f"SECRET{number:03d}x{s}x{os.urandom(4).hex()}".encode() for s in range(SESSIONS_PER_BODY)]
            stream = Stream(number, body.start(hard_deadline), sessions, secrets)
            stream.client.exchange(workloads.initialize_line())
            streams.append(stream)
            selector.register(stream.client.proc.stdout.fileno(), selectors.EVENT_READ, stream)
        start = time.perf_counter()
        stop_sending = start + duration
        for stream in streams:
            _send(stream)
        _drive(selector, streams, result, stop_sending)
        result.seconds = time.perf_counter() - start
        result.peak_rss_kib = max(rss_kib(s.client.pid)["VmHWM"] for s in streams if s.client.proc.poll() is None)
    finally:
        selector.close()
        for stream in streams:
            result.exit_codes.append(stream.client.close())
    bad_exits = [code for code in result.exit_codes if code != 0]
    if bad_exits:
        result.failures.append(f"{len(bad_exits)} bodies did not exit 0 at EOF: {sorted(set(bad_exits))}")
    return result


def _drive(selector: selectors.BaseSelector, streams: list[Stream], result: LoadResult,
           stop_sending: float) -> None:
    drain_until = stop_sending + DRAIN_BOUND
    while any(s.in_flight is not None for s in streams):
        now = time.perf_counter()
        if now > drain_until:
            result.failures.append(f"{sum(s.in_flight is not None for s in streams)} replies still "
                                   f"missing {DRAIN_BOUND} s after the end")
            return
        for key, _ in selector.select(timeout=0.5):
            stream: Stream = key.data
            chunk = os.read(key.fd, 1 << 16)
            if not chunk:
                result.failures.append(f"body {stream.number} closed its stdout mid-run")
                selector.unregister(key.fd)
                stream.in_flight = None
                continue
            stream.buffer += chunk
            while b"\n" in stream.buffer and stream.in_flight is not None:
                line, stream.buffer = stream.buffer.split(b"\n", 1)
                result.latencies_s.append(time.perf_counter() - stream.sent_at)
                stream.served += 1
                result.turns += 1
                _check_reply(stream, line, result)
                stream.in_flight = None
                if time.perf_counter() < stop_sending:
                    _send(stream)
        late = [s for s in streams if s.in_flight is not None and now - s.sent_at > REPLY_TIMEOUT]
        for stream in late:
            result.failures.append(f"body {stream.number}: no reply to id {stream.in_flight} "
                                   f"within {REPLY_TIMEOUT} s")
            stream.in_flight = None


def summary(result: LoadResult) -> dict:
    latencies = sorted(result.latencies_s)
    return {
        "bodies": result.bodies,
        "seconds": round(result.seconds, 1),
        "turns": result.turns,
        "turns_per_s": round(result.turns_per_second),
        "latency_median_us": round(statistics.median(latencies) * 1e6, 1) if latencies else None,
        "latency_p99_us": round(latencies[int(0.99 * (len(latencies) - 1))] * 1e6, 1) if latencies else None,
        "peak_rss_per_body_kib": result.peak_rss_kib,
        "failures": len(result.failures),
        "first_failures": result.failures[:5],
    }
