"""The transport's typed seam: what a caller asks Hermes to run, and what it gets back.

Invariants:
- A `RunRequest` is validated when built: a bad field raises `InvalidRunRequest` naming it, so a
  request that exists can always be turned into a command line.
- A `RunOutcome` is a value, never an exception: every Hermes failure is `ok=False` with one of the
  stable reason strings below and a human `detail`. `retryable` is true only for transient causes.
- `Usage.source` says where the figures come from: Hermes's own accounting (`hermes_state_db`,
  `hermes_usage_file`), an `estimate` (characters / 4, never presented as real), or `not_run`
  (refused before anything was spawned: nothing was spent).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, Protocol

from harness.errors import FieldError
from harness.hermes.locate import is_profile_name

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
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
Mode = Literal["chat", "oneshot"]


class InvalidRunRequest(FieldError):
    """A `RunRequest` field is unusable."""


@dataclass(frozen=True)
class RunRequest:
    """One Hermes run.

    `mode="chat"` is `hermes chat -Q -q PROMPT --source tool` (exit 1 on provider failure; usage from
    the home's state.db); `mode="oneshot"` is `hermes -z PROMPT --usage-file F` (usage from that
    file). `profile=None` means Hermes's root home (`--profile default`). `provider`/`model` left
    out mean the profile's configured ones. `env` is added to the child's environment (a parent id
    or a depth marker, for instance); `parent_id` is carried through to the outcome for ledgers.
    """

    prompt: str
    profile: str | None = None
    provider: str | None = None
    model: str | None = None
    session: str | None = None
    toolsets: tuple[str, ...] | None = None
    max_turns: int | None = None
    timeout_s: float = 300.0
    mode: Mode = "chat"
    env: Mapping[str, str] = field(default_factory=dict)
    parent_id: str | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.prompt, str) or not self.prompt.strip():
            raise InvalidRunRequest("prompt", "must be a non-empty string")
        if "\0" in self.prompt:
            raise InvalidRunRequest("prompt", "contains a NUL character, which no command line can carry")
        if self.profile is not None and not is_profile_name(self.profile):
            raise InvalidRunRequest("profile", f"{self.profile!r} is not a Hermes profile name "
                                               f"(lowercase letters, digits, '_' and '-', at most 64)")
        for name in ("provider", "model", "session"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip()
                                      or any(ch in value for ch in "\n\r\0")):
                raise InvalidRunRequest(name, "must be a non-empty single-line string")
        if self.toolsets is not None and (
                not self.toolsets or not all(isinstance(t, str) and TOOLSET_NAME.match(t) for t in self.toolsets)):
            raise InvalidRunRequest("toolsets", f"must be a non-empty tuple of toolset names, got {self.toolsets!r}")
        if self.max_turns is not None and (isinstance(self.max_turns, bool) or not isinstance(self.max_turns, int)
                                           or self.max_turns < 1):
            raise InvalidRunRequest("max_turns", "must be a positive integer")
        if (isinstance(self.timeout_s, bool) or not isinstance(self.timeout_s, (int, float))
                or not math.isfinite(self.timeout_s) or self.timeout_s <= 0):
            raise InvalidRunRequest("timeout_s", f"must be a positive number of seconds, got {self.timeout_s!r}")
        if self.mode not in ("chat", "oneshot"):
            raise InvalidRunRequest("mode", f"must be 'chat' or 'oneshot', got {self.mode!r}")
        if self.mode == "oneshot" and self.session is not None:
            raise InvalidRunRequest("session", "Hermes's one-shot mode cannot continue a session; use mode='chat'")
        if self.mode == "oneshot" and self.max_turns is not None:
            raise InvalidRunRequest("max_turns", "Hermes's one-shot mode has no turn cap; use mode='chat'")
        if self.mode == "oneshot" and self.provider is not None and self.model is None:
            raise InvalidRunRequest("model", "Hermes's one-shot mode needs a model whenever a provider is given")
        for key, value in self.env.items():
            if not (isinstance(key, str) and ENV_NAME.match(key)) or not isinstance(value, str) or "\0" in value:
                raise InvalidRunRequest("env", f"{key!r} is not a usable environment variable")
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))


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
