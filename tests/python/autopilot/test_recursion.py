"""Recursion across processes: children re-enter `mafiabot-harness autopilot` as real processes, and the
DNA block they inherit decides depth, chain, band and attempts; a chain that would reach depth 3 stops
at the boundary."""

from __future__ import annotations

import json
from dataclasses import replace

from harness.autopilot.bands import Band
from harness.autopilot.dna import ESCALATION_TRIGGERS, Dna, parse, render
from harness.settings import AUTOPILOT_DNA_ENV as DNA_ENV

from .autopilot_support import children, ledger, plan, rules, run, write_yaml

ROOT_GOAL = "Plan the quarter for Maxime"


def dna_env(project, **changes) -> dict[str, str]:
    dna = Dna(parent_agent_id="ap-0000000000aa", depth=1, mode="recursive", autonomy_band=Band.L2,
              goal_root=ROOT_GOAL, attempts_remaining=6, escalation_triggers=ESCALATION_TRIGGERS,
              agent_id="ch-0000000000bb", agent="andy", tree_id="ap-0000000000aa", chain=("andy",),
              task="Break the quarter into weekly steps", worktree=str(project))
    return {DNA_ENV: render(replace(dna, **changes)), "HERMES_AUTOBOT_DELEGATED": "1"}


def environ(base: dict[str, str]) -> dict[str, str]:
    import os
    return {**os.environ, **base}


def test_a_chain_that_would_reach_depth_three_is_stopped_at_the_boundary_across_processes(
        fake_hermes, project, registry, tmp_path) -> None:
    level1 = write_yaml(tmp_path / "level1.yaml", {"goal": "Weekly steps", "mode": "recursive", "subtasks": [
        {"task": "Level two: list the weekly sleep goals.", "agent": "cooper"}]})
    level2 = write_yaml(tmp_path / "level2.yaml", {"goal": "Daily steps", "mode": "recursive", "subtasks": [
        {"task": "Level three: draft each daily report.", "agent": "scribe"}]})
    fake_hermes.script({"by_prompt": [{"match": "Level one", "steps": [{"reenter": str(level1)}]},
                                      {"match": "Level two", "steps": [{"reenter": str(level2)}]},
                                      {"match": "Level three", "steps": [{"stdout": "must never run"}]}]})
    result = run(project, plan(ROOT_GOAL, {"task": "Level one: break the quarter into career weeks.",
                                           "agent": "andy"}, mode="recursive"), registry)
    calls = fake_hermes.calls()
    assert [parse(c["autopilot_dna"]).depth for c in calls] == [1, 2], "no third Hermes run"
    assert [parse(c["autopilot_dna"]).chain for c in calls] == [("andy",), ("andy", "cooper")]

    level1_envelope = json.loads(result.envelope["children"][0]["answer"])
    level2_envelope = json.loads(level1_envelope["children"][0]["answer"])
    assert (level1_envelope["depth"], level2_envelope["depth"]) == (1, 2)
    assert level2_envelope["status"] == "stopped" and "exit_code" not in level2_envelope
    [stop] = level2_envelope["rules_fired"]
    assert (stop["rule"], stop["figures"]) == ("delegation_depth", {"depth": 3, "cap": 2})

    records = ledger(project)
    root_id = result.envelope["run_id"]
    assert {r["tree_id"] for r in records} == {root_id}
    first, second, refused = sorted(records, key=lambda r: r["depth"])
    assert (first["parent_id"], first["depth"], first["agent"]) == (root_id, 1, "andy")
    assert (second["parent_id"], second["depth"], second["agent"]) == (first["child_id"], 2, "cooper")
    assert (refused["parent_id"], refused["depth"], refused["status"], refused["reason"], refused["spawned"]) == (
        second["child_id"], 3, "stopped", "delegation_depth", False)
    subtree = result.envelope["children"][0]["subtree"]
    assert (subtree["runs"], subtree["max_depth"], subtree["statuses"]) == (2, 3, ["ok", "stopped"])


def test_a_kernel_at_depth_one_still_spawns_depth_two(fake_hermes, project, registry) -> None:
    result = run(project, plan("Weekly steps", {"task": "List the weekly sleep goals.", "agent": "cooper"},
                               mode="recursive"), registry, environ=environ(dna_env(project)))
    assert result.status == "completed" and parse(fake_hermes.calls()[0]["autopilot_dna"]).depth == 2


def test_a_kernel_at_depth_two_spawns_nothing(fake_hermes, project, registry) -> None:
    env = dna_env(project, depth=2, chain=("andy", "cooper"), agent="cooper")
    result = run(project, plan("Daily steps", "Draft each daily report.", mode="recursive"), registry,
                 environ=environ(env))
    assert result.status == "stopped" and rules(result) == ["delegation_depth"] and not fake_hermes.calls()


