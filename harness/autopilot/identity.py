"""Who a kernel is when it starts: the root of a tree, or a child re-entering through its DNA.

Invariants:
- The DNA is read from the environment (DNA_ENV, set by the parent kernel for every child) and from
  the plan's `dna:` field; when both exist the stricter reading wins (`dna.strictest`). A block that
  does not parse refuses the run (`dna_invalid`): a kernel never guesses its depth.
- A process inside a delegated Hermes run (HERMES_AUTOBOT_DELEGATED set) without any DNA is
  refused (`nested_delegation`): its depth is unknown, so it could be anywhere in a runaway chain.
- Only children of a recursive run may re-enter (`reentry_not_allowed` otherwise), and only with a
  project root inside the worktree their DNA names (`worktree_escape` otherwise).
- A re-entered kernel takes depth, chain, tree, goal_root and attempts from its DNA, runs in the
  narrower of its plan's band and its DNA's, and keeps the smaller of each budget: nothing a child
  asks for widens what its parent allowed.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness import settings
from harness.autopilot.bands import Band, narrower
from harness.autopilot.config import SentinelConfig
from harness.autopilot.dna import Dna, parse, smaller, strictest
from harness.autopilot.errors import DnaInvalid
from harness.autopilot.findings import Finding, finding
from harness.autopilot.plan import Plan
from harness.hermes import DELEGATED_ENV, delegated_marker
from harness.settings import AUTOPILOT_DNA_ENV as DNA_ENV

DNA_INVALID = "dna_invalid"
NESTED_DELEGATION = "nested_delegation"
REENTRY_NOT_ALLOWED = "reentry_not_allowed"
WORKTREE_ESCAPE = "worktree_escape"
LOCK_HELD = "lock_held"


def new_run_id() -> str:
    return "ap-" + secrets.token_hex(6)


def new_child_id() -> str:
    return "ch-" + secrets.token_hex(6)


@dataclass(frozen=True)
class Identity:
    run_id: str
    agent_id: str
    parent_agent_id: str | None
    tree_id: str
    depth: int
    chain: tuple[str, ...]
    goal_root: str
    parent_task: str
    band: Band
    attempts_floor: int
    max_cost_usd: float | None
    max_total_tokens: int | None
    worktree: Path
    inherited: Dna | None
    notes: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Refusal:
    reason: str
    detail: str
    dna: Dna | None = None


def identify(plan: Plan, project_root: Path, environ: Mapping[str, str], config: SentinelConfig,
             run_id: str) -> Identity | Refusal:
    try:
        dna = _read_dna(plan, environ)
    except DnaInvalid as exc:
        return Refusal(DNA_INVALID, f"the inherited DNA block is unusable ({exc}); refusing rather than guessing "
                                    f"the depth")
    root = project_root.resolve()
    if dna is None:
        marker = delegated_marker(environ)
        if marker is not None:
            return Refusal(NESTED_DELEGATION, f"{DELEGATED_ENV}={marker} but no auto-pilot DNA: this process runs "
                                              f"inside a delegated sub-agent of unknown depth; only children of a "
                                              f"recursive auto-pilot run may start one")
        return Identity(run_id=run_id, agent_id=run_id, parent_agent_id=None, tree_id=run_id, depth=0, chain=(),
                        goal_root=plan.goal, parent_task=plan.goal, band=plan.band, attempts_floor=config.attempts,
                        max_cost_usd=plan.limits.max_cost_usd, max_total_tokens=plan.limits.max_total_tokens,
                        worktree=root, inherited=None)
    if dna.mode != "recursive":
        return Refusal(REENTRY_NOT_ALLOWED, f"this child was spawned by a {dna.mode} run; only children of a "
                                            f"recursive run may re-enter auto-pilot", dna)
    worktree = Path(dna.worktree).resolve()
    if root != worktree and worktree not in root.parents:
        return Refusal(WORKTREE_ESCAPE, f"the project root {root} is outside the worktree {worktree} this child "
                                        f"was given", dna)
    band = narrower(plan.band, dna.autonomy_band)
    notes: tuple[Finding, ...] = ()
    if band is not plan.band:
        notes = (finding("band_inherited", "run", f"the plan asks for {plan.band.value}; the parent allows "
                                                  f"{dna.autonomy_band.value}", asked=plan.band.value,
                         allowed=dna.autonomy_band.value),)
    return Identity(run_id=run_id, agent_id=dna.agent_id, parent_agent_id=dna.parent_agent_id, tree_id=dna.tree_id,
                    depth=dna.depth, chain=dna.chain, goal_root=dna.goal_root, parent_task=dna.task, band=band,
                    attempts_floor=min(dna.attempts_remaining, config.attempts),
                    max_cost_usd=smaller(plan.limits.max_cost_usd, dna.max_cost_usd),
                    max_total_tokens=smaller(plan.limits.max_total_tokens, dna.max_total_tokens),
                    worktree=worktree, inherited=dna, notes=notes)


def _read_dna(plan: Plan, environ: Mapping[str, str]) -> Dna | None:
    named = settings.env_value(DNA_ENV, environ)
    from_env = parse(named) if named is not None and named.strip() else None
    from_plan = parse(plan.dna) if plan.dna else None
    if from_env is not None and from_plan is not None:
        return strictest(from_env, from_plan)
    return from_env or from_plan
