"""Helpers of the delegation suites: bounded waits on FIFOs and processes, crashing a writer, reading a ledger.

Every wait here is event-driven (poll on a FIFO or a pidfd, or a child's exit) and bounded by a
named constant.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# Bounds for waits on helper processes: generous, since a loaded 2-core CI machine is slow to fork Python.
PROCESS_BOUND_S = 20.0


def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def wait_fifo(path: Path, bound_s: float = PROCESS_BOUND_S, what: str = "a line") -> str:
    """Read one line from a FIFO that a writer will open, failing after `bound_s`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(int(bound_s * 1000)):
            raise AssertionError(f"no {what} on {path} within {bound_s:g} s")
        return os.read(fd, 4096).decode()
    finally:
        os.close(fd)


def release_fifo(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(fd, b"go\n")
    finally:
        os.close(fd)


def wait_gone(pid: int, bound_s: float = PROCESS_BOUND_S) -> bool:
    """Whether `pid` has ended (exited or a zombie) within `bound_s`, by polling its pidfd."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(int(bound_s * 1000)))
    finally:
        os.close(fd)


def read_ledger_lines(project: Path) -> list[dict[str, Any]]:
    """Every record of the project's ledger, `started` records of the two-phase journal included."""
    path = project / ".agents" / "state" / "autobot-cost-ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def read_ledger(project: Path) -> list[dict[str, Any]]:
    """The ledger's settled records and refusals: one per delegation, without the `started` records."""
    return [record for record in read_ledger_lines(project) if record.get("status") != "started"]


# Python source run in a child: every os.write writes half its bytes, then the child SIGKILLs itself.
_KILL_ON_WRITE = """
import os, signal, sys
from pathlib import Path
real_write = os.write
def torn(fd, data):
    real_write(fd, bytes(data[: len(data) // 2]))
    os.kill(os.getpid(), signal.SIGKILL)
os.write = torn
"""


def killed_mid_write(statement: str, *args: str) -> int:
    """Run `statement` (after the import lines it needs) in a child killed at its first write; its status."""
    child = subprocess.run([sys.executable, "-c", _KILL_ON_WRITE + statement, *args], timeout=PROCESS_BOUND_S,
                           check=False)
    return child.returncode


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rsplit(b")", 1)[1].split()[1])


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


def processes_marked(marker: str) -> list[int]:
    """Live processes (zombies and this one left out) whose environment holds `marker` (`NAME=value`)."""
    wanted = marker.encode() + b"\0"
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as environ:
                if wanted not in environ.read() + b"\0":
                    continue
        except OSError:
            continue
        if not _is_zombie(int(entry.name)):
            found.append(int(entry.name))
    return found


def wait_all_gone(marker: str, bound_s: float = PROCESS_BOUND_S) -> list[int]:
    """Wait (on pidfds, within `bound_s` in all) until no process carries `marker`; the survivors."""
    deadline = time.monotonic() + bound_s
    while True:
        alive = processes_marked(marker)
        left = deadline - time.monotonic()
        if not alive or left <= 0:
            return alive
        for pid in alive:
            wait_gone(pid, max(0.0, deadline - time.monotonic()))
