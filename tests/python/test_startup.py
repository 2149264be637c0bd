"""Start-up behaviour: informational flags, the thresholds check, and SOUL.md in HERMES_HOME."""

from __future__ import annotations

import subprocess

import pytest

from harness.body import BodyOptions
from harness.client import BodyClient

# Informational flags and refused configurations end at once; the bound only stops a hang.
STARTUP_BOUND = 30.0


def run_body(body_exe, *args):
    return subprocess.run([str(body_exe), *args], capture_output=True, timeout=STARTUP_BOUND,
                          stdin=subprocess.DEVNULL, check=False)


def test_version_prints_a_version_and_exits_zero(body_exe):
    run = run_body(body_exe, "--version")
    assert run.returncode == 0
    assert run.stdout.strip()


def test_help_names_every_flag_and_exits_zero(body_exe):
    run = run_body(body_exe, "--help")
    assert run.returncode == 0
    text = (run.stdout + run.stderr).decode()
    for flag in ("--organs", "--max-line-bytes", "--max-depth", "--max-elements", "--max-sessions", "--no-soul",
                 "--soul", "--soul-state", "--soul-restore", "--hermes-home", "--thresholds"):
        assert flag in text


@pytest.mark.parametrize("thresholds", [
    "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8",  # the first pass must always run
    "0,0.5,0.4,0.6,0.7,0.8,0.9,1",  # decreasing
    "0,0.1,0.2,0.3,0.4,0.5,0.6,1.5",  # above 1
    "0,-0.1,0.2,0.3,0.4,0.5,0.6,0.7",  # below 0
    "0,0.1,0.2",  # not eight passes
    "0,a,0.2,0.3,0.4,0.5,0.6,0.7",  # not a number
])
def test_a_bad_thresholds_curve_refuses_to_start_with_a_message(body_exe, tmp_path, thresholds):
    run = run_body(body_exe, "--thresholds", thresholds, "--hermes-home", str(tmp_path / "h"))
    assert run.returncode != 0
    assert run.stdout == b"", "nothing but protocol messages on stdout"
    assert b"threshold" in run.stderr.lower()


def test_help_names_the_budget_flags(body_exe):
    text = (run_body(body_exe, "--help").stdout).decode()
    for flag in ("--energy fixture|budget", "--budget-calls", "--budget-window-s", "--budget-tokens"):
        assert flag in text


@pytest.mark.parametrize(("args", "says"), [
    (("--energy", "budget", "--budget-calls", "8"), b"--budget-calls 8 is less than one full turn's 9 model calls"),
    (("--budget-calls", "20"), b"--budget-calls needs --energy budget"),
    (("--energy", "budget", "--thresholds", "0,0,0,0,0,0,0,0"), b"--energy budget derives its own"),
    (("--energy", "budget", "--budget-window-s", "0"), b"--budget-window-s must lie in"),
    (("--energy", "pennies"), b"--energy needs fixture or budget, got 'pennies'"),
])
def test_a_budget_that_cannot_work_refuses_to_start_with_exit_2_in_one_line(body_exe, tmp_path, args, says):
    run = run_body(body_exe, *args, "--hermes-home", str(tmp_path / "h"))
    assert run.returncode == 2 and run.stdout == b""
    assert says in run.stderr.splitlines()[0]


def test_the_least_budget_one_full_turn_starts(spawn_body):
    client = spawn_body(no_soul=True, extra_args=("--energy", "budget", "--budget-calls", "9"))
    assert client.ping() == {}


def test_an_unknown_flag_refuses_to_start(body_exe):
    run = run_body(body_exe, "--frobnicate")
    assert run.returncode != 0 and run.stdout == b""


