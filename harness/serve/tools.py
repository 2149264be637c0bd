"""The tools `serve` offers host agents: names, schemas, annotations and what each one does, declared once.

Every tool is one `ToolSpec` in TOOLS: its input model (a `StrictModel`, so the inputSchema is the
model's JSON Schema and a bad argument is the model's one-line field error), the models of what it
answers (`harness.serve.results`, whose JSON Schema is its outputSchema), its annotations, and its
handler. `tools/list`, `tools/call` and the skills' test all read this table.

Invariants:
- The structured results are the seeds' envelopes (autobot, agent-dispatch, auto-pilot) with
  `job_id` added, or a job handle (`status: pending`) when the work did not finish within the
  caller's bound (`wait_seconds`, at most MAX_WAIT_S: hosts end a tool call after about 60 s).
- A handler never raises for bad input or a refused job: it returns `ToolFailure`, which the server
  turns into an `isError` result. Hermes failures are envelopes, not failures.
- A file a host names (a plan, an intent's project root and target paths, a plan's registry, the project
  root of queue_status and ledger_summary) is read only under the project root or a folder the operator
  named at start-up (`ReadRoots`, symlinks resolved before the check); a refusal names the path, never
  anything read.
- An answer reaches the host cut to `max_chars` (`harness.answers`), the whole kept in a file it names.
- `readOnlyHint` is true for the tools that start nothing and change nothing a caller asked for;
  reading a job or the ledger may settle the records of runs that are already dead (the journal's
  bookkeeping, as every command does).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

from mcp_types import ToolAnnotations
from pydantic import Field

from harness import resolve
from harness.answers import DEFAULT_MAX_CHARS, bounded, cut, cut_items
from harness.autobot import AutobotSettings, delegate
from harness.autobot.delegate import DEFAULT_MAX_TURNS, invalid_intent, new_intent_id
from harness.autobot.intent import MAX_CHARS_CEILING, Intent, IntentDocument, IntentError, parse_intent
from harness.autobot.queue import receipt
from harness.autopilot import KernelSettings, PlanInvalid, load_plan, run_plan
from harness.autopilot.bands import BAND_NAMES
from harness.autopilot.identity import new_run_id
from harness.autopilot.plan import ALIASES, MODES, Plan
from harness.autopilot.report import check_envelope
from harness.autopilot.run import run_folder
from harness.autopilot.selection import check_agents
from harness.dispatch import DispatchSettings, RegistryError, dispatch
from harness.dispatch.dispatch import DEFAULT_TIMEOUT_S, DispatchInputs, new_dispatch_id
from harness.errors import ConfigError
from harness.hermes import TransportSettings
from harness.ledger import LedgerError
from harness.ledger.journal import settle_orphans
from harness.ledger.report import DEFAULT_MAX_FAILURES, DEFAULT_MAX_GROUPS, DIMENSIONS_TEXT, summarize_ledger
from harness.ledger.stores import opened_ledger
from harness.resolve import OutsideRoots, PlanChoices, ReadRoots, ServeSettings
from harness.serve.job_stores import UnknownJob
from harness.serve.jobs import JobRefused, JobRunner
from harness.serve.results import (
    Answer,
    Autopilot,
    Delegation,
    Delivered,
    DispatchFailed,
    Handle,
    JobView,
    LedgerTotals,
    PlanChecked,
    Queued,
    QueueState,
    SettledWithoutAnswer,
    output_schema,
)
from harness.settings import existing_project_root
from harness.typed_inputs import Items, PathText, StrictModel, line, validate

# Claude Code ends a tool call after about 60 s, and so does Gemini CLI with the `timeout: 60000` that
# `serve --print-config gemini` writes (its own default is longer); an answer within 50 s leaves room for the
# round trip and a slow machine.
MAX_WAIT_S = 50.0
DEFAULT_WAIT_S = 45.0
# What a cancel waits for: the supervisor's SIGTERM grace (5 s) and its sweep, on a loaded machine.
CANCEL_WAIT_S = 15.0

WaitSeconds = Annotated[float, Field(ge=0, le=MAX_WAIT_S)]
JobId = Annotated[str, line(64, strip=True)]


class ToolFailure(Exception):
    """A tool call that could not be carried out (bad arguments, unknown job, refused start): one line."""


@dataclass(frozen=True)
class ServeContext:
    """What the handlers share: the server's project root, its Hermes settings, its jobs, and the folders a
    host may name files under (None: the project root alone)."""

    project_root: Path
    transport: TransportSettings
    jobs: JobRunner
    read_roots: ReadRoots | None = None
    # serve's --database: the queue, the jobs and the runs' ledger in that PostgreSQL database.
    database: str | None = None

    @property
    def readable(self) -> ReadRoots:
        return self.read_roots or ReadRoots.of(self.project_root)

    @classmethod
    def of(cls, served: ServeSettings, jobs: JobRunner) -> ServeContext:
        return cls(served.project_root, served.transport, jobs, served.read_roots, served.database)

    def plan_choices(self) -> PlanChoices:
        """A tool names no ledger, registry or sentinel: the variables, else the defaults, decide, exactly as
        for the matching command run without those flags."""
        return PlanChoices(self.project_root, self.transport, database=self.database)


# -- inputs -----------------------------------------------------------------------------------------

class DelegateArgs(StrictModel):
    intent: dict[str, Any]
    wait_seconds: WaitSeconds = DEFAULT_WAIT_S
    toolsets: Items[Annotated[str, line(64, strip=True)]] = ("todo",)
    max_turns: Annotated[int, Field(ge=1, le=250)] = DEFAULT_MAX_TURNS


class JobArgs(StrictModel):
    job_id: JobId


class ResultArgs(StrictModel):
    job_id: JobId
    wait_seconds: WaitSeconds = 0.0


class EnqueueArgs(StrictModel):
    intent: dict[str, Any]


class ProjectArgs(StrictModel):
    project_root: PathText | None = None


# A list a host is handed fills its context: the most entries of one list any answer carries.
MAX_LISTED = 1000
DEFAULT_QUEUE_ITEMS = 100


class QueueArgs(ProjectArgs):
    max_items: Annotated[int, Field(ge=0, le=MAX_LISTED)] = DEFAULT_QUEUE_ITEMS


class SummaryArgs(ProjectArgs):
    max_failures: Annotated[int, Field(ge=0, le=MAX_LISTED)] = DEFAULT_MAX_FAILURES
    max_groups: Annotated[int, Field(ge=0, le=MAX_LISTED)] = DEFAULT_MAX_GROUPS


MaxChars = Annotated[int, Field(ge=1, le=MAX_CHARS_CEILING)]


class DispatchArgs(StrictModel):
    inputs: dict[str, Any]
    timeout_s: Annotated[float, Field(gt=0, le=86400)] = DEFAULT_TIMEOUT_S
    wait_seconds: WaitSeconds = DEFAULT_WAIT_S
    max_chars: MaxChars = DEFAULT_MAX_CHARS


class PlanArgs(StrictModel):
    plan_file: PathText
    mode: Annotated[str, line(32, strip=True)] | None = None
    band: Annotated[str, line(32, strip=True)] | None = None


class RunPlanArgs(PlanArgs):
    wait_seconds: WaitSeconds = 0.0
    max_chars: MaxChars = DEFAULT_MAX_CHARS


# -- handlers ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Started:
    """What a job-starting handler hands back: the job record and the caller's bound on waiting."""

    job: dict[str, Any]
    wait_seconds: float


