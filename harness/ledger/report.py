"""Reading the ledger back: totals by day, profile, model, tag, status and kind, and the failures.

Invariants:
- Totals are of runs, not lines: a journal's `started` record is not counted as a call; it is
  matched with its settlement (`reconcile`), and one still unsettled is counted apart (`open`), in
  flight or not, so a total never hides a run that has not been accounted for.
- Totals count every readable record; damaged lines are counted apart (`unreadable`) and never
  make a report fail. Spend sums only figures Hermes reported; records whose cost is unknown
  and records whose tokens are estimates are counted, so a total never passes an estimate off as real.
- The model a record is filed under is the one that answered when Hermes said so, else the one asked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.answers import cut
from harness.ledger.store import LedgerStore, is_started
from harness.trace import render_table

SUCCESS = frozenset({"ok", "delivered"})
# Failures a reader is shown by default: the newest, enough to see a pattern, few enough to read.
DEFAULT_MAX_FAILURES = 20
# Groups of one dimension a bounded summary shows: two months of days, or the tags that matter.
DEFAULT_MAX_GROUPS = 60
# A failure's own text in a bounded summary: a line that says what went wrong (a writer caps a child's detail
# at 300; a ledger another hand wrote may hold anything).
MAX_FAILURE_TEXT = 300
DIMENSIONS = ("day", "profile", "model", "tag", "status", "kind")
# The dimensions as the help and the tool's description say them.
DIMENSIONS_TEXT = ", ".join(DIMENSIONS[:-1]) + " and " + DIMENSIONS[-1]


@dataclass
class Totals:
    calls: int = 0
    ok: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0
    estimated: int = 0

    def add(self, record: dict[str, Any]) -> None:
        usage = found if isinstance(found := record.get("usage"), dict) else {}
        self.calls += 1
        if record.get("status") in SUCCESS:
            self.ok += 1
        else:
            self.failed += 1
        self.input_tokens += _int(usage.get("input_tokens"))
        self.output_tokens += _int(usage.get("output_tokens"))
        if usage.get("source") == "estimate":
            self.estimated += 1
        cost = usage.get("cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and usage.get("cost_status") != "unknown":
            self.cost_usd += cost
        elif usage.get("source") != "not_run":
            self.cost_unknown += 1

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "ok": self.ok, "failed": self.failed, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cost_usd": round(self.cost_usd, 6),
                "cost_unknown": self.cost_unknown, "estimated": self.estimated}


@dataclass
class Reconciliation:
    """How the journal's `started` records and their settlements pair up."""

    started: int = 0
    settled: int = 0
    open: list[dict[str, Any]] = field(default_factory=list)
    unmatched: list[dict[str, Any]] = field(default_factory=list)
    duplicated: list[dict[str, Any]] = field(default_factory=list)

    def problems(self, in_flight: frozenset[str] = frozenset()) -> list[str]:
        """What is wrong, one line each; an open run still held by its owner is not a problem."""
        found = [f"run {r.get('hermes_run')} (started record {r.get('record_id')}, {r.get('ts')}) was never settled"
                 for r in self.open if r.get("hermes_run") not in in_flight]
        found += [f"settlement {r.get('record_id')} names started record {r.get('started_record_id')}, which the "
                  f"ledger does not hold" for r in self.unmatched]
        found += [f"started record {r.get('started_record_id')} is settled more than once (again by "
                  f"{r.get('record_id')})" for r in self.duplicated]
        return found

    def to_dict(self, max_listed: int | None = None) -> dict[str, Any]:
        """The counts, and the runs of each list; with `max_listed`, only the newest that many of each list,
        and how many it holds (`open_total`...)."""
        lists = {"open": [r.get("hermes_run") for r in self.open],
                 "unmatched": [r.get("record_id") for r in self.unmatched],
                 "duplicated": [r.get("record_id") for r in self.duplicated]}
        if max_listed is None:
            return {"started": self.started, "settled": self.settled, **lists}
        return {"started": self.started, "settled": self.settled,
                **{name: newest(ids, max_listed) for name, ids in lists.items()},
                **{f"{name}_total": len(ids) for name, ids in lists.items()}}


def reconcile(records: Iterable[dict[str, Any]]) -> Reconciliation:
    result = Reconciliation()
    started: dict[Any, dict[str, Any]] = {}
    settled: set[Any] = set()
    for record in records:
        if is_started(record):
            result.started += 1
            started[record.get("record_id")] = record
        elif record.get("started_record_id") is not None:
            result.settled += 1
            key = record["started_record_id"]
            if key in settled:
                result.duplicated.append(record)
            elif key not in started:
                result.unmatched.append(record)
            settled.add(key)
    result.open = [r for key, r in started.items() if key not in settled]
    return result


