"""The recording relay as a process: `python -m harness.replay.relay --out FILE [--title T] -- BODY...`.

A stdio MCP client spawns this in place of the body; it spawns the body and relays both ways,
writing the session as a transcript (see `recorder`).

Invariants:
- This process's stdout carries only the body's lines: the real stdout is duplicated for the
  relay and fd 1 is pointed at stderr before anything else runs, so no diagnostic can reach the
  client's protocol stream. The body's stderr is this process's stderr (the client's log).
- SIGTERM and SIGINT are forwarded to the body (and recorded); the relay then finishes the
  transcript and exits 0 when the body exited 0, else 1, so a client sees the relay end the
  way the body did.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness.replay.recorder import DEFAULT_MAX_SECONDS, Relay, TranscriptWriter, reserve_path
from harness.replay.transcript import Header


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m harness.replay.relay",
                                     description="Relay a stdio MCP session to the body and record it.")
    parser.add_argument("--out", required=True, type=Path, help="transcript to write (never overwritten)")
    parser.add_argument("--title", default="", help="the transcript's title")
    parser.add_argument("--for-body", action="append", default=[], metavar="KIND",
                        help="the body kind the transcript is for (its header's bodies); repeatable")
    parser.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS,
                        help=f"end the session after this long (default {DEFAULT_MAX_SECONDS:g})")
    parser.add_argument("body", nargs=argparse.REMAINDER, help="-- then the body's command line")
    args = parser.parse_args(argv)
    if args.body[:1] == ["--"]:
        args.body = args.body[1:]
    if not args.body:
        parser.error("give the body's command line after --")
    return args


def main(argv: list[str] | None = None) -> int:
    protocol_out = os.fdopen(os.dup(1), "wb")  # buffered: a write is never partial; pumps flush
    os.dup2(2, 1)
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        writer = TranscriptWriter(reserve_path(args.out), Header(title=args.title, bodies=tuple(args.for_body)))
        relay = Relay(args.body, writer)
    except HarnessError as exc:
        print(f"mafiabot relay: {exc}", file=sys.stderr)
        return 2
    for signum, name in ((signal.SIGTERM, "TERM"), (signal.SIGINT, "INT")):
        signal.signal(signum, lambda *_, name=name: relay.forward_signal(name))
    try:
        code = relay.run(sys.stdin.buffer, protocol_out, args.max_seconds)
    except HarnessError as exc:
        print(f"mafiabot relay: {exc}", file=sys.stderr)
        code = 1
    path = writer.finish()
    print(f"mafiabot relay: recorded {writer.messages} messages to {path}", file=sys.stderr)
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
