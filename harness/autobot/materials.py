"""Reading an intent's `target_paths` into prompt materials.

Invariants:
- A path is relative to `project_root` unless absolute; each file contributes at most
  MATERIAL_CAP_BYTES, cut on a UTF-8 boundary, and a cut is marked as such (`truncated`).
- Nothing is silently dropped: every path gets a `Material` whose `status` says what happened
  (`read`, `truncated`, `missing`, `unreadable`, `binary`, `refused`, `duplicate`), and the envelope
  lists them all.
- Binary files (a NUL byte, or not UTF-8) are refused rather than mangled; files that hold secrets
  (`.env*`, SSH and cloud credentials, Hermes's `auth.json`) are refused rather than sent to a model, and so
  is anything under /proc, /sys or /dev (a process's environment is a "regular file" there).
- A path is judged on what it resolves to when it is read (a queued intent is read when it is drained), and
  read only as a regular file opened without waiting: a FIFO or device put there meanwhile is unreadable,
  never waited on.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.strict_json import InputRejected, open_regular

MATERIAL_CAP_BYTES = 32 * 1024
BINARY_SNIFF_BYTES = 8192
SECRET_NAMES = (".env", ".env.*", "*.env", "auth.json", "id_rsa*", "id_ed25519*", "id_ecdsa*", "*.pem", "*.key",
                ".netrc", ".pgpass", ".npmrc", ".pypirc", "credentials", "credentials.json")
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker"})
SYSTEM_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))


@dataclass(frozen=True)
class Material:
    given: str
    path: Path
    status: str
    size: int | None = None
    text: str = ""
    note: str = ""

    @property
    def included(self) -> bool:
        return self.status in ("read", "truncated")

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.given, "status": self.status, "bytes": self.size,
                "bytes_used": len(self.text.encode("utf-8")) if self.included else 0,
                "note": self.note or None}


def is_secret(path: Path) -> bool:
    if any(part in SECRET_DIRS for part in path.parts):
        return True
    return any(fnmatch.fnmatch(path.name, pattern) for pattern in SECRET_NAMES)


def read_materials(target_paths: tuple[str, ...], project_root: Path) -> list[Material]:
    materials: list[Material] = []
    seen: set[Path] = set()
    for given in target_paths:
        path = Path(given).expanduser()
        try:
            path = (path if path.is_absolute() else project_root / path).resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before Python 3.13
            materials.append(Material(given, path, "unreadable", note=f"cannot be resolved: {exc}"))
            continue
        if path in seen:
            materials.append(Material(given, path, "duplicate", note="listed more than once; included once"))
            continue
        seen.add(path)
        materials.append(read_material(given, path))
    return materials


def read_material(given: str, path: Path) -> Material:
    if is_secret(path):
        return Material(given, path, "refused", note="looks like a secret or credential file; not sent to a model")
    if any(path.is_relative_to(root) for root in SYSTEM_ROOTS):
        return Material(given, path, "refused", note="a file of the system's, not the project's; not sent to a model")
    try:
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(MATERIAL_CAP_BYTES + 1)
    except FileNotFoundError:
        return Material(given, path, "missing", note="no such file")
    except InputRejected as exc:
        return Material(given, path, "unreadable", note=str(exc))
    except OSError as exc:
        return Material(given, path, "unreadable", note=exc.strerror or str(exc))
    if b"\0" in head[:BINARY_SNIFF_BYTES]:
        return Material(given, path, "binary", size, note="contains NUL bytes; binary files are not sent")
    truncated = len(head) > MATERIAL_CAP_BYTES
    kept = head[:MATERIAL_CAP_BYTES]
    try:
        text = kept.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not truncated or exc.start < len(kept) - 3:
            return Material(given, path, "binary", size, note="not UTF-8 text; binary files are not sent")
        text = kept[:exc.start].decode("utf-8")
    if truncated:
        used = len(text.encode("utf-8"))
        return Material(given, path, "truncated", size, text, note=f"kept the first {used} of {size} bytes")
    return Material(given, path, "read", size, text)
