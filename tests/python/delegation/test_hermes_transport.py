"""The Hermes transport against a scripted fake `hermes`: command line, verdicts, reasons, accounting, kills."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.hermes import HermesTransport, InvalidRunRequest, RunOutcome, RunRequest, TransportSettings
from harness.hermes.command import build_argv, display_argv, prompt_room

from .delegation_support import PROCESS_BOUND_S, make_fifo, release_fifo, wait_gone


def run(prompt: str = "do the thing", **fields) -> RunOutcome:
    fields.setdefault("profile", "tester")
    fields.setdefault("provider", "minimax")
    fields.setdefault("model", "MiniMax-M3")
    fields.setdefault("timeout_s", 30.0)
    settings = fields.pop("settings", TransportSettings())
    return HermesTransport(settings).run(RunRequest(prompt=prompt, **fields))


# -- the command line -------------------------------------------------------------------------

def test_chat_command_line_has_the_contract_shape_with_every_value_in_one_element() -> None:
    request = RunRequest(prompt="-p ghost --continue x", profile="tester", provider="minimax", model="MiniMax-M3",
                         session="my session", toolsets=("todo",), max_turns=5)
    argv = build_argv(Path("/bin/hermes"), request, None)
    assert argv == ["/bin/hermes", "--profile", "tester", "--provider=minimax", "--model=MiniMax-M3",
                    "--toolsets=todo", "chat", "--quiet", "--query=-p ghost --continue x", "--source=tool",
                    "--no-restore-cwd", "--continue=my session", "--max-turns=5"]
    assert "<prompt: 21 chars>" in display_argv(argv)


def test_oneshot_command_line_asks_for_a_usage_file() -> None:
    request = RunRequest(prompt="hi", profile=None, provider="minimax", model="M", mode="oneshot")
    argv = build_argv(Path("hermes"), request, Path("/tmp/u.json"))
    assert argv == ["hermes", "--profile", "default", "--provider=minimax", "--model=M", "--oneshot=hi",
                    "--usage-file=/tmp/u.json"]


@pytest.mark.parametrize("fields, bad", [
    ({"profile": "Bad Name"}, "profile"), ({"timeout_s": 0}, "timeout_s"), ({"timeout_s": True}, "timeout_s"),
    ({"mode": "oneshot", "session": "s"}, "session"), ({"prompt": "a\0b"}, "prompt"),
    ({"toolsets": ("a b",)}, "toolsets"), ({"max_turns": 0}, "max_turns"), ({"env": {"1X": "y"}}, "env"),
])
def test_a_bad_request_field_is_refused_by_name(fields: dict, bad: str) -> None:
    with pytest.raises(InvalidRunRequest) as caught:
        RunRequest(**{"prompt": "hi", **fields})
    # A field inside a list or a mapping is named to its element, as every model names it (`toolsets[0]`).
    assert re.fullmatch(rf"{bad}(\[\d+\]|\..*)?", caught.value.field), caught.value.field


def test_a_bad_request_value_is_never_quoted_back() -> None:
    marker = "given-text-marker"
    for fields in ({"profile": marker.upper()}, {"toolsets": (f"{marker} x",)}, {"session": f"{marker}\n{marker}"},
                   {"env": {"X": f"{marker}\0"}}):
        with pytest.raises(InvalidRunRequest) as caught:
            RunRequest(**{"prompt": "hi", **fields})
        assert marker.lower() not in str(caught.value).lower(), caught.value


def test_a_request_built_is_frozen_and_its_env_cannot_change() -> None:
    request = RunRequest(prompt="hi", env={"A": "b"}, timeout_s=3)
    assert request.timeout_s == 3.0 and dict(request.env) == {"A": "b"}
    with pytest.raises(TypeError):
        request.env["A"] = "c"  # type: ignore[index]
    with pytest.raises(ValidationError):
        request.prompt = "other"  # type: ignore[misc]


# -- success and accounting -------------------------------------------------------------------

def test_success_reports_the_answer_and_hermes_own_token_figures(fake_hermes, hermes_root: Path) -> None:
    fake_hermes.script({"stdout": "the answer", "usage": {"input": 321, "output": 54, "cost": 0.0042}})
    outcome = run()
    assert outcome.ok and outcome.reason is None and outcome.text == "the answer"
    assert (outcome.usage.source, outcome.usage.input_tokens, outcome.usage.output_tokens) == ("hermes_state_db", 321, 54)
    assert outcome.usage.cost_usd == pytest.approx(0.0042)
    assert (outcome.answered_provider, outcome.answered_model) == ("minimax", "MiniMax-M3")
    assert outcome.session_id and outcome.session_id.startswith("fake_")


def test_the_child_runs_marked_as_delegated_in_the_resolved_home_and_a_private_directory(fake_hermes,
                                                                                       hermes_root: Path) -> None:
    run(env={"FAKE_MARK": "parent-7"})
    call = fake_hermes.calls()[0]
    assert call["env"] == {"HERMES_HOME": str(hermes_root), "HERMES_AUTOBOT_DELEGATED": "1", "FAKE_MARK": "parent-7"}
    assert call["profile"] == "tester" and call["prompt"] == "do the thing"
    assert "hermes-cwd-" in call["cwd"] and not Path(call["cwd"]).exists()


def test_oneshot_mode_reads_the_usage_file(fake_hermes) -> None:
    fake_hermes.script({"stdout": "short", "usage": {"input": 7, "output": 3}})
    outcome = run(mode="oneshot")
    assert outcome.ok and outcome.usage.source == "hermes_usage_file" and outcome.usage.input_tokens == 7


def test_a_run_without_any_record_is_ok_but_its_usage_is_marked_as_an_estimate(fake_hermes) -> None:
    fake_hermes.script({"stdout": "answer", "record": "none"})
    outcome = run(prompt="x" * 400)
    assert outcome.ok and outcome.usage.source == "estimate" and outcome.usage.input_tokens == 100
    assert any(w.startswith("hermes_record_missing") for w in outcome.warnings)


# -- failures, one reason each ----------------------------------------------------------------

@pytest.mark.parametrize("step, reason, retryable", [
    ({"stdout": "API call failed after 1 retries: HTTP 500: boom", "record": "failed"}, "provider_error", True),
    ({"stdout": "API call failed after 1 retries: Connection error.", "exit": 1}, "provider_error", True),
    ({"stdout": "HTTP 401: invalid api key", "exit": 1}, "auth_failed", False),
    ({"stdout": "No usable credentials found for provider 'minimax'. Set MINIMAX_API_KEY.", "exit": 1,
      "record": "none"}, "no_minimax_key", False),
    ({"stdout": "It looks like Hermes isn't configured yet -- no API keys or providers found.", "exit": 1,
      "record": "none"}, "no_minimax_key", False),
    ({"stdout": "No session found matching 'nightly'.", "exit": 1, "record": "none"}, "session_not_found", False),
    ({"stdout": "", "record": "ok"}, "empty_output", False),
    ({"stdout": "something odd", "exit": 3, "record": "none"}, "hermes_exit_3", False),
])
def test_each_failure_gets_its_specific_reason(fake_hermes, step: dict, reason: str, retryable: bool) -> None:
    fake_hermes.script(step)
    outcome = run()
    assert (outcome.ok, outcome.reason, outcome.retryable) == (False, reason, retryable)


def test_oneshot_exit_0_with_an_error_on_stdout_is_a_failure_because_the_usage_file_says_so(fake_hermes) -> None:
    fake_hermes.script({"stdout": "API call failed after 1 retries: Connection error.", "record": "failed"})
    outcome = run(mode="oneshot")
    assert outcome.exit_code == 0 and not outcome.ok and outcome.reason == "provider_error"


def test_a_bare_hermes_error_line_without_a_record_is_not_taken_for_an_answer(fake_hermes) -> None:
    fake_hermes.script({"stdout": "API call failed after 3 retries: HTTP 503: busy", "record": "none"})
    assert run().reason == "provider_error"


def test_an_answer_that_quotes_an_error_is_still_an_answer(fake_hermes) -> None:
    fake_hermes.script({"stdout": "The log said HTTP 401: unauthorized, then recovered."})
    assert run().ok


def test_another_model_answering_is_a_provider_fallback_failure(fake_hermes) -> None:
    fake_hermes.script({"stdout": "answer", "routes": [["openrouter", "gpt-x"]]})
    outcome = run()
    assert not outcome.ok and outcome.reason == "provider_fallback" and "openrouter/gpt-x" in outcome.detail


def test_two_models_answering_one_run_is_a_provider_fallback_failure(fake_hermes) -> None:
    fake_hermes.script({"stdout": "answer", "routes": [["minimax", "MiniMax-M3"], ["anthropic", "claude"]]})
    assert run().reason == "provider_fallback"


def test_a_profile_with_a_fallback_chain_is_refused_before_spawning(fake_hermes, hermes_root: Path) -> None:
    (hermes_root / "profiles" / "tester" / "config.yaml").write_text(
        "fallback_providers:\n  - {provider: openrouter, model: some/other}\n")
    outcome = run()
    assert outcome.reason == "provider_fallback" and outcome.usage.source == "not_run"
    assert fake_hermes.calls() == []


def test_a_profile_answering_with_its_configured_model_is_not_a_fallback(fake_hermes, hermes_root: Path) -> None:
    (hermes_root / "profiles" / "career-manager" / "config.yaml").write_text(
        "model: {provider: minimax, default: MiniMax-M3}\n")
    outcome = run(profile="career-manager", provider=None, model=None)
    assert outcome.ok


def test_a_missing_profile_is_reported_without_spawning_hermes(fake_hermes) -> None:
    outcome = run(profile="ghost")
    assert outcome.reason == "profile_not_found" and fake_hermes.calls() == []


def test_a_missing_executable_is_hermes_not_found(tmp_path: Path, hermes_root: Path) -> None:
    outcome = run(settings=TransportSettings(hermes_bin=tmp_path / "nope"))
    assert outcome.reason == "hermes_not_found" and "nope" in outcome.detail


def test_hermes_is_found_on_path_when_nothing_names_it(fake_hermes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MAFIABOT_HERMES")
    monkeypatch.setenv("PATH", str(fake_hermes.executable.parent))
    assert run().ok


def test_a_prompt_too_large_for_one_argument_is_refused_before_spawning(fake_hermes) -> None:
    assert run(prompt="é" * (prompt_room() // 2)).ok
    outcome = run(prompt="x" * (prompt_room() + 1))
    assert outcome.reason == "prompt_too_large" and len(fake_hermes.calls()) == 1


def test_a_timeout_kills_hermes_and_every_descendant_even_in_another_session(fake_hermes, tmp_path: Path) -> None:
    pids_file = tmp_path / "pids.json"
    fake_hermes.script({"hang": True, "pids_file": str(pids_file)})
    outcome = run(timeout_s=1.5)
    assert (outcome.ok, outcome.reason, outcome.retryable) == (False, "hermes_timeout_1.5s", True)
    pids = json.loads(pids_file.read_text())
    assert [wait_gone(pid) for pid in pids] == [True, True, True]
    assert outcome.usage.source == "estimate"


def test_an_output_past_the_cap_is_cut_off_and_reported(fake_hermes) -> None:
    fake_hermes.script({"huge": 4 << 20})
    outcome = run(settings=TransportSettings(max_output_bytes=1 << 20))
    assert outcome.reason == "output_too_large"


def test_a_huge_output_under_the_cap_arrives_whole(fake_hermes) -> None:
    fake_hermes.script({"huge": 4 << 20})
    outcome = run()
    assert outcome.ok and len(outcome.text) == 4 << 20


def test_a_profile_config_that_is_a_fifo_is_not_waited_on(fake_hermes, hermes_root: Path) -> None:
    config = hermes_root / "profiles" / "tester" / "config.yaml"
    config.unlink()
    make_fifo(config)
    finished: list[RunOutcome] = []
    runner = threading.Thread(target=lambda: finished.append(run()), daemon=True)
    runner.start()
    runner.join(PROCESS_BOUND_S)
    waited = runner.is_alive()
    if waited:
        release_fifo(config)  # lets the stuck read end, so the thread does not outlive the test
        runner.join(PROCESS_BOUND_S)
    assert not waited, f"the run's preflight waited on the FIFO for {PROCESS_BOUND_S:g} s"
    assert finished[0].ok and len(fake_hermes.calls()) == 1
