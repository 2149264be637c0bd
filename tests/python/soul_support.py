"""What the SOUL.md tests share: Hermes's default persona as the installed Hermes defines it, and
the shapes of the body's mark and of a backup's name.

The default is read from the installed Hermes package (another virtualenv, so parsed, not
imported), never copied here: a Hermes whose default changed fails the tests instead of having
its default silently treated as an operator's persona.
"""

from __future__ import annotations

import ast
import re

import pytest

from support import REPO as REPO_ROOT

SOUL = "SOUL.md"
BACKUP_NAME = re.compile(r"^SOUL\.md\.before-mafiabot\.\d{8}T\d{6}Z(-\d+)?$")
# The body's last line: what it replaced, then the hash of everything before " sha256=".
MARK = re.compile(r"\n<!-- mafiabot [^\n]* before=(\S+) sha256=[0-9a-f]{64} -->\n\Z")


def hermes_default() -> str:
    """DEFAULT_SOUL_MD of the Hermes in .hermes-venv; skips the test when it is not installed."""
    sources = sorted((REPO_ROOT / ".hermes-venv" / "lib").glob("python3*/site-packages/hermes_cli/default_soul.py"))
    if not sources:
        pytest.skip("Hermes is not installed in .hermes-venv (make hermes)")
    tree = ast.parse(sources[0].read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["DEFAULT_SOUL_MD"]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{sources[0]} no longer defines DEFAULT_SOUL_MD")


def before_of(soul: str) -> str:
    """What the body's SOUL.md records it replaced; fails when it carries no mark."""
    mark = MARK.search(soul)
    assert mark, f"SOUL.md carries no mark: {soul[-200:]!r}"
    return mark.group(1)


def unmarked(soul: str) -> str:
    """The body's SOUL.md without its mark: the document it was asked to write."""
    before_of(soul)
    return MARK.sub("", soul)
