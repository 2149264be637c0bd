"""`mafiabot-harness mount` / `unmount`: the entry Hermes needs, and the operator's file kept intact."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from harness.cli import main
from harness.cli.exit_codes import ExitCode
from harness.hermes_mount.config_file import backups_of
from harness.hermes_mount.made import RECORD_NAME
from harness.hermes_plugin import PLUGIN_NAME, SERVERS_FILE
from harness.replay.recorder import RELAY_MODULE
from support import SHIPPED_ORGANS, harness_bounded

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


# The arguments mount always writes first: --organs FILE and --state FILE (the home's session store).
OWN = 4


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
    # The entry's lines, and the Level1 plugin's item in a `plugins:` block of its own at the end.
    assert added[-3:] == ["plugins:", "  enabled:", "  - mafiabot-level1"], added
    assert all(line.startswith(("  mafiabot:", "    ")) for line in added[:-3]), added
    assert after.index("github:") < after.index("mafiabot:") < after.index("agent:") < after.index("plugins:")
    [backup] = backups_of(config)
    assert backup.read_text(encoding="utf-8") == USER_CONFIG


def test_mounting_twice_changes_nothing_and_makes_no_second_backup(body_exe, home, capsys):
    (home / "config.yaml").write_text(USER_CONFIG, encoding="utf-8")
    assert mount(home) == 0
    before = (home / "config.yaml").stat()
    for backup in backups_of(home / "config.yaml"):
        backup.unlink()
    capsys.readouterr()
    assert mount(home) == 0
    assert "already mounted as asked" in capsys.readouterr().out
    after = (home / "config.yaml").stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert not backups_of(home / "config.yaml")


def test_dry_run_prints_the_diff_and_writes_nothing(body_exe, home, capsys):
    (home / "config.yaml").write_text(USER_CONFIG, encoding="utf-8")
    assert mount(home, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "+  mafiabot:" in out and f"+    env: {{HERMES_HOME: {home}}}" in out
    assert not any(line.startswith("-") and not line.startswith("---") for line in out.splitlines())
    assert (home / "config.yaml").read_text(encoding="utf-8") == USER_CONFIG
    assert not backups_of(home / "config.yaml")


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
    assert not backups_of(home / "config.yaml")


@pytest.mark.parametrize("kind", ["a FIFO", "a character device"])
def test_a_config_that_is_a_fifo_or_a_device_is_refused_by_every_command_never_waited_on(home, kind):
    config = home / "config.yaml"
    if kind == "a FIFO":
        os.mkfifo(config)
    else:
        config.symlink_to("/dev/zero")
    for command in (["mount", "--dry-run"], ["unmount"], ["doctor"]):
        done = harness_bounded(*command, "--hermes-home", str(home))
        assert f"{config} is not a regular file ({kind}); it was left untouched" in done.stderr + done.stdout, command
        assert done.returncode in (ExitCode.INVALID_INPUT, ExitCode.NOT_DONE), (command, done.stderr)
    assert sorted(os.listdir(home)) == ["config.yaml"]


@pytest.mark.parametrize("record, command", [(RECORD_NAME, "unmount"), (f"plugins/{PLUGIN_NAME}/{SERVERS_FILE}", "mount")])
def test_a_record_of_the_mount_replaced_by_a_fifo_is_said_in_one_line_never_waited_on(body_exe, home, record,
                                                                                      command):
    assert mount(home) == 0
    path = home / record
    path.unlink()
    os.mkfifo(path)
    done = harness_bounded(command, "--hermes-home", str(home))
    assert f"{path} cannot be read ({path} is not a regular file (a FIFO))" in done.stdout + done.stderr, done


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


def test_arguments_the_body_refuses_are_bad_input_with_the_body_s_own_line_and_nothing_is_written(
        body_exe, home, capsys):
    assert mount(home, "--body-arg=--energy=zzz") == ExitCode.INVALID_INPUT
    out, err = capsys.readouterr()
    assert "the body does not work, so config.yaml was not changed" in out
    assert err == ("mafiabot-harness: error: the body refused the entry: mafiabot: error: --energy needs "
                   "fixture or budget, got 'zzz'; config.yaml was not changed\n")
    assert list(home.iterdir()) == []


@pytest.mark.parametrize("option, value, says", [
    ("--name", "mafiabot\n", "server name 'mafiabot\\n'"),
    ("--profile", "tester\n", "profile name 'tester\\n'"),
])
def test_a_name_with_a_trailing_newline_is_refused_and_nothing_is_written(body_exe, home, capsys, option, value, says):
    # `^...$` matches before a final newline: each name is held to its rule whole.
    assert mount(home, option, value) == ExitCode.INVALID_INPUT
    assert says in capsys.readouterr().err
    assert list(home.iterdir()) == []


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


def test_unmount_keeps_the_session_store_and_says_where_it_is(body_exe, home, capsys):
    assert mount(home) == 0
    store = home / "mafiabot" / "sessions.db"
    # The body makes its store at its first start; a start that reads no request is enough
    subprocess.run([str(body_exe), "--organs", str(SHIPPED_ORGANS), "--no-soul", "--state", str(store)],
                   input=b"", capture_output=True, timeout=30, check=True)
    assert store.is_file()
    before = store.read_bytes()
    capsys.readouterr()
    assert main(["unmount", "--hermes-home", str(home), "--dry-run"]) == 0
    assert f"sessions: kept in {store}" in capsys.readouterr().out
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    out = capsys.readouterr().out
    assert f"sessions: kept in {store}" in out and "deletes no session" in out
    assert store.read_bytes() == before


def test_unmount_without_a_store_on_disk_says_nothing_of_sessions(body_exe, home, capsys):
    assert mount(home, "--state", "off") == 0
    capsys.readouterr()
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    assert "sessions:" not in capsys.readouterr().out


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


def test_mount_with_record_runs_the_body_through_the_recording_relay(body_exe, home, tmp_path, capsys):
    record = tmp_path / "sessions" / "hermes.jsonl"
    record.parent.mkdir()
    assert mount(home, "--record", str(record)) == 0
    entry = load(home / "config.yaml")["mcp_servers"]["mafiabot"]
    assert entry["command"] == sys.executable
    args = entry["args"]
    assert args[:2] == ["-m", RELAY_MODULE] and str(record) in args
    assert args[args.index("--") + 1] == str(body_exe.absolute())
    checked = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("checking the entry"))
    assert f"{sys.executable} -m {RELAY_MODULE} --out " in checked, "the check must start the relay Hermes will start"
    assert list(record.parent.iterdir()) == [], "the check must leave no recording behind"


def test_the_check_runs_the_entry_from_elsewhere_as_hermes_does_not_from_our_folder(body_exe, home, tmp_path,
                                                                                     monkeypatch):
    """Hermes starts a server from its own working directory: what works only from ours must fail the check."""
    here = tmp_path / "here"
    here.mkdir()
    (here / "only-here").write_text("", encoding="utf-8")
    picky = tmp_path / "mafiabot"
    picky.write_text(f"#!/bin/sh\n[ -e only-here ] && {{ echo 'started from the caller folder' >&2; exit 3; }}\n"
                     f"exec {body_exe.absolute()} \"$@\"\n", encoding="utf-8")
    picky.chmod(0o755)
    monkeypatch.chdir(here)
    assert mount(home, "--body", str(picky)) == 0


def test_recording_into_a_missing_folder_is_refused_and_nothing_is_written(body_exe, home, tmp_path, capsys):
    (home / "config.yaml").write_text(USER_CONFIG, encoding="utf-8")
    missing = tmp_path / "no-such-folder" / "hermes.jsonl"
    assert mount(home, "--record", str(missing)) == 2
    err = capsys.readouterr().err
    assert f"the folder {missing.parent} does not exist" in err and f"mkdir -p {missing.parent}" in err
    assert (home / "config.yaml").read_text(encoding="utf-8") == USER_CONFIG
    assert not backups_of(home / "config.yaml") and not missing.parent.exists()


def test_doctor_runs_the_relay_and_fails_the_record_check_once_its_folder_is_gone(body_exe, home, tmp_path, capsys):
    record = tmp_path / "sessions" / "hermes.jsonl"
    record.parent.mkdir()
    assert mount(home, "--record", str(record)) == 0
    before = (home / "config.yaml").read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["doctor", "--hermes-home", str(home), "--no-hermes"]) == 0
    out = capsys.readouterr().out
    assert f"ok    record     the relay can record into {record}" in out and "ok    handshake" in out
    assert list(record.parent.iterdir()) == [], "doctor's probe must leave no recording behind"
    record.parent.rmdir()
    assert main(["doctor", "--hermes-home", str(home), "--no-hermes"]) == 1
    out = capsys.readouterr().out
    assert f"fail  record     the relay records into {record}, but the folder {record.parent} does not exist" in out
    assert "skip  handshake  the relay must be able to record first" in out
    assert (home / "config.yaml").read_text(encoding="utf-8") == before


def test_remount_keeps_the_operator_s_body_arguments_and_timeouts(body_exe, home, capsys):
    assert mount(home) == 0
    config = home / "config.yaml"
    entry = load(config)["mcp_servers"]["mafiabot"]
    config.write_text(config.read_text(encoding="utf-8")
                      .replace(f"{entry['args'][-1]}]", f"{entry['args'][-1]}, --max-sessions, '50']")
                      .replace("timeout: 60", "timeout: 120"), encoding="utf-8")
    capsys.readouterr()
    assert mount(home, "--discovery-timeout", "5") == 0
    after = load(config)
    entry = after["mcp_servers"]["mafiabot"]
    assert entry["args"][OWN:] == ["--max-sessions", "50"] and entry["timeout"] == 120
    assert after["mcp_discovery_timeout"] == 5
    assert "kept the entry's own body arguments: --max-sessions 50" in capsys.readouterr().out


def test_body_arg_passes_arguments_to_the_body_and_replaces_the_kept_ones(body_exe, home):
    assert mount(home, "--body-arg=--max-sessions", "--body-arg=50") == 0
    assert load(home / "config.yaml")["mcp_servers"]["mafiabot"]["args"][OWN:] == ["--max-sessions", "50"]
    assert mount(home, "--body-arg=--max-sessions", "--body-arg=7") == 0
    assert load(home / "config.yaml")["mcp_servers"]["mafiabot"]["args"][OWN:] == ["--max-sessions", "7"]
    assert mount(home, "--timeout", "90") == 0
    entry = load(home / "config.yaml")["mcp_servers"]["mafiabot"]
    assert entry["args"][OWN:] == ["--max-sessions", "7"] and entry["timeout"] == 90


def test_a_body_arg_holding_a_nul_is_refused_and_nothing_is_written(body_exe, home, capsys):
    assert mount(home, "--no-check", "--body-arg", "a\x00b") == ExitCode.INVALID_INPUT
    assert "--body-arg number 1 holds a NUL byte" in capsys.readouterr().err
    assert not (home / "config.yaml").exists()


def test_a_body_arg_nested_past_any_parser_is_written_quoted_and_reads_back_as_itself(body_exe, home):
    nested = "[" * 100_000 + "]" * 100_000
    assert mount(home, "--no-check", "--body-arg", nested) == 0
    assert load(home / "config.yaml")["mcp_servers"]["mafiabot"]["args"][OWN:] == [nested]


def test_a_kept_soul_choice_survives_a_remount_that_does_not_name_one(body_exe, home):
    assert mount(home, "--soul", "off") == 0
    assert mount(home) == 0
    args = load(home / "config.yaml")["mcp_servers"]["mafiabot"]["args"]
    assert args[OWN:] == ["--soul", "off"]
    assert mount(home, "--soul", "keep") == 0
    assert load(home / "config.yaml")["mcp_servers"]["mafiabot"]["args"][OWN:] == ["--soul", "keep"]


def test_a_stale_url_and_its_headers_are_removed_with_a_note(body_exe, home, capsys):
    (home / "config.yaml").write_text(
        "mcp_servers:\n  mafiabot:\n    url: http://127.0.0.1:9/mcp\n    headers: {X-Key: k}\n"
        "    tools: {include: [turn]}\n", encoding="utf-8")
    assert mount(home) == 0
    entry = load(home / "config.yaml")["mcp_servers"]["mafiabot"]
    assert "url" not in entry and "headers" not in entry and entry["tools"] == {"include": ["turn"]}
    assert "removed the entry's url, headers" in capsys.readouterr().out


ANCHORED = """\
mcp_servers:
  mafiabot: &m {command: /opt/old/mafiabot, args: [--organs, /opt/old/organs.json], timeout: 45}
  copy: *m
