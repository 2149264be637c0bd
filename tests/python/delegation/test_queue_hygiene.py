"""Queue hygiene: a nested drain touches nothing, corrupt items are set aside, one root for queue and ledger,
and one hash for one task however its paths and tags are written."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from harness.autobot import delegate, parse_intent
from harness.autobot.queue import Queue
from harness.cli import main
from harness.cli.exit_codes import ExitCode
from support import harness_bounded

from .delegation_support import PROCESS_BOUND_S, make_fifo, read_ledger, release_fifo, wait_fifo


def tree_of(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.rglob("*")}


def test_a_nested_drain_refuses_to_start_and_touches_nothing(fake_hermes, project, make_intent, monkeypatch,
                                                             capsys) -> None:
    Queue.for_project(project).enqueue(parse_intent(make_intent()))
    before = tree_of(project)
    monkeypatch.setenv("HERMES_AUTOBOT_DELEGATED", "1")
    assert main(["drain"]) == ExitCode.CANNOT_RUN
    assert "nested_delegation" in capsys.readouterr().err
    assert tree_of(project) == before and fake_hermes.calls() == []


def test_corrupt_pending_items_are_moved_aside_with_a_reason_and_counted(fake_hermes, project, make_intent) -> None:
    queue = Queue.for_project(project)
    good = queue.enqueue(parse_intent(make_intent()))
    pending = queue.folder("pending")
    (pending / "00000000T000000000000-torn.json").write_text('{"item_id": "torn", "intent": {')
    (pending / "00000000T000000000001-shape.json").write_text(json.dumps({"item_id": "shape", "intent": {},
                                                                         "attempts": "two", "history": []}))
    report = queue.drain(5, lambda document, item_id: delegate(document))
    assert sorted(c["item_id"] for c in report.corrupt) == ["00000000T000000000000-torn", "00000000T000000000001-shape"]
    assert [r["item_id"] for r in report.ran] == [good["item_id"]] and not report.all_ok
    assert sorted(p.name for p in pending.iterdir()) == []
    reasons = {p.name: json.loads(p.read_text())["reason"] for p in queue.folder("corrupt").glob("*.reason")}
    assert "not JSON" in reasons["00000000T000000000000-torn.json.reason"]
    assert "'attempts'" in reasons["00000000T000000000001-shape.json.reason"]
    shown = {i["item_id"]: i for i in queue.inspect()["items"]}
    assert shown["00000000T000000000000-torn"]["problem"].startswith("corrupt: not JSON")
    assert queue.inspect()["counts"]["corrupt"] == 2 and queue.drain(5, lambda d, i: delegate(d)).corrupt == []


def test_an_item_enqueued_from_elsewhere_lands_in_its_project_queue_and_is_drained_into_its_ledger(
        fake_hermes, project, make_intent, tmp_path, monkeypatch, capsys) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("MAFIABOT_PROJECT_ROOT")
    intent_file = tmp_path / "intent.json"
    intent_file.write_text(json.dumps(make_intent()))
    assert main(["enqueue", "--intent-file", str(intent_file)]) == 0
    assert json.loads(capsys.readouterr().out)["queue"] == str(Queue.for_project(project).root)
    assert not (elsewhere / ".agents").exists()
    assert main(["drain", "--project-root", str(project)]) == 0
    assert [r["status"] for r in read_ledger(project)] == ["ok"] and len(fake_hermes.calls()) == 1


def test_the_hash_normalises_paths_and_the_order_of_paths_and_tags(project, make_intent) -> None:
    spellings = [make_intent(target_paths=["./docs/a.md", "docs/b.md"], write_to="./out/x.md", tags=["b", "a"]),
                 make_intent(target_paths=["docs/b.md", "docs//a.md"], write_to="out/x.md", tags=["a", "b"]),
                 make_intent(target_paths=[str(project / "docs" / "a.md"), "docs/./b.md"],
                             write_to=str(project / "out" / "x.md"), tags=["a", "b", "a"])]
    hashes = {parse_intent(document).hash for document in spellings}
    assert len(hashes) == 1
    assert parse_intent(make_intent(target_paths=["docs/a.md"], write_to="out/x.md", tags=["a", "b"])).hash \
        not in hashes  # a different set of materials is a different task


def test_the_same_task_spelt_two_ways_never_runs_twice_at_once(fake_hermes, project, make_intent,
                                                               tmp_path) -> None:
    started, release = make_fifo(tmp_path / "started"), make_fifo(tmp_path / "release")
    fake_hermes.script({"gate": {"started": str(started), "release": str(release)}, "stdout": "done"})
    first: list = []
    runner = threading.Thread(target=lambda: first.append(delegate(make_intent(target_paths=["./docs/a.md"],
                                                                               tags=["x", "y"]))))
    runner.start()
    try:
        wait_fifo(started, what="the first delegation's Hermes start")
        second = delegate(make_intent(target_paths=["docs/a.md"], tags=["y", "x"]))
        assert second.degraded_reason == "lock_held"
    finally:
        release_fifo(release)
        runner.join(PROCESS_BOUND_S)
    assert first[0].status == "ok" and len(fake_hermes.calls()) == 1
    assert os.listdir(project / ".agents" / "state" / "hermes-runs") == []



def test_an_item_that_is_a_fifo_a_device_or_has_no_task_is_set_aside_never_waited_on_or_read_without_end(
        fake_hermes, project, make_intent) -> None:
    queue = Queue.for_project(project)
    good = queue.enqueue(parse_intent(make_intent()))
    pending = queue.folder("pending")
    make_fifo(pending / "00000000T000000000000-fifo.json")
    (pending / "00000000T000000000001-zero.json").symlink_to("/dev/zero")
    (pending / "00000000T000000000002-textless.json").write_text(json.dumps(
        {"item_id": "textless", "intent": {"project_root": str(project)}, "attempts": 0, "history": []}))
    claimed = queue.folder("running")
    claimed.mkdir()
    make_fifo(claimed / "00000000T000000000003-claimed-fifo.json")  # probed for its drainer's lock first
    listed = harness_bounded("queue", "--json", "--project-root", str(project))
    assert listed.returncode == 0, listed.stderr
    problems = {i["item_id"]: i.get("problem") for i in json.loads(listed.stdout)["items"]}
    assert problems == {good["item_id"]: None, "00000000T000000000000-fifo": "unreadable",
                        "00000000T000000000001-zero": "unreadable", "00000000T000000000002-textless": "unreadable",
                        "00000000T000000000003-claimed-fifo": "unreadable"}
    drained = harness_bounded("drain", "--max", "5", "--project-root", str(project), "--compact")
    assert drained.returncode == ExitCode.NOT_DONE, drained.stderr  # ran the good one; three set aside
    report = json.loads(drained.stdout)
    assert [r["item_id"] for r in report["ran"]] == [good["item_id"]] and len(fake_hermes.calls()) == 1
    reasons = {c["item_id"]: c["reason"] for c in report["corrupt"]}
    assert "is not a regular file (a FIFO)" in reasons["00000000T000000000000-fifo"]
    assert "is not a regular file (a character device)" in reasons["00000000T000000000001-zero"]
    assert reasons["00000000T000000000002-textless"] == "field 'intent.intent' is missing or not a str"
    assert sorted(p.name for p in pending.iterdir()) == [] and list(claimed.iterdir()) == []
    assert (queue.folder("corrupt") / "00000000T000000000003-claimed-fifo.json").exists()
