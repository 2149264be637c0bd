"""Fixtures shared by the Python suites.

Invariants:
- No test touches a real home: HOME, HERMES_HOME and the XDG dirs point into tmp_path for
  every test (autouse), and bodies started here get their own `--hermes-home` too.
- No test inherits a setting: every `MAFIABOT_*` variable is removed (autouse), so a suite run
  from inside a delegated agent or with a developer's variables exported behaves as in CI.
- No test finds the checkout's real Hermes by accident: in-process, the project's Hermes
  (`harness.hermes.locate.PROJECT_HERMES`, relative to the checkout) names a file that does not
  exist; a test that wants a Hermes names it (the fake, or `hermes_support.HERMES`), and the
  locator tests put `PROJECT_HERMES` back (`REAL_PROJECT_HERMES`) in a checkout of their own.
- A missing body binary skips the suites that need it, saying how to build it; `make test`
  builds it first, so in CI it exists.
- Every body a fixture starts is closed at teardown, whatever the test did to it.
- A test that needs PostgreSQL takes `pg_url` (a fresh database of one throwaway cluster per worker,
  `pg_support`, stopped at the end of the session); when no cluster can be started those tests skip,
  and the run's summary says so in one line with the reason, never silently.
- Every test is in exactly one tier (`pytest_collection_modifyitems`; docs/testing.md): `hermes` if it
  runs the real Hermes (hermes_support.requires_hermes marks it), else `body` if it asks for the built
  body (BODY_FIXTURES, or a fixture built on them), else `unit`. The tier follows from what the test
  uses, so a new test needs no marker of its own.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.body import BodyOptions, find_body
from harness.client import BodyClient
from harness.errors import BodyNotFound
from harness.hermes import locate
from pg_support import PG_SKIP, Cluster, throwaway_cluster

HOME_VARS = ("HOME", "HERMES_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")
SETTINGS_PREFIX = "MAFIABOT_"
REAL_PROJECT_HERMES = locate.PROJECT_HERMES


def isolated_env(root: Path) -> dict[str, str]:
    """os.environ with every home-like directory moved under `root` (created)."""
    env = dict(os.environ)
    for var in HOME_VARS:
        path = root / var.lower()
        path.mkdir(parents=True, exist_ok=True)
        env[var] = str(path)
    return env


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in [name for name in os.environ if name.startswith(SETTINGS_PREFIX)]:
        monkeypatch.delenv(var)
    monkeypatch.setattr(locate, "PROJECT_HERMES", REAL_PROJECT_HERMES.with_name("hermes-hidden-from-tests"))
    root = tmp_path / "env"
    for var, value in isolated_env(root).items():
        if var in HOME_VARS:
            monkeypatch.setenv(var, value)
    return root


# The fixtures that hand a test the built body; a test using any of them (directly or through a fixture of
# its own) is in the `body` tier.
BODY_FIXTURES = frozenset({"body_exe", "spawn_body", "body", "ready_body", "module_body"})
TIERS = ("unit", "body", "hermes")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("exhaustive") is not None:
            item.add_marker(pytest.mark.slow)  # a later -m replaces addopts' one: `-m "not slow"` still leaves it out
        if item.get_closest_marker("hermes") is not None:
            continue
        uses_body = BODY_FIXTURES & set(getattr(item, "fixturenames", ()))
        item.add_marker(pytest.mark.body if uses_body else pytest.mark.unit)


@pytest.fixture(scope="session")
def body_exe() -> Path:
    try:
        return find_body()
    except BodyNotFound as exc:
        pytest.skip(f"body not built: {exc}")


SpawnBody = Callable[..., BodyClient]


@pytest.fixture
def spawn_body(body_exe: Path, tmp_path: Path) -> Iterator[SpawnBody]:
    """A factory: spawn_body(**BodyOptions overrides) -> a started BodyClient (`body` too: another build)."""
    clients: list[BodyClient] = []
    numbers = itertools.count(1)

    def spawn(**overrides: object) -> BodyClient:
        number = next(numbers)
        overrides.setdefault("hermes_home", tmp_path / f"hermes-{number}")
        overrides.setdefault("body", body_exe)
        options = BodyOptions(**overrides)  # type: ignore[arg-type]
        client = BodyClient.from_options(options, env=isolated_env(tmp_path / "env"),
                                         stderr_log=tmp_path / f"body-{number}.stderr")
        clients.append(client.start())
        return client

    yield spawn
    for client in clients:
        client.close()


@pytest.fixture
def body(spawn_body: SpawnBody) -> BodyClient:
    """A fresh body, started, nothing sent yet."""
    return spawn_body()


@pytest.fixture
def ready_body(spawn_body: SpawnBody) -> BodyClient:
    """A fresh body after the legacy 2025-11-25 handshake."""
    client = spawn_body()
    client.initialize()
    return client


@pytest.fixture(scope="module")
def module_body(body_exe: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BodyClient]:
    """One initialized body shared by a module (for property tests with many examples)."""
    root = tmp_path_factory.mktemp("module-body")
    options = BodyOptions(body=body_exe, hermes_home=root / "hermes")
    with BodyClient.from_options(options, env=isolated_env(root / "env"),
                                 stderr_log=root / "body.stderr") as client:
        client.initialize()
        yield client


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway cluster (fsync off: these tests never kill the server) for the whole session of a worker."""
    with throwaway_cluster(fsync=False) as cluster:
        yield cluster


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> str:
    """The URL of a fresh database of the session's cluster."""
    return pg_cluster.new_database()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    reasons = {str(report.longrepr[2]) for report in terminalreporter.stats.get("skipped", [])
               if isinstance(report.longrepr, tuple) and str(report.longrepr[2]).startswith(f"Skipped: {PG_SKIP}")}
    for reason in sorted(reasons):
        count = sum(1 for report in terminalreporter.stats.get("skipped", [])
                    if isinstance(report.longrepr, tuple) and str(report.longrepr[2]) == reason)
        terminalreporter.write_line(f"{reason.removeprefix('Skipped: ')} ({count} test(s))")


def pytest_report_header(config: pytest.Config) -> str:
    try:
        return f"mafiabot body: {find_body()}"
    except BodyNotFound as exc:
        return f"mafiabot body: MISSING, body tests will be skipped ({exc})"
