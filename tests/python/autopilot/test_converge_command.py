"""`converge A.md B.md --output FILE`: the auto-pilot seed's documented command, as the debate-converge protocol
over Hermes (the fake), with its verdicts: a merged text written only on `converged`, an honest
`no-convergence-possible` otherwise, and an unusable proposal refused before anything runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harness.cli import main
from harness.cli.converge_commands import MAX_PROPOSAL_CHARS
from harness.cli.exit_codes import ExitCode

RELEASE_FIRST, FEATURES_FIRST = "Ship on Monday, fix later.", "Hold the release until search works."


def proposals(project: Path) -> tuple[str, str]:
    (project / "a.md").write_text(RELEASE_FIRST)
    (project / "b.md").write_text(FEATURES_FIRST)
    return str(project / "a.md"), str(project / "b.md")


def script(fake, verdict: dict) -> None:
    fake.script({"by_prompt": [{"match": "Converge the", "steps": [{"stdout": json.dumps(verdict)}]},
                               {"match": "proposal A (", "steps": [{"stdout": RELEASE_FIRST}]},
                               {"match": "proposal B (", "steps": [{"stdout": FEATURES_FIRST}]}]})


def converge(project: Path, registry_file: Path, *extra: str) -> int:
    a, b = proposals(project)
    return main(["converge", a, b, "--output", str(project / "out" / "decision.md"), "--registry",
                 str(registry_file), "--compact", *extra])


def test_two_proposals_that_converge_write_the_merged_text_and_exit_0(fake_hermes, project, registry_file,
                                                                      capsys) -> None:
    script(fake_hermes, {"verdict": "converged", "merged": "Ship Monday with search behind a flag."})
    assert converge(project, registry_file) == 0
    envelope = json.loads(capsys.readouterr().out)
    assert (envelope["status"], envelope["debate"]["verdict"]) == ("completed", "converged")
    assert (project / "out" / "decision.md").read_text() == "Ship Monday with search behind a flag.\n"
    judge = next(c for c in fake_hermes.calls() if "Converge the" in c["prompt"])
    assert RELEASE_FIRST in judge["prompt"] and FEATURES_FIRST in judge["prompt"]


def test_proposals_that_cannot_converge_say_so_with_the_reasons_write_nothing_and_exit_1(
        fake_hermes, project, registry_file, capsys) -> None:
    script(fake_hermes, {"verdict": "no-convergence-possible", "reasons": ["Speed against completeness."]})
    assert converge(project, registry_file) == 1
    debate = json.loads(capsys.readouterr().out)["debate"]
    assert (debate["verdict"], debate["reasons"]) == ("no-convergence-possible", ["Speed against completeness."])
    assert not (project / "out" / "decision.md").exists()


def test_a_proposal_too_long_for_its_agents_task_is_refused_before_anything_runs(
        fake_hermes, project, registry_file, capsys) -> None:
    a, b = proposals(project)
    Path(a).write_text("x" * (MAX_PROPOSAL_CHARS + 1))
    assert main(["converge", a, b, "--output", "out.md", "--registry", str(registry_file)]) == 2
    assert "proposal A" in capsys.readouterr().err and fake_hermes.calls() == []


def test_a_fifo_as_a_proposal_is_refused_without_blocking_and_nothing_runs(
        fake_hermes, project, registry_file, capsys) -> None:
    a, b = proposals(project)
    Path(a).unlink()
    os.mkfifo(a)
    assert main(["converge", a, b, "--output", "out.md", "--registry", str(registry_file)]) == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert "proposal A" in err and "not a regular file" in err and fake_hermes.calls() == []


def test_an_output_through_a_symlink_loop_is_a_one_line_usage_error(fake_hermes, project, registry_file,
                                                                     capsys) -> None:
    a, b = proposals(project)
    (project / "loop-a").symlink_to(project / "loop-b")
    (project / "loop-b").symlink_to(project / "loop-a")
    code = main(["converge", a, b, "--output", str(project / "loop-a"), "--registry", str(registry_file)])
    err = capsys.readouterr().err
    assert code == ExitCode.INVALID_INPUT and "--output" in err and len(err.splitlines()) == 1
    assert fake_hermes.calls() == []
