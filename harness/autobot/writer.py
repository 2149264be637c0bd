"""Where an autobot answer may be written (invariant 2 of the seed), and writing it without tearing.

Invariants:
- `write_to` resolves (symlinks followed) to a file under the project root or under a Hermes
  memories folder (`<root>/memories/`, `<root>/profiles/<p>/memories/`), and never into the
  harness's own state (`.agents/state/`) or a `.git` folder. Anything else is refused before Hermes runs.
- Configuration, secret, identity and cron files (`config.yaml`, `.env*`, `SOUL.md`, `auth.json`,
  anything under `cron/`, credential files) are refused unless the operator approved sensitive writes.
- A plain write is an atomic replace. An append takes the same sidecar lock Hermes's memory tool
  takes (`<file>.lock`, flock), re-reads the file under it, and atomically replaces it with the old
  text + separator + answer: a crash leaves the old file or the new one, never a torn one, and a
  concurrent Hermes memory write is never lost.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

from harness.autobot.intent import IntentError
from harness.autobot.materials import is_secret
from harness.durable import DurableWriteError, atomic_write, flocked, remove_stale_temps
from harness.settings import STATE_DIR

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


def resolve_write_target(write_to: str, project_root: Path, hermes_root: Path, approve_sensitive: bool,
                         allow_memories: bool = True) -> Path:
    """The absolute file to write; IntentError on `payload.write_to` when policy refuses it.

    `allow_memories=False` confines writes to the project root (auto-pilot's L2 band)."""
    given = Path(write_to).expanduser()
    try:
        target = (given if given.is_absolute() else project_root / given).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before Python 3.13
        raise IntentError(FIELD, f"{write_to} cannot be resolved: {exc}") from None
    root = project_root.resolve()
    inside = _under(target, root)
    if inside is None and allow_memories:
        inside = _memories_relative(target, hermes_root.expanduser().resolve())
    if inside is None or not inside.parts:
        where = "the project root {root} and the Hermes memories folders" if allow_memories else "the project root {root}"
        raise IntentError(FIELD, f"{write_to} resolves to {target}, outside {where.format(root=root)}; "
                                 f"nothing is written anywhere else")
    if target.is_dir():
        raise IntentError(FIELD, f"{target} is a directory")
    if ".git" in inside.parts or _under(target, root / STATE_DIR) is not None:
        raise IntentError(FIELD, f"{target} is inside .git or the harness's own state; never written")
    sensitive = (any(fnmatch.fnmatch(target.name, pattern) for pattern in SENSITIVE_NAMES)
                 or SENSITIVE_DIRS.intersection(inside.parts[:-1]) or is_secret(target))
    if sensitive and not approve_sensitive:
        raise IntentError(FIELD, f"{target} is a configuration, secret, identity or cron file; pass "
                                 f"--approve-sensitive-write to allow it")
    return target


def join_entry(existing: str, separator: str, body: str) -> str:
    """Hermes's memory format: entries joined by '\\n<separator>\\n', no trailing newline added."""
    body = body.strip("\n")
    if not existing:
        return body
    if existing.endswith("\n"):
        return f"{existing}{separator}\n{body}"
    return f"{existing}\n{separator}\n{body}"


def write_artifact(target: Path, text: str, separator: str | None) -> None:
    """Write (or append) the answer; raises DurableWriteError when the file system refuses."""
    if separator is None:
        atomic_write(target, (text if text.endswith("\n") else text + "\n").encode("utf-8"), _mode_of(target))
        return
    with flocked(target.with_name(target.name + ".lock")):
        remove_stale_temps(target)
        try:
            existing = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            existing = ""
        except UnicodeDecodeError:
            raise DurableWriteError(f"{target} is not UTF-8 text; refusing to append to it") from None
        except OSError as exc:
            raise DurableWriteError(f"cannot read {target}: {exc.strerror or exc}") from None
        atomic_write(target, join_entry(existing, separator, text).encode("utf-8"), _mode_of(target))


def _mode_of(target: Path) -> int:
    try:
        return os.stat(target).st_mode & 0o777
    except FileNotFoundError:
        return 0o644
