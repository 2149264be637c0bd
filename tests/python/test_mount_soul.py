"""SOUL.md through `mount`, `doctor` and `unmount` (issue 15, item 1): mount writes the body's
`--soul` and says what the body will do with SOUL.md, doctor reports it and writes nothing, and
unmount puts back the persona the body's SOUL.md replaced, unless the operator edited it since.

A Hermes start is played by booting the entry's own command line under the entry's env, as
Hermes does (test_hermes_real.py does it with the real Hermes).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from harness.cli import main
from harness.cli.exit_codes import ExitCode
from soul_support import SOUL, before_of, hermes_default
from support import REPO as REPO_ROOT

# A boot writes SOUL.md in about a millisecond; the bound only stops a hang.
BOOT_BOUND = 30.0
OPERATORS = "# The operator's persona\n\nSpeak like a lighthouse keeper.\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes-home"
    path.mkdir()
    return path


def entry_of(home: Path) -> dict:
    return YAML(typ="safe").load((home / "config.yaml").read_text(encoding="utf-8"))["mcp_servers"]["mafiabot"]


def boot_as_hermes_would(home: Path) -> subprocess.CompletedProcess[str]:
    entry = entry_of(home)
    done = subprocess.run([entry["command"], *entry["args"]], env={"PATH": "/usr/bin:/bin", **entry["env"]},
                          input="", capture_output=True, text=True, timeout=BOOT_BOUND, check=False)
    assert done.returncode == 0, done.stderr
    return done


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under root, its bytes and modification time."""
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def soul_line(out: str) -> str:
    [line] = [line for line in out.splitlines() if "SOUL.md:" in line or line.split()[1:2] == ["soul"]]
    return line


