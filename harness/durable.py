"""Crash-safe file primitives: atomic replace, locked fsynced line appends, holder-stamped locks.

Invariants:
- `atomic_write` leaves the target either as it was or wholly replaced: the bytes go to a temp
  file in the same directory, are fsynced, renamed over the target, and the directory is fsynced.
  A crash at any point leaves at most a stray temp file (named `.<name>.tmp-*`), never a torn target.
  Only a regular file (or a symbolic link, which is replaced itself) is ever replaced: a target that
  is a device, a FIFO, a socket or a folder is refused before anything is written, so `--output
  /dev/zero` run as root cannot turn the machine's device node into a file.
  With `sync=False` the rename is as atomic against a process's death, but nothing is fsynced: for
  files that only mirror what an fsynced record already holds (a `serve` job mirrors the ledger), where
  two fsyncs would cost more than the rest of the write (about 12 ms on this machine's disk).
- Blocking locks wait at most LOCK_WAIT_SECONDS, then raise `DurableWriteError` naming the file.
- `append_line` writes one whole line under an exclusive `flock` on the file itself, fsyncs it,
  and returns the line's 1-based number. A line torn by a crashed writer is first terminated with
  a newline, so later lines always start on a line of their own and stay parseable.
- `HolderLock` is non-blocking and never wipes the current holder's stamp: the file is opened
  without truncation, and only the process that won the `flock` rewrites it. The kernel drops a
  `flock` when its holder dies, so a dead holder never blocks anyone. The file is removed on
  release; an acquirer checks that the inode it locked is still the one at the path, which makes
  the removal safe against a contender that opened the old inode.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

TEMP_MARK = ".tmp-"
# A contender can lose the inode race only when a holder releases between its open and its flock;
# a handful of retries settles that; more would mean something is churning the file on purpose.
LOCK_INODE_RETRIES = 8
READ_CHUNK = 1 << 20
# Blocking locks guard critical sections of milliseconds (an append, a rename, a memory rewrite);
# a lock held this long means a wedged holder, and the caller is told instead of waiting forever.
LOCK_WAIT_SECONDS = 30.0
LOCK_RETRY_FIRST_S = 0.001
LOCK_RETRY_MAX_S = 0.05


class DurableWriteError(HarnessError):
    """A file the harness must write (ledger, artifact, lock, queue item) could not be written."""


def lock_exclusive(fd: int, path: Path, bound_s: float = LOCK_WAIT_SECONDS) -> None:
    """flock(LOCK_EX) on `fd`, waiting at most `bound_s` (flock itself has no timeout, so it is retried)."""
    deadline = time.monotonic() + bound_s
    pause = LOCK_RETRY_FIRST_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise DurableWriteError(f"{path} stayed locked for {bound_s:g} s; is a holder wedged?") from None
            time.sleep(pause)
            pause = min(pause * 2, LOCK_RETRY_MAX_S)


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def atomic_write(target: Path, data: bytes, mode: int = 0o644, *, sync: bool = True) -> None:
    """Replace `target` with `data` all at once (see the module invariants)."""
    directory = target.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise DurableWriteError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        atomic_write_at(dir_fd, target.name, data, mode, shown=target, sync=sync)
    finally:
        os.close(dir_fd)


def atomic_write_at(dir_fd: int, name: str, data: bytes, mode: int = 0o644, *, shown: Path | None = None,
                    sync: bool = True) -> None:
    """`atomic_write` of `name` inside the open folder `dir_fd`: nothing is resolved by path again, and
    the temp file is created without following a symlink, so a folder swapped meanwhile cannot redirect it."""
    temp = f".{name}{TEMP_MARK}{os.getpid()}-{time.monotonic_ns()}"
    try:
        _refuse_special(dir_fd, name, shown)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
        try:
            try:
                _write_all(fd, data)
                if sync:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError:
            try:
                os.unlink(temp, dir_fd=dir_fd)  # a half-written temp helps no one
            except FileNotFoundError:
                pass
            raise
        if sync:
            os.fsync(dir_fd)
    except OSError as exc:
        raise DurableWriteError(f"cannot write {shown or name}: {exc.strerror or exc}") from None


def _refuse_special(dir_fd: int, name: str, shown: Path | None) -> None:
    """DurableWriteError when `name` exists in `dir_fd` as anything a rename must not replace."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket")
        raise DurableWriteError(f"cannot write {shown or name}: it is {kind}, not a regular file; nothing was written")


def atomic_write_json(target: Path, document: Any, *, sync: bool = True) -> None:
    atomic_write(target, json_bytes(document), sync=sync)


def json_bytes(document: Any) -> bytes:
    """`document` as UTF-8 JSON, indented; a text holding a lone surrogate (which a JSON escape such as \\ud800 in
    a model's output decodes to, and UTF-8 cannot encode) is written with every non-ASCII character escaped."""
    try:
        return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(document, indent=2) + "\n").encode("ascii")


def remove_stale_temps(target: Path) -> list[Path]:
    """Delete temp files a crashed writer left beside `target`; call only while holding its lock."""
    try:
        dir_fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return []
    try:
        return [target.parent / name for name in remove_stale_temps_at(dir_fd, target.name)]
    finally:
        os.close(dir_fd)


