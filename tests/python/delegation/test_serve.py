"""`mafiabot-harness serve` driven by the official MCP SDK client against the fake `hermes`.

A scenario about the process runs the real server as a child process (`python -m harness serve`, over
mcp.client.stdio: `served`): its tools listed and a delegation answered over stdio, a restart, a stop or a
kill mid-job, two servers on one project. A scenario about what the tools do runs the same server and jobs
in this process, over the SDK's in-memory streams (`served_in_process`): the SDK's session on both sides
as over stdio, without a Python start and the SDK's import for each (serve's stdio edge is
test_serve_wire.py's). Both with the environment the fixtures built (temporary HERMES_HOME, project root,
fake hermes), inside one bound (SCENARIO_BOUND_S). Waits on the fake go through FIFOs (`gate`), never
sleeps. What is checked is what a host agent's operator relies on: the envelope or a handle within the
caller's bound, the job found again by its handle (after the call gave up, after a restart of the
server), a cancel that kills the whole tree and ledgers it `cancelled`, progress while waiting, 20 jobs
at once.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
import tomllib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.memory import create_client_server_memory_streams

from harness.program import build_parser, main, serve_settings
from harness.serve.server import serving, stop_jobs
from harness.serve.tools import TOOLS
from harness.settings import DATABASE_URL_ENV

from .delegation_support import (
    PROCESS_BOUND_S,
    make_fifo,
    read_ledger,
    release_fifo,
    wait_all_gone,
    wait_fifo,
    wait_gone,
)

SCENARIO_BOUND_S = 120.0
USAGE = {"input": 77, "output": 5, "cost": 0.01}
BRIEF_TOOLS = {"autobot_delegate", "delegation_status", "delegation_result", "delegation_cancel", "autobot_enqueue",
               "queue_status", "agent_dispatch", "autopilot_check", "autopilot_run", "ledger_summary"}
READ_ONLY = {"delegation_status", "delegation_result", "queue_status", "autopilot_check", "ledger_summary"}


def params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "harness", "serve"], env=dict(os.environ))


@asynccontextmanager
async def served() -> AsyncIterator[ClientSession]:
    # errlog given here: the SDK's default is the sys.stderr of when it was imported, which a test's capture
    # may have closed since
    async with stdio_client(params(), errlog=sys.stderr) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def served_in_process(*extra: str) -> AsyncIterator[ClientSession]:
    """`serve *extra`'s server and jobs in this process; its jobs stopped at the end as when stdin closes."""
    server, jobs = serving(serve_settings(build_parser().parse_args(["serve", *extra])))
    try:
        async with create_client_server_memory_streams() as (client, (read, write)), anyio.create_task_group() as group:
            group.start_soon(server.run, read, write, server.create_initialization_options())
            async with ClientSession(*client) as session:
                await session.initialize()
                yield session
            group.cancel_scope.cancel()
    finally:
        await anyio.to_thread.run_sync(stop_jobs, jobs)