def test_mount_by_default_keeps_the_operators_soul_and_says_so(body_exe, home, capsys):
    (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    assert main(["mount", "--hermes-home", str(home)]) == 0
    assert "--soul" not in entry_of(home)["args"], "keep is the body's default: nothing to write"
    line = soul_line(capsys.readouterr().out)
    assert str(home / SOUL) in line and "the operator's own persona: the body leaves it as it is" in line
    done = boot_as_hermes_would(home)
    assert (home / SOUL).read_text(encoding="utf-8") == OPERATORS
    assert "--soul replace" in done.stderr


def test_mount_soul_replace_is_written_into_the_entry_and_the_boot_keeps_a_backup(body_exe, home, capsys):
    (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    assert main(["mount", "--hermes-home", str(home), "--soul", "replace"]) == 0
    args = entry_of(home)["args"]
    assert args[args.index("--soul") + 1] == "replace"
    assert "the body replaces it at boot (--soul replace)" in soul_line(capsys.readouterr().out)
    assert (home / SOUL).read_text(encoding="utf-8") == OPERATORS, "mount's own check writes no SOUL.md"
    boot_as_hermes_would(home)
    soul = (home / SOUL).read_text(encoding="utf-8")
    assert (home / before_of(soul)).read_text(encoding="utf-8") == OPERATORS


def test_mount_refuses_a_soul_policy_the_body_does_not_know(body_exe, home, capsys):
    assert main(["mount", "--hermes-home", str(home), "--soul", "always"]) == ExitCode.INVALID_INPUT
    assert "--soul" in capsys.readouterr().err
    assert not (home / "config.yaml").exists()


@pytest.mark.parametrize("state,status", [("missing", "ok"), ("hermes-default", "ok"), ("body", "ok"),
                                          ("operator", "warn")])
def test_doctor_reports_whose_soul_is_there_and_writes_nothing(body_exe, home, capsys, state, status):
    assert main(["mount", "--hermes-home", str(home)]) == 0
    if state == "hermes-default":
        (home / SOUL).write_text(hermes_default(), encoding="utf-8")
    elif state == "body":
        boot_as_hermes_would(home)
    elif state == "operator":
        (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    before = snapshot(home)
    capsys.readouterr()
    assert main(["doctor", "--hermes-home", str(home), "--no-hermes"]) == 0
    line = soul_line(capsys.readouterr().out)
    assert line.split()[:2] == [status, "soul"] and str(home / SOUL) in line
    assert snapshot(home) == before, "doctor wrote into the home"


def test_unmount_puts_the_operators_persona_back(body_exe, home, capsys):
    (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    assert main(["mount", "--hermes-home", str(home), "--soul", "replace"]) == 0
    boot_as_hermes_would(home)
    backup = before_of((home / SOUL).read_text(encoding="utf-8"))
    capsys.readouterr()
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    assert f"put back {backup}" in soul_line(capsys.readouterr().out)
    assert (home / SOUL).read_text(encoding="utf-8") == OPERATORS
    assert (home / backup).read_text(encoding="utf-8") == OPERATORS, "the backup stays"


def test_unmount_puts_hermes_default_back(body_exe, home, capsys):
    (home / SOUL).write_text(hermes_default(), encoding="utf-8")
    assert main(["mount", "--hermes-home", str(home)]) == 0
    boot_as_hermes_would(home)
    assert (home / SOUL).read_text(encoding="utf-8") != hermes_default()
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    assert (home / SOUL).read_text(encoding="utf-8") == hermes_default()


def test_unmount_leaves_a_soul_edited_since_the_boot_and_says_so(body_exe, home, capsys):
    assert main(["mount", "--hermes-home", str(home)]) == 0
    boot_as_hermes_would(home)
    edited = (home / SOUL).read_text(encoding="utf-8").replace("## Big-3", "Be brief.\n\n## Big-3")
    (home / SOUL).write_text(edited, encoding="utf-8")
    boot_as_hermes_would(home)
    assert (home / SOUL).read_text(encoding="utf-8") == edited, "the edit survived the next boot"
    capsys.readouterr()
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    assert "was edited since the body wrote it: left as it is" in soul_line(capsys.readouterr().out)
    assert (home / SOUL).read_text(encoding="utf-8") == edited


def test_unmount_dry_run_says_what_it_would_put_back_and_writes_nothing(body_exe, home, capsys):
    (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    assert main(["mount", "--hermes-home", str(home), "--soul", "replace"]) == 0
    boot_as_hermes_would(home)
    before = snapshot(home)
    capsys.readouterr()
    assert main(["unmount", "--hermes-home", str(home), "--dry-run"]) == 0
    assert "unmount puts back SOUL.md.before-mafiabot." in soul_line(capsys.readouterr().out)
    assert snapshot(home) == before


def test_unmount_without_the_body_removes_the_entry_and_says_where_the_persona_is(body_exe, home, tmp_path, capsys):
    moved = tmp_path / "bin" / "mafiabot"
    moved.parent.mkdir()
    moved.write_bytes(body_exe.read_bytes())
    moved.chmod(0o755)
    (home / SOUL).write_text(OPERATORS, encoding="utf-8")
    assert main(["mount", "--hermes-home", str(home), "--body", str(moved), "--soul", "replace"]) == 0
    boot_as_hermes_would(home)
    moved.unlink()
    capsys.readouterr()
    assert main(["unmount", "--hermes-home", str(home)]) == 1
    said = capsys.readouterr()
    assert "removed 'mafiabot'" in said.out
    assert "SOUL.md was left as it is" in said.err and "SOUL.md.before-mafiabot.*" in said.err
    assert not (home / "config.yaml").exists(), "the config mount made held nothing else, so it went with the entry"


@pytest.mark.parametrize("policy", ["keep", "replace", "off"])
def test_the_soul_policy_mount_writes_is_a_string_to_hermes_own_yaml_reader(body_exe, home, policy):
    """Hermes reads config.yaml with PyYAML (YAML 1.1), where a plain `off` is the boolean False."""
    hermes_python = REPO_ROOT / ".hermes-venv" / "bin" / "python"
    if not hermes_python.is_file():
        pytest.skip("Hermes is not installed in .hermes-venv (make hermes)")
    assert main(["mount", "--hermes-home", str(home), "--soul", policy]) == 0
    read = subprocess.run([str(hermes_python), "-c", ("import sys, yaml; "
                           "print(repr(yaml.safe_load(open(sys.argv[1]))['mcp_servers']['mafiabot']['args'][-2:]))"),
                           str(home / "config.yaml")], capture_output=True, text=True, timeout=BOOT_BOUND * 4,
                          check=True)
    assert read.stdout.strip() == repr(["--soul", policy])


def test_doctor_gives_hermes_a_scratch_copy_of_the_home_whose_body_writes_no_soul(body_exe, home, tmp_path):
    from harness.hermes_mount.doctor import quiet_copy
    from harness.hermes_mount.home import HermesHome
    assert main(["mount", "--hermes-home", str(home), "--soul", "replace"]) == 0
    (home / ".env").write_text("GITHUB_TOKEN=abc\n", encoding="utf-8")
    before = snapshot(home)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    staged = quiet_copy(HermesHome(home), "mafiabot", scratch)
    assert staged.path == scratch and snapshot(home) == before
    entry = entry_of(scratch)
    assert entry["args"][-2:] == ["--soul", "off"], "the last --soul is the one the body takes"
    # and the last --state: the scratch copy's body keeps no session in the operator's store
    assert entry["args"][-4:-2] == ["--state", str(scratch / "probe-sessions.db")]
    assert entry["args"][:-4] == entry_of(home)["args"] and entry["env"] == entry_of(home)["env"]
    assert (scratch / ".env").read_text(encoding="utf-8") == "GITHUB_TOKEN=abc\n"
    assert (scratch / ".env").stat().st_mode & 0o777 == 0o600
