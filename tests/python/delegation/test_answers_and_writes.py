"""Every path after the spawn still ledgers the run; answers are bounded; writes are confined when they happen."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from harness.autobot import delegate
from harness.autobot.output import MAX_JSON_DEPTH, OutputInvalid, validate_output
from harness.autobot.writer import HERMES_MEMORY_LIMITS, WRITE_CAP_MULTIPLE
from harness.hermes import HermesTransport, RunRequest, TransportSettings

from .delegation_support import PROCESS_BOUND_S, make_fifo, read_ledger, read_ledger_lines, release_fifo, wait_fifo


def settled_once(project: Path) -> dict:
    """The one settlement of the one run, checked against its started record."""
    started, settled = read_ledger_lines(project)
    assert started["status"] == "started" and settled["started_record_id"] == started["record_id"]
    return settled


def kept_raw(envelope) -> str:
    return Path(envelope.extra["raw_response"]).read_text()


def test_a_deeply_nested_json_answer_is_refused_not_crashed_and_still_ledgered(fake_hermes, project,
                                                                               make_intent) -> None:
    answer = "[" * 100_000 + "]" * 100_000
    fake_hermes.script({"stdout": answer})
    envelope = delegate(make_intent(expected_output="json"))
    assert envelope.degraded_reason == "output_validation_failed" and "nests 100000 levels" in envelope.extra["detail"]
    assert settled_once(project)["reason"] == "output_validation_failed" and kept_raw(envelope) == answer


@pytest.mark.parametrize("answer", ['{"a": NaN}', "[Infinity]", '{"x": -Infinity}', '```json\n[NaN]\n```'])
def test_json_answers_are_strict(answer: str) -> None:
    with pytest.raises(OutputInvalid):
        validate_output(answer, "json")


def test_json_as_deep_as_the_bound_passes_and_one_level_more_does_not() -> None:
    deep = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert validate_output(deep, "json") == deep
    with pytest.raises(OutputInvalid, match="nests"):
        validate_output("[" + deep + "]", "json")
    assert validate_output('{"k": "[[[[["}', "json") == '{"k": "[[[[["}'  # brackets in strings do not nest


def gated(fake_hermes, tmp_path: Path, **step) -> tuple[Path, Path]:
    started, release = make_fifo(tmp_path / "started"), make_fifo(tmp_path / "release")
    fake_hermes.script({"gate": {"started": str(started), "release": str(release)}, **step})
    return started, release


def during_the_run(fake_hermes, tmp_path: Path, document: dict, change, **step):
    """Delegate `document`; while Hermes runs, `change()` the file system; return the envelope."""
    started, release = gated(fake_hermes, tmp_path, **step)
    result: list = []
    runner = threading.Thread(target=lambda: result.append(delegate(document)))
    runner.start()
    try:
        wait_fifo(started, what="the fake's start")
        change()
    finally:
        release_fifo(release)
        runner.join(PROCESS_BOUND_S)
    assert result, "the delegation did not finish"
    return result[0]


def test_a_fifo_put_at_the_append_target_during_the_run_is_refused_without_blocking(
        fake_hermes, project, make_intent, tmp_path) -> None:
    (project / "notes").mkdir()
    fifo = project / "notes" / "log.md"
    envelope = during_the_run(fake_hermes, tmp_path, make_intent(write_to="notes/log.md", append_with_separator="§"),
                              lambda: os.mkfifo(fifo), stdout="an entry")
    assert envelope.degraded_reason == "write_failed" and "a FIFO" in envelope.extra["detail"]
    assert settled_once(project)["reason"] == "write_failed" and kept_raw(envelope) == "an entry"


def test_a_fifo_already_at_the_target_is_refused_before_anything_runs(fake_hermes, project, make_intent) -> None:
    os.mkfifo(project / "docs" / "pipe.md")
    envelope = delegate(make_intent(write_to="docs/pipe.md"))
    assert (envelope.status, envelope.degraded_reason) == ("degraded", "invalid_intent")
    assert "a FIFO" in envelope.extra["detail"]
    assert fake_hermes.calls() == []


def test_a_folder_swapped_for_a_symlink_during_the_run_is_not_followed_out_of_the_project(
        fake_hermes, project, make_intent, tmp_path) -> None:
    (project / "out" / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()

    def swap() -> None:
        (project / "out" / "sub").rename(project / "out" / "sub-old")
        (project / "out" / "sub").symlink_to(outside)

    envelope = during_the_run(fake_hermes, tmp_path, make_intent(write_to="out/sub/a.md"), swap, stdout="secret")
    assert (envelope.degraded_reason, envelope.wrote_to) == ("write_failed", None)
    assert "no longer a folder" in envelope.extra["detail"]
    assert list(outside.iterdir()) == [] and settled_once(project)["reason"] == "write_failed"


def test_a_runaway_answer_is_not_appended_to_hermes_memory(fake_hermes, project, make_intent, hermes_root) -> None:
    memory = hermes_root / "memories" / "MEMORY.md"
    memory.write_text("an old entry")
    fake_hermes.script({"huge": 5 << 20})
    envelope = delegate(make_intent(write_to=str(memory), append_with_separator="§"))
    assert envelope.degraded_reason == "output_too_long" and envelope.wrote_to is None
    assert memory.read_text() == "an old entry" and len(kept_raw(envelope)) == 5 << 20
    assert settled_once(project)["reason"] == "output_too_long"


def test_an_append_that_would_grow_a_memory_file_past_hermes_limit_is_refused(fake_hermes, project, make_intent,
                                                                              hermes_root) -> None:
    limit = HERMES_MEMORY_LIMITS["USER.md"]
    user = hermes_root / "profiles" / "tester" / "memories" / "USER.md"
    user.parent.mkdir(parents=True)
    old = "u" * (limit - 100)
    user.write_text(old)
    room = limit - len(old) - len("\n§\n")  # Hermes's entry separator joins the old text and the answer
    fake_hermes.script({"stdout": "a" * room}, {"stdout": "a" * (room + 1)})
    fits = delegate(make_intent(write_to=str(user), append_with_separator="§"))
    assert fits.status == "ok" and len(user.read_text()) == limit
    user.write_text(old)
    over = delegate(make_intent(write_to=str(user), append_with_separator="§"))
    assert over.degraded_reason == "output_too_long" and f"limit for its USER.md is {limit}" in over.extra["detail"]
    assert user.read_text() == "u" * (limit - 100)


def test_an_answer_past_the_write_cap_is_kept_beside_the_ledger_not_written(fake_hermes, project,
                                                                            make_intent) -> None:
    cap = WRITE_CAP_MULTIPLE * 100
    fake_hermes.script({"stdout": "w" * cap}, {"stdout": "w" * (cap + 1)})
    assert delegate(make_intent(write_to="docs/at-cap.md", max_chars=100)).status == "ok"
    over = delegate(make_intent(write_to="docs/over.md", max_chars=100))
    assert over.degraded_reason == "output_too_long" and not (project / "docs" / "over.md").exists()
    assert kept_raw(over) == "w" * (cap + 1)
    assert [r["reason"] for r in read_ledger(project)] == [None, "output_too_long"]


def test_stderr_is_capped_like_stdout(fake_hermes, hermes_root) -> None:
    fake_hermes.script({"huge_stderr": 1 << 20})
    transport = HermesTransport(TransportSettings(max_stderr_bytes=1 << 16))
    outcome = transport.run(RunRequest(prompt="talk a lot", profile="tester", timeout_s=60))
    assert outcome.reason == "output_too_large" and "stderr" in outcome.detail


def test_a_full_disk_at_write_time_still_ledgers_the_run_and_keeps_the_answer(fake_hermes, project, make_intent,
                                                                              monkeypatch) -> None:
    from harness import durable

    real_replace = os.replace

    def no_space(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        if str(dst).endswith("full.md"):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(durable.os, "replace", no_space)
    fake_hermes.script({"stdout": "the answer"})
    envelope = delegate(make_intent(write_to="docs/full.md"))
    assert envelope.degraded_reason == "write_failed" and "No space left" in envelope.extra["detail"]
    assert settled_once(project)["reason"] == "write_failed" and kept_raw(envelope) == "the answer"
    assert not [p for p in (project / "docs").iterdir() if p.name.startswith(".full.md")]


def test_an_unforeseen_failure_after_the_spawn_still_settles_the_run_and_keeps_the_answer(
        fake_hermes, project, make_intent, monkeypatch) -> None:
    import importlib
    delegation = importlib.import_module("harness.autobot.delegate")  # the package's `delegate` is the function

    def broken(text: str, expected: str) -> str:
        raise RuntimeError("a bug in a check")

    monkeypatch.setattr(delegation, "validate_output", broken)
    fake_hermes.script({"stdout": "the paid answer"})
    with pytest.raises(RuntimeError):
        delegate(make_intent())
    settled = settled_once(project)
    assert (settled["status"], settled["reason"]) == ("error", "harness_error")
    assert "a bug in a check" in settled["detail"] and Path(settled["raw_response"]).read_text() == "the paid answer"
    assert settled["usage"]["source"] == "hermes_state_db"
