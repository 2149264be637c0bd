"""What `serve` reads and hands back: files a host names stay under the project (or a folder the operator
allowed), no error quotes a file, and the host's arguments (toolsets, provider) reach Hermes as given.

Driven by the official SDK client through serve's server and jobs in this process (`served_in_process` of
test_serve.py: what the tools do; serve's stdio edge is test_serve_wire.py's), against the fake `hermes`. The
secret is a Hermes home's `.env`, the file a host agent would be pointed at.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from harness.program import main

from .test_serve import call, scenario, served_in_process

SECRET = "OPENAI_API_KEY=sk-live-0123456789abcdef"  # noqa: S105 - the bait a test must never see again
PLAN = ("goal: Prepare the check-in\nmode: sequential\nband: L1\nsubtasks:\n"
        "  - {id: habits, task: List three sleep habits worth keeping., agent: cooper}\n")


async def refusal(session: ClientSession, tool: str, **arguments: Any) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result.content
    return str(result.content[0].text)


@pytest.fixture
def secret_env(hermes_root: Path) -> Path:
    env = hermes_root / ".env"
    env.write_text(f"{SECRET}\nMINIMAX_API_KEY=mm-secret-42\n")
    return env


def test_a_plan_file_outside_the_project_is_refused_by_its_path_and_its_content_never_comes_back(
        fake_hermes, project, secret_env) -> None:
    (project / "linked.yaml").symlink_to(secret_env)

    async def body() -> None:
        async with served_in_process() as session:
            said = {tool: await refusal(session, tool, plan_file=str(secret_env))
                    for tool in ("autopilot_check", "autopilot_run")}
            said["passwd"] = await refusal(session, "autopilot_check", plan_file="/etc/passwd")
            said["symlink"] = await refusal(session, "autopilot_check", plan_file="linked.yaml")
            said["dotdot"] = await refusal(session, "autopilot_check", plan_file=f"../{secret_env.parent.name}/.env")
        for case, text in said.items():
            assert "outside the folders this server reads" in text, case
            assert "sk-" not in text and "root:" not in text and "mm-secret" not in text, (case, text)
        assert str(secret_env) in said["symlink"]  # resolved before the check: the real target is named
        assert fake_hermes.calls() == []
    scenario(body)


def test_a_secret_file_inside_the_project_named_as_a_plan_is_refused_without_quoting_it(
        fake_hermes, project) -> None:
    (project / ".env").write_text(f"{SECRET}\n")
    (project / "broken.yaml").write_text(f"goal: [{SECRET}\n")
    (project / "keyed.json").write_text(json.dumps({"goal": SECRET, "subtasks": [{"id": SECRET, "task": "x"}]}))
    (project / "banded.yaml").write_text(f"goal: x\nsubtasks: [a]\nband: {SECRET}\n")
    (project / "agented.yaml").write_text(f"goal: x\nsubtasks: [a]\ndefault_agent: {SECRET}\n")

    async def body() -> None:
        async with served_in_process() as session:
            texts = [await refusal(session, "autopilot_check", plan_file=name)
                     for name in (".env", "broken.yaml", "keyed.json", "banded.yaml", "agented.yaml")]
        for text in texts:
            assert "invalid plan" in text and "sk-" not in text, text
        assert "line 2 column 1" in texts[1]
    scenario(body)


def test_an_operators_allowed_folder_is_readable_and_still_no_other(fake_hermes, project, tmp_path,
                                                                     secret_env) -> None:
    shared = tmp_path / "shared-plans"
    shared.mkdir()
    (shared / "plan.yaml").write_text(PLAN)

    async def body() -> None:
        async with served_in_process("--allow-dir", str(shared)) as session:
            check = await call(session, "autopilot_check", plan_file=str(shared / "plan.yaml"))
            refused = await refusal(session, "autopilot_check", plan_file=str(secret_env))
        async with served_in_process() as session:
            unallowed = await refusal(session, "autopilot_check", plan_file=str(shared / "plan.yaml"))
        assert check["status"] == "valid"
        assert "outside" in refused and "sk-" not in refused and str(shared) in refused
        assert "outside" in unallowed
    scenario(body)


def test_an_intent_whose_root_or_targets_lie_outside_is_invalid_and_nothing_is_read_or_run(
        fake_hermes, project, make_intent, secret_env) -> None:
    async def body() -> None:
        async with served_in_process() as session:
            rooted = await call(session, "autobot_delegate",
                                intent={**make_intent(), "project_root": str(secret_env.parent)})
            targeted = await call(session, "autobot_delegate", intent=make_intent(target_paths=[str(secret_env)]))
            queued = await call(session, "autobot_enqueue", intent=make_intent(target_paths=["/etc/passwd"]))
        for envelope, field in ((rooted, "project_root"), (targeted, "target_paths[0]"),
                                (queued, "target_paths[0]")):
            assert (envelope["degraded_reason"], envelope["field"]) == ("invalid_intent", field), envelope
            assert "sk-" not in json.dumps(envelope)
        assert fake_hermes.calls() == []
    scenario(body)


def test_toolsets_given_as_a_json_list_reach_hermes(fake_hermes, project, make_intent) -> None:
    async def body() -> None:
        async with served_in_process() as session:
            envelope = await call(session, "autobot_delegate", intent=make_intent(), toolsets=["todo", "web"])
            refused = await call(session, "autobot_delegate", intent=make_intent(), toolsets=["terminal"])
        assert envelope["status"] == "ok", envelope
        [made] = fake_hermes.calls()
        assert made["flags"]["toolsets"] == "todo,web"
        assert refused["degraded_reason"] == "invalid_intent" and "read-only" in refused["detail"]
    scenario(body)


def test_payload_provider_reaches_hermes_and_the_seeds_minimax_is_the_default(fake_hermes, project,
                                                                                make_intent) -> None:
    async def body() -> None:
        async with served_in_process() as session:
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            named = await call(session, "autobot_delegate",
                               intent=make_intent(provider="openrouter", model="some/model"))
            default = await call(session, "autobot_delegate", intent=make_intent(intent="Another task."))
            bad = await call(session, "autobot_delegate", intent=make_intent(provider="Not A Provider"))
        schema = listed["autobot_delegate"].input_schema
        assert schema["$defs"]["Payload"]["properties"]["provider"]["default"] == "minimax"
        assert schema["properties"]["toolsets"]["type"] == "array"
        assert (named["status"], default["status"]) == ("ok", "ok"), (named, default)
        assert (named["answered_by"]["provider"], default["answered_by"]["provider"]) == ("openrouter", "minimax")
        assert [(c["flags"]["provider"], c["flags"]["model"]) for c in fake_hermes.calls()] == [
            ("openrouter", "some/model"), ("minimax", "MiniMax-M3")]
        assert (bad["degraded_reason"], bad["field"]) == ("invalid_intent", "payload.provider")
    scenario(body)


def hundred_kb() -> str:
    return "".join(f"line {n:05d} of a long answer\n" for n in range(100_000 // 28 + 1))[:100_000]


def test_a_100_kb_answer_reaches_the_host_cut_to_max_chars_and_is_kept_whole_in_a_file(
        fake_hermes, project, make_intent, tmp_path) -> None:
    answer = hundred_kb()
    fake_hermes.script({"stdout": answer})
    plan = project / "plan.yaml"
    plan.write_text(PLAN.replace("band: L1", "band: L2"))

    async def body() -> None:
        async with served_in_process() as session:
            delegated = await call(session, "autobot_delegate", intent=make_intent(max_chars=4000))
            defaulted = await call(session, "autobot_delegate", intent=make_intent(intent="Once more."))
            dispatched = await call(session, "agent_dispatch", max_chars=4000, inputs={
                "target": "andy", "task_source": "email-triage", "context": "Offer", "reference_id": "m-1"})
            handle = await call(session, "autopilot_run", plan_file="plan.yaml", max_chars=4000)
            piloted = await call(session, "delegation_result", job_id=handle["job_id"], wait_seconds=45)
        for envelope in (delegated, defaulted):
            assert envelope["status"] == "ok", envelope
            assert len(envelope["response"]) <= 4000 and envelope["response_cut"] is True
            assert envelope["response_chars"] == len(answer) and str(len(answer)) in envelope["response"]
            assert answer.startswith(envelope["response"].split("\n…[cut")[0])
            assert Path(envelope["response_file"]).read_text() == answer
            assert Path(envelope["response_file"]).is_relative_to(project / ".agents" / "state")
        reply = dispatched["transport"]["details"]
        assert len(reply["reply"]) <= 4000 and reply["reply_chars"] == len(answer)
        assert Path(reply["reply_file"]).read_text() == answer
        [child] = piloted["children"]
        assert len(child["answer"]) <= 4000 and child["answer_truncated"] is True
        assert Path(child["answer_file"]).read_text() == answer
        assert len(json.dumps(delegated)) < 20_000
    scenario(body)


@pytest.mark.parametrize("client", ["claude-code", "gemini", "codex"])
def test_print_config_is_the_file_alone_with_the_named_hermes_home_in_its_env(
        client, project, tmp_path, capsys, monkeypatch) -> None:
    exported, named = tmp_path / "exported-home", tmp_path / "named-home"
    monkeypatch.setenv("HERMES_HOME", str(exported))
    entries = []
    for extra in ([], ["--hermes-home", str(named)]):
        assert main(["serve", "--print-config", client, "--project-root", str(project), *extra]) == 0
        printed = capsys.readouterr()
        document = tomllib.loads(printed.out) if client == "codex" else json.loads(printed.out)
        entries.append(document["mcp_servers" if client == "codex" else "mcpServers"]["mafiabot"])
        assert "mafiabot-harness serve: the" in printed.err and printed.out.lstrip()[0] in "{["
    assert [entry["env"]["HERMES_HOME"] for entry in entries] == [str(exported), str(named)]
    monkeypatch.delenv("HERMES_HOME")
    assert main(["serve", "--print-config", client, "--project-root", str(project)]) == 0
    out = capsys.readouterr().out
    bare = (tomllib.loads(out)["mcp_servers"] if client == "codex" else json.loads(out)["mcpServers"])["mafiabot"]
    assert "HERMES_HOME" not in bare.get("env", {})


def test_queue_status_and_ledger_summary_read_no_project_outside_the_allowed_folders(fake_hermes, project,
                                                                                     tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".agents" / "state").mkdir(parents=True)

    async def body() -> None:
        async with served_in_process() as session:
            texts = [await refusal(session, tool, project_root=str(elsewhere))
                     for tool in ("queue_status", "ledger_summary")]
            inside = await call(session, "ledger_summary", project_root=str(project))
        assert all("outside the folders this server reads" in text for text in texts), texts
        assert inside["ledger"].startswith(str(project))
    scenario(body)
