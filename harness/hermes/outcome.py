"""The transport's typed seam: what a caller asks Hermes to run, and what it gets back.

Invariants:
- A `RunRequest` is a strict model, validated when built: a bad field raises `InvalidRunRequest`
  naming it, so a request that exists can always be turned into a command line.
- A `RunOutcome` is a value, never an exception: every Hermes failure is `ok=False` with one of the
  stable reason strings below and a human `detail`. `retryable` is true only for transient causes.
- `Usage.source` says where the figures come from: Hermes's own accounting (`hermes_state_db`,
  `hermes_usage_file`), an `estimate` (characters / 4, never presented as real), or `not_run`
  (refused before anything was spawned: nothing was spent).
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Literal, Protocol

from pydantic import Field, field_validator, model_validator

from harness.errors import FieldError
from harness.hermes.locate import ProfileName
from harness.typed_inputs import BuiltModel, EnvName, EnvValue, Items, block, line, matching

# -- reasons (stable strings: ledgers, queues and callers match on them) ----------------------
HERMES_NOT_FOUND = "hermes_not_found"
PROFILE_NOT_FOUND = "profile_not_found"
SESSION_NOT_FOUND = "session_not_found"
AUTH_FAILED = "auth_failed"
EMPTY_OUTPUT = "empty_output"
PROVIDER_ERROR = "provider_error"
PROVIDER_FALLBACK = "provider_fallback"
PROMPT_TOO_LARGE = "prompt_too_large"
OUTPUT_TOO_LARGE = "output_too_large"
NO_PROVIDER_CONFIGURED = "no_provider_configured"
# The command running the transport got SIGTERM, SIGINT or SIGHUP: Hermes was stopped, its usage kept.
CANCELLED = "cancelled"
# The run's start could not be ledgered, so it was not started (a run nobody can account for never runs).
LEDGER_UNWRITABLE = "ledger_unwritable"
# Not produced by the transport: callers refuse to start a run from inside a delegated one.
NESTED_DELEGATION = "nested_delegation"

TIMEOUT_PATTERN = re.compile(r"^hermes_timeout_[0-9.]+s$")
NO_KEY_PATTERN = re.compile(r"^no_[a-z0-9_-]+_key$")
TRANSIENT_REASONS = frozenset({PROVIDER_ERROR})


def no_key(provider: str) -> str:
    return f"no_{provider.strip().lower() or 'provider'}_key"


def timed_out(seconds: float) -> str:
    return f"hermes_timeout_{seconds:g}s"


def exited(code: int) -> str:
    return f"hermes_exit_{code}"


def is_transient(reason: str | None) -> bool:
    return reason is not None and (reason in TRANSIENT_REASONS or bool(TIMEOUT_PATTERN.match(reason)))


def is_auth(reason: str | None) -> bool:
    return reason is not None and (reason == AUTH_FAILED or bool(NO_KEY_PATTERN.match(reason)))


# -- the request ------------------------------------------------------------------------------
TOOLSET_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
# Upstream fields (an intent's, a registry's) are at most 200 characters: this bounds only a caller's mistake.
MAX_ROUTE_CHARS = 200
Mode = Literal["chat", "oneshot"]
RouteText = Annotated[str, line(MAX_ROUTE_CHARS, strip=True)]
ToolsetName = Annotated[str, matching(TOOLSET_NAME, "a toolset name (letters, digits and '_.:-', at most 64)")]


class InvalidRunRequest(FieldError):
    """A `RunRequest` field is unusable."""


class RunRequest(BuiltModel):
    """One Hermes run.

    `mode="chat"` is `hermes chat -Q -q PROMPT --source tool` (exit 1 on provider failure; usage from
    the home's state.db); `mode="oneshot"` is `hermes -z PROMPT --usage-file F` (usage from that
    file). `profile=None` means Hermes's root home (`--profile default`). `provider`/`model` left
    out mean the profile's configured ones. `env` is added to the child's environment (a parent id
    or a depth marker, for instance); `parent_id` is carried through to the outcome for ledgers.
    A bad field raises `InvalidRunRequest` naming it (`typed_inputs.BuiltModel`), never quoting it.
    """

    # No bound of its own: a prompt too large for a command line is the transport's `prompt_too_large` outcome.
    prompt: Annotated[str, block(sys.maxsize)]
    profile: ProfileName | None = None
    provider: RouteText | None = None
    model: RouteText | None = None
    session: RouteText | None = None
    toolsets: Annotated[Items[ToolsetName], Field(min_length=1)] | None = None
    max_turns: Annotated[int, Field(ge=1)] | None = None
    timeout_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 300.0
    mode: Mode = "chat"
    env: Mapping[EnvName, EnvValue] = Field(default_factory=dict, validate_default=True)
    parent_id: str | None = None
    label: str = ""

    FIELD_ERROR = InvalidRunRequest

    @field_validator("env", mode="after")
    @classmethod
    def _frozen_env(cls, env: Mapping[str, str]) -> Mapping[str, str]:
        return MappingProxyType(dict(env))

    @model_validator(mode="after")
    def _oneshot_rules(self) -> RunRequest:
        if self.mode == "oneshot" and self.session is not None:
            raise InvalidRunRequest("session", "Hermes's one-shot mode cannot continue a session; use mode='chat'")
        if self.mode == "oneshot" and self.max_turns is not None:
            raise InvalidRunRequest("max_turns", "Hermes's one-shot mode has no turn cap; use mode='chat'")
        if self.mode == "oneshot" and self.provider is not None and self.model is None:
            raise InvalidRunRequest("model", "Hermes's one-shot mode needs a model whenever a provider is given")
        return self


# -- the outcome ------------------------------------------------------------------------------
UsageSource = Literal["hermes_state_db", "hermes_usage_file", "estimate", "not_run"]


def estimate_tokens(chars: int) -> int:
    """The usual rough figure (characters / 4), used only where Hermes gives none."""
    return math.ceil(chars / 4)


@dataclass(frozen=True)
class Usage:
    """Tokens and cost of one run; `source` says whether they are Hermes's figures or an estimate."""

    source: UsageSource
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    api_calls: int | None = None
    cost_usd: float | None = None
    cost_status: str | None = None

    @property
    def estimated(self) -> bool:
        return self.source == "estimate"

    @property
    def total_tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    @classmethod
    def estimate(cls, prompt_chars: int, response_chars: int) -> Usage:
        return cls(source="estimate", input_tokens=estimate_tokens(prompt_chars),
                   output_tokens=estimate_tokens(response_chars))

    @classmethod
    def not_run(cls) -> Usage:
        return cls(source="not_run", input_tokens=0, output_tokens=0, api_calls=0, cost_usd=0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "total_tokens": self.total_tokens, "cache_read_tokens": self.cache_read_tokens,
                "cache_write_tokens": self.cache_write_tokens, "reasoning_tokens": self.reasoning_tokens,
                "api_calls": self.api_calls, "cost_usd": self.cost_usd, "cost_status": self.cost_status}


