"""Every turn costs work linear in its input and in what it is compared against (issue 12, item 4).

Each worst case of `tests/corpus/worst_case.py` is built against one organ or stage (recall
against the session's memory, the intender's rules, the reader, the UTF-8 decoder). Two
properties are held, both on the work one more byte of input costs (the slope, which leaves
out a turn's fixed work):
- linear in the input: the slope between 2S and 4S bytes is that between S and 2S, within
  SLOPE_BOUND (quadratic work doubles it);
- linear in what the input is compared against: the slope with the case's memory or
  near-miss rule is that with a fraction of it (`Case.lighter`), within SLOPE_BOUND (a naive
  recall pays each remembered byte once per word of the input: some 60x here).

Invariants:
- Work is counted, not timed: valgrind's callgrind counts the body's instructions, which do
  not depend on what else the shared machine runs.
- Every run is bounded by RUN_TIMEOUT: a regression to quadratic work fails by timing out
  (MoRAG's old recall needs minutes under callgrind at 4S) instead of hanging the suite.
- Only figures of one input built the same way are compared, never a figure against a
  constant of this machine.
- A conversation is counted once per body and organs file: the slope tests need the 2S and 4S turns
  the linearity tests count, and one count of an input serves both.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support import load_worst_cases

WORST = load_worst_cases()
S = 128 * 1024
SLOPE_BOUND = 1.5  # linear: ~1; quadratic in the input: 2; per byte x memory: the memory ratio
# callgrind runs the body ~50x slower: a linear 512 KiB turn takes a few seconds under it
RUN_TIMEOUT = 90.0

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind (callgrind)")


# (body, the organs file's bytes, the conversation's) -> the instructions callgrind counted
_COUNTED: dict[tuple[str, bytes, bytes], int] = {}


def instructions(body: Path, fixture: Path, conversation: bytes, work: Path) -> int:
    key = (str(body), hashlib.sha256(fixture.read_bytes()).digest(), hashlib.sha256(conversation).digest())
    if key not in _COUNTED:
        _COUNTED[key] = counted_instructions(body, fixture, conversation, work)
    return _COUNTED[key]


def counted_instructions(body: Path, fixture: Path, conversation: bytes, work: Path) -> int:
    try:
        run = subprocess.run(
            ["valgrind", "--tool=callgrind",
             str(body), "--organs", str(fixture), "--no-soul"],
            input=conversation, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            timeout=RUN_TIMEOUT, cwd=work)
    except subprocess.TimeoutExpired:
        pytest.fail(f"one conversation took over {RUN_TIMEOUT:g} s under callgrind: "
                    "a turn's work is no longer linear")
    found = re.search(rb"Collected : (\d+)", run.stderr)
    assert run.returncode == 0 and found is not None, run.stderr[-2000:].decode(errors="replace")
    return int(found.group(1))


def slope(body: Path, fixture: Path, case, low: int, high: int, work: Path,
          memory: tuple[str, ...] | None = None) -> float:
    """Instructions per byte of input between turns of `low` and `high` bytes."""
    cost = {size: instructions(body, fixture, WORST.requests(case, size, memory), work) for size in (low, high)}
    return (cost[high] - cost[low]) / (WORST.line_bytes(case, high) - WORST.line_bytes(case, low))


@pytest.mark.parametrize("case", WORST.CASES, ids=[case.name for case in WORST.CASES])
def test_a_worst_case_turn_costs_work_linear_in_its_input(case, body_exe: Path, tmp_path: Path):
    fixture = WORST.write_fixture(tmp_path, case.largest)
    costs = {size: instructions(body_exe, fixture, WORST.requests(case, size), tmp_path)
             for size in (S, 2 * S, 4 * S)}
    lower = (costs[2 * S] - costs[S]) / (WORST.line_bytes(case, 2 * S) - WORST.line_bytes(case, S))
    upper = (costs[4 * S] - costs[2 * S]) / (WORST.line_bytes(case, 4 * S) - WORST.line_bytes(case, 2 * S))
    assert lower > 0, "one more byte of input cost nothing: the case no longer reaches the body"
    assert upper / lower < SLOPE_BOUND, (
        f"{case.name}: {upper:.1f} instructions a byte from {2 * S:,} to {4 * S:,} bytes against "
        f"{lower:.1f} from {S:,} to {2 * S:,} ({case.target}: {case.why})")


@pytest.mark.parametrize("case", [c for c in WORST.CASES if c.against],
                         ids=[c.name for c in WORST.CASES if c.against])
def test_a_byte_of_input_costs_the_same_against_more_to_compare(case, body_exe: Path, tmp_path: Path):
    memory, rule_bytes = case.lighter()
    full = slope(body_exe, WORST.write_fixture(tmp_path, case.largest), case, 2 * S, 4 * S, tmp_path)
    light = slope(body_exe, WORST.write_fixture(tmp_path, case.largest, rule_bytes), case, 2 * S, 4 * S,
                  tmp_path, memory)
    assert light > 0
    assert full / light < SLOPE_BOUND, (
        f"{case.name}: {full:.1f} instructions a byte of input against the whole {case.against}, "
        f"{light:.1f} against a fraction of it ({case.target}: {case.why})")


def test_the_worst_cases_are_answered_not_refused(body_exe: Path, tmp_path: Path):
    """The inputs are as large as the cases claim and each turn is served, so the slopes above
    are those of turns, not of refusals."""
    for case in WORST.CASES:
        fixture = WORST.write_fixture(tmp_path, case.largest)
        done = subprocess.run([str(body_exe), "--organs", str(fixture), "--no-soul"],
                              input=WORST.requests(case, 4 * S), capture_output=True, timeout=RUN_TIMEOUT,
                              cwd=tmp_path)
        replies = done.stdout.splitlines()
        assert len(replies) == 1 + len(case.memory) + 1, case.name
        last = replies[-1]
        assert b'"id":1000' in last and b'"isError":false' in last, (case.name, last[:300])
        assert 0.85 * 4 * S <= WORST.line_bytes(case, 4 * S) <= 4 * S, case.name
