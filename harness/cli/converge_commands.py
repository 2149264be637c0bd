"""`converge A.md B.md --output FILE` (auto-pilot's converge protocol).

`converge` runs the debate-converge protocol of auto-pilot over Hermes on two proposals given as
files: each proposal is defended and revised by its own agent, a consolidator gives a verdict per
round (at most 3), and the merged text is written to --output when they converge. It prints the
auto-pilot envelope (the verdict is `debate.verdict`) and returns auto-pilot's exit codes: 0
converged, 1 `no-convergence-possible` (or failed), 2 an unusable input, 4 refused.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from harness import settings
from harness.autopilot import PlanInvalid, parse_plan, run_plan
from harness.autopilot.plan import HARD_MAX_ROUNDS, MAX_TASK_CHARS
from harness.cli.autopilot_commands import plan_choices, plan_invalid
from harness.cli.exit_codes import Status, autopilot_status
from harness.cli.hermes_options import (
    DIRECTORY,
    FILE,
    hermes_parent,
    json_parent,
    positive_int,
    print_json,
    project_root,
)
from harness.dispatch.registry import RegistryError
from harness.settings import AGENT_REGISTRY_ENV
from harness.strict_json import InputRejected, decode_utf8, read_bounded

# The proposals travel inside the proposers' tasks; what the task's own words leave of auto-pilot's cap.
PROPOSAL_PREAMBLE = ("Defend and refine proposal {label} ({name}) towards one shared decision; keep what is "
                     "right in it, concede what is not. The proposal:\n\n")
MAX_PROPOSAL_CHARS = MAX_TASK_CHARS - len(PROPOSAL_PREAMBLE) - 256
# UTF-8 spends at most 4 bytes on a character: a longer file cannot fit MAX_PROPOSAL_CHARS.
MAX_PROPOSAL_BYTES = 4 * MAX_PROPOSAL_CHARS
DEFAULT_GOAL = "Reach one decision from the two proposals"


def proposal_task(label: str, path: Path) -> str:
    # A proposal is any bytes someone handed over: a FIFO must not block, nor a huge file fill memory.
    try:
        text = decode_utf8(read_bounded(path, MAX_PROPOSAL_BYTES), str(path))
    except InputRejected as exc:
        raise PlanInvalid(f"proposal {label}", str(exc)) from None
    if not text.strip():
        raise PlanInvalid(f"proposal {label}", f"{path} is empty")
    if len(text) > MAX_PROPOSAL_CHARS:
        raise PlanInvalid(f"proposal {label}", f"{path} has {len(text)} characters; a proposal travels in its "
                                               f"agent's task, at most {MAX_PROPOSAL_CHARS}")
    return PROPOSAL_PREAMBLE.format(label=label, name=path.name) + text


def cmd_converge(args: argparse.Namespace, out: TextIO) -> Status:
    root = project_root(args)
    output = settings.resolved(args.output, "--output")
    try:
        document = {"goal": args.goal, "mode": "debate-converge", "band": args.band,
                    "converge": {"max_rounds": args.max_rounds, "write_to": str(output)},
                    "subtasks": [{"id": "a", "task": proposal_task("A", Path(args.a))},
                                 {"id": "b", "task": proposal_task("B", Path(args.b))}]}
        plan = parse_plan(document, root, source=f"converge {args.a} {args.b}")
        result = run_plan(plan, plan_choices(args).kernel_settings(plan))
    except PlanInvalid as exc:
        return plan_invalid(exc.field, exc.message, args, out)
    except RegistryError as exc:
        return plan_invalid("registry", str(exc), args, out)
    print_json(result.envelope, args, out)
    return autopilot_status(result.status)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `converge`."""
    converge = commands.add_parser("converge", parents=[hermes_parent(), json_parent()],
                                   help="converge two proposals over Hermes (auto-pilot's debate-converge protocol)")
    converge.add_argument("a", metavar="A.md", type=FILE, help="the first proposal")
    converge.add_argument("b", metavar="B.md", type=FILE, help="the second proposal")
    converge.add_argument("--output", required=True, metavar="FILE", type=FILE,
                          help="where the merged text is written when they converge (inside the project root)")
    converge.add_argument("--goal", default=DEFAULT_GOAL, help=f"the decision to reach (default: {DEFAULT_GOAL!r})")
    converge.add_argument("--max-rounds", type=positive_int, default=HARD_MAX_ROUNDS,
                          help=f"consolidator rounds before no-convergence-possible (at most {HARD_MAX_ROUNDS})")
    converge.add_argument("--band", choices=("L2", "L3"), default="L2",
                          help="autonomy band (L1 pauses every write, so it cannot write --output; default: L2)")
    converge.add_argument("--registry", metavar="FILE", type=FILE,
                          help=f"agent registry YAML (default: ${AGENT_REGISTRY_ENV}, else dispatch's defaults)")
    converge.add_argument("--sentinel", metavar="FILE", type=FILE, help="sentinel thresholds YAML/JSON")
    converge.add_argument("--project-root", metavar="DIR", type=DIRECTORY,
                          help="the worktree: --output stays under it (default: $MAFIABOT_PROJECT_ROOT, else the cwd)")
    converge.add_argument("--ledger", metavar="FILE", type=FILE, help="the cost ledger (default: the project's)")
    converge.set_defaults(handler=cmd_converge)
