"""The body's layers hold: the cycle and the organs know nothing of the protocol or of I/O.

cycle/ and organs/ never `with` a unit of protocol/ or io/ (the trace is plain Ada; only the protocol layer
spells it as JSON), and the stub organs (stubs/) are chosen by the boot alone: no other unit of the body
names them, so the fixture stays the stubs' private business and a second implementation of the organs
goes through the same seam (Organs.Sets). Read from the sources' context clauses, so a new `with` that
crosses a layer fails here before a reviewer has to find it.
"""

from __future__ import annotations

import re
from pathlib import Path

SOURCES = Path(__file__).resolve().parents[2] / "mafiabot_core" / "src"
WITH = re.compile(r"^\s*(?:limited\s+)?(?:private\s+)?with\s+([\w.,\s]+);", re.IGNORECASE | re.MULTILINE)


def units_in(directory: str) -> set[str]:
    return {path.stem.split("-")[0].lower() for path in (SOURCES / directory).glob("*.ad[sb]")}


def withs_of(path: Path) -> set[str]:
    text = re.sub(r"--[^\n]*", "", path.read_text())
    return {name.strip().split(".")[0].lower() for clause in WITH.findall(text) for name in clause.split(",")}


def crossings(directory: str, forbidden: set[str]) -> list[str]:
    return [f"{path.relative_to(SOURCES)} withs {unit}" for path in sorted((SOURCES / directory).glob("*.ad[sb]"))
            for unit in sorted(withs_of(path) & forbidden)]


def test_the_layers_are_where_the_test_looks():
    assert {"json_text", "turn_tool", "hermes_protocol"} <= units_in("protocol")
    assert {"stdio_channel", "text_files"} <= units_in("io")
    assert "turn_cycle" in units_in("cycle") and "organs" in units_in("organs") and "stub_organs" in units_in("stubs")


def test_the_cycle_and_the_organs_never_with_the_protocol_or_io():
    forbidden = units_in("protocol") | units_in("io")
    assert crossings("cycle", forbidden) + crossings("organs", forbidden) == []


def test_only_the_boot_chooses_the_stub_organs():
    stubs = units_in("stubs")
    others = [directory.name for directory in SOURCES.iterdir() if directory.is_dir() and directory.name != "stubs"]
    assert [crossing for directory in others for crossing in crossings(directory, stubs)] == []
    assert "stub_organs" in withs_of(SOURCES / "mafiabot.adb")


def test_only_the_session_store_knows_of_sqlite():
    """The cycle and the organs see the session record alone: the store (store/) is the protocol's to call, and
    its SQLite binding is the store's alone."""
    store = units_in("store")
    assert {"sqlite", "session_store", "session_records"} <= store
    assert crossings("cycle", store) + crossings("organs", store) + crossings("sessions", store) == []
    others = [directory.name for directory in SOURCES.iterdir() if directory.is_dir() and directory.name != "store"]
    assert [crossing for directory in others for crossing in crossings(directory, {"sqlite"})] == []
    assert [f"{path.name} withs sqlite" for path in (SOURCES / "store").glob("session_records.ad[sb]")
            if "sqlite" in withs_of(path)] == []