def remove_stale_temps_at(dir_fd: int, name: str) -> list[str]:
    """`remove_stale_temps` for `name` inside the open folder `dir_fd`; returns the names removed."""
    removed = []
    prefix = f".{name}{TEMP_MARK}"
    for entry in os.listdir(dir_fd):
        if entry.startswith(prefix):
            try:
                os.unlink(entry, dir_fd=dir_fd)
                removed.append(entry)
            except FileNotFoundError:
                pass
    return removed


@contextmanager
def flocked(path: Path) -> Iterator[int]:
    """An exclusive `flock` (bounded wait) on a sidecar file that is never truncated nor removed."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise DurableWriteError(f"cannot open lock file {path}: {exc.strerror or exc}") from None
    try:
        lock_exclusive(fd, path)
        yield fd
    finally:
        os.close(fd)


def count_lines(fd: int, size: int) -> int:
    count = 0
    offset = 0
    while offset < size:
        chunk = os.pread(fd, min(READ_CHUNK, size - offset), offset)
        if not chunk:
            break
        count += chunk.count(b"\n")
        offset += len(chunk)
    return count


def append_line(path: Path, line: bytes) -> int:
    """Append `line` (no newline inside; one is added) and return its 1-based line number."""
    if b"\n" in line:
        raise ValueError("a ledger line must not contain a newline")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        created = not path.exists()
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise DurableWriteError(f"cannot open {path} for appending: {exc.strerror or exc}") from None
    try:
        lock_exclusive(fd, path)
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        lines_before = count_lines(fd, size) + (1 if torn else 0)
        _write_all(fd, (b"\n" if torn else b"") + line + b"\n")
        os.fsync(fd)
        if created:
            fsync_dir(path.parent)
        return lines_before + 1
    except OSError as exc:
        raise DurableWriteError(f"cannot append to {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Holder:
    """Who holds a `HolderLock`, as stamped in its file."""

    pid: int | None
    started_at: str | None
    label: str | None

    @classmethod
    def parse(cls, text: str) -> Holder:
        try:
            stamp = json.loads(text)
        except json.JSONDecodeError:
            return cls(None, None, None)
        if not isinstance(stamp, dict):
            return cls(None, None, None)
        pid = stamp.get("pid")
        return cls(pid if isinstance(pid, int) else None, _str_or_none(stamp.get("started_at")),
                   _str_or_none(stamp.get("label")))

    def to_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "started_at": self.started_at, "label": self.label}


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class LockHeld(HarnessError):
    """A non-blocking lock is held by someone else; `.holder` says who (as far as the file tells)."""

    def __init__(self, path: Path | str, holder: Holder) -> None:
        self.path = path
        self.holder = holder
        who = f"pid {holder.pid}" if holder.pid is not None else "an unknown process"
        since = f" since {holder.started_at}" if holder.started_at else ""
        super().__init__(f"{path} is held by {who}{since}")


class HolderLock:
    """A non-blocking exclusive lock file stamped with its holder (see the module invariants)."""

    def __init__(self, path: Path, label: str = "") -> None:
        self.path = path
        self.label = label
        self._fd: int | None = None

    def acquire(self, started_at: str) -> HolderLock:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DurableWriteError(f"cannot create {self.path.parent}: {exc.strerror or exc}") from None
        for _ in range(LOCK_INODE_RETRIES):
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = Holder.parse(_read_fd(fd))
                os.close(fd)
                raise LockHeld(self.path, holder) from None
            if self._still_at_path(fd):
                self._stamp(fd, started_at)
                self._fd = fd
                return self
            os.close(fd)
        raise DurableWriteError(f"lock file {self.path} keeps being replaced; giving up")

    @property
    def fd(self) -> int | None:
        """The locked descriptor while held (a child that inherits it holds the lock until it exits)."""
        return self._fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> HolderLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _open(self) -> int:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o644)
        except OSError as exc:
            raise DurableWriteError(f"cannot open lock file {self.path}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or a device cannot carry its holder's stamp
            os.close(fd)
            raise DurableWriteError(f"lock file {self.path} is not a regular file")
        return fd

    def _still_at_path(self, fd: int) -> bool:
        try:
            at_path = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (at_path.st_dev, at_path.st_ino) == (mine.st_dev, mine.st_ino)

    def _stamp(self, fd: int, started_at: str) -> None:
        stamp = json.dumps({"pid": os.getpid(), "started_at": started_at, "label": self.label})
        os.ftruncate(fd, 0)
        os.pwrite(fd, stamp.encode("utf-8") + b"\n", 0)


def is_flocked(path: Path, *, missing: bool) -> bool:
    """Whether someone holds an flock on `path` right now (a probe: taken and dropped at once);
    `missing` is the answer for a path that does not exist. Opened without blocking: a FIFO in a lock's
    place is a probe's answer (no one can hold it), never a wait for a writer that does not come."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return missing
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def read_holder(path: Path) -> Holder | None:
    """The stamp of a lock file, or None when there is no such file."""
    try:
        return Holder.parse(path.read_text(encoding="utf-8", errors="replace"))
    except FileNotFoundError:
        return None


def _read_fd(fd: int) -> str:
    return os.pread(fd, 4096, 0).decode("utf-8", errors="replace")
