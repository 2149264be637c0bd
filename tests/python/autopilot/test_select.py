"""Phase 1 selection: deterministic, explained, avoiding the chain, distinct proposers in a debate."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.autopilot import PlanInvalid, parse_plan
from harness.autopilot.selection import check_agents, select_agents, select_consolidator


def picks_for(registry, *subtasks, chain=(), **fields):
    plan = parse_plan({"goal": "Weekly check-in", "subtasks": list(subtasks), **fields}, Path("/tmp"))
    return plan, select_agents(plan, registry, chain)


def test_the_agent_whose_strengths_match_the_task_best_is_picked_and_the_match_explained(registry) -> None:
    _, [pick] = picks_for(registry, "Draft a summary report of the sleep log.")
    assert (pick.agent, pick.rule) == ("scribe", "strength")
    assert pick.why == "good_at matched summary, report, draft (score 3); next: cooper (1)"


def test_the_same_plan_always_gets_the_same_picks(registry) -> None:
    assert picks_for(registry, "Email about health.", "Report.")[1] == picks_for(registry, "Email about health.",
                                                                                 "Report.")[1]


def test_a_tie_goes_to_the_name_that_sorts_first(registry) -> None:
    _, [pick] = picks_for(registry, "Email about health.")  # andy: email, cooper: health
    assert pick.agent == "andy"


def test_an_agent_in_the_chain_is_skipped_and_the_skip_explained(registry) -> None:
    _, [pick] = picks_for(registry, "Email about health.", chain=("andy",))
    assert pick.agent == "cooper" and "andy: already in the chain" in pick.skipped


def test_the_plans_named_agent_wins_even_when_in_the_chain_so_the_sentinel_can_stop_it(registry) -> None:
    _, [pick] = picks_for(registry, {"task": "Email.", "agent": "Andy"}, chain=("andy",))
    assert (pick.agent, pick.rule) == ("andy", "plan")


def test_without_a_match_the_default_agent_then_the_first_name_is_picked(registry) -> None:
    assert picks_for(registry, "Tidy up.", default_agent="judge")[1][0].rule == "default"
    _, [pick] = picks_for(registry, "Tidy up.")
    assert (pick.agent, pick.rule) == ("andy", "fallback")


def test_when_every_agent_is_in_the_chain_no_agent_is_picked(registry) -> None:
    _, [pick] = picks_for(registry, "Tidy up.", chain=("andy", "cooper", "judge", "scribe"))
    assert (pick.agent, pick.rule) == (None, "none")


def test_debate_proposals_go_to_different_agents_while_others_remain(registry) -> None:
    _, picks = picks_for(registry, "Email about the job.", "Email about the commute.", mode="debate-converge")
    assert [p.agent for p in picks] == ["andy", "cooper"] and "andy: already proposing" in picks[1].skipped


def test_the_consolidator_is_the_agent_good_at_converging(registry) -> None:
    plan, _ = picks_for(registry, "a", "b", mode="debate-converge")
    pick = select_consolidator(plan, registry, (), ["andy", "cooper"])
    assert (pick.agent, pick.rule) == ("judge", "strength")


def test_a_plan_naming_an_unknown_agent_is_invalid_before_anything_runs(registry) -> None:
    plan, _ = picks_for(registry, {"task": "Email.", "agent": "bob"})
    with pytest.raises(PlanInvalid) as caught:
        check_agents(plan, registry)
    assert caught.value.field == "subtasks[0].agent"