def delegation_envelope(job: dict[str, Any]) -> dict[str, Any]:
    """A settled job's envelope, or the handle of a running one."""
    if job["state"] == "settled":
        return {**job["envelope"], "job_id": job["job_id"]}
    return {"status": "pending", "job_id": job["job_id"], "state": "running", "tool": job["tool"],
            "created_at": job["created_at"],
            "next": f"delegation_result {{job_id: {job['job_id']}, wait_seconds: up to {MAX_WAIT_S:g}}} for the "
                    f"envelope, delegation_status to look, delegation_cancel to stop it"}


def start_delegation(ctx: ServeContext, args: DelegateArgs) -> Started | dict[str, Any]:
    intent_id = new_intent_id()
    try:
        settings = AutobotSettings(toolsets=args.toolsets, max_turns=args.max_turns, transport=ctx.transport,
                                   intent_id=intent_id, database=ctx.database)
        intent = confined_intent(ctx, args.intent)
    except IntentError as exc:
        return invalid_intent(exc).to_dict()

    def work(stop: threading.Event) -> dict[str, Any]:
        return delegate(intent, settings=settings.model_copy(update={"stop": stop})).to_dict()

    job = _start(ctx, "autobot_delegate", work, resolve.ledger_path(None, intent.project_root), {"intent_id": intent_id})
    return Started(job, args.wait_seconds)