def scenario(body: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(SCENARIO_BOUND_S):
            await body()
    anyio.run(bounded)


async def call(session: ClientSession, name: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content
    return dict(result.structured_content)


def gated(fake_hermes, tmp_path: Path, *, hang: bool = False) -> tuple[Path, Path, Path]:
    """Every run announces itself on `started`, then waits for `release` (or forever, with its grandchildren)."""
    started, release, pids = make_fifo(tmp_path / "started"), make_fifo(tmp_path / "release"), tmp_path / "pids.json"
    step: dict[str, Any] = {"usage": USAGE, "gate": {"started": str(started), "release": str(release)}}
    if hang:
        step.update(hang=True, pids_file=str(pids))
    fake_hermes.script(step)
    return started, release, pids


def marker(fake_hermes) -> str:
    return f"FAKE_HERMES_LOG={fake_hermes.log}"


async def hanging_job(session: ClientSession, intent: dict[str, Any], started: Path, pids: Path
                      ) -> tuple[dict[str, Any], list[int]]:
    """Start a delegation whose run hangs with its grandchildren; its handle and the fake's tree, once running."""
    handle = await call(session, "autobot_delegate", intent=intent, wait_seconds=0)
    await anyio.to_thread.run_sync(wait_fifo, started)
    return handle, json.loads(pids.read_text())


def settled_records(project: Path) -> list[dict[str, Any]]:
    return [r for r in read_ledger(project) if r.get("phase") == "settled"]


def test_every_tool_of_the_brief_is_listed_with_schemas_and_honest_annotations(fake_hermes, project) -> None:
    async def body() -> None:
        async with served() as session:
            listed = (await session.list_tools()).tools
        assert {t.name for t in listed} == BRIEF_TOOLS == {spec.name for spec in TOOLS}
        for tool in listed:
            assert tool.input_schema["type"] == "object" and tool.output_schema["type"] == "object"
            assert tool.annotations.read_only_hint is (tool.name in READ_ONLY), tool.name
        delegate_tool = next(t for t in listed if t.name == "autobot_delegate")
        assert set(delegate_tool.input_schema["properties"]["intent"]["required"]) >= {"intent", "project_root"}
    scenario(body)


GATED = "Wait at the gate."
PLAN = ("goal: Prepare the check-in\nmode: sequential\nband: L1\nsubtasks:\n"
        "  - {id: habits, task: List three sleep habits worth keeping., agent: cooper}\n")


def test_every_tool_answers_what_its_advertised_output_schema_describes(fake_hermes, project, make_intent,
                                                                         tmp_path) -> None:
    """Every kind of answer of every tool (envelopes, handles, job views, refusals made before any job) is held to
    the outputSchema the tool lists, by jsonschema beside the SDK client's own check; no schema takes `{}`."""
    started, release = make_fifo(tmp_path / "started"), make_fifo(tmp_path / "release")
    fake_hermes.script({"by_prompt": [{"match": GATED, "steps": [
        {"usage": USAGE, "gate": {"started": str(started), "release": str(release)}}]}], "steps": [{"usage": USAGE}]})
    (project / "plan.yaml").write_text(PLAN)
    answers: dict[str, list[dict[str, Any]]] = {}

    async def body() -> None:
        async with served_in_process() as session:
            schemas = {tool.name: tool.output_schema for tool in (await session.list_tools()).tools}

            async def answer(name: str, **arguments: Any) -> dict[str, Any]:
                document = await call(session, name, **arguments)
                answers.setdefault(name, []).append(document)
                return document

            await answer("autobot_delegate", intent=make_intent())
            await answer("autobot_delegate", intent={"intent": "no project root"})
            handle = await answer("autobot_delegate", intent=make_intent(GATED), wait_seconds=0)
            await anyio.to_thread.run_sync(wait_fifo, started)
            await answer("delegation_status", job_id=handle["job_id"])
            await answer("delegation_result", job_id=handle["job_id"])
            await answer("delegation_cancel", job_id=handle["job_id"])
            await answer("delegation_result", job_id=handle["job_id"])
            await answer("autobot_enqueue", intent=make_intent())
            await answer("autobot_enqueue", intent={"intent": "no project root"})
            await answer("queue_status")
            inputs = {"target": "andy", "task_source": "s", "context": "c", "reference_id": "r"}
            await answer("agent_dispatch", inputs=inputs)
            await answer("agent_dispatch", inputs={**inputs, "target": "nobody"})
            await answer("autopilot_check", plan_file="plan.yaml")
            run = await answer("autopilot_run", plan_file="plan.yaml")
            await answer("delegation_result", job_id=run["job_id"], wait_seconds=45)
            await answer("ledger_summary")
        assert set(answers) == set(schemas) == {spec.name for spec in TOOLS}
        kinds = {(name, document.get("status")) for name, documents in answers.items() for document in documents}
        assert {("autobot_delegate", "ok"), ("autobot_delegate", "degraded"), ("autobot_delegate", "pending"),
                ("delegation_result", "pending"), ("delegation_result", "completed"), ("autobot_enqueue", "queued"),
                ("autobot_enqueue", "degraded"), ("agent_dispatch", "delivered"), ("agent_dispatch", "error"),
                ("autopilot_run", "pending")} <= kinds
        for name, documents in answers.items():
            validator = Draft202012Validator(schemas[name])
            for document in documents:
                assert not list(validator.iter_errors(document)), (name, document)
            assert not validator.is_valid({}), name
    scenario(body)


def test_a_quick_delegation_answers_its_envelope_in_the_same_call_and_is_ledgered_once(
        fake_hermes, project, make_intent) -> None:
    async def body() -> None:
        async with served() as session:
            envelope = await call(session, "autobot_delegate", intent=make_intent())
        assert (envelope["status"], envelope["response"]) == ("ok", "fake answer")
        assert envelope["job_id"].startswith("job-")
        [record] = settled_records(project)
        assert (record["intent_id"], record["status"]) == (envelope["intent_id"], "ok")
    scenario(body)


def test_delegate_returns_a_handle_past_its_bound_then_status_and_result_by_that_handle(
        fake_hermes, project, make_intent, tmp_path) -> None:
    started, release, _ = gated(fake_hermes, tmp_path)

    async def body() -> None:
        async with served_in_process() as session:
            handle = await call(session, "autobot_delegate", intent=make_intent(), wait_seconds=0)
            assert (handle["status"], handle["state"], handle["tool"]) == ("pending", "running", "autobot_delegate")
            await anyio.to_thread.run_sync(wait_fifo, started)
            status = await call(session, "delegation_status", job_id=handle["job_id"])
            assert (status["state"], status["status"]) == ("running", None)
            release_fifo(release)
            envelope = await call(session, "delegation_result", job_id=handle["job_id"], wait_seconds=30)
            assert (envelope["status"], envelope["job_id"]) == ("ok", handle["job_id"])
            status = await call(session, "delegation_status", job_id=handle["job_id"])
            assert (status["state"], status["status"]) == ("settled", "ok")
    scenario(body)


def test_cancel_mid_run_kills_the_fakes_whole_tree_and_ledgers_the_run_cancelled(
        fake_hermes, project, make_intent, tmp_path) -> None:
    started, _, pids = gated(fake_hermes, tmp_path, hang=True)

    async def body() -> None:
        async with served_in_process() as session:
            handle, tree = await hanging_job(session, make_intent(), started, pids)
            envelope = await call(session, "delegation_cancel", job_id=handle["job_id"])
            assert (envelope["status"], envelope["degraded_reason"]) == ("degraded", "cancelled")
            assert all(wait_gone(pid) for pid in tree)
        assert wait_all_gone(marker(fake_hermes)) == []
        [record] = settled_records(project)
        assert (record["status"], record["reason"]) == ("cancelled", "cancelled")
        assert record["usage"]["input_tokens"] == USAGE["input"]
    scenario(body)


def test_cancel_mid_autopilot_run_stops_its_child_and_starts_no_step_after_it(
        fake_hermes, project, tmp_path) -> None:
    started, _, pids = gated(fake_hermes, tmp_path, hang=True)
    (project / "plan.yaml").write_text(
        "goal: Prepare the check-in\nmode: sequential\nband: L1\nsubtasks:\n"
        "  - {id: habits, task: List three sleep habits worth keeping., agent: cooper}\n"
        "  - {id: meals, task: Suggest a breakfast for a long hike., agent: cooper}\n")

    async def body() -> None:
        async with served_in_process() as session:
            handle = await call(session, "autopilot_run", plan_file="plan.yaml", wait_seconds=0)
            await anyio.to_thread.run_sync(wait_fifo, started)
            tree = json.loads(pids.read_text())
            envelope = await call(session, "delegation_cancel", job_id=handle["job_id"])
            assert all(wait_gone(pid) for pid in tree)
        assert (envelope["status"], envelope["stopped_by"]) == ("failed", "delegation_cancel")
        assert [(c["subtask"], c["status"], c["reason"]) for c in envelope["children"]] == [
            ("habits", "cancelled", "cancelled"), ("meals", "skipped", "cancelled")]
        assert wait_all_gone(marker(fake_hermes)) == [] and len(fake_hermes.calls()) == 1
        [record] = settled_records(project)
        assert (record["status"], record["reason"], record["subtask"]) == ("cancelled", "cancelled", "habits")
    scenario(body)


def test_a_waiting_call_sends_progress_naming_its_job_while_the_run_goes_on(
        fake_hermes, project, make_intent, tmp_path) -> None:
    started, release, _ = gated(fake_hermes, tmp_path)
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, _total: float | None, message: str | None) -> None:
        seen.append((progress, message))
        if len(seen) == 1:  # the run is under way: let it finish
            await anyio.to_thread.run_sync(wait_fifo, started)
            release_fifo(release)

    async def body() -> None:
        async with served_in_process() as session:
            result = await session.call_tool("autobot_delegate", {"intent": make_intent(), "wait_seconds": 40},
                                             progress_callback=on_progress)
        assert result.structured_content["status"] == "ok"
        assert seen and seen[0][0] == 0 and result.structured_content["job_id"] in (seen[0][1] or "")
    scenario(body)


def test_a_client_that_gave_up_waiting_still_gets_the_result_by_the_handle_its_progress_named(
        fake_hermes, project, make_intent, tmp_path) -> None:
    started, release, _ = gated(fake_hermes, tmp_path)
    messages: list[str] = []

    async def on_progress(_progress: float, _total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async def body() -> None:
        async with served_in_process() as session:
            with pytest.raises(MCPError):
                await session.call_tool("autobot_delegate", {"intent": make_intent(), "wait_seconds": 40},
                                        read_timeout_seconds=2.0, progress_callback=on_progress)
            job_id = messages[0].split()[1].rstrip(":")
            await anyio.to_thread.run_sync(wait_fifo, started)
            release_fifo(release)
            envelope = await call(session, "delegation_result", job_id=job_id, wait_seconds=30)
        assert (envelope["status"], envelope["response"]) == ("ok", "fake answer")
        assert len(settled_records(project)) == 1
    scenario(body)


def read_lines(path: Path, count: int, bound_s: float = PROCESS_BOUND_S) -> int:
    """Read `count` lines from a FIFO many writers open in turn; the lines read (fewer only at the bound)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    keep_open = os.open(path, os.O_WRONLY)  # no end of file between two writers
    try:
        poller, data = select.poll(), b""
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + bound_s
        while data.count(b"\n") < count and poller.poll(max(0, int((deadline - time.monotonic()) * 1000))):
            data += os.read(fd, 4096)
        return data.count(b"\n")
    finally:
        os.close(keep_open)
        os.close(fd)


def test_twenty_jobs_run_at_once_and_each_is_answered_and_ledgered(fake_hermes, project, make_intent,
                                                                   tmp_path) -> None:
    started, release, _ = gated(fake_hermes, tmp_path)
    jobs = 20

    async def body() -> None:
        async with served_in_process() as session:
            handles: list[dict[str, Any]] = []

            async def start(n: int) -> None:
                handles.append(await call(session, "autobot_delegate", intent=make_intent(f"task {n}"),
                                          wait_seconds=0))
            async with anyio.create_task_group() as group:
                for n in range(jobs):
                    group.start_soon(start, n)
            assert await anyio.to_thread.run_sync(read_lines, started, jobs, 60.0) == jobs  # all 20 running at once
            release_fifo(release)
            results = [await call(session, "delegation_result", job_id=h["job_id"], wait_seconds=45) for h in handles]
        assert [r["status"] for r in results] == ["ok"] * jobs
        assert len({r["intent_id"] for r in results}) == jobs
        assert len(settled_records(project)) == jobs == len(fake_hermes.calls())
    scenario(body)


def test_a_restarted_server_answers_the_jobs_of_the_one_before(fake_hermes, project, make_intent, tmp_path) -> None:
    async def body() -> None:
        async with served() as session:
            done = await call(session, "autobot_delegate", intent=make_intent("done before"))
        async with served() as session:
            again = await call(session, "delegation_result", job_id=done["job_id"])
        assert again == done
    scenario(body)


def test_a_server_stopped_mid_job_ledgers_the_run_cancelled_and_the_next_one_reports_it(
        fake_hermes, project, make_intent, tmp_path) -> None:
    started, _, pids = gated(fake_hermes, tmp_path, hang=True)

    async def body() -> None:
        async with served() as session:
            handle, tree = await hanging_job(session, make_intent(), started, pids)
        assert all(wait_gone(pid) for pid in tree)
        async with served() as session:
            envelope = await call(session, "delegation_result", job_id=handle["job_id"], wait_seconds=30)
        assert (envelope["status"], envelope["degraded_reason"]) == ("degraded", "cancelled")
        [record] = settled_records(project)
        assert (record["intent_id"], record["status"]) == (envelope["intent_id"], "cancelled")
    scenario(body)


def serve_processes(project: Path) -> list[int]:
    """Live `python -m harness serve` processes started for this test (by their working directory)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry.name}/cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
        except OSError:
            continue
        if argv[1:4] == [b"-m", b"harness", b"serve"] and cwd == str(project):
            found.append(int(entry.name))
    return found


def test_a_server_killed_outright_mid_job_is_settled_through_the_journal_by_the_next_one(
        fake_hermes, backend, make_intent, tmp_path, monkeypatch) -> None:
    project = backend.project
    if backend.url is not None:  # the jobs and the ledger in the database: the runner's lock is its session's
        monkeypatch.setenv(DATABASE_URL_ENV, backend.url)
    started, _, pids = gated(fake_hermes, tmp_path, hang=True)

    async def body() -> None:
        async with served() as session:
            handle, tree = await hanging_job(session, make_intent(), started, pids)
            [server] = serve_processes(project)
            os.kill(server, signal.SIGKILL)
            assert wait_gone(server) and all(wait_gone(pid) for pid in tree)
        async with served() as session:
            envelope = await call(session, "delegation_result", job_id=handle["job_id"], wait_seconds=30)
        assert (envelope["status"], envelope["degraded_reason"]) == ("degraded", "orphaned")
        started_record, settled = backend.all_records()
        assert settled["started_record_id"] == started_record["record_id"]
        assert settled["intent_id"] == envelope["intent_id"]
    scenario(body)


def test_bad_arguments_and_unknown_jobs_are_tool_errors_and_an_unknown_tool_a_protocol_error(
        fake_hermes, project) -> None:
    async def body() -> None:
        async with served_in_process() as session:
            bad = await session.call_tool("delegation_status", {"job_id": 5})
            assert bad.is_error and "job_id" in bad.content[0].text
            missing = await session.call_tool("delegation_result", {"job_id": "job-0123456789abcdef"})
            assert missing.is_error and "no job job-0123456789abcdef" in missing.content[0].text
            invalid = await call(session, "autobot_delegate", intent={"intent": "x"})
            assert (invalid["status"], invalid["degraded_reason"]) == ("degraded", "invalid_intent")
            with pytest.raises(MCPError) as unknown:
                await session.call_tool("no_such_tool", {})
            assert unknown.value.code == -32602
        assert fake_hermes.calls() == []
    scenario(body)


def test_enqueue_then_queue_status_and_ledger_summary_through_the_tools(fake_hermes, project, make_intent) -> None:
    async def body() -> None:
        async with served_in_process() as session:
            queued = await call(session, "autobot_enqueue", intent=make_intent())
            state = await call(session, "queue_status")
            summary = await call(session, "ledger_summary")
        assert queued["status"] == "queued"
        assert [(i["item_id"], i["state"]) for i in state["items"]] == [(queued["item_id"], "pending")]
        assert summary["ledger"] == str(project / ".agents" / "state" / "autobot-cost-ledger.jsonl")
    scenario(body)


@pytest.mark.parametrize("client", ["claude-code", "gemini", "codex"])
def test_print_config_gives_each_host_a_server_entry_it_can_parse(client, project, tmp_path, capsys) -> None:
    shared = tmp_path / "shared-plans"
    shared.mkdir()
    assert main(["serve", "--print-config", client, "--project-root", str(project), "--allow-dir", str(shared)]) == 0
    body = capsys.readouterr().out
    entry = (tomllib.loads(body)["mcp_servers"] if client == "codex" else json.loads(body)["mcpServers"])["mafiabot"]
    assert entry["args"] == ["serve", "--project-root", str(project.resolve()), "--allow-dir", str(shared.resolve())]
    assert Path(entry["command"]).name == "mafiabot-harness"


def test_a_host_that_cancels_its_delegate_call_stops_the_job_and_the_run_is_ledgered_cancelled(
        fake_hermes, project, make_intent, tmp_path) -> None:
    started, _, pids = gated(fake_hermes, tmp_path, hang=True)
    job_ids: list[str] = []

    async def on_progress(_progress: float, _total: float | None, message: str | None) -> None:
        job_ids.append((message or "").split()[1].rstrip(":"))

    async def body() -> None:
        async with served_in_process() as session:
            async with anyio.create_task_group() as group:
                async def delegate_call() -> None:
                    await session.call_tool("autobot_delegate", {"intent": make_intent(), "wait_seconds": 40},
                                            progress_callback=on_progress)
                group.start_soon(delegate_call)
                await anyio.to_thread.run_sync(wait_fifo, started)
                tree = json.loads(pids.read_text())
                group.cancel_scope.cancel()  # the SDK sends notifications/cancelled ("caller cancelled")
            envelope = await call(session, "delegation_result", job_id=job_ids[0], wait_seconds=30)
        assert (envelope["status"], envelope["degraded_reason"]) == ("degraded", "cancelled")
        assert all(wait_gone(pid) for pid in tree)
        [record] = settled_records(project)
        assert (record["status"], record["reason"]) == ("cancelled", "cancelled")
    scenario(body)


def test_agent_dispatch_through_the_tool_answers_the_seeds_delivered_envelope(fake_hermes, project) -> None:
    fake_hermes.script({"stdout": "Noted, I will reply by Friday."})

    async def body() -> None:
        async with served_in_process() as session:
            envelope = await call(session, "agent_dispatch", inputs={
                "target": "andy", "task_source": "email-triage", "context": "Offer from ACME",
                "reference_id": "mail-4711"})
            refused = await call(session, "agent_dispatch", inputs={"target": "nobody", "task_source": "x",
                                                                    "context": "y", "reference_id": "z"})
        assert envelope["status"] == "delivered" and envelope["job_id"].startswith("job-")
        assert (refused["status"], refused["code"]) == ("error", "invalid_input")
        [call_made] = fake_hermes.calls()
        assert call_made["profile"] == "career-manager"
    scenario(body)


def test_autopilot_check_then_run_by_handle_through_the_tools(fake_hermes, project) -> None:
    plan = project / "plan.yaml"
    plan.write_text("goal: Prepare the check-in\nmode: sequential\nband: L1\nsubtasks:\n"
                    "  - {id: habits, task: List three sleep habits worth keeping., agent: cooper}\n")

    async def body() -> None:
        async with served_in_process() as session:
            check = await call(session, "autopilot_check", plan_file="plan.yaml")
            handle = await call(session, "autopilot_run", plan_file="plan.yaml")
            envelope = await call(session, "delegation_result", job_id=handle["job_id"], wait_seconds=45)
            bad = await session.call_tool("autopilot_check", {"plan_file": "missing.yaml"})
        assert (check["status"], [p["agent"] for p in check["selection"]]) == ("valid", ["cooper"])
        assert handle["status"] == "pending" and envelope["status"] == "completed"
        assert bad.is_error and "invalid plan" in bad.content[0].text
    scenario(body)


def test_a_second_server_on_the_same_project_sees_the_first_ones_job_but_leaves_its_cancel_to_it(
        fake_hermes, backend, make_intent, tmp_path, monkeypatch) -> None:
    if backend.url is not None:  # the jobs in the database: the second server might be on another machine
        monkeypatch.setenv(DATABASE_URL_ENV, backend.url)
    started, release, _ = gated(fake_hermes, tmp_path)

    async def body() -> None:
        async with served() as first, served() as second:
            handle = await call(first, "autobot_delegate", intent=make_intent(), wait_seconds=0)
            await anyio.to_thread.run_sync(wait_fifo, started)
            status = await call(second, "delegation_status", job_id=handle["job_id"])
            assert (status["state"], status["served_here"]) == ("running", False)
            refused = await second.call_tool("delegation_cancel", {"job_id": handle["job_id"]})
            assert refused.is_error and "another serve process" in refused.content[0].text
            release_fifo(release)
            envelope = await call(second, "delegation_result", job_id=handle["job_id"], wait_seconds=30)
        assert envelope["status"] == "ok" and len(backend.settled()) == 1
    scenario(body)


def test_a_job_file_that_is_a_fifo_or_a_device_is_an_unreadable_job_answered_at_once(fake_hermes, project) -> None:
    jobs = project / ".agents" / "state" / "serve-jobs"
    jobs.mkdir(parents=True)
    make_fifo(jobs / "job-0000000000000001.json")
    (jobs / "job-0000000000000002.json").symlink_to("/dev/zero")

    async def body() -> None:
        async with served() as session:
            with anyio.fail_after(PROCESS_BOUND_S):  # the read used to wait for a writer to the FIFO
                for job_id, kind in (("job-0000000000000001", "a FIFO"), ("job-0000000000000002", "a character device")):
                    for tool in ("delegation_status", "delegation_result", "delegation_cancel"):
                        answer = await session.call_tool(tool, {"job_id": job_id})
                        assert answer.is_error and f"is not a regular file ({kind})" in answer.content[0].text, tool
    scenario(body)


def test_queue_status_and_ledger_summary_hand_a_host_bounded_lists_and_the_whole_counts(fake_hermes, project) -> None:
    state = project / ".agents" / "state"
    state.mkdir(parents=True)
    failures = 1500
    (state / "autobot-cost-ledger.jsonl").write_text("".join(
        json.dumps({"v": 1, "record_id": f"rec-{n:04d}", "ts": "2026-12-01T00:00:00.000Z", "kind": "delegation",
                    "status": "degraded", "reason": "provider_error", "detail": "HTTP 503 " * 50,
                    "intent_id": f"intent-{n:04d}"}) + "\n" for n in range(failures)))
    done = state / "autobot-queue" / "done"
    done.mkdir(parents=True)
    for n in range(150):
        (done / f"20261201T000000{n:06d}-0000.json").write_text(json.dumps(
            {"item_id": f"item-{n:03d}", "intent": {"intent": "Summarise the notes."}, "attempts": 1, "history": []}))

    async def body() -> None:
        async with served() as session:
            summary = await call(session, "ledger_summary")
            wider = await call(session, "ledger_summary", max_failures=1000)
            queue = await call(session, "queue_status")
            none = await call(session, "queue_status", max_items=0)
            too_many = await session.call_tool("ledger_summary", {"max_failures": 1001})
        assert [f["record_id"] for f in summary["failures"]] == [f"rec-{n:04d}" for n in range(1480, 1500)]
        assert (summary["failures_total"], summary["total"]["failed"], len(wider["failures"])) == (1500, 1500, 1000)
        assert [i["item_id"] for i in queue["items"]] == [f"item-{n:03d}" for n in range(100)]
        assert (queue["items_total"], queue["counts"]["done"], none["items"]) == (150, 150, [])
        assert too_many.is_error and "max_failures" in too_many.content[0].text
    scenario(body)


def test_ledger_summary_bounds_its_groups_runs_and_failure_texts_and_keeps_the_whole_totals(project) -> None:
    """A ledger of 400 runs on 400 days, each its own tag, half of them started and never settled, and 300
    settlements of runs it does not hold: the host gets the groups that tell most, the newest runs and
    failures, each failure's text cut, and every count whole."""
    state = project / ".agents" / "state"
    state.mkdir(parents=True)
    day = [f"{2025 + n // 336}-{1 + n // 28 % 12:02d}-{1 + n % 28:02d}" for n in range(400)]
    lines = []
    for n in range(400):
        settled = {"v": 1, "record_id": f"rec-{n:03d}", "ts": f"{day[n]}T00:00:00.000Z", "kind": "delegation",
                   "status": "ok" if n % 2 else "failed", "reason": "provider_error", "detail": "HTTP 503 " * 200,
                   "intent_id": f"intent-{n:03d}", "tags": [f"tag-{n:03d}"] + (["nightly"] if n < 200 else [])}
        lines.append(settled)
        if n < 200:
            lines.append({"v": 1, "record_id": f"start-{n:03d}", "ts": f"{day[n]}T00:00:00.000Z",
                          "kind": "delegation", "status": "started", "hermes_run": f"run-{n:03d}"})
    lines += [{"v": 1, "record_id": f"orphan-{n:03d}", "ts": "2026-12-01T00:00:00.000Z", "kind": "delegation",
               "status": "ok", "started_record_id": f"gone-{n:03d}", "intent_id": f"late-{n:03d}"}
              for n in range(300)]
    (state / "autobot-cost-ledger.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))

    async def body() -> None:
        async with served_in_process() as session:
            summary = await call(session, "ledger_summary", max_groups=5, max_failures=3)
            none = await call(session, "ledger_summary", max_groups=0, max_failures=0)
            too_many = await session.call_tool("ledger_summary", {"max_groups": 1001})
        assert summary["total"]["calls"] == none["total"]["calls"] == 700
        assert summary["by_groups_total"]["tag"] == 402 and summary["by_groups_total"]["day"] == 401
        # the untagged settlements are 300 calls, nightly 200, every other tag one: the least names of the ties
        assert list(summary["by"]["tag"]) == ["(none)", "nightly", "tag-000", "tag-001", "tag-002"]
        assert summary["by"]["tag"]["nightly"]["calls"] == 200
        assert list(summary["by"]["day"]) == [*day[396:], "2026-12-01"]
        assert summary["by"]["day"]["2026-12-01"]["calls"] == 300
        assert (summary["failures_total"], [f["what"] for f in summary["failures"]]) == (
            200, ["intent-394", "intent-396", "intent-398"])
        assert all(len(f["detail"]) <= 300 and f["detail"].endswith("[cut: 1800 characters in all]")
                   for f in summary["failures"])
        runs = summary["runs"]
        assert (runs["started"], runs["open_total"], runs["unmatched_total"], runs["duplicated_total"]) == (
            200, 200, 300, 0)
        assert (runs["open"], runs["unmatched"]) == (
            ["run-197", "run-198", "run-199"], ["orphan-297", "orphan-298", "orphan-299"])
        assert (none["by"], none["failures"], none["runs"]["open"]) == ({d: {} for d in summary["by"]}, [], [])
        assert len(json.dumps(summary)) < 6000
        assert too_many.is_error and "max_groups" in too_many.content[0].text
    scenario(body)
