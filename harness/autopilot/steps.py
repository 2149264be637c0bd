"""The values a step of a run is made of: what to run (`Step`), what came of one spawn (`Child`), and
what its gates granted (`Gate`).

Invariants:
- A `Step` is immutable: retries of it run the same task with the same agent and quoted results.
- A `Child` is one spawn or one refused step, filled in by the one thread that runs its step; the
  envelope shows at most MAX_INLINE_ANSWER characters of its answer (all of it is in `answer_file`).
- `failed_attempt` is true exactly when something was spawned and its answer was not accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.answers import cut
from harness.autobot.writer import WriteTarget
from harness.autopilot.plan import Subtask
from harness.autopilot.prompt import Quoted
from harness.autopilot.selection import Pick
from harness.dispatch.registry import Agent
from harness.durable import HolderLock

MAX_INLINE_ANSWER = 32 * 1024


@dataclass(frozen=True)
class Step:
    subtask: Subtask
    pick: Pick
    role: str = "child"
    debate_round: int | None = None
    quoted: tuple[Quoted, ...] = ()
    open_points: tuple[str, ...] = ()
    check_similarity: bool = True
    write_to: str | None = None
    accept: Callable[[str], Any] | None = None
    max_rounds: int = 1

    @property
    def subject(self) -> str:
        return self.subtask.id if self.debate_round is None else f"{self.subtask.id}@r{self.debate_round}"


@dataclass
class Child:
    """One spawn (or one refused step): what it was, how it ended, what it cost, what it left."""

    child_id: str | None
    subject: str
    subtask: str
    agent: str | None
    profile: str | None
    attempt: int
    depth: int
    role: str
    debate_round: int | None
    status: str = "pending"
    reason: str | None = None
    detail: str = ""
    spawned: bool = False
    toolsets: tuple[str, ...] = ()
    withheld: tuple[str, ...] = ()
    answer: str | None = None
    answer_file: str | None = None
    artifacts: list[str] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    duration_ms: int = 0
    session_id: str | None = None
    ledger_entry: str | None = None
    record_id: str | None = None
    rules: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    parsed: Any = None
    retry: bool = False

    @property
    def failed_attempt(self) -> bool:
        return self.spawned and self.status != "ok"

    def to_dict(self) -> dict[str, Any]:
        answer = None if self.answer is None else cut(self.answer, MAX_INLINE_ANSWER)
        truncated = answer is not None and answer != self.answer
        return {"child_id": self.child_id, "subject": self.subject, "subtask": self.subtask, "role": self.role,
                "round": self.debate_round, "agent": self.agent, "profile": self.profile, "attempt": self.attempt,
                "depth": self.depth, "status": self.status, "reason": self.reason, "detail": self.detail or None,
                "spawned": self.spawned, "toolsets": list(self.toolsets), "withheld_toolsets": list(self.withheld),
                "artifacts": list(self.artifacts), "answer": answer,
                "answer_truncated": truncated, "answer_file": self.answer_file, "usage": self.usage,
                "duration_ms": self.duration_ms, "session_id": self.session_id, "ledger_entry": self.ledger_entry,
                "record_id": self.record_id, "rules": list(self.rules), "warnings": list(self.warnings)}


@dataclass
class Gate:
    agent: Agent
    toolsets: tuple[str, ...]
    withheld: tuple[str, ...]
    target: WriteTarget | None
    lock: HolderLock | None
