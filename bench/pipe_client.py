"""The one client every server in a comparison is driven by: plain pipes, buffered reads.

Invariants:
- Both directions are buffered (`bufsize=-1`): `readline` reads the pipe in large chunks
  (an unbuffered pipe makes it one syscall per byte) and every `send` ends in `flush`, so
  one request is one write(2).
- Every blocking call is bounded by a watchdog: when a client's deadline passes, its server
  is SIGKILLed, which turns any blocked read into EOF and any blocked write into EPIPE.
  Nothing here can hang past the deadline it was given.
- `close` is the MCP stdio shutdown: close stdin, wait `EXIT_GRACE`, then SIGKILL.
- CPU time is read from `/proc/<pid>/task/*/schedstat` (nanoseconds, every live thread),
  not from clock-tick counters (10 ms granularity).
- `pinned` restores every affinity it changed, even when the measurement inside it fails.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

# The body leaves within milliseconds of EOF; the SDK server takes ~0.15 s. 5 s is a hang.
EXIT_GRACE = 5.0
# Outer bound for one measurement's conversation with one server (watchdog default).
DEFAULT_DEADLINE = 600.0


class ServerGone(RuntimeError):
    """The server closed its stdout (it exited, or the watchdog killed it)."""


class PipeClient:
    """One server process over pipes; not thread-safe except `send_all` vs `recv`."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 deadline: float = DEFAULT_DEADLINE, stderr_path: Path | None = None) -> None:
        # Held for the child's life and closed with it.
        stderr = open(stderr_path, "ab") if stderr_path is not None else subprocess.DEVNULL  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=stderr, bufsize=-1,
                                         env=dict(env) if env is not None else None)
        finally:
            if stderr is not subprocess.DEVNULL:
                stderr.close()
        self.timed_out = False
        self._watchdog = threading.Timer(deadline, self._expire)
        self._watchdog.daemon = True
        self._watchdog.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _expire(self) -> None:
        self.timed_out = True
        self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass  # it exited between poll and kill: nothing left to stop

    def send(self, line: bytes) -> None:
        """Write one line (LF included by the caller) and flush it."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def send_all(self, data: bytes) -> None:
        """Write a block of many lines at once (blocks while the server's stdin is full)."""
        try:
            self.send(data)
        except (BrokenPipeError, ValueError):
            pass  # the server died or was killed; the reader reports it as ServerGone

    def recv(self) -> bytes:
        """The next line, LF included; ServerGone at EOF."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise ServerGone(f"{self.proc.args[0]} closed stdout"
                             + (" (watchdog deadline passed)" if self.timed_out else ""))
        return line

    def exchange(self, line: bytes) -> bytes:
        self.send(line)
        return self.recv()

    def cpu_seconds(self) -> float:
        """CPU time (user + system) of the server's live threads so far."""
        return task_cpu_seconds(self.pid)

    def close(self, grace: float = EXIT_GRACE) -> int:
        """Close stdin, wait up to `grace`, then SIGKILL; returns the exit status."""
        self._watchdog.cancel()
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except BrokenPipeError:
            pass  # already gone: only the exit status is left to collect
        try:
            status = self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.kill()
            status = self.proc.wait(timeout=grace)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return status

    def __enter__(self) -> PipeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def task_cpu_seconds(pid: int) -> float:
    """Sum of the first schedstat field (ns on CPU) over the process's live threads."""
    total = 0
    tasks = Path(f"/proc/{pid}/task")
    for task in tasks.iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended while we looked
    return total / 1e9


def rss_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a live process, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


def set_affinity(pid: int, cpus: set[int]) -> None:
    """Move every current thread of `pid` to `cpus` (threads started later inherit it)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            os.sched_setaffinity(int(task.name), cpus)
        except (ProcessLookupError, FileNotFoundError):
            continue  # a thread that ended while we looked


@contextmanager
def pinned(client_cpus: set[int], servers: Iterable[int], server_cpus: set[int]) -> Iterator[None]:
    """This process on `client_cpus` and the server pids on `server_cpus`, for the block's length."""
    everything = os.sched_getaffinity(0)
    pids = list(servers)
    set_affinity(os.getpid(), client_cpus)
    for pid in pids:
        set_affinity(pid, server_cpus)
    try:
        yield
    finally:
        for pid in [os.getpid(), *pids]:
            try:
                set_affinity(pid, everything)
            except FileNotFoundError:
                continue  # that server already exited
