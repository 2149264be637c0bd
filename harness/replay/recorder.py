"""Recording: a relay between a stdio MCP client and the body that writes what passed as a transcript.

Two ways to sit between them:
- relay mode: the client spawns its server itself (Hermes, the SDK client, the Inspector), so it
  is given `python -m harness.replay.relay --out FILE -- BODY...` in place of the body
  (`record` substitutes it for `{body}` in the client's command line; `mount --record` writes it
  into Hermes's config);
- pipe mode: a client that speaks MCP on its own stdio (a script) is wired straight to the body.

Invariants:
- Each line is written to the transcript before it is forwarded, so a request always precedes
  its reply in the file, whatever the two pump threads' timing.
- A client line becomes `send` when it is exactly the compact encoding of its JSON value, else
  `send-raw` (byte-exact); a body line becomes `expect` with the whole reply as the pattern, or
  `expect-raw` when it is not JSON. The client's EOF becomes `close`, a forwarded signal
  `signal`, and the body's exit status `expect-exit`.
- The transcript is written as FILE.part, flushed line by line, and renamed to FILE at the end;
  the final name is reserved (O_EXCL) at the start, so two sessions never share a file and an
  existing file is never overwritten: later sessions get FILE-2.jsonl, FILE-3.jsonl, ...
- Every wait is bounded: the session by `max_seconds`, the body's exit by the MCP shutdown graces.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from harness.client import SIGTERM_GRACE, STDIN_CLOSE_GRACE
from harness.errors import HarnessError
from harness.replay.transcript import (
    SIGNALS,
    Close,
    Comment,
    Expect,
    ExpectExit,
    ExpectRaw,
    Header,
    Send,
    Signal,
    Step,
    header_line,
    step_line,
)

# The relay as a module a client can spawn: `python -m harness.replay.relay --out FILE -- BODY...`.
RELAY_MODULE = "harness.replay.relay"
# A recording is a live session; an hour is longer than any a developer watches.
DEFAULT_MAX_SECONDS = 3600.0
# How long the pumps get to drain once the body has exited.
PUMP_DRAIN = 2.0
MAX_NUMBERED = 1000


class RecordError(HarnessError):
    """A recording could not be made (the file cannot be reserved, the body cannot start)."""


def unwritable_reason(requested: Path) -> str | None:
    """Why `reserve_path(requested)` would fail for want of a folder to write in; None when it would not."""
    folder = requested.parent
    if requested.is_dir():
        return f"{requested} is a folder; give a transcript file in it, e.g. {requested / 'session.jsonl'}"
    if not folder.is_dir():
        return f"the folder {folder} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable"
    return None


def reserve_path(requested: Path) -> Path:
    """`requested`, or the first free `stem-N.suffix`, created empty with O_EXCL."""
    candidates = [requested] + [requested.with_name(f"{requested.stem}-{n}{requested.suffix}")
                                for n in range(2, MAX_NUMBERED)]
    for candidate in candidates:
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            return candidate
        except FileExistsError:
            continue
        except OSError as exc:
            raise RecordError(f"cannot create transcript {candidate}: {exc.strerror or exc}") from None
    raise RecordError(f"{requested} and {MAX_NUMBERED - 2} numbered siblings already exist")


class TranscriptWriter:
    """Steps appended to `<path>.part` (thread-safe), renamed onto the reserved path by finish()."""

    def __init__(self, path: Path, header: Header) -> None:
        self.path = path
        self.part = path.with_name(path.name + ".part")
        self.messages = 0
        # Re-entrant: the relay's signal handler records a step on the thread it interrupts.
        self._lock = threading.RLock()
        self._file = open(self.part, "w", encoding="utf-8")  # noqa: SIM115 (held until finish() closes and renames it)
        self._write(header_line(header))

    def add(self, step: Step) -> None:
        with self._lock:
            if isinstance(step, (Send, Expect, ExpectRaw)):
                self.messages += 1
            self._write(step_line(step))

    def _write(self, line: str) -> None:
        self._file.write(line + "\n")
        self._file.flush()

    def finish(self) -> Path:
        with self._lock:
            self._file.close()
            os.replace(self.part, self.path)
        return self.path


def reply_step(line: bytes) -> Step:
    try:
        return Expect(json.loads(line.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return ExpectRaw(line)


class Relay:
    """One session: client lines to the body, body lines to the client, all into the transcript."""

    def __init__(self, body_argv: Sequence[str], writer: TranscriptWriter,
                 env: dict[str, str] | None = None, stderr: Any = None) -> None:
        self.writer = writer
        try:
            self.body = subprocess.Popen(list(body_argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=stderr, env=env)
        except OSError as exc:
            raise RecordError(f"cannot start the body {body_argv[0]}: {exc.strerror or exc}") from None
        self._stopping = threading.Event()

    def run(self, client_in: IO[bytes], client_out: IO[bytes], max_seconds: float) -> int:
        """Pump until the body's stdout ends; returns the body's exit status."""
        up = threading.Thread(target=self._pump_up, args=(client_in,), name="relay-client-to-body", daemon=True)
        down = threading.Thread(target=self._pump_down, args=(client_out,), name="relay-body-to-client",
                                daemon=True)
        up.start()
        down.start()
        down.join(max_seconds)
        if down.is_alive():
            self.writer.add(Comment(f"the recording stopped after {max_seconds:g} s; the body was terminated"))
            self.forward_signal("TERM")
            down.join(PUMP_DRAIN)
        code = self._wait_body()
        self.writer.add(ExpectExit(code))
        return code

    def forward_signal(self, name: str) -> None:
        if self.body.poll() is None:
            self.writer.add(Signal(name))
            self.body.send_signal(SIGNALS[name])

    def _pump_up(self, client_in: IO[bytes]) -> None:
        stdin = self.body.stdin
        assert stdin is not None
        try:
            for line in iter(client_in.readline, b""):
                self.writer.add(Send(line))
                stdin.write(line)
                stdin.flush()
            self.writer.add(Close())
            stdin.close()
        except (BrokenPipeError, ValueError, OSError):
            pass  # the body is gone; its exit status will say why

    def _pump_down(self, client_out: IO[bytes]) -> None:
        stdout = self.body.stdout
        assert stdout is not None
        client_gone = False
        for line in iter(stdout.readline, b""):
            self.writer.add(reply_step(line.rstrip(b"\n")))
            if client_gone:
                continue
            try:
                client_out.write(line)
                client_out.flush()
            except (BrokenPipeError, ValueError, OSError):
                client_gone = True  # keep draining the body so it never blocks on a full pipe
        try:
            client_out.close()
        except OSError:
            pass  # the client already closed its end

    def _wait_body(self) -> int:
        for grace, action in ((STDIN_CLOSE_GRACE, None), (SIGTERM_GRACE, self.body.terminate),
                              (SIGTERM_GRACE, self.body.kill)):
            if action is not None:
                action()
            try:
                return self.body.wait(grace)
            except subprocess.TimeoutExpired:
                continue
        raise RecordError(f"the body (pid {self.body.pid}) did not exit even after SIGKILL")


def record_pipe(client_argv: Sequence[str], body_argv: Sequence[str], out: Path, header: Header,
                max_seconds: float = DEFAULT_MAX_SECONDS) -> tuple[Path, int, int]:
    """Pipe mode: (transcript path, messages recorded, client exit status)."""
    path = reserve_path(out)
    writer = TranscriptWriter(path, header)
    try:
        client = subprocess.Popen(list(client_argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as exc:
        writer.finish()
        raise RecordError(f"cannot start the client {client_argv[0]}: {exc.strerror or exc}") from None
    assert client.stdout is not None and client.stdin is not None
    Relay(body_argv, writer).run(client.stdout, client.stdin, max_seconds)
    try:
        # The body exited because the client closed its output: the client is leaving too.
        client_code = client.wait(STDIN_CLOSE_GRACE)
    except subprocess.TimeoutExpired:
        client.kill()
        client_code = client.wait(SIGTERM_GRACE)
    return writer.finish(), writer.messages, client_code
