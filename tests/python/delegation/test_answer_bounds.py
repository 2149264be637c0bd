"""`harness.answers`: the bound a caller gets, the marker counted in it, the whole kept and its folder pruned."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import answers
from harness.answers import bounded, cut


@pytest.mark.parametrize("max_chars", [1, 5, 31, 32, 4000, 99_999])
def test_a_cut_answer_never_exceeds_max_chars_marker_included(max_chars: int) -> None:
    text = "x" * 100_000
    shown = cut(text, max_chars)
    assert len(shown) <= max_chars
    if max_chars > 40:
        assert shown.endswith("…[cut: 100000 characters in all]") and shown.startswith("x")


def test_an_answer_that_fits_is_untouched_and_no_file_is_kept(tmp_path: Path) -> None:
    kept = bounded("short", 10, tmp_path, "a")
    assert (kept.shown, kept.cut, kept.to_fields("response")) == ("short", False,
                                                                  {"response": "short", "response_cut": False})
    assert not (tmp_path / answers.ANSWERS_DIR).exists()


def test_only_the_newest_kept_answers_stay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answers, "MAX_KEPT_FILES", 3)
    for n in range(5):
        kept = bounded("y" * 50, 10, tmp_path, f"answer-{n}")
        assert kept.file is not None
        os.utime(kept.file, ns=(n * 10**9, n * 10**9))
    assert sorted(p.name for p in (tmp_path / answers.ANSWERS_DIR).iterdir()) == [
        "answer-2.txt", "answer-3.txt", "answer-4.txt"]


def test_an_unwritable_state_folder_keeps_the_bound_and_says_why(tmp_path: Path) -> None:
    (tmp_path / answers.ANSWERS_DIR).write_text("a file where the folder should be")
    kept = bounded("z" * 50, 10, tmp_path, "a")
    fields = kept.to_fields("reply")
    assert len(kept.shown) <= 10 and fields["reply_file"] is None and fields["reply_keep_error"]


def test_a_consolidators_reasons_and_open_points_reach_the_host_within_max_chars() -> None:
    from harness.serve.tools import bounded_autopilot
    huge = "r" * 100_000
    envelope = {"children": [], "debate": {"merged": None, "reasons": ["short", huge, "never shown"],
                                           "rounds": [{"round": 1, "open_points": [huge]}, {"round": 2}]}}
    debate = bounded_autopilot(envelope, 4000)["debate"]
    assert debate["reasons"][0] == "short" and len(debate["reasons"]) == 2
    assert sum(map(len, debate["reasons"])) <= 4000 and debate["reasons"][1].endswith("characters in all]")
    assert sum(map(len, debate["rounds"][0]["open_points"])) <= 4000
    assert "open_points" not in debate["rounds"][1]
