"""The harness's one exception hierarchy.

Every failure the harness can report is a `HarnessError`; callers catch that
(or a subclass) and nothing broader. Messages are written for a human at a
terminal: they say what was awaited, what came back, and where to look next.
Only `harness.cli` maps these to exit codes.
"""

from __future__ import annotations

from typing import Any


class HarnessError(Exception):
    """Base class of every error the harness raises on purpose."""


class BodyNotFound(HarnessError):
    """The body executable (or a fixture it needs) does not exist."""


class BodyDied(HarnessError):
    """The body process exited while a request was outstanding (or before one was sent)."""

    def __init__(self, exit_code: int | None, stderr_tail: str, awaiting: str, error_line: str | None = None) -> None:
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        self.awaiting = awaiting
        # The body's own `mafiabot: error: ...` line, wherever it stood in its stderr (a usage text after it pushes
        # it out of the tail), or None when it wrote none.
        self.error_line = error_line
        tail = stderr_tail.strip() or "(stderr was empty)"
        super().__init__(
            f"the body exited with {_describe_exit(exit_code)} while awaiting {awaiting}; "
            f"last lines of its stderr:\n{tail}"
        )


class BodyTimeout(HarnessError):
    """A bounded wait on the body ran out."""

    def __init__(self, awaiting: str, bound_seconds: float) -> None:
        self.awaiting = awaiting
        self.bound_seconds = bound_seconds
        super().__init__(f"timed out after {bound_seconds:g} s waiting for {awaiting}")


class ProtocolViolation(HarnessError):
    """The body wrote something on stdout that is not a JSON-RPC message we can use."""


class RpcError(HarnessError):
    """A JSON-RPC error response; `.code` is what tests assert on, not the message text."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        self.code = code
        self.message = message
        self.data = data
        super().__init__(f"JSON-RPC error {code}: {message}")


class ToolError(HarnessError):
    """A `tools/call` result with `isError: true`; `.text` is the body's explanation."""

    def __init__(self, text: str) -> None:
        self.text = text
        super().__init__(f"tool error: {text}")


class FieldError(HarnessError):
    """Base of the input errors of each layer (an intent, a plan, a run request): `.field` names the bad field,
    `.message` says why."""

    def __init__(self, field_name: str, message: str) -> None:
        self.field = field_name
        self.message = message
        super().__init__(f"{field_name}: {message}")


class ConfigError(HarnessError):
    """A session file or command-line input the harness cannot use."""


def _describe_exit(exit_code: int | None) -> str:
    if exit_code is None:
        return "an unknown status"
    if exit_code < 0:
        return f"signal {-exit_code}"
    return f"exit code {exit_code}"
