"""Cancellation of a command by SIGTERM, SIGINT or SIGHUP: what a host agent sends on cancel or timeout.

Invariants:
- `install()` (called once, by the command line's entry point, in the main thread) makes the three
  signals request cancellation: the request is recorded process-wide, and `Cancelled` (a
  `KeyboardInterrupt`, so no `except Exception` in the stack can swallow it) is raised in the main
  thread, unless the main thread is inside `shielded()`, where it is only recorded.
- A request is never forgotten: `requested()` says which signal came first, for the rest of the
  process's life. Code that must not be cut in the middle (a ledger append, an answer being written,
  the settling of a run) runs shielded; the code after it checks `requested()` before starting
  anything new (a spawn, the next queue item).
- Threads other than the main one are never interrupted by the exception; the bounded waits on a
  Hermes run poll `requested()` every slice, so a cancelled fan-out stops every child it has.
- A loop that cannot take an exception at any point (the event loop of `serve`) runs shielded and
  registers a listener (`listening`): the handler calls it after recording the request, so the loop
  wakes and stops itself at its own pace.
- The exit code of a cancelled command is 128 + the signal's number (`exit_code()`), as a shell reports it.
- One run can be stopped alone, without a signal: its journal's `stop` event (a `threading.Event`),
  polled like `requested()`; the run's outcome is then `cancelled` by CALLER_REQUEST, and says what
  asked for it when the event is a `StopRequest` (`stop_cause`).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# Stands for "one run's own caller asked it to stop" (a `stop` event, e.g. a host's cancel of one job)
# where a signal number would stand for "the whole command was told to stop".
CALLER_REQUEST = 0



class _Requests:
    """The process-wide record of cancellation: one instance, `_requests`, guarded by its lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.first: int | None = None
        self.shield_depth = 0
        self.listeners: list[Callable[[], None]] = []


_requests = _Requests()


class Cancelled(KeyboardInterrupt):
    """The command was told to stop by `signum`."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"cancelled by {signal.Signals(signum).name}")


def _handler(signum: int, _frame: FrameType | None) -> None:
    with _requests.lock:
        if _requests.first is None:
            _requests.first = signum
    for listener in list(_requests.listeners):
        listener()
    if _requests.shield_depth == 0:
        raise Cancelled(signum)


def install() -> None:
    for signum in SIGNALS:
        signal.signal(signum, _handler)


def requested() -> int | None:
    """The first cancelling signal received, or None."""
    return _requests.first


def signal_name(signum: int) -> str:
    return "a cancel request" if signum == CALLER_REQUEST else signal.Signals(signum).name


class StopRequest(threading.Event):
    """One run's own stop (CALLER_REQUEST) that remembers who asked, for the run's outcome to say."""

    cause = "a cancel request"

    def request(self, cause: str) -> None:
        if not self.is_set():  # the first asker is the cause
            self.cause = cause
        self.set()


def stop_cause(stop: threading.Event | None) -> str:
    """What a run stopped by `stop` (CALLER_REQUEST) was stopped by, in words."""
    return stop.cause if isinstance(stop, StopRequest) else signal_name(CALLER_REQUEST)


def exit_code() -> int | None:
    return None if _requests.first is None else 128 + _requests.first


@contextmanager
def shielded() -> Iterator[None]:
    """Defer the exception of a cancelling signal until the block is done (main thread only)."""
    on_main = threading.current_thread() is threading.main_thread()
    if on_main:
        _requests.shield_depth += 1
    try:
        yield
    finally:
        if on_main:
            _requests.shield_depth -= 1


@contextmanager
def listening(listener: Callable[[], None]) -> Iterator[None]:
    """Call `listener` (in the signal handler: it must only schedule work) on each cancelling signal."""
    _requests.listeners.append(listener)
    try:
        yield
    finally:
        _requests.listeners.remove(listener)


def reset_for_tests() -> None:
    """Forget a request (in-process tests only; a real command never un-cancels)."""
    _requests.first = None
