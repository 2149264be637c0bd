"""Fixtures of the delegation suites: a Hermes root with profiles, a project, and a scriptable fake `hermes`.

Invariants:
- Every state directory lives under tmp_path: HERMES_HOME (a root with profiles), the project root
  (also the working directory and $MAFIABOT_PROJECT_ROOT), the fake's scenario and log. No test
  reaches a real home or the checkout's `.agents/`.
- `HERMES_AUTOBOT_DELEGATED` is removed from the environment, so a suite run from inside a
  delegated agent still tests the un-nested path unless a test sets it.
- A test that calls the command line in-process gets the signal handlers it installs
  (`cancellation.install`) undone afterwards, and any cancellation it recorded forgotten.
- `backend` runs a test once over each store of the queue and the ledger: the project's files, and a
  fresh database of the session's PostgreSQL cluster (skipped, saying why, where none can be started).
- Waits on other processes go through `delegation_support.wait_fifo` / `wait_gone`: readiness of
  a FIFO or a pidfd, with a named bound, never a sleep.
"""

from __future__ import annotations

import json
import signal
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.autobot import AutobotSettings
from harness.autobot.queue import Queue, QueueStore
from harness.database import connect
from harness.hermes import cancellation
from harness.ledger import Ledger, default_ledger_path
from harness.ledger.pg_store import PgLedger
from harness.ledger.store import LedgerStore, is_started
from harness.settings import HERMES_BIN_ENV, PROJECT_ROOT_ENV, state_dir

FAKE = Path(__file__).with_name("fake_hermes.py")
PROFILES = ("cstar-hub", "tester", "career-manager", "health-coach")


class FakeHermes:
    def __init__(self, root: Path) -> None:
        self.dir = root
        self.executable = root / "bin" / "hermes"
        self.scenario = root / "scenario.json"
        self.log = root / "calls.jsonl"

    def script(self, *steps: dict[str, Any]) -> FakeHermes:
        """Steps played in invocation order; or one `{"by_prompt": [...], "steps": [...]}` routing document."""
        routed = len(steps) == 1 and "by_prompt" in steps[0]
        self.scenario.write_text(json.dumps(steps[0] if routed else (list(steps) or [{}])))
        return self

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def hermes_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "hermes-root"
    for profile in PROFILES:
        (root / "profiles" / profile).mkdir(parents=True)
        (root / "profiles" / profile / "config.yaml").write_text("agent: {api_max_retries: 0}\n")
    (root / "memories").mkdir()
    monkeypatch.setenv("HERMES_HOME", str(root))
    monkeypatch.delenv("HERMES_AUTOBOT_DELEGATED", raising=False)
    return root


def install_fake(root: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHermes:
    """The fake as `<root>/bin/hermes`, scripted to answer; nothing names it yet."""
    fake = FakeHermes(root)
    fake.executable.parent.mkdir(parents=True)
    fake.executable.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    fake.executable.chmod(fake.executable.stat().st_mode | stat.S_IXUSR)
    fake.script({})
    monkeypatch.setenv("FAKE_HERMES_SCENARIO", str(fake.scenario))
    monkeypatch.setenv("FAKE_HERMES_LOG", str(fake.log))
    return fake


@pytest.fixture
def fake_hermes(tmp_path: Path, hermes_root: Path, monkeypatch: pytest.MonkeyPatch) -> FakeHermes:
    fake = install_fake(tmp_path / "fake-hermes", monkeypatch)
    monkeypatch.setenv(HERMES_BIN_ENV, str(fake.executable))
    return fake


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv(PROJECT_ROOT_ENV, str(root))
    return root


@pytest.fixture(autouse=True)
def signal_handlers_restored():
    saved = {signum: signal.getsignal(signum) for signum in cancellation.SIGNALS}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)
    cancellation.reset_for_tests()


MakeIntent = Callable[..., dict[str, Any]]


@pytest.fixture
def make_intent(project: Path) -> MakeIntent:
    """make_intent(intent="...", target_paths=[...], **payload) -> an intent document for `project`."""

    def make(intent: str = "Summarise the notes.", target_paths: list[str] | None = None,
             **payload: Any) -> dict[str, Any]:
        document: dict[str, Any] = {"intent": intent, "project_root": str(project)}
        if target_paths is not None:
            document["target_paths"] = target_paths
        document["payload"] = {"hermes_profile": "tester", **payload}
        return document

    return make


@dataclass
class Backend:
    """One store of the queue and the ledger, as the tests drive it: `url` None is the project's files."""

    name: str
    project: Path
    url: str | None

    def queue(self, clock: Callable[[], float] | None = None) -> QueueStore:
        if self.url is None:
            return Queue.for_project(self.project) if clock is None else Queue(self.project / "q", clock=clock)
        from harness.autobot.pg_queue import PgQueue
        return PgQueue(self.url) if clock is None else PgQueue(self.url, clock=clock)

    def settings(self, **fields: Any) -> AutobotSettings:
        return AutobotSettings(database=self.url, **fields)

    def cli(self) -> list[str]:
        """The options that name this store on a command line."""
        return [] if self.url is None else ["--database", self.url]

    @contextmanager
    def ledger(self) -> Iterator[LedgerStore]:
        if self.url is None:
            yield Ledger(default_ledger_path(self.project))
            return
        with connect(self.url) as database:
            yield PgLedger(database, state_dir(self.project))

    def all_records(self) -> list[dict[str, Any]]:
        with self.ledger() as ledger:
            return list(ledger.all_records())

    def settled(self) -> list[dict[str, Any]]:
        """The ledger's settlements and refusals, without the journal's started records."""
        return [record for record in self.all_records() if not is_started(record)]


@pytest.fixture(params=["files", "postgresql"])
def backend(request: pytest.FixtureRequest, project: Path) -> Backend:
    url = request.getfixturevalue("pg_url") if request.param == "postgresql" else None
    return Backend(request.param, project, url)


@pytest.fixture
def backend_pg(project: Path, pg_url: str) -> Backend:
    """The PostgreSQL store alone, for what only it has."""
    return Backend("postgresql", project, pg_url)
