"""Agreement is a consolidator's verdict, never word similarity: opposite proposals worded alike go to the judge."""

from __future__ import annotations

from harness.autopilot.sentinel import similarity

from .autopilot_support import rules, run
from .test_debate import consolidator_calls, debate, script

HOLD = "Hold the weekly review on Friday afternoon, so the week's work is fresh in everyone's mind."
DO_NOT_HOLD = "Do not hold the weekly review on Friday afternoon, so the week's work is fresh in everyone's mind."


def test_worded_alike_opposite_proposals_are_not_converged_without_a_consolidator(fake_hermes, project,
                                                                                  registry) -> None:
    assert similarity(HOLD, DO_NOT_HOLD) >= 0.85  # what the loop detector would have called agreement
    script(fake_hermes, {"verdict": "no-convergence-possible", "reasons": ["one holds the review, one does not"]},
           career=(HOLD,), health=(DO_NOT_HOLD,))
    result = run(project, debate(), registry)
    assert len(consolidator_calls(fake_hermes)) == 1
    assert result.envelope["debate"]["verdict"] == "no-convergence-possible"
    assert result.envelope["debate"]["merged"] is None and "proposals_agree" not in rules(result)


def test_proposals_that_differ_only_in_whitespace_converge_as_that_text_without_a_judge(fake_hermes, project,
                                                                                        registry) -> None:
    script(fake_hermes, {"verdict": "converged", "merged": "unused"},
           career=(HOLD,), health=("  " + HOLD.replace(" ", "\n  ", 3) + "\n",))
    result = run(project, debate(), registry)
    assert not consolidator_calls(fake_hermes)
    assert result.envelope["debate"]["merged"] == HOLD and "proposals_agree" in rules(result)
