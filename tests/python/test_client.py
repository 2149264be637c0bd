"""The client's own behaviour: timeouts, death, id matching, long lines, stderr separation, shutdown.

Most tests here drive a fake body (tests/python/fake_body.py) so they need no Ada build. The tests
that see a body exit run twice: with the exit seen through a pidfd, and with pidfds unavailable
(the client then polls), so both ways the client learns of an exit are held to the same promises.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import sys
import time
from pathlib import Path

import pytest

from harness import client as client_module
from harness.client import BodyClient, encode_message
from harness.errors import BodyDied, BodyTimeout, HarnessError, ProtocolViolation, RpcError

FAKE = str(Path(__file__).with_name("fake_body.py"))
# Short enough to keep the suite fast, long enough that a loaded machine starts Python in time
# for the tests that expect an answer.
SHORT_BOUND = 0.5


# A Python child starts in well under a second even on a loaded machine.
READY_BOUND = 10.0


def fake(mode: str, *args: str, **kwargs) -> BodyClient:
    return BodyClient([sys.executable, FAKE, mode, *args], **kwargs).start()


@pytest.fixture(params=["pidfd", "polling"])
def exit_watch(request, monkeypatch):
    """Run the test with the body's exit seen through a pidfd, then with pidfds refused."""
    if request.param == "polling":
        def refused(pid: int, flags: int = 0) -> int:
            raise OSError(38, "Function not implemented")
        monkeypatch.setattr(os, "pidfd_open", refused)
    return request.param


def test_a_body_that_never_answers_raises_body_timeout_naming_the_request_and_bound():
    never_answers = [sys.executable, "-c", "import sys; sys.stdin.buffer.read()"]
    client = BodyClient(never_answers, request_timeout=SHORT_BOUND).start()
    try:
        with pytest.raises(BodyTimeout) as caught:
            client.ping()
        assert caught.value.bound_seconds == SHORT_BOUND
        assert "ping" in str(caught.value) and "0.5 s" in str(caught.value)
    finally:
        assert client.close() == 0


def test_every_other_wait_on_a_silent_body_ends_in_body_timeout():
    with fake("deaf", request_timeout=SHORT_BOUND) as client:
        with pytest.raises(BodyTimeout) as unread:
            client.send_raw(b"x" * 4_000_000 + b"\n")
        assert "bytes unsent" in str(unread.value)
        with pytest.raises(BodyTimeout, match="a message"):
            client.read_line()
        with pytest.raises(BodyTimeout, match="the end of the body's stdout"):
            client.read_until_eof()
        with pytest.raises(BodyTimeout, match="the body to exit"):
            client.wait_exit(SHORT_BOUND)
        assert client.close(stdin_grace=SHORT_BOUND) == -signal.SIGTERM


@pytest.mark.parametrize("mode, code, said", [
    ("die", 3, ["fake body: boom"]),
    ("die-mid-line", 5, ["fake body: cut short", "an unterminated line of 28 bytes"]),
    # The grandchild keeps stdout open after the body exited: the exit itself must be noticed.
    ("orphan", 7, []),
])
def test_a_body_dying_mid_request_raises_body_died_with_exit_code_and_stderr_tail(mode, code, said,
                                                                                   exit_watch):
    client = fake(mode)
    with pytest.raises(BodyDied) as caught:
        client.ping()
    assert caught.value.exit_code == code
    assert all(words in caught.value.stderr_tail for words in said)
    assert f"exit code {code}" in str(caught.value) and "ping" in str(caught.value)
    assert client.close() == code


def exited_unreaped(pid: int, bound: float = READY_BOUND) -> None:
    """Return once `pid` has exited, leaving it for the client to reap (its /proc state is Z)."""
    deadline = time.monotonic() + bound
    while Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z":
        assert time.monotonic() < deadline, f"process {pid} did not exit within {bound} s"
        time.sleep(0.005)


