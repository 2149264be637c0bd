"""One body process, driven over pipes, with a typed JSON-RPC/MCP API.

Invariants:
- The body runs under `pexpect.popen_spawn.PopenSpawn`: pipes, never a pty (a pty's canonical
  mode truncates input lines at 4095 bytes and rewrites line ends).
- The body's stderr never reaches the protocol stream: PopenSpawn merges stderr into stdout,
  so a `preexec_fn` dup2s a log file onto fd 2 in the child. The log lives in a private temp
  directory unless a path is given; its tail is quoted when the body dies.
- Every wait is bounded by a named constant (or a caller's explicit bound) and ends in
  `BodyTimeout`, `BodyDied` or a message; nothing here blocks forever.
- Requests carry increasing integer ids starting at 1; a reply is matched by id. Any other
  message read while waiting (a stale reply, an `id: null` error) is kept in `unmatched`
  in arrival order.
- Bytes in, bytes out: lines are split on b"\\n" and decoded as strict UTF-8 here.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pexpect
from pexpect.popen_spawn import PopenSpawn

from harness.body import BodyOptions
from harness.errors import BodyDied, BodyTimeout, HarnessError, ProtocolViolation, RpcError, ToolError

# A turn takes about a millisecond; 10 s leaves room for a loaded two-core CI machine and
# matches the official SDK client's own patience with a silent server.
REQUEST_TIMEOUT = 10.0
# The MCP stdio shutdown sequence and the SDK both give 2 s after closing stdin, then 2 s
# after SIGTERM; the body is expected to exit well under 100 ms after EOF.
STDIN_CLOSE_GRACE = 2.0
SIGTERM_GRACE = 2.0
# After SIGKILL the kernel reaps at once; the bound only keeps a wedged kernel from hanging us.
SIGKILL_GRACE = 5.0
# Once stdout reached EOF the process is exiting; give it this long to be reaped so
# BodyDied can report a real exit code.
REAP_AFTER_EOF = 2.0
# How much of the stderr log BodyDied quotes: enough for an Ada exception trace.
STDERR_TAIL_LINES = 20
# PopenSpawn's reader thread queues 1 KiB chunks and read_nonblocking concatenates them into
# one bytes object per call, which is quadratic in the read size; 16 KiB keeps multi-MB lines
# linear in practice while still taking few calls per line.
READ_CHUNK = 16 * 1024
# Writes go out in PIPE_BUF-sized pieces, each after select() said the pipe has room, so a
# body that stops reading makes send_raw time out instead of blocking forever.
WRITE_CHUNK = 4096

LEGACY_PROTOCOL_VERSION = "2025-11-25"
MODERN_PROTOCOL_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "mafiabot-harness", "version": "0.1.0"}


def modern_params(
    params: Mapping[str, Any] | None = None,
    *,
    version: str = MODERN_PROTOCOL_VERSION,
    capabilities: Mapping[str, Any] | None = None,
    include_capabilities: bool = True,
) -> dict[str, Any]:
    """`params` with the per-request `_meta` of the modern (2026-07-28) era added."""
    meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": version,
                            "io.modelcontextprotocol/clientInfo": dict(CLIENT_INFO)}
    if include_capabilities:
        meta["io.modelcontextprotocol/clientCapabilities"] = dict(capabilities or {})
    out = dict(params or {})
    out["_meta"] = meta
    return out


def encode_message(message: Mapping[str, Any]) -> bytes:
    """A message as one compact UTF-8 line, LF included."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


