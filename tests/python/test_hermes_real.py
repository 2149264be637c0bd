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

from harness.cli import main
from harness.hermes_mount.hermes_cli import parse_mcp_test
from hermes_support import SCRIPTS, StubModel, offline_config, project_hermes, requires_hermes, run_hermes
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
        assert main(["mount", "--hermes-home", str(root), "--profile", PROFILE, "--discovery-timeout", "30"]) == 0
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
