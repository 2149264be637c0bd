"""YAML inputs (session files, plans, registries, sentinel configs) read with their limits checked first.

Invariants:
- The file is read through `strict_json.read_bounded` (regular files only, at most `max_bytes`) and
  decoded by `strict_json.decode_utf8` (UTF-8 only, one UTF-8 BOM dropped), so both formats share
  one set of file rules.
- The loader is PyYAML's safe loader (plain data only: no Python objects are ever constructed),
  in its pure-Python form, whose parser keeps a stack of states rather than recursing.
- Nesting is bounded while composing: a collection deeper than `max_depth` stops the composer at
  that depth, so a 100,000-level document is refused and `RecursionError` never happens.
- Aliases are bounded by what they expand to: the document's node count with every alias counted
  as the whole node it names must stay under MAX_EXPANDED_NODES, so a billion-laughs document is
  refused before anything walks it, while ordinary anchors (shared limits) still work. An alias
  inside the collection it names (a cycle) is refused.
- A key that appears twice in one mapping is refused, naming its line and column (PyYAML would
  silently keep the last one). Every refusal is one `InputRejected` line naming the file and the
  cause (with line and column when known), never a snippet of the file's text: PyYAML's own message
  quotes the offending lines, and a `.env` named as a plan must not come back in the error.
- A `"\\ud800"` escape that leaves a lone surrogate is refused, as in JSON: no UTF-8 spells it, so
  it could reach neither the body nor a file.
- Scalars are read the way PyYAML's safe loader reads them (YAML 1.1: `no` is false); the models
  behind each input are strict, so a `no` where text was meant is refused by field, not mistaken.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from harness.strict_json import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DEPTH,
    InputRejected,
    decode_utf8,
    read_bounded,
    refuse_lone_surrogates,
)

# A plan of 12 sub-tasks is a few hundred nodes; 100,000 is far past any honest input and far below the
# 10^9 a nine-level billion-laughs document expands to.
MAX_EXPANDED_NODES = 100_000


def load_file(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The YAML document in the file at `path` (None when it is empty), every limit of the module checked."""
    where = str(path).encode("utf-8", errors="backslashreplace").decode("utf-8")
    return loads(decode_utf8(read_bounded(path, max_bytes), where), where, max_depth=max_depth)


def loads(text: str, where: str, *, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """The YAML document of `text`; InputRejected naming `where` and the cause otherwise."""
    try:
        # The reader refuses unprintable characters (a NUL) as the loader is made, before any parsing.
        loader = _BoundedLoader(text, max_depth)
    except yaml.YAMLError as exc:
        raise InputRejected(f"{where} is not valid YAML: {_cause(exc)}") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded = _expanded_size(node)
        if expanded > MAX_EXPANDED_NODES:
            raise InputRejected(f"{where}: its aliases expand to {expanded} nodes or more; at most "
                                f"{MAX_EXPANDED_NODES}")
        document = loader.construct_document(node)
    except _Refused as exc:
        raise InputRejected(f"{where}: {exc}") from None
    except yaml.YAMLError as exc:
        raise InputRejected(f"{where} is not valid YAML: {_cause(exc)}") from None
    finally:
        loader.dispose()
    refuse_lone_surrogates(document, where)
    return document


# The scanner, composer and constructor quote what they found (a character, an alias's or a tag's name): the
# file's text, not the cause. The parser quotes token kinds ('<stream end>', ']'): grammar, kept.
_QUOTED_SPAN = re.compile(r"""\s*(?:'[^']*'|"[^"]*")""")
_QUOTES_CONTENT = (yaml.scanner.ScannerError, yaml.composer.ComposerError, yaml.constructor.ConstructorError)


def _cause(exc: yaml.YAMLError) -> str:
    """What PyYAML found wrong and where (line, column), without the snippet of the file its own message
    carries: an error names the file and the cause, never the file's content."""
    if isinstance(exc, yaml.reader.ReaderError):
        return f"character #x{exc.character:04x} is not allowed (offset {exc.position})"
    if not isinstance(exc, yaml.MarkedYAMLError):
        return type(exc).__name__
    words = [text for text in (exc.context, exc.problem) if text]
    if isinstance(exc, _QUOTES_CONTENT):
        words = [_QUOTED_SPAN.sub("", text).strip() for text in words]
    cause = "; ".join(word for word in words if word) or "unreadable"
    mark = exc.problem_mark or exc.context_mark
    return f"{cause} (line {mark.line + 1} column {mark.column + 1})" if mark is not None else cause


class _Refused(Exception):
    """A limit broken inside the loader; `loads` adds the file's name."""


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, text: str, max_depth: int) -> None:
        super().__init__(text)
        self._max_depth = max_depth
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
            self._depth += 1
            if self._depth > self._max_depth:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise _Refused(f"nests deeper than {self._max_depth} levels (line {mark.line + 1})")
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
        return super().compose_node(parent, index)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: PyYAML's own check below names it
            if repeated:
                raise _Refused(f"a key appears twice in one mapping (line {key_node.start_mark.line + 1} column "
                               f"{key_node.start_mark.column + 1})")
        return super().construct_mapping(node, deep=deep)


def _expanded_size(root: Node) -> int:
    """The node count with aliases expanded, computed once per distinct node (depth is already bounded)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        if id(node) in open_nodes:
            raise _Refused(f"an alias refers to a collection that contains it (line {node.start_mark.line + 1})")
        open_nodes.add(id(node))
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, MappingNode):
            total += sum(size(key) + size(value) for key, value in node.value)
        open_nodes.discard(id(node))
        sizes[id(node)] = total = min(total, MAX_EXPANDED_NODES + 1)
        return total

    return size(root)
