"""Running one transcript against one body process.

Invariants:
- One fresh body per transcript, started with the transcript's header args, its stderr kept out
  of the protocol stream (BodyClient), and HERMES_HOME pointed at a private temporary directory
  so a replay never writes SOUL.md into anybody's real home.
- Steps run in order; the first mismatch ends the run and is the one reported, with the line
  of the transcript it came from. Every wait is the step's own bound.
- Without an `expect-exit` step, the run ends by closing stdin and reading stdout to EOF: a
  message nobody expected is a mismatch, so a transcript states everything the body said.
- The body is always shut down (BodyClient.close: stdin, SIGTERM, SIGKILL) whatever happened.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.client import BodyClient
from harness.errors import BodyDied, BodyTimeout, HarnessError
from harness.replay.matching import first_mismatch, render_diff
from harness.replay.transcript import (
    SIGNALS,
    Close,
    Comment,
    Expect,
    ExpectExit,
    ExpectRaw,
    Send,
    Signal,
    Step,
    Transcript,
    text_of,
)

# After the last step: the body must reach EOF this fast once stdin is closed.
FINAL_EOF_WITHIN = 5.0


@dataclass(frozen=True)
class Failure:
    line: int | None  # the transcript line of the failing step; None for the final EOF check
    summary: str      # one line: what was expected and what came instead
    detail: str = ""  # the diff, or the body's stderr tail


@dataclass(frozen=True)
class Outcome:
    transcript: Transcript
    status: str  # "passed" | "failed" | "skipped"
    steps_run: int
    seconds: float
    failure: Failure | None = None
    reason: str = ""  # why it was skipped


class _Mismatch(Exception):
    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.summary)
        self.failure = failure


def run_transcript(transcript: Transcript, body_argv: Sequence[str], body_kind: str | None = None) -> Outcome:
    """Replay `transcript` against a fresh body started as `body_argv` (plus the header's args)."""
    started = time.monotonic()
    if body_kind is not None and transcript.header.bodies and body_kind not in transcript.header.bodies:
        return Outcome(transcript, "skipped", 0, 0.0,
                       reason=f"written for {', '.join(transcript.header.bodies)}, not {body_kind}")
    home = Path(tempfile.mkdtemp(prefix="mafiabot-replay-home-"))
    env = dict(os.environ, HERMES_HOME=str(home))
    client = BodyClient([*body_argv, *transcript.header.args], env=env)
    steps_run = 0
    try:
        client.start()
        for line, step in transcript.steps:
            _run_step(client, line, step)
            steps_run += 1
        if not any(isinstance(step, ExpectExit) for _, step in transcript.steps):
            _expect_nothing_more(client)
        status, failure = "passed", None
    except _Mismatch as mismatch:
        status, failure = "failed", mismatch.failure
    except HarnessError as exc:
        status, failure = "failed", Failure(None, f"the body could not be run: {exc}")
    finally:
        client.close()
        shutil.rmtree(home, ignore_errors=True)
    return Outcome(transcript, status, steps_run, time.monotonic() - started, failure)


def _run_step(client: BodyClient, line: int, step: Step) -> None:
    try:
        if isinstance(step, Comment):
            return
        if isinstance(step, Send):
            client.send_raw(step.data)
        elif isinstance(step, Expect):
            _check_expect(client, line, step)
        elif isinstance(step, ExpectRaw):
            got = client.read_line(step.within, f"the line expected at line {line}")
            if got != step.data:
                raise _Mismatch(Failure(line, "the reply differs from expect-raw",
                                        f"--- expected\n{text_of(step.data)!r}\n+++ received\n{text_of(got)!r}"))
        elif isinstance(step, Close):
            client.close_stdin()
        elif isinstance(step, Signal):
            client.signal(SIGNALS[step.name])
        elif isinstance(step, ExpectExit):
            _check_exit(client, line, step)
    except BodyTimeout as exc:
        raise _Mismatch(Failure(line, f"no reply: {exc}")) from None
    except BodyDied as exc:
        raise _Mismatch(Failure(line, f"the body died: exit status {exc.exit_code}", exc.stderr_tail)) from None


def _check_expect(client: BodyClient, line: int, step: Expect) -> None:
    raw = client.read_line(step.within, f"the reply expected at line {line}")
    try:
        reply: Any = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _Mismatch(Failure(line, "the body wrote a line that is not JSON", repr(raw[:400]))) from None
    mismatch = first_mismatch(step.pattern, reply)
    if mismatch is not None:
        raise _Mismatch(Failure(line, f"at {mismatch.path}: {mismatch.reason}",
                                render_diff(step.pattern, reply, f"expected (line {line})", "received")))


def _check_exit(client: BodyClient, line: int, step: ExpectExit) -> None:
    rest = client.read_until_eof(step.within)
    if rest.strip():
        raise _Mismatch(Failure(line, "the body wrote more before exiting", _first_lines(rest)))
    code = client.wait_exit(step.within)
    if code != step.code:
        raise _Mismatch(Failure(line, f"expected exit status {step.code}, got {code}",
                                client.stderr_text()[-2000:]))


def _expect_nothing_more(client: BodyClient) -> None:
    client.close_stdin()
    try:
        rest = client.read_until_eof(FINAL_EOF_WITHIN)
    except BodyTimeout as exc:
        raise _Mismatch(Failure(None, f"after the last step: {exc}")) from None
    if rest.strip():
        raise _Mismatch(Failure(None, "the body wrote messages no step expected", _first_lines(rest)))


def _first_lines(data: bytes, count: int = 5) -> str:
    lines = data.strip().splitlines()
    shown = [text_of(line[:300]) for line in lines[:count]]
    if len(lines) > count:
        shown.append(f"... and {len(lines) - count} more")
    return "\n".join(shown)
