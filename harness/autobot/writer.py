"""Where an autobot answer may be written (invariant 2 of the seed), how much of it, and writing it without tearing.

Invariants:
- `write_to` resolves (symlinks followed) to a file under the project root or under a Hermes
  memories folder (`<root>/memories/`, `<root>/profiles/<p>/memories/`), and never into the
  harness's own state (`.agents/state/`) or a `.git` folder. Anything else is refused before Hermes runs,
  and so is a target that exists and is not a regular file (a folder, a FIFO, a device, a socket).
- Configuration, secret, identity and cron files (`config.yaml`, `.env*`, `SOUL.md`, `auth.json`,
  anything under `cron/`, credential files) are refused unless the operator approved sensitive writes.
- Confinement holds at the moment of writing, not only at validation: the write walks from `/` to
  the target's folder one component at a time with `O_NOFOLLOW` directory descriptors
  (`os.open(dir_fd=...)`), so a folder swapped for a symlink during the run is refused, never
  followed out of the allowed root; the target, its temp file and its lock are opened the same way,
  and anything at the target that is not a regular file is refused (opened `O_NONBLOCK`, so a FIFO
  never blocks the write).
- What is written is bounded (`WriteCap`): at most WRITE_CAP_MULTIPLE x `max_chars` characters of
  answer, and a Hermes memory file (MEMORY.md, USER.md under a memories folder) never grows past
  Hermes's own limit for it, which is the whole file's size (HERMES_MEMORY_LIMITS). Past either,
  `AnswerTooLong` and nothing is written.
- A plain write is an atomic replace. An append takes the same sidecar lock Hermes's memory tool
  takes (`<file>.lock`, flock), re-reads the file under it, and atomically replaces it with the old
  text + separator + answer: a crash leaves the old file or the new one, never a torn one, and a
  concurrent Hermes memory write is never lost.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from harness.autobot.intent import IntentError
from harness.autobot.materials import is_secret
from harness.durable import DurableWriteError, atomic_write_at, lock_exclusive, remove_stale_temps_at
from harness.errors import HarnessError
from harness.settings import STATE_DIR

# max_chars is the prompt's soft cap (the seed's); a model overshoots it, but not by 4x unless it runs away.
WRITE_CAP_MULTIPLE = 4
# Hermes's own limits on its memory files (memory.memory_char_limit and user_char_limit, hermes-agent
# 0.19.0 defaults): the whole file, entries and separators included, is loaded into every prompt.
HERMES_MEMORY_LIMITS = {"MEMORY.md": 2200, "USER.md": 1375}
# An append re-reads the file it extends; one larger than this is not a memory or notes file.
MAX_APPEND_BASE_BYTES = 16 << 20

SENSITIVE_NAMES = ("config.yaml", "config.yml", "SOUL.md", "auth.json", ".env", ".env.*", "*.env", "AGENTS.md")
SENSITIVE_DIRS = frozenset({"cron"})
FIELD = "payload.write_to"


def _under(path: Path, root: Path) -> Path | None:
    try:
        return path.relative_to(root)
    except ValueError:
        return None


def _memories_relative(target: Path, hermes_root: Path) -> Path | None:
    rel = _under(target, hermes_root)
    if rel is None:
        return None
    parts = rel.parts
    if len(parts) >= 2 and parts[0] == "memories":
        return Path(*parts[1:])
    if len(parts) >= 4 and parts[0] == "profiles" and parts[2] == "memories":
        return Path(*parts[3:])
    return None


class AnswerTooLong(HarnessError):
    """The answer (or the memory file it would make) is past its cap; nothing was written."""


@dataclass(frozen=True)
class WriteTarget:
    """A checked write target: an allowed root (resolved when checked) and the path below it."""

    root: Path
    relative: Path
    memories: bool = False

    @property
    def path(self) -> Path:
        return self.root / self.relative

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    @classmethod
    def of(cls, target: WriteTarget | Path) -> WriteTarget:
        """A bare path is confined to its own (resolved) folder."""
        if isinstance(target, WriteTarget):
            return target
        return cls(Path(target).parent.resolve(), Path(Path(target).name))


@dataclass(frozen=True)
class WriteCap:
    """How much may be written: answer characters, and for a Hermes memory file the whole file's."""

    answer_chars: int
    file_chars: int | None = None

    @classmethod
    def for_target(cls, target: WriteTarget, max_chars: int) -> WriteCap:
        memory_limit = HERMES_MEMORY_LIMITS.get(target.relative.name) if target.memories else None
        return cls(WRITE_CAP_MULTIPLE * max_chars, memory_limit)


