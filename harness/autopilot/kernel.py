"""Phase 3: one step of a plan from its gates to its accepted (or refused) result, retries included.

A step is one sub-task (or one debate proposal, revision or converge call) given to one agent.
`Kernel.run_step` runs the pre-spawn gates, then up to `retries + 1` attempts, each through the
shared Hermes transport, each judged, each ledgered with its parent id, then writes the artifact.

Invariants:
- Gates run before anything is spent, cheapest first: stopped or halted run, failed dependency,
  destructive operation, depth, agent repetition, task similarity, band and write target, write-target
  lock. Before every attempt: attempts left, the tree's budget, retry storm. A gate that fires leaves a
  not-run child carrying its finding, and (except a skip after a stop or a halt) a ledger refusal record.
- A run's own stop (`KernelSettings.stop`) reaches every child's journal: a child in flight is stopped
  and ledgered `cancelled` by its transport, and every step after it is skipped.
- No attempt starts unless the tree has an attempt to spare that no running attempt has already
  reserved: with N children in flight and R attempts left, a new one starts only when R - N > 0, so
  no 7th failed attempt ever happens, even in parallel. A step that must wait for that waits on a
  condition, bounded by the child deadline plus POOL_GRACE_S.
- Every spawn's DNA carries depth + 1, the chain plus its agent, the attempts left at spawn, the
  narrower band and the tree's budgets, in its prompt and in DNA_ENV; the child also gets the
  project root, the ledger and the sentinel config through the environment.
- A child's answer is accepted only when Hermes succeeded, it is not BLOCKED:, and no output rule
  fires (secret, injection, token bloat, stagnation, the step's own acceptor). An answer is saved to
  the run directory as soon as it arrives (never one that carries a secret), so a kernel that dies
  loses nothing a child finished.
- Only transient transport failures and unacceptable converge verdicts are retried; a step's rules
  (stall, stagnation, provider) stop it instead.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.autobot.writer import WriteTarget, write_artifact
from harness.autopilot.bands import child_toolsets, decide_write, destructive_signal
from harness.autopilot.config import SentinelConfig
from harness.autopilot.dna import ESCALATION_TRIGGERS, Dna, render
from harness.autopilot.findings import Action, Finding, finding
from harness.autopilot.identity import Identity, new_child_id
from harness.autopilot.plan import Plan, Subtask
from harness.autopilot.prompt import BLOCKED_PREFIX, child_prompt, converge_prompt
from harness.autopilot.selection import Pick
from harness.autopilot.sentinel import (
    check_agent_repetition,
    check_depth,
    check_error_cascade,
    check_injection,
    check_output_stagnation,
    check_retry_storm,
    check_secret,
    check_task_similarity,
    check_token_bloat,
    words,
)
from harness.autopilot.steps import Child, Gate, Step
from harness.autopilot.tree import KIND, TreeScan, scan
from harness.dispatch.registry import Agent, Registry
from harness.durable import DurableWriteError, HolderLock, LockHeld, atomic_write
from harness.errors import HarnessError
from harness.hermes import RunOutcome, RunRequest, Transport, TransportSettings, cancellation
from harness.hermes import outcome as reasons
from harness.hermes.classify import first_line
from harness.hermes.locate import hermes_root
from harness.ledger.journal import RunJournal
from harness.ledger.records import refusal_record, run_record
from harness.ledger.store import LedgerError, LedgerStore, utc_now
from harness.settings import AGENT_REGISTRY_ENV as REGISTRY_ENV
from harness.settings import AUTOPILOT_DNA_ENV as DNA_ENV
from harness.settings import AUTOPILOT_LEDGER_ENV as LEDGER_ENV
from harness.settings import AUTOPILOT_SENTINEL_ENV as SENTINEL_ENV
from harness.settings import DATABASE_URL_ENV, PROJECT_ROOT_ENV
from harness.settings import state_dir as project_state_dir

# After the transport returns (its own deadline bounds the Hermes run) a step still ledgers, judges
# and writes: seconds, at most. This slack bounds every wait on another step of the same run.
POOL_GRACE_S = 60.0
# Pauses that concern the whole tree, not one step: nothing more may start after them.
RUN_WIDE = frozenset({"attempts_exhausted", "spending_beyond_scope"})
PROVIDER_REASONS = frozenset({reasons.PROVIDER_FALLBACK, reasons.NO_PROVIDER_CONFIGURED})
NOT_RUN_STATUS = {Action.STOP: "stopped", Action.PAUSE: "paused", Action.BLOCK: "blocked"}
CHILD_BLOCKED = "child_reported_blocked"
OUTPUT_INVALID = "output_invalid"
WRITE_FAILED = "write_failed"


class Unacceptable(HarnessError):
    """A step's acceptor refuses an answer (e.g. a converge verdict that is not one); retried."""