def confined_intent(ctx: ServeContext, document: dict[str, Any]) -> Intent:
    """The intent, if its project root and every target path lie where this server may read; IntentError
    naming the first that does not (checked before anything is read)."""
    intent = parse_intent(document)
    roots = ctx.readable
    try:
        roots.confine(str(intent.project_root), "project_root")
        for index, given in enumerate(intent.target_paths):
            roots.confine(given, f"target_paths[{index}]", base=intent.project_root)
    except OutsideRoots as exc:
        field, _, message = str(exc).partition(": ")
        raise IntentError(field, message) from None
    return intent


def start_dispatch(ctx: ServeContext, args: DispatchArgs) -> Started | dict[str, Any]:
    try:
        registry = resolve.registry()
    except RegistryError as exc:
        raise ToolFailure(f"the agent registry is unusable: {exc}") from None
    ledger = resolve.ledger_path(None, ctx.project_root)
    dispatch_id = new_dispatch_id()

    def work(stop: threading.Event) -> dict[str, Any]:
        settings = DispatchSettings(ledger_path=ledger, registry=registry, timeout_s=args.timeout_s,
                                    max_chars=args.max_chars, transport=ctx.transport, stop=stop,
                                    database=ctx.database, dispatch_id=dispatch_id)
        return dispatch(args.inputs, settings).envelope

    return Started(_start(ctx, "agent_dispatch", work, ledger, {"dispatch_id": dispatch_id}), args.wait_seconds)


def start_autopilot(ctx: ServeContext, args: RunPlanArgs) -> Started | dict[str, Any]:
    plan, settings = _plan(ctx, args)
    run_id = new_run_id()

    def work(stop: threading.Event) -> dict[str, Any]:
        return bounded_autopilot(run_plan(plan, replace(settings, stop=stop), run_id=run_id).envelope, args.max_chars)

    named = {"run_id": run_id, "run_dir": str(run_folder(settings, run_id))}
    return Started(_start(ctx, "autopilot_run", work, settings.ledger_path, named), args.wait_seconds)


