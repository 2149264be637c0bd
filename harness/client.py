"""One body process, driven over pipes, with a typed JSON-RPC/MCP API.

Invariants:
- The body runs under plain `subprocess` pipes, one for each of stdin, stdout and stderr,
  never a pty (a pty's canonical mode truncates input lines at 4095 bytes and rewrites line
  ends). All three are non-blocking on our side and serviced by one `selectors` loop in the
  caller's thread: the client starts no thread, and nothing runs in the child before exec.
- The body's stderr never reaches the protocol stream. Whenever the client waits on the body
  (to write, to read, for it to exit) it also drains stderr, into the file given as
  `stderr_log` (all of it) and into an in-memory tail of `STDERR_TAIL_BYTES`, quoted when the
  body dies. A body that writes more than a pipe holds to stderr while the client is idle
  waits at most until the client's next call; it cannot deadlock the client.
- Stdout is read in chunks into one buffer and split on b"\\n"; each byte is searched for LF
  once, and a line is cut off the front of the buffer, so a line of several MB costs time
  linear in its length. Bytes in, bytes out: lines are decoded as strict UTF-8 in `parse_line`.
- While a write waits for room in the body's stdin, the body's stdout is read into the buffer,
  so a body that answers while it reads cannot wedge a large write.
- Every wait is bounded by a named constant (or a caller's explicit bound) and ends in
  `BodyTimeout`, `BodyDied` or a message; nothing here blocks forever. The body's exit is seen
  through a pidfd where the kernel has them (else by polling every `EXIT_POLL_INTERVAL`), so
  a grandchild that inherited the pipes cannot make an exited body look alive.
- Requests carry increasing integer ids starting at 1; a reply is matched by id. Any other
  message read while waiting (a stale reply, an `id: null` error) is kept in `unmatched`
  in arrival order.
- A request the body sends while a reply is awaited (MCP's server-initiated `sampling/createMessage`)
  is answered at once, in the same wait, when the client was given `on_server_request`: its
  return value is the result, an RpcError it raises is the error object; without a handler it
  is kept in `unmatched` like any other message. The reply's id is the body's own, as sent.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

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
# How much of stderr BodyDied quotes: enough for an Ada exception trace.
STDERR_TAIL_LINES = 20
# How the body starts the line that says why it stopped (Body_Log.Error), before any usage text it adds.
BODY_ERROR = "mafiabot: error: "
# The body's exit status when it refuses its start-up configuration (an argument, its fixture, its store).
BODY_REFUSED_STATUS = 2
# How much of stderr is kept in memory: many times the quoted lines, so a test looking for a
# message the body logged a few turns ago still finds it, and a chatty body costs 64 KiB.
STDERR_TAIL_BYTES = 64 * 1024
# Linux's default pipe capacity: one read can never return more, so a larger chunk buys nothing.
READ_CHUNK = 64 * 1024
# Without a pidfd the exit is noticed by polling; 10 ms is invisible next to the graces above.
EXIT_POLL_INTERVAL = 0.01

LEGACY_PROTOCOL_VERSION = "2025-11-25"
MODERN_PROTOCOL_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "mafiabot-harness", "version": "0.1.0"}

# Answers a request the body sent (method, params) with its result; raises RpcError to answer an error.
ServerRequestHandler = Callable[[str, Mapping[str, Any]], Mapping[str, Any]]

# What the selector's keys carry, to tell the streams apart.
_STDOUT, _STDERR, _EXITED, _STDIN = "stdout", "stderr", "exited", "stdin"


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
        cwd: str | os.PathLike[str] | None = None,
        on_server_request: ServerRequestHandler | None = None,
    ) -> None:
        self.argv = list(argv)
        self.on_server_request = on_server_request
        self.env = dict(env) if env is not None else None
        self.cwd = cwd  # None: ours
        self.request_timeout = request_timeout
        self.unmatched: list[dict[str, Any]] = []
        self._stderr_path = Path(stderr_log) if stderr_log is not None else None
        self._stderr_log: IO[bytes] | None = None
        self._stderr_tail = bytearray()
        self._final_stderr: str | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._selector: selectors.BaseSelector | None = None
        self._pidfd: int | None = None
        self._stdout = bytearray()
        # Bytes of `_stdout` already searched for LF: each byte is searched once.
        self._searched = 0
        # Set once the body's stdout can bring nothing more: EOF, or the body exited and what
        # it wrote was drained.
        self._stdout_done = False
        self._next_id = 1
        self._exit_code: int | None = None

    @classmethod
    def from_options(cls, options: BodyOptions, **kwargs: Any) -> BodyClient:
        return cls(options.argv(), **kwargs)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> BodyClient:
        if self._process is not None:
            raise HarnessError("this client already started its body")
        if self._stderr_path is not None:
            try:
                # Held for the body's life; _close_log() closes it with the body.
                self._stderr_log = open(self._stderr_path, "ab", buffering=0)  # noqa: SIM115
            except OSError as exc:
                raise HarnessError(f"could not open the body's stderr log {self._stderr_path}: "
                                   f"{exc.strerror or exc}") from None
        try:
            self._process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, bufsize=0, env=self.env, cwd=self.cwd)
        except OSError as exc:
            self._close_log()
            raise HarnessError(f"could not start the body {self.argv[0]}: {exc}") from exc
        selector = selectors.DefaultSelector()
        for stream, role in ((self._process.stdout, _STDOUT), (self._process.stderr, _STDERR)):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            selector.register(stream.fileno(), selectors.EVENT_READ, role)
        assert self._process.stdin is not None
        os.set_blocking(self._process.stdin.fileno(), False)
        try:
            self._pidfd = os.pidfd_open(self._process.pid)
            selector.register(self._pidfd, selectors.EVENT_READ, _EXITED)
        except OSError:
            self._pidfd = None  # a kernel or sandbox without pidfds: poll for the exit instead
        self._selector = selector
        return self

    def __enter__(self) -> BodyClient:
        return self.start() if self._process is None else self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def pid(self) -> int:
        return self._proc().pid

    @property
    def stderr_path(self) -> Path | None:
        """The file that receives all of the body's stderr, when one was given."""
        return self._stderr_path

    def stderr_text(self) -> str:
        """The last `STDERR_TAIL_BYTES` of the body's stderr so far (also after close).

        All of it is in `stderr_path` when a log was given.
        """
        if self._final_stderr is not None:
            return self._final_stderr
        if self._selector is not None:
            self._service(0.0)  # what the body logged before its last reply is in the pipe by now
        return self._stderr_tail.decode("utf-8", errors="replace")

    def poll(self) -> int | None:
        """The exit code if the body has exited (negative: killed by that signal), else None."""
        if self._exit_code is None and self._process is not None:
            self._exit_code = self._process.poll()
        return self._exit_code

    def close_stdin(self) -> None:
        stdin = self._proc().stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.close()
            except BrokenPipeError:
                pass  # the body already left; closing our end is all that was asked

    def wait_exit(self, timeout: float) -> int:
        """The exit code, waiting at most `timeout`; BodyTimeout if it is still running.

        Stdout read meanwhile stays buffered for `read_line` and `read_until_eof`.
        """
        self._proc()
        deadline = time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline - time.monotonic() <= 0:
                raise BodyTimeout("the body to exit", timeout)
            self._service(deadline - time.monotonic())
        return code

    def signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def close(self, stdin_grace: float = STDIN_CLOSE_GRACE,
              term_grace: float = SIGTERM_GRACE) -> int | None:
        """Shut the body down the MCP stdio way and return its exit code.

        Close stdin and wait; then SIGTERM and wait; then SIGKILL. Idempotent; None if the
        body was never started.
        """
        if self._process is None:
            return None
        if self._selector is not None and self.poll() is None:
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
        if self._selector is None:
            return
        if self.poll() is not None:
            self._drain()  # an exited body's last words are all in the pipe
        self._final_stderr = self._stderr_tail.decode("utf-8", errors="replace")
        self._selector.close()
        self._selector = None
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        proc = self._proc()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass  # a broken pipe at teardown changes nothing
        self._close_log()

    def _close_log(self) -> None:
        if self._stderr_log is not None:
            self._stderr_log.close()
            self._stderr_log = None

    # -- raw I/O -----------------------------------------------------------------------------

    def send_raw(self, data: bytes, timeout: float | None = None) -> None:
        """Write bytes exactly as given (the caller adds the LF), bounded by `timeout`."""
        proc = self._proc()
        if self.poll() is not None:
            raise self._died("a chance to write")
        if proc.stdin is None or proc.stdin.closed:
            raise HarnessError("stdin of the body is already closed")
        fd = proc.stdin.fileno()
        view = memoryview(data)
        deadline: float | None = None
        while True:
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                pass  # the pipe is full: wait for room below
            except BrokenPipeError:
                raise self._died("a chance to write") from None
            if not view:
                return
            bound = self.request_timeout if timeout is None else timeout
            deadline = time.monotonic() + bound if deadline is None else deadline
            if not self._wait_writable(fd, deadline):
                raise BodyTimeout(f"room in the body's stdin ({len(view)} of {len(data)} bytes unsent)",
                                  bound)

    def read_line(self, timeout: float | None = None, awaiting: str = "a message") -> bytes:
        """The next line of stdout without its LF, as raw bytes."""
        deadline: float | None = None
        while True:
            end = self._stdout.find(b"\n", self._searched)
            if end >= 0:
                line = bytes(self._stdout[:end])
                del self._stdout[:end + 1]
                self._searched = 0
                return line
            self._searched = len(self._stdout)
            if self._stdout_done:
                raise self._died(awaiting, partial=bytes(self._stdout))
            bound = self.request_timeout if timeout is None else timeout
            deadline = time.monotonic() + bound if deadline is None else deadline
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BodyTimeout(awaiting, bound)
            self._service(remaining)

    def read_message(self, timeout: float | None = None, awaiting: str = "a message") -> dict[str, Any]:
        """The next stdout line parsed as a JSON object."""
        return parse_line(self.read_line(timeout, awaiting))

    def read_until_eof(self, timeout: float | None = None) -> bytes:
        """Everything left on stdout up to EOF (use after close_stdin)."""
        bound = self.request_timeout if timeout is None else timeout
        deadline = time.monotonic() + bound
        while not self._stdout_done:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BodyTimeout("the end of the body's stdout", bound)
            self._service(remaining)
        rest = bytes(self._stdout)
        self._stdout.clear()
        self._searched = 0
        return rest

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
            if "method" in message and "id" in message and self.on_server_request is not None:
                self._answer(message)
                continue
            if type(reply_id) is int and reply_id == request_id:
                return message
            self.unmatched.append(message)

    def _answer(self, request: Mapping[str, Any]) -> None:
        """Reply to a request the body sent, with what `on_server_request` makes of it."""
        assert self.on_server_request is not None
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        params = request.get("params")
        try:
            reply["result"] = dict(self.on_server_request(str(request["method"]),
                                                          params if isinstance(params, Mapping) else {}))
        except RpcError as exc:
            reply["error"] = {"code": exc.code, "message": exc.message}
        self.send_raw(encode_message(reply))

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
            code = error.get("code")
            if type(code) is not int:
                raise ProtocolViolation(f"error code is not an integer: {response!r}")
            raise RpcError(code, error.get("message", ""), error.get("data"))
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
        return _object(result, "the initialize result")

    def ping(self, timeout: float | None = None) -> Any:
        return self.request("ping", None, timeout)

    def list_tools(self, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        tools = _object(self.request("tools/list", params), "the tools/list result").get("tools")
        if not isinstance(tools, list):
            raise ProtocolViolation(f"the tools/list result has no list of tools: {tools!r}")
        return tools

    def call_tool(self, name: str, arguments: Mapping[str, Any],
                  params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The whole `tools/call` result; ToolError when it has `isError: true`."""
        call = dict(params or {})
        call.update({"name": name, "arguments": dict(arguments)})
        result = _object(self.request("tools/call", call), "the tools/call result")
        if result.get("isError"):
            raise ToolError(_content_text(result))
        return result

    # `input` is the turn tool's own argument name, so a tool call's arguments can be passed as keywords.
    def call_turn(self, input: str, uid: str, channel: str, server: str) -> dict[str, Any]:  # noqa: A002
        """One turn of the cycle; returns its `structuredContent` (the trace)."""
        result = self.call_tool("turn", {"input": input, "uid": uid, "channel": channel, "server": server})
        if "structuredContent" not in result:
            raise ProtocolViolation("a successful turn came back without structuredContent")
        return _object(result["structuredContent"], "a turn's structuredContent")

    # -- the pipes ---------------------------------------------------------------------------

    def _service(self, timeout: float) -> None:
        """Wait at most `timeout` for the body to write or exit, and take in what it did."""
        selector = self._selector_or_fail()
        if self._pidfd is None:
            timeout = min(timeout, EXIT_POLL_INTERVAL)
        for key, _ in selector.select(max(timeout, 0.0)):
            self._take(key.data)
        if self._pidfd is None and self.poll() is not None:
            self._drain()

    def _wait_writable(self, fd: int, deadline: float) -> bool:
        """Service the pipes until `fd` has room or `deadline` passes; False on the deadline."""
        selector = self._selector_or_fail()
        selector.register(fd, selectors.EVENT_WRITE, _STDIN)
        try:
            while (remaining := deadline - time.monotonic()) > 0:
                if self._pidfd is None:
                    remaining = min(remaining, EXIT_POLL_INTERVAL)
                ready = selector.select(remaining)
                if any(key.data == _STDIN for key, _ in ready):
                    return True
                for key, _ in ready:
                    self._take(key.data)
                if self.poll() is not None:
                    return True  # the next write meets EPIPE and says the body died
            return False
        finally:
            selector.unregister(fd)

    def _take(self, role: str) -> None:
        proc = self._proc()
        if role == _STDOUT:
            assert proc.stdout is not None
            self._read_stdout(proc.stdout.fileno())
        elif role == _STDERR:
            assert proc.stderr is not None
            self._read_stderr(proc.stderr.fileno())
        elif role == _EXITED:
            self._drain()

    def _drain(self) -> None:
        """Take in everything an exited body left in its pipes; nothing more can come."""
        proc = self._proc()
        selector = self._selector_or_fail()
        if self._pidfd is not None and self._pidfd in selector.get_map():
            selector.unregister(self._pidfd)
        for stream, read in ((proc.stdout, self._read_stdout), (proc.stderr, self._read_stderr)):
            assert stream is not None
            fd = stream.fileno()
            while fd in selector.get_map() and read(fd):
                pass
            if fd in selector.get_map():
                # A grandchild that inherited the pipe may hold it open; the body is gone all the same.
                selector.unregister(fd)
        self._stdout_done = True

    def _read_stdout(self, fd: int) -> bool:
        """Append what stdout has to the buffer; False once it has nothing now."""
        chunk = self._read_chunk(fd)
        if chunk is None:
            return False
        if not chunk:
            self._stdout_done = True
            return False
        self._stdout += chunk
        return True

    def _read_stderr(self, fd: int) -> bool:
        """Log and keep the tail of what stderr has; False once it has nothing now."""
        chunk = self._read_chunk(fd)
        if not chunk:
            return False
        if self._stderr_log is not None:
            try:
                self._stderr_log.write(chunk)
            except OSError as exc:
                raise HarnessError(f"could not write the body's stderr log {self._stderr_path}: "
                                   f"{exc.strerror or exc}") from None
        self._stderr_tail += chunk
        if len(self._stderr_tail) > STDERR_TAIL_BYTES:
            del self._stderr_tail[:len(self._stderr_tail) - STDERR_TAIL_BYTES]
        return True

    def _read_chunk(self, fd: int) -> bytes | None:
        """Up to READ_CHUNK bytes; b"" at EOF (the fd is then unregistered); None if none now."""
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return None
        selector = self._selector_or_fail()
        # An exit seen in the same wait may have drained this pipe, and unregistered it, already
        if not chunk and fd in selector.get_map():
            selector.unregister(fd)
        return chunk

    # -- helpers -----------------------------------------------------------------------------

    def _proc(self) -> subprocess.Popen[bytes]:
        if self._process is None:
            raise HarnessError("the body was not started (call start() or use the client as a context)")
        return self._process

    def _selector_or_fail(self) -> selectors.BaseSelector:
        if self._selector is None:
            self._proc()
            raise HarnessError("this client already closed its body")
        return self._selector

    def _died(self, awaiting: str, partial: bytes = b"") -> BodyDied:
        try:
            code: int | None = self.wait_exit(REAP_AFTER_EOF)
        except BodyTimeout:
            code = None  # stdout closed but the process lingers: report what we know
        lines = self.stderr_text().splitlines()
        tail = "\n".join(lines[-STDERR_TAIL_LINES:])
        if partial:
            tail += f"\n(an unterminated line of {len(partial)} bytes was left on stdout)"
        return BodyDied(code, tail, awaiting, next((line for line in lines if line.startswith(BODY_ERROR)), None))


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


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProtocolViolation(f"{what} is not a JSON object: {value!r:.200}")
    return value


def _content_text(result: Mapping[str, Any]) -> str:
    blocks = result.get("content") or []
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return "\n".join(texts) if texts else json.dumps(result)
