"""agent-dispatch against the fake `hermes`: the seed's envelopes, codes, retryable flags, prompt, ledger.

Its ledgering holds for both stores (`backend`: the project's file, a PostgreSQL database)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.exit_codes import ExitCode
from harness.dispatch import DispatchSettings, dispatch, load_registry, parse_context
from harness.dispatch.dispatch import MAX_CONTEXT_CHARS
from harness.dispatch.registry import RegistryError
from harness.ledger import default_ledger_path

from .delegation_support import read_ledger

SUCCESS_KEYS = ["status", "timestamp", "transport", "transport_message_id", "target", "task_source", "reference_id"]
ERROR_KEYS = ["status", "timestamp", "code", "message", "retryable", "details", "target", "task_source",
              "reference_id"]


def inputs(**changes) -> dict:
    return {"target": "andy", "task_source": "email-triage",
            "context": "Maxime replied with scoring feedback on the weekly job hunt email",
            "reference_id": "artifact_123456", **changes}


def settings(project: Path, **changes) -> DispatchSettings:
    return DispatchSettings(ledger_path=default_ledger_path(project), **changes)


def test_a_delivered_dispatch_has_the_seed_envelope_and_the_target_profile(fake_hermes, project, backend) -> None:
    fake_hermes.script({"stdout": "Noted; triaging now."})
    result = dispatch(inputs(target="  Andy "), settings(project, database=backend.url))
    envelope = result.envelope
    assert list(envelope) == SUCCESS_KEYS and result.status == "delivered"
    assert (envelope["status"], envelope["target"], envelope["transport"]["name"]) == (
        "delivered", "andy", "hermes-profile-query")
    details = envelope["transport"]["details"]
    assert details["profile"] == "career-manager" and details["reply"] == "Noted; triaging now."
    assert envelope["transport_message_id"] == details["session_id"]
    assert fake_hermes.calls()[0]["profile"] == "career-manager"
    [record] = backend.settled()
    assert (record["kind"], record["status"], record["target"], record["reference_id"]) == (
        "dispatch", "delivered", "andy", "artifact_123456")
    assert [r["status"] for r in backend.all_records()] == ["started", "delivered"]


def test_the_delegation_prompt_has_the_seed_shape(fake_hermes, project) -> None:
    dispatch(inputs(context={"title": "Lab results", "metadata": {"deadline": "2026-04-21"}}, target="cooper",
                    task_source="external-system"), settings(project))
    assert fake_hermes.calls()[0]["prompt"] == (
        "Delegated task from MARS.\ntarget=cooper\ntask_source=external-system\nreference_id=artifact_123456\n"
        'context={"title":"Lab results","metadata":{"deadline":"2026-04-21"}}\n\n'
        "Fetch the full artifact using reference_id if needed, process it using your own workflow, and reply "
        "with a concise summary.\n")


@pytest.mark.parametrize("changes, field", [
    ({"target": "bob"}, "target"), ({"target": None}, "target"), ({"task_source": ""}, "task_source"),
    ({"reference_id": "has space"}, "reference_id"), ({"context": ["list"]}, "context"),
    ({"context": "x" * (MAX_CONTEXT_CHARS + 1)}, "context"), ({"extra": 1}, "extra"),
])
def test_invalid_input_is_an_error_envelope_naming_the_field_and_nothing_runs(fake_hermes, project, changes,
                                                                              field) -> None:
    result = dispatch(inputs(**changes), settings(project))
    assert list(result.envelope) == ERROR_KEYS and result.status == "invalid_input"
    assert (result.envelope["code"], result.envelope["retryable"], result.envelope["details"]["field"]) == (
        "invalid_input", False, field)
    assert fake_hermes.calls() == [] and read_ledger(project) == []


@pytest.mark.parametrize("step, code, retryable", [
    ({"stdout": "API call failed after 1 retries: HTTP 502: bad gateway", "exit": 1}, "transport_error", True),
    ({"stdout": "HTTP 401: unauthorized", "exit": 1}, "auth_error", False),
    ({"stdout": "", "exit": 0}, "transport_error", False),
    ({"stdout": "odd", "exit": 9, "record": "none"}, "transport_error", False),
])
def test_transport_failures_map_to_seed_codes_with_retryable_only_for_transient_causes(
        fake_hermes, project, step, code, retryable) -> None:
    fake_hermes.script(step)
    result = dispatch(inputs(), settings(project))
    assert (result.envelope["status"], result.envelope["code"], result.envelope["retryable"]) == (
        "error", code, retryable)
    assert result.status == "error" and read_ledger(project)[0]["code"] == code


def test_a_missing_profile_is_not_found(fake_hermes, project, hermes_root) -> None:
    (hermes_root / "profiles" / "career-manager" / "config.yaml").unlink()
    (hermes_root / "profiles" / "career-manager").rmdir()
    envelope = dispatch(inputs(), settings(project)).envelope
    assert (envelope["code"], envelope["retryable"], envelope["details"]["reason"]) == (
        "not_found", False, "profile_not_found")


def test_a_hung_query_is_a_retryable_timeout(fake_hermes, project, tmp_path) -> None:
    fake_hermes.script({"hang": True, "pids_file": str(tmp_path / "pids")})
    envelope = dispatch(inputs(), settings(project, timeout_s=1.0)).envelope
    assert (envelope["code"], envelope["retryable"]) == ("timeout", True)


def test_a_nested_dispatch_is_refused_and_ledgered(fake_hermes, project, backend, monkeypatch) -> None:
    monkeypatch.setenv("HERMES_AUTOBOT_DELEGATED", "1")
    envelope = dispatch(inputs(), settings(project, database=backend.url)).envelope
    assert envelope["details"]["reason"] == "nested_delegation" and fake_hermes.calls() == []
    assert [r["reason"] for r in backend.settled()] == ["nested_delegation"]


def test_a_registry_file_names_targets_and_their_toolsets(fake_hermes, project, tmp_path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text("sender: HOST\nagents:\n  Scout: {profile: tester, good_at: [research], toolsets: [web]}\n")
    registry = load_registry(path)
    dispatch(inputs(target="SCOUT"), settings(project, registry=registry))
    call = fake_hermes.calls()[0]
    assert call["profile"] == "tester" and call["flags"]["toolsets"] == "web"
    assert call["prompt"].startswith("Delegated task from HOST.\ntarget=scout\n")


@pytest.mark.parametrize("text, problem", [
    ("agents: {}\n", "agents: must name at least one agent"),
    ("agents: {a: {profile: 'Bad Profile'}}\n", "agents.a.profile: is not a Hermes profile name"),
    ("agents: {a: b, A: c}\n", "listed twice"), ("agents: {a: b}\ncolour: red\n", "colour: is not a known field"),
    ("agents: {a: b}\nagents: {c: d}\n", "a key appears twice in one mapping"),
    ("agents: {a: {profile: b, max_turns: '3'}}\n", "agents.a.max_turns: must be an integer, got string"),
    ("agents: {a: {profile: b, max_turns: 251}}\n", "agents.a.max_turns: must be at most 250"),
])
def test_a_bad_registry_is_refused_naming_the_key(tmp_path, text, problem) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(text)
    with pytest.raises(RegistryError, match=problem):
        load_registry(path)


def test_a_context_that_looks_like_json_must_be_a_json_object() -> None:
    assert parse_context('{"snippet": "s"}') == {"snippet": "s"}
    assert parse_context("plain words") == "plain words"


def test_the_dispatch_command_reads_an_input_file_and_exits_by_outcome(fake_hermes, project, tmp_path,
                                                                       capsys) -> None:
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"skill": "agent-dispatch", "inputs": inputs(target="cooper")}))
    assert main(["dispatch", "--input-file", str(path), "--compact"]) == 0
    assert json.loads(capsys.readouterr().out)["transport"]["details"]["profile"] == "health-coach"
    assert main(["dispatch", "--target", "nobody", "--task-source", "s", "--context", "c",
                 "--reference-id", "r"]) == ExitCode.INVALID_INPUT
    assert json.loads(capsys.readouterr().out)["code"] == "invalid_input"
    assert main(["dispatch", "--target", "andy", "--task-source", "s", "--context", "{broken",
                 "--reference-id", "r"]) == ExitCode.INVALID_INPUT
