"""`mafiabot-harness`: the command line (`harness.cli`) with `serve`, the MCP server for host agents
(`harness.serve`), and `copy-to-database`, which copies serve's jobs among the rest, among its commands.

The two edges meet here and nowhere else: no module of harness/cli imports harness/serve, and none of
harness/serve imports harness/cli (tests/python/test_python_layers.py follows every chain of imports). Both
resolve their settings through `harness.resolve`; this module only adds the `serve` and `copy-to-database`
commands to the CLI's groups and hands the server (or the copy, `harness.copying`) what the command line named.

`copy-to-database` copies this project's file queue, serve's jobs and the ledger (and, with `--state FILE`, a
body's SQLite sessions) into the database named by `--database` (or $MAFIABOT_DATABASE_URL), in one transaction,
and prints what it copied per store (`--dry-run` does the same and rolls it back). It returns `done`, or raises:
a conflicting target is `CopyConflict` (exit 2), a source still running or a row the server refused end in exit
11; nothing was copied then.

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

from harness import cli, resolve
from harness.body import BODY_HELP, DYNAMIC_BODY, database_client, find_body
from harness.cli.exit_codes import Status
from harness.cli.hermes_options import (
    DIRECTORY,
    FILE,
    database_parent,
    database_url,
    hermes_parent,
    json_parent,
    print_json,
    project_root,
)
from harness.copying import CopyReport, LedgerCopier, QueueCopier, StoreCopier, copy_into
from harness.errors import ConfigError
from harness.hermes.locate import check_named
from harness.resolve import ReadRoots, ServeSettings, named_hermes_home
from harness.serve.client_config import CLIENTS, ServerEntry, render
from harness.serve.job_copy import JobsCopier
from harness.session_copy import SessionsCopier

# The command line's groups, then this module's (`serve`), in the order `--help` lists them.
COMMAND_GROUPS: tuple[str, ...] = (*cli.COMMAND_MODULES, __name__)


def serve_settings(args: argparse.Namespace) -> ServeSettings:
    """What `serve`'s command line (and the environment behind its defaults) asks of the server."""
    settings = ServeSettings.of(args.project_root, args.allow_dir, args.hermes, args.hermes_home, args.database)
    check_named(settings.transport.hermes_bin, settings.transport.hermes_home)
    return settings


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

    left = serve(serve_settings(args))
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
    register_copy(commands)


def copiers(args: argparse.Namespace) -> list[StoreCopier]:
    """The stores a copy carries, in the order they are held still and written: the ledger first (what died is
    settled there before the jobs and the queue are settled from it), the body's sessions when `--state` names
    them. A further store is one more copier here."""
    root = project_root(args)
    chosen: list[StoreCopier] = [LedgerCopier(resolve.ledger_path(args.ledger, root)), JobsCopier(root),
                                 QueueCopier(resolve.file_queue(args.queue, root))]
    sessions = resolve.session_store(args.state)
    if sessions is not None:
        chosen.append(SessionsCopier(sessions, database_client(find_body(args.body))))
    elif args.body is not None:
        raise ConfigError("copy-to-database: --body makes the schema of the sessions --state FILE names, and no "
                          "--state was given")
    return chosen


def cmd_copy(args: argparse.Namespace, out: TextIO) -> Status:
    url = database_url(args)
    if url is None:
        raise ConfigError("copy-to-database needs the database to copy into: --database URL, or "
                          "$MAFIABOT_DATABASE_URL")
    report = copy_into(url, copiers(args), dry_run=args.dry_run)
    if args.json:
        print_json(report.to_dict(), args, out)
    else:
        print(render_copy(report), file=out)
    return Status.DONE


def render_copy(report: CopyReport) -> str:
    lines = [f"dry run, rolled back: would copy into {report.database}" if report.dry_run
             else f"copied into {report.database}"]
    width = max((len(store.store) for store in report.stores), default=0)
    for store in report.stores:
        states = ", ".join(f"{count} {state}" for state, count in store.by_state.items())
        lines.append(f"  {store.store:<{width}}  {store.copied} copied{f' ({states})' if states else ''}, "
                     f"{store.already_there} already there, from {store.source}")
        lines.extend(f"    left behind: {left['what']}: {left['why']}" for left in store.left_behind)
    return "\n".join(lines)


def register_copy(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    copy = commands.add_parser("copy-to-database", parents=[database_parent(), json_parent(always_json=False)],
                               help="copy this project's file queue, serve's jobs and the ledger, and a body's "
                                    "SQLite sessions, into the database (once: a second copy copies nothing)")
    copy.add_argument("--project-root", metavar="DIR", type=DIRECTORY,
                      help="whose files are copied (default: $MAFIABOT_PROJECT_ROOT, else the current directory)")
    copy.add_argument("--queue", metavar="DIR", type=DIRECTORY,
                      help="the queue folder (default: $MAFIABOT_AUTOBOT_QUEUE, else the project's)")
    copy.add_argument("--ledger", metavar="FILE", type=FILE, help="the ledger file (default: the project's)")
    copy.add_argument("--state", metavar="FILE", type=FILE,
                      help="a body's SQLite session store to copy too (its sessions and budget log; default: none)")
    copy.add_argument("--body", metavar="BIN", type=FILE,
                      help=f"with --state, the body that makes the database's session schema, or the "
                           f"{DYNAMIC_BODY} beside it; {BODY_HELP}")
    copy.add_argument("--dry-run", action="store_true",
                      help="do the whole copy and roll it back: what would be copied, nothing written to the database")
    copy.set_defaults(handler=cmd_copy)


def build_parser() -> argparse.ArgumentParser:
    return cli.build_parser(COMMAND_GROUPS)


def main(argv: Sequence[str] | None = None) -> int:
    return cli.main(argv, COMMAND_GROUPS)
