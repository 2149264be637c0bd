"""`mount` installs and enables the Level1 plugin, `unmount` takes away exactly what mount put there."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from harness.cli import main
from harness.cli.exit_codes import ExitCode
from harness.hermes_mount.config_file import backups_of
from harness.hermes_mount.entry import state_of
from harness.hermes_mount.level1 import shipped_files
from harness.hermes_plugin import PLUGIN_NAME, SERVERS_FILE
from test_mount import home  # noqa: F401 (fixtures: the empty Hermes home of every mount test)

USER_CONFIG = """\
# mine
plugins:
  # the ones I trust
  enabled:
  - disk-cleanup   # keep
  disabled: [spotify]
agent: {api_max_retries: 3}
"""


def mount(home: Path, *extra: str) -> int:
    return main(["mount", "--hermes-home", str(home), "--no-check", *extra])


def unmount(home: Path, *extra: str) -> int:
    return main(["unmount", "--hermes-home", str(home), *extra])


def folder(home: Path) -> Path:
    return home / "plugins" / PLUGIN_NAME


def hermes_reads(home: Path) -> dict:
    return YAML(typ="safe", pure=True).load((home / "config.yaml").read_text(encoding="utf-8")) or {}


def test_mount_installs_the_shipped_plugin_and_names_it_in_plugins_enabled(body_exe, home, capsys):
    assert mount(home) == 0
    for name, data in shipped_files().items():
        assert (folder(home) / name).read_bytes() == data
    manifest = json.loads((folder(home) / SERVERS_FILE).read_text())
    assert manifest["servers"] == {"mafiabot": "mcp__mafiabot__turn"}
    assert set(manifest["files"]) == set(shipped_files())
    assert hermes_reads(home)["plugins"] == {"enabled": [PLUGIN_NAME]}
    assert "Level1: the mafiabot-level1 plugin" in capsys.readouterr().out


def test_remount_writes_nothing(body_exe, home, capsys):
    (home / "config.yaml").write_text(USER_CONFIG, encoding="utf-8")
    assert mount(home) == 0
    stamps = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in [home / "config.yaml", *folder(home).iterdir()]}
    backups = backups_of(home / "config.yaml")
    capsys.readouterr()
    assert mount(home) == 0
    assert "already mounted as asked" in capsys.readouterr().out
    assert stamps == {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in stamps}
    assert backups_of(home / "config.yaml") == backups


def test_the_operator_s_plugins_comments_and_line_endings_survive_mount_and_unmount(body_exe, home):
    original = "\ufeff" + USER_CONFIG.replace("\n", "\r\n")
    (home / "config.yaml").write_bytes(original.encode())
    assert mount(home) == 0
    text = (home / "config.yaml").read_bytes().decode()
    assert text.startswith("\ufeff") and text.count("\r\n") == text.count("\n")
    assert "# the ones I trust" in text and "- disk-cleanup   # keep" in text
    assert hermes_reads(home)["plugins"]["enabled"] == ["disk-cleanup", PLUGIN_NAME]
    assert unmount(home) == 0
    assert (home / "config.yaml").read_bytes().decode() == original
    assert not folder(home).exists()


def test_unmount_of_a_home_that_had_no_plugins_key_gives_back_the_very_same_file(body_exe, home):
    (home / "config.yaml").write_text("agent: {api_max_retries: 3}\n", encoding="utf-8")
    assert mount(home) == 0
    assert unmount(home) == 0
    assert (home / "config.yaml").read_text(encoding="utf-8") == "agent: {api_max_retries: 3}\n"
    assert not folder(home).exists()


def test_plugins_disabled_wins_in_hermes_and_mount_says_so_rather_than_overrule_it(body_exe, home, capsys):
    (home / "config.yaml").write_text(f"plugins:\n  disabled: [{PLUGIN_NAME}]\n", encoding="utf-8")
    assert mount(home) == 0
    out = capsys.readouterr().out
    assert f"plugins.disabled names {PLUGIN_NAME}, and Hermes's deny list wins" in out
    assert hermes_reads(home)["plugins"] == {"disabled": [PLUGIN_NAME], "enabled": [PLUGIN_NAME]}
    # The plugin will not load, so the model chooses the key: no shared store is written unasked
    assert store_of(home) is None
    assert "note: no --state: without Level1 the model chooses the key" in out


def test_no_level1_installs_nothing_and_takes_away_an_earlier_install(body_exe, home):
    assert mount(home, "--no-level1") == 0
    assert not folder(home).exists() and "plugins" not in hermes_reads(home)
    assert mount(home) == 0 and folder(home).is_dir()
    assert mount(home, "--no-level1") == 0
    assert not folder(home).exists() and "plugins" not in hermes_reads(home)
    assert "mafiabot" in hermes_reads(home)["mcp_servers"]


def test_the_plugin_stays_while_another_entry_uses_it(body_exe, home):
    assert mount(home) == 0
    assert mount(home, "--name", "second") == 0
    assert unmount(home) == 0
    manifest = json.loads((folder(home) / SERVERS_FILE).read_text())
    assert manifest["servers"] == {"second": "mcp__second__turn"}
    assert hermes_reads(home)["plugins"]["enabled"] == [PLUGIN_NAME]
    assert unmount(home, "--name", "second") == 0
    assert not folder(home).exists() and not (home / "config.yaml").exists(), "both were mount's, and are empty"


def test_unmount_keeps_a_plugin_file_the_operator_edited_and_clears_hermes_s_bytecode(body_exe, home, capsys):
    assert mount(home) == 0
    (folder(home) / "__init__.py").write_text("# my own now\n", encoding="utf-8")
    (folder(home) / "__pycache__").mkdir()
    (folder(home) / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\0")
    assert unmount(home) == 0
    assert "was edited since mount wrote it: left as it is" in capsys.readouterr().out
    assert sorted(p.name for p in folder(home).iterdir()) == ["__init__.py", "__pycache__"]
    assert not (folder(home) / "plugin.yaml").exists() and not (folder(home) / SERVERS_FILE).exists()


def test_a_remount_keeps_a_plugin_file_the_operator_edited_as_a_timestamped_backup(body_exe, home, capsys):
    assert mount(home) == 0
    init = folder(home) / "__init__.py"
    init.write_text("# my own middleware now\n", encoding="utf-8")
    capsys.readouterr()
    assert mount(home, "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"note: {init} was edited since mount wrote it: it is kept beside it as __init__.py.before-mafiabot.<UTC>" in out
    assert f"Level1: would keep the edited {init} as __init__.py.before-mafiabot.<UTC>" in out
    assert sorted(p.name for p in folder(home).iterdir()) == ["__init__.py", SERVERS_FILE, "plugin.yaml"]
    assert mount(home) == 0
    out = capsys.readouterr().out
    [backup] = [p for p in folder(home).iterdir() if p.name.startswith("__init__.py.")]
    assert re.fullmatch(r"__init__\.py\.before-mafiabot\.\d{8}T\d{6}Z", backup.name), backup.name
    assert f"Level1: keep the edited {init} as {backup.name}" in out
    assert backup.read_text(encoding="utf-8") == "# my own middleware now\n"
    assert init.read_bytes() == shipped_files()["__init__.py"]
    assert mount(home) == 0 and [p for p in folder(home).iterdir() if p.name.startswith("__init__.py.")] == [backup]
    assert unmount(home) == 0
    assert sorted(p.name for p in folder(home).iterdir()) == [backup.name], "unmount never removes the operator's"


def test_a_remount_replaces_what_an_earlier_mount_wrote_without_a_backup(body_exe, home, capsys):
    assert mount(home) == 0
    init, manifest_file = folder(home) / "__init__.py", folder(home) / SERVERS_FILE
    older = b"# the plugin as an earlier harness shipped it\n"
    init.write_bytes(older)
    manifest = json.loads(manifest_file.read_text())
    manifest["files"]["__init__.py"] = hashlib.sha256(older).hexdigest()
    manifest_file.write_text(json.dumps(manifest))
    capsys.readouterr()
    assert mount(home) == 0
    assert "was edited since mount wrote it" not in capsys.readouterr().out
    assert init.read_bytes() == shipped_files()["__init__.py"]
    assert not [p for p in folder(home).iterdir() if ".before-mafiabot." in p.name]


def test_a_folder_of_that_name_that_mount_did_not_write_is_never_touched(body_exe, home, capsys):
    folder(home).mkdir(parents=True)
    (folder(home) / "__init__.py").write_text("# someone else's\n", encoding="utf-8")
    assert mount(home) == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert "it is not the plugin mount installs" in err and len(err.strip().splitlines()) == 1
    assert not (home / "config.yaml").exists()
    assert [p.name for p in folder(home).iterdir()] == ["__init__.py"]
    assert mount(home, "--no-level1") == 0  # the way out it names


def test_a_plugins_enabled_that_is_not_a_list_is_refused_with_its_line(body_exe, home, capsys):
    (home / "config.yaml").write_text("agent: {}\nplugins:\n  enabled: disk-cleanup\n", encoding="utf-8")
    assert mount(home) == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert "plugins.enabled" in err and "line 3" in err and "left untouched" in err
    assert (home / "config.yaml").read_text() == "agent: {}\nplugins:\n  enabled: disk-cleanup\n"
    assert not folder(home).exists()


def test_dry_run_names_the_plugin_files_and_writes_none(body_exe, home, capsys):
    assert mount(home, "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"Level1: would write {folder(home) / '__init__.py'}" in out and "+  - mafiabot-level1" in out
    assert not folder(home).exists() and not (home / "config.yaml").exists()


# --- the body's session store: --state under the home by default ---------------------------------------------


def entry_args(home: Path) -> list[str]:
    return hermes_reads(home)["mcp_servers"]["mafiabot"]["args"]


def store_of(home: Path) -> str | None:
    store = state_of(entry_args(home))
    return None if store is None else str(store)


def test_mount_keeps_sessions_under_the_home_by_default_and_makes_the_folder(body_exe, home):
    assert main(["mount", "--hermes-home", str(home)]) == 0  # with the check: the body starts with it
    assert store_of(home) == str(home / "mafiabot" / "sessions.db")
    assert (home / "mafiabot").is_dir()
    assert not (home / "mafiabot" / "sessions.db").exists(), "mount's own check keeps no session there"


def test_a_remount_without_state_keeps_the_entry_s_own_file_or_none(body_exe, home, tmp_path, capsys):
    store = tmp_path / "elsewhere" / "s.db"
    assert mount(home, "--state", str(store)) == 0
    assert store_of(home) == str(store) and store.parent.is_dir()
    capsys.readouterr()
    assert mount(home, "--timeout", "90", "--body-arg=--max-sessions", "--body-arg=50") == 0
    assert store_of(home) == str(store), "a remount that does not ask keeps the operator's store"
    assert entry_args(home)[-2:] == ["--max-sessions", "50"]
    assert "sessions were kept in" not in capsys.readouterr().out
    assert mount(home, "--state", "off") == 0
    assert store_of(home) is None
    assert f"note: sessions were kept in {store}, now in each body's memory; {store} is left as it is" in (
        capsys.readouterr().out)
    assert mount(home) == 0
    assert store_of(home) is None, "off is the entry's own choice too"


def test_a_kept_store_stays_where_mount_writes_it_so_a_remount_of_a_recording_entry_changes_nothing(
        body_exe, home, tmp_path, capsys):
    (tmp_path / "rec").mkdir()
    asked = ("--record", str(tmp_path / "rec" / "hermes.jsonl"), "--soul", "keep")
    assert mount(home, *asked, "--state", str(tmp_path / "mine.db")) == 0
    written = (home / "config.yaml").read_text(encoding="utf-8")
    capsys.readouterr()
    assert mount(home, *asked) == 0
    assert "already mounted as asked" in capsys.readouterr().out
    assert (home / "config.yaml").read_text(encoding="utf-8") == written
    assert store_of(home) == str(tmp_path / "mine.db")


def test_a_remount_that_moves_the_store_says_where_from_and_leaves_the_old_one(body_exe, home, tmp_path, capsys):
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    assert mount(home, "--state", str(old)) == 0
    old.write_bytes(b"the operator's sessions")
    capsys.readouterr()
    assert mount(home, "--state", str(new)) == 0
    assert f"note: sessions were kept in {old}, now in {new}; {old} is left as it is" in capsys.readouterr().out
    assert store_of(home) == str(new) and old.read_bytes() == b"the operator's sessions"
    assert mount(home, "--state", "off") == 0 and mount(home) == 0
    capsys.readouterr()
    assert mount(home, "--state", str(new)) == 0
    assert f"note: sessions were kept in each body's memory, now in {new}\n" in capsys.readouterr().out


def test_without_level1_no_store_is_written_unasked_and_the_note_says_why(body_exe, home, capsys):
    assert mount(home, "--no-level1") == 0
    assert store_of(home) is None
    out = capsys.readouterr().out
    assert ("note: no --state: without Level1 the model chooses the key, and the home's store is shared by every "
            "body of the home across restarts; sessions stay in each body's memory: pass --state FILE to keep them "
            "anyway") in out
    assert "  sessions: in each body's memory" in out
    assert mount(home) == 0
    assert store_of(home) is None, "the entry's own choice, none, is kept once Level1 is back"


def test_turning_level1_off_takes_the_home_s_shared_store_away(body_exe, home, capsys):
    assert mount(home) == 0
    default = home / "mafiabot" / "sessions.db"
    assert store_of(home) == str(default)
    capsys.readouterr()
    assert mount(home, "--no-level1") == 0
    assert store_of(home) is None
    out = capsys.readouterr().out
    assert "note: no --state: without Level1 the model chooses the key" in out
    assert f"note: sessions were kept in {default}, now in each body's memory; {default} is left as it is" in out


def test_an_explicit_state_without_level1_is_honoured_with_a_one_line_warning(body_exe, home, tmp_path, capsys):
    store = tmp_path / "mine.db"
    assert mount(home, "--no-level1", "--state", str(store)) == 0
    assert store_of(home) == str(store)
    [warning] = [line for line in capsys.readouterr().out.splitlines() if line.startswith("warning:")]
    assert warning == (f"warning: --state {store} without Level1: the model chooses each turn's uid, channel and "
                       "server, so it can reach any session kept there")
    assert mount(home, "--no-level1") == 0, "a remount keeps the operator's own store, and warns again"
    assert store_of(home) == str(store)
    assert "warning: --state" in capsys.readouterr().out


def test_dry_run_makes_no_state_folder(body_exe, home):
    assert mount(home, "--dry-run") == 0
    assert not (home / "mafiabot").exists()


def test_a_state_folder_that_cannot_be_made_is_refused_before_anything_is_written(body_exe, home, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert mount(home, "--state", str(blocker / "s.db")) == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert f"--state {blocker / 's.db'}: its folder {blocker} cannot be made" in err and "nothing was written" in err
    assert not (home / "config.yaml").exists() and not folder(home).exists()


OLD_BODY = '''#!{python}
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {{"protocolVersion": "2025-11-25", "capabilities": {{"tools": {{}}}},
                  "serverInfo": {{"name": "old", "version": "0"}}}}
    else:
        result = {{"tools": [{{"name": "turn", "inputSchema": {{"type": "object", "properties": {{
            "input": {{}}, "uid": {{}}, "channel": {{}}, "server": {{}}}}}}}}]}}
    print(json.dumps({{"jsonrpc": "2.0", "id": message["id"], "result": result}}), flush=True)
'''


def test_a_body_that_cannot_take_key_origin_is_refused_with_level1_and_mounted_without(home, tmp_path, capsys):
    old = tmp_path / "old-body"
    old.write_text(OLD_BODY.format(python=sys.executable), encoding="utf-8")
    old.chmod(0o755)
    assert mount_checked(home, "--body", str(old), "--state", "off") == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert "the body's turn takes no key_origin (input, uid, channel, server)" in err and "--no-level1" in err
    assert not (home / "config.yaml").exists() and not folder(home).exists()
    assert mount_checked(home, "--body", str(old), "--state", "off", "--no-level1") == 0


def mount_checked(home: Path, *extra: str) -> int:
    return main(["mount", "--hermes-home", str(home), *extra])


def test_unmount_dry_run_names_the_plugin_files_it_would_remove_and_removes_none(body_exe, home, capsys):
    assert mount(home) == 0
    before = sorted(p.name for p in folder(home).iterdir())
    capsys.readouterr()
    assert unmount(home, "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"Level1: would remove {folder(home) / SERVERS_FILE}" in out and "-  - mafiabot-level1" in out
    assert f"Level1: would remove the folder {folder(home)}" in out
    assert sorted(p.name for p in folder(home).iterdir()) == before


@pytest.mark.parametrize("state", ["", "a\x00b"])
def test_a_state_that_names_no_file_is_one_line_and_nothing_is_written(body_exe, home, capsys, state):
    assert mount(home, "--state", state) == ExitCode.INVALID_INPUT
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "--state" in line
    assert not (home / "config.yaml").exists()
