"""The autobot intent: the seed's JSON schema, checked field by field, every type included.

Invariants:
- `parse_intent` either returns a fully normalised `Intent` (defaults applied, `project_root`
  absolute and an existing directory) or raises `IntentError` whose `.field` is the dotted name of
  the first bad field (`payload.max_chars`) and whose message says what was expected and what came.
- Unknown fields are errors, not ignored: a misspelt `max_char` must not silently fall back to the
  default the operator meant to override.
- `Intent.hash` is a function of the normalised intent only (`intent_hash`): the same task on the
  same project hashes the same, whoever submits it and however its JSON was spelt, its paths
  written (`./docs/a.md`, `docs/a.md`, `docs//a.md` and the absolute path inside the project are one
  path) or its target paths and tags ordered.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.hermes.outcome import FieldError

EXPECTED_OUTPUTS = ("markdown", "json", "plain")
PAYLOAD_DEFAULTS: dict[str, Any] = {
    "hermes_profile": "cstar-hub",
    "model": "MiniMax-M3",
    "expected_output": "markdown",
    "max_chars": 4000,
    "session_name": None,
    "write_to": None,
    "append_with_separator": None,
    "tags": [],
    "timeout_seconds": 300,
}
TOP_FIELDS = ("intent", "project_root", "target_paths", "payload")
PROFILE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$")
MAX_INTENT_CHARS = 16_000
MAX_TARGET_PATHS = 64
MAX_TAGS = 32
MAX_CHARS_CEILING = 1_000_000
MAX_TIMEOUT_SECONDS = 86_400
MAX_INTENT_FILE_BYTES = 1 << 20


class IntentError(FieldError):
    """The intent breaks the schema; `.field` names the offending field (dotted)."""


@dataclass(frozen=True)
class Intent:
    intent: str
    project_root: Path
    target_paths: tuple[str, ...]
    hermes_profile: str
    model: str
    expected_output: str
    max_chars: int
    session_name: str | None
    write_to: str | None
    append_with_separator: str | None
    tags: tuple[str, ...]
    timeout_seconds: int

    def to_document(self) -> dict[str, Any]:
        """The normalised intent in the seed's own shape (what a queue stores and a hash covers)."""
        fields = asdict(self)
        payload = {name: fields[name] for name in PAYLOAD_DEFAULTS}
        payload["tags"] = list(self.tags)
        return {"intent": self.intent, "project_root": str(self.project_root),
                "target_paths": list(self.target_paths), "payload": payload}

    @property
    def hash(self) -> str:
        return intent_hash(self.to_document())


def canonical_path(path: str, project_root: str) -> str:
    """A path as the hash sees it: lexically normalised, and relative when it lies inside the project.
    Lexical only (no symlinks resolved), so the hash never depends on the file system's state."""
    root = os.path.normpath(project_root)
    absolute = os.path.normpath(path if os.path.isabs(path) else os.path.join(root, path))
    if absolute == root or absolute.startswith(root.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, root)
    return absolute


def intent_hash(document: dict[str, Any]) -> str:
    """The identity of a normalised intent document (`Intent.to_document()`): paths canonical, target
    paths and tags as sorted sets, the rest as given. Two intents with one hash are one task."""
    root = document["project_root"]
    payload = dict(document["payload"])
    if payload.get("write_to") is not None:
        payload["write_to"] = canonical_path(payload["write_to"], root)
    payload["tags"] = sorted(set(payload.get("tags") or []))
    canonical = {**document, "payload": payload,
                 "target_paths": sorted({canonical_path(p, root) for p in document["target_paths"]})}
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def describe(value: Any) -> str:
    kind = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object", type(None): "null"}.get(type(value), type(value).__name__)
    shown = json.dumps(value, ensure_ascii=False, default=str)
    return f"{kind} {shown[:60]}{'…' if len(shown) > 60 else ''}"


def _string(value: Any, field: str, *, nullable: bool = False, max_len: int = 1000,
            single_line: bool = True) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise IntentError(field, f"must be a string{' or null' if nullable else ''}, got {describe(value)}")
    if not value.strip():
        raise IntentError(field, "must not be empty")
    if "\0" in value or (single_line and ("\n" in value or "\r" in value)):
        raise IntentError(field, "must be a single line without control characters")
    if len(value) > max_len:
        raise IntentError(field, f"is {len(value)} characters long; at most {max_len}")
    return value


