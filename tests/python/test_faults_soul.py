"""SOUL.md under racing boots: many bodies at once on one HERMES_HOME, with two identities.

Whatever the interleaving, SOUL.md is always one whole document that some body meant to write
(its mark intact: --soul-state calls it the body's), an operator's own SOUL.md is never changed
under --soul keep, every backup under --soul replace holds exactly the operator's text (never a
body's soul), unmount's restore afterwards gives the operator's text back, and no temporary
file is left behind once every body has booted.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.body import BodyOptions
from soul_support import BACKUP_NAME, SOUL, hermes_default, unmarked
from support import SHIPPED_ORGANS

RACERS = 20
ROUNDS = 3
# Booting (SOUL.md included) takes ~10 ms; twenty at once on two cores well under a second.
BOOT_BOUND = 10.0
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
    """What each fixture's body writes as SOUL.md when it boots alone, its mark left out."""
    written = set()
    for fixture in fixtures:
        home = tmp_path_factory.mktemp("alone")
        for proc in boot_all(body_exe, [fixture], home):
            proc.stdin.close()
            proc.wait(timeout=BOOT_BOUND)
        written.add(unmarked((home / SOUL).read_text(encoding="utf-8")))
    assert len(written) == 2, "the two identity seeds must give two different documents"
    return written


def boot_all(body_exe: Path, fixtures: list[Path], home: Path, *args: str) -> list[subprocess.Popen[bytes]]:
    """Start one body per fixture on `home` at once, then wait until each answered initialize."""
    procs = []
    for fixture in fixtures:
        argv = BodyOptions(body=body_exe, organs=fixture, hermes_home=home, extra_args=args).argv()
        procs.append(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL))
    for proc in procs:
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
    for proc in procs:
        assert proc.stdout.readline().startswith(b'{"jsonrpc":"2.0","id":0,"result"'), "a racer did not boot"
    return procs


def race(body_exe: Path, fixtures: list[Path], home: Path, *args: str) -> None:
    procs = boot_all(body_exe, [fixtures[n % 2] for n in range(RACERS)], home, *args)
    for proc in procs:
        proc.stdin.close()
    assert [proc.wait(timeout=BOOT_BOUND) for proc in procs] == [0] * RACERS


def soul_task(body_exe: Path, home: Path, task: str) -> str:
    """The word --soul-state or --soul-restore answers."""
    argv = BodyOptions(body=body_exe, hermes_home=home, extra_args=(task,)).argv()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=BOOT_BOUND, check=True)
    return done.stdout.split("\t")[0]


def backups(home: Path) -> list[str]:
    names = sorted(p.name for p in home.iterdir() if p.name != SOUL)
    assert all(BACKUP_NAME.match(name) for name in names), f"not a soul or a backup: {names}"
    return names


@pytest.mark.parametrize("round_number", range(ROUNDS))
def test_racing_boots_leave_one_whole_soul_and_no_temporary_files(body_exe, fixtures, documents, tmp_path,
                                                                   round_number):
    home = tmp_path / "hermes"
    race(body_exe, fixtures, home)
    assert unmarked((home / SOUL).read_text(encoding="utf-8")) in documents
    assert soul_task(body_exe, home, "--soul-state") == "body"
    assert backups(home) == [], "replacing nothing backs up nothing"


def test_racing_boots_never_touch_the_operators_own_soul(body_exe, fixtures, tmp_path):
    home = tmp_path / "hermes"
    home.mkdir()
    (home / SOUL).write_text(USER_SOUL, encoding="utf-8")
    race(body_exe, fixtures, home)
    assert (home / SOUL).read_text(encoding="utf-8") == USER_SOUL
    assert backups(home) == []


@pytest.mark.parametrize("round_number", range(ROUNDS))
def test_racing_replacing_boots_back_up_only_the_operators_soul_and_restore_gives_it_back(
        body_exe, fixtures, documents, tmp_path, round_number):
    home = tmp_path / "hermes"
    home.mkdir()
    (home / SOUL).write_text(USER_SOUL, encoding="utf-8")
    race(body_exe, fixtures, home, "--soul", "replace")
    assert unmarked((home / SOUL).read_text(encoding="utf-8")) in documents
    kept = backups(home)
    assert kept, "the operator's soul was replaced without a backup"
    assert [(home / name).read_text(encoding="utf-8") for name in kept] == [USER_SOUL] * len(kept), \
        "a backup holds something other than the operator's text"
    assert soul_task(body_exe, home, "--soul-restore") == "restored"
    assert (home / SOUL).read_text(encoding="utf-8") == USER_SOUL
    assert backups(home) == kept, "restoring keeps every backup"


def test_racing_boots_on_hermes_default_replace_it_and_restore_gives_it_back(body_exe, fixtures, documents,
                                                                               tmp_path):
    default = hermes_default()
    home = tmp_path / "hermes"
    home.mkdir()
    (home / SOUL).write_text(default, encoding="utf-8")
    race(body_exe, fixtures, home)
    assert unmarked((home / SOUL).read_text(encoding="utf-8")) in documents
    assert backups(home) == []
    assert soul_task(body_exe, home, "--soul-restore") == "restored"
    assert (home / SOUL).read_text(encoding="utf-8") == default
