"""`mafiabot-harness mount` / `unmount`: the entry Hermes needs, and the operator's file kept intact."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from harness.cli import main
from harness.cli.exit_codes import ExitCode
from harness.hermes_mount.probe import RELAY_MODULE

USER_CONFIG = """\
# My Hermes, hand-tuned. Do not lose this comment.
model:
  provider: custom   # the box under the desk
  default: "qwen-72b"
  base_url: 'http://10.0.0.2:8000/v1'

toolsets:
- web
- terminal   # needed for builds

mcp_servers:
  # GitHub first, always
  github:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-github"]
    env: {GITHUB_TOKEN: "${GITHUB_TOKEN}"}
agent: {api_max_retries: 3}
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes-home"
    path.mkdir()
    return path


def mount(home: Path, *extra: str) -> int:
    return main(["mount", "--hermes-home", str(home), *extra])


def load(path: Path):
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def test_mount_into_an_empty_home_writes_the_entry_hermes_needs(body_exe, home, capsys):
    assert mount(home) == 0
    entry = load(home / "config.yaml")["mcp_servers"]["mafiabot"]
    assert entry["command"] == str(body_exe.absolute())
    assert entry["args"][0] == "--organs" and Path(entry["args"][1]).is_absolute()
    assert entry["env"] == {"HERMES_HOME": str(home)}
    assert entry["timeout"] == 60 and entry["connect_timeout"] == 30
    out = capsys.readouterr().out
    assert "mcp__mafiabot__turn" in out
    assert "mcp_discovery_timeout (1.5 s, Hermes's default)" in out and "--discovery-timeout 5" in out
    assert not (home / "SOUL.md").exists(), "mount's check must not write SOUL.md"


def test_mount_keeps_every_line_of_the_user_s_file_in_order_and_backs_it_up(body_exe, home):
    config = home / "config.yaml"
    config.write_text(USER_CONFIG, encoding="utf-8")
    assert mount(home) == 0
    after = config.read_text(encoding="utf-8")
    added = after.splitlines()
    for line in USER_CONFIG.splitlines():
        assert line in added, f"lost: {line!r}"
        added.remove(line)
    assert all(line.startswith("  mafiabot:") or line.startswith("    ") for line in added), added
    assert after.index("github:") < after.index("mafiabot:") < after.index("agent:")
    assert (home / "config.yaml.bak").read_text(encoding="utf-8") == USER_CONFIG


def test_mounting_twice_changes_nothing_and_makes_no_second_backup(body_exe, home, capsys):
    (home / "config.yaml").write_text(USER_CONFIG, encoding="utf-8")
    assert mount(home) == 0
    before = (home / "config.yaml").stat()
    (home / "config.yaml.bak").unlink()
    capsys.readouterr()
    assert mount(home) == 0
    assert "already mounted as asked" in capsys.readouterr().out
    after = (home / "config.yaml").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not (home / "config.yaml.bak").exists()


