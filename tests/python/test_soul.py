"""SOUL.md and the operator's words: what a boot writes, what it leaves, what it backs up, what
--soul-state says and what --soul-restore puts back (issue 15, item 1).

The body is run as Hermes runs it, one process per boot, its stdin closed at once (a boot writes
SOUL.md before it reads a line). Hermes's default persona comes from the installed Hermes
(soul_support), not from a copy.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from soul_support import BACKUP_NAME, MARK, SOUL, before_of, hermes_default, unmarked
from support import SHIPPED_ORGANS as DEFAULT_ORGANS

# A boot writes SOUL.md in about a millisecond; the bound only stops a hang.
BOOT_BOUND = 30.0
OPERATORS = "# My persona\n\nYou are terse, and you answer in French.\n"


def body_run(body_exe: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(body_exe), "--organs", str(DEFAULT_ORGANS), "--hermes-home", str(home), *args],
                          input="", capture_output=True, text=True, timeout=BOOT_BOUND, check=False)


def boot(body_exe: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = body_run(body_exe, home, *args)
    assert done.returncode == 0, done.stderr
    return done


def answer(body_exe: Path, home: Path, task: str, *args: str) -> tuple[str, str]:
    """The (word, sentence) --soul-state or --soul-restore printed."""
    done = body_run(body_exe, home, task, *args)
    assert done.returncode == 0, done.stderr
    word, sentence = done.stdout.rstrip("\n").split("\t")
    assert "\n" not in done.stdout.rstrip("\n"), "one line"
    return word, sentence


def listing(home: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(home.iterdir())}


def backups(home: Path) -> dict[str, str]:
    found = {p.name: p.read_text(encoding="utf-8") for p in home.iterdir() if p.name != SOUL}
    assert all(BACKUP_NAME.match(name) for name in found), f"unexpected files: {sorted(found)}"
    return found


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes"
    path.mkdir()
    return path


@pytest.fixture
def bodys_soul(body_exe: Path, tmp_path: Path) -> str:
    """What the body writes into an empty home."""
    alone = tmp_path / "alone"
    boot(body_exe, alone)
    return (alone / SOUL).read_text(encoding="utf-8")


def test_a_missing_soul_is_written_marked_as_the_bodys_and_as_replacing_nothing(body_exe, home):
    assert answer(body_exe, home, "--soul-state")[0] == "missing"
    boot(body_exe, home)
    soul = (home / SOUL).read_text(encoding="utf-8")
    assert soul.startswith("# SOUL\n") and before_of(soul) == "none"
    assert list(listing(home)) == [SOUL]
    assert answer(body_exe, home, "--soul-state")[0] == "body"


@pytest.mark.parametrize("variant", ["exact", "trailing newline", "CRLF and blank lines around", "byte-order mark"])
def test_hermes_default_persona_is_replaced_and_unmount_puts_it_back(body_exe, home, variant):
    default = hermes_default()
    text = {"exact": default, "trailing newline": default + "\n", "CRLF and blank lines around": f"\r\n{default}\r\n\r\n",
            "byte-order mark": "\ufeff" + default}[variant]
    (home / SOUL).write_text(text, encoding="utf-8", newline="")
    assert answer(body_exe, home, "--soul-state")[0] == "hermes-default"
    done = boot(body_exe, home)
    soul = (home / SOUL).read_text(encoding="utf-8")
    assert "voice of the mafiabot body" in soul and before_of(soul) == "hermes-default"
    assert list(listing(home)) == [SOUL], "Hermes's default needs no backup: the body knows it"
    assert done.stderr == ""
    assert answer(body_exe, home, "--soul-restore")[0] == "restored"
    assert (home / SOUL).read_text(encoding="utf-8") == default


def test_a_persona_one_word_off_hermes_default_is_the_operators(body_exe, home):
    edited = hermes_default().replace("direct", "blunt")
    (home / SOUL).write_text(edited, encoding="utf-8")
    assert answer(body_exe, home, "--soul-state")[0] == "operator"
    boot(body_exe, home)
    assert (home / SOUL).read_text(encoding="utf-8") == edited


def test_an_operators_soul_is_left_byte_for_byte_and_the_body_says_so_once(body_exe, home):
    (home / SOUL).write_bytes(OPERATORS.encode())
    os.chmod(home / SOUL, 0o600)
    before = (home / SOUL).stat()
    done = boot(body_exe, home)
    after = (home / SOUL).stat()
    assert (home / SOUL).read_bytes() == OPERATORS.encode()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert list(listing(home)) == [SOUL]
    warnings = done.stderr.splitlines()
    assert len(warnings) == 1 and str(home / SOUL) in warnings[0] and "--soul replace" in warnings[0]
    word, sentence = answer(body_exe, home, "--soul-state")
    assert word == "operator" and str(home / SOUL) in sentence and "leaves it" in sentence


def test_the_body_still_serves_beside_an_operators_soul(spawn_body, home):
    (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    client = spawn_body(hermes_home=home)
    client.initialize()
    assert client.call_turn("still serving?", "u", "c", "s")["turn"] == 1
    assert (home / SOUL).read_text(encoding="utf-8") == OPERATORS


@pytest.mark.parametrize("edit", ["a line added", "the mark's record changed", "the mark removed"])
def test_the_bodys_soul_edited_after_mount_survives_the_next_boot(body_exe, home, edit):
    boot(body_exe, home)
    soul = (home / SOUL).read_text(encoding="utf-8")
    edited = {"a line added": soul.replace("## Big-3", "Always answer in verse.\n\n## Big-3"),
              "the mark's record changed": soul.replace("before=none", "before=hermes-default"),
              "the mark removed": MARK.sub("\n", soul)}[edit]
    assert edited != soul
    (home / SOUL).write_text(edited, encoding="utf-8")
    done = boot(body_exe, home)
    assert (home / SOUL).read_text(encoding="utf-8") == edited
    assert "--soul replace" in done.stderr
    assert answer(body_exe, home, "--soul-state")[0] == "operator"
    assert answer(body_exe, home, "--soul-restore")[0] == "kept"
    assert (home / SOUL).read_text(encoding="utf-8") == edited
    assert list(listing(home)) == [SOUL]


def test_soul_replace_keeps_a_new_timestamped_backup_each_time_and_never_overwrites_one(body_exe, home):
    personas = [OPERATORS, "# Second persona\n\nBe kind.\n", "# Third\n"]
    for persona in personas:
        (home / SOUL).write_text(persona, encoding="utf-8")
        boot(body_exe, home, "--soul", "replace")
        soul = (home / SOUL).read_text(encoding="utf-8")
        assert "voice of the mafiabot body" in soul
        assert backups(home)[before_of(soul)] == persona, "the mark names the backup of what it replaced"
    assert sorted(backups(home).values()) == sorted(personas), "one backup per replacement, each whole"


def test_soul_replace_makes_no_backup_of_the_bodys_own_or_of_hermes_default(body_exe, home):
    boot(body_exe, home, "--soul", "replace")
    (home / SOUL).write_text(hermes_default(), encoding="utf-8")
    boot(body_exe, home, "--soul", "replace")
    boot(body_exe, home, "--soul", "replace")
    assert list(listing(home)) == [SOUL]


def test_a_backup_keeps_the_operators_permissions_and_a_large_file_whole(body_exe, home):
    large = OPERATORS + "x" * (200 * 1024) + "\n"
    (home / SOUL).write_text(large, encoding="utf-8")
    os.chmod(home / SOUL, 0o600)
    assert answer(body_exe, home, "--soul-state")[0] == "operator"
    boot(body_exe, home, "--soul", "replace")
    [(name, text)] = backups(home).items()
    assert text == large
    assert (home / name).stat().st_mode & 0o777 == 0o600


def test_unmount_puts_the_operators_persona_back_and_keeps_the_backup(body_exe, home):
    (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    boot(body_exe, home, "--soul", "replace")
    kept = backups(home)
    word, sentence = answer(body_exe, home, "--soul-restore")
    assert word == "restored" and next(iter(kept)) in sentence
    assert (home / SOUL).read_text(encoding="utf-8") == OPERATORS
    assert backups(home) == kept
    assert answer(body_exe, home, "--soul-restore")[0] == "kept", "a second restore finds the operator's"


def test_unmount_removes_the_bodys_soul_when_there_was_none_before(body_exe, home):
    boot(body_exe, home)
    assert answer(body_exe, home, "--soul-restore")[0] == "removed"
    assert list(listing(home)) == []
    assert answer(body_exe, home, "--soul-restore")[0] == "missing"


def test_a_body_with_another_identity_rewrites_the_bodys_soul_and_keeps_what_it_replaced(body_exe, home, tmp_path):
    other = json.loads(DEFAULT_ORGANS.read_text(encoding="utf-8"))
    other["identity"]["seed"] += 1
    (tmp_path / "other.json").write_text(json.dumps(other), encoding="utf-8")
    (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    boot(body_exe, home, "--soul", "replace")
    first = (home / SOUL).read_text(encoding="utf-8")
    boot(body_exe, home, "--organs", str(tmp_path / "other.json"))
    second = (home / SOUL).read_text(encoding="utf-8")
    assert second != first and before_of(second) == before_of(first)
    assert answer(body_exe, home, "--soul-restore")[0] == "restored"
    assert (home / SOUL).read_text(encoding="utf-8") == OPERATORS


def test_an_earlier_bodys_unmarked_soul_is_the_bodys_and_its_one_backup_is_what_it_replaced(body_exe, home,
                                                                                          bodys_soul):
    (home / SOUL).write_text(unmarked(bodys_soul), encoding="utf-8")
    (home / "SOUL.md.before-mafiabot").write_text(OPERATORS, encoding="utf-8")
    boot(body_exe, home)
    assert before_of((home / SOUL).read_text(encoding="utf-8")) == "SOUL.md.before-mafiabot"
    assert answer(body_exe, home, "--soul-restore")[0] == "restored"
    assert (home / SOUL).read_text(encoding="utf-8") == OPERATORS


@pytest.mark.parametrize("policy", ["keep", "replace", "off"])
@pytest.mark.parametrize("state", ["missing", "hermes-default", "body", "operator"])
def test_soul_state_writes_nothing_and_says_what_a_boot_would_do(body_exe, home, state, policy):
    if state == "hermes-default":
        (home / SOUL).write_text(hermes_default(), encoding="utf-8")
    elif state == "body":
        boot(body_exe, home)
    elif state == "operator":
        (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    before = listing(home)
    word, sentence = answer(body_exe, home, "--soul-state", "--soul", policy)
    assert (word, listing(home)) == (state, before)
    assert str(home / SOUL) in sentence
    booted = boot(body_exe, home, "--soul", policy)
    changed = listing(home) != before
    replaces = "replaces it" in sentence or "writes its own" in sentence
    assert changed == replaces, f"--soul-state said {sentence!r}; the boot {'did' if changed else 'did not'} write"
    assert ("--soul replace" in booted.stderr) == (state == "operator" and policy == "keep")


def test_soul_off_and_no_soul_write_nothing(body_exe, home):
    boot(body_exe, home, "--soul", "off")
    boot(body_exe, home, "--no-soul")
    assert list(listing(home)) == []


@pytest.mark.parametrize("value", ["KEEP", "always", ""])
def test_a_bad_soul_policy_refuses_to_start_naming_the_choices(body_exe, home, value):
    done = body_run(body_exe, home, "--soul", value)
    assert done.returncode == 2 and done.stdout == ""
    assert "--soul needs keep, replace or off" in done.stderr