def test_an_exit_seen_in_the_same_wait_as_the_last_output_is_taken_once(monkeypatch):
    """The exit's drain reads the pipes to their end: a pipe's own event of that same wait is then stale.

    Seen once in the suite as `KeyError: '22 is not registered'` (an internal error of `mount`) when the
    selector listed the exit before the stderr it had already read; here the selector always lists it first.
    """
    class ExitFirst(selectors.DefaultSelector):  # type: ignore[misc,valid-type]
        def select(self, timeout=None):
            return sorted(super().select(timeout), key=lambda ready: ready[0].data != client_module._EXITED)

    monkeypatch.setattr(client_module.selectors, "DefaultSelector", ExitFirst)
    client = fake("die")
    client.send_raw(b"go\n")
    exited_unreaped(client.pid)
    with pytest.raises(BodyDied) as died:
        client.read_line()
    assert died.value.exit_code == 3 and "fake body: boom" in str(died.value)
    client.close()


def test_writing_to_a_dead_body_raises_body_died():
    client = fake("die")
    with pytest.raises(BodyDied):
        client.ping()
    with pytest.raises(BodyDied):
        client.ping()
    client.close()


def test_replies_are_matched_by_id_and_strays_are_kept():
    with fake("stale") as client:
        assert client.ping() == {}
        assert client.ping() == {}
        assert [m["id"] for m in client.unmatched] == [999999, 999999]


@pytest.mark.parametrize("members, call", [
    ({"result": []}, lambda c: c.initialize()),
    ({"result": {"tools": {}}}, lambda c: c.list_tools()),
    ({"result": "done"}, lambda c: c.call_tool("turn", {})),
    ({"result": {"structuredContent": [1]}}, lambda c: c.call_turn("x", "u", "c", "s")),
    ({"error": {"code": "-32600", "message": "bad"}}, lambda c: c.ping()),
    ({"error": "bad"}, lambda c: c.ping()),
    ({"nothing": None}, lambda c: c.ping()),
])
def test_a_reply_of_the_wrong_shape_is_a_protocol_violation(members, call):
    with fake("answer", json.dumps(members)) as client, pytest.raises(ProtocolViolation):
        call(client)


def test_an_error_reply_is_an_rpc_error_carrying_its_code():
    with (fake("answer", json.dumps({"error": {"code": -32601, "message": "no such method"}})) as client,
          pytest.raises(RpcError) as caught):
        client.ping()
    assert caught.value.code == -32601 and caught.value.message == "no such method"


def test_stderr_goes_to_the_log_not_the_protocol_stream(tmp_path):
    log = tmp_path / "body.stderr"
    with fake("echo", stderr_log=log) as client:
        for _ in range(20):
            assert client.ping() == {}
        assert client.unmatched == []
    assert "noise on stderr" in log.read_text()
    assert "noise on stderr" in client.stderr_text()


def test_replies_written_to_stderr_never_reach_the_protocol_stream():
    with fake("noisy") as client:
        for _ in range(20):
            assert client.ping() == {}
        assert client.unmatched == []
        said = client.stderr_text()
    assert said.count('"from": "stderr"') == 20
    assert said.endswith("no line end here")


def test_a_body_flooding_stderr_is_answered_and_shut_down_without_deadlock(tmp_path, exit_watch):
    flood = 1_000_000  # fifteen pipes' worth before each reply
    log = tmp_path / "body.stderr"
    client = fake("stderr-flood", str(flood), stderr_log=log)
    for _ in range(5):
        assert client.ping() == {}
    assert client.close(stdin_grace=client_module.REQUEST_TIMEOUT) == 0
    written = (flood // 81) * 81
    assert log.stat().st_size == 6 * written
    assert len(client.stderr_text()) == client_module.STDERR_TAIL_BYTES
    assert client.stderr_text().endswith("=\n")


def reply_of_length(length: int) -> bytes:
    """The fake's `long` reply to id 1, padded so that the whole line is `length` bytes."""
    def line(size: int) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"blob": "x" * size}}).encode()
    return line(length - len(line(0)))


