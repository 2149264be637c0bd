"""The one table of `mafiabot-harness`'s exit codes: every status a command ends in, and the code it exits with.

Invariants:
- A code means one thing in every command (EXIT_TABLE: code, name, one-line meaning, the statuses it
  covers). Domain code never decides a code: it returns a status (an envelope's outcome, a run's
  status, a doctor check) or raises a `HarnessError`; only `harness.cli` looks the status up here.
- Every status a command can end in is a `Status` member, and `code_for` is an exhaustive `match` on
  them: a status without a code fails mypy, not a user. The domains' own status enums (`RunStatus`,
  `EnvelopeStatus`, `DispatchStatus`) reach a `Status` through exhaustive matches too, so a status a
  domain adds fails mypy until it has one. A row's statuses are derived from `code_for`.
- Where a seed fixes a code, the row keeps it and says so (`seed`): autobot's "rejects malformed →
  exit 2" (the autobot skill's Phase 2). argparse's own usage error is 2 too, so a bad flag and a bad file
  are one code. Auto-pilot's 3 (escalate) and 4 (refused) are the codes host agents already branch on
  (docs/autopilot.md); the body's failures, which only a person reads, moved to 5-10 to make room.
- The `--help` epilog of every command is rendered from EXIT_TABLE (`epilog`), and the README's
  table is held equal to `markdown_table()` by a test, so neither can drift from what the commands return.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import assert_never

from harness.autobot.delegate import EnvelopeStatus
from harness.autopilot.report import RunStatus
from harness.dispatch.dispatch import DispatchStatus
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


class Status(StrEnum):
    """Every status a command can end in, spelled `command:status` for what a command's result says and
    `error:Class` for what a layer raised; the text is what the table shows. Declared in the table's order."""

    AUTOBOT_OK = f"autobot:{EnvelopeStatus.OK}"
    DISPATCH_DELIVERED = f"dispatch:{DispatchStatus.DELIVERED}"
    AUTOPILOT_COMPLETED = f"autopilot:{RunStatus.COMPLETED}"
    AUTOPILOT_VALID = "autopilot:valid"
    DOCTOR_PASSED = "doctor:passed"
    LEDGER_WHOLE = "ledger:whole"
    REPLAY_PASSED = "replay:passed"
    RECORD_CLIENT_OK = "record:client_ok"
    DRAIN_ALL_OK = "drain:all_ok"
    DONE = "done"

    AUTOBOT_DEGRADED = f"autobot:{EnvelopeStatus.DEGRADED}"
    DISPATCH_ERROR = f"dispatch:{DispatchStatus.ERROR}"
    AUTOPILOT_PARTIAL = f"autopilot:{RunStatus.PARTIAL}"
    AUTOPILOT_FAILED = f"autopilot:{RunStatus.FAILED}"
    AUTOPILOT_STOPPED = f"autopilot:{RunStatus.STOPPED}"
    AUTOPILOT_NO_CONVERGENCE_POSSIBLE = f"autopilot:{RunStatus.NO_CONVERGENCE_POSSIBLE}"
    DOCTOR_CHECK_FAILED = "doctor:check_failed"
    LEDGER_DAMAGED_LINE = "ledger:damaged_line"
    LEDGER_UNSETTLED_RUN = "ledger:unsettled_run"
    UNMOUNT_SOUL_NOT_RESTORED = "unmount:soul_not_restored"
    REPLAY_TRANSCRIPT_FAILED = "replay:transcript_failed"
    RECORD_CLIENT_FAILED = "record:client_failed"
    DRAIN_ITEM_NOT_OK = "drain:item_not_ok"

    USAGE = "usage"
    AUTOBOT_INVALID_INTENT = "autobot:invalid_intent"
    DISPATCH_INVALID_INPUT = f"dispatch:{DispatchStatus.INVALID_INPUT}"
    AUTOPILOT_INVALID = "autopilot:invalid"
    CONFIG_ERROR = f"error:{ConfigError.__name__}"
    INPUT_REJECTED = f"error:{InputRejected.__name__}"
    FIELD_ERROR = f"error:{FieldError.__name__}"

    AUTOPILOT_ESCALATE = f"autopilot:{RunStatus.ESCALATE}"
    AUTOPILOT_REFUSED = f"autopilot:{RunStatus.REFUSED}"

    BODY_NOT_FOUND = f"error:{BodyNotFound.__name__}"
    BODY_DIED = f"error:{BodyDied.__name__}"
    BODY_TIMEOUT = f"error:{BodyTimeout.__name__}"
    RPC_ERROR = f"error:{RpcError.__name__}"
    TOOL_ERROR = f"error:{ToolError.__name__}"
    PROTOCOL_VIOLATION = f"error:{ProtocolViolation.__name__}"
    HARNESS_ERROR = f"error:{HarnessError.__name__}"

    INTERNAL_ERROR = "internal_error"
    HUNG_UP = "hung_up"
    INTERRUPTED = "interrupted"
    TERMINATED = "terminated"


