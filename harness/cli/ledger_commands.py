"""`ledger` (totals, failures, `--png` chart) and `ledger verify` (every line whole and parseable, every
started run settled exactly once).

Both first settle the runs whose command died (`journal.settle_orphans`), as every command that uses
the ledger does. `verify` ends `ledger:whole`, `ledger:damaged_line` when it finds a damaged line, or
`ledger:unsettled_run` when a run was not settled exactly once (a run still in flight is listed, not a
problem). A missing ledger is an empty one.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from harness import resolve
from harness.cli.exit_codes import Status
from harness.cli.hermes_options import (
    DIRECTORY,
    FILE,
    database_parent,
    database_url,
    json_parent,
    print_json,
    project_root,
)
from harness.ledger.journal import in_flight, settle_orphans
from harness.ledger.report import DIMENSIONS_TEXT, reconcile, render_text, summarize_ledger
from harness.ledger.store import LedgerStore
from harness.ledger.stores import opened_ledger


def ledger_path(args: argparse.Namespace) -> Path:
    """--ledger, else the project's ledger file (with --database, where its run journals sit)."""
    return resolve.ledger_path(args.ledger, lambda: project_root(args))


def cmd_ledger(args: argparse.Namespace, out: TextIO) -> Status:
    with opened_ledger(ledger_path(args), database_url(args)) as ledger:
        return report(ledger, args, out)


def report(ledger: LedgerStore, args: argparse.Namespace, out: TextIO) -> Status:
    settle_orphans(ledger)
    if args.action == "verify":
        return verify(ledger, args, out)
    summary = summarize_ledger(ledger)
    if args.png:
        from harness.ledger.chart import draw  # noqa: PLC0415 (matplotlib is optional: imported when a chart is asked)
        draw(summary, Path(args.png))
    if args.json:
        print_json({"ledger": ledger.where, **summary.to_dict()}, args, out)
    else:
        print(f"ledger {ledger.where}", file=out)
        print(render_text(summary), file=out)
        if args.png:
            print(f"chart written to {args.png}", file=out)
    return Status.DONE


def verify(ledger: LedgerStore, args: argparse.Namespace, out: TextIO) -> Status:
    result = ledger.verify()
    flying = frozenset(in_flight(ledger))
    runs = reconcile(ledger.all_records())
    run_problems = runs.problems(flying)
    if args.json:
        print_json({"ledger": ledger.where, "lines": result.lines, "good": result.good,
                    "problems": [{"line": n, "problem": p} for n, p in result.problems],
                    "runs": {**runs.to_dict(), "in_flight": sorted(flying), "problems": run_problems}}, args, out)
    else:
        print(f"ledger {ledger.where}: {result.lines} line(s), {result.good} good; {runs.started} run(s) started, "
              f"{runs.settled} settled, {len(flying)} in flight", file=out)
        for number, problem in result.problems:
            print(f"  line {number}: {problem}", file=out)
        for problem in run_problems:
            print(f"  {problem}", file=out)
    if not result.ok:
        return Status.LEDGER_DAMAGED_LINE
    return Status.LEDGER_UNSETTLED_RUN if run_problems else Status.LEDGER_WHOLE


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `ledger`."""
    parser = commands.add_parser("ledger", parents=[database_parent(), json_parent(always_json=False)],
                                 help=f"totals of the cost ledger by {DIMENSIONS_TEXT}; or verify it")
    parser.add_argument("action", nargs="?", choices=("summary", "verify"), default="summary",
                        help="summary (default) or verify")
    parser.add_argument("--ledger", metavar="FILE", type=FILE, help="the ledger file (default: <project root>/"
                                                          ".agents/state/autobot-cost-ledger.jsonl)")
    parser.add_argument("--project-root", metavar="DIR", type=DIRECTORY,
                        help="default: $MAFIABOT_PROJECT_ROOT, else the current directory")
    parser.add_argument("--png", metavar="FILE", type=FILE, help="also draw spend and calls per day into this PNG")
    parser.set_defaults(handler=cmd_ledger)