def bounded_autopilot(envelope: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """The auto-pilot envelope with every child's answer, the debate's merged text, its reasons and each
    round's open points cut to `max_chars`: each child's whole answer (the consolidator's verdict included) is
    already in its `answer_file`; a cut merged text is kept in the run's folder."""
    for child in envelope.get("children", []):
        if child.get("answer") is not None:
            shown = cut(child["answer"], max_chars)
            child["answer_truncated"] = child["answer_truncated"] or shown != child["answer"]
            child["answer"] = shown
    debate = envelope.get("debate")
    if not debate:
        return envelope
    if debate.get("merged") and envelope.get("run_dir"):
        merged = bounded(debate["merged"], max_chars, Path(envelope["run_dir"]), "merged")
        debate.update(merged.to_fields("merged"))
    debate["reasons"] = cut_items(debate.get("reasons") or [], max_chars)
    for entry in debate.get("rounds", []):
        if "open_points" in entry:
            entry["open_points"] = cut_items(entry["open_points"], max_chars)
    return envelope


def _start(ctx: ServeContext, tool: str, work: Callable[[threading.Event], dict[str, Any]], ledger: Path,
           named: dict[str, str]) -> dict[str, Any]:
    try:
        return ctx.jobs.start(tool, work, ledger=ledger, named=named)
    except JobRefused as exc:
        raise ToolFailure(str(exc)) from None


def _plan(ctx: ServeContext, args: PlanArgs) -> tuple[Plan, KernelSettings]:
    try:
        path = ctx.readable.confine(args.plan_file, "plan_file")
        plan = load_plan(path, mode=args.mode, band=args.band)
        if plan.registry is not None:
            ctx.readable.confine(str(plan.registry), "registry")
        settings = ctx.plan_choices().kernel_settings(plan)
        check_agents(plan, settings.registry)
    except PlanInvalid as exc:
        raise ToolFailure(f"invalid plan: {exc.field}: {exc.message}") from None
    except RegistryError as exc:
        raise ToolFailure(f"invalid plan: registry: {exc}") from None
    except OutsideRoots as exc:
        raise ToolFailure(f"invalid plan: {exc}") from None
    return plan, settings


def job_of(ctx: ServeContext, job_id: str) -> dict[str, Any]:
    try:
        return ctx.jobs.get(job_id)
    except UnknownJob as exc:
        raise ToolFailure(str(exc)) from None


def status_view(ctx: ServeContext, job: dict[str, Any]) -> dict[str, Any]:
    envelope = job.get("envelope") or {}
    return {"job_id": job["job_id"], "tool": job["tool"], "state": job["state"], "created_at": job["created_at"],
            "settled_at": job.get("settled_at"), "status": envelope.get("status"), "intent_id": job.get("intent_id"),
            "served_here": ctx.jobs.is_ours(job["job_id"])}


def delegation_status(ctx: ServeContext, args: JobArgs) -> dict[str, Any]:
    return status_view(ctx, job_of(ctx, args.job_id))


def delegation_result(ctx: ServeContext, args: ResultArgs) -> Started | dict[str, Any]:
    job = job_of(ctx, args.job_id)
    return Started(job, args.wait_seconds) if job["state"] == "running" else delegation_envelope(job)


def delegation_cancel(ctx: ServeContext, args: JobArgs) -> Started | dict[str, Any]:
    job = job_of(ctx, args.job_id)
    if ctx.jobs.runs_elsewhere(job):
        raise ToolFailure(f"job {args.job_id} runs in another serve process ({job['runner']}); cancel it there")
    if job["state"] == "running":
        if ctx.jobs.cancel(args.job_id):
            return Started(job, CANCEL_WAIT_S)  # its settling awaited like a result: no thread held
        job = job_of(ctx, args.job_id)  # settled since it was read, or settled from the journal now
    return delegation_envelope(job)


def autobot_enqueue(ctx: ServeContext, args: EnqueueArgs) -> dict[str, Any]:
    try:
        intent = confined_intent(ctx, args.intent)
    except IntentError as exc:
        return invalid_intent(exc).to_dict()
    queue = resolve.queue(None, intent.project_root, database=ctx.database)
    return receipt(queue, queue.enqueue(intent))


def named_root(ctx: ServeContext, args: ProjectArgs) -> Path:
    """The project root a host named (confined like every path it names), else the server's; ToolFailure
    when it lies outside the allowed folders or is no folder."""
    if not args.project_root:
        return ctx.project_root
    try:
        root = ctx.readable.confine(args.project_root, "project_root")
    except OutsideRoots as exc:
        raise ToolFailure(str(exc)) from None
    try:
        return existing_project_root(root, "project_root")
    except ConfigError as exc:
        raise ToolFailure(f"invalid arguments: {exc}") from None


def queue_status(ctx: ServeContext, args: QueueArgs) -> dict[str, Any]:
    """The queue's counts whole, and its first `max_items` items (pending first, each state first in first out)."""
    state: dict[str, Any] = resolve.queue(None, named_root(ctx, args), database=ctx.database).inspect(args.max_items)
    return {**state, "items_total": sum(state["counts"].values())}


def autopilot_check(ctx: ServeContext, args: PlanArgs) -> dict[str, Any]:
    plan, settings = _plan(ctx, args)
    return check_envelope(plan, settings)


def ledger_summary(ctx: ServeContext, args: SummaryArgs) -> dict[str, Any]:
    with opened_ledger(resolve.ledger_path(None, named_root(ctx, args)), ctx.database) as ledger:
        try:
            settle_orphans(ledger)
            summary = summarize_ledger(ledger).bounded_dict(args.max_failures, args.max_groups)
        except LedgerError as exc:  # e.g. its state folder is a file or unreadable
            raise ToolFailure(f"the ledger cannot be read: {exc}") from None
        return {"ledger": ledger.where, **summary}


# -- the table --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[StrictModel]
    answers: tuple[type[Answer], ...]
    annotations: ToolAnnotations
    handler: Callable[[ServeContext, Any], Started | dict[str, Any]]

    def input_schema(self) -> dict[str, Any]:
        schema = self.arguments.model_json_schema()
        for name, model in (("intent", IntentDocument), ("inputs", DispatchInputs)):
            if name in schema.get("properties", {}):
                nested = model.model_json_schema()
                schema.setdefault("$defs", {}).update(nested.pop("$defs", {}))
                schema["properties"][name] = nested
        return schema

    def output_schema(self) -> dict[str, Any]:
        return output_schema(*self.answers)

    def parse(self, arguments: dict[str, Any] | None) -> Any:
        return validate(self.arguments, arguments or {}, lambda field, message: ToolFailure(
            f"invalid arguments: {field}: {message}"), root="(arguments)")


def _hints(*, read_only: bool, destructive: bool = False, idempotent: bool = False,
           open_world: bool = False) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=idempotent,
                           open_world_hint=open_world)


