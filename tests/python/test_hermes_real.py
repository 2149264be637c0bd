"""The real Hermes Agent (hermes-agent[mcp]==0.19.0 in .hermes-venv) with the body mounted by
`mafiabot-harness mount` into a temporary home, fully offline against the stub model server.

Each hermes run costs ~3 s of imports, so these tests are few: Hermes lists the tool, doctor
agrees with Hermes, one whole turn goes model -> Hermes -> body -> Hermes -> model (with the
body's SOUL.md first in the prompt), Hermes's own default SOUL.md gives way to the body's while
an operator's edit survives `hermes mcp test`, doctor and unmount, and a crashing body is
reported plainly by doctor and by Hermes's own test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import harness.hermes_plugin as level1
from harness.cli import main
from harness.hermes_mount.hermes_cli import parse_mcp_test
from hermes_support import (
    SCRIPTS,
    StubModel,
    chat_in_profile,
    hermes_sessions,
    mount_offline,
    offline_config,
    project_hermes,
    requires_hermes,
    run_hermes,
    tool_results,
)
from soul_support import SOUL, before_of, hermes_default

# doctor finds Hermes itself: these tests give it the checkout's real one.
pytestmark = [*requires_hermes, pytest.mark.usefixtures(project_hermes.__name__)]
PROFILE = "tester"
BODY_SOUL_MARK = "You are the voice of the mafiabot body"


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path]:
    """(HOME, the Hermes root): both empty directories under tmp_path."""
    home, root = tmp_path / "home", tmp_path / "hermes-root"
    home.mkdir()
    root.mkdir()
    return home, root


def test_after_mount_hermes_mcp_test_connects_and_lists_turn(body_exe, homes, tmp_path):
    home, root = homes
    assert main(["mount", "--hermes-home", str(root)]) == 0
    completed = run_hermes(["mcp", "test", "mafiabot"], home, root, tmp_path / "cwd")
    report = parse_mcp_test(completed.stdout + completed.stderr)
    assert report.connected, completed.stdout + completed.stderr
    assert report.tools == ("turn",)


def test_doctor_runs_hermes_own_test_and_agrees_with_it(body_exe, homes, capsys):
    _, root = homes
    assert main(["mount", "--hermes-home", str(root)]) == 0
    capsys.readouterr()
    assert main(["doctor", "--hermes-home", str(root)]) == 0
    out = capsys.readouterr().out
    assert "ok    hermes     `hermes mcp test mafiabot` connected in" in out and "lists turn" in out


def test_a_whole_offline_turn_goes_from_the_model_through_hermes_to_the_body_and_back(body_exe, homes, tmp_path):
    home, root = homes
    profile_home = root / "profiles" / PROFILE
    script = json.loads((SCRIPTS / "turn_then_quote.json").read_text())
    with StubModel(script, tmp_path / "model") as model:
        profile_home.mkdir(parents=True)
        (profile_home / "config.yaml").write_text(offline_config(model.base_url), encoding="utf-8")
        # Without Level1 the model's own key reaches the body (test_level1_* below: with it, Hermes's session's).
        assert main(["mount", "--hermes-home", str(root), "--profile", PROFILE, "--discovery-timeout", "30",
                     "--no-level1"]) == 0
        completed = run_hermes(["-p", PROFILE, "chat", "-Q", "-q", "Who sits at the head of the table?",
                                "-t", "mafiabot", "--source", "tool"], home, root, tmp_path / "cwd")
        calls = model.agent_calls()
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert len(calls) == 2
    offered = [tool["function"]["name"] for tool in calls[0]["body"].get("tools", [])]
    assert "mcp__mafiabot__turn" in offered
    tool_messages = [m for m in calls[1]["body"]["messages"] if m.get("role") == "tool"]
    received = tool_messages[-1]["content"]
    received = received if isinstance(received, str) else "".join(p.get("text", "") for p in received)
    assert '"session": {"uid": "hermes-op", "channel": "tavern", "server": "corleone"}' in received
    assert '"passes_run": 8' in received and '"name": "cohere"' in received
    system = calls[0]["body"]["messages"][0]
    assert system["role"] == "system" and BODY_SOUL_MARK in str(system["content"]), \
        "Hermes did not put the body's SOUL.md (its mark included) first in the prompt"
    assert completed.stdout.startswith("The body said: ")
    assert "hermes-op" in completed.stdout
    soul = profile_home / "SOUL.md"
    assert soul.exists() and BODY_SOUL_MARK in soul.read_text(encoding="utf-8")
    assert not (home / ".hermes").exists(), "nothing may land in the real-looking ~/.hermes"


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_hermes_default_soul_gives_way_and_an_operators_edit_survives_hermes_doctor_and_unmount(
        body_exe, homes, tmp_path, capsys):
    home, root = homes
    cwd = tmp_path / "cwd"
    run_hermes(["mcp", "list"], home, root, cwd)
    assert (root / SOUL).read_text(encoding="utf-8") == hermes_default(), "Hermes seeds its default"
    assert main(["mount", "--hermes-home", str(root)]) == 0
    assert (root / SOUL).read_text(encoding="utf-8") == hermes_default(), "mount's check writes no SOUL.md"

    assert parse_mcp_test(run_hermes(["mcp", "test", "mafiabot"], home, root, cwd).stdout).connected
    soul = (root / SOUL).read_text(encoding="utf-8")
    assert BODY_SOUL_MARK in soul and before_of(soul) == "hermes-default"

    edited = soul.replace("## Big-3", "Answer as a ship's cook would.\n\n## Big-3")
    (root / SOUL).write_text(edited, encoding="utf-8")
    assert parse_mcp_test(run_hermes(["mcp", "test", "mafiabot"], home, root, cwd).stdout).connected
    assert (root / SOUL).read_text(encoding="utf-8") == edited, "the boot under Hermes rewrote the edit"
    assert "was edited since the body wrote it" in (root / "logs" / "mcp-stderr.log").read_text(encoding="utf-8")

    before = snapshot(root)
    capsys.readouterr()
    assert main(["doctor", "--hermes-home", str(root)]) == 0
    out = capsys.readouterr().out
    assert "ok    hermes" in out and "nothing was written" in out
    assert "warn  soul       " in out and "edited since it was written" in out
    assert snapshot(root) == before, "doctor, Hermes's test included, wrote into the home"

    assert main(["unmount", "--hermes-home", str(root)]) == 0
    assert "edited since the body wrote it: left as it is" in capsys.readouterr().out
    assert (root / SOUL).read_text(encoding="utf-8") == edited


def test_a_crashing_body_is_reported_plainly_by_doctor_and_by_hermes_own_test(homes, tmp_path, capsys):
    _, root = homes
    crashing = tmp_path / "bin" / "mafiabot"
    crashing.parent.mkdir()
    crashing.write_text("#!/bin/sh\necho 'mafiabot: cannot read the organ fixture' >&2\nexit 2\n")
    crashing.chmod(0o755)
    assert main(["mount", "--hermes-home", str(root), "--body", str(crashing), "--no-check",
                 "--connect-timeout", "5"]) == 0
    capsys.readouterr()
    assert main(["doctor", "--hermes-home", str(root)]) == 1
    out = capsys.readouterr().out
    assert "fail  handshake  the body exited with exit code 2" in out
    assert "mafiabot: cannot read the organ fixture" in out
    assert "fail  hermes     `hermes mcp test mafiabot` could not connect: Connection failed" in out
    hermes_part = out[out.index("fail  hermes"):]
    assert "the body's stderr under Hermes" in hermes_part and "cannot read the organ fixture" in hermes_part
    assert "2 check(s) failed: handshake, hermes" in out


def test_a_recording_entry_passes_doctor_with_hermes_and_the_checks_record_nothing(body_exe, homes, tmp_path, capsys):
    _, root = homes
    record = tmp_path / "sessions" / "hermes.jsonl"
    record.parent.mkdir()
    assert main(["mount", "--hermes-home", str(root), "--record", str(record)]) == 0
    capsys.readouterr()
    assert main(["doctor", "--hermes-home", str(root)]) == 0
    out = capsys.readouterr().out
    assert "ok    record" in out and "ok    hermes     `hermes mcp test mafiabot` connected in" in out
    assert list(record.parent.iterdir()) == [], "neither doctor's probe nor Hermes's test may leave a recording"


# --- Level1: the key is the Hermes session's, and sessions outlive the body (--state) -------------------------


def test_level1_a_forged_uid_becomes_the_session_s_key_and_two_chats_in_a_row_are_one_session(
        body_exe, homes, tmp_path):
    home, root = homes
    script = json.loads((SCRIPTS / "forged_uid_twice.json").read_text())
    with StubModel(script, tmp_path / "model") as model:
        profile_home = mount_offline(root, PROFILE, model.base_url)
        first = chat_in_profile(PROFILE, home, root, tmp_path / "cwd")
        second = chat_in_profile(PROFILE, home, root, tmp_path / "cwd")
        calls = model.agent_calls()
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    one, two = tool_results(calls)
    # The model wrote alice/alices-dm/telegram, then bob/bobs-dm/discord: the body saw the CLI session's key.
    key = {"uid": PROFILE, "channel": "cli", "server": level1.home_server(profile_home.resolve())}
    sessions = hermes_sessions(profile_home)
    assert len(sessions) == 2, "each `hermes chat` is a Hermes session of its own"
    for trace, session_id in zip((one, two), sessions, strict=True):
        assert trace["session"] == {**key, "origin": f"level1 cli session={session_id}"}
    # ...and the two chats are turns 1 and 2 of that one session: the store outlived the first body.
    assert (one["turn"], two["turn"]) == (1, 2)
    assert two["energy"] < one["energy"]
    assert "recall: 'what did alice tell you yesterday?'" in two["steps"][1]["detail"]
    assert (profile_home / "mafiabot" / "sessions.db").is_file()


def test_level1_two_profiles_are_two_sessions(body_exe, homes, tmp_path):
    home, root = homes
    script = json.loads((SCRIPTS / "forged_uid_twice.json").read_text())
    with StubModel(script, tmp_path / "model") as model:
        homes_of = {name: mount_offline(root, name, model.base_url) for name in ("work", "play")}
        for name in homes_of:
            assert chat_in_profile(name, home, root, tmp_path / "cwd").returncode == 0
        calls = model.agent_calls()
    work, play = tool_results(calls)
    assert (work["session"]["uid"], play["session"]["uid"]) == ("work", "play")
    assert work["session"]["server"] != play["session"]["server"]
    assert (work["turn"], play["turn"]) == (1, 1), "neither profile continues the other's session"


def test_level1_doctor_sees_the_plugin_loaded_by_hermes(body_exe, homes, capsys):
    _, root = homes
    assert main(["mount", "--hermes-home", str(root)]) == 0
    capsys.readouterr()
    assert main(["doctor", "--hermes-home", str(root)]) == 0
    out = capsys.readouterr().out
    assert "ok    level1     installed in" in out
    assert "ok    loaded     Hermes's own plugin loader ran it" in out and "uid=" in out
