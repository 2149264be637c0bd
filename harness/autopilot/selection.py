"""Phase 1: an ordered agent list for the sub-tasks, deterministic and explained.

Rules, in order, for each sub-task (the first that applies picks):
1. `plan`: the sub-task names its agent. Picked as named, even when it is already in the chain
   (the sentinel's agent_repetition rule then stops it, visibly, instead of selection hiding it).
2. `strength`: the agents whose `good_at` terms occur in the task (whole words, case-folded; a
   multi-word term must occur as a phrase) score one point per term; the highest score wins, ties
   go to the name that sorts first. Agents already in the chain are skipped, and in
   debate-converge agents already proposing are skipped while others remain, so the proposals
   come from different agents.
3. `default`: the plan's `default_agent`, unless it is in the chain.
4. `fallback`: the first agent by name that is not in the chain (nor proposing, in a debate).
5. `none`: every agent is in the chain; the sub-task gets no agent and agent_repetition stops it.

Invariants: the same plan, registry and chain always give the same picks; each pick says which
rule chose it, what it matched and which agents were skipped and why.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.autopilot.errors import PlanInvalid
from harness.autopilot.plan import Plan
from harness.dispatch.registry import Registry

CONSOLIDATOR_TERMS = ("converge", "consolidate", "merge", "synthesis", "judge", "review")


@dataclass(frozen=True)
class Pick:
    subtask: str
    agent: str | None
    rule: str
    why: str
    skipped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"subtask": self.subtask, "agent": self.agent, "rule": self.rule, "why": self.why,
                "skipped": list(self.skipped)}


def check_agents(plan: Plan, registry: Registry) -> None:
    """PlanInvalid when the plan names an agent the registry does not know."""
    named = [(f"subtasks[{i}].agent", s.agent) for i, s in enumerate(plan.subtasks) if s.agent]
    if plan.default_agent:
        named.append(("default_agent", plan.default_agent))
    if plan.converge and plan.converge.agent:
        named.append(("converge.agent", plan.converge.agent))
    for field_name, agent in named:
        if registry.lookup(agent) is None:
            raise PlanInvalid(field_name, f"an agent that is not in the agent registry ({registry.source}; known: "
                                          f"{', '.join(registry.names)})")


def matched_terms(task: str, good_at: Sequence[str]) -> list[str]:
    text = " ".join(re.findall(r"[\w']+", task.casefold()))
    found = []
    for term in good_at:
        phrase = " ".join(re.findall(r"[\w']+", term.casefold()))
        if phrase and re.search(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", text):
            found.append(term)
    return found


def select_agents(plan: Plan, registry: Registry, chain: Sequence[str]) -> list[Pick]:
    picks: list[Pick] = []
    distinct = plan.mode == "debate-converge"
    for subtask in plan.subtasks:
        taken = {p.agent for p in picks if p.agent} if distinct else set()
        if subtask.agent:
            picks.append(Pick(subtask.id, subtask.agent, "plan", "the plan names this agent"))
            continue
        picks.append(_best(subtask.id, subtask.task, plan.default_agent, registry, chain, taken))
    return picks


def select_consolidator(plan: Plan, registry: Registry, chain: Sequence[str], proposers: Sequence[str]) -> Pick:
    if plan.converge and plan.converge.agent:
        return Pick("converge", plan.converge.agent, "plan", "the plan names the consolidator")
    scored = []
    for name in registry.names:
        terms = [t for t in registry.agents[name].good_at
                 if any(word in t.casefold() for word in CONSOLIDATOR_TERMS)]
        if terms and name not in chain:
            scored.append((-len(terms), name, terms))
    if scored:
        _, name, terms = min(scored)
        return Pick("converge", name, "strength", f"good_at names consolidation ({', '.join(terms)})")
    return _best("converge", "", None, registry, chain, set(proposers))


def _best(subject: str, task: str, default_agent: str | None, registry: Registry, chain: Sequence[str],
          taken: set[str]) -> Pick:
    skipped = [f"{name}: already in the chain" for name in registry.names if name in chain]
    candidates = [name for name in registry.names if name not in chain]
    spare = [name for name in candidates if name not in taken]
    if taken and spare:
        skipped += [f"{name}: already proposing" for name in candidates if name in taken]
        candidates = spare
    scored = sorted((-len(terms), name, terms) for name in candidates
                    if (terms := matched_terms(task, registry.agents[name].good_at)))
    if scored:
        _, name, terms = scored[0]
        runner_up = f"; next: {scored[1][1]} ({-scored[1][0]})" if len(scored) > 1 else ""
        return Pick(subject, name, "strength", f"good_at matched {', '.join(terms)} (score {len(terms)}){runner_up}",
                    tuple(skipped))
    if default_agent and default_agent in candidates:
        return Pick(subject, default_agent, "default", "no good_at term matched; the plan's default agent",
                    tuple(skipped))
    if candidates:
        return Pick(subject, candidates[0], "fallback", "no good_at term matched and no usable default; the first "
                                                        "agent by name", tuple(skipped))
    return Pick(subject, None, "none", "every agent of the registry is already in the chain", tuple(skipped))
