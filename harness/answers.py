"""A sub-agent's answer as a caller receives it: at most `max_chars` of it, the cut said, the whole kept in a file.

Invariants:
- `shown` is never longer than `max_chars`, the cut marker included; the marker states the whole answer's
  length, and the envelope names the file that holds all of it (`Bounded.to_fields`).
- The whole answer is kept only when it was cut (otherwise the envelope already holds all of it), by an
  atomic write under the project's state folder (`answers/`), at most MAX_KEPT_CHARS of it (the transport
  stops reading Hermes past DEFAULT_MAX_OUTPUT_BYTES anyway, so this ceiling holds whatever a caller passes),
  and the folder keeps the MAX_KEPT_FILES newest files: older ones are pruned after each write.
- Keeping is best effort: a state folder that cannot be written leaves `file` None and says why in
  `keep_error`; the caller's answer is never lost for it (it was in hand), and nothing raises.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.durable import DurableWriteError, atomic_write
from harness.hermes.transport import DEFAULT_MAX_OUTPUT_BYTES

# The seed intent's default `max_chars`: what a caller gets when it names no bound.
DEFAULT_MAX_CHARS = 4000
ANSWERS_DIR = "answers"
MAX_KEPT_CHARS = DEFAULT_MAX_OUTPUT_BYTES
# A few days of busy delegation; each file is at most the transport's cap, most a few kB.
MAX_KEPT_FILES = 200
MARKER = "\n…[cut: {total} characters in all]"


@dataclass(frozen=True)
class Bounded:
    shown: str
    total_chars: int
    file: str | None = None
    keep_error: str | None = None

    @property
    def cut(self) -> bool:
        return len(self.shown) < self.total_chars

    def to_fields(self, name: str) -> dict[str, Any]:
        """`name` (the bounded text), `name_cut`, and when cut `name_file` (and `name_keep_error`)."""
        fields: dict[str, Any] = {name: self.shown, f"{name}_cut": self.cut}
        if self.cut:
            fields[f"{name}_file"] = self.file
            if self.keep_error:
                fields[f"{name}_keep_error"] = self.keep_error
        return fields


def cut(text: str, max_chars: int) -> str:
    """`text` if it fits `max_chars`, else its head and the marker, together at most `max_chars` long."""
    if len(text) <= max_chars:
        return text
    marker = MARKER.format(total=len(text))
    if len(marker) >= max_chars:
        return marker[:max_chars]
    return text[:max_chars - len(marker)] + marker


def cut_items(items: list[str], max_chars: int) -> list[str]:
    """`items` whole while they fit `max_chars` in all; the first that does not is cut to what is left (the
    marker counted), and the rest are left out."""
    kept: list[str] = []
    left = max_chars
    for item in items:
        if len(item) > left:
            if left > 0:
                kept.append(cut(item, left))
            break
        kept.append(item)
        left -= len(item)
    return kept


def bounded(text: str, max_chars: int, state_dir: Path, name: str) -> Bounded:
    """The answer cut to `max_chars`; when cut, the whole kept at `<state_dir>/answers/<name>.txt`."""
    shown = cut(text, max_chars)
    if len(shown) == len(text):
        return Bounded(shown, len(text))
    folder = state_dir / ANSWERS_DIR
    path = folder / f"{name}.txt"
    try:
        atomic_write(path, text[:MAX_KEPT_CHARS].encode("utf-8", errors="surrogateescape"))
    except DurableWriteError as exc:
        return Bounded(shown, len(text), keep_error=str(exc))
    prune(folder, MAX_KEPT_FILES)
    return Bounded(shown, len(text), str(path))


def prune(folder: Path, keep: int) -> None:
    """Remove all but the `keep` newest files of `folder` (by modification time); races are harmless."""
    try:
        entries = [(entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(folder) if entry.is_file()]
    except OSError:
        return
    for _, path in sorted(entries, reverse=True)[keep:]:
        try:
            os.unlink(path)
        except OSError:
            pass
