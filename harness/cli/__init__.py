"""`mafiabot-harness`: the command line of the harness.

Each command group lives in its own module with a `register(commands)` function that adds its
subcommands; a subcommand's handler takes `(args, out)` and returns the exit code. This package
is the only place that turns the harness's exceptions into exit codes (EXIT_CODES); command
groups with exit codes of their own contract return them directly.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from harness.errors import BodyDied, BodyNotFound, BodyTimeout, ConfigError, HarnessError, ProtocolViolation, RpcError, ToolError
from harness.hermes import cancellation

# Command groups, in the order `--help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "harness.cli.body_commands",
    "harness.cli.replay_commands",
    "harness.cli.hermes_commands",
    "harness.cli.autobot_commands",
    "harness.cli.dispatch_commands",
    "harness.cli.ledger_commands",
    "harness.cli.autopilot_commands",
    "harness.cli.serve_commands",
)

# Most specific first: the first matching class decides the code.
EXIT_CODES: tuple[tuple[type[HarnessError], int], ...] = (
    (ConfigError, 2),
    (BodyNotFound, 3),
    (BodyDied, 4),
    (BodyTimeout, 5),
    (RpcError, 6),
    (ToolError, 7),
    (ProtocolViolation, 8),
    (HarnessError, 1),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mafiabot-harness",
                                     description="Drive the mafiabot body and the agents around it.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cancellation.install()
    try:
        code = args.handler(args, sys.stdout)
        # A command that was cancelled but finished its run's record says so, as a killed shell job would.
        return cancellation.exit_code() or code
    except HarnessError as exc:
        code = next(c for cls, c in EXIT_CODES if isinstance(exc, cls))
        print(f"mafiabot-harness: error: {exc}", file=sys.stderr)
        return code
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): nothing left to tell anyone
        return 0
    except KeyboardInterrupt:
        # SIGINT, SIGTERM or SIGHUP (see harness.hermes.cancellation): a body was already shut down by
        # the client's context manager, a Hermes run stopped and ledgered by its journal, on the way out
        return cancellation.exit_code() or 130


if __name__ == "__main__":
    sys.exit(main())
