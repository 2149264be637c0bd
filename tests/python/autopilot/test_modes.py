"""The modes against the fake `hermes`: sequential with used results, parallel (dueto, swarm, the width
cap), partial failure keeping the siblings, retries, and what every spawn leaves in the ledger."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from harness.autopilot.dna import parse
from harness.hermes.classify import FIRST_LINE_CHARS

from .autopilot_support import FIFO_BOUND_S, LineReader, children, ledger, plan, run


def test_a_sequential_plan_runs_in_order_and_quotes_a_used_result_as_fenced_data(fake_hermes, project,
                                                                                  registry) -> None:
    fake_hermes.script({"by_prompt": [{"match": "List the sleep", "steps": [{"stdout": "slept 6h avg"}]},
                                      {"match": "Draft the report", "steps": [{"stdout": "Report: sleep more"}]}]})
    result = run(project, plan("Weekly check-in", {"id": "habits", "task": "List the sleep habits."},
                               {"id": "report", "task": "Draft the report from them.", "uses": ["habits"],
                                "write_to": "out/report.md"}), registry)
    assert result.status == "completed"
    first, second = fake_hermes.calls()
    assert "List the sleep" in first["prompt"] and "Draft the report" in second["prompt"]
    assert "<<<BEGIN RESULT habits " in second["prompt"] and "slept 6h avg" in second["prompt"]
    assert (project / "out" / "report.md").read_text() == "Report: sleep more\n"
    assert children(result, subtask="report")[0]["artifacts"] == [str(project / "out" / "report.md")]


def test_every_child_gets_a_dna_block_in_its_prompt_and_environment_naming_its_parent(fake_hermes, project,
                                                                                       registry) -> None:
    result = run(project, plan("Weekly check-in", "Summary of the sleep log."), registry)
    [call] = fake_hermes.calls()
    in_prompt, in_env = parse(call["prompt"]), parse(call["autopilot_dna"])
    assert in_prompt == in_env
    assert (in_env.parent_agent_id, in_env.depth, in_env.tree_id) == (result.envelope["run_id"], 1,
                                                                      result.envelope["run_id"])
    assert (in_env.agent, in_env.chain, in_env.attempts_remaining) == ("cooper", ("cooper",), 6)
    assert in_env.agent_id == result.envelope["children"][0]["child_id"]
    assert call["prompt"].rstrip().endswith("```"), "the DNA block comes last"


def test_every_spawn_is_ledgered_with_its_parent_id_and_its_cost(fake_hermes, project, registry, backend) -> None:
    fake_hermes.script({"usage": {"input": 100, "output": 20, "cost": 0.25}})
    result = run(project, plan("Weekly check-in", "Summary of the sleep log.", "Email to the career coach."),
                 registry, mode="dueto", database=backend.url)
    records = backend.settled()  # the project's file, or the database's ledger (children running side by side)
    assert len(records) == 2
    assert {r["parent_id"] for r in records} == {result.envelope["run_id"]}
    assert {r["child_id"] for r in records} == {c["child_id"] for c in result.envelope["children"]}
    assert all(r["kind"] == "autopilot" and r["usage"]["cost_usd"] == 0.25 for r in records)
    assert result.envelope["totals"]["tree"]["cost_usd"] == 0.5
    assert [c["usage"]["cost_usd"] for c in result.envelope["children"]] == [0.25, 0.25]


def test_a_parallel_run_with_one_failing_child_keeps_the_other_results(fake_hermes, project, registry) -> None:
    fake_hermes.script({"by_prompt": [{"match": "Email to", "steps": [{"stdout": "boom", "exit": 1}]}],
                        "steps": [{"stdout": "fine"}]})
    result = run(project, plan("Weekly check-in", "Summary of the sleep log.", "Email to the career coach.",
                               "Draft a report of the week.", limits={"retries": 0}), registry, mode="swarm")
    assert result.status == "partial"
    statuses = {s["id"]: s["status"] for s in result.envelope["subtasks"]}
    assert statuses == {"s1": "ok", "s2": "failed", "s3": "ok"}
    assert [c["answer"] for c in children(result, status="ok")] == ["fine", "fine"]
    assert len(fake_hermes.calls()) == 3


def test_a_transient_failure_is_retried_and_the_retry_is_ledgered_as_a_second_attempt(fake_hermes, project,
                                                                                      registry) -> None:
    fake_hermes.script({"stdout": "HTTP 503 upstream", "exit": 1}, {"stdout": "done"})
    result = run(project, plan("Weekly check-in", "Summary of the sleep log."), registry)
    assert result.status == "completed"
    assert [(c["attempt"], c["status"], c["reason"]) for c in result.envelope["children"]] == [
        (1, "failed", "provider_error"), (2, "ok", None)]
    assert [(r["attempt"], r["failed_attempt"]) for r in ledger(project)] == [(1, True), (2, False)]
    assert result.envelope["attempts"] == {"budget": 6, "remaining": 5, "failed_in_tree": 1}


def test_a_permanent_failure_is_not_retried(fake_hermes, project, registry) -> None:
    fake_hermes.script({"stdout": "", "exit": 0})
    result = run(project, plan("Weekly check-in", "Summary of the sleep log."), registry)
    assert result.status == "failed" and len(fake_hermes.calls()) == 1
    assert result.envelope["children"][0]["reason"] == "empty_output"


def test_a_child_that_answers_blocked_fails_without_a_retry(fake_hermes, project, registry) -> None:
    fake_hermes.script({"stdout": "BLOCKED: the sleep log is not attached"})
    result = run(project, plan("Weekly check-in", "Summary of the sleep log."), registry)
    [child] = result.envelope["children"]
    assert (child["status"], child["reason"]) == ("failed", "child_reported_blocked")
    assert child["detail"] == "BLOCKED: the sleep log is not attached"


def test_a_blocked_answer_on_one_long_line_is_no_longer_in_the_detail_than_any_other_detail(
        fake_hermes, project, registry) -> None:
    line = "BLOCKED: " + "the log is missing; " * 10_000
    fake_hermes.script({"stdout": line})
    result = run(project, plan("Weekly check-in", "Summary of the sleep log."), registry)
    [child] = result.envelope["children"]
    assert child["reason"] == "child_reported_blocked" and line.startswith(child["detail"])
    assert len(child["detail"]) == FIRST_LINE_CHARS
    [record] = [r for r in ledger(project) if r.get("reason") == "child_reported_blocked"]
    assert record["detail"] == child["detail"]


def test_parallel_never_runs_more_than_three_children_at_once(fake_hermes, project, registry, tmp_path) -> None:
    started = LineReader(tmp_path / "started")
    release = tmp_path / "release"
    os.mkfifo(release)
    counter = tmp_path / "running.json"
    fake_hermes.script({"gate": {"started": str(tmp_path / "started"), "release": str(release)},
                        "concurrency": str(counter), "stdout": "done"})
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.setdefault("result", run(
        project, plan("Weekly check-in", "Summary of the sleep log.", "Email to the career coach.",
                      "Draft a report of the week.", "Review the health notes.",
                      limits={"child_timeout_s": FIFO_BOUND_S, "retries": 0}), registry, mode="parallel")))
    runner.start()
    try:
        assert len(started.lines(3)) == 3, "three children run at once"
        _release(release)
        started.lines(4)
        _release(release)
    finally:
        runner.join(FIFO_BOUND_S * 2)
        started.close()
    assert not runner.is_alive()
    assert outcome["result"].status == "completed"
    assert json.loads(counter.read_text()) == {"now": 0, "max": 3}


def test_dueto_is_two_children_side_by_side_on_the_parallel_path(fake_hermes, project, registry) -> None:
    result = run(project, plan("Weekly check-in", "Summary of the sleep log.", "Email to the career coach."),
                 registry, mode="dueto")
    assert (result.envelope["mode"], result.envelope["requested_mode"], result.envelope["width"]) == (
        "parallel", "dueto", 2)
    assert result.status == "completed" and len(fake_hermes.calls()) == 2


def test_the_report_lists_every_child_its_status_cost_and_the_rules_that_fired(fake_hermes, project,
                                                                              registry) -> None:
    fake_hermes.script({"usage": {"input": 50, "output": 10, "cost": 0.5}, "stdout": "fine"})
    result = run(project, plan("Weekly check-in", "Summary of the sleep log.", "Email to the career coach."),
                 registry, band="L1", mode="dueto")
    report = Path(result.envelope["report"]).read_text()
    assert report == result.markdown
    for child in result.envelope["children"]:
        assert child["child_id"] in report
    assert "| band_toolsets | band | LOW | note | s2 |" in report, "andy's file/terminal/memory/delegation withheld"
    assert "0.5000" in report and "$1.0000 reported" in report
    assert json.loads((Path(result.envelope["run_dir"]) / "envelope.json").read_text()) == result.envelope


def _release(path: Path) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # ENXIO: every child already passed the gate and closed it
        return
    try:
        os.write(fd, b"go\n")
    finally:
        os.close(fd)


