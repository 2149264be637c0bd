"""`dispatch`: deliver a task to a named agent over a Hermes profile query (agent-dispatch).

Prints the seed's envelope (`delivered` or `error`) on stdout for every outcome and returns
`dispatch:delivered`, `dispatch:error` or `dispatch:invalid_input` (an unusable registry file too).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from harness import resolve, strict_json
from harness.cli.exit_codes import Status, dispatch_status
from harness.cli.hermes_options import (
    DIRECTORY,
    FILE,
    database_parent,
    database_url,
    hermes_parent,
    json_parent,
    positive_seconds,
    print_json,
    project_root,
    transport_settings,
)
from harness.cli.output import print_error
from harness.dispatch import DispatchSettings, RegistryError, dispatch, parse_context
from harness.dispatch.dispatch import DEFAULT_TIMEOUT_S, INVALID_INPUT, DispatchInputError, DispatchResult, error_envelope
from harness.settings import AGENT_REGISTRY_ENV as REGISTRY_ENV

FLAG_FIELDS = (("target", "target"), ("task_source", "task_source"), ("context", "context"),
               ("reference_id", "reference_id"))


def gather_inputs(args: argparse.Namespace) -> dict[str, Any]:
    """Inputs from --input-file (the inputs object, or the seed's {"skill", "inputs"}), then the flags."""
    raw: dict[str, Any] = {}
    if args.input_file:
        try:
            document = strict_json.load_file(Path(args.input_file))
        except strict_json.InputRejected as exc:
            raise DispatchInputError("(input file)", str(exc)) from None
        if isinstance(document, dict) and isinstance(document.get("inputs"), dict):
            document = document["inputs"]
        if not isinstance(document, dict):
            raise DispatchInputError("(input file)", "must hold a JSON object of inputs")
        raw.update(document)
    for attribute, name in FLAG_FIELDS:
        value = getattr(args, attribute)
        if value is not None:
            raw[name] = parse_context(value) if name == "context" else value
    return raw


def emit(result: DispatchResult, args: argparse.Namespace, out: TextIO) -> Status:
    print_json(result.envelope, args, out)
    if result.status == INVALID_INPUT:
        print_error(f"invalid input: {result.envelope['message']}")
    return dispatch_status(result.status)


def cmd_dispatch(args: argparse.Namespace, out: TextIO) -> Status:
    echo = {"target": args.target, "task_source": args.task_source, "reference_id": args.reference_id}
    try:
        registry = resolve.registry(args.registry)
        raw = gather_inputs(args)
    except RegistryError as exc:
        return emit(DispatchResult(error_envelope(INVALID_INPUT, str(exc), False, {"field": "registry"},
                                                  echo)), args, out)
    except DispatchInputError as exc:
        return emit(DispatchResult(error_envelope(INVALID_INPUT, str(exc), False, {"field": exc.field}, echo)),
                    args, out)
    ledger = resolve.ledger_path(args.ledger, lambda: project_root(args))
    chosen = DispatchSettings(ledger_path=ledger, registry=registry, timeout_s=args.timeout,
                              transport=transport_settings(args), database=database_url(args))
    return emit(dispatch(raw, chosen), args, out)


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `dispatch`."""
    parser = commands.add_parser("dispatch", parents=[hermes_parent(), database_parent(), json_parent()],
                                 help="deliver a task to a named agent (agent-dispatch)")
    parser.add_argument("--target", help="the agent's name in the registry (default registry: andy, cooper)")
    parser.add_argument("--task-source", help="where the task comes from (e.g. email-triage)")
    parser.add_argument("--context", help="a short summary, or a small JSON object")
    parser.add_argument("--reference-id", help="the id the target fetches the full artifact by")
    parser.add_argument("--input-file", metavar="FILE", type=FILE, help="the inputs as JSON (flags override its fields)")
    parser.add_argument("--registry", metavar="FILE", type=FILE, help=f"agent registry YAML (default: ${REGISTRY_ENV}, "
                                                            f"else andy → career-manager, cooper → health-coach)")
    parser.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds before the Hermes query is killed (default: {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--ledger", metavar="FILE", type=FILE, help="the cost ledger (default: <project root>/"
                                                          ".agents/state/autobot-cost-ledger.jsonl)")
    parser.add_argument("--project-root", metavar="DIR", type=DIRECTORY,
                        help="default: $MAFIABOT_PROJECT_ROOT, else the current directory")
    parser.set_defaults(handler=cmd_dispatch)
