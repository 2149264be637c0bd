"""The real Hermes Agent (hermes-agent 0.19.0 in .hermes-venv), offline against the stub model on loopback:
a two-child sequential plan and a dueto plan run end to end, ledgered with Hermes's own token counts.

Each Hermes run costs 3-9 s, so the two plans run at once, once, in a module fixture.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from delegation.test_real_hermes import HERMES, HERMES_RUN_TIMEOUT_S, PROFILE_CONFIG, Stub
from harness.autopilot import KernelSettings, parse_plan, run_plan
from harness.autopilot.dna import parse
from harness.dispatch.registry import parse_registry
from harness.hermes import TransportSettings
from harness.ledger import Ledger, default_ledger_path

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not HERMES.exists(), reason=f"real Hermes not installed at {HERMES} (`make hermes`)")]

REGISTRY = {"agents": {"andy": {"profile": "career-manager", "good_at": ["career"]},
                       "scribe": {"profile": "tester", "good_at": ["summary"]}}}
PLANS = {
    "sequential": {"goal": "Prepare the build digest", "mode": "sequential",
                   "limits": {"child_timeout_s": HERMES_RUN_TIMEOUT_S, "retries": 0},
                   "subtasks": [{"id": "notes", "task": "Write a summary of the nightly build notes."},
                                {"id": "career", "task": "Say what the build means for the career plan.",
                                 "uses": ["notes"]}]},
    "dueto": {"goal": "Two reads of the build", "mode": "dueto",
              "limits": {"child_timeout_s": HERMES_RUN_TIMEOUT_S, "retries": 0},
              "subtasks": [{"id": "a", "task": "A summary of the build for the team."},
                           {"id": "b", "task": "The build's career angle in one line."}]},
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("autopilot-real-hermes")
    hermes_root = root / "hermes"
    for profile in ("tester", "career-manager"):
        (hermes_root / "profiles" / profile).mkdir(parents=True)
        (hermes_root / "profiles" / profile / "config.yaml").write_text(PROFILE_CONFIG)
    (root / "home").mkdir()
    stub = Stub(root, "live")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_AUTOBOT", "MAFIABOT_AUTOPILOT"))}
    env.update(HOME=str(root / "home"), HERMES_HOME=str(hermes_root), MINIMAX_API_KEY="dummy",
               MINIMAX_BASE_URL=stub.base_url)
    transport = TransportSettings(hermes_bin=HERMES, environ=env, work_dir=root / "work")
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {name: pool.submit(run_one, root / name, document, transport)
                       for name, document in PLANS.items()}
            results = {name: future.result() for name, future in futures.items()}
        yield {"results": results, "stub": stub, "root": root}
    finally:
        stub.stop()


def run_one(project: Path, document: dict[str, Any], transport: TransportSettings) -> Any:
    project.mkdir()
    settings = KernelSettings(project_root=project, ledger_path=default_ledger_path(project),
                              registry=parse_registry(REGISTRY, "test registry"), transport=transport)
    return project, run_plan(parse_plan(document, base_dir=project), settings)


@pytest.mark.parametrize("name", sorted(PLANS))
def test_a_real_plan_completes_with_every_child_ledgered_at_hermes_own_token_counts(world, name) -> None:
    project, result = world["results"][name]
    assert result.status == "completed", result.envelope
    assert [c["status"] for c in result.envelope["children"]] == ["ok", "ok"]
    records = list(Ledger(default_ledger_path(project)).records())
    assert len(records) == 2 and {r["parent_id"] for r in records} == {result.envelope["run_id"]}
    assert all(r["usage"]["source"] == "hermes_state_db" and r["usage"]["input_tokens"] == 321 for r in records)
    assert result.envelope["totals"]["tree"]["input_tokens"] == 642


def test_the_real_sub_agents_saw_their_task_and_dna_block(world) -> None:
    prompts = [r["messages"][-1]["content"] for r in world["stub"].agent_requests()]
    carrying = [parse(p) for p in prompts if "```dna-payload v1.1" in p]
    assert len(carrying) >= 4
    assert {d.agent for d in carrying} >= {"andy", "scribe"} and {d.depth for d in carrying} == {1}
