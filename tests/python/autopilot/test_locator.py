"""Every command finds the same Hermes: a fresh checkout, no `hermes` on PATH, nothing naming one.

The checkout is made under tmp_path the way `git clone` + `make hermes` leaves it (pyproject.toml,
mafiabot_core/, .hermes-venv/bin/hermes), the harness is told it sits there (as an editable install
would), the fake stands in for .hermes-venv's Hermes, and PATH holds no hermes. Then doctor (after
mount), delegate, dispatch and autopilot run through the CLI: each must reach that executable,
which the fake's log proves, since nothing else could answer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import REAL_PROJECT_HERMES
from delegation.conftest import FakeHermes, install_fake
from harness import settings
from harness.cli import main
from harness.hermes import locate

from .autopilot_support import write_yaml

CONNECTED = "✓ Connected (4ms)\n✓ Tools discovered: 1\n\n    turn          Carry one user turn\n"


@pytest.fixture
def checkout(tmp_path: Path, hermes_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "mafiabot"
    (root / "mafiabot_core").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "mafiabot-harness"\n')
    monkeypatch.setattr(settings, "PACKAGE_CHECKOUT", root)
    monkeypatch.setattr(locate, "PROJECT_HERMES", REAL_PROJECT_HERMES)
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def project_hermes(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHermes:
    return install_fake(checkout / ".hermes-venv", monkeypatch)


def test_the_checkout_s_hermes_is_found_when_nothing_names_one(checkout, project_hermes) -> None:
    assert locate.find_executable() == checkout / ".hermes-venv" / "bin" / "hermes"
    assert project_hermes.executable == checkout / ".hermes-venv" / "bin" / "hermes"


def test_doctor_delegate_dispatch_and_autopilot_all_run_the_checkout_s_hermes(
        checkout, project_hermes, hermes_root, registry_file, body_exe, capsys) -> None:
    project_hermes.script({"stdout": CONNECTED}, {})
    home = str(hermes_root)
    assert main(["mount", "--hermes-home", home, "--body", str(body_exe)]) == 0
    assert main(["doctor", "--hermes-home", home]) == 0
    assert [c["argv"][:2] for c in project_hermes.calls()] == [["mcp", "test"]]

    intent = checkout / "intent.json"
    intent.write_text(json.dumps({"intent": "Summarise the notes.", "project_root": str(checkout),
                                  "payload": {"hermes_profile": "tester"}}))
    assert main(["delegate", "--intent-file", str(intent), "--compact"]) == 0
    assert main(["dispatch", "--target", "andy", "--task-source", "s", "--context", "c", "--reference-id", "r",
                 "--compact"]) == 0
    plan = write_yaml(checkout / "plan.yaml", {"goal": "Check in", "subtasks": ["Summary of the sleep log."]})
    assert main(["autopilot", "run", str(plan), "--registry", str(registry_file), "--compact"]) == 0
    profiles = [c["profile"] for c in project_hermes.calls()[1:]]
    assert profiles[:2] == ["tester", "career-manager"] and len(profiles) >= 3
    capsys.readouterr()


def test_without_a_checkout_and_nothing_on_path_the_refusal_says_what_to_do(checkout, monkeypatch) -> None:
    monkeypatch.setattr(settings, "PACKAGE_CHECKOUT", None)
    assert locate.find_executable() is None
    detail = locate.not_found_detail()
    assert settings.CHECKOUT_ENV in detail and settings.HERMES_BIN_ENV in detail


def test_a_named_hermes_that_is_missing_is_not_replaced_by_the_checkout_s(checkout, project_hermes,
                                                                         monkeypatch) -> None:
    monkeypatch.setenv(settings.HERMES_BIN_ENV, str(checkout / "nope"))
    assert locate.find_executable() is None
    assert locate.find_executable(sys.executable) == Path(sys.executable).absolute()
    assert "nope" in locate.not_found_detail()
