"""A long-lived body for property tests, kept in sync between examples.

Invariants:
- Each example starts in sync: `begin()` sends a ping with a fresh string id and reads (and
  discards) everything up to its reply, so what a failed example left unread cannot be
  blamed on the next one while Hypothesis shrinks.
- A body found dead at `begin()` is replaced by a fresh one (after the legacy handshake);
  `deaths` counts them, so a test can still fail on the example that killed it.
- `end()` proves exactly-once: after the example's lines, a ping with a fresh id must be
  answered by the very next line.
- Every read is bounded by `REPLY_BOUND`.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from fuzz_messages import FUZZ_MAX_ELEMENTS, Line, check_reply
from harness.body import BodyOptions
from harness.client import BodyClient

# A reply takes ~0.1 ms; 5 s is far beyond any healthy answer and short enough that a
# missing reply fails an example quickly instead of stalling the run.
REPLY_BOUND = 5.0
# begin() discards at most this many stale lines before it gives up on syncing.
MAX_STALE_LINES = 1_000


class FuzzBody:
    """One body (restarted if it dies) with the legacy handshake done."""

    def __init__(self, body_exe: Path, stderr_dir: Path) -> None:
        self.options = BodyOptions(body=body_exe, no_soul=True, max_elements=FUZZ_MAX_ELEMENTS)
        self.stderr_dir = stderr_dir
        stderr_dir.mkdir(parents=True, exist_ok=True)
        self.deaths = 0
        self._marks = itertools.count(1)
        self.client = self._start()

    def _start(self) -> BodyClient:
        log = self.stderr_dir / f"fuzz-body-{self.deaths}.stderr"
        client = BodyClient.from_options(self.options, stderr_log=log, request_timeout=REPLY_BOUND).start()
        client.initialize()
        return client

    def begin(self) -> None:
        if self.client.poll() is not None:
            self.deaths += 1
            self.client.close()
            self.client = self._start()
        mark = self._mark("sync")
        self.client.send_raw(_ping(mark))
        for _ in range(MAX_STALE_LINES):
            if self.client.read_line(REPLY_BOUND, "the sync ping's reply").startswith(_reply_prefix(mark)):
                return
        raise AssertionError(f"no reply to the sync ping within {MAX_STALE_LINES} lines")

    def send(self, line: Line) -> dict | None:
        """Send one line; read and check its reply if it expects one."""
        self.client.send_raw(line.data + b"\n")
        if not line.expect.reply:
            return None
        raw = self.client.read_line(REPLY_BOUND, f"the reply to a {line.label} line")
        return check_reply(raw, line.expect, line.label)

    def end(self) -> None:
        mark = self._mark("end")
        self.client.send_raw(_ping(mark))
        raw = self.client.read_line(REPLY_BOUND, "the closing ping's reply")
        assert raw == _reply_prefix(mark) + b'"result":{}}', f"an extra or missing reply: {raw[:200]!r}"

    def _mark(self, kind: str) -> str:
        return f"{kind}-{next(self._marks)}"

    def close(self) -> int | None:
        return self.client.close()


def _ping(mark: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + json.dumps(mark).encode() + b',"method":"ping"}\n'


def _reply_prefix(mark: str) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + json.dumps(mark).encode() + b","
