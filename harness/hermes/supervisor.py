"""The supervisor between the harness and a Hermes run: the run never outlives the harness.

Run as a script (`python -I supervisor.py --status-fd N [--hold-fd M ...] -- ARGV...`), never imported
by the child it starts; it imports the standard library only, so `-I` can isolate it from the caller's
`PYTHON*` environment. Its stdin is the read end of a control pipe whose only write end the harness
holds; its stdout and stderr are the run's spool files, which the child inherits.

Why a supervisor and not a parent-death signal in the harness: `PR_SET_PDEATHSIG` set in a
`preexec_fn` is unsafe in a threaded parent (the auto-pilot kernel fans out in threads), it fires when
the *thread* that forked dies rather than the process, and it reaches only the direct child, not the
MCP servers Hermes starts in sessions of their own. A pipe's end of file is sound where those are not:
the kernel closes the harness's write end however the harness dies (SIGKILL included), and this
process, single-threaded, reads that as the order to stop the whole tree.

Invariants:
- This process is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so every descendant of the run that
  loses its parent is re-parented here, not to init: "everything below the supervisor" is the whole
  tree, found through /proc, whoever forked whom and whatever session each one started.
- The child gets `PR_SET_PDEATHSIG(SIGKILL)` (safe here: this process has one thread), so a supervisor
  killed outright still takes the child with it.
- Control bytes: `term` (cancel: SIGTERM to the child, which lets Hermes print its `session_id:` and
  write its record, then GRACE_SECONDS, then the sweep), `kill` (deadline or overflow: the sweep at
  once). End of file (the harness is gone) is a `term`.
- The sweep freezes (SIGSTOP) every process below this one, SIGKILLs them and their process groups,
  and reaps what it can within REAP_WAIT_SECONDS.
- Status lines on the status fd, in order: `pid <child pid>` (or `spawn-failed <reason>`), then
  `exit <code> <killed count>`. `<run dir>/child.pid` holds the child's pid for whoever settles an
  orphaned run later. Held fds (`--hold-fd`, the caller's locks) stay open until this process exits,
  so a lock the harness held is held until the tree is gone, even when the harness was killed.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import sys
import time
from collections.abc import Sequence

# Hermes's own SIGTERM grace is 1.5 s (HERMES_SIGTERM_GRACE): its tools' children get SIGTERM, then
# SIGKILL after 1 s, then it prints `session_id:`; this leaves it room for that on a loaded machine.
GRACE_SECONDS = 5.0
# A SIGKILLed process is gone within milliseconds; this only bounds a kernel that is wedged.
REAP_WAIT_SECONDS = 5.0
REAP_PAUSE_SECONDS = 0.01
# A tree that keeps forking while being frozen is walked at most this many times.
FREEZE_PASSES = 6
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CHILD_PID_FILE = "child.pid"


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


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_tree(root: int, *, include_root: bool = True) -> tuple[int, ...]:
    """Freeze, then SIGKILL, `root` (unless excluded), its descendants and their process groups."""
    if include_root:
        _signal(root, signal.SIGSTOP)
    frozen: set[int] = set()
    for _ in range(FREEZE_PASSES):
        fresh = descendants(root) - frozen
        if not fresh:
            break
        for pid in fresh:
            _signal(pid, signal.SIGSTOP)
        frozen |= fresh
    groups = {root} if include_root else set()
    for pid in frozen:
        try:
            if os.getpgid(pid) == pid:
                groups.add(pid)
        except ProcessLookupError:
            pass
    for pgid in groups:
        _kill_group(pgid)
    hit = frozen | ({root} if include_root else set())
    for pid in hit:
        _signal(pid, signal.SIGKILL)
    return tuple(sorted(hit))


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _child_setup(supervisor: int) -> None:
    """In the forked child, before exec: the dispositions this process ignores are inherited across
    exec, so they go back to their defaults (Hermes must see SIGTERM); then the parent-death signal,
    and a check that the parent did not die before it was set."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != supervisor:
        os._exit(137)


def _wait_readable(fds: Sequence[int], timeout_s: float | None) -> set[int]:
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN | select.POLLHUP)
    return {fd for fd, _ in poller.poll(None if timeout_s is None else int(timeout_s * 1000))}


def _reap_all(bound_s: float) -> None:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(REAP_PAUSE_SECONDS)


def _report(status_fd: int, line: str) -> None:
    try:
        os.write(status_fd, (line + "\n").encode())
    except OSError:
        pass  # the harness is gone; the run dir and the ledger's started record still tell the story


def _write_pid_file(run_dir: str, pid: int) -> None:
    temp = os.path.join(run_dir, f".{CHILD_PID_FILE}.tmp")
    with open(temp, "w") as f:
        f.write(f"{pid}\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, os.path.join(run_dir, CHILD_PID_FILE))


def _spawn(argv: Sequence[str], supervisor: int) -> int:
    """fork + exec of `argv` in a session of its own, stdin /dev/null, no descriptor but stdout and stderr
    inherited; OSError when it cannot be executed (the reason comes back through a close-on-exec pipe).
    By hand rather than with `subprocess`, whose import is most of this process's start-up time."""
    error_r, error_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(error_r)
            _child_setup(supervisor)
            os.setsid()
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.closerange(3, error_w)
            os.closerange(error_w + 1, os.sysconf("SC_OPEN_MAX"))
            os.execvp(argv[0], list(argv))  # noqa: S606 - Hermes's own argv, never a shell line
        except OSError as exc:
            os.write(error_w, (exc.strerror or str(exc)).encode())
        finally:
            os._exit(127)
    os.close(error_w)
    failure = os.read(error_r, 4096)
    os.close(error_r)
    if failure:
        os.waitpid(pid, 0)
        raise OSError(failure.decode(errors="replace"))
    return pid


def _reap(pid: int, pidfd: int) -> int:
    """The child's exit code (negative: the signal that ended it), once it has ended."""
    _wait_readable((pidfd,), REAP_WAIT_SECONDS)
    reaped, status = os.waitpid(pid, os.WNOHANG)
    return os.waitstatus_to_exitcode(status) if reaped else -signal.SIGKILL


def supervise(argv: Sequence[str], run_dir: str, status_fd: int) -> int:
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    try:
        child = _spawn(argv, os.getpid())
    except OSError as exc:
        _report(status_fd, f"spawn-failed {exc}")
        return 127
    _write_pid_file(run_dir, child)
    _report(status_fd, f"pid {child}")
    pidfd = os.pidfd_open(child)
    order = b""
    if pidfd not in _wait_readable((0, pidfd), None):
        order = os.read(0, 64) or b"term"  # end of file: the harness is gone
    if order and b"kill" not in order:
        _signal(child, signal.SIGTERM)
        _wait_readable((pidfd,), GRACE_SECONDS)
    # After an order the tree is stopped; after a child that exited on its own, what it left behind.
    killed = kill_tree(os.getpid(), include_root=False)
    code = _reap(child, pidfd)
    _reap_all(REAP_WAIT_SECONDS)
    _report(status_fd, f"exit {code} {len([p for p in killed if p != child])}")
    return 0


def main(args: Sequence[str]) -> int:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # orders come through the control pipe, never by signal
    split = list(args).index("--")
    options, argv = list(args[:split]), list(args[split + 1:])
    status_fd = int(options[options.index("--status-fd") + 1])
    run_dir = options[options.index("--run-dir") + 1]
    return supervise(argv, run_dir, status_fd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