@dataclass(frozen=True)
class KernelSettings:
    project_root: Path
    ledger_path: Path
    registry: Registry
    sentinel: SentinelConfig = field(default_factory=SentinelConfig)
    transport: TransportSettings = field(default_factory=TransportSettings)
    state_root: Path | None = None
    report_path: Path | None = None
    clock: Callable[[], float] = time.time
    # A libpq URL: the ledger is that database's (its run journals beside `ledger_path`), for the children too.
    database: str | None = None
    # This run's own stop (a host's cancel of its job; `cancellation.StopRequest` says who asked): the children
    # in flight are stopped and ledgered `cancelled`, and no step starts after it.
    stop: threading.Event | None = None

    @property
    def state_dir(self) -> Path:
        return self.state_root or project_state_dir(self.project_root) / "autopilot"


def child_deadline(plan_timeout_s: float, config: SentinelConfig) -> float:
    """Seconds a child may run: the plan's timeout, never more than the sentinel's stall limit."""
    return min(plan_timeout_s, config.stall_seconds)


def task_key(agent: str, task: str) -> str:
    """Identity of "this task for this agent", for the retry-storm count across runs."""
    return hashlib.sha256(f"{agent}\n{' '.join(words(task))}".encode()).hexdigest()[:16]


class Kernel:
    """The state of one run: its children, findings and escalation, shared by the steps' threads."""

    def __init__(self, plan: Plan, settings: KernelSettings, ident: Identity, transport: Transport,
                 run_dir: Path, picks: list[Pick], ledger: LedgerStore) -> None:
        self.plan, self.settings, self.ident, self.transport = plan, settings, ident, transport
        self.run_dir = run_dir
        self.picks = {p.subtask: p for p in picks}
        self.config = settings.sentinel
        self.ledger = ledger
        self.deadline_s = child_deadline(plan.limits.child_timeout_s, self.config)
        self.cond = threading.Condition()
        self.halted = threading.Event()
        self.children: list[Child] = []
        self.findings: list[Finding] = list(ident.notes)
        self.halting: list[Finding] = []
        self.final: dict[str, Child] = {}
        self.inflight = 0
        self.own_failures = 0
        self.attempt_log: list[bool] = []
        self.local_spawns: list[tuple[str, str, float]] = []
        self.debate: dict[str, Any] | None = None

    # -- findings ---------------------------------------------------------------------------
    def fire(self, item: Finding) -> None:
        with self.cond:
            self.findings.append(item)
            if not item.halts:
                return
            self.halting.append(item)
            if item.action is Action.BLOCK or item.rule in RUN_WIDE or self.plan.ordered:
                self.halted.set()

    def stopped(self) -> bool:
        """Whether the run's own stop was asked for."""
        return self.settings.stop is not None and self.settings.stop.is_set()

    def add(self, child: Child) -> Child:
        with self.cond:
            self.children.append(child)
        return child

    # -- one step -----------------------------------------------------------------------------
    def run_step(self, step: Step) -> Child:
        gate = self.gate(step)
        if isinstance(gate, Child):
            return gate
        try:
            child = self.attempt(step, 1, gate)
            for number in range(2, self.plan.limits.retries + 2):
                if not child.retry or self.halted.is_set() or self.stopped():
                    break
                child = self.attempt(step, number, gate)
            if child.status == "ok" and gate.target is not None:
                self.write(child, gate.target)
            return child
        finally:
            if gate.lock is not None:
                gate.lock.release()

    def gate(self, step: Step) -> Child | Gate:
        subject, subtask = step.subject, step.subtask
        if self.stopped():
            return self.add(self.blank(step, 1, status="skipped", reason=reasons.CANCELLED, detail=(
                f"not run: the run was stopped by {cancellation.stop_cause(self.settings.stop)}")))
        if self.halted.is_set():
            first = self.halting[0] if self.halting else None
            return self.add(self.blank(step, 1, status="skipped", reason="halted",
                                       detail=f"not run: the run halted on {first.rule if first else 'a rule'}"))
        for used in subtask.uses:
            done = self.final.get(used)
            if done is None or done.status != "ok":
                return self.refuse(step, finding("dependency_failed", subject, f"uses {used}, which ended "
                                                 f"{done.status if done else 'not run'}", uses=used))
        siblings = [(s.id, s.task) for s in self.plan.subtasks[: self._index(subtask)]
                    if self.picks.get(s.id) and self.picks[s.id].agent == step.pick.agent]
        checks: tuple[Callable[[], Finding | None], ...] = (
            lambda: destructive_signal(subject, subtask.task, subtask.destructive),
            lambda: check_depth(subject, self.ident.depth + 1, self.config),
            lambda: check_agent_repetition(subject, step.pick.agent, self.ident.chain),
            lambda: check_task_similarity(subject, subtask.task, self.ident.parent_task, siblings, self.config)
            if step.check_similarity else None)
        for check in checks:
            fired = check()
            if fired is not None:
                return self.refuse(step, fired)
        agent = self.settings.registry.lookup(step.pick.agent or "")
        assert agent is not None  # select.check_agents validated every name
        target = None
        if step.write_to:
            decision = decide_write(subject, step.write_to, self.ident.band, self.settings.project_root,
                                    hermes_root(self.settings.transport.hermes_home, self.settings.transport.env()))
            if decision.refusal is not None:
                return self.refuse(step, decision.refusal)
            target = decision.target
        toolsets, withheld = child_toolsets(agent.toolsets, self.ident.band)
        if withheld:
            self.fire(finding("band_toolsets", subject, f"{self.ident.band.value} withholds {', '.join(withheld)} "
                                                        f"from {agent.name}", withheld=list(withheld),
                              granted=list(toolsets)))
        lock = None
        if target is not None:
            digest = hashlib.sha256(str(target).encode()).hexdigest()[:16]
            lock = HolderLock(self.settings.state_dir / "locks" / f"write.{digest}.lock", label=self.ident.run_id)
            try:
                lock.acquire(utc_now())
            except LockHeld as exc:
                return self.refuse(step, finding("worktree_collision", subject, f"{target} is being written by "
                                                 f"another run: {exc}", target=str(target)))
            except DurableWriteError as exc:
                return self.refuse(step, finding("worktree_collision", subject, f"cannot lock {target}: {exc}",
                                                 target=str(target)))
        return Gate(agent, toolsets, withheld, target, lock)

    def attempt(self, step: Step, number: int, gate: Gate) -> Child:
        key = task_key(gate.agent.name, step.subtask.task)
        reserved = self._reserve(step, key)
        if isinstance(reserved, Finding):
            return self.refuse(step, reserved, attempt=number, agent=gate.agent)
        child_id, remaining = reserved
        failed = True
        try:
            dna = self.dna_for(step, gate.agent, child_id, remaining)
            request = RunRequest(prompt=self.prompt_for(step, dna), profile=gate.agent.profile,
                                 provider=gate.agent.provider, model=gate.agent.model, toolsets=gate.toolsets,
                                 max_turns=min(self.plan.limits.max_turns, gate.agent.max_turns or self.plan.limits.max_turns),
                                 timeout_s=self.deadline_s, env=self.child_env(dna), parent_id=self.ident.agent_id,
                                 label=f"autopilot:{self.ident.run_id}:{step.subject}")
            started = {"tree_id": self.ident.tree_id, "run_id": self.ident.run_id, "child_id": child_id,
                       "agent": gate.agent.name, "depth": self.ident.depth + 1}
            with RunJournal(self.ledger, KIND, started, stop=self.settings.stop) as journal:
                outcome = self.transport.run(request, journal=journal)
                with cancellation.shielded():
                    child = self.judge(step, number, child_id, gate, outcome)
                    self.add(child)
                    self.ledger_child(child, outcome, key, journal)
            failed = child.failed_attempt
        finally:
            with self.cond:
                self.inflight -= 1
                if failed:
                    self.own_failures += 1
                self.attempt_log.append(failed)
                self.cond.notify_all()
        if failed:
            self._after_failure(step, child)
        return child

    def _reserve(self, step: Step, key: str) -> tuple[str, int] | Finding:
        """(child id, attempts remaining) for a new attempt, or the finding that forbids one."""
        bound = time.monotonic() + self.deadline_s + POOL_GRACE_S
        while True:
            seen = scan(self.ledger, self.ident.tree_id, key)
            with self.cond:
                remaining = self.remaining(seen)
                if remaining - self.inflight <= 0:
                    if self.inflight == 0 or time.monotonic() >= bound:
                        return self._exhausted(step.subject, seen, remaining)
                    self.cond.wait(timeout=max(0.0, bound - time.monotonic()))
                    continue
                refusal = self._budget(step.subject, seen) or self._storm(step.subject, seen, key)
                if refusal is not None:
                    return refusal
                child_id = new_child_id()
                self.inflight += 1
                self.local_spawns.append((key, child_id, self.settings.clock()))
                return child_id, remaining

    def remaining(self, seen: TreeScan) -> int:
        return min(self.ident.attempts_floor - self.own_failures, self.config.attempts - len(seen.failed_attempts))

    def _exhausted(self, subject: str, seen: TreeScan, remaining: int) -> Finding:
        return finding("attempts_exhausted", subject, f"{remaining} attempt(s) remain of "
                                                      f"{self.ident.attempts_floor}; escalating with the chain",
                       remaining=remaining, failed=[r.get("child_id") for r in seen.failed_attempts])

    def _budget(self, subject: str, seen: TreeScan) -> Finding | None:
        totals = seen.totals()
        tokens = totals.input_tokens + totals.output_tokens
        if self.ident.max_cost_usd is not None and totals.cost_usd >= self.ident.max_cost_usd:
            return finding("spending_beyond_scope", subject, f"the tree spent ${totals.cost_usd:.4f} of its "
                                                             f"${self.ident.max_cost_usd:g} budget",
                           spent_usd=round(totals.cost_usd, 6), budget_usd=self.ident.max_cost_usd)
        if self.ident.max_total_tokens is not None and tokens >= self.ident.max_total_tokens:
            return finding("spending_beyond_scope", subject, f"the tree used {tokens} of its "
                                                             f"{self.ident.max_total_tokens} tokens",
                           spent_tokens=tokens, budget_tokens=self.ident.max_total_tokens)
        return None

    def _storm(self, subject: str, seen: TreeScan, key: str) -> Finding | None:
        times = dict(seen.spawns_of_task)
        times.update({child_id: t for k, child_id, t in self.local_spawns if k == key})
        return check_retry_storm(subject, times.values(), self.settings.clock(), self.config)

    def _after_failure(self, step: Step, child: Child) -> None:
        with self.cond:
            log = list(self.attempt_log)
        cascade = check_error_cascade(child.subject, log, self.config)
        if cascade is not None:
            self.note(child, cascade)
        seen = scan(self.ledger, self.ident.tree_id)
        with self.cond:
            remaining = self.remaining(seen)
        if remaining <= 0:
            child.retry = False
            self.note(child, self._exhausted(step.subject, seen, remaining))

    def note(self, child: Child, item: Finding) -> None:
        child.rules.append(item.rule)
        self.fire(item)

    # -- building the spawn ------------------------------------------------------------------
    def dna_for(self, step: Step, agent: Agent, child_id: str, remaining: int) -> Dna:
        ident = self.ident
        return Dna(parent_agent_id=ident.agent_id, depth=ident.depth + 1, mode=self.plan.mode,
                   autonomy_band=ident.band, goal_root=ident.goal_root, attempts_remaining=remaining,
                   escalation_triggers=ESCALATION_TRIGGERS, agent_id=child_id, agent=agent.name,
                   tree_id=ident.tree_id, chain=(*ident.chain, agent.name), task=step.subtask.task,
                   worktree=str(ident.worktree), max_cost_usd=ident.max_cost_usd,
                   max_total_tokens=ident.max_total_tokens)

    def prompt_for(self, step: Step, dna: Dna) -> str:
        cap = self.config.max_depth
        if step.role == "consolidator":
            return converge_prompt(dna, step.quoted, step.debate_round or 1, step.max_rounds, step.open_points)
        return child_prompt(dna, cap, self.expected_tokens(step), step.quoted, debate_round=step.debate_round,
                            open_points=step.open_points)

    def child_env(self, dna: Dna) -> dict[str, str]:
        env = {DNA_ENV: render(dna), PROJECT_ROOT_ENV: str(self.settings.project_root),
               LEDGER_ENV: str(self.settings.ledger_path)}
        if self.settings.database is not None:
            env[DATABASE_URL_ENV] = self.settings.database
        if self.config.source != "built-in defaults":
            env[SENTINEL_ENV] = self.config.source
        if self.settings.registry.source != "built-in defaults":
            env[REGISTRY_ENV] = str(Path(self.settings.registry.source).resolve())
        return env

    def expected_tokens(self, step: Step) -> int:
        return step.subtask.expected_output_tokens or self.plan.limits.expected_output_tokens

    # -- judging an outcome -------------------------------------------------------------------
    def blank(self, step: Step, attempt: int, agent: Agent | None = None, **values: Any) -> Child:
        chosen = agent or (self.settings.registry.lookup(step.pick.agent) if step.pick.agent else None)
        values.setdefault("child_id", None)
        return Child(subject=step.subject, subtask=step.subtask.id,
                     agent=chosen.name if chosen else step.pick.agent, profile=chosen.profile if chosen else None,
                     attempt=attempt, depth=self.ident.depth + 1, role=step.role, debate_round=step.debate_round,
                     **values)

    def judge(self, step: Step, number: int, child_id: str, gate: Gate, outcome: RunOutcome) -> Child:
        child = self.blank(step, number, gate.agent, child_id=child_id, spawned=True, toolsets=gate.toolsets,
                           withheld=gate.withheld, usage=outcome.usage.to_dict(), duration_ms=outcome.duration_ms,
                           session_id=outcome.session_id, warnings=list(outcome.warnings))
        label = f"{step.subject} ({child_id})"
        if not outcome.ok:
            # A stopped run is ledgered `cancelled`, as a delegation's or a dispatch's is
            child.status = "cancelled" if outcome.reason == reasons.CANCELLED else "failed"
            child.reason, child.detail = outcome.reason, outcome.detail
            if outcome.reason and reasons.TIMEOUT_PATTERN.match(outcome.reason):
                self.note(child, finding("stall", label, f"killed at its {self.deadline_s:g} s deadline",
                                         deadline_s=self.deadline_s, stall_seconds=self.config.stall_seconds))
            elif reasons.is_auth(outcome.reason) or outcome.reason in PROVIDER_REASONS:
                self.note(child, finding("unknown_provider", label, f"{outcome.reason}: {outcome.detail}",
                                         profile=gate.agent.profile, reason=outcome.reason))
            else:
                child.retry = outcome.retryable
            return child
        text = outcome.text
        secret = check_secret(label, text)
        if secret is not None:
            child.status, child.reason, child.detail = "blocked", secret.rule, secret.detail
            self.note(child, secret)
            return child
        self.save_answer(child, text)
        if text.lstrip().startswith(BLOCKED_PREFIX):
            child.status, child.reason, child.detail = "failed", CHILD_BLOCKED, first_line(text)
            return child
        usage = outcome.usage
        output_tokens = usage.output_tokens
        for fired in (check_injection(label, text),
                      check_token_bloat(label, output_tokens, self.expected_tokens(step), self.config),
                      check_output_stagnation(label, step.subtask.task, text, self.config)):
            if fired is not None:
                child.status = NOT_RUN_STATUS[fired.action]
                child.reason, child.detail = fired.rule, fired.detail
                self.note(child, fired)
                return child
        if step.accept is not None:
            try:
                child.parsed = step.accept(text)
            except Unacceptable as exc:
                child.status, child.reason, child.detail, child.retry = "failed", OUTPUT_INVALID, str(exc), True
                return child
        child.status, child.answer = "ok", text
        return child

    def refuse(self, step: Step, item: Finding, attempt: int = 1, agent: Agent | None = None) -> Child:
        child = self.blank(step, attempt, agent, status=NOT_RUN_STATUS.get(item.action, "stopped"), reason=item.rule,
                           detail=item.detail)
        self.note(child, item)
        record = refusal_record(KIND, status=child.status, reason=item.rule, detail=item.detail,
                                profile=child.profile, parent_id=self.ident.agent_id,
                                **self.record_fields(child, task_key(child.agent or "", step.subtask.task)))
        self.append(child, record)
        return self.add(child)

    # -- records and files ---------------------------------------------------------------------
    def record_fields(self, child: Child, key: str) -> dict[str, Any]:
        return {"tree_id": self.ident.tree_id, "run_id": self.ident.run_id, "child_id": child.child_id,
                "subtask": child.subtask, "agent": child.agent, "depth": child.depth, "mode": self.plan.mode,
                "band": self.ident.band.value, "attempt": child.attempt, "role": child.role,
                "round": child.debate_round, "task_key": key, "spawned": child.spawned,
                "failed_attempt": child.failed_attempt, "rules": list(child.rules), "toolsets": list(child.toolsets)}

    def ledger_child(self, child: Child, outcome: RunOutcome, key: str, journal: RunJournal) -> None:
        record = run_record(KIND, outcome, status=child.status, reason=child.reason, parent_id=self.ident.agent_id,
                            detail=child.detail or None, **self.record_fields(child, key))
        self.append(child, record, journal)

    def append(self, child: Child, record: Mapping[str, Any], journal: RunJournal | None = None) -> None:
        try:
            entry = journal.settle(dict(record)) if journal is not None else self.ledger.append(record)
        except LedgerError as exc:
            self.note(child, finding("ledger_unwritable", child.subject, str(exc)))
            return
        child.ledger_entry, child.record_id = entry.ref(self.settings.project_root), entry.record_id

    def save_answer(self, child: Child, text: str) -> None:
        path = self.run_dir / "answers" / f"{child.child_id}.txt"
        try:
            atomic_write(path, text.encode("utf-8"))
        except DurableWriteError as exc:
            child.warnings.append(f"answer not saved: {exc}")
            return
        child.answer_file = str(path)

    def write(self, child: Child, target: WriteTarget) -> None:
        try:
            write_artifact(target, child.answer or "", None)
        except DurableWriteError as exc:
            child.status, child.reason, child.detail = "failed", WRITE_FAILED, str(exc)
            return
        child.artifacts.append(str(target))

    def _index(self, subtask: Subtask) -> int:
        ids = [s.id for s in self.plan.subtasks]
        return ids.index(subtask.id) if subtask.id in ids else len(ids)
