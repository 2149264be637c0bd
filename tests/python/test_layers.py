"""The body's layers hold by closure: what a unit reaches through every chain of `with`s, not only what it names.

Invariants:
- Nothing under cycle/, organs/ or turn/ (the turn service, when the tree has it) reaches a unit of protocol/ or
  io/: the trace is plain Ada, and only the protocol layer spells it as JSON or touches a stream.
- base/ holds leaf utilities: what it reaches is base/ and the Ada runtime (Ada, Interfaces, System, GNAT), so any
  layer may use it without reaching anything else.
- The stub organs (stubs/) are chosen by the boot alone: no other unit of the body names them, so the fixture stays
  the stubs' private business and a second implementation of the organs goes through the same seam (Organs.Sets).
- SQLite is the store's alone, and libpq the PostgreSQL store's.

A unit depends on the units its spec and its body `with` (`limited with` and `private with` included) and on its
parents (a child unit sees its parent's declarations). The graph is read from the sources' context clauses, so a
new `with` that crosses a layer, however far down a chain, fails here before a reviewer has to find it.
"""

from __future__ import annotations

import re
from pathlib import Path

from graph_support import shortest_chains

SOURCES = Path(__file__).resolve().parents[2] / "mafiabot_core" / "src"
RUNTIME_ROOTS = {"ada", "interfaces", "system", "gnat"}
WITH = re.compile(r"^\s*(?:limited\s+)?(?:private\s+)?with\s+([\w.,\s]+);", re.IGNORECASE | re.MULTILINE)
UNIT_START = re.compile(r"^\s*(?:private\s+)?(?:package|procedure|function|generic|separate)\b",
                        re.IGNORECASE | re.MULTILINE)


class Units:
    """The units of a source tree, the folder of each, and the project units each depends on directly."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder: dict[str, str] = {}
        self.direct: dict[str, set[str]] = {}
        for path in sorted(root.rglob("*.ad[sb]")):
            unit = path.stem.replace("-", ".").lower()
            self.folder.setdefault(unit, str(path.parent.relative_to(root)))
            self.direct.setdefault(unit, set()).update(context_clause_units(path))
        for unit, named in self.direct.items():
            parents = {".".join(unit.split(".")[:depth]) for depth in range(1, unit.count(".") + 1)}
            everything = {".".join(name.split(".")[:depth]) for name in named for depth in range(1, name.count(".") + 2)}
            unknown = {name for name in everything - set(self.folder) if name.split(".")[0] not in RUNTIME_ROOTS}
            assert not unknown, f"{unit} withs {sorted(unknown)}, found neither in {root} nor in the runtime"
            self.direct[unit] = (everything | parents) & set(self.folder) - {unit}

    def in_folder(self, folder: str) -> set[str]:
        return {unit for unit, where in self.folder.items() if where == folder}

    def paths_to(self, start: str, targets: set[str]) -> list[list[str]]:
        """A shortest chain of dependencies from start to each target it reaches, breadth first."""
        return shortest_chains(self.direct, start, targets)

    def reaches(self, folders: list[str], forbidden: set[str]) -> list[str]:
        """Every chain from a unit of folders to a forbidden unit, spelled `a -> b -> c`."""
        return [" -> ".join(chain) for folder in folders for unit in sorted(self.in_folder(folder))
                for chain in self.paths_to(unit, forbidden)]


def context_clause_units(path: Path) -> set[str]:
    """The units the context clause of one source file names (aspects such as `with Inline;` come later)."""
    text = re.sub(r"--[^\n]*", "", path.read_text())
    start = UNIT_START.search(text)
    clause = text[:start.start()] if start else text
    return {name.strip().lower() for names in WITH.findall(clause) for name in names.split(",") if name.strip()}


UNITS = Units(SOURCES)


def write_tree(root: Path, files: dict[str, str]) -> Units:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return Units(root)


def test_the_closure_follows_bodies_limited_withs_and_parents(tmp_path: Path) -> None:
    """Each way a dependency hides is found: through a body, a `limited with`, a child unit's parent."""
    units = write_tree(tmp_path, {
        "protocol/wire.ads": "package Wire is end Wire;",
        "organs/near.ads": "package Near is end Near;",
        "organs/near.adb": "with Wire;\npackage body Near is end Near;",
        "organs/far.ads": "limited with Near;\npackage Far is end Far;",
        "organs/kin.ads": "with Far;\npackage Kin is end Kin;",
        "organs/kin-child.ads": "with Ada.Text_IO;\npackage Kin.Child is\n   X : Integer with Inline;\nend Kin.Child;",
        "organs/alone.ads": "with Ada.Strings;\npackage Alone is end Alone;",
    })
    assert units.reaches(["organs"], units.in_folder("protocol")) == [
        "far -> near -> wire", "kin -> far -> near -> wire", "kin.child -> kin -> far -> near -> wire",
        "near -> wire"]


