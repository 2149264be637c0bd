"""Run one child process with a hard deadline, and leave nothing of it running afterwards.

Invariants:
- The child starts in a new session (its own process group); stdin is /dev/null; stdout and stderr
  go to spool files, not pipes, so a grandchild that inherits them can never make the wait hang,
  and an output of any size never blocks the child.
- Every wait is bounded: the run by `timeout_s`, the spool-size check by POLL_SLICE_SECONDS, the
  reaping of a killed child by REAP_WAIT_SECONDS. Waits are on a pidfd (the kernel says when the
  child ends), not sleeps.
- On timeout or overflow the whole tree is killed: descendants found through /proc are stopped
  first (so none can fork away), then everything found and the child's process group get SIGKILL.
  That covers grandchildren that moved to process groups of their own (Hermes starts MCP servers
  that way).
- After the child exits on its own, its process group gets SIGKILL before the child is reaped: the
  group id cannot have been reused while the leader is an unreaped zombie, so only leftovers of
  this run are hit.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError

# How often a running child's stdout spool is measured against the output cap.
POLL_SLICE_SECONDS = 0.25
# A SIGKILLed process is gone within milliseconds; this only bounds a kernel that is wedged.
REAP_WAIT_SECONDS = 5.0
# A tree that keeps forking while being frozen is walked at most this many times.
FREEZE_PASSES = 6
STDERR_TAIL_BYTES = 4096


class SpawnFailed(HarnessError):
    """The executable could not be started at all (missing, not executable, bad interpreter)."""


class ChildWedged(HarnessError):
    """A killed child could not be reaped within REAP_WAIT_SECONDS (a process stuck in the kernel)."""


@dataclass(frozen=True)
class Completed:
    exit_code: int | None
    timed_out: bool
    overflowed: bool
    stdout: bytes
    stderr_tail: bytes
    duration_s: float
    killed_pids: tuple[int, ...] = ()

    @property
    def signal(self) -> int | None:
        return -self.exit_code if self.exit_code is not None and self.exit_code < 0 else None


def run_bounded(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, spool_dir: Path,
                timeout_s: float, max_stdout_bytes: int) -> Completed:
    """Run `argv` to completion or to its deadline; see the module invariants."""
    out_path, err_path = spool_dir / "stdout", spool_dir / "stderr"
    started = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            child = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                     env=dict(env), cwd=cwd, start_new_session=True, close_fds=True)
        except OSError as exc:
            raise SpawnFailed(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
    timed_out = overflowed = False
    killed: tuple[int, ...] = ()
    pidfd = os.pidfd_open(child.pid)
    try:
        deadline = started + timeout_s
        while not _wait_readable(pidfd, min(POLL_SLICE_SECONDS, max(0.0, deadline - time.monotonic()))):
            if out_path.stat().st_size > max_stdout_bytes:
                overflowed = True
            elif time.monotonic() >= deadline:
                timed_out = True
            else:
                continue
            killed = kill_tree(child.pid)
            _wait_readable(pidfd, REAP_WAIT_SECONDS)
            break
        _kill_group(child.pid)
    finally:
        os.close(pidfd)
    try:
        exit_code = child.wait(timeout=REAP_WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        raise ChildWedged(f"{argv[0]} (pid {child.pid}) survived SIGKILL for {REAP_WAIT_SECONDS:g} s") from None
    duration = time.monotonic() - started
    stdout = _read_head(out_path, max_stdout_bytes)
    overflowed = overflowed or out_path.stat().st_size > max_stdout_bytes
    return Completed(exit_code=None if timed_out or overflowed else exit_code, timed_out=timed_out,
                     overflowed=overflowed, stdout=stdout, stderr_tail=_read_tail(err_path, STDERR_TAIL_BYTES),
                     duration_s=duration, killed_pids=killed)


def _wait_readable(fd: int, timeout_s: float) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(int(timeout_s * 1000)))


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def descendants(root: int) -> set[int]:
    """Every live process whose parent chain leads to `root` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        parent = _parent_of(int(entry.name))
        if parent is not None:
            children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    frontier = [root]
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]) if len(fields) > 1 else None


def kill_tree(root: int) -> tuple[int, ...]:
    """Freeze, then SIGKILL, `root`, its descendants and their process groups; returns the pids hit."""
    _signal(root, signal.SIGSTOP)
    frozen: set[int] = set()
    for _ in range(FREEZE_PASSES):
        fresh = descendants(root) - frozen
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
        frozen |= fresh
    groups = {root}
    for pid in frozen:
        try:
            if os.getpgid(pid) == pid:
                groups.add(pid)
        except ProcessLookupError:
            pass
    for pgid in groups:
        _kill_group(pgid)
    for pid in frozen | {root}:
        _signal(pid, signal.SIGKILL)
    return tuple(sorted(frozen | {root}))


def _read_head(path: Path, limit: int) -> bytes:
    with open(path, "rb") as f:
        return f.read(limit)


def _read_tail(path: Path, limit: int) -> bytes:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(max(0, size - limit))
        return f.read()