def test_a_bad_organ_fixture_refuses_to_start_naming_the_file(body_exe, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"fixture": ')
    run = run_body(body_exe, "--organs", str(broken), "--hermes-home", str(tmp_path / "h"))
    assert run.returncode != 0 and run.stdout == b""
    assert b"broken.json" in run.stderr


def test_boot_writes_soul_md_into_hermes_home(spawn_body, tmp_path):
    home = tmp_path / "hermes"
    client = spawn_body(hermes_home=home)
    client.initialize()
    identity = client.call_turn("who am I?", "u", "c", "s")["identity"]
    soul = (home / "SOUL.md").read_text(encoding="utf-8")
    assert all(card in soul for card in identity["cards"])


def test_no_soul_writes_nothing(spawn_body, tmp_path):
    home = tmp_path / "hermes"
    home.mkdir()
    client = spawn_body(hermes_home=home, no_soul=True)
    assert client.ping() == {}
    assert list(home.iterdir()) == []


def test_an_unchanged_soul_is_not_rewritten(spawn_body, tmp_path):
    home = tmp_path / "hermes"
    assert spawn_body(hermes_home=home).ping() == {}
    before = (home / "SOUL.md").stat()
    assert spawn_body(hermes_home=home).ping() == {}
    after = (home / "SOUL.md").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert sorted(p.name for p in home.iterdir()) == ["SOUL.md"]


def test_an_operators_own_soul_is_left_as_it_is_by_default(spawn_body, tmp_path):
    """The rest of this rule (replace, backups, restore) is tests/python/test_soul.py."""
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "SOUL.md").write_text("an operator's own soul\n")
    assert spawn_body(hermes_home=home).ping() == {}
    assert (home / "SOUL.md").read_text() == "an operator's own soul\n"
    assert sorted(p.name for p in home.iterdir()) == ["SOUL.md"]


def test_an_unwritable_hermes_home_is_a_warning_not_a_crash(spawn_body, tmp_path):
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    client = spawn_body(hermes_home=not_a_dir / "hermes")
    client.initialize()
    assert client.call_turn("still alive?", "u", "c", "s")["turn"] == 1
    assert client.stderr_text().strip()


def test_the_body_reads_hermes_home_from_the_environment(body_exe, tmp_path):
    home = tmp_path / "from-env"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "HERMES_HOME": str(home)}
    with BodyClient.from_options(BodyOptions(body=body_exe), env=env) as client:
        assert client.ping() == {}
    assert (home / "SOUL.md").is_file()


def test_a_missing_hermes_home_is_made_with_its_parents(spawn_body, tmp_path):
    home = tmp_path / "a" / "b" / "hermes"
    assert spawn_body(hermes_home=home).ping() == {}
    assert (home / "SOUL.md").is_file()
    assert sorted(p.name for p in home.iterdir()) == ["SOUL.md"]


@pytest.mark.parametrize("kind", ["a directory", "missing", "over 1 MiB"])
def test_an_organ_fixture_that_cannot_be_used_refuses_to_start_saying_why(body_exe, tmp_path, kind):
    fixture = tmp_path / "organs.json"
    if kind == "a directory":
        fixture.mkdir()
    elif kind == "over 1 MiB":
        fixture.write_bytes(b" " * (1024 * 1024 + 1))
    run = run_body(body_exe, "--organs", str(fixture), "--hermes-home", str(tmp_path / "h"))
    assert run.returncode != 0 and run.stdout == b""
    said = run.stderr.decode()
    assert str(fixture) in said
    assert ("larger than 1 MiB" if kind == "over 1 MiB" else "no such file") in said


def test_without_organs_the_body_finds_the_shipped_fixture_beside_its_own_directory(body_exe, tmp_path):
    """bin/mafiabot looks for ../../stubs/organs/default.json from the directory it runs in."""
    run = subprocess.run([str(body_exe), "--no-soul"], input=b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
                         capture_output=True, timeout=STARTUP_BOUND, cwd=tmp_path, check=False)
    assert run.returncode == 0, run.stderr.decode()
    assert b'"id":1' in run.stdout