# What a job's result or its cancel answers: the envelope of whichever tool started it, or its handle.
EVERY_JOB_ANSWER: tuple[type[Answer], ...] = (Delegation, Delivered, DispatchFailed, Autopilot, SettledWithoutAnswer,
                                              Handle)
_WAIT = f"answers within wait_seconds (default {DEFAULT_WAIT_S:g}, at most {MAX_WAIT_S:g})"
TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("autobot_delegate",
             "Delegate one bounded task (the autobot intent: intent, project_root, target_paths, payload) to a "
             f"Hermes sub-agent; {_WAIT} with the autobot envelope, else returns a job handle.",
             DelegateArgs, (Delegation, SettledWithoutAnswer, Handle),
             _hints(read_only=False, destructive=True, open_world=True), start_delegation),
    ToolSpec("delegation_status", "Where a job stands (running or settled), without waiting.",
             JobArgs, (JobView,), _hints(read_only=True, idempotent=True), delegation_status),
    ToolSpec("delegation_result",
             "A job's envelope once settled; waits up to wait_seconds (default 0) and otherwise returns the handle.",
             ResultArgs, EVERY_JOB_ANSWER, _hints(read_only=True, idempotent=True), delegation_result),
    ToolSpec("delegation_cancel",
             "Stop a running delegation, dispatch or auto-pilot run: its Hermes trees are killed and their runs "
             "ledgered cancelled; an auto-pilot run starts no step after it.",
             JobArgs, EVERY_JOB_ANSWER, _hints(read_only=False, destructive=True, idempotent=True),
             delegation_cancel),
    ToolSpec("autobot_enqueue", "Validate an autobot intent and queue it for a later drain.",
             EnqueueArgs, (Queued, Delegation), _hints(read_only=False), autobot_enqueue),
    ToolSpec("queue_status", f"The autobot queue's counts by state and its first max_items items (default "
                             f"{DEFAULT_QUEUE_ITEMS:g}, at most {MAX_LISTED:g}; pending first).",
             QueueArgs, (QueueState,), _hints(read_only=True, idempotent=True), queue_status),
    ToolSpec("agent_dispatch",
             "Deliver a task to a named agent (agent-dispatch inputs: target, task_source, context, reference_id); "
             f"{_WAIT} with the delivered/error envelope, else returns a job handle.",
             DispatchArgs, (Delivered, DispatchFailed, SettledWithoutAnswer, Handle),
             _hints(read_only=False, open_world=True), start_dispatch),
    ToolSpec("autopilot_check",
             f"Validate an auto-pilot plan file and show which agent each sub-task gets (modes: "
             f"{', '.join([*MODES, *ALIASES])}; bands: {', '.join(BAND_NAMES)}). Spawns nothing.",
             PlanArgs, (PlanChecked,), _hints(read_only=True, idempotent=True), autopilot_check),
    ToolSpec("autopilot_run",
             "Run an auto-pilot plan file; returns a job handle (or the envelope if it settles within wait_seconds, "
             "default 0).",
             RunPlanArgs, (Autopilot, SettledWithoutAnswer, Handle), _hints(read_only=False, destructive=True, open_world=True),
             start_autopilot),
    ToolSpec("ledger_summary", f"Totals of the cost ledger, whole, and by {DIMENSIONS_TEXT}: "
                               f"max_groups groups of each (the newest days, else the most calls; default "
                               f"{DEFAULT_MAX_GROUPS:g}); its newest max_failures failures and unsettled runs "
                               f"(default {DEFAULT_MAX_FAILURES:g}). Each at most {MAX_LISTED:g}.",
             SummaryArgs, (LedgerTotals,), _hints(read_only=True, idempotent=True), ledger_summary),
)
TOOLS_BY_NAME = {spec.name: spec for spec in TOOLS}
