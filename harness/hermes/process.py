"""Run one child process with a hard deadline, and leave nothing of it running afterwards.

Invariants:
- The child never outlives the harness: it is started by the supervisor (`supervisor.py`, whose
  docstring says why a supervisor and not a parent-death signal), which holds the read end of a
  control pipe whose only write end is ours. However the harness ends — returning, raising, SIGKILL —
  the supervisor sees end of file and stops the whole tree. `hold_fds` (the caller's locks) are held
  by the supervisor too, so they stay held until the tree is gone.
- The child runs in a new session; stdin is /dev/null; stdout and stderr go to spool files in
  `spool_dir`, not pipes, so a grandchild that inherits them can never make the wait hang, and an
  output of any size never blocks the child. They are measured and read through descriptors opened
  before the child starts, never by path: a child that swaps a spool for a FIFO or another file changes
  nothing of what is read. Both spools are capped: past `max_stdout_bytes` or
  `max_stderr_bytes` the tree is killed (`overflowed`).
- Every wait is bounded: the supervisor's start by SUPERVISOR_START_SECONDS, the run by `timeout_s`,
  the spool-size and cancellation checks by POLL_SLICE_SECONDS, the end of a stopped tree by
  STOP_WAIT_SECONDS. Waits are on the supervisor's status pipe (it says when the child ended), not sleeps.
- On timeout or overflow the whole tree is killed at once (frozen, then SIGKILL, process groups
  included). On cancellation (`cancellation.requested()`, `Cancelled` raised in this wait, or the
  caller's `stop()` for this run alone) the
  child gets SIGTERM first, so Hermes prints its session id and writes its record, then the tree is
  killed; the result says `cancelled` and the caller ledgers it. Leftovers of a child that exited on its
  own are killed too.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.hermes import cancellation
from harness.hermes.supervisor import GRACE_SECONDS, REAP_WAIT_SECONDS

SUPERVISOR = Path(__file__).with_name("supervisor.py")
# How often a running child's spools are measured against their caps and cancellation is checked.
POLL_SLICE_SECONDS = 0.25
# Python starting the supervisor on a loaded 2-core machine takes well under a second; this bounds a wedge.
SUPERVISOR_START_SECONDS = 20.0
# Grace for Hermes after SIGTERM, then the sweep and the reaping, plus slack for a loaded machine.
STOP_WAIT_SECONDS = GRACE_SECONDS + 2 * REAP_WAIT_SECONDS + 5.0
STDERR_TAIL_BYTES = 4096

__all__ = ["ChildWedged", "Completed", "SpawnFailed", "run_bounded"]


class SpawnFailed(HarnessError):
    """The executable could not be started at all (missing, not executable, bad interpreter)."""


class ChildWedged(HarnessError):
    """A stopped child's supervisor did not report its end within STOP_WAIT_SECONDS."""


@dataclass(frozen=True)
class Completed:
    exit_code: int | None
    timed_out: bool
    overflowed: bool
    stdout: bytes
    stderr_tail: bytes
    duration_s: float
    cancelled: int | None = None
    overflowed_stream: str | None = None
    child_pid: int | None = None
    killed_count: int = 0

    @property
    def signal(self) -> int | None:
        return -self.exit_code if self.exit_code is not None and self.exit_code < 0 else None


