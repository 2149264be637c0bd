"""Hermes's config.yaml, read and written round-trip with ruamel.yaml.

Why round-trip: the file is the operator's, edited by hand, full of comments; a plain
load-and-dump (PyYAML, or Hermes's own `hermes config set`) drops every comment and can reorder
keys. ruamel.yaml keeps comments, key order, quoting and flow style. It does normalise
indentation, so the indentation settings are chosen among the usual layouts as the first one
that reproduces the file exactly; `ConfigDocument.exact` says whether one did.

Invariants:
- A file that is not valid YAML, or whose top level, `mcp_servers` or entry is not a mapping,
  raises HermesConfigError naming the line (1-based) and is never written.
- Writes are atomic: the new text goes to a temporary file in the same directory, is flushed and
  fsynced, and renamed over the config; the previous content is first copied (atomically too) to
  `config.yaml.bak`. A symlinked config is written through to its target, so dotfile setups stay
  linked. The file's permission bits are kept.
- Reading for decisions is Hermes's (`as_hermes`: PyYAML, YAML 1.1); ruamel's reading (YAML 1.2)
  serves only to write the text back with the operator's comments and layout.
- `render(doc)` is a pure function of the document: rendering twice gives the same text, which
  is what makes mount idempotent (no change, no write, no backup).
"""

from __future__ import annotations

import io
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from yaml import YAMLError as PyYamlError

from harness.durable import DurableWriteError, atomic_write
from harness.errors import ConfigError
from harness.hermes.config_yaml import load_as_hermes

# (mapping, sequence, offset) layouts tried in order; the first is Hermes's and PyYAML's.
LAYOUTS: tuple[tuple[int, int, int], ...] = ((2, 2, 0), (2, 4, 2), (4, 4, 0), (4, 6, 4), (4, 4, 2), (2, 4, 0))
# Never fold long lines: a long base_url or prompt stays on its line.
LINE_WIDTH = 1 << 16
BACKUP_SUFFIX = ".bak"
NEW_FILE_MODE = 0o644


class HermesConfigError(ConfigError):
    """config.yaml cannot be used as it is; the file was left untouched."""


@dataclass
class ConfigDocument:
    path: Path
    original: str | None  # None: the file does not exist yet
    data: CommentedMap
    yaml: YAML
    exact: bool  # whether rendering the unchanged document reproduces the original text


def _yaml(layout: tuple[int, int, int], explicit_start: bool) -> YAML:
    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = LINE_WIDTH
    mapping, sequence, offset = layout
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.explicit_start = explicit_start
    return yaml


def load_config(path: Path) -> ConfigDocument:
    if not path.exists():
        return ConfigDocument(path, None, CommentedMap(), _yaml(LAYOUTS[0], False), True)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise HermesConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise HermesConfigError(f"{path} is not UTF-8 (byte {exc.start}); it was left untouched") from None
    explicit_start = text.lstrip().startswith("---")
    best: ConfigDocument | None = None
    for layout in LAYOUTS:
        yaml = _yaml(layout, explicit_start)
        data = _parse(yaml, text, path)
        doc = ConfigDocument(path, text, data, yaml, exact=False)
        doc.exact = render(doc) == text
        if doc.exact:
            return doc
        best = best or doc
    assert best is not None
    return best


def _parse(yaml: YAML, text: str, path: Path) -> CommentedMap:
    try:
        data = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "somewhere"
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        if exc.context and exc.context_mark is not None and exc.context_mark is not mark:
            problem += f" ({' '.join(exc.context.split())} that starts at line {exc.context_mark.line + 1})"
        raise HermesConfigError(f"{path} is not valid YAML at {where}: {problem}; it was left untouched") from None
    except YAMLError as exc:
        raise HermesConfigError(f"{path} is not valid YAML: {' '.join(str(exc).split())}; "
                                "it was left untouched") from None
    if data is None:
        return CommentedMap()
    if not isinstance(data, CommentedMap):
        raise HermesConfigError(f"{path}: the top level must be a mapping of settings, "
                                f"not a {type(data).__name__}; it was left untouched")
    return data


def as_hermes(text: str, path: Path) -> dict[str, Any]:
    """`text` as Hermes 0.19.0 reads it (harness.hermes.config_yaml); HermesConfigError when it would not."""
    try:
        document = load_as_hermes(text)
    except PyYamlError as exc:
        raise HermesConfigError(f"{path}: Hermes's YAML reader (PyYAML) cannot read it "
                                f"({' '.join(str(exc).split())}); the file was left untouched") from None
    if not isinstance(document, dict):
        raise HermesConfigError(f"{path}: Hermes reads it as a {type(document).__name__}, not a mapping of "
                                "settings; the file was left untouched")
    return document


def line_of(mapping: Any, key: str) -> str:
    """' (line N)' for a key of a loaded mapping, '' when unknown."""
    try:
        return f" (line {mapping.lc.key(key)[0] + 1})"
    except (AttributeError, KeyError, TypeError):
        return ""


def render(doc: ConfigDocument) -> str:
    if not doc.data:
        # Nothing to dump: keep whatever comments the file holds.
        return doc.original or ""
    out = io.StringIO()
    doc.yaml.dump(doc.data, out)
    text = out.getvalue()
    if doc.original is not None and not _has_content(doc.original):
        # The file held only comments: ruamel had no node to attach them to, so keep them above.
        kept = doc.original.rstrip("\n")
        return (kept + "\n" if kept else "") + text
    return text


def _has_content(text: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") and line.strip() != "---"
               for line in text.splitlines())


def write_config(doc: ConfigDocument, text: str) -> Path | None:
    """Write `text` over the config atomically; returns the backup's path (None for a new file)."""
    try:
        target = doc.path.resolve() if doc.path.is_symlink() else doc.path
        target.parent.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before Python 3.13
        raise HermesConfigError(f"{doc.path.parent}: the Hermes home cannot be made: {_cause(exc)}; nothing was written") \
            from None
    backup = None
    mode = NEW_FILE_MODE
    if doc.original is not None:
        mode = stat.S_IMODE(target.stat().st_mode)
        backup = target.with_name(target.name + BACKUP_SUFFIX)
        _atomic_write(backup, doc.original, mode)
    _atomic_write(target, text, mode)
    return backup


def _cause(exc: OSError | RuntimeError) -> str:
    if isinstance(exc, FileExistsError):
        return "a file that is not a directory is in the way"
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


def _atomic_write(path: Path, text: str, mode: int) -> None:
    try:
        atomic_write(path, text.encode("utf-8"), mode)
    except DurableWriteError as exc:
        raise HermesConfigError(f"{exc}; the file was left as it was") from None
