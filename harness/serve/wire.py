"""`serve`'s stdio transport: the SDK session's streams, fed by a reader that answers what the SDK would drop.

The official SDK's `stdio_server` hands each line to its message model and silently drops what fails
(a parse error, a batch, an id of the wrong type, a lone surrogate, nesting past its parser's limit),
so the host waits for its own timeout; and it reads stdin in a worker thread, which neither a signal
nor a cancel can end. This transport takes its place under the same `Server.run`.

Invariants:
- Every line of stdin is screened (`screen`) before the session sees it; only a valid message reaches
  the session. A line that is not one is answered here with a JSON-RPC error, echoing the request's
  id when one could be read (an integer or a string), else `id: null`, and one line on stderr names
  the cause (see `screen` for which code answers what). A bad notification or response is never
  answered (JSON-RPC answers neither), only logged. Blank lines are skipped.
- Memory is bounded per line by MAX_LINE_BYTES: a longer line is answered as soon as it passes the
  cap, and the rest of it, up to its newline, is read and dropped unkept.
- stdin is read on the event loop once it is readable (a pipe, a socket, a terminal), so no thread is
  ever blocked on it and cancelling the serve task ends the reader at once. A stdin the loop cannot
  poll (a regular file, /dev/null) never blocks a read, and is read unpolled.
- End of input answers what was asked: the session's input closes only once every request it was
  handed is answered (or cancelled by its host), bounded by the caller's `drain_s`, or once stdout fails.
  (The SDK cancels the requests still being handled when its input closes, so a host that wrote its
  requests and closed stdin would otherwise lose their answers.)
- stdout carries only the session's messages and this reader's answers, through one writer task.
  While serving, fd 0 reads /dev/null and fd 1 writes to stderr (as the SDK's transport does), so
  Hermes and its children can neither read the host's requests nor write on the wire.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

# The body's caps (docs/wire-contract.md), so a host meets one rule on both servers: 4 MiB holds an
# intent with its file contents many times over; real messages nest a dozen levels, and the SDK's own
# JSON parser gives up at 255.
MAX_LINE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
READ_CHUNK = 1 << 16
# JSON's whitespace (RFC 8259); a line of nothing else is skipped, as the body does.
JSON_WHITESPACE = b" \t\r\n"

RequestId = int | str


@dataclass(frozen=True)
class Rejection:
    """A line that is not a message the session can take: the error it gets, if any, and why."""

    code: int
    reason: str
    request_id: RequestId | None = None
    answered: bool = True

    def response(self) -> SessionMessage:
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=self.request_id,
                                                 error=types.ErrorData(code=self.code, message=self.reason)))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _readable_id(document: dict[str, Any]) -> RequestId | None:
    """The message's id if it is one (an integer or a string: MCP's ids), else None."""
    value = document.get("id")
    return value if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)) else None


def _depth_and_surrogate(document: Any) -> tuple[int, bool]:
    """The nesting depth (the message object counts 1) and whether any string holds a lone surrogate."""
    deepest, surrogate = 0, False
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            deepest = max(deepest, depth)
            for key, item in value.items():
                surrogate = surrogate or _lone_surrogate(key)
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            deepest = max(deepest, depth)
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, str):
            surrogate = surrogate or _lone_surrogate(value)
    return deepest, surrogate


def _lone_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def screen(line: bytes) -> SessionMessage | Rejection | None:
    """What a line of stdin is: a message for the session, a rejection, or None (a blank line).

    -32700 (parse error): bytes that are not UTF-8, text that is not JSON, a lone surrogate escape.
    -32600 (invalid request): nesting deeper than MAX_DEPTH, a batch or any non-object, an id that is
    not an integer or a string, a shape that is no JSON-RPC message. -32602: params that are not an
    object. A line past MAX_LINE_BYTES never gets here (`LineReader`).
    """
    if not line.strip(JSON_WHITESPACE):
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection(types.PARSE_ERROR, f"Parse error: not UTF-8 (byte {exc.start} of the line)")
    try:
        document = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        return Rejection(types.INVALID_REQUEST, f"Invalid request: nested deeper than {MAX_DEPTH} levels")
    except ValueError as exc:
        return Rejection(types.PARSE_ERROR, f"Parse error: {exc}")
    if not isinstance(document, dict):
        shape = "a batch (JSON-RPC batches are not MCP messages)" if isinstance(document, list) else "not an object"
        return Rejection(types.INVALID_REQUEST, f"Invalid request: {shape}")
    request_id = _readable_id(document)
    # JSON-RPC answers neither a notification (a method, no id) nor a response (a result or an error, no
    # method, whatever its id: two peers that answer responses loop); anything else that is bad is
    # answered (with `id: null` when it has none).
    framed = document.get("jsonrpc") == "2.0"
    notification = framed and isinstance(document.get("method"), str) and "id" not in document
    response = framed and "method" not in document and ("result" in document or "error" in document)
    answered = not (notification or response)
    depth, surrogate = _depth_and_surrogate(document)
    if depth > MAX_DEPTH:
        return Rejection(types.INVALID_REQUEST, f"Invalid request: nested {depth} levels deep, more than "
                                                f"{MAX_DEPTH}", request_id, answered)
    if surrogate:
        return Rejection(types.PARSE_ERROR, "Parse error: a string holds a lone surrogate escape (not Unicode)",
                         request_id, answered)
    if "id" in document and request_id is None:
        return Rejection(types.INVALID_REQUEST, f"Invalid request: the id {json.dumps(document['id'])[:64]} is "
                                                f"not an integer or a string", None, answered)
    if "params" in document and not isinstance(document["params"], dict):
        return Rejection(types.INVALID_PARAMS, "Invalid params: params must be an object", request_id, answered)
    try:
        message = types.jsonrpc_message_adapter.validate_python(document, by_name=False)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"][1:]) or "(message)"
        return Rejection(types.INVALID_REQUEST, f"Invalid request: {where}: {problem['msg']}", request_id, answered)
    return SessionMessage(message)


@dataclass(frozen=True)
class Oversized:
    """A line that passed MAX_LINE_BYTES (its rest is dropped as it arrives)."""

    def rejection(self) -> Rejection:
        return Rejection(types.INVALID_REQUEST, f"Invalid request: a line longer than {MAX_LINE_BYTES} bytes "
                                                f"(the most this server reads as one message)")


class LineReader:
    """Splits stdin's bytes into lines, holding at most MAX_LINE_BYTES of any one."""

    def __init__(self, cap: int = MAX_LINE_BYTES) -> None:
        self._cap = cap
        self._partial = bytearray()
        self._dropping = False

    def feed(self, data: bytes) -> Iterator[bytes | Oversized]:
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if not self._dropping:
                if len(self._partial) + len(piece) > self._cap:
                    self._partial.clear()
                    self._dropping = True
                    yield Oversized()
                else:
                    self._partial += piece
            if end < 0:
                return
            if not self._dropping:
                yield bytes(self._partial)
            self._partial.clear()
            self._dropping = False
            start = end + 1

    def end(self) -> Iterator[bytes]:
        """The last line, when stdin ended without its newline."""
        if self._partial and not self._dropping:
            yield bytes(self._partial)
        self._partial.clear()


