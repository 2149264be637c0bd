"""The intent lock: non-blocking, stamped with its holder, never wiped by a contender, free when its holder dies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.autobot import delegate, parse_intent
from harness.durable import HolderLock, LockHeld, read_holder

from .delegation_support import PROCESS_BOUND_S, read_ledger

DIE_HOLDING = """
import os, signal, sys
from pathlib import Path
from harness.durable import HolderLock
HolderLock(Path(sys.argv[1]), label="doomed").acquire("2026-01-01T00:00:00Z")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_contender_is_refused_at_once_and_learns_who_holds_without_wiping_the_stamp(tmp_path: Path) -> None:
    path = tmp_path / "autobot.abc.lock"
    holder = HolderLock(path, label="first").acquire("2026-05-15T19:14:28Z")
    try:
        with pytest.raises(LockHeld) as caught:
            HolderLock(path, label="second").acquire("2026-05-15T19:15:00Z")
        assert caught.value.holder.to_dict() == {"pid": os.getpid(),
                                                 "started_at": "2026-05-15T19:14:28Z", "label": "first"}
        assert read_holder(path).label == "first"
    finally:
        holder.release()
    assert not path.exists()


def test_the_lock_of_a_holder_that_died_is_free(tmp_path: Path) -> None:
    path = tmp_path / "autobot.abc.lock"
    child = subprocess.run([sys.executable, "-c", DIE_HOLDING, str(path)], timeout=PROCESS_BOUND_S, check=False)
    assert child.returncode == -9 and json.loads(path.read_text())["label"] == "doomed"
    with HolderLock(path, label="next").acquire("2026-05-15T19:16:00Z"):
        assert read_holder(path).label == "next"


def test_a_stale_or_garbled_lock_file_does_not_block(tmp_path: Path) -> None:
    path = tmp_path / "autobot.abc.lock"
    path.write_text("not json at all")
    with HolderLock(path).acquire("2026-05-15T19:16:00Z"):
        assert read_holder(path).started_at == "2026-05-15T19:16:00Z"


def test_a_fifo_in_the_intent_locks_place_refuses_the_delegation_in_one_line_and_spawns_nothing(
        fake_hermes, project, make_intent) -> None:
    document = make_intent()
    state = project / ".agents" / "state"
    state.mkdir(parents=True)
    lock = state / f"autobot.{parse_intent(document).hash}.lock"
    os.mkfifo(lock)
    envelope = delegate(document)
    assert (envelope.status, envelope.degraded_reason) == ("degraded", "write_failed")
    assert envelope.extra["detail"] == f"cannot take the intent lock: lock file {lock} is not a regular file"
    assert fake_hermes.calls() == [] and [r["reason"] for r in read_ledger(project)] == ["write_failed"]