def resolve_write_target(write_to: str, project_root: Path, hermes_root: Path, approve_sensitive: bool,
                         allow_memories: bool = True) -> WriteTarget:
    """The absolute file to write; IntentError on `payload.write_to` when policy refuses it.

    `allow_memories=False` confines writes to the project root (auto-pilot's L2 band)."""
    given = Path(write_to).expanduser()
    try:
        target = (given if given.is_absolute() else project_root / given).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before Python 3.13
        raise IntentError(FIELD, f"{write_to} cannot be resolved: {exc}") from None
    root = project_root.resolve()
    inside = _under(target, root)
    allowed_root, memories = root, False
    if inside is None and allow_memories:
        home = hermes_root.expanduser().resolve()
        inside = _memories_relative(target, home)
        if inside is not None:
            allowed_root, memories = target.parents[len(inside.parts) - 1], True
    if inside is None or not inside.parts:
        where = ("the project root {root} and the Hermes memories folders" if allow_memories
                 else "the project root {root}")
        raise IntentError(FIELD, f"{write_to} resolves to {target}, outside {where.format(root=root)}; "
                                 f"nothing is written anywhere else")
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise IntentError(FIELD, f"cannot check {target}: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise IntentError(FIELD, f"{target} is {_kind(mode)}, not a regular file")
    if ".git" in inside.parts or _under(target, root / STATE_DIR) is not None:
        raise IntentError(FIELD, f"{target} is inside .git or the harness's own state; never written")
    sensitive = (any(fnmatch.fnmatch(target.name, pattern) for pattern in SENSITIVE_NAMES)
                 or SENSITIVE_DIRS.intersection(inside.parts[:-1]) or is_secret(target))
    if sensitive and not approve_sensitive:
        raise IntentError(FIELD, f"{target} is a configuration, secret, identity or cron file; pass "
                                 f"--approve-sensitive-write to allow it")
    return WriteTarget(allowed_root, target.relative_to(allowed_root), memories)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def join_entry(existing: str, separator: str, body: str) -> str:
    """Hermes's memory format: entries joined by '\\n<separator>\\n', no trailing newline added."""
    body = body.strip("\n")
    if not existing:
        return body
    if existing.endswith("\n"):
        return f"{existing}{separator}\n{body}"
    return f"{existing}\n{separator}\n{body}"


def write_artifact(target: WriteTarget | Path, text: str, separator: str | None, cap: WriteCap | None = None) -> None:
    """Write (or append) the answer, confined (see the module invariants); raises DurableWriteError when the
    file system refuses or the target is not what it was checked to be, AnswerTooLong past `cap`."""
    target = WriteTarget.of(target)
    if cap is not None and len(text) > cap.answer_chars:
        raise AnswerTooLong(f"the answer is {len(text)} characters; at most {cap.answer_chars} are written "
                            f"({WRITE_CAP_MULTIPLE} x max_chars)")
    dir_fd = _open_folder(target)
    try:
        name = target.relative.name
        if separator is None:
            body = text if text.endswith("\n") else text + "\n"
            _check_file_cap(target, body, cap)
            _check_regular(dir_fd, name, target)
            atomic_write_at(dir_fd, name, body.encode("utf-8"), _mode_at(dir_fd, name), shown=target.path)
            return
        lock_fd = _open_regular(dir_fd, f"{name}.lock", target, create=True)
        try:
            lock_exclusive(lock_fd, target.path.with_name(f"{name}.lock"))
            remove_stale_temps_at(dir_fd, name)
            joined = join_entry(_read_existing(dir_fd, name, target), separator, text)
            _check_file_cap(target, joined, cap)
            atomic_write_at(dir_fd, name, joined.encode("utf-8"), _mode_at(dir_fd, name), shown=target.path)
        finally:
            os.close(lock_fd)
    finally:
        os.close(dir_fd)


def _check_file_cap(target: WriteTarget, content: str, cap: WriteCap | None) -> None:
    if cap is not None and cap.file_chars is not None and len(content) > cap.file_chars:
        raise AnswerTooLong(f"{target.path} would hold {len(content)} characters; Hermes's limit for its "
                            f"{target.relative.name} is {cap.file_chars}")


_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_folder(target: WriteTarget) -> int:
    """A descriptor of the target's folder, reached from `/` without following any symlink."""
    parts = [*target.root.parts[1:], *target.relative.parts[:-1]]
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    walked = Path("/")
    try:
        for index, part in enumerate(parts):
            walked = walked / part
            try:
                next_fd = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if index < len(target.root.parts) - 1:
                    raise DurableWriteError(f"{walked} is gone; {target.path} is not written") from None
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                next_fd = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = next_fd
        return fd
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise DurableWriteError(f"{walked} is no longer a folder (a symlink or a file was put there); "
                                    f"{target.path} is not written, nothing is followed out of {target.root}") from None
        raise DurableWriteError(f"cannot open {walked}: {exc.strerror or exc}") from None


def _open_regular(dir_fd: int, name: str, target: WriteTarget, *, create: bool = False) -> int:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    if create:
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    shown = target.path.with_name(name)
    try:
        fd = os.open(name, flags, 0o644, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DurableWriteError(f"{shown} is a symlink; it is never followed") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise DurableWriteError(f"{shown} is {_kind(mode)}; only regular files are written")
    return fd


def _check_regular(dir_fd: int, name: str, target: WriteTarget) -> None:
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise DurableWriteError(f"{target.path} is {_kind(mode)}; only regular files are written")


def _read_existing(dir_fd: int, name: str, target: WriteTarget) -> str:
    try:
        fd = _open_regular(dir_fd, name, target)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise DurableWriteError(f"cannot read {target.path}: {exc.strerror or exc}") from None
    try:
        if os.fstat(fd).st_size > MAX_APPEND_BASE_BYTES:
            raise DurableWriteError(f"{target.path} is larger than {MAX_APPEND_BASE_BYTES} bytes; refusing to "
                                    f"append to it")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise DurableWriteError(f"{target.path} is not UTF-8 text; refusing to append to it") from None


def _mode_at(dir_fd: int, name: str) -> int:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode & 0o777
    except FileNotFoundError:
        return 0o644
