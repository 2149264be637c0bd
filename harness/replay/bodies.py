"""Which body a replay or a recording runs: the Ada body, the pass-through stub body, or any command.

Invariants:
- "ada" is the built body with the shipped organ fixture (`harness.body.BodyOptions().argv()`);
  "passthrough" is the checkout's `stubs/passthrough_body.py` run by this very interpreter (it
  needs jsonrpcserver: the harness's `stub-body` extra). Anything else is a command line, split
  the way a POSIX shell would split it.
- `body_argv(kind, options)` applies the same BodyOptions to either known body, so a test can
  start both with the same limits.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from harness import settings
from harness.body import BodyOptions
from harness.errors import ConfigError

PASSTHROUGH_BODY = Path("stubs") / "passthrough_body.py"
KNOWN_BODIES = ("ada", "passthrough")
DEFAULT_BODY = "ada"


@dataclass(frozen=True)
class BodyCommand:
    kind: str | None  # "ada", "passthrough", or None for a command given by hand
    argv: tuple[str, ...]

    def describe(self) -> str:
        return self.kind or shlex.join(self.argv)


def body_argv(kind: str, options: BodyOptions | None = None) -> list[str]:
    """The command line of a known body; raises BodyNotFound when the Ada body is not built."""
    options = options or BodyOptions()
    if kind == "ada":
        return options.argv()
    if kind == "passthrough":
        stub = settings.checkout_file(PASSTHROUGH_BODY)
        if stub is None:
            raise ConfigError(f"the pass-through body is a checkout file: {settings.no_checkout_hint()}")
        if not stub.is_file():
            raise ConfigError(f"the pass-through body {stub} is missing")
        return [sys.executable, *dataclasses.replace(options, body=stub).argv()]
    raise ConfigError(f"unknown body {kind!r} (known: {', '.join(KNOWN_BODIES)})")


def resolve_body(spec: str | None) -> BodyCommand:
    """A --body argument as a command: a known body's name, or a command line."""
    spec = spec or DEFAULT_BODY
    if spec in KNOWN_BODIES:
        return BodyCommand(spec, tuple(body_argv(spec)))
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        raise ConfigError(f"--body {spec!r} is not a command line: {exc}") from None
    if not argv:
        raise ConfigError("--body is empty")
    return BodyCommand(None, tuple(argv))
