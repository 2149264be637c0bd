"""Both bodies behind one fixture: the Ada body and the C3 pass-through stub body (Python).

Transport-level tests take `any_body_kind` (or `spawn_any`) and run once per body, so the
harness is tested without the Ada build and the two bodies are held to the same wire contract.
The Ada parametrization skips, saying how to build it, when the binary is missing; the
pass-through body needs nothing but this interpreter.

Invariants: every body started here gets its own HERMES_HOME under tmp_path and is closed at
teardown.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from harness.body import BodyOptions, find_body
from harness.client import BodyClient
from harness.errors import BodyNotFound
from harness.replay.bodies import KNOWN_BODIES, body_argv

SpawnAny = Callable[..., BodyClient]


@pytest.fixture(params=KNOWN_BODIES)
def any_body_kind(request: pytest.FixtureRequest) -> str:
    kind = request.param
    if kind == "ada":
        try:
            find_body()
        except BodyNotFound as exc:
            pytest.skip(f"Ada body not built: {exc}")
    return kind


@pytest.fixture
def spawn_any(any_body_kind: str, tmp_path: Path) -> Iterator[SpawnAny]:
    """spawn_any(**BodyOptions overrides) -> a started BodyClient of the parametrized body."""
    numbers = itertools.count(1)
    with ExitStack() as started:
        def spawn(**overrides: object) -> BodyClient:
            number = next(numbers)
            options = BodyOptions(**{"hermes_home": tmp_path / f"hermes-{number}", **overrides})  # type: ignore[arg-type]
            # The environment is the test's, already isolated by conftest's autouse fixture.
            log = tmp_path / f"{any_body_kind}-{number}.stderr"
            return started.enter_context(BodyClient(body_argv(any_body_kind, options), stderr_log=log))

        yield spawn
