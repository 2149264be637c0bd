"""debate-converge: divergent proposals, then at most three converge rounds; a merged result only when a
consolidator (or unanimity) says so, otherwise an honest no-convergence-possible with the reasons."""

from __future__ import annotations

import json

from .autopilot_support import plan, rules, run

GOAL = "Decide whether to accept the job offer"
CAREER, HEALTH = "Take it: the role doubles the scope.", "Decline: the commute costs an hour of sleep."


def debate(**converge):
    return plan(GOAL, {"id": "career", "task": "Argue the career case on the offer."},
                {"id": "health", "task": "Argue the health case on the offer."}, mode="debate-converge",
                converge={"agent": "judge", **converge})


def script(fake, *verdicts, career=(CAREER,), health=(HEALTH,)):
    fake.script({"by_prompt": [
        {"match": "Converge the", "steps": [v if isinstance(v, dict) and "stdout" in v else
                                            {"stdout": json.dumps(v)} for v in verdicts]},
        {"match": "career case", "steps": [{"stdout": t} for t in career]},
        {"match": "health case", "steps": [{"stdout": t} for t in health]}]})


def consolidator_calls(fake):
    return [c for c in fake.calls() if "Converge the" in c["prompt"]]


def test_a_debate_that_converges_in_round_one_returns_the_merged_result_and_writes_it(fake_hermes, project,
                                                                                     registry) -> None:
    script(fake_hermes, {"verdict": "converged", "merged": "Take it, with remote Fridays.", "agreements": ["x"]})
    result = run(project, debate(write_to="out/decision.md"), registry)
    debate_part = result.envelope["debate"]
    assert (result.status, debate_part["verdict"], debate_part["merged"]) == (
        "completed", "converged", "Take it, with remote Fridays.")
    assert len(debate_part["rounds"]) == 1 and len(fake_hermes.calls()) == 3
    assert (project / "out" / "decision.md").read_text() == "Take it, with remote Fridays.\n"
    [judge] = consolidator_calls(fake_hermes)
    assert CAREER in judge["prompt"] and HEALTH in judge["prompt"] and "<<<BEGIN PROPOSAL career by andy" in \
        judge["prompt"]


def test_open_points_send_the_proposers_into_a_second_round_that_converges(fake_hermes, project,
                                                                           registry) -> None:
    script(fake_hermes, {"verdict": "needs-another-round", "open_points": ["Is remote work possible?"]},
           {"verdict": "converged", "merged": "Take it if Fridays are remote."},
           career=(CAREER, "Take it if Fridays are remote."), health=(HEALTH, "Fine if Fridays are remote."))
    result = run(project, debate(), registry)
    assert result.status == "completed" and len(result.envelope["debate"]["rounds"]) == 2
    revision = [c for c in fake_hermes.calls() if "career case" in c["prompt"]][1]
    assert "## Debate round 2" in revision["prompt"] and "Is remote work possible?" in revision["prompt"]
    assert HEALTH in revision["prompt"] and "PROPOSAL career" not in revision["prompt"], "only the others' proposals"


def test_three_rounds_without_agreement_end_in_no_convergence_possible_with_the_reasons(fake_hermes, project,
                                                                                       registry) -> None:
    script(fake_hermes, {"verdict": "needs-another-round", "open_points": ["Scope against sleep."]})
    result = run(project, debate(), registry)
    debate_part = result.envelope["debate"]
    assert (result.status, debate_part["verdict"]) == ("no-convergence-possible", "no-convergence-possible")
    assert debate_part["merged"] is None and len(debate_part["rounds"]) == 3
    assert debate_part["reasons"] == ["Scope against sleep.", "no agreement after 3 round(s), the most allowed"]
    assert len(consolidator_calls(fake_hermes)) == 3 and len(fake_hermes.calls()) == 9
    assert "This is the last round" in consolidator_calls(fake_hermes)[-1]["prompt"]


def test_max_rounds_below_three_is_honoured(fake_hermes, project, registry) -> None:
    script(fake_hermes, {"verdict": "needs-another-round", "open_points": ["Scope against sleep."]})
    result = run(project, debate(max_rounds=1), registry)
    assert result.envelope["debate"]["verdict"] == "no-convergence-possible" and len(fake_hermes.calls()) == 3


def test_a_consolidator_that_says_no_convergence_is_believed_not_overruled(fake_hermes, project, registry) -> None:
    script(fake_hermes, {"verdict": "no-convergence-possible", "reasons": ["They value different things."]})
    result = run(project, debate(), registry)
    assert result.envelope["debate"]["reasons"] == ["They value different things."]
    assert result.status == "no-convergence-possible" and len(fake_hermes.calls()) == 3


def test_with_one_proposal_back_there_is_nothing_to_converge(fake_hermes, project, registry) -> None:
    fake_hermes.script({"by_prompt": [{"match": "health case", "steps": [{"stdout": "", "exit": 0}]}],
                        "steps": [{"stdout": CAREER}]})
    result = run(project, debate(), registry)
    assert result.status == "no-convergence-possible"
    assert result.envelope["debate"]["reasons"][0] == "only 1 of 2 proposals came back"
    assert not consolidator_calls(fake_hermes)


def test_a_malformed_verdict_is_retried_and_then_reported_never_turned_into_a_synthesis(fake_hermes, project,
                                                                                       registry) -> None:
    script(fake_hermes, {"stdout": "I think they both have a point."})
    result = run(project, debate(), registry)
    assert result.envelope["debate"]["verdict"] == "no-convergence-possible"
    assert "did not give a verdict" in result.envelope["debate"]["reasons"][0]
    assert len(consolidator_calls(fake_hermes)) == 3, "the first try and two retries"
    assert result.envelope["debate"]["merged"] is None


def test_unanimous_proposals_converge_without_a_consolidator(fake_hermes, project, registry) -> None:
    script(fake_hermes, {"verdict": "converged", "merged": "unused"}, career=(CAREER,), health=(CAREER,))
    result = run(project, debate(), registry)
    assert result.envelope["debate"]["merged"] == CAREER and "proposals_agree" in rules(result)
    assert not consolidator_calls(fake_hermes)
