"""Every rule the kernel can fire, and the `Finding` a firing leaves in the envelope and the report.

Invariants:
- A rule has one fixed action, whatever the band: `stop` (that child is not run, or its result is
  discarded; siblings go on), `block` (a HIGH sentinel finding: nothing new is spawned and the run
  ends in `escalate`), `pause` (a human is needed: the run ends in `escalate`; in sequential modes
  nothing after it runs), `alert` (reported only), `note` (an explained adjustment).
- Every finding names its rule, the contract reference it implements, what it was about (a subtask,
  child or the run) and the figures it compared, so a reader can check the decision by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Action(str, Enum):
    STOP = "stop"
    BLOCK = "block"
    PAUSE = "pause"
    ALERT = "alert"
    NOTE = "note"


SEVERITY = {Action.BLOCK: "HIGH", Action.PAUSE: "HIGH", Action.STOP: "MEDIUM", Action.ALERT: "MEDIUM",
            Action.NOTE: "LOW"}


@dataclass(frozen=True)
class Rule:
    name: str
    ref: str
    action: Action
    summary: str


RULES: dict[str, Rule] = {rule.name: rule for rule in (
    # sentinel (anti-loop), thresholds from the sentinel config
    Rule("task_similarity", "RULE-001", Action.STOP, "the child's task restates its parent's or a sibling's"),
    Rule("agent_repetition", "RULE-001", Action.STOP, "the agent is already in the delegation chain"),
    Rule("delegation_depth", "RULE-002", Action.STOP, "the child would be deeper than the hard cap"),
    Rule("output_stagnation", "RULE-005", Action.STOP, "the child's output equals its input"),
    Rule("stall", "RULE-005", Action.STOP, "the child was killed at its deadline"),
    Rule("error_cascade", "RULE-004", Action.ALERT, "failed attempts are piling up"),
    Rule("token_bloat", "RULE-009", Action.BLOCK, "the child used more than the bloat factor times its budget"),
    Rule("retry_storm", "RULE-010", Action.BLOCK, "the same task was retried too often within the window"),
    Rule("secret_in_output", "RULE-012", Action.BLOCK, "the child's output carries what looks like a secret"),
    Rule("prompt_injection", "OWASP-LLM01", Action.BLOCK, "the child's output tries to instruct the orchestrator"),
    # autonomy bands and rejection conditions
    Rule("band_write", "band", Action.PAUSE, "L1-cautious pauses every write for a human"),
    Rule("write_refused", "rejection", Action.PAUSE, "the write target is outside the worktree"),
    Rule("protected_file", "rejection", Action.PAUSE, "the write target is a protected file"),
    Rule("worktree_collision", "rejection", Action.STOP, "another run holds the write target"),
    Rule("band_toolsets", "band", Action.NOTE, "toolsets the band does not allow were withheld"),
    Rule("band_inherited", "band", Action.NOTE, "a child kernel never runs in a wider band than its parent"),
    # escalation triggers (delegation-dna-prompt.md, Escalation Rule 1-5)
    Rule("destructive_action", "escalation-1", Action.PAUSE, "destructive operations always need a human"),
    Rule("spending_beyond_scope", "escalation-2", Action.PAUSE, "the tree's spend reached the plan's budget"),
    Rule("unknown_provider", "escalation-4", Action.PAUSE, "the agent's provider route is not usable as configured"),
    Rule("attempts_exhausted", "escalation-5", Action.PAUSE, "no attempts remain; a 7th is never made"),
    # the kernel's own bookkeeping
    Rule("dependency_failed", "plan", Action.STOP, "a result this subtask uses did not come back"),
    Rule("ledger_unwritable", "audit", Action.BLOCK, "a spawn could not be ledgered, so nothing more is spawned"),
    Rule("proposals_agree", "converge", Action.NOTE, "every proposal is the same text; no consolidator was needed"),
)}


@dataclass(frozen=True)
class Finding:
    rule: str
    subject: str
    detail: str
    figures: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}")

    @property
    def action(self) -> Action:
        return RULES[self.rule].action

    @property
    def severity(self) -> str:
        return SEVERITY[self.action]

    @property
    def halts(self) -> bool:
        return self.action in (Action.BLOCK, Action.PAUSE)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "ref": RULES[self.rule].ref, "action": self.action.value,
                "severity": self.severity, "subject": self.subject, "detail": self.detail,
                "figures": dict(self.figures)}


def finding(rule: str, subject: str, detail: str, **figures: Any) -> Finding:
    return Finding(rule, subject, detail, figures)
