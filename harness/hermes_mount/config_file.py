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
  a new backup generation, `config.yaml.before-mafiabot.<UTC>`, and only the newest
  BACKUP_GENERATIONS are kept, so a second mount never loses the file as it was before the first.
  A symlinked config is written through to its target, so dotfile setups stay linked. The file's
  permission bits are kept.
- The file's conventions survive: a UTF-8 byte-order mark and CRLF line endings are read off
  the file (`Conventions`), parsing sees plain LF text, and `render` writes them back. A file
  that mixes line endings is written with LF, and its plan says the file was not reproduced
  exactly.
- Reading for decisions is Hermes's (`as_hermes`: PyYAML, YAML 1.1); ruamel's reading (YAML 1.2)
  serves only to write the text back with the operator's comments and layout.
- `render(doc)` is a pure function of the document: rendering twice gives the same text, which
  is what makes mount idempotent (no change, no write, no backup).
"""

from __future__ import annotations

import io
import os
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from yaml import YAMLError as PyYamlError

from harness.durable import DurableWriteError, atomic_write
from harness.errors import ConfigError
from harness.hermes.config_yaml import MAX_CONFIG_BYTES, load_as_hermes
from harness.strict_json import InputRejected, read_bounded

# (mapping, sequence, offset) layouts tried in order; the first is Hermes's and PyYAML's.
LAYOUTS: tuple[tuple[int, int, int], ...] = ((2, 2, 0), (2, 4, 2), (4, 4, 0), (4, 6, 4), (4, 4, 2), (2, 4, 0))
# Never fold long lines: a long base_url or prompt stays on its line.
LINE_WIDTH = 1 << 16
# Backups are generations `config.yaml.before-mafiabot.<UTC>`; the newest few are kept.
BACKUP_MARK = ".before-mafiabot."
BACKUP_GENERATIONS = 5
BACKUP_STAMP = "%Y%m%dT%H%M%SZ"
NEW_FILE_MODE = 0o644
BOM = "\ufeff"
CRLF = "\r\n"


class HermesConfigError(ConfigError):
    """config.yaml cannot be used as it is; the file was left untouched."""


@dataclass(frozen=True)
class Conventions:
    """How the file spells itself outside YAML: a byte-order mark, and its line ending."""

    bom: bool = False
    newline: str = "\n"

    @classmethod
    def of(cls, text: str) -> tuple[Conventions, str]:
        """The conventions of a file's text, and that text as plain LF YAML without a mark."""
        bom = text.startswith(BOM)
        body = text[len(BOM):] if bom else text
        crlf = body.count(CRLF)
        newline = CRLF if crlf and crlf == body.count("\n") else "\n"
        return cls(bom, newline), body.replace(CRLF, "\n") if crlf else body

    def apply(self, text: str) -> str:
        if self.newline != "\n":
            text = text.replace("\n", self.newline)
        return (BOM if self.bom and text else "") + text


@dataclass
class ConfigDocument:
    path: Path
    original: str | None  # the file's text exactly as it is (mark, line endings); None: no file yet
    data: CommentedMap
    yaml: YAML
    exact: bool  # whether rendering the unchanged document reproduces the original text
    conventions: Conventions = field(default_factory=Conventions)

    @property
    def plain(self) -> str:
        """The original as plain LF text without a mark: what the YAML readers are given."""
        return Conventions.of(self.original or "")[1]


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
        # Bytes, not read_text: universal newlines would hide a CRLF file's line endings. A regular file only, and
        # no more than Hermes reads: a FIFO or /dev/zero in its place is refused, never waited on or read on.
        original = read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8")
    except InputRejected as exc:
        raise HermesConfigError(f"{exc}; it was left untouched") from None
    except UnicodeDecodeError as exc:
        raise HermesConfigError(f"{path} is not UTF-8 (byte {exc.start}); it was left untouched") from None
    conventions, text = Conventions.of(original)
    explicit_start = text.lstrip().startswith("---")
    best: ConfigDocument | None = None
    for layout in LAYOUTS:
        yaml = _yaml(layout, explicit_start)
        data = _parse(yaml, text, path)
        doc = ConfigDocument(path, original, data, yaml, False, conventions)
        doc.exact = render(doc) == original
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
        document = load_as_hermes(Conventions.of(text)[1])
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