@dataclass(frozen=True)
class RunOutcome:
    """What one run came to. `text` is Hermes's answer (stdout, stripped) when `ok`."""

    request: RunRequest
    ok: bool
    reason: str | None
    detail: str
    text: str
    exit_code: int | None
    started_at: float
    duration_ms: int
    usage: Usage
    session_id: str | None = None
    answered_provider: str | None = None
    answered_model: str | None = None
    stderr_tail: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def retryable(self) -> bool:
        return not self.ok and is_transient(self.reason)

    @property
    def prompt_chars(self) -> int:
        return len(self.request.prompt)

    def to_dict(self) -> dict[str, Any]:
        """The outcome as ledgers and envelopes show it (the prompt and answer themselves left out)."""
        return {"ok": self.ok, "reason": self.reason, "detail": self.detail, "retryable": self.retryable,
                "exit_code": self.exit_code, "duration_ms": self.duration_ms, "session_id": self.session_id,
                "profile": self.request.profile, "provider": self.request.provider, "model": self.request.model,
                "answered_by": {"provider": self.answered_provider, "model": self.answered_model},
                "prompt_chars": self.prompt_chars, "response_chars": len(self.text),
                "usage": self.usage.to_dict(), "warnings": list(self.warnings)}


class Transport(Protocol):
    """Runs one request to completion (bounded by its timeout) and says what came of it.

    Above: autobot, dispatch, and the orchestration kernel. Below: a Hermes process. Implementations
    never raise for a Hermes failure; they return `RunOutcome(ok=False, reason=...)`. `journal` (a
    `transport.Journal`) is told of the run before the spawn, so a run is ledgered even when its
    caller dies.
    """

    def run(self, request: RunRequest, journal: Any = None) -> RunOutcome: ...