def test_dry_run_prints_the_diff_and_writes_nothing(body_exe, home, capsys):
    (home / "config.yaml").write_text(USER_CONFIG, encoding="utf-8")
    assert mount(home, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "+  mafiabot:" in out and f"+    env: {{HERMES_HOME: {home}}}" in out
    assert not any(line.startswith("-") and not line.startswith("---") for line in out.splitlines())
    assert (home / "config.yaml").read_text(encoding="utf-8") == USER_CONFIG
    assert not (home / "config.yaml.bak").exists()


def test_mount_updates_an_existing_entry_in_place_keeping_the_operator_s_own_keys(body_exe, home, capsys):
    (home / "config.yaml").write_text(
        "mcp_servers:\n"
        "  mafiabot:\n"
        "    command: /old/place/mafiabot   # moved since\n"
        "    enabled: false\n"
        "    tools: {include: [turn]}\n"
        "    env: {HERMES_HOME: /elsewhere, LANG: C.UTF-8}\n", encoding="utf-8")
    assert mount(home) == 0
    entry = load(home / "config.yaml")["mcp_servers"]["mafiabot"]
    assert entry["command"] == str(body_exe.absolute())
    assert entry["enabled"] is True and entry["tools"] == {"include": ["turn"]}
    assert entry["env"] == {"HERMES_HOME": str(home), "LANG": "C.UTF-8"}
    out = capsys.readouterr().out
    assert "Hermes would have read the entry's enabled: False" in out and "LANG" in out and "tools" in out
    assert "# moved since" in (home / "config.yaml").read_text()


@pytest.mark.parametrize("text, says", [
    ("model:\n  provider: custom\n  bad: [1, 2\nother: 1\n", "line 4, column 6"),
    ("model: {a: 1}\nmodel: {b: 2}\n", "line 2"),
    ("- just\n- a list\n", "top level must be a mapping"),
    ("mcp_servers: [github]\n", "'mcp_servers' (line 1) is not a mapping"),
    ("mcp_servers:\n  mafiabot: yes\n", "'mcp_servers.mafiabot' (line 2) is not a mapping"),
    ("mcp_discovery_timeout: soon\n", "mcp_discovery_timeout' (line 1) is not a number"),
])
def test_a_malformed_config_is_reported_with_its_line_and_left_untouched(body_exe, home, capsys, text, says):
    (home / "config.yaml").write_text(text, encoding="utf-8")
    assert mount(home) == ExitCode.INVALID_INPUT
    assert says in capsys.readouterr().err
    assert (home / "config.yaml").read_text(encoding="utf-8") == text
    assert not (home / "config.yaml.bak").exists()


def test_a_missing_body_is_said_plainly_and_nothing_is_written(home, tmp_path, capsys):
    assert mount(home, "--body", str(tmp_path / "bin" / "mafiabot")) == ExitCode.BODY_NOT_FOUND
    err = capsys.readouterr().err
    assert f"the body executable {tmp_path / 'bin' / 'mafiabot'} does not exist" in err and "make build" in err
    assert not (home / "config.yaml").exists()


def test_a_crashing_body_is_said_plainly_and_the_config_is_untouched(home, tmp_path, capsys):
    crashing = tmp_path / "mafiabot"
    crashing.write_text("#!/bin/sh\necho 'mafiabot: the organ fixture is broken' >&2\nexit 2\n")
    crashing.chmod(0o755)
    (home / "config.yaml").write_text(USER_CONFIG, encoding="utf-8")
    assert mount(home, "--body", str(crashing)) == ExitCode.BODY_DIED
    out, err = capsys.readouterr()
    assert "the body does not work, so config.yaml was not changed" in out
    assert "exit code 2" in err and "the organ fixture is broken" in err and len(err.splitlines()) == 1
    assert (home / "config.yaml").read_text(encoding="utf-8") == USER_CONFIG


def test_mount_into_a_profile_creates_it_with_its_own_home_in_the_entry(body_exe, home, capsys):
    assert mount(home, "--profile", "tester") == 0
    profile = home / "profiles" / "tester"
    entry = load(profile / "config.yaml")["mcp_servers"]["mafiabot"]
    assert entry["env"]["HERMES_HOME"] == str(profile)
    assert "created profile 'tester'" in capsys.readouterr().out
    assert not (home / "config.yaml").exists()


def test_a_profile_name_hermes_would_refuse_is_bad_input(home, capsys):
    assert mount(home, "--profile", "Bad Name") == ExitCode.INVALID_INPUT
    assert "not one Hermes accepts" in capsys.readouterr().err


def test_discovery_timeout_is_set_only_when_asked(body_exe, home, capsys):
    assert mount(home, "--discovery-timeout", "5") == 0
    assert load(home / "config.yaml")["mcp_discovery_timeout"] == 5
    assert "(5 s, as set in config.yaml)" in capsys.readouterr().out


def test_unmount_removes_only_the_entry_and_is_idempotent(body_exe, home, capsys):
    (home / "config.yaml").write_text(USER_CONFIG, encoding="utf-8")
    assert mount(home) == 0
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    assert (home / "config.yaml").read_text(encoding="utf-8") == USER_CONFIG
    capsys.readouterr()
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    assert "nothing is mounted as 'mafiabot'" in capsys.readouterr().out
    assert (home / "config.yaml").read_text(encoding="utf-8") == USER_CONFIG


def test_a_symlinked_config_is_written_through_and_keeps_its_permissions(body_exe, home, tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "hermes.yaml"
    real.write_text(USER_CONFIG, encoding="utf-8")
    real.chmod(0o600)
    (home / "config.yaml").symlink_to(real)
    assert mount(home) == 0
    assert (home / "config.yaml").is_symlink()
    assert "mafiabot:" in real.read_text(encoding="utf-8")
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


def test_mount_with_record_runs_the_body_through_the_recording_relay(body_exe, home, tmp_path):
    record = tmp_path / "sessions" / "hermes.jsonl"
    assert mount(home, "--record", str(record)) == 0
    entry = load(home / "config.yaml")["mcp_servers"]["mafiabot"]
    assert entry["command"] == sys.executable
    args = entry["args"]
    assert args[:2] == ["-m", RELAY_MODULE] and str(record) in args
    assert args[args.index("--") + 1] == str(body_exe.absolute())


def test_a_file_of_comments_only_keeps_them_above_the_new_entry(body_exe, home):
    (home / "config.yaml").write_text("# nothing configured yet\n# see the docs\n", encoding="utf-8")
    assert mount(home) == 0
    text = (home / "config.yaml").read_text(encoding="utf-8")
    assert text.startswith("# nothing configured yet\n# see the docs\nmcp_servers:\n")
    assert os.access(home / "config.yaml", os.R_OK)
