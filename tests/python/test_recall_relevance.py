"""F1 recall by relevance (`--recall relevance`), through real pipes.

Invariants held here:
- A turn recalls the session's earlier turns that share the input's words, ranked by BM25 over this
  session's kept turns: a later turn about an earlier subject recalls that subject's turn, not the latest.
- The trace says which turns were recalled and why: the sense step's detail (and so the prompts a sampling
  cognition sends) names each as "turn T (score S): excerpt", and every excerpt named is that session's
  own turn T, never another session's (L1), however many sessions share the words.
- The same recall after a restart on `--state`, and the same with and without a store: the ranking reads
  only the session's kept turns, which the store keeps in the session's record.
- The same as data: every relevance turn's result has a `recall` member, its mode and the turns and
  scores the text names, in its order; the outputSchema declares it, so the SDK client validates it.
- Without the flag (the default, `--recall fixture`) nothing changes: the fixture's recall, no scores, no
  `recall` member in a result or in the outputSchema.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from sampling_support import prompt_of, run_turn, start_sampling_body, turn_request

RELEVANCE = ("--recall", "relevance")
ROOM = ("ada", "#kitchen", "s")

# Turns about different things; the last asks about the second again.
SUBJECTS = [
    "the harbour boats sail out at dawn",
    "a recipe for lemon cake needs sugar and butter",
    "the weather forecast says heavy rain tomorrow",
    "my bicycle chain snapped on the hill",
]
ABOUT_THE_SECOND = "how much sugar goes into the lemon cake?"

HIT = re.compile(r"turn (\d+) \(score (\d+\.\d{3})\): ([^;']*)")


def recall_detail(trace: dict[str, Any]) -> str:
    detail = trace["steps"][1]["detail"]
    assert isinstance(detail, str)
    return detail


def hits(trace: dict[str, Any]) -> list[tuple[int, float, str]]:
    """The (turn, score, excerpt) the sense step names, best first."""
    return [(int(t), float(s), e) for t, s, e in HIT.findall(recall_detail(trace))]


def talk(client: Any, inputs: list[str], room: tuple[str, str, str] = ROOM) -> list[dict[str, Any]]:
    return [client.call_turn(text, *room) for text in inputs]


def test_a_later_turn_about_the_second_subject_recalls_the_second_not_the_latest(spawn_body):
    client = spawn_body(extra_args=RELEVANCE)
    client.initialize()
    traces = talk(client, [*SUBJECTS, ABOUT_THE_SECOND])
    found = hits(traces[-1])
    assert found, recall_detail(traces[-1])
    assert found[0][0] == 2 and found[0][2] == SUBJECTS[1], found
    latest = [score for turn, score, _ in found if turn == 4]
    assert all(score < found[0][1] for score in latest), "the latest turn shares only 'the', and ranks below"
    assert [score for _, score, _ in found] == sorted((score for _, score, _ in found), reverse=True)
    assert "recalled 'turn 2 (score" in traces[-1]["output"], "the output carries the recall too"


def test_the_result_says_the_recalled_turns_and_scores_as_data(spawn_body):
    client = spawn_body(extra_args=RELEVANCE)
    client.initialize()
    traces = talk(client, [*SUBJECTS, ABOUT_THE_SECOND, "zzz qqq"])
    for trace in traces:
        recall = trace["recall"]
        assert recall["mode"] == "relevance"
        assert [(hit["turn"], hit["score"]) for hit in recall["hits"]] == \
            [(turn, score) for turn, score, _ in hits(trace)], recall_detail(trace)
    assert traces[0]["recall"]["hits"] == [], "the first turn has nothing to recall"
    assert traces[-2]["recall"]["hits"][0]["turn"] == 2
    assert traces[-1]["recall"]["hits"] == [], "no shared word, no turn named"


def test_no_shared_word_recalls_nothing(spawn_body):
    client = spawn_body(extra_args=RELEVANCE)
    client.initialize()
    traces = talk(client, [*SUBJECTS, "zzz qqq"])
    assert hits(traces[-1]) == []
    assert recall_detail(traces[-1]).endswith("recall: nothing")


def test_many_sessions_sharing_words_never_recall_each_other(spawn_body):
    rng = random.Random(24)
    words = ["harbour", "sugar", "rain", "bicycle", "lemon", "chain", "boats", "storm"]
    rooms = [(f"user{n}", "#shared", "s") for n in range(12)]
    said: dict[tuple[str, str, str], dict[int, str]] = {room: {} for room in rooms}
    client = spawn_body(extra_args=RELEVANCE)
    client.initialize()
    recalled = 0
    for _ in range(150):
        room = rng.choice(rooms)
        text = f"{room[0]} says " + " ".join(rng.choice(words) for _ in range(4))
        trace = client.call_turn(text, *room)
        for turn, _, excerpt in hits(trace):
            recalled += 1
            assert said[room].get(turn) == excerpt, (room, turn, excerpt)
            assert excerpt.startswith(room[0] + " says"), "no other session's turn ever appears"
        said[room][trace["turn"]] = text
    assert recalled > 100, "the sessions shared words, so recall drew on many earlier turns"


def test_the_same_recall_after_a_restart_on_the_store_and_without_one(spawn_body, tmp_path: Path):
    store = tmp_path / "sessions.db"
    first = spawn_body(extra_args=(*RELEVANCE, "--state", str(store)))
    first.initialize()
    talk(first, SUBJECTS)
    first.close()
    second = spawn_body(extra_args=(*RELEVANCE, "--state", str(store)))
    second.initialize()
    after_restart = talk(second, [ABOUT_THE_SECOND])[-1]

    in_memory = spawn_body(extra_args=RELEVANCE)
    in_memory.initialize()
    unstored = talk(in_memory, [*SUBJECTS, ABOUT_THE_SECOND])[-1]

    assert after_restart["turn"] == 5
    assert hits(after_restart)[0][0] == 2
    assert recall_detail(after_restart) == recall_detail(unstored)


def test_the_default_recall_stays_the_fixtures(spawn_body):
    client = spawn_body()
    client.initialize()
    traces = talk(client, [*SUBJECTS, ABOUT_THE_SECOND])
    assert hits(traces[-1]) == []
    assert "recall: '" in recall_detail(traces[-1])
    assert all("recall" not in trace for trace in traces), "the fixture's results keep their members"


def test_the_sampled_prompts_carry_the_recalled_turns_and_scores(spawn_body):
    client = start_sampling_body(spawn_body, *RELEVANCE)
    for number, text in enumerate([*SUBJECTS, ABOUT_THE_SECOND], start=1):
        turn = run_turn(client, request=turn_request(text, uid="ada", request_id=100 + number),
                        request_id=100 + number)
    assert turn.requests, "the last turn asked the client's model"
    first = hits(turn.trace)[0]
    assert first[0] == 2
    expected = f"turn 2 (score {first[1]:.3f}): {SUBJECTS[1]}"
    assert all(expected in prompt_of(request) for request in turn.requests), prompt_of(turn.requests[0])
