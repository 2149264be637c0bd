"""`record` and `replay`: developer JSON-RPC sessions as transcripts (docs/replays.md).

`replay FILE|DIR... [--body ada|passthrough|CMD]` parses every transcript before starting any
body, runs each against a fresh body, prints one progress line per file as it goes and the diff
of the first mismatch of each failing file, and exits 0 when all passed or were skipped, 1 when
any failed (the exit-code table's codes for a malformed transcript or a missing body otherwise).

`record --out FILE [--body ...] -- CLIENT COMMAND...` runs a client between which and the body it
sits: where an argument of the client's command is `{body}`, the recording relay's command line
is put there (for clients that spawn their server); with no `{body}`, the client's own stdout
and stdin are wired to the body (for clients that speak MCP on their stdio).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from harness.cli.exit_codes import Status
from harness.cli.hermes_options import FILE, positive_seconds
from harness.cli.output import print_error
from harness.errors import ConfigError
from harness.replay.bodies import KNOWN_BODIES, BodyCommand, resolve_body
from harness.replay.recorder import DEFAULT_MAX_SECONDS, RELAY_MODULE, RecordError, record_pipe
from harness.replay.runner import Outcome, run_transcript
from harness.replay.transcript import Header, Transcript, load_transcript

BODY_PLACEHOLDER = "{body}"
TRANSCRIPT_SUFFIX = ".jsonl"
# After the client of a relay-mode recording exits, its relay may still be finishing the file.
RELAY_FINISH_GRACE = 5.0


def collect_transcripts(paths: Sequence[str]) -> list[Transcript]:
    """Every transcript named, directories expanded to their *.jsonl files in name order."""
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found = sorted(path.glob(f"*{TRANSCRIPT_SUFFIX}"))
            if not found:
                raise ConfigError(f"{path} holds no *{TRANSCRIPT_SUFFIX} transcripts")
            files += found
        elif path.exists():
            files.append(path)
        else:
            raise ConfigError(f"no such transcript: {path}")
    return [load_transcript(f) for f in files]


def describe_outcome(outcome: Outcome) -> str:
    if outcome.status == "passed":
        return f"ok ({outcome.steps_run} steps, {outcome.seconds:.2f} s)"
    if outcome.status == "skipped":
        return f"skipped ({outcome.reason})"
    return "FAIL"


def describe_failure(outcome: Outcome) -> str:
    failure = outcome.failure
    assert failure is not None
    where = f"{outcome.transcript.path}:{failure.line}" if failure.line else f"{outcome.transcript.path}"
    lines = [f"FAIL {where}: {failure.summary}"]
    lines += ["    " + line for line in failure.detail.splitlines()]
    return "\n".join(lines)


def cmd_replay(args: argparse.Namespace, out: TextIO) -> Status:
    transcripts = collect_transcripts(args.paths)
    body: BodyCommand = resolve_body(args.body)
    width = len(str(len(transcripts)))
    outcomes = []
    for number, transcript in enumerate(transcripts, start=1):
        print(f"[{number:>{width}}/{len(transcripts)}] {transcript.name} ... ", end="", file=out, flush=True)
        outcome = run_transcript(transcript, body.argv, body.kind)
        outcomes.append(outcome)
        print(describe_outcome(outcome), file=out, flush=True)
        if outcome.status == "failed":
            print(describe_failure(outcome), file=out, flush=True)
    counts = {status: sum(o.status == status for o in outcomes) for status in ("passed", "failed", "skipped")}
    print(f"{len(outcomes)} transcripts against {body.describe()}: {counts['passed']} passed, "
          f"{counts['failed']} failed, {counts['skipped']} skipped", file=out)
    return Status.REPLAY_TRANSCRIPT_FAILED if counts["failed"] else Status.REPLAY_PASSED


def relay_argv(out: Path, title: str, body: BodyCommand, max_seconds: float) -> list[str]:
    kind = ["--for-body", body.kind] if body.kind else []
    return [sys.executable, "-m", RELAY_MODULE, "--out", str(out.resolve()), "--title", title, *kind,
            "--max-seconds", str(max_seconds), "--", *body.argv]


def cmd_record(args: argparse.Namespace, out: TextIO) -> Status:
    client = args.client[1:] if args.client[:1] == ["--"] else list(args.client)
    if not client:
        raise ConfigError("record needs the client's command line after --")
    body = resolve_body(args.body)
    title = args.title or f"recorded from: {shlex.join(client)}"
    if BODY_PLACEHOLDER not in client:
        header = Header(title=title, bodies=(body.kind,) if body.kind else ())
        path, messages, client_code = record_pipe(client, body.argv, Path(args.out), header, args.max_seconds)
        print(f"recorded {messages} messages to {path}", file=out)
        return _client_status(client_code)
    relay = relay_argv(Path(args.out), title, body, args.max_seconds)
    argv: list[str] = []
    for arg in client:
        argv += relay if arg == BODY_PLACEHOLDER else [arg]
    before = _siblings(Path(args.out))
    started = time.time()
    try:
        completed = subprocess.run(argv, check=False, timeout=args.max_seconds + RELAY_FINISH_GRACE)
    except OSError as exc:
        raise RecordError(f"cannot start the client {argv[0]}: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise RecordError(f"the client ran longer than {args.max_seconds:g} s (--max-seconds)") from None
    written = [p for p in _siblings(Path(args.out)) - before if p.stat().st_mtime >= started - 1]
    if not written:
        raise RecordError(f"the client never started the body through {BODY_PLACEHOLDER}: nothing was recorded")
    for path in sorted(written):
        print(f"recorded {path}", file=out)
    return _client_status(completed.returncode)


def _siblings(out: Path) -> set[Path]:
    folder = out.parent if str(out.parent) else Path(".")
    return {p for p in folder.glob(f"{out.stem}*{out.suffix}") if p.is_file()}


def _client_status(code: int) -> Status:
    if code != 0:
        print_error(f"the client exited with status {code}; the transcript holds what passed until then")
        return Status.RECORD_CLIENT_FAILED
    return Status.RECORD_CLIENT_OK


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `replay` and `record`."""
    body_help = (f"the body: {' or '.join(KNOWN_BODIES)} (default ada), or a command line "
                 "such as \"/path/to/body --organs f.json\"")
    replay = commands.add_parser("replay", help="run transcripts against a body and report mismatches",
                                 description="Run JSON-lines transcripts (docs/replays.md) against a fresh body "
                                             "each; exit 1 if any failed.")
    replay.add_argument("paths", nargs="+", metavar="FILE|DIR", type=FILE, help="transcripts, or directories of *.jsonl")
    replay.add_argument("--body", metavar="BODY", type=FILE, help=body_help)
    replay.set_defaults(handler=cmd_replay)

    record = commands.add_parser(
        "record", help="sit between a stdio MCP client and the body, writing a transcript",
        description="Record a session as a transcript. Put {body} in the client's command where it expects "
                    "the server's command; without {body} the client's own stdio is wired to the body.")
    record.add_argument("--out", "-o", required=True, metavar="FILE", type=FILE,
                        help="transcript to write (an existing file is never overwritten: FILE-2.jsonl, ... are "
                             "used instead)")
    record.add_argument("--body", metavar="BODY", type=FILE, help=body_help)
    record.add_argument("--title", help="the transcript's title (default: the client's command)")
    record.add_argument("--max-seconds", type=positive_seconds, default=DEFAULT_MAX_SECONDS,
                        help=f"end the session after this long (default {DEFAULT_MAX_SECONDS:g})")
    record.add_argument("client", nargs=argparse.REMAINDER, help="-- then the client's command line")
    record.set_defaults(handler=cmd_record)
