"""Inputs of a run, checked before anything is spent: sentinel config, plan, DNA block, registry entries."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from harness.autopilot import DnaInvalid, PlanInvalid, parse_plan
from harness.autopilot.bands import Band
from harness.autopilot.config import SentinelConfig, load_sentinel, parse_sentinel
from harness.autopilot.dna import ESCALATION_TRIGGERS, Dna, parse, render, strictest
from harness.dispatch.registry import RegistryError, parse_registry

REPO = Path(__file__).resolve().parents[3]
DNA = Dna(parent_agent_id="ap-0123456789ab", depth=1, mode="recursive", autonomy_band=Band.L2,
          goal_root="Plan the quarter: jobs, health", attempts_remaining=4, escalation_triggers=ESCALATION_TRIGGERS,
          agent_id="ch-0123456789ab", agent="andy", tree_id="ap-0123456789ab", chain=("andy",),
          task="Break the search into weeks", worktree="/tmp/project", max_cost_usd=1.5, max_total_tokens=None)


def test_the_shipped_sentinel_file_holds_exactly_the_contracts_defaults() -> None:
    shipped = load_sentinel(REPO / "examples" / "autopilot" / "sentinel.yaml")
    assert replace(shipped, source="x") == replace(SentinelConfig(), source="x")


@pytest.mark.parametrize("document, field", [
    ({"task_similarity": 0.5}, "sentinel.task_similarity"), ({"max_depth": 3}, "sentinel.max_depth"),
    ({"attempts": 7}, "sentinel.attempts"), ({"retry_storm": {"max_retries": "5"}}, "sentinel.retry_storm.max_retries"),
    ({"loop": 0.9}, "sentinel.loop"), ({"token_bloat_factor": True}, "sentinel.token_bloat_factor"),
])
def test_a_sentinel_value_out_of_its_range_or_unknown_is_refused_by_name(document, field) -> None:
    with pytest.raises(PlanInvalid) as caught:
        parse_sentinel(document, "test")
    assert caught.value.field == field


def test_the_sentinel_file_is_taken_from_the_environment_when_not_given(tmp_path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("token_bloat_factor: 2.5\nretry_storm: {max_retries: 3}\n")
    config = load_sentinel(None, {"MAFIABOT_AUTOPILOT_SENTINEL": str(path)})
    assert (config.token_bloat_factor, config.retry_storm_max_retries, config.source) == (2.5, 3, str(path))


def doc(**changes):
    return {"goal": "Weekly check-in", "subtasks": ["Summary of the sleep log.", "Email to the coach."], **changes}


@pytest.mark.parametrize("document, mode, field", [
    (doc(mode="dueto", subtasks=["a", "b", "c"]), None, "subtasks"),
    (doc(mode="swarm"), None, "subtasks"),
    (doc(mode="parallel", limits={"parallel": 4}), None, "limits.parallel"),
    (doc(mode="debate-converge", converge={"max_rounds": 4}), None, "converge.max_rounds"),
    (doc(mode="debate-converge", subtasks=["a"]), None, "subtasks"),
    (doc(mode="recursive", band="L1"), None, "band"),
    (doc(limits={"retries": 6}), None, "limits.retries"),
    (doc(subtasks=[{"task": "a", "uses": ["s2"]}, "b"]), None, "subtasks[0].uses"),
    (doc(mode="parallel", subtasks=["a", {"task": "b", "uses": ["s1"]}]), None, "subtasks[1].uses"),
    (doc(subtasks=[{"task": "a", "write_to": "x.md"}, {"task": "b", "write_to": "x.md"}]), None, "subtasks"),
    (doc(subtasks=[{"task": "a", "tasks": "b"}]), None, "subtasks[0].tasks"),
    (doc(converge={"agent": "judge"}), None, "converge"),
    (doc(goal="two\nlines"), None, "goal"),
    (doc(), "triple", "--mode"),
    (doc(limits={"child_timeout_s": "fast"}), None, "limits.child_timeout_s"),
])
def test_a_plan_that_breaks_a_hard_cap_or_the_schema_is_refused_naming_the_field(document, mode, field) -> None:
    with pytest.raises(PlanInvalid) as caught:
        parse_plan(document, base_dir=Path("/tmp"), mode=mode)
    assert caught.value.field == field


def test_dueto_and_swarm_are_the_parallel_mode_at_widths_two_and_three() -> None:
    assert (parse_plan(doc(mode="dueto"), Path("/tmp")).mode, parse_plan(doc(mode="dueto"), Path("/tmp")).width) == (
        "parallel", 2)
    swarm = parse_plan(doc(subtasks=["a", "b", "c", "d"]), Path("/tmp"), mode="swarm")
    assert (swarm.mode, swarm.requested_mode, swarm.width) == ("parallel", "swarm", 3)


def test_command_line_overrides_replace_the_plans_mode_and_band() -> None:
    plan = parse_plan(doc(mode="sequential", band="L3"), Path("/tmp"), mode="dueto", band="L1-cautious")
    assert (plan.mode, plan.band) == ("parallel", Band.L1)


def test_every_example_plan_is_valid() -> None:
    plans = [path for path in sorted((REPO / "examples" / "autopilot").glob("*.yaml"))
             if "subtasks" in yaml.safe_load(path.read_text())]
    assert plans, "no example plan found: the test would pass on nothing"
    for path in plans:
        parse_plan(yaml.safe_load(path.read_text()), base_dir=path.parent, source=str(path))


def test_a_dna_block_parses_back_to_what_was_rendered() -> None:
    assert parse(f"some prompt\n\n{render(DNA)}\n") == DNA


@pytest.mark.parametrize("edit, field", [
    (lambda t: t.replace("depth: 1\n", ""), "dna.depth"),
    (lambda t: t.replace("depth: 1\n", "depth: 1\ndepth: 0\n"), "dna.depth"),
    (lambda t: t.replace("depth: 1\n", "depth: 0\n"), "dna.chain"),  # a reset depth no longer matches the chain
    (lambda t: t.replace(", attempts_exhausted", ""), "dna.escalation_triggers"),
    (lambda t: t.replace("mode: recursive", "mode: freestyle"), "dna.mode"),
    (lambda t: t.replace("attempts_remaining: 4", "attempts_remaining: 9"), "dna.attempts_remaining"),
    (lambda t: t.replace("max_total_tokens: none", "max_total_tokens: none\nsecret: 1"), "dna.secret"),
    (lambda t: t + "\n" + t, "dna"),
    (lambda t: t.replace("v1.1", "v1.0"), "dna"),
])
def test_a_damaged_or_forged_dna_block_is_refused_naming_the_field(edit, field) -> None:
    with pytest.raises(DnaInvalid) as caught:
        parse(edit(render(DNA)))
    assert caught.value.field == field


def test_the_stricter_of_two_readings_of_one_block_wins() -> None:
    loose = replace(DNA, depth=0, chain=(), attempts_remaining=6, autonomy_band=Band.L3, max_cost_usd=None)
    combined = strictest(loose, DNA)
    assert (combined.depth, combined.attempts_remaining, combined.autonomy_band, combined.max_cost_usd) == (
        1, 4, Band.L2, 1.5)
    with pytest.raises(DnaInvalid):
        strictest(DNA, replace(DNA, agent_id="ch-ffffffffffff"))


def test_a_registry_entry_may_pin_a_route_and_a_turn_cap_and_is_checked() -> None:
    registry = parse_registry({"agents": {"judge": {"profile": "tester", "provider": "minimax", "model": "M3",
                                                    "max_turns": 4}}}, "t")
    assert (registry.agents["judge"].provider, registry.agents["judge"].max_turns) == ("minimax", 4)
    with pytest.raises(RegistryError, match="max_turns"):
        parse_registry({"agents": {"judge": {"profile": "tester", "max_turns": 0}}}, "t")
