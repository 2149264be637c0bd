"""Faults of the process and its pipes: the body dies, its stdin ends early, its stdout goes away,
its client stops reading. None of them may hang anything or spin a CPU.

Tests that need a client which really stops reading (or closes stdout) drive the body with bare
`subprocess` pipes: the harness's client reads stdout whenever it waits on the body, so it
cannot produce those faults.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import subprocess
from pathlib import Path

import pytest

from harness.body import BodyOptions
from harness.client import BodyClient, encode_message
from harness.errors import BodyDied
from support import turn_arguments

# The body leaves within milliseconds of EOF; the MCP shutdown sequence waits 2 s.
EXIT_BOUND = 5.0
# A clean exit costs ~10 ms of CPU; a body spinning on a dead pipe for EXIT_BOUND would burn
# seconds. Half a second separates the two on any machine.
CPU_SPIN_LIMIT = 0.5
# How long the test's own client waits for room in the body's stdin before it gives up.
CLIENT_WRITE_TIMEOUT = 1.0
# A turn the body reads in many chunks (its stdin pipe holds 64 KiB).
BIG_INPUT_BYTES = 3 * 1024 * 1024
# Requests the stalled client tries to send (~160 B each): more than the body reads in one
# 64 KiB chunk plus the 64 KiB stdin pipe, and their ~8 kB replies far more than the
# 64 KiB stdout pipe holds.
STALL_REQUESTS = 2_000
READ_CHUNK = 1 << 16
INITIALIZE = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}\n'


def raw_body(body_exe: Path) -> subprocess.Popen[bytes]:
    """The body on bare pipes (stderr discarded), nothing sent yet."""
    argv = BodyOptions(body=body_exe, no_soul=True).argv()
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def turn_request(request_id: int) -> bytes:
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"turn","arguments":'
            b'{"input":"what is the moon?","uid":"u","channel":"c","server":"s"}}}\n' % request_id)


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reap_with_cpu(proc: subprocess.Popen[bytes]) -> tuple[int, float]:
    """(exit status, CPU seconds the process used), waiting at most EXIT_BOUND."""
    before = children_cpu_seconds()
    status = proc.wait(timeout=EXIT_BOUND)
    return status, children_cpu_seconds() - before


def write_until_stalled(proc: subprocess.Popen[bytes], requests: list[bytes]) -> int:
    """Write requests without reading; returns how many went out before a write timed out."""
    fd = proc.stdin.fileno()
    os.set_blocking(fd, False)
    data, sent = b"".join(requests), 0
    while sent < len(data):
        _, writable, _ = select.select([], [fd], [], CLIENT_WRITE_TIMEOUT)
        if not writable:
            break
        try:
            sent += os.write(fd, data[sent:])
        except BlockingIOError:
            continue  # select raced with the body's read: ask again
    return data[:sent].count(b"\n")


def read_lines(proc: subprocess.Popen[bytes], count: int) -> list[bytes]:
    """Exactly `count` lines from stdout, each read bounded by EXIT_BOUND."""
    fd, buffer, lines = proc.stdout.fileno(), b"", []
    while len(lines) < count:
        readable, _, _ = select.select([fd], [], [], EXIT_BOUND)
        assert readable, f"only {len(lines)} of {count} replies arrived"
        chunk = os.read(fd, READ_CHUNK)
        assert chunk, f"stdout ended after {len(lines)} of {count} replies"
        *whole, buffer = (buffer + chunk).split(b"\n")
        lines += whole
    assert buffer == b"" and len(lines) == count
    return lines


def test_a_body_killed_mid_turn_is_reported_as_died_and_a_fresh_body_serves_the_next_turn(spawn_body):
    client = spawn_body()
    client.initialize()
    arguments = turn_arguments(input="moon " * (BIG_INPUT_BYTES // 5))
    request = encode_message({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                              "params": {"name": "turn", "arguments": arguments}})
    # All of the turn but its LF: the body holds most of it and cannot answer it, so the kill
    # lands mid-turn however the machine schedules the two (sending the LF raced the reply).
    client.send_raw(request[:-1])
    client.signal(signal.SIGKILL)
    with pytest.raises(BodyDied) as died:
        client.wait_response(1)
    assert died.value.exit_code == -signal.SIGKILL
    assert "signal 9" in str(died.value)
    fresh = spawn_body()
    fresh.initialize()
    assert fresh.call_turn("are you there?", "u", "c", "s")["turn"] == 1


def test_stdin_closed_in_the_middle_of_a_message_ends_the_body_with_status_0(spawn_body):
    client = spawn_body()
    client.initialize()
    client.send_raw(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"turn","argu')
    client.close_stdin()
    assert client.wait_exit(EXIT_BOUND) == 0
    leftovers = [line for line in client.read_until_eof(EXIT_BOUND).split(b"\n") if line]
    assert all(line.startswith(b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,') for line in leftovers), leftovers
    assert len(leftovers) <= 1


def stall(proc: subprocess.Popen[bytes]) -> int:
    """Send turns until the body blocks writing replies nobody reads; how many were sent."""
    requests = [INITIALIZE] + [turn_request(n) for n in range(1, STALL_REQUESTS)]
    sent = write_until_stalled(proc, requests)
    assert sent < len(requests), "the body never blocked: the pipes held every reply"
    return sent


def test_a_body_whose_stdout_the_client_closed_exits_with_status_0_without_spinning(body_exe):
    proc = raw_body(body_exe)
    proc.stdout.close()
    proc.stdin.write(INITIALIZE + turn_request(1))
    proc.stdin.flush()
    status, cpu = reap_with_cpu(proc)
    assert status == 0
    assert cpu < CPU_SPIN_LIMIT, f"the body used {cpu:.2f} s of CPU on a closed stdout"


def test_a_client_that_stops_reading_stalls_only_its_own_writes_and_every_reply_comes_once_it_reads(body_exe):
    proc = raw_body(body_exe)
    try:
        sent = stall(proc)
        assert proc.poll() is None
        os.set_blocking(proc.stdin.fileno(), True)
        replies = read_lines(proc, sent)
        assert [line.split(b",", 2)[1] for line in replies] == [b'"id":%d' % n for n in range(sent)]
        proc.stdin.close()
        status, cpu = reap_with_cpu(proc)
        assert status == 0
        assert cpu < CPU_SPIN_LIMIT, f"{cpu:.2f} s of CPU: the body spun while its stdout was full"
    finally:
        proc.kill()
        proc.wait(timeout=EXIT_BOUND)


def test_a_body_blocked_writing_to_a_client_that_goes_away_exits_with_status_0(body_exe):
    proc = raw_body(body_exe)
    stall(proc)
    proc.stdout.close()
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the body already left: closing was all that was asked
    status, cpu = reap_with_cpu(proc)
    assert status == 0
    assert cpu < CPU_SPIN_LIMIT, f"{cpu:.2f} s of CPU: the body spun while its stdout was full"


def test_sigterm_ends_a_body_blocked_writing_to_a_client_that_stopped_reading(body_exe):
    proc = raw_body(body_exe)
    try:
        stall(proc)
        proc.send_signal(signal.SIGTERM)
        status, _ = reap_with_cpu(proc)
        assert status == 0
    finally:
        proc.kill()
        proc.wait(timeout=EXIT_BOUND)


def test_the_harness_reports_a_body_that_dies_between_turns_on_the_next_request(spawn_body):
    client = spawn_body()
    client.initialize()
    assert client.call_turn("first", "u", "c", "s")["turn"] == 1
    client.signal(signal.SIGKILL)
    with pytest.raises(BodyDied):
        client.call_turn("second", "u", "c", "s")


def test_a_client_closing_with_requests_unread_gets_a_clean_exit_from_the_mcp_shutdown(body_exe, tmp_path):
    options = BodyOptions(body=body_exe, no_soul=True)
    with BodyClient.from_options(options, stderr_log=tmp_path / "body.stderr") as client:
        client.initialize()
        for _ in range(20):
            client.send_request("tools/call", {"name": "turn", "arguments": turn_arguments()})
        assert client.close() == 0
