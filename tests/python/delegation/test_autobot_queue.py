"""The autobot queue: drained items run once, transient failures retry with backoff, then dead-letter.

Each behaviour holds for both stores (`backend`: the project's files, a PostgreSQL database)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from harness.autobot import delegate, parse_intent
from harness.autobot.queue import Queue

from .conftest import Backend


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def runner_of(backend: Backend):
    def runner(document: dict, item_id: str):
        return delegate(document, settings=backend.settings(queue_item=item_id))
    return runner


def ids_in(queue, state: str) -> list[str]:
    return [item["item_id"] for item in queue.items_in(state)]


def test_a_drained_item_runs_once_and_lands_in_done(fake_hermes, backend, make_intent) -> None:
    queue, runner = backend.queue(), runner_of(backend)
    item = queue.enqueue(parse_intent(make_intent()))
    report = queue.drain(5, runner)
    assert [(r["item_id"], r["status"], r["moved_to"]) for r in report.ran] == [(item["item_id"], "ok", "done")]
    assert queue.drain(5, runner).ran == []
    assert len(fake_hermes.calls()) == 1 and backend.settled()[0]["queue_item"] == item["item_id"]
    assert ids_in(queue, "done") == [item["item_id"]]


def test_items_drain_first_in_first_out_up_to_the_limit(fake_hermes, backend, make_intent) -> None:
    queue = backend.queue()
    ids = [queue.enqueue(parse_intent(make_intent(f"task {n}")))["item_id"] for n in range(3)]
    report = queue.drain(2, runner_of(backend))
    assert [r["item_id"] for r in report.ran] == ids[:2] and report.pending == 1


def test_a_transient_failure_retries_after_backoff_then_dead_letters_with_its_last_envelope(
        fake_hermes, backend, make_intent) -> None:
    fake_hermes.script({"stdout": "API call failed after 1 retries: HTTP 503: busy", "exit": 1})
    clock = Clock()
    queue, runner = backend.queue(clock=clock), runner_of(backend)
    queue.enqueue(parse_intent(make_intent()))
    first = queue.drain(5, runner, max_attempts=3, backoff_base_s=30)
    assert [r["moved_to"] for r in first.ran] == ["pending"] and first.next_due is not None
    assert queue.drain(5, runner, max_attempts=3, backoff_base_s=30).ran == []
    clock.now += 30
    assert [r["moved_to"] for r in queue.drain(5, runner, max_attempts=3, backoff_base_s=30).ran] == ["pending"]
    clock.now += 59
    assert queue.drain(5, runner, max_attempts=3, backoff_base_s=30).ran == []
    clock.now += 1
    last = queue.drain(5, runner, max_attempts=3, backoff_base_s=30)
    assert [(r["moved_to"], r["attempts"]) for r in last.ran] == [("dead_letter", 3)]
    [item] = queue.items_in("dead_letter")
    assert item["last_envelope"]["degraded_reason"] == "provider_error" and len(item["history"]) == 3
    assert len(fake_hermes.calls()) == 3 and [r["reason"] for r in backend.settled()] == ["provider_error"] * 3


def test_a_permanent_failure_goes_to_dead_letter_at_once(fake_hermes, backend, make_intent) -> None:
    queue = backend.queue()
    queue.enqueue(parse_intent(make_intent(hermes_profile="ghost")))
    report = queue.drain(5, runner_of(backend))
    assert [(r["reason"], r["moved_to"]) for r in report.ran] == [("profile_not_found", "dead_letter")]


def test_two_drainers_at_once_never_run_an_item_twice(fake_hermes, backend, make_intent) -> None:
    queue, runner = backend.queue(), runner_of(backend)
    for n in range(8):
        queue.enqueue(parse_intent(make_intent(f"task {n}")))
    reports = []
    threads = [threading.Thread(target=lambda: reports.append(queue.drain(20, runner))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ran = [r["item_id"] for report in reports for r in report.ran]
    assert len(ran) == len(set(ran)) == 8
    assert len(fake_hermes.calls()) == 8 and len(ids_in(queue, "done")) == 8
    assert sorted(r["queue_item"] for r in backend.settled()) == sorted(ran)


def test_an_item_left_running_by_a_dead_drainer_is_dead_lettered_not_rerun(fake_hermes, project,
                                                                           make_intent) -> None:
    queue = Queue.for_project(project)
    item = queue.enqueue(parse_intent(make_intent()))
    name = f"{item['item_id']}.json"
    queue.folder("running").mkdir(parents=True)
    os.rename(queue.folder("pending") / name, queue.folder("running") / name)
    assert queue.inspect()["items"][0]["problem"].startswith("orphaned")
    report = queue.drain(5, runner_of(Backend("files", project, None)))
    assert report.orphaned == [item["item_id"]] and report.ran == [] and not report.all_ok
    assert ids_in(queue, "dead_letter") == [item["item_id"]] and fake_hermes.calls() == []


def test_queue_commands_enqueue_drain_and_show_states(fake_hermes, backend, make_intent, tmp_path: Path) -> None:
    from harness.cli import main
    intent_file = tmp_path / "intent.json"
    intent_file.write_text(json.dumps(make_intent()))
    bad_file = tmp_path / "bad.json"
    bad_file.write_text(json.dumps(make_intent(tags="a,b")))
    assert main(["enqueue", "--intent-file", str(intent_file), *backend.cli()]) == 0
    assert main(["enqueue", "--intent-file", str(bad_file), *backend.cli()]) == 2
    assert main(["queue", "--json", *backend.cli()]) == 0
    assert main(["drain", "--max", "3", *backend.cli()]) == 0
    assert main(["ledger", "verify", *backend.cli()]) == 0
    assert backend.queue().inspect()["counts"] == {"pending": 0, "running": 0, "done": 1, "dead_letter": 0,
                                                   "corrupt": 0}
    assert [r["status"] for r in backend.settled()] == ["ok"]


def test_a_bounded_inspect_lists_pending_items_first_and_counts_every_state_whole(
        fake_hermes, backend, make_intent) -> None:
    queue = backend.queue()
    first = [queue.enqueue(parse_intent(make_intent(f"task {n}")))["item_id"] for n in range(3)]
    assert queue.drain(2, runner_of(backend)).all_ok
    later = [queue.enqueue(parse_intent(make_intent(f"task {n}")))["item_id"] for n in range(3, 5)]
    shown = queue.inspect(max_items=2)
    # filed earlier, the done items come after every pending one
    assert [(i["item_id"], i["state"]) for i in shown["items"]] == [(first[2], "pending"), (later[0], "pending")]
    assert shown["counts"] == {"pending": 3, "running": 0, "done": 2, "dead_letter": 0, "corrupt": 0}
    assert [i["item_id"] for i in queue.inspect()["items"]] == [first[2], *later, *first[:2]]
    assert queue.inspect(max_items=0)["items"] == []
