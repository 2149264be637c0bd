"""The real Hermes Agent (hermes-agent 0.19.0 in .hermes-venv), offline, against the stub model on loopback.

`--provider minimax` with MINIMAX_BASE_URL pointed at stubs/model_server.py: a delegation and a dispatch
run for real against a stub that answers, and again against a stub that was started and then stopped
(its port now refuses connections). Each Hermes run costs 3-9 s (a dead endpoint adds Hermes's own 4 s
recovery pause), so the four runs go in parallel, once, in a module fixture shared by the assertions.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from harness.autobot import AutobotSettings, delegate
from harness.dispatch import DispatchSettings, dispatch
from harness.hermes import TransportSettings
from harness.ledger import Ledger, default_ledger_path

REPO = Path(__file__).resolve().parents[3]
HERMES = REPO / ".hermes-venv" / "bin" / "hermes"
STUB = REPO / "stubs" / "model_server.py"
# The stub binds and prints its port in well under a second; a Hermes run here takes 3-8 s, retries off.
STUB_START_BOUND_S = 20.0
HERMES_RUN_TIMEOUT_S = 90
STUB_SCRIPT = {"model": "MiniMax-M3", "usage": {"prompt_tokens": 321, "completion_tokens": 45},
               "replies": [{"text": "# Stub summary\nEverything is in order."}]}
# No toolchain probe: as in hermes_support.offline_config, whose docstring says why.
PROFILE_CONFIG = ("model: {provider: minimax, default: MiniMax-M3}\n"
                  "agent: {api_max_retries: 0, environment_probe: false}\nsecurity: {tirith_enabled: false}\n")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not HERMES.exists(), reason=f"real Hermes not installed at {HERMES} (`make hermes`)")]


class Stub:
    def __init__(self, root: Path, name: str) -> None:
        script = root / "script.json"
        script.write_text(json.dumps(STUB_SCRIPT))
        self.log = root / f"{name}-requests.jsonl"
        self.process = subprocess.Popen([sys.executable, str(STUB), "--script", str(script), "--port", "0",
                                         "--log", str(self.log), "--max-seconds", "300"],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], STUB_START_BOUND_S)
        line = self.process.stdout.readline().decode() if ready else ""
        if "listening on" not in line:
            self.stop()
            raise AssertionError(f"stub model did not start within {STUB_START_BOUND_S:g} s: {line!r}")
        self.base_url = line.split("listening on", 1)[1].strip()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(STUB_START_BOUND_S)

    def agent_requests(self) -> list[dict[str, Any]]:
        lines = [json.loads(x) for x in self.log.read_text().splitlines()] if self.log.exists() else []
        return [x["body"] for x in lines if isinstance(x.get("body"), dict) and x["body"].get("stream")]


def transport_for(root: Path, hermes_root: Path, stub: Stub) -> TransportSettings:
    env = {k: v for k, v in os.environ.items() if k != "HERMES_AUTOBOT_DELEGATED"}
    env.update(HOME=str(root / "home"), HERMES_HOME=str(hermes_root), MINIMAX_API_KEY="dummy",
               MINIMAX_BASE_URL=stub.base_url)
    return TransportSettings(hermes_bin=HERMES, environ=env, work_dir=root / "work")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("real-hermes")
    hermes_root, project = root / "hermes", root / "project"
    for profile in ("tester", "career-manager"):
        (hermes_root / "profiles" / profile).mkdir(parents=True)
        (hermes_root / "profiles" / profile / "config.yaml").write_text(PROFILE_CONFIG)
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "notes.md").write_text("The nightly build passed; two flaky tests were retried.\n")
    (root / "home").mkdir()
    live, dead = Stub(root, "live"), Stub(root, "dead")
    dead.stop()
    try:
        runs = {"live": transport_for(root, hermes_root, live), "stopped": transport_for(root, hermes_root, dead)}
        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = {(label, kind): pool.submit(run, kind, project, label, transport)
                       for label, transport in runs.items() for kind in ("delegation", "dispatch")}
            results = {key: future.result() for key, future in futures.items()}
        yield {"project": project, "stub": live, "results": results}
    finally:
        live.stop()


def run(kind: str, project: Path, label: str, transport: TransportSettings) -> Any:
    if kind == "delegation":
        intent = {"intent": "Summarise the build notes in two sentences.", "project_root": str(project),
                  "target_paths": ["docs/notes.md"],
                  "payload": {"hermes_profile": "tester", "write_to": f"out/{label}.md", "tags": ["real", label],
                              "timeout_seconds": HERMES_RUN_TIMEOUT_S}}
        return delegate(intent, settings=AutobotSettings(transport=transport))
    inputs = {"target": "andy", "task_source": "real-hermes-test", "context": "Build notes are ready.",
              "reference_id": f"artifact_{label}"}
    return dispatch(inputs, DispatchSettings(ledger_path=default_ledger_path(project),
                                             timeout_s=HERMES_RUN_TIMEOUT_S, transport=transport))


@pytest.fixture(scope="module")
def live(world: dict[str, Any]) -> dict[str, Any]:
    return {kind: world["results"][("live", kind)] for kind in ("delegation", "dispatch")}


@pytest.fixture(scope="module")
def stopped(world: dict[str, Any]) -> dict[str, Any]:
    return {kind: world["results"][("stopped", kind)] for kind in ("delegation", "dispatch")}


def test_a_real_delegation_is_ok_with_hermes_own_tokens_its_artifact_and_ledger_line(world, live) -> None:
    envelope = live["delegation"]
    assert envelope.status == "ok", envelope.to_dict()
    assert envelope.extra["tokens"] == {"input": 321, "output": 45, "total": 366, "source": "hermes_state_db"}
    assert envelope.extra["answered_by"] == {"provider": "minimax", "model": "MiniMax-M3"}
    assert Path(envelope.wrote_to).read_text() == "# Stub summary\nEverything is in order.\n"
    line = int(envelope.ledger_entry.rsplit("#L", 1)[1])
    record = list(Ledger(default_ledger_path(world["project"])).all_records())[line - 1]
    assert record["record_id"] == envelope.extra["record_id"] and record["usage"]["input_tokens"] == 321


def test_the_real_sub_agent_saw_the_fenced_materials_and_only_read_only_tools(world, live) -> None:
    requests = world["stub"].agent_requests()
    delegated = [r for r in requests if "Summarise the build notes" in json.dumps(r["messages"])]
    assert delegated, "the stub never saw the delegation prompt"
    assert "The nightly build passed" in delegated[0]["messages"][-1]["content"]
    assert [t["function"]["name"] for t in delegated[0].get("tools", [])] == ["todo"]


def test_a_real_dispatch_is_delivered_through_the_target_profile(live) -> None:
    envelope = live["dispatch"].envelope
    assert envelope["status"] == "delivered", envelope
    details = envelope["transport"]["details"]
    assert details["profile"] == "career-manager" and details["reply"].startswith("# Stub summary")
    assert details["usage"]["source"] == "hermes_state_db" and envelope["transport_message_id"]


def test_with_the_model_gone_both_fail_honestly_with_a_retryable_provider_error(world, stopped) -> None:
    delegation, delivery = stopped["delegation"], stopped["dispatch"].envelope
    assert (delegation.status, delegation.degraded_reason, delegation.retryable) == ("degraded", "provider_error",
                                                                                    True)
    assert delegation.wrote_to is None and not (world["project"] / "out" / "stopped.md").exists()
    assert (delivery["status"], delivery["code"], delivery["retryable"]) == ("error", "transport_error", True)
    assert delivery["details"]["reason"] == "provider_error"
    records = list(Ledger(default_ledger_path(world["project"])).all_records())
    settled = [r for r in records if r["status"] != "started"]
    assert sorted(r["status"] for r in settled) == ["degraded", "delivered", "error", "ok"]
    assert sorted(r["record_id"] for r in records if r["status"] == "started") == sorted(
        r["started_record_id"] for r in settled)
