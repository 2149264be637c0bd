"""`mafiabot-harness`: the command line of the harness, and the only place exit codes are decided.

`harness.program` is the program: these command groups, and `serve` (the MCP server's launcher) after them.

Each command group lives in its own module with a `register(commands)` function that adds its
subcommands; a subcommand's handler takes `(args, out)` and returns a status of the exit-code table
(`harness.cli.exit_codes.EXIT_TABLE`), never a number. `main` alone turns statuses and the
harness's errors into codes, through that table.

Invariants:
- Results go to stdout, errors to stderr as one line (`mafiabot-harness: error: ...` naming the
  path or field and the cause) with the table's code; OUTPUT_RULE says what `--json` means, and it
  means that in every command that has it.
- An argument that names a file or a folder is typed so (`hermes_options.FILE`, `DIRECTORY`): a value no system
  call would take (settings.PATH_RULE) is a usage error naming the argument, whatever its metavar.
- No traceback reaches a user. A `HarnessError` is an expected failure and gets its status's code; a
  bad option or an argument that is not UTF-8 is a usage error (2, one line). Anything else
  reaching `main` is a bug: one line naming it as an internal error, exit 70. The hostile-input
  tests (tests/python/test_cli_edge.py) drive every subcommand and show none gets there.
- Every subcommand's `--help` ends with the exit-code table and OUTPUT_RULE, rendered from the one
  table when the parser is built (`subcommands` walks the parser, so a new command gets them too).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import NoReturn, TextIO

from harness.cli.exit_codes import ExitCode, Status, code_for, epilog, error_status
from harness.cli.output import PROG, print_error
from harness.errors import HarnessError
from harness.hermes import cancellation
from harness.version import version

# How a command that a cancelling signal stopped exits (harness.hermes.cancellation), as a shell reports it.
CANCELLED_STATUSES = {signal.SIGHUP: Status.HUNG_UP, signal.SIGINT: Status.INTERRUPTED, signal.SIGTERM: Status.TERMINATED}

# Command groups, in the order `--help` lists them; `harness.program` adds `serve` (the MCP server's launcher)
# after them, so the command line never imports the server.
COMMAND_MODULES: tuple[str, ...] = (
    "harness.cli.body_commands",
    "harness.cli.replay_commands",
    "harness.cli.hermes_commands",
    "harness.cli.autobot_commands",
    "harness.cli.dispatch_commands",
    "harness.cli.ledger_commands",
    "harness.cli.autopilot_commands",
    "harness.cli.converge_commands",
)

OUTPUT_RULE = ("output: results on stdout, errors on stderr as one line. With --json, stdout holds only JSON: the\n"
               "result as one JSON document (a command that runs several turns prints one per turn, one per\n"
               "line); errors still go to stderr. Commands whose result is always JSON take --json too.")


class Parser(argparse.ArgumentParser):
    """argparse with its usage errors on one line (the usage itself is what --help is for)."""

    def error(self, message: str) -> NoReturn:
        self.exit(ExitCode.INVALID_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(groups: Sequence[str] = COMMAND_MODULES) -> argparse.ArgumentParser:
    """The parser of the command groups `groups` (module names, each with a `register(commands)`)."""
    parser = Parser(prog=PROG, description="Drive the mafiabot body and the agents around it.",
                    epilog=f"{epilog()}\n\n{OUTPUT_RULE}", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"{PROG} {version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in groups:
        importlib.import_module(name).register(commands)
    for _, command in subcommands(parser):
        command.epilog = f"{command.epilog}\n\n{parser.epilog}" if command.epilog else parser.epilog
        command.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser


def subcommands(parser: argparse.ArgumentParser,
                path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command under `parser` with its words (`("autopilot", "run")`), groups before their members."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for word, child in action.choices.items():
                yield (*path, word), child
                yield from subcommands(child, (*path, word))


def not_utf8(argv: Sequence[str]) -> int | None:
    """The index of the first argument the OS gave as bytes that are not UTF-8 (decoded as lone surrogates)."""
    for index, arg in enumerate(argv):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return index
    return None


def cancelled_status() -> Status | None:
    """The status of a command a cancelling signal stopped, or None when none came."""
    signum = cancellation.requested()
    return None if signum is None else CANCELLED_STATUSES.get(signal.Signals(signum), Status.TERMINATED)


def main(argv: Sequence[str] | None = None, groups: Sequence[str] = COMMAND_MODULES) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    bad = not_utf8(words)
    if bad is not None:
        print_error(f"error: argument {bad + 1} is not valid UTF-8: {words[bad]!r}")
        return ExitCode.INVALID_INPUT
    parser = build_parser(groups)
    try:
        args = parser.parse_args(words)
    except SystemExit as done:  # --help, --version, or a usage error already printed on its one line
        return done.code if isinstance(done.code, int) else code_for(Status.USAGE)
    cancellation.install()
    try:
        handler: Callable[[argparse.Namespace, TextIO], Status] = args.handler
        status = handler(args, sys.stdout)
        # A command that was cancelled but finished its run's record says so, as a killed shell job would.
        return code_for(cancelled_status() or status)
    except HarnessError as exc:
        print_error(f"error: {exc}")
        return code_for(error_status(exc))
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): nothing left to tell anyone
        return code_for(Status.DONE)
    except KeyboardInterrupt:
        # SIGINT, SIGTERM or SIGHUP (see harness.hermes.cancellation): a body was already shut down by
        # the client's context manager, a Hermes run stopped and ledgered by its journal, on the way out
        return code_for(cancelled_status() or Status.INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 (the edge's last resort: a bug must still end in one line, not a traceback)
        print_error(f"internal error (a bug; please report it): {type(exc).__name__}: {exc}")
        return code_for(Status.INTERNAL_ERROR)

