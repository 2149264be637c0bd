"""What mount made in a Hermes home, so that unmount takes away exactly that and nothing of the operator's.

The record is `<home>/.mafiabot-mount.json`: the paths mount created (the home itself, config.yaml, the
plugins folder, the session store's folder), the entries it mounted, the `mcp_discovery_timeout` it
added to a config that had none, and the sha256 of config.yaml as mount last wrote it.

Invariants:
- A path is recorded only when mount's write created it: what was there before is never listed, so
  never removed. A remount adds to the record, never takes from it.
- Unmount of the last entry the record lists removes, once the entry and the Level1 plugin are gone:
  config.yaml when mount created it and nothing is left in it (a backup is kept first when the file
  changed since mount last wrote it); the discovery timeout mount added, when it still holds that
  value; each recorded folder that is empty (deepest first); then the record, then the home when
  mount made it and it is empty. A folder holding anything (a session store, the operator's plugin)
  stays, and so does every backup (`config.yaml.before-mafiabot.*`: they may hold the operator's edits).
  An unmount before that only drops its entry from the record.
- A record that cannot be read is treated as listing nothing (so nothing more is removed), with a note:
  mount and unmount keep working on the config either way.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.durable import DurableWriteError, atomic_write
from harness.hermes.config_yaml import CONFIG_NAME
from harness.hermes_mount.config_file import HermesConfigError
from harness.hermes_mount.home import HermesHome
from harness.strict_json import InputRejected, read_bounded

RECORD_NAME = ".mafiabot-mount.json"
WRITTEN_BY = "mafiabot-harness mount; unmount of the last entry removes what it lists, where unchanged"
HOME = "."


def record_path(home: HermesHome) -> Path:
    return home.path / RECORD_NAME


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Made:
    paths: list[str] = field(default_factory=list)  # relative to the home ("." the home itself), as created
    entries: list[str] = field(default_factory=list)
    discovery: float | None = None  # the mcp_discovery_timeout mount added where the config had none
    config_sha256: str | None = None  # config.yaml as mount last wrote it
    note: str | None = None  # why the record was not usable

    def render(self) -> bytes:
        document: dict[str, Any] = {"written_by": WRITTEN_BY, "paths": self.paths, "entries": self.entries,
                                    "mcp_discovery_timeout": self.discovery, "config_sha256": self.config_sha256}
        return (json.dumps(document, indent=2) + "\n").encode()


def read_made(home: HermesHome) -> Made:
    path = record_path(home)
    if not os.path.lexists(path):
        return Made()
    try:  # a regular file only: a FIFO in its place must not hold unmount
        document = json.loads(read_bounded(path))
    except (InputRejected, ValueError) as exc:
        return Made(note=f"{path} cannot be read ({exc}): only the entry is taken away")
    paths, entries = (document.get(k) if isinstance(document, dict) else None for k in ("paths", "entries"))
    discovery = document.get("mcp_discovery_timeout") if isinstance(document, dict) else None
    config_sha = document.get("config_sha256") if isinstance(document, dict) else None
    if not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)
            and isinstance(entries, list) and all(isinstance(e, str) for e in entries)
            and (discovery is None or (isinstance(discovery, (int, float)) and not isinstance(discovery, bool)))
            and (config_sha is None or isinstance(config_sha, str))):
        return Made(note=f"{path} is not a record mount wrote: only the entry is taken away")
    # Only names inside the home: a hand-edited record must not reach outside it.
    inside = [p for p in paths if p == HOME or (not Path(p).is_absolute() and ".." not in Path(p).parts)]
    return Made(inside, entries, discovery, config_sha)


def absent(home: HermesHome, candidates: list[Path]) -> list[str]:
    """Which of `candidates` (paths in the home, parents first) do not exist yet, as the record names them."""
    return [HOME if path == home.path else str(path.relative_to(home.path))
            for path in candidates if not os.path.lexists(path)]


def record_mount(home: HermesHome, before: Made, created: list[str], name: str, added_discovery: float | None,
                 config_text: str | None) -> None:
    """Add what this mount made to the record (`config_text`: what it wrote to config.yaml, None if nothing)."""
    made = Made([*before.paths, *(p for p in created if p not in before.paths)],
                [*before.entries, *([name] if name not in before.entries else [])],
                before.discovery if added_discovery is None else added_discovery,
                digest(config_text) if config_text is not None else before.config_sha256)
    try:
        atomic_write(record_path(home), made.render())
    except DurableWriteError as exc:
        raise HermesConfigError(f"{exc}: the entry is mounted, but unmount will leave what mount made") from None


def leaves_it_all(made: Made, name: str) -> bool:
    """Whether unmounting `name` takes away the last entry mount recorded."""
    return name in made.entries and not [e for e in made.entries if e != name]


def remove_what_is_left(home: HermesHome, made: Made, name: str, config_text: str | None) -> list[str]:
    """After unmount's writes (`config_text`: what it wrote to config.yaml, None if nothing): the record without
    `name`, and, with the last entry, the recorded folders that are empty, the record and the home. Returns the
    folders removed, for the operator to read."""
    record = record_path(home)
    if made.note is not None:
        return []
    if not leaves_it_all(made, name):
        if name in made.entries:
            made.entries.remove(name)
            if config_text is not None:
                made.config_sha256 = digest(config_text)  # unmount's own write is not an operator's change
            atomic_write(record, made.render())
        return []
    removed = []
    record.unlink(missing_ok=True)
    folders = sorted((p for p in made.paths if p not in (HOME, CONFIG_NAME)), key=lambda p: -len(Path(p).parts))
    for relative in [*folders, *([HOME] if HOME in made.paths else [])]:
        folder = home.path / relative
        try:
            if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                folder.rmdir()
                removed.append(str(folder))
        except OSError:
            continue  # a folder that cannot go (or is no longer empty) stays: it is merely kept
    return removed
