"""What `serve`'s tools answer, as pydantic models: each tool's outputSchema is generated from them.

The models state what a host may rely on: the fields every such answer carries (required), their types, and the
words a status takes; an answer may carry more (the seeds' envelopes grow), so every model allows extra fields.
The models are the schemas' only source; the handlers still build plain dictionaries (the seeds' envelopes), and
the test of every tool's answer against its advertised schema (tests/python/delegation/test_serve.py) keeps the
two in step.

Invariants:
- A schema is one JSON object with `type: object` at the top and no `$ref` (each model's definition is written
  in place): hosts that map tool schemas onto a simpler dialect (Gemini's function declarations) drop or refuse
  references, as they do `type: [string, null]`; a nullable field is an `anyOf` of one type each (pydantic's
  own spelling of `str | None`).
- An optional field (absent from some answers) is optional here; a field is never made nullable to say so.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from harness.autopilot.report import RunStatus


def _no_default(schema: dict[str, Any]) -> None:
    """An optional field's schema: its type alone (absent means "not said", not a value of its own)."""
    schema.pop("default", None)


# Optional: the answer of a job carries it, an answer refused before any job started does not. The default is
# the model's alone (the models are never filled, only read for their schema).
JobId = Annotated[str, Field(json_schema_extra=_no_default)]


class Answer(BaseModel):
    """Base of the answers: what they must carry, and anything more."""

    model_config = ConfigDict(extra="allow")


class Handle(Answer):
    """A job that did not settle within the caller's bound: come back with its id."""

    status: Literal["pending"]
    job_id: str
    state: Literal["running"]
    tool: str
    created_at: str
    next: str


class Delegation(Answer):
    """autobot's envelope (the seed's fields, then what an operator needs); `job_id` when a job ran it."""

    status: Literal["ok", "degraded"]
    degraded_reason: str | None
    intent_id: str
    duration_ms: int
    response_chars: int
    est_prompt_tokens: int
    est_response_tokens: int
    model: str | None
    hermes_profile: str | None
    wrote_to: str | None
    ledger_entry: str | None
    retryable: bool
    job_id: JobId = ""


class Delivered(Answer):
    """agent-dispatch's envelope of a delivered task."""

    status: Literal["delivered"]
    timestamp: str
    transport: dict[str, Any]
    transport_message_id: str | None
    job_id: JobId = ""


class DispatchFailed(Answer):
    """agent-dispatch's envelope of a task not delivered: `code` says why, `retryable` whether to try again."""

    status: Literal["error"]
    timestamp: str
    code: str
    message: str
    retryable: bool
    details: dict[str, Any]
    job_id: JobId = ""


class Autopilot(Answer):
    """auto-pilot's envelope: the run's status (report.RunStatus) and every child."""

    autopilot: int
    status: Annotated[str, Field(json_schema_extra={"enum": [status.value for status in RunStatus]})]
    children: list[dict[str, Any]]
    job_id: JobId = ""


class SettledWithoutAnswer(Answer):
    """A job that settled without its work's own envelope (`harness.serve.jobs`): the work failed
    (`harness_error`), or the server that ran it stopped first (the ledger's settlement, or `runner_gone`)."""

    status: Literal["ok", "degraded"]
    degraded_reason: str | None
    detail: str
    job_id: JobId = ""


class JobView(Answer):
    """Where a job stands, without waiting."""

    job_id: str
    tool: str
    state: Literal["running", "settled"]
    created_at: str
    settled_at: str | None
    status: str | None
    intent_id: str | None
    served_here: bool


class Queued(Answer):
    """An intent queued for a later drain."""

    status: Literal["queued"]
    item_id: str
    intent_hash: str
    queue: str


class QueueState(Answer):
    """How many items are in each state, and the first `max_items` of them (`items_total` in all)."""

    queue: str
    counts: dict[str, int]
    items: list[dict[str, Any]]
    items_total: int


class LedgerTotals(Answer):
    """The cost ledger's totals, whole and by each dimension of `report.DIMENSIONS` (`max_groups` groups of each,
    `by_groups_total` in all), and its newest `max_failures` failures (`failures_total` in all) and unsettled
    runs (`runs.open_total`...)."""

    ledger: str
    by_groups_total: dict[str, int]
    failures: list[dict[str, Any]]
    failures_total: int


class PlanChecked(Answer):
    """A plan as read and the agent each sub-task would get; nothing ran."""

    autopilot: int
    status: Literal["valid"]
    goal: str
    mode: str
    requested_mode: str
    width: int
    band: str
    registry: str
    sentinel: dict[str, Any]
    selection: list[dict[str, Any]]


def output_schema(*answers: type[Answer]) -> dict[str, Any]:
    """The JSON Schema of an answer that is one of `answers`: one object, every definition in place."""
    if len(answers) == 1:
        schema = answers[0].model_json_schema()
    else:
        adapter: TypeAdapter[Any] = TypeAdapter(_union(answers))
        schema = {"type": "object", **adapter.json_schema()}
    definitions = schema.pop("$defs", {})
    inlined: dict[str, Any] = _inline(schema, definitions)
    return inlined


def _union(answers: tuple[type[Answer], ...]) -> Any:
    union: Any = answers[0]
    for answer in answers[1:]:
        union = union | answer
    return union


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    """`node` with each local `$ref` replaced by its definition (the models hold no cycle)."""
    if isinstance(node, dict):
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/"):
            return _inline(definitions[reference.removeprefix("#/$defs/")], definitions)
        return {key: _inline(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    return node