def child_mapping(parent: CommentedMap, key: str, create: bool, label: str,
                  kind: str = "a mapping") -> CommentedMap | None:
    """`parent[key]` as a mapping, made empty first when `create` and absent; HermesConfigError when it is not one."""
    child = parent.get(key)
    if child is None:
        if not create:
            return None
        child = CommentedMap()
        parent[key] = child
    if not isinstance(child, CommentedMap):
        raise HermesConfigError(f"'{label}'{line_of(parent, key)} is not {kind} but a {type(child).__name__}; "
                                "fix it by hand, the file was left untouched")
    return child


def render(doc: ConfigDocument) -> str:
    """The document as the file's text, in the file's own conventions (mark, line endings)."""
    return doc.conventions.apply(_render_plain(doc))


def _render_plain(doc: ConfigDocument) -> str:
    plain = doc.plain
    if not doc.data:
        # Nothing to dump: keep whatever comments the file holds, and only those.
        return plain if not _has_content(plain) else leading_comments(plain)
    out = io.StringIO()
    doc.yaml.dump(doc.data, out)
    text = out.getvalue()
    if doc.original is not None and not _has_content(plain):
        # The file held only comments: ruamel had no node to attach them to, so keep them above.
        kept = plain.rstrip("\n")
        return (kept + "\n" if kept else "") + text
    return text


def leading_comments(text: str) -> str:
    """The comment and blank lines above a text's first setting (ruamel keeps those with the first key)."""
    lines = []
    for line in text.splitlines(keepends=True):
        if line.strip() and not line.lstrip().startswith("#"):
            break
        lines.append(line)
    return "".join(lines).rstrip("\n") + "\n" if any(line.strip() for line in lines) else ""


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
        backup = new_backup_path(target)
        _atomic_write(backup, doc.original, mode)
    _atomic_write(target, text, mode)
    if backup is not None:
        _prune_backups(target)
    return backup


def backups_of(config: Path) -> list[Path]:
    """The config's backup generations, oldest first (the stamp sorts as the time)."""
    return sorted(config.parent.glob(config.name + BACKUP_MARK + "*"))


def new_backup_path(target: Path) -> Path:
    """A backup name no other write holds: reserved empty with O_EXCL, then filled atomically."""
    stamp = datetime.now(UTC).strftime(BACKUP_STAMP)
    base = f"{target.name}{BACKUP_MARK}{stamp}"
    # Two writes within one second: a counter keeps both and sorts after the plain stamp. It starts
    # past this second's highest, never at a name pruning freed, which would sort as the oldest.
    this_second = [backup.name[len(base):] for backup in backups_of(target) if backup.name.startswith(base)]
    first = max((int(tail[1:]) if tail[1:].isdigit() else 1 for tail in this_second), default=0) + 1
    for count in range(first, 1000):
        candidate = target.with_name(base + (f"-{count:03d}" if count > 1 else ""))
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            return candidate
        except FileExistsError:
            continue
        except OSError as exc:
            raise HermesConfigError(f"cannot back up {target} as {candidate.name}: {exc.strerror or exc}; "
                                    "the file was left as it was") from None
    raise HermesConfigError(f"{target}: a thousand backups this second already; the file was left as it was")


def _prune_backups(target: Path) -> None:
    for old in backups_of(target)[:-BACKUP_GENERATIONS]:
        try:
            old.unlink()
        except OSError:
            pass  # an old generation that cannot go is merely kept: the write itself succeeded


def _cause(exc: OSError | RuntimeError) -> str:
    if isinstance(exc, FileExistsError):
        return "a file that is not a directory is in the way"
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


def _atomic_write(path: Path, text: str, mode: int) -> None:
    try:
        atomic_write(path, text.encode("utf-8"), mode)
    except DurableWriteError as exc:
        raise HermesConfigError(f"{exc}; the file was left as it was") from None
