"""The cost ledger with real files and locks: line numbers, concurrent appends, crashes, reports, verify.

Line numbers and concurrent appends hold for both stores (a file, a PostgreSQL table: `where`)."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.cli import main
from harness.database import connect
from harness.ledger import Ledger
from harness.ledger.pg_store import PgLedger
from harness.ledger.report import summarize
from harness.ledger.store import LedgerStore

from .delegation_support import killed_mid_write

# A forked appender takes milliseconds; this bounds only a wedged one.
CHILD_BOUND_S = 60.0
APPENDERS = 32



def record(**fields) -> dict:
    return {"kind": "delegation", "status": "ok", **fields}


@contextmanager
def opened(where: str) -> Iterator[LedgerStore]:
    """The ledger at `where`: a postgresql:// URL (its own session), else a file."""
    if not where.startswith("postgresql://"):
        yield Ledger(Path(where))
        return
    with connect(where) as database:
        yield PgLedger(database, Path("/nonexistent"))


@pytest.fixture(params=["files", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return request.getfixturevalue("pg_url") if request.param == "postgresql" else str(tmp_path / "l.jsonl")


def _append_one(where: str, number: int, results) -> None:
    with opened(where) as ledger:
        entry = ledger.append(record(n=number, pad="y" * 3000))
    results.put((number, entry.line))


def test_append_returns_the_line_each_record_landed_on(where: str) -> None:
    with opened(where) as ledger:
        entries = [ledger.append(record(n=n)) for n in range(3)]
        assert [e.line for e in entries] == [1, 2, 3]
        assert [r["n"] for r in ledger.records()] == [0, 1, 2]
        first = next(ledger.records())
    assert first["v"] == 1 and first["record_id"] == entries[0].record_id and first["ts"].endswith("Z")


def test_32_processes_appending_at_once_lose_nothing_and_get_distinct_lines(where: str) -> None:
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    workers = [context.Process(target=_append_one, args=(where, n, results)) for n in range(APPENDERS)]
    for worker in workers:
        worker.start()
    landed = dict(results.get(timeout=CHILD_BOUND_S) for _ in workers)
    for worker in workers:
        worker.join(CHILD_BOUND_S)
    with opened(where) as ledger:
        assert ledger.verify().ok
        records = list(ledger.records())
    assert len(records) == APPENDERS and sorted(landed.values()) == list(range(1, APPENDERS + 1))
    assert all(records[line - 1]["n"] == n for n, line in landed.items())


def test_a_second_settlement_of_one_run_is_refused_by_the_database_and_writes_nothing(pg_url: str) -> None:
    from harness.ledger.store import AlreadySettled
    with opened(pg_url) as ledger:
        started = ledger.append({"kind": "delegation", "status": "started"})
        ledger.append(record(started_record_id=started.record_id, who="owner"))
        with pytest.raises(AlreadySettled):
            ledger.append(record(started_record_id=started.record_id, who="reaper"))
        assert [r.get("who") for r in ledger.records()] == ["owner"]
        assert ledger.run_state(started.record_id) == (True, True)


def test_a_writer_killed_mid_append_leaves_a_readable_ledger_and_the_next_append_starts_clean(
        tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    ledger = Ledger(path)
    ledger.append(record(n=1))
    status = killed_mid_write("from harness.ledger import Ledger\n"
                              "Ledger(Path(sys.argv[1])).append({'kind': 'delegation', 'status': 'ok', 'pad': 'x' * 4000})",
                              str(path))
    assert status == -9
    torn = ledger.verify()
    assert (torn.lines, torn.good, torn.problems[0][0]) == (2, 1, 2) and "truncated" in torn.problems[0][1]
    assert ledger.append(record(n=3)).line == 3
    after = ledger.verify()
    assert (after.lines, after.good, [n for n, _ in after.problems]) == (3, 2, [2])
    assert [r["n"] for r in ledger.records()] == [1, 3]


def test_totals_count_reported_spend_apart_from_unknown_costs_and_estimates() -> None:
    records = [
        record(ts="2026-05-01T10:00:00Z", profile="p", tags=["a", "b"], answered_by={"model": "M"},
               usage={"source": "hermes_state_db", "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.5,
                      "cost_status": "estimated"}),
        record(ts="2026-05-01T11:00:00Z", profile="p", status="degraded", reason="provider_error",
               usage={"source": "estimate", "input_tokens": 7, "output_tokens": 0, "cost_usd": None}),
        record(ts="2026-05-02T09:00:00Z", profile="q", kind="dispatch", status="delivered",
               usage={"source": "hermes_state_db", "input_tokens": 1, "output_tokens": 1, "cost_usd": 0.0,
                      "cost_status": "unknown"}),
    ]
    summary = summarize(records).to_dict()
    assert summary["total"] == {"calls": 3, "ok": 2, "failed": 1, "input_tokens": 18, "output_tokens": 6,
                                "cost_usd": 0.5, "cost_unknown": 2, "estimated": 1}
    assert list(summary["by"]["day"]) == ["2026-05-01", "2026-05-02"]
    assert summary["by"]["tag"]["a"]["calls"] == 1 and summary["by"]["tag"]["(none)"]["calls"] == 2
    assert summary["by"]["model"]["M"]["cost_usd"] == 0.5
    assert [f["reason"] for f in summary["failures"]] == ["provider_error"]


def test_a_failure_is_named_by_what_its_kind_ran() -> None:
    failed = {"status": "degraded", "reason": "provider_error"}
    summary = summarize([{**failed, "kind": "delegation", "intent_id": "intent-7"},
                         {**failed, "kind": "dispatch", "target": "andy", "reference_id": "mail-4711"},
                         {**failed, "kind": "autopilot", "run_id": "ap-1", "subtask": "habits", "child_id": "c-1"},
                         {**failed, "kind": "other", "record_id": "rec-9"}])
    assert [f["what"] for f in summary.failures] == ["intent-7", "andy:mail-4711", "ap-1:habits", "rec-9"]


def test_the_ledger_command_reports_totals_and_draws_a_png(tmp_path: Path, capsys) -> None:
    pytest.importorskip("matplotlib")
    path = tmp_path / "l.jsonl"
    Ledger(path).append(record(profile="p", usage={"source": "hermes_state_db", "input_tokens": 3,
                                                   "output_tokens": 2, "cost_usd": 0.25, "cost_status": "ok"}))
    png = tmp_path / "spend.png"
    assert main(["ledger", "--ledger", str(path), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "total: 1 call(s), 1 ok, 0 failed" in out and "by profile:" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["ledger", "--ledger", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"]["cost_usd"] == 0.25


def test_ledger_verify_exits_1_naming_the_damaged_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "l.jsonl"
    Ledger(path).append(record())
    assert main(["ledger", "verify", "--ledger", str(path)]) == 0
    with open(path, "a") as handle:
        handle.write('{"kind": "delegation", "sta')
    assert main(["ledger", "verify", "--ledger", str(path)]) == 1
    assert "line 2: truncated" in capsys.readouterr().out


def test_totals_count_runs_not_lines_and_reconcile_started_records_with_their_settlements() -> None:
    from harness.ledger.report import reconcile, summarize

    started = [{"record_id": f"s{n}", "status": "started", "kind": "delegation", "hermes_run": f"run-{n}"}
               for n in range(4)]
    settled = [{"record_id": "a", "status": "ok", "kind": "delegation", "started_record_id": "s0"},
               {"record_id": "b", "status": "cancelled", "kind": "delegation", "started_record_id": "s1"},
               {"record_id": "c", "status": "ok", "kind": "delegation", "started_record_id": "s1"},
               {"record_id": "d", "status": "ok", "kind": "delegation", "started_record_id": "elsewhere"}]
    refusal = {"record_id": "e", "status": "degraded", "kind": "delegation", "reason": "lock_held"}
    summary = summarize([*started, *settled, refusal])
    assert (summary.total.calls, summary.total.ok, summary.total.failed) == (5, 3, 2)
    runs = reconcile([*started, *settled, refusal])
    assert (runs.started, runs.settled) == (4, 4)
    assert [r["hermes_run"] for r in runs.open] == ["run-2", "run-3"]
    assert [r["record_id"] for r in runs.duplicated] == ["c"] and [r["record_id"] for r in runs.unmatched] == ["d"]
    problems = runs.problems(in_flight=frozenset({"run-3"}))
    assert len(problems) == 3 and "run-2" in problems[0] and not any("run-3" in p for p in problems)