def code_for(status: Status) -> ExitCode:
    """The exit code of a status: the one place a status becomes a code (mypy holds the match total)."""
    match status:
        case (Status.AUTOBOT_OK | Status.DISPATCH_DELIVERED | Status.AUTOPILOT_COMPLETED | Status.AUTOPILOT_VALID
              | Status.DOCTOR_PASSED | Status.LEDGER_WHOLE | Status.REPLAY_PASSED | Status.RECORD_CLIENT_OK
              | Status.DRAIN_ALL_OK | Status.DONE):
            return ExitCode.OK
        case (Status.AUTOBOT_DEGRADED | Status.DISPATCH_ERROR | Status.AUTOPILOT_PARTIAL | Status.AUTOPILOT_FAILED
              | Status.AUTOPILOT_STOPPED | Status.AUTOPILOT_NO_CONVERGENCE_POSSIBLE | Status.DOCTOR_CHECK_FAILED
              | Status.LEDGER_DAMAGED_LINE | Status.LEDGER_UNSETTLED_RUN | Status.UNMOUNT_SOUL_NOT_RESTORED
              | Status.REPLAY_TRANSCRIPT_FAILED | Status.RECORD_CLIENT_FAILED | Status.DRAIN_ITEM_NOT_OK):
            return ExitCode.NOT_DONE
        case (Status.USAGE | Status.AUTOBOT_INVALID_INTENT | Status.DISPATCH_INVALID_INPUT | Status.AUTOPILOT_INVALID
              | Status.CONFIG_ERROR | Status.INPUT_REJECTED | Status.FIELD_ERROR):
            return ExitCode.INVALID_INPUT
        case Status.AUTOPILOT_ESCALATE:
            return ExitCode.ESCALATE
        case Status.AUTOPILOT_REFUSED:
            return ExitCode.REFUSED
        case Status.BODY_NOT_FOUND:
            return ExitCode.BODY_NOT_FOUND
        case Status.BODY_DIED:
            return ExitCode.BODY_DIED
        case Status.BODY_TIMEOUT:
            return ExitCode.BODY_TIMEOUT
        case Status.RPC_ERROR:
            return ExitCode.BODY_RPC_ERROR
        case Status.TOOL_ERROR:
            return ExitCode.BODY_TOOL_ERROR
        case Status.PROTOCOL_VIOLATION:
            return ExitCode.BODY_PROTOCOL_VIOLATION
        case Status.HARNESS_ERROR:
            return ExitCode.CANNOT_RUN
        case Status.INTERNAL_ERROR:
            return ExitCode.INTERNAL_ERROR
        case Status.HUNG_UP:
            return ExitCode.HUNG_UP
        case Status.INTERRUPTED:
            return ExitCode.INTERRUPTED
        case Status.TERMINATED:
            return ExitCode.TERMINATED
        case _:
            assert_never(status)


def autobot_status(status: EnvelopeStatus) -> Status:
    match status:
        case EnvelopeStatus.OK:
            return Status.AUTOBOT_OK
        case EnvelopeStatus.DEGRADED:
            return Status.AUTOBOT_DEGRADED
        case _:
            assert_never(status)


def dispatch_status(status: DispatchStatus) -> Status:
    match status:
        case DispatchStatus.DELIVERED:
            return Status.DISPATCH_DELIVERED
        case DispatchStatus.INVALID_INPUT:
            return Status.DISPATCH_INVALID_INPUT
        case DispatchStatus.ERROR:
            return Status.DISPATCH_ERROR
        case _:
            assert_never(status)


def autopilot_status(status: RunStatus) -> Status:
    match status:
        case RunStatus.COMPLETED:
            return Status.AUTOPILOT_COMPLETED
        case RunStatus.PARTIAL:
            return Status.AUTOPILOT_PARTIAL
        case RunStatus.FAILED:
            return Status.AUTOPILOT_FAILED
        case RunStatus.STOPPED:
            return Status.AUTOPILOT_STOPPED
        case RunStatus.NO_CONVERGENCE_POSSIBLE:
            return Status.AUTOPILOT_NO_CONVERGENCE_POSSIBLE
        case RunStatus.ESCALATE:
            return Status.AUTOPILOT_ESCALATE
        case RunStatus.REFUSED:
            return Status.AUTOPILOT_REFUSED
        case _:
            assert_never(status)


