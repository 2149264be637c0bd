"""Fuzz: random interleavings of sessions, with hostile lines between their turns.

Each example opens 1-4 new sessions, each with a secret, and sends their turns in a random
order mixed with any protocol line (valid or hostile). Every turn's trace must be its own
session's, with energy in [0, 1], the passes a prefix set by the energy gate, and no other
session's secret anywhere in the reply (L1). Then each session is replayed alone on a second
body: its traces must be identical, so neither the interleaving nor the noise changed them.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz_driver import FuzzBody
from fuzz_messages import PROTOCOL_LINES, examples, key_part_text, turns
from support import SHIPPED_ORGANS, check_text_block, check_trace, turn_fingerprint

# Many generated cases (20,000 under `make fuzz`): outside the quick loop (`pytest -m "not slow"`), in `make test`.
pytestmark = pytest.mark.slow

THRESHOLDS = json.loads(SHIPPED_ORGANS.read_text(encoding="utf-8"))["energy_curve"]["thresholds"]
SECRET = re.compile(r"pw\d{5}q\d[0-9a-f]{8}")
sessions_made = itertools.count(1)


@pytest.fixture(scope="module")
def bodies(body_exe: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FuzzBody, FuzzBody]]:
    """(the body that sees interleaved sessions and noise, the body that replays each session alone)."""
    logs = tmp_path_factory.mktemp("fuzz-sessions")
    mixed, solo = FuzzBody(body_exe, logs / "mixed"), FuzzBody(body_exe, logs / "solo")
    yield mixed, solo
    assert (mixed.close(), solo.close()) == (0, 0)


@st.composite
def new_sessions(draw) -> tuple[list[tuple[str, str, str]], list[str]]:
    """1-4 sessions never used before (a run-wide counter prefixes the uid), and their secrets."""
    number = next(sessions_made)
    count = draw(st.integers(1, 4))
    sessions = [(f"s{number}-{n}{draw(key_part_text())}", draw(st.sampled_from(("#a", "#b", "a b", "#a:b"))),
                 draw(st.sampled_from(("srv", "srv/2", "ŝrv")))) for n in range(count)]
    secrets = [f"pw{number:05d}q{n}{(number * 7919 + n) % 16 ** 8:08x}" for n in range(count)]
    return sessions, secrets


@examples(500)
@given(data=st.data())
def test_interleaved_sessions_never_share_state_and_noise_never_changes_a_trace(bodies, data):
    mixed, solo = bodies
    sessions, secrets = data.draw(new_sessions())
    session_turns = turns(sessions, secrets)
    lines = data.draw(st.lists(session_turns | session_turns | PROTOCOL_LINES, min_size=1, max_size=12))
    history: dict[int, list[tuple[str, dict]]] = defaultdict(list)
    mixed.begin()
    for line in lines:
        reply = mixed.send(line)
        if line.session is not None:
            check_text_block(reply["result"])
            trace = reply["result"]["structuredContent"]
            check_turn(trace, sessions[line.session], len(history[line.session]) + 1)
            leaked = set(SECRET.findall(json.dumps(reply, ensure_ascii=False))) - {secrets[line.session]}
            assert not leaked, f"secrets {leaked} of other sessions in a reply to {sessions[line.session]}"
            history[line.session].append((line.text, trace))
    mixed.end()
    solo.begin()
    for index, said in history.items():
        for text, trace in said:
            alone = solo.client.call_turn(text, *sessions[index])
            assert turn_fingerprint(alone) == turn_fingerprint(trace), f"session {sessions[index]}"
    solo.end()


def check_turn(trace: dict, session: tuple[str, str, str], turn: int) -> None:
    """The contract's trace invariants, the session's own key and counter, and the energy gate (L3)."""
    check_trace(trace)
    assert trace["session"] == dict(zip(("uid", "channel", "server"), session, strict=True)), trace["session"]
    assert trace["turn"] == turn, (trace["turn"], turn)
    assert trace["passes_run"] == sum(threshold <= trace["energy"] for threshold in THRESHOLDS), trace
