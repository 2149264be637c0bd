"""`mafiabot-harness serve` on a hostile wire, driven through real pipes by a raw client (no SDK on our side).

What is checked is what a host relies on whatever it sends: each line of the body's hostile corpus
(tests/corpus/hostile.py) gets the outcome serve's screen promises (`SERVE_OUTCOMES` says where it
differs from the body's, and why), and serve still answers `ping` after it; a line past the 4 MiB cap is
answered and drained; floods of notifications cost nothing that stays; 100 waits on one job leave status
and cancel answering; SIGTERM, SIGINT and SIGHUP end serve with stdin still open, its jobs ledgered.
Every wait is bounded (READ_BOUND_S, PROCESS_BOUND_S); the bounds are loose, speed is bench/'s business.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.serve.server import CancelReasons
from harness.serve.wire import MAX_DEPTH, MAX_LINE_BYTES, LineReader, Oversized, Rejection, screen
from support import load_corpus

from .delegation_support import PROCESS_BOUND_S, make_fifo, read_ledger, wait_fifo, wait_gone
from .test_serve import call, served_in_process

hostile = load_corpus()
INVALID_REQUEST, PARSE_ERROR, SILENT = hostile.INVALID_REQUEST, hostile.PARSE_ERROR, hostile.SILENT
Case, Outcome, error, result = hostile.Case, hostile.Outcome, hostile.error, hostile.result
# A bound on a hang, not a timing: serve answers its first line only after importing the MCP SDK, which on a
# machine at load 10 took more than 10 s.
READ_BOUND_S = 60.0
# Where serve's outcome differs from the body's, and why: serve parses before it screens (Python's
# parser, then the SDK's model), so an id it could read is echoed (the host's waiting call ends), and it
# holds ids to MCP's integer-or-string as the SDK does; its caps are fixed (no --max-elements option:
# the 4 MiB line cap bounds the elements).
SERVE_OUTCOMES: dict[str, Any] = {
    "lone_high_surrogate_escape": error(PARSE_ERROR, b"1"),
    "lone_low_surrogate_escape": error(PARSE_ERROR, b"1"),
    "reversed_surrogate_pair_escape": error(PARSE_ERROR, b"1"),
    "nesting_65_deep": error(INVALID_REQUEST, b"1"),
    "negative_zero_id": result(b"0"),  # -0 is the integer 0
    "exponent_id": error(INVALID_REQUEST),  # 1e3 is a float in JSON's data model, not an MCP id
    "too_many_elements": None,
    "oversized_line": None,  # the cap is 4 MiB here: its own test below
    "oversized_invalid_utf8_line": None,
    "line_of_exactly_the_cap_is_accepted": None,
}
EXTRA_CASES = [
    Case("id_zero", hostile.ping(id_raw=b"0"), result(b"0")),
    Case("id_string", hostile.ping(id_raw=b'"p-1"'), result(b'"p-1"')),
    Case("id_float", hostile.ping(id_raw=b"1.5"), error(INVALID_REQUEST)),
    Case("truncated_tool_call", b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deleg',
         error(PARSE_ERROR)),
    Case("surrogate_in_a_tool_argument", b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":'
         b'"delegation_status","arguments":{"job_id":"\\ud800"}}}', error(PARSE_ERROR, b"3")),
    Case("nesting_300_deep_in_a_tool_call", b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":'
         b'"delegation_status","arguments":{"job_id":' + b"[" * 300 + b"]" * 300 + b"}}}",
         error(INVALID_REQUEST, b"4")),
    Case("progress_for_nothing", hostile.P + b'"method":"notifications/progress","params":{"progressToken":1,'
         b'"progress":1}}', SILENT),
]
CASES = [Case(c.name, c.line, SERVE_OUTCOMES.get(c.name, c.expect)) for c in hostile.CASES
         if SERVE_OUTCOMES.get(c.name, c.expect) is not None] + EXTRA_CASES


class RawServe:
    """`python -m harness serve` over plain pipes: bytes in, lines out, stderr to a file."""

    def __init__(self, cwd: Path, stderr: Path) -> None:
        self.stderr_path = stderr
        self._stderr = stderr.open("wb")
        self.process = subprocess.Popen([sys.executable, "-m", "harness", "serve"], cwd=cwd, env=dict(os.environ),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr)
        self._buffer = b""
        self._next_id = 1000

    def send(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def read_line(self, bound_s: float = READ_BOUND_S) -> bytes | None:
        """The next line on stdout, or None if none came within the bound."""
        assert self.process.stdout is not None
        fd, deadline = self.process.stdout.fileno(), time.monotonic() + bound_s
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def request(self, method: str, params: dict[str, Any] | None = None, bound_s: float = READ_BOUND_S
                ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode())
        line = self.read_line(bound_s)
        assert line is not None, f"no answer to {method} within {bound_s} s"
        reply = json.loads(line)
        assert reply["id"] == self._next_id, reply
        return dict(reply)

    def initialize(self) -> dict[str, Any]:
        reply = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "raw", "version": "0"}})
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return reply

    def call(self, name: str, bound_s: float = 60.0, **arguments: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments}, bound_s)["result"]

    def assert_serving(self, after: str) -> None:
        reply = self.request("ping")
        assert reply["result"] == {}, f"after {after}: {reply}"

    def close(self, bound_s: float = PROCESS_BOUND_S) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(bound_s)
        finally:
            self._stderr.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(PROCESS_BOUND_S)
        self._stderr.close()


@pytest.fixture
def raw_serve(project: Path, tmp_path: Path):
    started: list[RawServe] = []

    def start() -> RawServe:
        server = RawServe(project, tmp_path / f"serve-{len(started)}.stderr")
        started.append(server)
        return server
    yield start
    for server in started:
        server.kill()


def check_outcome(server: RawServe, case: Case) -> None:
    server.send(case.line)
    expect = case.expect
    if expect.kind == "silent":
        server.assert_serving(case.name)
        return
    line = server.read_line()
    assert line is not None, f"{case.name}: no reply within {READ_BOUND_S} s"
    reply = json.loads(line)
    assert reply["id"] == (None if expect.id_raw is None else json.loads(expect.id_raw)), (case.name, reply)
    if expect.kind == "result":
        assert "result" in reply and "error" not in reply, (case.name, reply)
    elif expect.kind == "error":
        assert reply["error"]["code"] == expect.code, (case.name, reply)
        assert reply["error"]["message"], reply
    server.assert_serving(case.name)


def test_every_hostile_line_gets_its_outcome_through_one_server_which_keeps_serving(raw_serve, fake_hermes) -> None:
    server = raw_serve()
    server.initialize()
    for case in CASES:
        check_outcome(server, case)
    assert server.close() == 0
    logged = server.stderr_path.read_text()
    # Every error but -32601 (the SDK's own answer to an unknown method) comes from serve's screen.
    refused = [c for c in CASES if c.expect.kind == "error" and c.expect.code != hostile.METHOD_NOT_FOUND]
    assert logged.count("mafiabot-harness serve: answered a line") == len(refused)
    assert "Traceback" not in logged


def test_a_line_past_the_cap_is_answered_drained_and_the_next_line_served(raw_serve, fake_hermes) -> None:
    server = raw_serve()
    server.initialize()
    server.send(hostile.ping(params=b'{"pad":"' + b"x" * MAX_LINE_BYTES + b'"}'))
    line = server.read_line()
    assert line is not None
    reply = json.loads(line)
    assert (reply["id"], reply["error"]["code"]) == (None, INVALID_REQUEST)
    assert str(MAX_LINE_BYTES) in reply["error"]["message"]
    server.assert_serving("a line past the cap")
    exact = hostile.padded_ping(MAX_LINE_BYTES)
    server.send(exact)
    assert json.loads(server.read_line() or b"null") == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_flood_of_notifications_and_unknown_cancels_leaves_serve_answering_ping(raw_serve, fake_hermes) -> None:
    server = raw_serve()
    server.initialize()
    flood = b"".join(hostile.P + b'"method":"notifications/cancelled","params":{"requestId":%d}}\n' % n
                     + hostile.P + b'"method":"notifications/whatever"}\n' for n in range(20_000))
    assert server.process.stdin is not None
    server.process.stdin.write(flood)
    server.assert_serving("40,000 notifications")
    assert server.read_line(0.5) is None  # none of them was answered


def test_cancels_of_ids_no_call_waits_on_keep_nothing() -> None:
    reasons = CancelReasons()

    class Params:
        reason = "caller cancelled"

        def __init__(self, request_id: int) -> None:
            self.request_id = request_id

    async def body() -> None:
        with reasons.expecting(7):
            for n in range(10_000):
                await reasons.received(None, Params(n))  # type: ignore[arg-type]
            assert len(reasons) == 1 and not await reasons.gave_up_waiting(7)
        assert len(reasons) == 0
    anyio.run(body)


def test_the_screen_holds_the_body_caps_and_never_hands_a_bad_line_on() -> None:
    assert not isinstance(screen(hostile.nested_params(MAX_DEPTH)), Rejection)
    deep = screen(hostile.nested_params(MAX_DEPTH + 1))
    assert isinstance(deep, Rejection) and (deep.code, deep.request_id) == (INVALID_REQUEST, 1)
    assert screen(b"  \r") is None
    notification = screen(hostile.P + b'"method":"notifications/initialized","params":[]}')
    assert isinstance(notification, Rejection) and not notification.answered
    reader = LineReader(cap=8)
    assert list(reader.feed(b"12345678\n123")) == [b"12345678"]
    assert [type(x) for x in reader.feed(b"456789")] == [Oversized]
    assert list(reader.feed(b"xx\nok\n")) == [b"ok"]
    assert list(reader.feed(b"tail")) == [] and list(reader.end()) == [b"tail"]


def test_the_server_reports_the_package_version_and_makes_no_jobs_folder_without_a_job(
        raw_serve, fake_hermes, project) -> None:
    server = raw_serve()
    info = server.initialize()["result"]["serverInfo"]
    assert info["name"] == "mafiabot-harness" and info["version"] not in ("", "(not installed)")
    assert server.call("ledger_summary")["isError"] is False
    assert server.close() == 0
    assert not (project / ".agents" / "state" / "serve-jobs").exists()


def test_a_project_root_that_is_a_file_or_missing_is_a_one_line_tool_error(raw_serve, fake_hermes, project) -> None:
    server = raw_serve()
    server.initialize()
    regular = project / "plain.txt"
    regular.write_text("x")
    stateless = project / "stateless"  # its state folder is a file: no queue or ledger can be there
    stateless.mkdir()
    (stateless / ".agents").write_text("x")
    for tool, root in [(tool, root) for tool in ("ledger_summary", "queue_status") for root in (regular, stateless)]:
        answer = server.call(tool, project_root=str(root))
        assert answer["isError"] is True, answer
        [text] = answer["content"]
        assert "not a directory" in text["text"].lower() and "\n" not in text["text"]
    for tool in ("ledger_summary", "queue_status"):  # a typo is no empty project: nothing is shown, nothing made
        answer = server.call(tool, project_root=str(project / "missing"))
        assert answer["isError"] is True and "does not exist" in answer["content"][0]["text"], answer
    assert not (project / "missing").exists()
    assert server.close() == 0
    assert "Traceback" not in server.stderr_path.read_text()


def hanging_job(server: RawServe, fake_hermes, make_intent, tmp_path: Path) -> tuple[str, list[int]]:
    started, pids = make_fifo(tmp_path / "started"), tmp_path / "pids.json"
    fake_hermes.script({"hang": True, "pids_file": str(pids), "gate": {"started": str(started),
                                                                        "release": str(make_fifo(tmp_path / "r"))}})
    handle = server.call("autobot_delegate", intent=make_intent(), wait_seconds=0)["structuredContent"]
    wait_fifo(started)
    return handle["job_id"], json.loads(pids.read_text())


STATUS_BEHIND_WAITS_BOUND_S = 25.0


def test_a_hundred_waits_on_one_job_leave_status_and_cancel_answering(
        raw_serve, fake_hermes, project, make_intent, tmp_path) -> None:
    server = raw_serve()
    server.initialize()
    job_id, tree = hanging_job(server, fake_hermes, make_intent, tmp_path)
    waits = 100
    for n in range(waits):
        server.send(json.dumps({"jsonrpc": "2.0", "id": f"wait-{n}", "method": "tools/call", "params": {
            "name": "delegation_result", "arguments": {"job_id": job_id, "wait_seconds": 45}}}).encode())
    # Loose, and still under what a status held behind the waits took when each wait held one of the 40
    # worker threads (29-39 s with 60 waits).
    status = server.call("delegation_status", bound_s=STATUS_BEHIND_WAITS_BOUND_S, job_id=job_id)
    assert status["structuredContent"]["state"] == "running"
    cancels = 50  # more than anyio's 40 worker threads: a cancel's wait for the settling holds none
    for n in range(cancels):
        server.send(json.dumps({"jsonrpc": "2.0", "id": f"cancel-{n}", "method": "tools/call", "params": {
            "name": "delegation_cancel", "arguments": {"job_id": job_id}}}).encode())
    answers: dict[Any, dict[str, Any]] = {}
    while len(answers) < waits + cancels:
        line = server.read_line(STATUS_BEHIND_WAITS_BOUND_S)
        assert line is not None, f"{len(answers)} of {waits + cancels} answers came"
        reply = json.loads(line)
        answers[reply["id"]] = reply
    for n in range(cancels):
        cancelled = answers[f"cancel-{n}"]["result"]["structuredContent"]
        assert cancelled["degraded_reason"] == "cancelled" and "cancelled by delegation_cancel" in cancelled["detail"]
    assert {answers[f"wait-{n}"]["result"]["structuredContent"]["degraded_reason"] for n in range(waits)} == {
        "cancelled"}
    assert all(wait_gone(pid) for pid in tree)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_with_stdin_open_stops_the_job_ledgers_it_and_exits_128_plus_n(
        raw_serve, fake_hermes, project, make_intent, tmp_path, signum) -> None:
    server = raw_serve()
    server.initialize()
    job_id, tree = hanging_job(server, fake_hermes, make_intent, tmp_path)
    server.process.send_signal(signum)  # stdin stays open
    assert server.process.wait(PROCESS_BOUND_S) == 128 + signum
    assert all(wait_gone(pid) for pid in tree)
    [settled] = [r for r in read_ledger(project) if r.get("phase") == "settled"]
    assert settled["status"] == "cancelled"
    assert f"cancelled by {signum.name}" in job_envelope(job_id)["detail"]


def job_envelope(job_id: str) -> dict[str, Any]:
    """The settled envelope of a job, as a new server reads it (in this process: what is read is the job
    the stopped server left on disk, not serve's wire)."""
    async def read() -> dict[str, Any]:
        async with served_in_process() as session:
            return await call(session, "delegation_result", job_id=job_id)
    return anyio.run(read)


def test_a_job_stopped_because_stdin_closed_says_so(raw_serve, fake_hermes, project, make_intent, tmp_path) -> None:
    server = raw_serve()
    server.initialize()
    job_id, tree = hanging_job(server, fake_hermes, make_intent, tmp_path)
    assert server.close() == 0
    assert all(wait_gone(pid) for pid in tree)
    envelope = job_envelope(job_id)
    assert envelope["degraded_reason"] == "cancelled"
    assert "cancelled by serve stopping: its stdin closed" in envelope["detail"], envelope["detail"]


def test_requests_written_before_stdin_closes_are_all_answered(project, fake_hermes) -> None:
    # The SDK cancels what it is still handling when its input ends: the transport holds the end back
    # until every request it handed on is answered (a host that writes its requests, then closes).
    def request(request_id: int, method: str, params: dict[str, Any]) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"
    lines = [request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                       "clientInfo": {"name": "raw", "version": "0"}}),
             b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
             *[request(n, "tools/call", {"name": "ledger_summary", "arguments": {}}) for n in range(1, 6)],
             request(6, "tools/list", {})]
    run = subprocess.run([sys.executable, "-m", "harness", "serve"], cwd=project, input=b"".join(lines),
                         capture_output=True, timeout=PROCESS_BOUND_S, check=False)
    replies = [json.loads(line) for line in run.stdout.splitlines()]
    assert sorted(r["id"] for r in replies) == list(range(7)), run.stderr.decode()[-2000:]
    assert all("result" in r for r in replies), replies
    assert run.returncode == 0