@dataclass
class Summary:
    total: Totals = field(default_factory=Totals)
    by: dict[str, dict[str, Totals]] = field(default_factory=lambda: {d: {} for d in DIMENSIONS})
    failures: list[dict[str, Any]] = field(default_factory=list)
    unreadable: int = 0
    runs: Reconciliation = field(default_factory=Reconciliation)

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON, whole (the command line's `ledger --json`)."""
        return {"total": self.total.to_dict(),
                "by": {d: {k: t.to_dict() for k, t in sorted(groups.items())} for d, groups in self.by.items()},
                "failures": self.failures, "unreadable_lines": self.unreadable, "runs": self.runs.to_dict()}

    def bounded_dict(self, max_failures: int, max_groups: int) -> dict[str, Any]:
        """The summary as JSON for a host that asked for bounds: the whole totals; of each dimension the
        `max_groups` groups of the most calls (of `day`, the newest days), `by_groups_total` saying how many
        it has; the newest `max_failures` failures, their texts cut to MAX_FAILURE_TEXT, and of each list of
        unsettled or unmatched runs (`failures_total`, `runs.open_total`...)."""
        by = {d: {k: groups[k].to_dict() for k in sorted(_most_telling(d, groups, max_groups))}
              for d, groups in self.by.items()}
        failures = [{**f, "what": _cut_text(f["what"]), "detail": _cut_text(f["detail"])}
                    for f in self.newest_failures(max_failures)]
        return {"total": self.total.to_dict(), "by": by,
                "by_groups_total": {d: len(groups) for d, groups in self.by.items()},
                "failures": failures, "failures_total": len(self.failures), "unreadable_lines": self.unreadable,
                "runs": self.runs.to_dict(max_listed=max_failures)}

    def newest_failures(self, count: int) -> list[dict[str, Any]]:
        return newest(self.failures, count)


def newest(items: list[Any], count: int) -> list[Any]:
    """The last `count` of `items`, which are oldest first."""
    return items[max(0, len(items) - count):] if count > 0 else []


def _most_telling(dimension: str, groups: dict[str, Totals], count: int) -> list[str]:
    """The `count` keys of `groups` a bounded summary shows: the newest days, else those of the most calls
    (ties by key, so that the same ledger always shows the same groups)."""
    if dimension == "day":
        return sorted(groups)[max(0, len(groups) - count):] if count > 0 else []
    return sorted(groups, key=lambda key: (-groups[key].calls, key))[:count]


def _cut_text(text: Any) -> Any:
    return cut(text, MAX_FAILURE_TEXT) if isinstance(text, str) else text


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def keys_of(record: dict[str, Any], dimension: str) -> list[str]:
    if dimension == "day":
        return [str(record.get("ts", ""))[:10] or "(unknown)"]
    if dimension == "model":
        answered = found if isinstance(found := record.get("answered_by"), dict) else {}
        return [str(answered.get("model") or record.get("model") or "(profile default)")]
    if dimension == "tag":
        tags = found if isinstance(found := record.get("tags"), list) else []
        return [str(t) for t in tags] or ["(none)"]
    value = record.get(dimension)
    return [str(value) if value not in (None, "") else "(none)"]


def what_of(record: dict[str, Any]) -> str:
    """What a run was for, as its kind names it: a delegation's intent, a dispatch's target and reference, an
    auto-pilot child's run and subtask."""
    if record.get("intent_id"):
        return str(record["intent_id"])
    if record.get("target") is not None:
        return f"{record.get('target')}:{record.get('reference_id')}"
    if record.get("subtask") is not None:
        return f"{record.get('run_id')}:{record.get('subtask')}"
    return str(record.get("record_id"))


def summarize(records: Iterable[dict[str, Any]], unreadable: int = 0) -> Summary:
    """Totals of the accounted records; `records` may include `started` records, which are reconciled, not counted."""
    every = list(records)
    summary = Summary(unreadable=unreadable, runs=reconcile(every))
    for record in every:
        if is_started(record):
            continue
        summary.total.add(record)
        for dimension in DIMENSIONS:
            for key in keys_of(record, dimension):
                summary.by[dimension].setdefault(key, Totals()).add(record)
        if record.get("status") not in SUCCESS:
            summary.failures.append({
                "ts": record.get("ts"), "kind": record.get("kind"), "record_id": record.get("record_id"),
                "what": what_of(record),
                "reason": record.get("reason"), "detail": record.get("detail") or
                (record.get("transport") or {}).get("detail")})
    return summary


def summarize_ledger(ledger: LedgerStore) -> Summary:
    """`summarize` of a whole ledger file, its unreadable lines counted."""
    records, unreadable = [], 0
    for line in ledger.lines():
        if line.record is None:
            unreadable += 1
        else:
            records.append(line.record)
    return summarize(records, unreadable)


def render_text(summary: Summary, max_failures: int = DEFAULT_MAX_FAILURES) -> str:
    columns = ("calls", "ok", "failed", "in tok", "out tok", "cost USD", "cost ?", "est.")
    right = frozenset(range(1, len(columns) + 1))
    blocks = []
    total = summary.total
    blocks.append(f"total: {total.calls} call(s), {total.ok} ok, {total.failed} failed, "
                  f"{total.input_tokens} input + {total.output_tokens} output tokens, ${total.cost_usd:.4f} "
                  f"reported ({total.cost_unknown} call(s) of unknown cost, {total.estimated} with estimated tokens)")
    if summary.unreadable:
        blocks.append(f"warning: {summary.unreadable} unreadable line(s); run `ledger verify`")
    if summary.runs.open:
        blocks.append(f"open: {len(summary.runs.open)} run(s) started and not settled yet (in flight, or "
                      f"settled by the next command once their Hermes tree is gone)")
    for dimension in DIMENSIONS:
        groups = summary.by[dimension]
        if not groups:
            continue
        rows = [(key, *(_cell(t, name) for name in ("calls", "ok", "failed", "input_tokens", "output_tokens",
                                                    "cost_usd", "cost_unknown", "estimated")))
                for key, t in sorted(groups.items())]
        blocks.append(f"by {dimension}:\n" + render_table((dimension, *columns), rows, right_aligned=right))
    if summary.failures:
        shown = summary.newest_failures(max_failures)
        lines = [f"  {f['ts']}  {f['kind']}  {f['what']}  {f['reason']}: {f['detail'] or ''}".rstrip()
                 for f in shown]
        more = len(summary.failures) - len(shown)
        blocks.append(f"failures ({len(summary.failures)}{f', last {len(shown)} shown' if more else ''}):\n"
                      + "\n".join(lines))
    return "\n\n".join(blocks)


def _cell(totals: Totals, name: str) -> str:
    value = getattr(totals, name)
    return f"{value:.4f}" if isinstance(value, float) else str(value)
