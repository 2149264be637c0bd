"""Commands that run turns through the body and print their cycle traces.

`turn` (one turn), `session FILE.yaml` (several turns through one body process), `demo` (a
built-in session: two rooms interleaved, then one room hammered until its energy drops and its
passes fall). A session file is validated completely before the body is started, so a bad file
never costs a process.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TextIO

from pydantic import Field

from harness import strict_yaml
from harness.body import BODY_HELP, ORGANS_HELP, BodyOptions
from harness.cli.exit_codes import Status
from harness.cli.hermes_options import DIRECTORY, FILE
from harness.client import BodyClient
from harness.errors import ConfigError
from harness.strict_json import InputRejected
from harness.trace import render_table, render_trace
from harness.typed_inputs import Items, StrictModel, validate

KEY_FIELDS = ("uid", "channel", "server")


@dataclass(frozen=True)
class Turn:
    input: str
    uid: str
    channel: str
    server: str


# -- session files -------------------------------------------------------------------------

class SessionTurn(StrictModel):
    input: str
    uid: str | None = None
    channel: str | None = None
    server: str | None = None


class SessionFile(StrictModel):
    """A session file; a turn inherits the top-level key parts it does not give itself."""

    uid: str | None = None
    channel: str | None = None
    server: str | None = None
    turns: Annotated[Items[SessionTurn], Field(min_length=1)]


def load_session(path: Path) -> list[Turn]:
    """The turns of a session file (read by `strict_yaml`); ConfigError with the file and the problem otherwise.

    Shape: `{uid?, channel?, server?, turns: [{input, uid?, channel?, server?}, ...]}`.
    """
    try:
        document = strict_yaml.load_file(path)
    except InputRejected as exc:
        raise ConfigError(f"session file: {exc}") from None
    return parse_session(document, str(path))


def parse_session(document: Any, where: str) -> list[Turn]:
    given = validate(SessionFile, document, lambda field, message: ConfigError(f"{where}: {field}: {message}"),
                     root="(session)")
    def key_part(index: int, key: str) -> str:
        value: str | None = getattr(given.turns[index], key)
        if value is None:
            value = getattr(given, key)
        if value is None:
            raise ConfigError(f"{where}: turns[{index}]: has no '{key}' (and no top-level default)")
        return value

    return [Turn(entry.input, *(key_part(index, key) for key in KEY_FIELDS)) for index, entry in enumerate(given.turns)]


def demo_turns() -> list[Turn]:
    """Two rooms interleaved, then the tavern hammered, then the docks once more."""
    tavern = {"uid": "vito", "channel": "#tavern", "server": "corleone"}
    docks = {"uid": "vito", "channel": "#docks", "server": "corleone"}
    turns = [
        Turn(input="Who sits at the head of the table tonight?", **tavern),
        Turn(input="The shipment arrives at midnight; keep it quiet.", **docks),
        Turn(input="I vote to lynch the quiet one.", **tavern),
        Turn(input="Who saw the boat leave?", **docks),
    ]
    turns += [Turn(input=f"Accuse! Accuse again! ({n})", **tavern) for n in range(1, 13)]
    turns.append(Turn(input="Is the tavern still shouting?", **docks))
    return turns


# -- running -------------------------------------------------------------------------------

def run_turns(options: BodyOptions, turns: Iterable[Turn]) -> Iterable[dict[str, Any]]:
    """Each turn's trace, all through one body process."""
    with BodyClient.from_options(options) as client:
        client.initialize()
        for turn in turns:
            yield client.call_turn(turn.input, turn.uid, turn.channel, turn.server)


def print_trace(trace: Mapping[str, Any], as_json: bool, out: TextIO) -> None:
    if as_json:
        print(json.dumps(trace, ensure_ascii=False), file=out)
        return
    print(f"output: {trace.get('output', '')}", file=out)
    print(render_trace(trace), file=out)
    print(file=out)