class InFlight:
    """The requests handed to the session and not yet answered; `drained` waits until there are none."""

    def __init__(self) -> None:
        self._ids: set[RequestId] = set()
        self._none_left = anyio.Event()
        self._none_left.set()

    def handed(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            if not self._ids:
                self._none_left = anyio.Event()
            self._ids.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            # A cancelled request gets no answer (MCP): nothing is left to wait for.
            params = message.params or {}
            self._forget(params.get("requestId"))

    def answered(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._forget(message.id)

    def abandon(self) -> None:
        """Nothing more can be answered (stdout failed)."""
        self._ids.clear()
        self._none_left.set()

    async def drained(self, bound_s: float) -> None:
        with anyio.move_on_after(bound_s):
            await self._none_left.wait()
        if self._ids:
            log(f"input ended with {len(self._ids)} request(s) unanswered after {bound_s:g} s; they are cancelled")

    def _forget(self, request_id: Any) -> None:
        if isinstance(request_id, int | str) and not isinstance(request_id, bool):
            self._ids.discard(request_id)
            if not self._ids:
                self._none_left.set()


def log(message: str) -> None:
    print(f"mafiabot-harness serve: {message}", file=sys.stderr, flush=True)


async def _chunks(fd: int) -> AsyncIterator[bytes]:
    polled = True
    while True:
        if polled:
            try:
                await anyio.wait_readable(fd)
            except PermissionError:  # epoll refuses regular files and /dev/null; reading them never blocks
                polled = False
        try:
            data = os.read(fd, READ_CHUNK)
        except OSError as exc:
            log(f"stdin failed ({exc.strerror or exc}); serving ends as at its end")
            return
        if not data:
            return
        yield data


@contextlib.contextmanager
def _claimed_stdio() -> Iterator[tuple[int, int]]:
    """The wire's own descriptors, with fd 0 pointed at /dev/null and fd 1 at stderr meanwhile."""
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        yield wire_in, wire_out
    finally:
        # Not closed: an abandoned write may still be under way in a worker thread, and a closed
        # descriptor could be reused under it by an unrelated file.
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


@contextlib.asynccontextmanager
async def stdio_transport(drain_s: float) -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception],
                                                                MemoryObjectSendStream[SessionMessage]]]:
    """The (read, write) streams of `Server.run` over this process's stdin and stdout (module invariants);
    `drain_s` bounds how long the end of input waits for the answers still owed."""
    with _claimed_stdio() as (wire_in, wire_out):
        to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        session_writes, to_wire = anyio.create_memory_object_stream[SessionMessage](0)
        answers = session_writes.clone()
        in_flight = InFlight()

        async def reader() -> None:
            # Closing both: the session's end of input, and one sender fewer for the writer. A session that
            # ended first (its streams closed) leaves nothing to feed.
            async with to_session, answers:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    lines = LineReader()
                    async for data in _chunks(wire_in):
                        for line in lines.feed(data):
                            await _take(line, to_session, answers, in_flight)
                    for line in lines.end():
                        await _take(line, to_session, answers, in_flight)
                    await in_flight.drained(drain_s)

        async def writer() -> None:
            async with to_wire:
                async for message in to_wire:
                    in_flight.answered(message.message)
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    try:
                        # A worker thread: a host slow to read stdout must not stall the loop.
                        await anyio.to_thread.run_sync(_write_all, wire_out, text.encode("utf-8"),
                                                       abandon_on_cancel=True)
                    except OSError as exc:  # the host closed our stdout: nothing more can reach it
                        log(f"stdout failed ({exc.strerror or exc}); the answers left are dropped")
                        in_flight.abandon()
                        return

        async with anyio.create_task_group() as group:
            group.start_soon(reader)
            group.start_soon(writer)
            yield session_reads, session_writes


async def _take(line: bytes | Oversized, to_session: MemoryObjectSendStream[SessionMessage | Exception],
                answers: MemoryObjectSendStream[SessionMessage], in_flight: InFlight) -> None:
    verdict = line.rejection() if isinstance(line, Oversized) else screen(line)
    if verdict is None:
        return
    if isinstance(verdict, SessionMessage):
        in_flight.handed(verdict.message)
        await to_session.send(verdict)
        return
    size = "more than MAX_LINE_BYTES" if isinstance(line, Oversized) else f"{len(line)} bytes"
    log(f"{'answered' if verdict.answered else 'dropped'} a line ({size}) with {verdict.code}: {verdict.reason}")
    if verdict.answered:
        await answers.send(verdict.response())