@pytest.mark.parametrize("length", [4095, 4096, 4097, 65535, 65536, 65537, 6_000_000])
def test_a_reply_line_is_read_whole_at_every_length_around_the_buffer_sizes(length):
    expected = reply_of_length(length)
    assert len(expected) == length
    with fake("long", str(len(json.loads(expected)["result"]["blob"]))) as client:
        client.send_raw(encode_message({"jsonrpc": "2.0", "id": 1, "method": "big"}))
        assert client.read_line() == expected
        client.send_raw(encode_message({"jsonrpc": "2.0", "id": 1, "method": "big"}))
        assert client.read_line() == expected


def test_a_large_request_goes_through_while_the_body_answers_before_reading():
    # The body writes 1 MB before it reads anything: a client that only wrote while its write
    # waited would wedge against it until the bound.
    with fake("talks-first", str(1_000_000)) as client:
        pad = "y" * 5_000_000
        assert client.request("big", {"pad": pad})["bytes"] == len(encode_message(
            {"jsonrpc": "2.0", "id": 1, "method": "big", "params": {"pad": pad}})) - 1
        [notice] = client.unmatched
        assert len(notice["params"]["pad"]) == 1_000_000


def test_close_escalates_to_sigkill_for_a_body_that_ignores_eof_and_sigterm(exit_watch):
    client = fake("stubborn")
    assert client.read_message(timeout=READY_BOUND, awaiting="the stubborn fake's ready")["method"] == "ready"
    assert client.close(stdin_grace=0.2, term_grace=0.2) == -signal.SIGKILL


def test_close_is_idempotent_and_safe_before_start():
    assert BodyClient([sys.executable, FAKE, "echo"]).close() is None
    client = fake("echo")
    assert client.close() == 0
    assert client.close() == 0


def test_a_missing_executable_is_a_harness_error(tmp_path):
    with pytest.raises(HarnessError):
        BodyClient([str(tmp_path / "no-such-body")]).start()


def test_reading_after_close_reports_the_exit_the_body_already_made():
    client = fake("echo")
    assert client.close() == 0
    with pytest.raises(BodyDied) as caught:
        client.read_line()
    assert caught.value.exit_code == 0


# -- against the real body ------------------------------------------------------------------------

def test_a_body_killed_mid_conversation_raises_a_readable_body_died_and_a_fresh_client_works(spawn_body):
    client = spawn_body()
    client.initialize()
    client.call_turn("first", "u", "c", "s")
    client.signal(signal.SIGKILL)
    with pytest.raises(BodyDied) as caught:
        client.call_turn("second", "u", "c", "s")
    assert caught.value.exit_code == -signal.SIGKILL
    assert f"signal {int(signal.SIGKILL)}" in str(caught.value)
    fresh = spawn_body()
    fresh.initialize()
    assert fresh.call_turn("second", "u", "c", "s")["turn"] == 1


def test_requests_the_body_sends_while_a_reply_is_awaited_are_answered_by_the_handler_with_their_own_ids():
    seen = []

    def handler(method, params):
        seen.append((method, dict(params)))
        if method == "sampling/createMessage":
            return {"text": f"thought {params['n']}"}
        raise RpcError(-32601, f"no {method} here")

    with fake("asks", "sampling/createMessage", "roots/list", "sampling/createMessage",
              on_server_request=handler, request_timeout=READY_BOUND) as client:
        replies = client.request("tools/call", {"name": "turn"})["replies"]
        assert client.unmatched == []
    assert seen == [("sampling/createMessage", {"n": 1}), ("roots/list", {"n": 2}),
                    ("sampling/createMessage", {"n": 3})]
    assert [reply["id"] for reply in replies] == ["srv-1", "srv-2", "srv-3"]
    assert replies[0]["result"] == {"text": "thought 1"} and replies[2]["result"] == {"text": "thought 3"}
    assert replies[1]["error"] == {"code": -32601, "message": "no roots/list here"} and "result" not in replies[1]


def test_without_a_handler_a_request_the_body_sends_is_kept_unmatched_as_before():
    with fake("asks", "sampling/createMessage", request_timeout=SHORT_BOUND) as client:
        request_id = client.send_request("tools/call", {"name": "turn"})
        with pytest.raises(BodyTimeout):
            client.wait_response(request_id)
        assert [m.get("method") for m in client.unmatched] == ["sampling/createMessage"]