def energy_summary(traces: Sequence[Mapping[str, Any]]) -> str:
    rows = [(str(n), f"{t['session']['uid']}/{t['session']['channel']}/{t['session']['server']}",
             str(t["turn"]), f"{t['energy']:.3f}", str(t["passes_run"]))
            for n, t in enumerate(traces, start=1)]
    return render_table(("#", "session", "turn", "E", "passes"), rows,
                        right_aligned=frozenset({0, 2, 3, 4}))


# -- commands ------------------------------------------------------------------------------

def cmd_turn(args: argparse.Namespace, out: TextIO) -> Status:
    turn = Turn(input=args.text, uid=args.uid, channel=args.channel, server=args.server)
    for trace in run_turns(body_options(args), [turn]):
        print_trace(trace, args.json, out)
    return Status.DONE


def cmd_session(args: argparse.Namespace, out: TextIO) -> Status:
    turns = load_session(Path(args.file))
    for trace in run_turns(body_options(args), turns):
        print_trace(trace, args.json, out)
    return Status.DONE


DEMO_READING = (
    "Read it so: each (uid, channel, server) is a session of its own (law L1); every turn runs the same 23 steps in\n"
    "the same order (L3) and Energy only decides how many of the 8 reasoning passes run: the hammered #tavern falls\n"
    "to 1 or 2 passes, while #docks' third turn has a third turn's energy, not the tavern's.")


def cmd_demo(args: argparse.Namespace, out: TextIO) -> Status:
    traces = []
    for trace in run_turns(body_options(args), demo_turns()):
        traces.append(trace)
        if args.json or args.full:
            print_trace(trace, args.json, out)
    if not args.json:
        print("energy and passes per turn:", file=out)
        print(energy_summary(traces), file=out)
        print(DEMO_READING, file=out)
        if not args.full:
            print("each turn's whole 23-step trace: mafiabot-harness demo --full", file=out)
    return Status.DONE


def body_options(args: argparse.Namespace) -> BodyOptions:
    return BodyOptions(
        body=Path(args.body) if args.body else None,
        organs=Path(args.organs) if args.organs else None,
        hermes_home=Path(args.hermes_home) if args.hermes_home else None,
        # SOUL.md is Hermes's persona: a command that only drives the body writes it only where it is told to
        no_soul=args.no_soul or not args.hermes_home,
    )


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `turn`, `session` and `demo` to the top-level parser's subcommands."""
    body = argparse.ArgumentParser(add_help=False)
    group = body.add_argument_group("body")
    group.add_argument("--body", metavar="BIN", type=FILE, help=BODY_HELP)
    group.add_argument("--organs", metavar="FILE", type=FILE, help=ORGANS_HELP)
    group.add_argument("--hermes-home", metavar="DIR", type=DIRECTORY,
                       help="have the body write its SOUL.md into DIR (default: none is written; mount's body "
                            "writes it into Hermes's home)")
    group.add_argument("--no-soul", action="store_true", help="write no SOUL.md, even with --hermes-home")
    group.add_argument("--json", action="store_true", help="print each trace as one JSON line instead of a table")

    turn = commands.add_parser("turn", parents=[body], help="run one turn and print its trace")
    turn.add_argument("text", help="what the user says")
    turn.add_argument("--uid", default="operator", help="user id (default: operator)")
    turn.add_argument("--channel", default="cli", help="channel (default: cli)")
    turn.add_argument("--server", default="local", help="server (default: local)")
    turn.set_defaults(handler=cmd_turn)

    session = commands.add_parser("session", parents=[body],
                                  help="run the turns of a YAML file through one body")
    session.add_argument("file", metavar="FILE.yaml", type=FILE,
                         help="YAML: {uid?, channel?, server?, turns: [{input, uid?, channel?, server?}]}")
    session.set_defaults(handler=cmd_session)

    demo = commands.add_parser("demo", parents=[body], help="run the built-in demonstration session and sum it up")
    demo.add_argument("--full", action="store_true", help="print each turn's whole trace before the summary")
    demo.set_defaults(handler=cmd_demo)
