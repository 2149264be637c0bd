"""`mafiabot-harness autopilot run|check`: envelopes on stdout, exit codes, overrides, refusals."""

from __future__ import annotations

import hashlib
import json
import os

from harness import settings
from harness.autopilot import load_plan
from harness.cli import main
from harness.cli.exit_codes import ExitCode
from harness.durable import HolderLock

from .autopilot_support import command, write_yaml

PLAN = {"goal": "Weekly check-in for Maxime", "subtasks": ["Summary of the sleep log.", "Email to the coach."]}


def cli(capsys, *args: str) -> tuple[int, dict]:
    code = main(["autopilot", *args, "--compact"])
    return code, json.loads(capsys.readouterr().out)


def test_a_completed_run_exits_zero_and_prints_the_envelope(fake_hermes, project, registry_file, capsys) -> None:
    path = write_yaml(project / "plan.yaml", PLAN)
    code, envelope = cli(capsys, "run", str(path), "--registry", str(registry_file))
    assert code == 0 and envelope["status"] == "completed" and len(envelope["children"]) == 2


def test_an_invalid_plan_exits_two_naming_the_field_on_stdout_and_stderr(project, capsys) -> None:
    path = write_yaml(project / "plan.yaml", {**PLAN, "mode": "swarm"})
    code = main(["autopilot", "run", str(path), "--compact"])
    captured = capsys.readouterr()
    assert code == ExitCode.INVALID_INPUT and json.loads(captured.out)["field"] == "subtasks"
    assert "invalid plan: subtasks: swarm runs 3 sub-tasks" in captured.err


def test_an_escalation_exits_three(fake_hermes, project, registry_file, capsys) -> None:
    path = write_yaml(project / "plan.yaml", {**PLAN, "subtasks": [{"task": "Draft it.", "write_to": "o.md"}]})
    code, envelope = cli(capsys, "run", str(path), "--registry", str(registry_file), "--band", "L1")
    assert code == ExitCode.ESCALATE and envelope["escalation"]["reason"] == "band_write"


def test_the_mode_flag_overrides_the_plan(fake_hermes, project, registry_file, capsys) -> None:
    path = write_yaml(project / "plan.yaml", PLAN)
    code, envelope = cli(capsys, "run", str(path), "--registry", str(registry_file), "--mode", "dueto")
    assert (code, envelope["requested_mode"], envelope["width"]) == (0, "dueto", 2)


def test_markdown_prints_the_report_instead_of_the_envelope(fake_hermes, project, registry_file, capsys) -> None:
    path = write_yaml(project / "plan.yaml", PLAN)
    code = main(["autopilot", "run", str(path), "--registry", str(registry_file), "--markdown",
                 "--report", str(project / "report.md")])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("# Auto-pilot run ap-") and out == (project / "report.md").read_text()


def test_the_same_plan_already_running_is_refused_with_exit_four(fake_hermes, project, registry_file,
                                                                 capsys) -> None:
    path = write_yaml(project / "plan.yaml", PLAN)
    key = hashlib.sha256(f"{load_plan(path).hash}\nroot".encode()).hexdigest()[:16]
    lock = project / ".agents" / "state" / "autopilot" / "locks" / f"plan.{key}.lock"
    with HolderLock(lock, label="the other run").acquire("2026-01-01T00:00:00Z"):
        code, envelope = cli(capsys, "run", str(path), "--registry", str(registry_file))
    assert (code, envelope["status"], envelope["reason"]) == (4, "refused", "lock_held")
    assert f"pid {os.getpid()}" in envelope["detail"] and not fake_hermes.calls()


def test_check_shows_the_selection_and_spawns_nothing(fake_hermes, project, registry_file, capsys) -> None:
    path = write_yaml(project / "plan.yaml", PLAN)
    code, envelope = cli(capsys, "check", str(path), "--registry", str(registry_file))
    assert code == 0 and [p["agent"] for p in envelope["selection"]] == ["cooper", "andy"]
    assert not fake_hermes.calls()


def test_check_refuses_an_unknown_agent_with_exit_two(project, registry_file, capsys) -> None:
    path = write_yaml(project / "plan.yaml", {**PLAN, "subtasks": [{"task": "x", "agent": "bob"}]})
    code, envelope = cli(capsys, "check", str(path), "--registry", str(registry_file))
    assert code == ExitCode.INVALID_INPUT and envelope["field"] == "subtasks[0].agent"


def test_check_refuses_a_ledger_file_only_when_the_ledger_is_that_file(project, registry_file, capsys,
                                                                       monkeypatch) -> None:
    path = write_yaml(project / "plan.yaml", PLAN)
    folder = project / "not-a-ledger"
    folder.mkdir()
    words = ["autopilot", "check", str(path), "--registry", str(registry_file), "--ledger", str(folder), "--compact"]
    assert main(words) == ExitCode.INVALID_INPUT and "ledger:" in capsys.readouterr().err
    # With a database the runs' ledger is the database's: check connects to nothing, and the file is not its ledger.
    monkeypatch.setenv(settings.DATABASE_URL_ENV, "postgresql://nobody@127.0.0.1:1/none")
    assert main(words) == ExitCode.OK and json.loads(capsys.readouterr().out)["status"] == "valid"


def test_an_unwritable_state_directory_stops_the_run_before_any_spawn(fake_hermes, project, registry_file,
                                                                      capsys) -> None:
    (project / ".agents").mkdir()
    (project / ".agents" / "state").write_text("not a directory")
    path = write_yaml(project / "plan.yaml", PLAN)
    code = main(["autopilot", "run", str(path), "--registry", str(registry_file),
                 "--ledger", str(project / "ledger.jsonl")])
    assert code == ExitCode.CANNOT_RUN and "cannot" in capsys.readouterr().err and not fake_hermes.calls()


def test_the_ledger_command_still_reads_a_ledger_with_autopilot_records(fake_hermes, project, registry_file,
                                                                        capsys) -> None:
    path = write_yaml(project / "plan.yaml", PLAN)
    cli(capsys, "run", str(path), "--registry", str(registry_file))
    assert main(["ledger", "verify"]) == 0
    capsys.readouterr()
    assert main(["ledger", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["by"]["kind"]["autopilot"]["calls"] == 2


def test_the_command_runs_as_a_real_process_too(fake_hermes, project, registry_file) -> None:
    path = write_yaml(project / "plan.yaml", PLAN)
    code, envelope, _ = command("run", str(path), "--registry", str(registry_file), "--compact", cwd=project)
    assert code == 0 and envelope["status"] == "completed"