class BodyClient:
    """A body process and the conversation with it. Not thread-safe: one caller at a time."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        stderr_log: str | os.PathLike[str] | None = None,
        request_timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self.request_timeout = request_timeout
        self.unmatched: list[dict[str, Any]] = []
        self._requested_log = Path(stderr_log) if stderr_log is not None else None
        self._tempdir: Path | None = None
        self._stderr_path: Path | None = None
        self._final_stderr: str | None = None
        self._spawn: PopenSpawn | None = None
        self._next_id = 1
        self._exit_code: int | None = None

    @classmethod
    def from_options(cls, options: BodyOptions, **kwargs: Any) -> BodyClient:
        return cls(options.argv(), **kwargs)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> BodyClient:
        if self._spawn is not None:
            raise HarnessError("this client already started its body")
        if self._requested_log is not None:
            self._stderr_path = self._requested_log
        else:
            self._tempdir = Path(tempfile.mkdtemp(prefix="mafiabot-body-"))
            self._stderr_path = self._tempdir / "stderr.log"
        log_fd = os.open(self._stderr_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

        def stderr_to_log() -> None:
            # subprocess runs this in the child after wiring fds 0-2 (stderr onto the stdout
            # pipe, as PopenSpawn asks) and before closing the others: point fd 2 at the log.
            os.dup2(log_fd, 2)

        try:
            self._spawn = PopenSpawn(self.argv, timeout=self.request_timeout, maxread=READ_CHUNK,
                                     env=self.env, encoding=None, preexec_fn=stderr_to_log)
        except OSError as exc:
            raise HarnessError(f"could not start the body {self.argv[0]}: {exc}") from exc
        finally:
            os.close(log_fd)
        return self

    def __enter__(self) -> BodyClient:
        return self.start() if self._spawn is None else self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def pid(self) -> int:
        return self._proc().pid

    @property
    def stderr_path(self) -> Path | None:
        return self._stderr_path

    def stderr_text(self) -> str:
        """Everything the body wrote to stderr so far (also after close)."""
        if self._final_stderr is not None:
            return self._final_stderr
        if self._stderr_path is None or not self._stderr_path.exists():
            return ""
        return self._stderr_path.read_bytes().decode("utf-8", errors="replace")

    def poll(self) -> int | None:
        """The exit code if the body has exited (negative: killed by that signal), else None."""
        if self._exit_code is None and self._spawn is not None:
            self._exit_code = self._spawn.proc.poll()
        return self._exit_code

    def close_stdin(self) -> None:
        proc = self._proc()
        if proc.stdin is not None and not proc.stdin.closed:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass  # the body already left; closing our end is all that was asked

    def wait_exit(self, timeout: float) -> int:
        """The exit code, waiting at most `timeout`; BodyTimeout if it is still running."""
        try:
            self._exit_code = self._proc().wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise BodyTimeout("the body to exit", timeout) from None
        return self._exit_code

    def signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def close(self, stdin_grace: float = STDIN_CLOSE_GRACE,
              term_grace: float = SIGTERM_GRACE) -> int | None:
        """Shut the body down the MCP stdio way and return its exit code.

        Close stdin and wait; then SIGTERM and wait; then SIGKILL. Idempotent; None if the
        body was never started.
        """
        if self._spawn is None:
            return None
        if self.poll() is None:
            self.close_stdin()
            for signum, grace in ((None, stdin_grace), (signal.SIGTERM, term_grace),
                                  (signal.SIGKILL, SIGKILL_GRACE)):
                if signum is not None:
                    self.signal(signum)
                try:
                    self.wait_exit(grace)
                    break
                except BodyTimeout:
                    continue
        self._release()
        return self._exit_code

    def _release(self) -> None:
        if self._final_stderr is None:
            self._final_stderr = self.stderr_text()
        proc = self._proc()
        # The pexpect reader thread owns stdout until it saw EOF; closing the fd under it could
        # hand the number to someone else mid-read, so wait for it (it ends when the body does).
        reader = getattr(self._spawn, "_read_thread", None)
        if reader is not None:
            reader.join(REAP_AFTER_EOF)
        streams = [proc.stdin] + ([proc.stdout] if reader is None or not reader.is_alive() else [])
        for stream in streams:
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass  # a broken pipe at teardown changes nothing
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    # -- raw I/O -----------------------------------------------------------------------------

    def send_raw(self, data: bytes, timeout: float | None = None) -> None:
        """Write bytes exactly as given (the caller adds the LF), bounded by `timeout`."""
        bound = self.request_timeout if timeout is None else timeout
        proc = self._proc()
        if self.poll() is not None:
            raise self._died("a chance to write")
        if proc.stdin is None or proc.stdin.closed:
            raise HarnessError("stdin of the body is already closed")
        fd = proc.stdin.fileno()
        deadline = time.monotonic() + bound
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            _, writable, _ = select.select([], [fd], [], max(remaining, 0.0))
            if not writable:
                raise BodyTimeout(f"room in the body's stdin ({len(view)} of {len(data)} bytes unsent)",
                                  bound)
            try:
                written = os.write(fd, view[:WRITE_CHUNK])
            except BrokenPipeError:
                raise self._died("a chance to write") from None
            view = view[written:]

    def read_line(self, timeout: float | None = None, awaiting: str = "a message") -> bytes:
        """The next line of stdout without its LF, as raw bytes."""
        bound = self.request_timeout if timeout is None else timeout
        spawn = self._spawn_or_fail()
        index = spawn.expect_exact([b"\n", pexpect.EOF, pexpect.TIMEOUT], timeout=bound)
        if index == 0:
            return bytes(spawn.before)
        if index == 1:
            raise self._died(awaiting, partial=bytes(spawn.before or b""))
        raise BodyTimeout(awaiting, bound)

    def read_message(self, timeout: float | None = None, awaiting: str = "a message") -> dict[str, Any]:
        """The next stdout line parsed as a JSON object."""
        return parse_line(self.read_line(timeout, awaiting))

    def read_until_eof(self, timeout: float | None = None) -> bytes:
        """Everything left on stdout up to EOF (use after close_stdin)."""
        bound = self.request_timeout if timeout is None else timeout
        spawn = self._spawn_or_fail()
        index = spawn.expect_exact([pexpect.EOF, pexpect.TIMEOUT], timeout=bound)
        if index == 1:
            raise BodyTimeout("the end of the body's stdout", bound)
        return bytes(spawn.before or b"")

    # -- JSON-RPC ----------------------------------------------------------------------------

    def send_request(self, method: str, params: Mapping[str, Any] | None = None) -> int:
        """Send a request and return its id without waiting for the reply."""
        request_id = self._next_id
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.send_raw(encode_message(message))
        return request_id

    def wait_response(self, request_id: int, timeout: float | None = None,
                      awaiting: str | None = None) -> dict[str, Any]:
        """The full response object whose id is `request_id`; others go to `unmatched`."""
        bound = self.request_timeout if timeout is None else timeout
        what = awaiting or f"the reply to request {request_id}"
        deadline = time.monotonic() + bound
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BodyTimeout(what, bound)
            try:
                message = self.read_message(remaining, what)
            except BodyTimeout:
                # read_message knows only the time that was left; the caller's bound is the news
                raise BodyTimeout(what, bound) from None
            reply_id = message.get("id")
            if type(reply_id) is int and reply_id == request_id:
                return message
            self.unmatched.append(message)

    def exchange(self, method: str, params: Mapping[str, Any] | None = None,
                 timeout: float | None = None) -> dict[str, Any]:
        """Send a request and return the whole response (result or error), unraised."""
        request_id = self.send_request(method, params)
        return self.wait_response(request_id, timeout, f"the reply to {method} (id {request_id})")

    def request(self, method: str, params: Mapping[str, Any] | None = None,
                timeout: float | None = None) -> Any:
        """The `result` of a request; RpcError for an error response."""
        response = self.exchange(method, params, timeout)
        if "error" in response:
            error = response["error"]
            if not isinstance(error, dict):
                raise ProtocolViolation(f"error member is not an object: {response!r}")
            raise RpcError(error.get("code"), error.get("message", ""), error.get("data"))
        if "result" not in response:
            raise ProtocolViolation(f"response has neither result nor error: {response!r}")
        return response["result"]

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.send_raw(encode_message(message))

    # -- MCP ---------------------------------------------------------------------------------

    def initialize(self, protocol_version: str = LEGACY_PROTOCOL_VERSION,
                   capabilities: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The legacy handshake: initialize, then notifications/initialized. Returns the result."""
        result = self.request("initialize", {"protocolVersion": protocol_version,
                                             "capabilities": dict(capabilities or {}),
                                             "clientInfo": dict(CLIENT_INFO)})
        self.notify("notifications/initialized")
        return result

    def ping(self, timeout: float | None = None) -> Any:
        return self.request("ping", None, timeout)

    def list_tools(self, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        result = self.request("tools/list", params)
        return result["tools"]

    def call_tool(self, name: str, arguments: Mapping[str, Any],
                  params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The whole `tools/call` result; ToolError when it has `isError: true`."""
        call = dict(params or {})
        call.update({"name": name, "arguments": dict(arguments)})
        result = self.request("tools/call", call)
        if result.get("isError"):
            raise ToolError(_content_text(result))
        return result

    def call_turn(self, input: str, uid: str, channel: str, server: str) -> dict[str, Any]:
        """One turn of the cycle; returns its `structuredContent` (the trace)."""
        result = self.call_tool("turn", {"input": input, "uid": uid, "channel": channel, "server": server})
        if "structuredContent" not in result:
            raise ProtocolViolation("a successful turn came back without structuredContent")
        return result["structuredContent"]

    # -- helpers -----------------------------------------------------------------------------

    def _spawn_or_fail(self) -> PopenSpawn:
        if self._spawn is None:
            raise HarnessError("the body was not started (call start() or use the client as a context)")
        return self._spawn

    def _proc(self) -> subprocess.Popen[bytes]:
        return self._spawn_or_fail().proc

    def _died(self, awaiting: str, partial: bytes = b"") -> BodyDied:
        try:
            code: int | None = self.wait_exit(REAP_AFTER_EOF)
        except BodyTimeout:
            code = None  # stdout closed but the process lingers: report what we know
        tail = "\n".join(self.stderr_text().splitlines()[-STDERR_TAIL_LINES:])
        if partial:
            tail += f"\n(an unterminated line of {len(partial)} bytes was left on stdout)"
        return BodyDied(code, tail, awaiting)


def parse_line(line: bytes) -> dict[str, Any]:
    """A stdout line as a JSON object; ProtocolViolation for anything else."""
    try:
        message = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ProtocolViolation(f"the body wrote invalid UTF-8 on stdout: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ProtocolViolation(f"the body wrote a non-JSON line on stdout ({exc}): {line[:200]!r}") from None
    if not isinstance(message, dict):
        raise ProtocolViolation(f"the body wrote a JSON value that is not an object: {line[:200]!r}")
    return message


def _content_text(result: Mapping[str, Any]) -> str:
    blocks = result.get("content") or []
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(texts) if texts else json.dumps(result)