class _Status:
    """The supervisor's status pipe, read line by line."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""

    def line(self, timeout_s: float) -> str | None:
        """The next line; "" at end of file; None when none came within `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not _wait_readable(self.fd, left):
                return None
            with cancellation.shielded():  # a cancel may cut the wait, never lose a line read from the pipe
                chunk = os.read(self.fd, 4096)
                self.buffer += chunk
            if not chunk:
                return ""
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("utf-8", errors="replace")


def run_bounded(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, spool_dir: Path,
                timeout_s: float, max_stdout_bytes: int, max_stderr_bytes: int | None = None,
                hold_fds: Sequence[int] = (), stop: Callable[[], bool] | None = None) -> Completed:
    """Run `argv` to completion, to its deadline or to cancellation; see the module invariants."""
    max_stderr_bytes = max_stdout_bytes if max_stderr_bytes is None else max_stderr_bytes
    out_path, err_path = spool_dir / "stdout", spool_dir / "stderr"
    started = time.monotonic()
    control_r, control_w = os.pipe()
    status_r, status_w = os.pipe()
    spools: list[int] = []
    try:
        # Shielded: a cancel that interrupted Popen after its fork would leave a supervisor we know nothing of.
        with cancellation.shielded(), open(out_path, "wb") as out, open(err_path, "wb") as err:
            # Read back through descriptors taken before anything runs: the child may write in the run folder
            # (a file or terminal tool), and a path it swapped for a FIFO or another file must not be what is read.
            spools = [os.open(out_path, os.O_RDONLY | os.O_CLOEXEC), os.open(err_path, os.O_RDONLY | os.O_CLOEXEC)]
            supervisor = subprocess.Popen(
                [sys.executable, "-I", "-S", str(SUPERVISOR), "--status-fd", str(status_w), "--run-dir", str(spool_dir),
                 "--", *argv], stdin=control_r, stdout=out, stderr=err, env=dict(env), cwd=cwd,
                start_new_session=True, close_fds=True, pass_fds=(status_w, *hold_fds))
    except OSError as exc:
        for fd in (control_r, control_w, status_r, status_w, *spools):
            os.close(fd)
        raise SpawnFailed(f"cannot start the supervisor for {argv[0]}: {exc.strerror or exc}") from None
    os.close(control_r)
    os.close(status_w)
    status = _Status(status_r)
    try:
        return _supervised(argv, status, control_w, started, timeout_s, spools[0], spools[1],
                           max_stdout_bytes, max_stderr_bytes, stop)
    finally:
        os.close(control_w)  # end of file: whatever happened above, the supervisor stops the tree
        os.close(status_r)
        for fd in spools:
            os.close(fd)
        try:
            supervisor.wait(timeout=STOP_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            pass  # it is past its own bounds; it still dies on its own, and never before the tree


def _supervised(argv: Sequence[str], status: _Status, control_w: int,
                started: float, timeout_s: float, out_fd: int, err_fd: int, max_stdout_bytes: int,
                max_stderr_bytes: int, stop: Callable[[], bool] | None) -> Completed:
    child_pid: int | None = None
    deadline = started + timeout_s
    timed_out = False
    overflowed: str | None = None
    cancelled: int | None = None
    ended: str | None = None
    try:
        first = status.line(SUPERVISOR_START_SECONDS)
        if first is None or not first.startswith("pid "):
            reason = first[len("spawn-failed "):] if first and first.startswith("spawn-failed ") else (
                f"its supervisor said {first!r}" if first else "its supervisor ended without starting it")
            raise SpawnFailed(f"cannot start {argv[0]}: {reason}")
        child_pid = int(first.split()[1])
        while True:
            ended = status.line(min(POLL_SLICE_SECONDS, max(0.0, deadline - time.monotonic())))
            if ended is not None:
                break
            cancelled = cancellation.requested()
            if cancelled is None and stop is not None and stop():
                cancelled = cancellation.CALLER_REQUEST
            if os.fstat(out_fd).st_size > max_stdout_bytes:
                overflowed = "stdout"
            elif os.fstat(err_fd).st_size > max_stderr_bytes:
                overflowed = "stderr"
            elif time.monotonic() >= deadline:
                timed_out = True
            elif cancelled is None:
                continue
            break
    except cancellation.Cancelled as exc:
        if ended is None:  # a run already reported ended is not cancelled: its answer stands
            cancelled = exc.signum
    if ended is None:
        with cancellation.shielded():
            order = b"term\n" if cancelled is not None and not (timed_out or overflowed) else b"kill\n"
            try:
                os.write(control_w, order)
            except BrokenPipeError:
                pass  # the supervisor already ended; its last line is still in the pipe
            ended = status.line(STOP_WAIT_SECONDS)
            if ended is not None and ended.startswith("pid "):
                child_pid = int(ended.split()[1])
                ended = status.line(STOP_WAIT_SECONDS)
    if not ended or not ended.startswith("exit "):
        raise ChildWedged(f"{argv[0]} (pid {child_pid}) was not reported ended within {STOP_WAIT_SECONDS:g} s")
    _, code_text, killed_text = ended.split()
    exit_code = int(code_text)
    duration = time.monotonic() - started
    stdout = os.pread(out_fd, max_stdout_bytes, 0)
    if overflowed is None and os.fstat(out_fd).st_size > max_stdout_bytes:
        overflowed = "stdout"
    elif overflowed is None and os.fstat(err_fd).st_size > max_stderr_bytes:
        overflowed = "stderr"
    return Completed(exit_code=None if timed_out or overflowed else exit_code, timed_out=timed_out,
                     overflowed=overflowed is not None, stdout=stdout,
                     stderr_tail=_read_tail(err_fd, STDERR_TAIL_BYTES), duration_s=duration,
                     cancelled=cancelled if not (timed_out or overflowed) else None, overflowed_stream=overflowed,
                     child_pid=child_pid, killed_count=int(killed_text))


def _wait_readable(fd: int, timeout_s: float) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    return bool(poller.poll(int(timeout_s * 1000)))


def _read_tail(fd: int, limit: int) -> bytes:
    size = os.fstat(fd).st_size
    return os.pread(fd, limit, max(0, size - limit))
