"""The client's own behaviour: timeouts, death, id matching, long lines, stderr separation, shutdown.

Most tests here drive a fake body (tests/python/fake_body.py) so they need no Ada build.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

from harness.client import BodyClient
from harness.errors import BodyDied, BodyTimeout, HarnessError

FAKE = str(Path(__file__).with_name("fake_body.py"))
# Short enough to keep the suite fast, long enough that a loaded machine starts Python in time
# for the tests that expect an answer.
SHORT_BOUND = 0.5


# A Python child starts in well under a second even on a loaded machine.
READY_BOUND = 10.0


def fake(mode: str, *args: str, **kwargs) -> BodyClient:
    return BodyClient([sys.executable, FAKE, mode, *args], **kwargs).start()


def test_a_body_that_never_answers_raises_body_timeout_within_the_bound():
    never_answers = [sys.executable, "-c", "import sys; sys.stdin.buffer.read()"]
    client = BodyClient(never_answers, request_timeout=SHORT_BOUND).start()
    try:
        started = time.monotonic()
        with pytest.raises(BodyTimeout) as caught:
            client.ping()
        elapsed = time.monotonic() - started
        assert SHORT_BOUND <= elapsed < SHORT_BOUND + 1.0
        assert "ping" in str(caught.value) and "0.5 s" in str(caught.value)
    finally:
        assert client.close() == 0


def test_a_body_dying_mid_request_raises_body_died_with_exit_code_and_stderr_tail():
    client = fake("die")
    with pytest.raises(BodyDied) as caught:
        client.ping()
    assert caught.value.exit_code == 3
    assert "fake body: boom" in caught.value.stderr_tail
    assert "exit code 3" in str(caught.value) and "ping" in str(caught.value)
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


def test_stderr_goes_to_the_log_not_the_protocol_stream(tmp_path):
    log = tmp_path / "body.stderr"
    with fake("echo", stderr_log=log) as client:
        for _ in range(20):
            assert client.ping() == {}
        assert client.unmatched == []
    assert "noise on stderr" in log.read_text()
    assert "noise on stderr" in client.stderr_text()


def test_a_reply_line_of_several_megabytes_is_read_whole():
    with fake("long", str(6_000_000)) as client:
        assert len(client.request("big")["blob"]) == 6_000_000


def test_close_escalates_to_sigkill_for_a_body_that_ignores_eof_and_sigterm():
    client = fake("stubborn")
    assert client.read_message(timeout=READY_BOUND, awaiting="the stubborn fake's ready")["method"] == "ready"
    started = time.monotonic()
    assert client.close(stdin_grace=0.2, term_grace=0.2) == -signal.SIGKILL
    assert time.monotonic() - started < 0.2 + 0.2 + 2.0


def test_close_is_idempotent_and_safe_before_start():
    assert BodyClient([sys.executable, FAKE, "echo"]).close() is None
    client = fake("echo")
    assert client.close() == 0
    assert client.close() == 0


def test_a_missing_executable_is_a_harness_error(tmp_path):
    with pytest.raises(HarnessError):
        BodyClient([str(tmp_path / "no-such-body")]).start()


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
