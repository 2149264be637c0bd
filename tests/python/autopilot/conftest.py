"""Fixtures of the auto-pilot suites: the delegation suites' Hermes root, project and fake `hermes`,
plus an agent registry whose profiles exist in that root.

Invariants:
- Every state directory lives under tmp_path (inherited from the delegation fixtures: HERMES_HOME,
  the project root that is also the cwd and $MAFIABOT_PROJECT_ROOT, the fake's scenario and log);
  the auto-pilot variables a parent kernel sets for its children are removed (the MAFIABOT_* ones by
  the root conftest, HERMES_AUTOBOT_DELEGATED here), so a suite run from inside an auto-pilot child
  still starts at the root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from delegation.conftest import FakeHermes, backend, fake_hermes, hermes_root, project  # noqa: F401 (fixtures)
from harness.dispatch.registry import Registry, load_registry

REGISTRY = """
agents:
  andy:   {profile: career-manager, good_at: [career, email], toolsets: [web, todo, file, terminal, memory, delegation]}
  cooper: {profile: health-coach, good_at: [health, sleep], toolsets: [web, todo]}
  scribe: {profile: tester, good_at: [summary, report, draft], toolsets: [todo, file]}
  judge:  {profile: cstar-hub, good_at: [converge, judge], toolsets: [todo]}
"""


@pytest.fixture(autouse=True)
def no_inherited_autopilot(monkeypatch: pytest.MonkeyPatch) -> None:
    # The MAFIABOT_* variables a parent kernel sets are scrubbed by the root conftest; this is Hermes's.
    monkeypatch.delenv("HERMES_AUTOBOT_DELEGATED", raising=False)


@pytest.fixture
def registry_file(tmp_path: Path) -> Path:
    path = tmp_path / "agents.yaml"
    path.write_text(REGISTRY)
    return path


@pytest.fixture
def registry(registry_file: Path) -> Registry:
    return load_registry(registry_file)


__all__ = ["FakeHermes"]
