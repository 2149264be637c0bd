"""`mafiabot-harness`: the command line (`harness.cli`) with `serve`, the MCP server for host agents
(`harness.serve`), among its commands.

The two edges meet here and nowhere else: no module of harness/cli imports harness/serve, and none of
harness/serve imports harness/cli (tests/python/test_python_layers.py follows every chain of imports). Both
resolve their settings through `harness.resolve`; this module only adds the `serve` command to the CLI's
groups and hands the server what the command line named.

`serve` speaks MCP on stdin/stdout until stdin closes (see `harness.serve.server`); with
`--print-config CLIENT` it prints that host's configuration instead and starts nothing. It returns 0
(the jobs it left running, if any, are named on stderr: their supervisors stop them, the next reader
settles them).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from harness import cli
from harness.cli.exit_codes import Status
from harness.cli.hermes_options import DIRECTORY, database_parent, hermes_parent, project_root
from harness.errors import ConfigError
from harness.hermes.locate import check_named
from harness.resolve import ReadRoots, ServeSettings, named_hermes_home
from harness.serve.client_config import CLIENTS, ServerEntry, render

# The command line's groups, then this module's (`serve`), in the order `--help` lists them.
COMMAND_GROUPS: tuple[str, ...] = (*cli.COMMAND_MODULES, __name__)


def cmd_serve(args: argparse.Namespace, out: TextIO) -> Status:
    if args.print_config:
        root = project_root(args)
        roots = ReadRoots.of(root, args.allow_dir)
        entry = ServerEntry.for_project(root, named_hermes_home(args.hermes_home), roots.roots[1:])
        rendered = render(args.print_config, entry)
        print(rendered.text, file=out, end="")
        print(f"mafiabot-harness serve: the {args.print_config} configuration above goes in {rendered.hint}",
              file=sys.stderr)
        return Status.DONE
    try:
        from harness.serve.server import serve  # noqa: PLC0415 - the MCP SDK (the serve extra) is needed by `serve` alone
    except ImportError as exc:
        raise ConfigError(f"serve needs the MCP SDK ({exc.name} is missing): pip install "
                          f"'mafiabot-harness[serve]'") from None

    settings = ServeSettings.of(args.project_root, args.allow_dir, args.hermes, args.hermes_home, args.database)
    check_named(settings.transport.hermes_bin, settings.transport.hermes_home)
    left = serve(settings)
    if left:
        print(f"mafiabot-harness serve: {len(left)} job(s) still running at exit ({', '.join(left)}); their "
              f"supervisors stop them and the next reader settles them", file=sys.stderr)
    return Status.DONE


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `serve`."""
    serve = commands.add_parser("serve", parents=[hermes_parent(), database_parent()],
                                help="an MCP server (stdio) for host agents: delegation, dispatch, auto-pilot, jobs")
    serve.add_argument("--project-root", metavar="DIR", type=DIRECTORY,
                       help="where jobs and the ledger live (default: $MAFIABOT_PROJECT_ROOT, else the current "
                            "directory)")
    serve.add_argument("--allow-dir", metavar="DIR", type=DIRECTORY, action="append", default=[],
                       help="a folder, besides the project root, under which hosts may name plan files and "
                            "intents' project roots (repeatable; symlinks are resolved before the check)")
    serve.add_argument("--print-config", metavar="CLIENT", choices=CLIENTS,
                       help=f"print the configuration for a host ({', '.join(CLIENTS)}) and exit")
    serve.set_defaults(handler=cmd_serve)


def build_parser() -> argparse.ArgumentParser:
    return cli.build_parser(COMMAND_GROUPS)


def main(argv: Sequence[str] | None = None) -> int:
    return cli.main(argv, COMMAND_GROUPS)
