"""Fuzz: random sequences of valid and hostile lines, each answered exactly as the contract says.

Seeded (derandomized) and bounded in `make test`; `make fuzz` runs the same properties with a
random seed and many more cases (MAFIABOT_FUZZ=long, see fuzz_messages).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz_driver import REPLY_BOUND, FuzzBody
from fuzz_messages import (
    PROTOCOL_LINES,
    LifecycleLine,
    check_reply,
    examples,
    initializes,
    key_part_text,
    lifecycle_requests,
    turns,
)
from harness.body import BodyOptions
from harness.client import BodyClient

# Many generated cases (20,000 under `make fuzz`): outside the quick loop (`pytest -m "not slow"`), in `make test`.
pytestmark = pytest.mark.slow

sessions_made = itertools.count(1)


@pytest.fixture(scope="module")
def fuzz_body(body_exe: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzBody]:
    body = FuzzBody(body_exe, tmp_path_factory.mktemp("fuzz-protocol"))
    yield body
    assert body.close() == 0


@st.composite
def two_sessions(draw) -> tuple[list[tuple[str, str, str]], list[str]]:
    number = next(sessions_made)
    sessions = [(f"p{number}-{n}-{draw(key_part_text())}", "#fuzz", "proto") for n in range(2)]
    return sessions, [f"pw{number:05d}q{n}" for n in range(2)]


@examples(1500)
@given(data=st.data())
def test_every_line_gets_exactly_the_answer_the_contract_names_and_nothing_more(fuzz_body, data):
    sessions, secrets = data.draw(two_sessions())
    lines = data.draw(st.lists(PROTOCOL_LINES | turns(sessions, secrets), min_size=1, max_size=8))
    fuzz_body.begin()
    for line in lines:
        fuzz_body.send(line)
    fuzz_body.end()


@examples(150)
@given(lines=st.lists(initializes() | lifecycle_requests(), min_size=1, max_size=6))
def test_a_fresh_body_holds_legacy_requests_until_the_first_good_initialize(body_exe, tmp_path_factory, lines):
    log = tmp_path_factory.mktemp("lifecycle") / "body.stderr"
    options = BodyOptions(body=body_exe, no_soul=True)
    with BodyClient.from_options(options, stderr_log=log, request_timeout=REPLY_BOUND) as client:
        initialized = False
        for line in lines:
            initialized = _exchange(client, line, initialized)
        assert client.close() == 0


def _exchange(client: BodyClient, line: LifecycleLine, initialized: bool) -> bool:
    """Send one lifecycle line, check its answer; returns whether the body is now initialized."""
    client.send_raw(line.data + b"\n")
    raw = client.read_line(REPLY_BOUND, f"the reply to {line.label}")
    reply = check_reply(raw, line.after if initialized else line.before, line.label)
    if line.initializes and not initialized:
        assert reply["result"]["protocolVersion"] == line.negotiated, reply
        return True
    return initialized
