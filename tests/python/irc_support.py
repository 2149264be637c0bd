"""A stand-in IRC server on 127.0.0.1, for running the real Hermes gateway offline.

Hermes 0.19.0 ships an IRC platform (plugins/platforms/irc/adapter.py, standard library asyncio):
the gateway connects as a client, registers (NICK, USER, then waits for 001), JOINs its channel and
dispatches every PRIVMSG addressed to it (`<nick>: text` in a channel, any text in a DM) with the
sender's nick as the user id and the channel (or, in a DM, the sender's nick) as the chat id. This
server speaks just that much of IRC, so a test can send a line as any nick in any channel and read
what the gateway said back.

Invariants:
- Binds 127.0.0.1 on a port the kernel picks; serves one client at a time (the gateway's adapter),
  from one daemon thread; `close()` stops it and closes every socket.
- Every wait is bounded: `wait_until` and `wait_for_join` fail the test naming what they waited for.
- What the client sends is kept in order, as parsed lines, and never dropped.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

import pytest

SERVER_NAME = "stub.irc"
# The adapter reads in 4 kB chunks and splits on CRLF; a line is at most 512 bytes by the protocol.
READ_CHUNK = 4096


@dataclass(frozen=True)
class Line:
    """One IRC line from the client: its command and parameters (the trailing one included)."""

    command: str
    params: tuple[str, ...]


def parse(raw: str) -> Line:
    """The command and parameters of a client's line (clients send no prefix)."""
    head, _, trailing = raw.partition(" :")
    words = head.split()
    params = (*words[1:], trailing) if " :" in raw else tuple(words[1:])
    return Line(words[0].upper() if words else "", params)


class IrcStub:
    """`with IrcStub() as irc:` ... `irc.port`, `irc.say(nick, target, text)`, `irc.wait_until(...)`."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Condition()
        self._client: socket.socket | None = None
        self._nick = ""
        self._joined: set[str] = set()
        self.received: list[Line] = []
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="irc-stub", daemon=True)

    def __enter__(self) -> IrcStub:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
            self._lock.notify_all()
        if client is not None:
            client.close()
        self._listener.close()
        self._thread.join(5.0)

    # -- what a test does ---------------------------------------------------------------------

    def say(self, nick: str, target: str, text: str) -> None:
        """`nick` sends `text` to `target` (a channel, or the gateway's nick for a DM)."""
        self._send(f":{nick}!{nick}@127.0.0.1 PRIVMSG {target} :{text}")

    def wait_until(self, satisfied: Callable[[list[Line]], bool], bound: float, what: str,
                   abort: Callable[[], str | None] = lambda: None) -> None:
        """Block until `satisfied(received)` holds; fail the test naming `what` after `bound` seconds, or at once
        when `abort()` (checked whenever a line arrives or the client goes) says why it never will."""
        deadline = time.monotonic() + bound
        with self._lock:
            while not satisfied(self.received):
                why_not = abort()
                if why_not is not None:
                    pytest.fail(f"while waiting for {what}: {why_not}")
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closed:
                    pytest.fail(f"timed out after {bound:g} s waiting for {what}; the client sent: "
                                f"{self.received[-20:]}")
                self._lock.wait(remaining)

    def wait_for_join(self, channel: str, bound: float, abort: Callable[[], str | None] = lambda: None) -> None:
        self.wait_until(lambda _: channel in self._joined, bound, f"the client to join {channel}", abort)

    # -- the server ----------------------------------------------------------------------------

    def _send(self, line: str) -> None:
        with self._lock:
            client = self._client
        if client is None:
            pytest.fail(f"no IRC client is connected to send {line!r} to")
        client.sendall((line + "\r\n").encode("utf-8"))

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:  # close() closed the listener
                return
            with self._lock:
                if self._closed:
                    client.close()
                    return
                self._client = client
            self._read(client)

    def _read(self, client: socket.socket) -> None:
        buffer = b""
        while True:
            try:
                data = client.recv(READ_CHUNK)
            except OSError:
                data = b""
            if not data:
                with self._lock:
                    if self._client is client:
                        self._client = None
                    self._lock.notify_all()
                client.close()
                return
            buffer += data
            while b"\r\n" in buffer:
                raw, buffer = buffer.split(b"\r\n", 1)
                self._answer(client, parse(raw.decode("utf-8", errors="replace")))

    def _answer(self, client: socket.socket, line: Line) -> None:
        replies: list[str] = []
        with self._lock:
            self.received.append(line)
            if line.command == "NICK" and line.params:
                self._nick = line.params[0]
            elif line.command == "USER":
                replies.append(f":{SERVER_NAME} 001 {self._nick} :Welcome to the stub IRC server")
            elif line.command == "JOIN" and line.params:
                for channel in line.params[0].split(","):
                    self._joined.add(channel)
                    replies += [f":{self._nick}!{self._nick}@127.0.0.1 JOIN {channel}",
                                f":{SERVER_NAME} 366 {self._nick} {channel} :End of /NAMES list"]
            elif line.command == "PING":
                replies.append(f":{SERVER_NAME} PONG {SERVER_NAME} :{line.params[-1] if line.params else ''}")
            self._lock.notify_all()
        for reply in replies:
            try:
                client.sendall((reply + "\r\n").encode("utf-8"))
            except OSError:
                return


def privmsgs_to(target: str, lines: list[Line]) -> list[str]:
    """The texts the client sent to `target` (a channel or a nick), in order."""
    return [line.params[1] for line in lines
            if line.command == "PRIVMSG" and len(line.params) == 2 and line.params[0] == target]