def _integer(value: Any, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise IntentError(field, f"must be an integer, got {describe(value)}")
    if not low <= value <= high:
        raise IntentError(field, f"must be between {low} and {high}, got {value}")
    return value


def _string_list(value: Any, field: str, max_items: int) -> list[str]:
    if not isinstance(value, list):
        raise IntentError(field, f"must be an array of strings, got {describe(value)}")
    if len(value) > max_items:
        raise IntentError(field, f"has {len(value)} entries; at most {max_items}")
    return [_string(item, f"{field}[{index}]", max_len=4096) for index, item in enumerate(value)]  # type: ignore[misc]


def _reject_unknown(document: dict[str, Any], known: tuple[str, ...] | dict[str, Any], where: str) -> None:
    unknown = sorted(str(k) for k in document if k not in known)
    if unknown:
        field = f"{where}.{unknown[0]}" if where else unknown[0]
        raise IntentError(field, f"is not a field of the autobot intent (known: {', '.join(known)})")


def parse_intent(document: Any) -> Intent:
    """The validated, normalised intent; IntentError naming the first bad field otherwise."""
    if not isinstance(document, dict):
        raise IntentError("(intent)", f"must be a JSON object, got {describe(document)}")
    _reject_unknown(document, TOP_FIELDS, "")
    for required in ("intent", "project_root"):
        if required not in document:
            raise IntentError(required, "is required")
    intent = _string(document["intent"], "intent", max_len=MAX_INTENT_CHARS, single_line=False)
    root_text = _string(document["project_root"], "project_root", max_len=4096)
    project_root = Path(root_text).expanduser().resolve()  # type: ignore[arg-type]
    if not project_root.is_dir():
        raise IntentError("project_root", f"{root_text} is not an existing directory")
    targets = _string_list(document.get("target_paths", []), "target_paths", MAX_TARGET_PATHS)
    payload_raw = document.get("payload", {})
    if not isinstance(payload_raw, dict):
        raise IntentError("payload", f"must be an object, got {describe(payload_raw)}")
    _reject_unknown(payload_raw, PAYLOAD_DEFAULTS, "payload")
    payload = {**PAYLOAD_DEFAULTS, **payload_raw}
    profile = _string(payload["hermes_profile"], "payload.hermes_profile", max_len=64)
    if not PROFILE_NAME.match(profile):  # type: ignore[arg-type]
        raise IntentError("payload.hermes_profile", f"{profile!r} is not a Hermes profile name "
                                                    f"(lowercase letters, digits, '_' and '-')")
    expected = payload["expected_output"]
    if expected not in EXPECTED_OUTPUTS:
        raise IntentError("payload.expected_output", f"must be one of {', '.join(EXPECTED_OUTPUTS)}, "
                                                     f"got {describe(expected)}")
    write_to = _string(payload["write_to"], "payload.write_to", nullable=True, max_len=4096)
    separator = _string(payload["append_with_separator"], "payload.append_with_separator", nullable=True,
                        max_len=100)
    if separator is not None and write_to is None:
        raise IntentError("payload.append_with_separator", "needs payload.write_to (there is nothing to append to)")
    tags = _string_list(payload["tags"], "payload.tags", MAX_TAGS)
    for index, tag in enumerate(tags):
        if not TAG.match(tag):
            raise IntentError(f"payload.tags[{index}]", f"{tag!r} is not a tag (letters, digits, '_.:/-', "
                                                        f"at most 64, no spaces or commas)")
    return Intent(
        intent=intent,  # type: ignore[arg-type]
        project_root=project_root,
        target_paths=tuple(targets),
        hermes_profile=profile,  # type: ignore[arg-type]
        model=_string(payload["model"], "payload.model", max_len=200),  # type: ignore[arg-type]
        expected_output=expected,
        max_chars=_integer(payload["max_chars"], "payload.max_chars", 1, MAX_CHARS_CEILING),
        session_name=_string(payload["session_name"], "payload.session_name", nullable=True, max_len=200),
        write_to=write_to,
        append_with_separator=separator,
        tags=tuple(dict.fromkeys(tags)),
        timeout_seconds=_integer(payload["timeout_seconds"], "payload.timeout_seconds", 1, MAX_TIMEOUT_SECONDS),
    )


def load_intent_file(path: Path) -> Intent:
    try:
        if path.stat().st_size > MAX_INTENT_FILE_BYTES:
            raise IntentError("(file)", f"{path} is larger than {MAX_INTENT_FILE_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise IntentError("(file)", f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise IntentError("(file)", f"{path} is not UTF-8") from None
    return parse_intent(parse_json(text, str(path)))


def parse_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise IntentError("(file)", f"{where} is not valid JSON: {exc.msg} at line {exc.lineno} "
                                    f"column {exc.colno}") from None
