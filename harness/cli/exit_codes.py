"""The one table of `mafiabot-harness`'s exit codes: every status a command ends in, and the code it exits with.

Invariants:
- A code means one thing in every command (EXIT_TABLE: code, name, one-line meaning, the statuses it
  covers). Domain code never decides a code: it returns a status (an envelope's outcome, a run's
  status, a doctor check) or raises a `HarnessError`; only `harness.cli` looks the status up here.
- Every status a command can end in is in the table exactly once (`code_for` raises `KeyError` for
  one that is not: a bug, caught by the tests that enumerate the domains' statuses).
- Where a seed fixes a code, the row keeps it and says so (`seed`): autobot's "rejects malformed →
  exit 2" (the autobot skill's Phase 2). argparse's own usage error is 2 too, so a bad flag and a bad file
  are one code. Auto-pilot's 3 (escalate) and 4 (refused) are the codes host agents already branch on
  (docs/autopilot.md); the body's failures, which only a person reads, moved to 5-10 to make room.
- The `--help` epilog of every command is rendered from EXIT_TABLE (`epilog`), and the README's
  table is held equal to `markdown_table()` by a test, so neither can drift from what the commands return.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from harness.errors import (
    BodyDied,
    BodyNotFound,
    BodyTimeout,
    ConfigError,
    FieldError,
    HarnessError,
    ProtocolViolation,
    RpcError,
    ToolError,
)
from harness.strict_json import InputRejected


class ExitCode(IntEnum):
    OK = 0
    NOT_DONE = 1
    INVALID_INPUT = 2
    ESCALATE = 3
    REFUSED = 4
    BODY_NOT_FOUND = 5
    BODY_DIED = 6
    BODY_TIMEOUT = 7
    BODY_RPC_ERROR = 8
    BODY_TOOL_ERROR = 9
    BODY_PROTOCOL_VIOLATION = 10
    CANNOT_RUN = 11
    # sysexits.h's EX_SOFTWARE: the conventional code of a program's own bug.
    INTERNAL_ERROR = 70
    # 128 + the signal, as a shell reports a process the signal ended: SIGHUP, SIGINT (Ctrl-C), SIGTERM.
    HUNG_UP = 129
    INTERRUPTED = 130
    TERMINATED = 143


@dataclass(frozen=True)
class ExitRow:
    code: ExitCode
    meaning: str
    statuses: tuple[str, ...]
    seed: str | None = None


# Statuses are spelled `command:status` for what a command's result says, `error:Class` for what a layer raised.
EXIT_TABLE: tuple[ExitRow, ...] = (
    ExitRow(ExitCode.OK, "done as asked",
            ("autobot:ok", "dispatch:delivered", "autopilot:completed", "autopilot:valid", "doctor:passed",
             "ledger:whole", "replay:passed", "record:client_ok", "drain:all_ok", "done")),
    ExitRow(ExitCode.NOT_DONE, "the command ran and its result says it did not succeed (see stdout)",
            ("autobot:degraded", "dispatch:error", "autopilot:partial", "autopilot:failed", "autopilot:stopped",
             "autopilot:no-convergence-possible", "doctor:check_failed", "ledger:damaged_line", "ledger:unsettled_run",
             "unmount:soul_not_restored",
             "replay:transcript_failed", "record:client_failed", "drain:item_not_ok")),
    ExitRow(ExitCode.INVALID_INPUT, "an option, input file or configuration is unusable; nothing was run",
            ("usage", "autobot:invalid_intent", "dispatch:invalid_input", "autopilot:invalid", "error:ConfigError",
             "error:InputRejected", "error:FieldError"),
            seed="autobot: a malformed intent exits 2"),
    ExitRow(ExitCode.ESCALATE, "auto-pilot: a human is needed (the envelope's escalation says why)",
            ("autopilot:escalate",)),
    ExitRow(ExitCode.REFUSED, "auto-pilot: the run did not start (the envelope's reason says why)",
            ("autopilot:refused",)),
    ExitRow(ExitCode.BODY_NOT_FOUND, "the body executable (or a fixture it needs) does not exist",
            ("error:BodyNotFound",)),
    ExitRow(ExitCode.BODY_DIED, "the body exited while a reply was awaited", ("error:BodyDied",)),
    ExitRow(ExitCode.BODY_TIMEOUT, "a bounded wait on the body ran out", ("error:BodyTimeout",)),
    ExitRow(ExitCode.BODY_RPC_ERROR, "the body answered with a JSON-RPC error", ("error:RpcError",)),
    ExitRow(ExitCode.BODY_TOOL_ERROR, "the body refused the tool call (isError)", ("error:ToolError",)),
    ExitRow(ExitCode.BODY_PROTOCOL_VIOLATION, "the body wrote something that is not usable JSON-RPC",
            ("error:ProtocolViolation",)),
    ExitRow(ExitCode.CANNOT_RUN, "the harness could not do its own part (a state file, lock, ledger or client)",
            ("error:HarnessError",)),
    ExitRow(ExitCode.INTERNAL_ERROR, "a bug in the harness: the one-line message says where; please report it",
            ("internal_error",)),
    ExitRow(ExitCode.HUNG_UP, "its terminal hung up (SIGHUP)", ("hung_up",)),
    ExitRow(ExitCode.INTERRUPTED, "interrupted (Ctrl-C); a body it had started was shut down", ("interrupted",)),
    ExitRow(ExitCode.TERMINATED, "terminated (SIGTERM)", ("terminated",)),
)

_BY_STATUS: dict[str, ExitCode] = {status: row.code for row in EXIT_TABLE for status in row.statuses}

# Most specific first: the first class an error is an instance of names its status.
_ERROR_STATUSES: tuple[type[HarnessError], ...] = (
    ConfigError, InputRejected, FieldError, BodyNotFound, BodyDied, BodyTimeout, RpcError, ToolError,
    ProtocolViolation, HarnessError)


def code_for(status: str) -> ExitCode:
    """The exit code of a status in EXIT_TABLE; KeyError for a status the table does not hold."""
    return _BY_STATUS[status]


def error_status(error: HarnessError) -> str:
    """The `error:Class` status of a raised error: its most specific class that the table names."""
    cls = next(c for c in _ERROR_STATUSES if isinstance(error, c))
    return f"error:{cls.__name__}"


def epilog() -> str:
    """The exit-code table as plain text, for the `--help` of every command."""
    width = max(len(row.code.name) for row in EXIT_TABLE)
    lines = ["exit codes (the same in every command):"]
    for row in EXIT_TABLE:
        lines.append(f"  {row.code.value:>3}  {row.code.name.lower():<{width}}  {row.meaning}")
        if row.seed:
            lines.append(f"  {'':>3}  {'':<{width}}  (kept from the seed: {row.seed})")
    return "\n".join(lines)


def markdown_table() -> str:
    """The exit-code table as the README shows it (tests/python/test_cli_edge.py holds the two equal)."""
    lines = ["| code | name | meaning | statuses |", "| --- | --- | --- | --- |"]
    for row in EXIT_TABLE:
        seed = f" (kept from the seed: {row.seed})" if row.seed else ""
        statuses = ", ".join(f"`{s}`" for s in row.statuses)
        lines.append(f"| {row.code.value} | `{row.code.name.lower()}` | {row.meaning}{seed} | {statuses} |")
    return "\n".join(lines)