def test_a_stdin_the_loop_cannot_poll_is_read_all_the_same(project, fake_hermes, tmp_path) -> None:
    # A regular file: epoll refuses it, and a read never blocks on it.
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b'{"jsonrpc":"2.0","id":2,"method":"pi\n' + hostile.ping(id_raw=b"1.5") + b"\n"
                         + hostile.ping(id_raw=b"7", params=b'{"s":"\\ud800"}'))  # the last line without newline
    with requests.open("rb") as stdin:
        run = subprocess.run([sys.executable, "-m", "harness", "serve"], cwd=project, stdin=stdin,
                             capture_output=True, timeout=PROCESS_BOUND_S, check=False)
    replies = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(r["id"], r["error"]["code"]) for r in replies] == [(None, PARSE_ERROR), (None, INVALID_REQUEST),
                                                                (7, PARSE_ERROR)]
    assert run.returncode == 0
    empty = subprocess.run([sys.executable, "-m", "harness", "serve"], cwd=project, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=PROCESS_BOUND_S, check=False)
    assert (empty.returncode, empty.stdout) == (0, b"")


def test_an_autopilot_job_running_when_stdin_closes_neither_keeps_serve_alive_nor_stays_pending(
        raw_serve, fake_hermes, project, tmp_path) -> None:
    started, pids = make_fifo(tmp_path / "started"), tmp_path / "pids.json"
    fake_hermes.script({"hang": True, "pids_file": str(pids), "gate": {"started": str(started),
                                                                        "release": str(make_fifo(tmp_path / "r"))}})
    (project / "plan.yaml").write_text("goal: Prepare the check-in\nmode: sequential\nband: L1\nsubtasks:\n"
                                       "  - {id: habits, task: List three sleep habits worth keeping., agent: cooper}\n")
    server = raw_serve()
    server.initialize()
    handle = server.call("autopilot_run", plan_file="plan.yaml")["structuredContent"]
    wait_fifo(started, what="the auto-pilot child's Hermes start")
    tree = json.loads(pids.read_text())
    # Its shutdown bound (10 s) and the supervisors' sweep, on a loaded machine.
    assert server.close(bound_s=3 * PROCESS_BOUND_S) == 0, "serve outlived its shutdown bound with a job running"
    assert all(wait_gone(pid) for pid in tree)
    # The run's own stop reached its child: the job settled itself, its child's run ledgered cancelled.
    envelope = job_envelope(handle["job_id"])
    assert (envelope["status"], envelope["stopped_by"]) == ("failed", "serve stopping: its stdin closed"), envelope
    assert [(c["status"], c["reason"]) for c in envelope["children"]] == [("cancelled", "cancelled")]
    [settled] = [r for r in read_ledger(project) if r.get("phase") == "settled"]
    assert (settled["status"], settled["reason"]) == ("cancelled", "cancelled")
