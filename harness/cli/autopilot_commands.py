"""`autopilot run PLAN.yaml` (run a plan) and `autopilot check PLAN.yaml` (validate it and show the selection).

`run` prints the JSON envelope on stdout for every outcome (or the markdown report with
`--markdown`) and returns `autopilot:<status>`; the exit-code table (harness.cli.exit_codes) keeps
auto-pilot's contract: 0 completed, 1 partial, failed, stopped or no-convergence-possible, 2 invalid
plan / registry / sentinel config, 3 escalate (a human is needed), 4 refused (nothing ran). `check`
ends `autopilot:valid` or `autopilot:invalid` and spawns nothing; what would keep a run from starting
(a named Hermes or home no run could use, a project root or ledger that cannot be one) is refused
(a ConfigError, exit 2).

Where things are: the registry is --registry, else the plan's `registry:`, else
$MAFIABOT_AGENT_REGISTRY, else dispatch's defaults; the sentinel config --sentinel, else
$MAFIABOT_AUTOPILOT_SENTINEL, else the contract's defaults; the ledger --ledger, else
$MAFIABOT_AUTOPILOT_LEDGER (set by a parent kernel for its children), else the project's.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from harness.autopilot import PlanInvalid, load_plan, run_plan
from harness.autopilot.bands import BAND_NAMES
from harness.autopilot.plan import ALIASES, MODES
from harness.autopilot.report import check_envelope, invalid_envelope
from harness.autopilot.run import check_startable
from harness.autopilot.selection import check_agents
from harness.cli.exit_codes import Status, autopilot_status
from harness.cli.hermes_options import (
    DIRECTORY,
    FILE,
    database_parent,
    database_url,
    hermes_parent,
    json_parent,
    print_json,
    project_root,
    transport_settings,
)
from harness.cli.output import print_error
from harness.dispatch.registry import RegistryError
from harness.hermes.locate import check_named
from harness.resolve import PlanChoices
from harness.settings import AGENT_REGISTRY_ENV as REGISTRY_ENV
from harness.settings import AUTOPILOT_LEDGER_ENV as LEDGER_ENV
from harness.settings import AUTOPILOT_SENTINEL_ENV as SENTINEL_ENV


def plan_choices(args: argparse.Namespace) -> PlanChoices:
    """What the command line named for a plan (`autopilot run`, `autopilot check`, `converge`)."""
    return PlanChoices(project_root(args), transport_settings(args), ledger=args.ledger, registry=args.registry,
                       sentinel=args.sentinel, report=getattr(args, "report", None), database=database_url(args))


def plan_invalid(field_name: str, message: str, args: argparse.Namespace, out: TextIO) -> Status:
    """The invalid envelope on stdout and its one line on stderr: a plan, registry or sentinel that cannot be used."""
    print_json(invalid_envelope(field_name, message), args, out)
    print_error(f"invalid plan: {field_name}: {message}")
    return Status.AUTOPILOT_INVALID


def cmd_run(args: argparse.Namespace, out: TextIO) -> Status:
    try:
        plan = load_plan(Path(args.plan), mode=args.mode, band=args.band)
        result = run_plan(plan, plan_choices(args).kernel_settings(plan))
    except PlanInvalid as exc:
        return plan_invalid(exc.field, exc.message, args, out)
    except RegistryError as exc:
        return plan_invalid("registry", str(exc), args, out)
    if args.markdown:
        print(result.markdown, file=out, end="")
    else:
        print_json(result.envelope, args, out)
    return autopilot_status(result.status)


def cmd_check(args: argparse.Namespace, out: TextIO) -> Status:
    try:
        plan = load_plan(Path(args.plan), mode=args.mode, band=args.band)
        settings = plan_choices(args).kernel_settings(plan)
        check_agents(plan, settings.registry)
        check_startable(settings)
        check_named(settings.transport.hermes_bin, settings.transport.hermes_home)
    except PlanInvalid as exc:
        return plan_invalid(exc.field, exc.message, args, out)
    except RegistryError as exc:
        return plan_invalid("registry", str(exc), args, out)
    print_json(check_envelope(plan, settings), args, out)
    return Status.AUTOPILOT_VALID


def _plan_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("plan", metavar="PLAN.yaml", type=FILE, help="the plan (goal, mode, band, subtasks, limits)")
    parser.add_argument("--mode", choices=(*MODES, *ALIASES), help="override the plan's mode")
    parser.add_argument("--band", choices=BAND_NAMES, help="override the plan's band (a child never widens its parent's)")
    parser.add_argument("--registry", metavar="FILE", type=FILE, help=f"agent registry YAML (default: the plan's registry:, "
                                                            f"else ${REGISTRY_ENV}, else dispatch's defaults)")
    parser.add_argument("--sentinel", metavar="FILE", type=FILE, help=f"sentinel thresholds YAML/JSON (default: ${SENTINEL_ENV},"
                                                            f" else the contract's defaults)")
    parser.add_argument("--project-root", metavar="DIR", type=DIRECTORY,
                        help="the worktree: writes stay under it (default: $MAFIABOT_PROJECT_ROOT, else the cwd)")
    parser.add_argument("--ledger", metavar="FILE", type=FILE, help=f"the cost ledger (default: ${LEDGER_ENV}, else <project "
                                                          f"root>/.agents/state/autobot-cost-ledger.jsonl)")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `autopilot run` and `autopilot check`."""
    parser = commands.add_parser("autopilot", help="drive a goal across Hermes sub-agents (auto-pilot)")
    actions = parser.add_subparsers(dest="autopilot_action", required=True)
    run = actions.add_parser("run", parents=[hermes_parent(), database_parent(), json_parent()], help="run a plan")
    _plan_options(run)
    run.add_argument("--report", metavar="FILE", type=FILE, help="write the markdown report here (default: the run directory)")
    run.add_argument("--markdown", action="store_true", help="print the markdown report instead of the envelope")
    run.set_defaults(handler=cmd_run)
    check = actions.add_parser("check", parents=[hermes_parent(), json_parent()],
                               help="validate a plan and show which agent each sub-task would get")
    _plan_options(check)
    check.set_defaults(handler=cmd_check)
