"""autobot commands: `delegate`, `enqueue`, `drain`, `queue`.

Every `delegate` prints the result envelope on stdout, whatever happened, and returns its status
(`autobot:ok`, `autobot:degraded`, or `autobot:invalid_intent`, the seed's exit 2); an invalid
intent also gets a one-line message on stderr naming the field.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from harness import resolve
from harness.autobot import AutobotSettings, Envelope, delegate
from harness.autobot.delegate import DEFAULT_MAX_TURNS, INVALID_INTENT, invalid_intent
from harness.autobot.intent import IntentError, load_intent_file, load_intent_stream
from harness.autobot.queue import (
    DEFAULT_BACKOFF_BASE_S,
    DEFAULT_MAX_ATTEMPTS,
    QUEUE_DIR,
    QueueStore,
    receipt,
    refuse_if_nested,
)
from harness.cli.exit_codes import Status, autobot_status
from harness.cli.hermes_options import (
    DIRECTORY,
    FILE,
    database_parent,
    database_url,
    hermes_parent,
    json_parent,
    positive_int,
    positive_seconds,
    print_json,
    project_root,
    transport_settings,
)
from harness.cli.output import print_error
from harness.hermes.locate import check_named
from harness.settings import AUTOBOT_QUEUE_ENV as QUEUE_ENV
from harness.trace import render_table


def read_intent(path_text: str) -> Any:
    if path_text == "-":
        return load_intent_stream(sys.stdin.buffer, "stdin")
    return load_intent_file(Path(path_text))


def autobot_settings(args: argparse.Namespace) -> AutobotSettings:
    return AutobotSettings(toolsets=tuple(t.strip() for t in args.toolsets.split(",") if t.strip()),
                           max_turns=args.max_turns, approve_sensitive_write=args.approve_sensitive_write,
                           transport=transport_settings(args), database=database_url(args))


def emit(envelope: Envelope, args: argparse.Namespace, out: TextIO) -> Status:
    print_json(envelope.to_dict(), args, out)
    if envelope.degraded_reason == INVALID_INTENT:
        print_error(f"invalid intent: {envelope.extra.get('detail')}")
        return Status.AUTOBOT_INVALID_INTENT
    return autobot_status(envelope.status)


def cmd_delegate(args: argparse.Namespace, out: TextIO) -> Status:
    try:
        options = autobot_settings(args)
        intent = read_intent(args.intent_file)
    except IntentError as exc:
        return emit(invalid_intent(exc), args, out)
    return emit(delegate(intent, settings=options), args, out)


def queue_of(args: argparse.Namespace, project: Path | None = None) -> QueueStore:
    """The queue (`resolve.queue`): the database's with --database (or $MAFIABOT_DATABASE_URL); else of `project`
    when given (the intent's own root when enqueueing), else of the project root."""
    return resolve.queue(args.queue, project or (lambda: project_root(args)), database=database_url(args))


def cmd_enqueue(args: argparse.Namespace, out: TextIO) -> Status:
    try:
        intent = read_intent(args.intent_file)
    except IntentError as exc:
        return emit(invalid_intent(exc), args, out)
    queue = queue_of(args, intent.project_root)
    print_json(receipt(queue, queue.enqueue(intent)), args, out)
    return Status.DONE


def cmd_drain(args: argparse.Namespace, out: TextIO) -> Status:
    refuse_if_nested(os.environ)
    try:
        options = autobot_settings(args)
    except IntentError as exc:
        return emit(invalid_intent(exc), args, out)
    check_named(options.transport.hermes_bin, options.transport.hermes_home)

    def run(document: dict[str, Any], item_id: str) -> Envelope:
        return delegate(document, settings=options.model_copy(update={"queue_item": item_id}))

    report = queue_of(args).drain(args.max, run, max_attempts=args.max_attempts, backoff_base_s=args.backoff)
    print_json(report.to_dict(), args, out)
    return Status.DRAIN_ALL_OK if report.all_ok else Status.DRAIN_ITEM_NOT_OK


def cmd_queue(args: argparse.Namespace, out: TextIO) -> Status:
    state = queue_of(args).inspect()
    if args.json:
        print_json(state, args, out)
        return Status.DONE
    counts = ", ".join(f"{n} {s}" for s, n in state["counts"].items())
    print(f"queue {state['queue']}: {counts}", file=out)
    rows = [(i["item_id"], i["state"], str(i.get("attempts", "")), i.get("not_before") or "",
             i.get("last_reason") or "", i.get("problem") or i.get("intent", "")) for i in state["items"]]
    if rows:
        print(render_table(("item", "state", "tries", "not before", "last reason", "intent / problem"), rows,
                           right_aligned=frozenset({2})), file=out)
    return Status.DONE


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `delegate`, `enqueue`, `drain` and `queue`."""
    hermes = hermes_parent()
    as_json = json_parent()
    runs = argparse.ArgumentParser(add_help=False)
    group = runs.add_argument_group("sub-agent")
    group.add_argument("--toolsets", default="todo",
                       help="read-only Hermes toolsets for the sub-agent, comma-separated (default: todo)")
    group.add_argument("--max-turns", type=positive_int, default=DEFAULT_MAX_TURNS,
                       help=f"cap on the sub-agent's model turns (default: {DEFAULT_MAX_TURNS})")
    group.add_argument("--approve-sensitive-write", action="store_true",
                       help="allow write_to to name a config, secret, identity or cron file")
    queue_opts = argparse.ArgumentParser(add_help=False)
    where = queue_opts.add_argument_group("queue")
    where.add_argument("--queue", metavar="DIR", type=DIRECTORY, help=f"the queue folder (default: ${QUEUE_ENV}, else "
                                                      f"<project root>/{QUEUE_DIR})")
    where.add_argument("--project-root", metavar="DIR", type=DIRECTORY, help="default: $MAFIABOT_PROJECT_ROOT, else the current "
                                                             "directory")
    database = database_parent()

    delegate_cmd = commands.add_parser("delegate", parents=[hermes, runs, database, as_json],
                                       help="delegate one bounded task to a Hermes sub-agent (autobot)")
    delegate_cmd.add_argument("--intent-file", required=True, metavar="FILE", type=FILE, help="the intent JSON ('-': stdin)")
    delegate_cmd.set_defaults(handler=cmd_delegate)

    enqueue = commands.add_parser("enqueue", parents=[queue_opts, database, as_json], help="validate an intent and queue it")
    enqueue.add_argument("--intent-file", required=True, metavar="FILE", type=FILE, help="the intent JSON ('-': stdin)")
    enqueue.set_defaults(handler=cmd_enqueue)

    drain = commands.add_parser("drain", parents=[hermes, runs, queue_opts, database, as_json], help="run due queued intents")
    drain.add_argument("--max", type=positive_int, default=10, help="run at most this many items (default: 10)")
    drain.add_argument("--max-attempts", type=positive_int, default=DEFAULT_MAX_ATTEMPTS,
                       help=f"runs per item before dead-lettering (default: {DEFAULT_MAX_ATTEMPTS})")
    drain.add_argument("--backoff", type=positive_seconds, default=DEFAULT_BACKOFF_BASE_S,
                       help=f"seconds before the first retry, doubled each time (default: {DEFAULT_BACKOFF_BASE_S:g})")
    drain.set_defaults(handler=cmd_drain)

    inspect = commands.add_parser("queue", parents=[queue_opts, database, json_parent(always_json=False)],
                                  help="show the queue's items and their states")
    inspect.set_defaults(handler=cmd_queue)