"""


def test_an_anchored_entry_never_changes_the_server_that_aliases_it(body_exe, home, capsys):
    config = home / "config.yaml"
    config.write_text(ANCHORED, encoding="utf-8")
    copy_before = load(config)["mcp_servers"]["copy"]
    assert mount(home) == 0
    after = load(config)["mcp_servers"]
    assert after["copy"] == copy_before
    assert after["mafiabot"]["command"] == str(body_exe.absolute()) and after["mafiabot"]["timeout"] == 45
    assert "shared a YAML anchor" in capsys.readouterr().out
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    assert load(config)["mcp_servers"] == {"copy": copy_before}


def test_an_alias_into_the_entry_from_elsewhere_is_detached_too(body_exe, home):
    config = home / "config.yaml"
    config.write_text("base_env: &e {LANG: C.UTF-8}\nmcp_servers:\n  mafiabot: {command: /x, env: *e}\n",
                      encoding="utf-8")
    assert mount(home) == 0
    after = load(config)
    assert after["base_env"] == {"LANG": "C.UTF-8"}
    assert after["mcp_servers"]["mafiabot"]["env"] == {"LANG": "C.UTF-8", "HERMES_HOME": str(home)}


class OneSecond(datetime):
    """A clock stopped within one UTC second: backup names must still sort as the writes came."""

    @classmethod
    def now(cls, tz=None):
        return datetime(2026, 12, 1, 10, 0, 0, tzinfo=tz)


@pytest.mark.parametrize("stopped", [False, True], ids=["clock", "one-second"])
def test_every_write_keeps_a_new_timestamped_backup_and_only_the_newest_few(body_exe, home, monkeypatch, stopped):
    from harness.hermes_mount import config_file
    if stopped:
        monkeypatch.setattr(config_file, "datetime", OneSecond)
    config = home / "config.yaml"
    config.write_text(USER_CONFIG, encoding="utf-8")
    assert mount(home) == 0
    assert mount(home, "--discovery-timeout", "5") == 0
    first, second = backups_of(config)
    assert first.read_text(encoding="utf-8") == USER_CONFIG, "the original must survive a second mount"
    assert "mafiabot:" in second.read_text(encoding="utf-8")
    assert re.fullmatch(r"config\.yaml\.before-mafiabot\.\d{8}T\d{6}Z(-\d{3})?", first.name)
    timeouts = [6 + n for n in range(config_file.BACKUP_GENERATIONS + 2)]
    for seconds in timeouts:
        assert mount(home, "--discovery-timeout", str(seconds)) == 0
    kept = backups_of(config)
    assert len(kept) == config_file.BACKUP_GENERATIONS and first not in kept
    # The newest generations are the ones kept: each holds the timeout the mount after it replaced.
    held = [load(backup)["mcp_discovery_timeout"] for backup in kept]
    assert held == timeouts[-config_file.BACKUP_GENERATIONS - 1:-1]


@pytest.mark.parametrize("bom, newline", [("", "\r\n"), ("\ufeff", "\n"), ("\ufeff", "\r\n")],
                         ids=["crlf", "bom", "bom-crlf"])
def test_line_endings_and_a_byte_order_mark_are_kept_as_they_were(body_exe, home, bom, newline):
    config = home / "config.yaml"
    config.write_bytes((bom + USER_CONFIG.replace("\n", newline)).encode("utf-8"))
    assert mount(home) == 0
    raw = config.read_bytes().decode("utf-8")
    assert raw.startswith(bom + "# My Hermes") and raw.count(newline) == raw.count("\n")
    assert "mafiabot:" in raw and "# the box under the desk" in raw
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    assert config.read_bytes() == (bom + USER_CONFIG.replace("\n", newline)).encode("utf-8")


def test_mount_fills_an_empty_mcp_servers_key(body_exe, home):
    (home / "config.yaml").write_text("model: {provider: custom}\nmcp_servers:\n", encoding="utf-8")
    assert mount(home) == 0
    assert list(load(home / "config.yaml")["mcp_servers"]) == ["mafiabot"]


@pytest.mark.parametrize("original", ["# my settings\nmodel: {provider: custom}\n", ""], ids=["settings", "new"])
def test_unmounting_the_only_server_adds_nothing_the_file_never_had(body_exe, home, original):
    config = home / "config.yaml"
    if original:
        config.write_text(original, encoding="utf-8")
    assert mount(home) == 0
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    if not original:
        assert not config.exists(), "a config.yaml mount made and unmount emptied is mount's to remove"
        return
    assert config.read_text(encoding="utf-8") == original
    assert "mcp_servers" not in config.read_text(encoding="utf-8")


def tree(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def unmount(home: Path, *extra: str) -> int:
    return main(["unmount", "--hermes-home", str(home), *extra])


@pytest.mark.parametrize("existed", [True, False], ids=["empty-home", "no-home"])
def test_unmount_takes_away_every_file_and_folder_mount_made_and_nothing_else(body_exe, tmp_path, existed, capsys):
    home = tmp_path / "hermes-home"
    if existed:
        home.mkdir()
    assert mount(home, "--discovery-timeout", "5") == 0
    assert {"config.yaml", "plugins", "mafiabot"} <= set(tree(home))
    assert unmount(home) == 0
    assert home.exists() == existed, "the home goes only when mount made it"
    assert (tree(home) if existed else []) == [], "no empty config.yaml, plugins/ or mafiabot/ left behind"
    out = capsys.readouterr().out
    assert "which mount made" in out and "before-mafiabot" not in out


def test_unmount_keeps_what_the_operator_had_or_put_there_since(body_exe, home):
    (home / "config.yaml").write_text("mcp_discovery_timeout: 3\nmodel: {default: mine}\n", encoding="utf-8")
    (home / "plugins").mkdir()
    assert mount(home, "--discovery-timeout", "5") == 0
    (home / "mafiabot" / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert unmount(home) == 0
    assert load(home / "config.yaml") == {"mcp_discovery_timeout": 5, "model": {"default": "mine"}}, \
        "a discovery timeout the operator had set is theirs, even after mount changed it"
    assert (home / "plugins").is_dir() and (home / "mafiabot" / "notes.txt").is_file()
    assert not (home / ".mafiabot-mount.json").exists()


def test_a_config_mount_made_keeps_what_the_operator_added_and_loses_the_timeout_mount_added(body_exe, home):
    assert mount(home, "--discovery-timeout", "5") == 0
    config = home / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "model: {default: mine}\n", encoding="utf-8")
    assert unmount(home) == 0
    assert load(config) == {"model": {"default": "mine"}}


def test_a_config_mount_made_but_the_operator_changed_is_backed_up_before_it_goes(body_exe, home):
    assert mount(home) == 0
    config = home / "config.yaml"
    edited = config.read_text(encoding="utf-8").replace("timeout: 60", "timeout: 61")
    config.write_text(edited, encoding="utf-8")
    assert unmount(home) == 0
    assert not config.exists()
    [backup] = backups_of(config)
    assert backup.read_text(encoding="utf-8") == edited


def test_the_folders_mount_made_stay_until_the_last_entry_it_made_goes(body_exe, home):
    assert mount(home) == 0
    assert mount(home, "--name", "second") == 0
    assert unmount(home) == 0
    assert {"config.yaml", "plugins", "mafiabot"} <= set(tree(home))
    assert unmount(home, "--name", "second") == 0
    # Only the backups of each write after the first stay: they may hold what the operator changed meanwhile.
    assert [name for name in tree(home) if not name.startswith("config.yaml.before-mafiabot.")] == []


def test_a_record_that_cannot_be_read_takes_away_only_the_entry(body_exe, home, capsys):
    assert mount(home) == 0
    (home / ".mafiabot-mount.json").write_text("{not json", encoding="utf-8")
    assert unmount(home) == 0
    assert (home / "mafiabot").is_dir() and (home / "config.yaml").exists()
    assert "cannot be read" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["0.001", "0", "-3", "601", "nan", "inf"])
def test_discovery_timeouts_outside_a_sane_range_are_refused_plainly(body_exe, home, capsys, value):
    assert mount(home, f"--discovery-timeout={value}") == 2
    err = capsys.readouterr().err
    assert "give 1 to 600 seconds" in err and "Traceback" not in err
    assert not (home / "config.yaml").exists()


def test_mount_s_note_says_what_hermes_0_19_does_with_a_late_server(body_exe, home, capsys):
    assert mount(home, "--discovery-timeout", "2") == 0
    out = capsys.readouterr().out
    assert "plus at most mcp_discovery_timeout (2 s, as set in config.yaml)" in out
    assert "missing from that turn" in out and "silently drops" not in out


def test_a_file_of_comments_only_keeps_them_above_the_new_entry(body_exe, home):
    (home / "config.yaml").write_text("# nothing configured yet\n# see the docs\n", encoding="utf-8")
    assert mount(home) == 0
    text = (home / "config.yaml").read_text(encoding="utf-8")
    assert text.startswith("# nothing configured yet\n# see the docs\nmcp_servers:\n")
    assert os.access(home / "config.yaml", os.R_OK)