def test_a_with_of_a_unit_the_tree_lacks_is_an_error_not_a_pass(tmp_path: Path) -> None:
    try:
        write_tree(tmp_path, {"organs/lost.ads": "with Nowhere;\npackage Lost is end Lost;"})
    except AssertionError as error:
        assert "nowhere" in str(error)
    else:
        raise AssertionError("a with of a missing unit was taken for the runtime")


def test_the_layers_are_where_the_test_looks() -> None:
    assert {"json_text", "turn_tool", "hermes_protocol"} <= UNITS.in_folder("protocol")
    assert {"stdio_channel", "text_files"} <= UNITS.in_folder("io")
    assert {"turn_cycle", "energy_gate"} <= UNITS.in_folder("cycle")
    assert {"organs", "organs.texts"} <= UNITS.in_folder("organs")
    assert {"utf8", "json_bytes", "fnv_hash", "thousandths", "monotonic"} <= UNITS.in_folder("base")
    assert "stub_organs" in UNITS.in_folder("stubs")


def test_nothing_below_the_protocol_reaches_the_protocol_or_io() -> None:
    below = [folder for folder in ("cycle", "organs", "turn") if (SOURCES / folder).is_dir()]
    assert UNITS.reaches(below, UNITS.in_folder("protocol") | UNITS.in_folder("io")) == []


def test_base_reaches_nothing_but_base_and_the_runtime() -> None:
    outside = set(UNITS.folder) - UNITS.in_folder("base")
    assert UNITS.reaches(["base"], outside) == []


def test_only_the_boot_chooses_the_stub_organs() -> None:
    stubs = UNITS.in_folder("stubs")
    named = [f"{unit} withs {sorted(UNITS.direct[unit] & stubs)}" for unit, where in UNITS.folder.items()
             if where not in ("stubs", ".") and UNITS.direct[unit] & stubs]
    assert named == []
    assert "stub_organs" in UNITS.direct["mafiabot"]


def test_only_the_session_store_knows_of_sqlite() -> None:
    """The cycle and the organs see the session record alone: the store (store/) is the protocol's to call, and
    its SQLite binding is the store's alone (not even the record's codec's)."""
    store = UNITS.in_folder("store")
    assert {"sqlite", "session_store", "session_records"} <= store
    below = [folder for folder in ("cycle", "organs", "sessions", "turn") if (SOURCES / folder).is_dir()]
    assert [f"{unit} withs {sorted(UNITS.direct[unit] & store)}" for folder in below
            for unit in UNITS.in_folder(folder) if UNITS.direct[unit] & store] == []
    knowing = {unit for unit, named in UNITS.direct.items() if "sqlite" in named}
    assert knowing == {"session_store"}


def test_only_the_postgresql_store_knows_of_libpq() -> None:
    """libpq, linked by the dynamic build alone (store-pg/), is the PostgreSQL store's body's alone: its spec
    (store/) names no libpq, so the static build's body (store-pg-off/) completes the same spec."""
    knowing = {unit for unit, named in UNITS.direct.items() if "libpq" in named}
    assert knowing == {"session_repositories.postgres"}
    spec = SOURCES / "store" / "session_repositories-postgres.ads"
    assert "libpq" not in context_clause_units(spec)
    assert {path.parent.name for path in SOURCES.rglob("session_repositories-postgres.adb")} == {
        "store-pg", "store-pg-off"}
