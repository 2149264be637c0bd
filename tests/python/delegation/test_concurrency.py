"""Delegations and dispatches at once, the same intent twice at once, and crashes mid-write: real files, real locks."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.autobot import delegate
from harness.autobot.writer import write_artifact
from harness.dispatch import DispatchSettings, dispatch
from harness.ledger import Ledger, default_ledger_path

from .delegation_support import (
    PROCESS_BOUND_S,
    killed_mid_write,
    make_fifo,
    read_ledger,
    read_ledger_lines,
    release_fifo,
    wait_fifo,
)

RUNS = 32


def test_32_concurrent_delegations_and_dispatches_share_one_ledger_without_loss(fake_hermes, project,
                                                                                 make_intent) -> None:
    settings = DispatchSettings(ledger_path=default_ledger_path(project))

    def one(n: int) -> tuple[str, str]:
        if n % 2:
            envelope = delegate(make_intent(f"task {n}"))
            return envelope.status, envelope.ledger_entry
        result = dispatch({"target": "andy", "task_source": "t", "context": f"c{n}", "reference_id": f"r{n}"},
                          settings)
        assert result.envelope["status"] == "delivered", result.envelope
        return result.envelope["status"], result.envelope["transport"]["details"]["ledger_entry"]

    with ThreadPoolExecutor(max_workers=RUNS) as pool:
        results = list(pool.map(one, range(RUNS)))
    assert sorted({status for status, _ in results}) == ["delivered", "ok"]
    verification = Ledger(default_ledger_path(project)).verify()
    assert (verification.lines, verification.good, verification.problems) == (2 * RUNS, 2 * RUNS, [])
    every = read_ledger_lines(project)
    settlements = [every[int(ref.rsplit("#L", 1)[1]) - 1] for _, ref in results]
    assert all(record["phase"] == "settled" for record in settlements)
    started_ids = {record["record_id"] for record in every if record["status"] == "started"}
    assert len(started_ids) == RUNS and {record["started_record_id"] for record in settlements} == started_ids
    assert len(fake_hermes.calls()) == RUNS


def test_two_identical_intents_at_once_run_exactly_once(fake_hermes, project, make_intent, tmp_path) -> None:
    started, release = make_fifo(tmp_path / "started"), make_fifo(tmp_path / "release")
    fake_hermes.script({"gate": {"started": str(started), "release": str(release)}, "stdout": "done"})
    first: list = []
    runner = threading.Thread(target=lambda: first.append(delegate(make_intent())))
    runner.start()
    try:
        wait_fifo(started, what="the first delegation's Hermes start")
        second = delegate(make_intent())
        assert (second.status, second.degraded_reason) == ("degraded", "lock_held")
        holder = second.extra["lock_holder"]
        assert holder["label"].startswith("intent-") and isinstance(holder["pid"], int)
    finally:
        release_fifo(release)
        runner.join(PROCESS_BOUND_S)
    assert first[0].status == "ok" and len(fake_hermes.calls()) == 1
    assert sorted(r["reason"] or "ok" for r in read_ledger(project)) == ["lock_held", "ok"]
    assert not list((project / ".agents" / "state").glob("autobot.*.lock"))


def test_a_crash_mid_append_leaves_the_artifact_whole_and_the_next_append_cleans_up(tmp_path: Path) -> None:
    memory = tmp_path / "MEMORY.md"
    write_artifact(memory, "first entry", "§")
    status = killed_mid_write("from harness.autobot.writer import write_artifact\n"
                              "write_artifact(Path(sys.argv[1]), 'a new entry that never lands ' * 200, '§')",
                              str(memory))
    assert status == -9
    assert memory.read_text() == "first entry"
    assert list(tmp_path.glob(".MEMORY.md.tmp-*"))
    write_artifact(memory, "second entry", "§")
    assert memory.read_text() == "first entry\n§\nsecond entry"
    assert not list(tmp_path.glob(".MEMORY.md.tmp-*"))
