"""The autobot intent: the seed's JSON schema as strict models, every type checked, the first bad field named.

Invariants:
- `parse_intent` either returns a fully normalised `Intent` (defaults applied, `project_root`
  absolute and an existing directory) or raises `IntentError` whose `.field` is the dotted name of
  the first bad field (`payload.max_chars`, `payload.tags[1]`) and whose message says what was
  expected and what came. The shape and every per-field rule are `IntentDocument` and `Payload`;
  what spans fields or needs the disk (`append_with_separator` needs `write_to`, the root exists)
  is checked here after them.
- Unknown fields are errors, not ignored: a misspelt `max_char` must not silently fall back to the
  default the operator meant to override.
- An intent file or stdin is read by `harness.strict_json` (size, depth, duplicate keys, NaN,
  lone surrogates refused first), so no input reaches the models that Python's `json` would mangle.
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
from typing import Annotated, Any, BinaryIO, Literal

from pydantic import Field

from harness import strict_json
from harness.errors import FieldError
from harness.hermes.locate import ProfileName
from harness.typed_inputs import Items, PathText, StrictModel, block, line, matching, validate

# The seed (autobot's delegate.py) sends every delegation with `--provider=minimax`: an intent that names no provider
# is sent with it, one that names a provider with exactly that one; the transport refuses an answer from any other
# (`provider_fallback`), so there is no silent fallback either way.
DEFAULT_PROVIDER = "minimax"
# Hermes's provider ids (minimax, openrouter, custom, openai-codex, ...): lower-case words joined by '-', '_' or '.'.
PROVIDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
PROVIDER_RULE = "a Hermes provider id: lower-case letters, digits and '_.-', at most 64"
TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$")
MAX_INTENT_CHARS = 16_000
MAX_TARGET_PATHS = 64
MAX_TAGS = 32
MAX_CHARS_CEILING = 1_000_000
MAX_TIMEOUT_SECONDS = 86_400
MAX_INTENT_FILE_BYTES = 1 << 20

Tag = Annotated[str, matching(TAG, "a tag (letters, digits, '_.:/-', at most 64, no spaces or commas)")]
Provider = Annotated[str, matching(PROVIDER_NAME, PROVIDER_RULE)]


class Payload(StrictModel):
    """The seed's `payload` object; every default is the seed's."""

    hermes_profile: ProfileName = "cstar-hub"
    # Sent as `--provider`; an answer from any other provider is refused (`provider_fallback`).
    provider: Provider = DEFAULT_PROVIDER
    model: Annotated[str, line(200)] = "MiniMax-M3"
    expected_output: Literal["markdown", "json", "plain"] = "markdown"
    max_chars: Annotated[int, Field(ge=1, le=MAX_CHARS_CEILING)] = 4000
    session_name: Annotated[str, line(200)] | None = None
    write_to: PathText | None = None
    append_with_separator: Annotated[str, line(100)] | None = None
    tags: Annotated[Items[Tag], Field(max_length=MAX_TAGS)] = ()
    timeout_seconds: Annotated[int, Field(ge=1, le=MAX_TIMEOUT_SECONDS)] = 300


class IntentDocument(StrictModel):
    """The seed's intent object as submitted (before the root is resolved)."""

    intent: Annotated[str, block(MAX_INTENT_CHARS)]
    project_root: PathText
    target_paths: Annotated[Items[PathText], Field(max_length=MAX_TARGET_PATHS)] = ()
    payload: Payload = Payload()


PAYLOAD_FIELDS = tuple(Payload.model_fields)


class IntentError(FieldError):
    """The intent breaks the schema; `.field` names the offending field (dotted)."""


@dataclass(frozen=True)
class Intent:
    """The validated intent, flat and resolved: `IntentDocument`'s fields with `Payload`'s lifted up beside them."""

    intent: str
    project_root: Path
    target_paths: tuple[str, ...]
    hermes_profile: str
    provider: str
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
        payload = {name: fields[name] for name in PAYLOAD_FIELDS}
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
    # The seed's provider is what an intent written before `provider` existed meant: one task, one hash.
    if payload.get("provider") == DEFAULT_PROVIDER:
        del payload["provider"]
    canonical = {**document, "payload": payload,
                 "target_paths": sorted({canonical_path(p, root) for p in document["target_paths"]})}
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def parse_intent(document: Any) -> Intent:
    """The validated, normalised intent; IntentError naming the first bad field otherwise."""
    given = validate(IntentDocument, document, IntentError, root="(intent)")
    payload = given.payload
    if payload.append_with_separator is not None and payload.write_to is None:
        raise IntentError("payload.append_with_separator", "needs payload.write_to (there is nothing to append to)")
    try:
        project_root = Path(given.project_root).expanduser().resolve()
        is_directory = project_root.is_dir()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before 3.13) or an unreadable parent
        raise IntentError("project_root", f"{given.project_root} cannot be resolved: {exc}") from None
    if not is_directory:
        raise IntentError("project_root", f"{given.project_root} is not an existing directory")
    return Intent(intent=given.intent, project_root=project_root, target_paths=given.target_paths,
                  **{**payload.model_dump(), "tags": tuple(dict.fromkeys(payload.tags))})


def load_intent_file(path: Path) -> Intent:
    try:
        document = strict_json.load_file(path, max_bytes=MAX_INTENT_FILE_BYTES)
    except strict_json.InputRejected as exc:
        raise IntentError("(file)", str(exc)) from None
    return parse_intent(document)


def load_intent_stream(stream: BinaryIO, where: str) -> Intent:
    try:
        document = strict_json.load_stream(stream, where, max_bytes=MAX_INTENT_FILE_BYTES)
    except strict_json.InputRejected as exc:
        raise IntentError("(file)", str(exc)) from None
    return parse_intent(document)