def test_a_re_entered_kernel_takes_its_ids_chain_and_goal_root_from_its_dna(fake_hermes, project, registry) -> None:
    result = run(project, plan("Weekly steps", {"task": "List the weekly sleep goals.", "agent": "cooper"},
                               mode="recursive"), registry, environ=environ(dna_env(project)))
    envelope = result.envelope
    assert (envelope["tree_id"], envelope["agent_id"], envelope["parent_agent_id"], envelope["chain"]) == (
        "ap-0000000000aa", "ch-0000000000bb", "ap-0000000000aa", ["andy"])
    child = parse(fake_hermes.calls()[0]["autopilot_dna"])
    assert (child.parent_agent_id, child.goal_root, child.tree_id) == ("ch-0000000000bb", ROOT_GOAL,
                                                                       "ap-0000000000aa")
    assert ledger(project)[0]["parent_id"] == "ch-0000000000bb"


def test_an_agent_already_in_the_inherited_chain_is_stopped_and_another_is_not(fake_hermes, project,
                                                                               registry) -> None:
    result = run(project, plan("Weekly steps", {"task": "Email the coach.", "agent": "andy"},
                               {"task": "List the weekly sleep goals.", "agent": "cooper"}, mode="recursive"),
                 registry, environ=environ(dna_env(project)))
    assert [s["status"] for s in result.envelope["subtasks"]] == ["stopped", "ok"]
    assert rules(result) == ["agent_repetition"] and len(fake_hermes.calls()) == 1


def test_inherited_attempts_are_not_restarted(fake_hermes, project, registry) -> None:
    fake_hermes.script({"stdout": "HTTP 503 upstream", "exit": 1})
    result = run(project, plan("Weekly steps", "List the weekly sleep goals.", mode="recursive",
                               limits={"retries": 5}), registry, environ=environ(dna_env(project,
                                                                                        attempts_remaining=2)))
    assert result.envelope["escalation"]["reason"] == "attempts_exhausted" and len(fake_hermes.calls()) == 2
    assert [parse(c["autopilot_dna"]).attempts_remaining for c in fake_hermes.calls()] == [2, 1]


def test_a_child_never_runs_in_a_wider_band_than_its_parent(fake_hermes, project, registry) -> None:
    result = run(project, plan("Weekly steps", {"task": "Email the career coach.", "agent": "andy"},
                               mode="recursive", band="L3"), registry,
                 environ=environ(dna_env(project, agent="cooper", chain=("cooper",))))
    assert result.envelope["band"] == "L2-bounded" and "band_inherited" in rules(result)
    assert "memory" not in fake_hermes.calls()[0]["argv"][3]


def test_a_child_of_a_non_recursive_run_may_not_re_enter(fake_hermes, project, registry) -> None:
    result = run(project, plan("Weekly steps", "List the weekly sleep goals."), registry,
                 environ=environ(dna_env(project, mode="parallel")))
    assert (result.status, result.envelope["reason"]) == ("refused", "reentry_not_allowed")
    assert not fake_hermes.calls()
    [record] = ledger(project)
    assert (record["status"], record["reason"], record["parent_id"]) == ("refused", "reentry_not_allowed",
                                                                        "ch-0000000000bb")


def test_a_delegated_process_without_dna_is_refused_as_nested(fake_hermes, project, registry) -> None:
    result = run(project, plan("Weekly steps", "List the weekly sleep goals."), registry,
                 environ=environ({"HERMES_AUTOBOT_DELEGATED": "1"}))
    assert (result.status, result.envelope["reason"]) == ("refused", "nested_delegation")


def test_an_unreadable_dna_block_refuses_instead_of_restarting_at_depth_zero(fake_hermes, project,
                                                                             registry) -> None:
    env = dna_env(project)
    env[DNA_ENV] = env[DNA_ENV].replace("depth: 1", "depth: 0")
    result = run(project, plan("Weekly steps", "List the weekly sleep goals."), registry, environ=environ(env))
    assert (result.status, result.envelope["reason"]) == ("refused", "dna_invalid")


def test_a_dna_block_in_the_plan_counts_when_the_environment_lost_it(fake_hermes, project, registry) -> None:
    block = dna_env(project, depth=2, chain=("andy", "cooper"), agent="cooper")[DNA_ENV]
    result = run(project, plan("Daily steps", "Draft each daily report.", mode="recursive", dna=block), registry)
    assert rules(result) == ["delegation_depth"] and not fake_hermes.calls()


def test_a_child_may_not_move_its_project_root_outside_its_worktree(fake_hermes, project, registry,
                                                                    tmp_path) -> None:
    result = run(project, plan("Weekly steps", "List the weekly sleep goals.", mode="recursive"), registry,
                 environ=environ(dna_env(project, worktree=str(tmp_path / "elsewhere"))))
    assert (result.status, result.envelope["reason"]) == ("refused", "worktree_escape")
    assert children(result) == []
