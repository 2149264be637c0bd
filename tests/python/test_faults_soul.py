"""SOUL.md under racing boots: many bodies at once on one HERMES_HOME, with two identities.

Whatever the interleaving, SOUL.md is always one whole document that some body meant to write,
the backup of a user's own SOUL.md keeps exactly that user's text, and no temporary file is
left behind once every body has booted.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.body import BodyOptions
from support import SHIPPED_ORGANS

RACERS = 20
ROUNDS = 3
# Booting (SOUL.md included) takes ~10 ms; twenty at once on two cores well under a second.
BOOT_BOUND = 10.0
SOUL = "SOUL.md"
BACKUP = "SOUL.md.before-mafiabot"
USER_SOUL = "# SOUL\n\nMy own soul, written by hand.\n"
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}\n'


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The shipped fixture and a copy whose identity seed differs (so its SOUL.md does too)."""
    root = tmp_path_factory.mktemp("soul-fixtures")
    other = json.loads(SHIPPED_ORGANS.read_text(encoding="utf-8"))
    other["identity"]["seed"] += 1
    (root / "other.json").write_text(json.dumps(other), encoding="utf-8")
    return [SHIPPED_ORGANS, root / "other.json"]


@pytest.fixture(scope="module")
def documents(body_exe: Path, fixtures: list[Path], tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """What each fixture's body writes as SOUL.md when it boots alone."""
    written = set()
    for fixture in fixtures:
        home = tmp_path_factory.mktemp("alone")
        for proc in boot_all(body_exe, [fixture], home):
            proc.stdin.close()
            proc.wait(timeout=BOOT_BOUND)
        written.add((home / SOUL).read_text(encoding="utf-8"))
    assert len(written) == 2, "the two identity seeds must give two different documents"
    return written


def boot_all(body_exe: Path, fixtures: list[Path], home: Path) -> list[subprocess.Popen[bytes]]:
    """Start one body per fixture on `home` at once, then wait until each answered initialize."""
    procs = []
    for fixture in fixtures:
        argv = BodyOptions(body=body_exe, organs=fixture, hermes_home=home).argv()
        procs.append(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL))
    for proc in procs:
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
    for proc in procs:
        assert proc.stdout.readline().startswith(b'{"jsonrpc":"2.0","id":0,"result"'), "a racer did not boot"
    return procs


def race(body_exe: Path, fixtures: list[Path], home: Path) -> None:
    procs = boot_all(body_exe, [fixtures[n % 2] for n in range(RACERS)], home)
    for proc in procs:
        proc.stdin.close()
    assert [proc.wait(timeout=BOOT_BOUND) for proc in procs] == [0] * RACERS


@pytest.mark.parametrize("round_number", range(ROUNDS))
def test_racing_boots_leave_one_whole_soul_and_no_temporary_files(body_exe, fixtures, documents, tmp_path,
                                                                   round_number):
    home = tmp_path / "hermes"
    race(body_exe, fixtures, home)
    assert (home / SOUL).read_text(encoding="utf-8") in documents
    if (home / BACKUP).exists():
        assert (home / BACKUP).read_text(encoding="utf-8") in documents, "a torn backup"
    assert sorted(p.name for p in home.iterdir()) in ([SOUL], [SOUL, BACKUP])


def test_racing_boots_keep_the_users_own_soul_whole_in_the_backup(body_exe, fixtures, documents, tmp_path):
    home = tmp_path / "hermes"
    home.mkdir()
    (home / SOUL).write_text(USER_SOUL, encoding="utf-8")
    race(body_exe, fixtures, home)
    assert (home / SOUL).read_text(encoding="utf-8") in documents
    assert (home / BACKUP).read_text(encoding="utf-8") == USER_SOUL
    assert sorted(p.name for p in home.iterdir()) == [SOUL, BACKUP]
