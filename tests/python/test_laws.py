"""The laws of the cycle, observed on the wire.

L1: every piece of per-turn state lives in its (uid, channel, server) session; nothing crosses rooms.
L3: the cycle is static; energy alone decides how many passes run, later passes skipped first.
L4: the coherence check (step 23) is a detector, never fed back into a later turn.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict

import pytest

from support import PASS_COUNT, SHIPPED_ORGANS, check_trace, turn_fingerprint

# Sessions whose keys differ from BASE in exactly one part.
BASE = ("vito", "#tavern", "corleone")
NEIGHBOURS = [BASE, ("michael", "#tavern", "corleone"), ("vito", "#docks", "corleone"), ("vito", "#tavern", "tattaglia")]
# Enough turns at 0.06 per pass and 0.1 recharge per turn to drain any session well below full.
HAMMER_TURNS = 25


def say(client, room, text):
    return client.call_turn(text, *room)


# -- L1 ------------------------------------------------------------------------------------------

def test_a_secret_said_in_one_room_never_appears_in_another_room(ready_body):
    secrets = {room: f"secret-{n}-{'xyzzy' * (n + 1)}" for n, room in enumerate(NEIGHBOURS)}
    traces = defaultdict(list)
    for round_number in range(4):
        for room in NEIGHBOURS:
            text = (f"remember the password {secrets[room]}" if round_number == 0
                    else f"what was the password? remember it (round {round_number})")
            result = ready_body.call_tool("turn", dict(zip(("uid", "channel", "server"), room, strict=True), input=text))
            traces[room].append(result)
    for room, results in traces.items():
        for result in results:
            seen = json.dumps(result, ensure_ascii=False)
            for other, secret in secrets.items():
                if other != room:
                    assert secret not in seen, f"{secret} of {other} leaked into {room}"


def test_turn_counters_and_energy_are_per_session(spawn_body):
    interleaved, alone = spawn_body(), spawn_body()
    interleaved.initialize()
    alone.initialize()
    script = [(room, f"{room[0]} speaks, turn {n}") for n in range(5) for room in NEIGHBOURS]
    seen = defaultdict(list)
    for room, text in script:
        seen[room].append(say(interleaved, room, text))
    for room in NEIGHBOURS:
        assert [t["turn"] for t in seen[room]] == [1, 2, 3, 4, 5]
        assert all(t["session"] == dict(zip(("uid", "channel", "server"), room, strict=True)) for t in seen[room])
    solo = [say(alone, BASE, text) for room, text in script if room == BASE]
    assert [(t["energy"], t["passes_run"]) for t in solo] == [(t["energy"], t["passes_run"]) for t in seen[BASE]]


def test_keys_that_concatenate_alike_are_different_sessions(ready_body):
    rooms = [("a:b", "c", "s"), ("a", "b:c", "s"), ("a/b", "c", "s"), ("a", "b/c", "s"), ("a b", "c", "s"),
             ("a", "b c", "s"), ("ab", "c", "s"), ("a", "bc", "s")]
    for room in rooms:
        trace = say(ready_body, room, f"remember token-{'-'.join(room)}")
        assert trace["turn"] == 1, room
        assert trace["session"] == dict(zip(("uid", "channel", "server"), room, strict=True))


def test_the_session_table_evicts_the_least_recently_used_session_and_says_so(spawn_body):
    client = spawn_body(max_sessions=2)
    client.initialize()
    a, b, c = ("a", "c", "s"), ("b", "c", "s"), ("cc", "c", "s")
    assert say(client, a, "one")["turn"] == 1
    assert say(client, b, "one")["turn"] == 1
    assert say(client, c, "one")["turn"] == 1  # table full: a is the least recently used
    assert say(client, b, "two")["turn"] == 2
    assert say(client, a, "again")["turn"] == 1
    assert client.ping() == {}
    assert "evict" in client.stderr_text().lower()


# -- L3 ------------------------------------------------------------------------------------------

def collect_traces(client, rooms, turns_each):
    return [say(client, room, f"turn {n} in {room[1]}") for n in range(turns_each) for room in rooms]


def assert_monotone(traces):
    pairs = sorted({(t["energy"], t["passes_run"]) for t in traces})
    for (e1, p1), (e2, p2) in itertools.pairwise(pairs):
        assert p1 <= p2, f"energy {e2} > {e1} ran fewer passes ({p2} < {p1})"
    by_energy = defaultdict(set)
    for energy, passes in pairs:
        by_energy[energy].add(passes)
    assert all(len(p) == 1 for p in by_energy.values()), by_energy


def test_passes_are_monotone_in_energy_a_prefix_and_full_at_full_energy(ready_body):
    rooms = [*NEIGHBOURS, ("demo-tired", "general", "demo")]
    traces = collect_traces(ready_body, rooms[:2], 12) + collect_traces(ready_body, rooms, 3)
    for trace in traces:
        check_trace(trace)  # prefix, 1..8, 8 at E = 1, non-pass steps always run
    assert_monotone(traces)
    assert len({t["passes_run"] for t in traces}) >= 3, "the sample should span several pass counts"


def test_passes_follow_the_fixture_thresholds_exactly(ready_body):
    if not SHIPPED_ORGANS.is_file():
        pytest.skip("no default organ fixture")
    thresholds = json.loads(SHIPPED_ORGANS.read_text())["energy_curve"]["thresholds"]
    for trace in collect_traces(ready_body, NEIGHBOURS[:2], 10):
        assert trace["passes_run"] == sum(1 for t in thresholds if trace["energy"] >= t), trace["energy"]


@pytest.mark.parametrize("thresholds,expect", [
    ("0,0,0,0,0,0,0,0", lambda energy: PASS_COUNT),
    ("0,1,1,1,1,1,1,1", lambda energy: PASS_COUNT if energy >= 1.0 else 1),
])
def test_a_thresholds_curve_from_the_command_line_gates_the_passes(spawn_body, thresholds, expect):
    client = spawn_body(thresholds=thresholds)
    client.initialize()
    traces = collect_traces(client, NEIGHBOURS[:2], 6)
    assert any(t["energy"] < 1.0 for t in traces)
    for trace in traces:
        check_trace(trace)
        assert trace["passes_run"] == expect(trace["energy"])


def test_a_hammered_session_drops_below_a_fresh_one_while_its_neighbour_stays_full(spawn_body):
    client, control = spawn_body(), spawn_body()
    client.initialize()
    control.initialize()
    hammered, neighbour = NEIGHBOURS[0], NEIGHBOURS[1]
    neighbour_first = say(client, neighbour, "good evening")
    assert neighbour_first["passes_run"] == PASS_COUNT
    drained = [say(client, hammered, f"again and again {n}") for n in range(HAMMER_TURNS)]
    fresh = say(client, ("newcomer", "#tavern", "corleone"), "hello?")
    assert fresh["passes_run"] == PASS_COUNT and fresh["energy"] == 1.0
    assert drained[0]["passes_run"] == PASS_COUNT
    assert drained[-1]["passes_run"] < fresh["passes_run"]
    neighbour_second = say(client, neighbour, "still here")
    say(control, neighbour, "good evening")
    assert turn_fingerprint(neighbour_second) == turn_fingerprint(say(control, neighbour, "still here"))


def test_a_pinned_session_runs_the_passes_of_its_pinned_energy(ready_body):
    if not SHIPPED_ORGANS.is_file():
        pytest.skip("no default organ fixture")
    fixture = json.loads(SHIPPED_ORGANS.read_text())
    for pin in fixture["drive_box"]["pinned"]:
        for n in range(3):
            trace = say(ready_body, (pin["uid"], pin["channel"], pin["server"]), f"tired {n}")
            assert trace["energy"] == pin["energy"]


# -- L4 and the static order ---------------------------------------------------------------------

def test_a_sessions_traces_do_not_change_when_other_sessions_talk_in_between(spawn_body):
    quiet, busy = spawn_body(), spawn_body()
    quiet.initialize()
    busy.initialize()
    script = ["remember the red door", "what is behind the door?", "please open it", "run!", "make tea",
              "what do you remember?"]
    alone = [say(quiet, BASE, text) for text in script]
    together = []
    for n, text in enumerate(script):
        for other in NEIGHBOURS[1:]:
            for k in range(n % 3 + 1):
                say(busy, other, f"noise {n}.{k}: remember the blue door")
        together.append(say(busy, BASE, text))
    assert [turn_fingerprint(t) for t in together] == [turn_fingerprint(t) for t in alone]


def test_the_step_order_names_and_organs_are_the_same_every_turn(ready_body):
    traces = collect_traces(ready_body, [*NEIGHBOURS, ("demo-tired", "general", "demo")], 6)
    shapes = {tuple((s["index"], s["name"], s["organ"]) for s in t["steps"]) for t in traces}
    assert len(shapes) == 1
    [shape] = shapes
    assert shape[0][1:] == ("scope", "C1")


def test_coherence_never_feeds_the_next_turn(ready_body):
    """Energy after a turn depends on (energy, passes) only, whatever that turn's coherence was,
    and sessions fed the same inputs agree on everything the next turn shows but the session."""
    rooms = [(f"u{n}", "c", "s") for n in range(6)]
    history = defaultdict(list)
    for n in range(8):
        for number, room in enumerate(rooms):
            history[room].append(say(ready_body, room, f"step {n}: {'why? ' * (number + n % 3)}remember"))
    transitions = defaultdict(set)
    coherences = defaultdict(set)
    for traces in history.values():
        for before, after in itertools.pairwise(traces):
            key = (before["energy"], before["passes_run"])
            transitions[key].add(after["energy"])
            coherences[key].add(before["coherence"]["score"])
    assert all(len(next_energy) == 1 for next_energy in transitions.values()), transitions
    assert any(len(scores) > 1 for scores in coherences.values()), \
        "the sample should hold equal (energy, passes) with differing coherence"


def test_intent_rules_fold_ascii_case_only_and_never_match_inside_another_character(spawn_body, tmp_path):
    """Routing compares words by ASCII case: a UTF-8 rule word matches itself, whatever the ASCII
    around it, and never the bytes of a different character (Latin-1 folding turned the lead byte
    of "Ó", C3 93, into E3 93, the start of "㓀")."""
    fixture = json.loads(SHIPPED_ORGANS.read_text(encoding="utf-8"))
    fixture["intent"]["rules"] = [{"intent": "remember", "contains": "Ó"}]
    organs = tmp_path / "organs.json"
    organs.write_text(json.dumps(fixture, ensure_ascii=False), encoding="utf-8")
    client = spawn_body(organs=organs)
    client.initialize()

    def intent(text: str) -> str:
        return client.call_turn(text, "u", "c", "s")["route"]["intent"]

    assert intent("SEÑOR Ó") == "remember"
    assert intent("rule word in lower case: ó") != "remember", "Ó and ó differ outside ASCII"
    assert intent("a different character: 㓀") != "remember"