@dataclass(frozen=True)
class ExitRow:
    code: ExitCode
    meaning: str
    seed: str | None = None

    @property
    def statuses(self) -> tuple[Status, ...]:
        """The statuses `code_for` gives this row's code, in Status's order."""
        return tuple(status for status in Status if code_for(status) is self.code)


# One row per code, in code order.
EXIT_TABLE: tuple[ExitRow, ...] = (
    ExitRow(ExitCode.OK, "done as asked"),
    ExitRow(ExitCode.NOT_DONE, "the command ran and its result says it did not succeed (see stdout)"),
    ExitRow(ExitCode.INVALID_INPUT, "an option, input file or configuration is unusable; nothing was run",
            seed="a malformed intent exits 2"),
    ExitRow(ExitCode.ESCALATE, "auto-pilot: a human is needed (the envelope's escalation says why)"),
    ExitRow(ExitCode.REFUSED, "auto-pilot: the run did not start (the envelope's reason says why)"),
    ExitRow(ExitCode.BODY_NOT_FOUND, "the body executable (or a fixture it needs) does not exist"),
    ExitRow(ExitCode.BODY_DIED, "the body exited while a reply was awaited"),
    ExitRow(ExitCode.BODY_TIMEOUT, "a bounded wait on the body ran out"),
    ExitRow(ExitCode.BODY_RPC_ERROR, "the body answered with a JSON-RPC error"),
    ExitRow(ExitCode.BODY_TOOL_ERROR, "the body refused the tool call (isError)"),
    ExitRow(ExitCode.BODY_PROTOCOL_VIOLATION, "the body wrote something that is not usable JSON-RPC"),
    ExitRow(ExitCode.CANNOT_RUN, "the harness could not do its own part (a state file, lock, ledger or client)"),
    ExitRow(ExitCode.INTERNAL_ERROR, "a bug in the harness: the one-line message says where; please report it"),
    ExitRow(ExitCode.HUNG_UP, "its terminal hung up (SIGHUP)"),
    ExitRow(ExitCode.INTERRUPTED, "interrupted (Ctrl-C); a body it had started was shut down"),
    ExitRow(ExitCode.TERMINATED, "terminated (SIGTERM)"),
)

# Most specific first: the first class an error is an instance of names its status.
_ERROR_STATUSES: tuple[tuple[type[HarnessError], Status], ...] = (
    (ConfigError, Status.CONFIG_ERROR), (InputRejected, Status.INPUT_REJECTED), (FieldError, Status.FIELD_ERROR),
    (BodyNotFound, Status.BODY_NOT_FOUND), (BodyDied, Status.BODY_DIED), (BodyTimeout, Status.BODY_TIMEOUT),
    (RpcError, Status.RPC_ERROR), (ToolError, Status.TOOL_ERROR), (ProtocolViolation, Status.PROTOCOL_VIOLATION),
    (HarnessError, Status.HARNESS_ERROR))


def error_status(error: HarnessError) -> Status:
    """The `error:Class` status of a raised error: its most specific class that the table names."""
    return next(status for cls, status in _ERROR_STATUSES if isinstance(error, cls))


def _seed_rule(rule: str) -> str:
    return f"(the autobot seed's rule: {rule})"


def epilog() -> str:
    """The exit-code table as plain text, for the `--help` of every command."""
    width = max(len(row.code.name) for row in EXIT_TABLE)
    lines = ["exit codes (the same in every command):"]
    for row in EXIT_TABLE:
        lines.append(f"  {row.code.value:>3}  {row.code.name.lower():<{width}}  {row.meaning}")
        if row.seed:
            lines.append(f"  {'':>3}  {'':<{width}}  {_seed_rule(row.seed)}")
    return "\n".join(lines)


def markdown_table() -> str:
    """The exit-code table as the README shows it (tests/python/test_cli_edge.py holds the two equal)."""
    lines = ["| code | name | meaning | statuses |", "| --- | --- | --- | --- |"]
    for row in EXIT_TABLE:
        seed = f" {_seed_rule(row.seed)}" if row.seed else ""
        statuses = ", ".join(f"`{s}`" for s in row.statuses)
        lines.append(f"| {row.code.value} | `{row.code.name.lower()}` | {row.meaning}{seed} | {statuses} |")
    return "\n".join(lines)
