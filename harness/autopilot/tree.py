"""The run tree as the ledger records it: failed attempts, spend, recent spawns of a task, subtrees.

The ledger is the one record shared by every process of a tree (a child that re-enters auto-pilot
is another process, appending to the same file), so tree-wide limits are computed from it, not
from any one process's memory.

Invariants:
- Only records of kind KIND with the tree's `tree_id` belong to a tree; a record's `parent_id` is
  the id of the agent that spawned it (the root run's id for depth-1 children, else the child that
  re-entered), so a child's subtree is every record reachable from it through `parent_id`.
- `failed_attempt` is true exactly on records of spawns that ran and did not yield an accepted
  result; refusals (nothing spawned) are never attempts. Spend is summed the ledger report's way
  (`Totals`): only costs Hermes reported count as money, tokens always count.
- Spawn times are the records' `started_at`; a record without one is not counted as a spawn.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from harness.ledger.report import Totals
from harness.ledger.store import LedgerStore

KIND = "autopilot"


@dataclass
class TreeScan:
    """What one pass over the ledger says about a tree and about one task's recent spawns."""

    records: list[dict[str, Any]] = field(default_factory=list)
    spawns_of_task: list[tuple[str, float]] = field(default_factory=list)

    @property
    def failed_attempts(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("failed_attempt") is True]

    def totals(self) -> Totals:
        return totals_of(self.records)


def epoch_of(text: Any) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def scan(ledger: LedgerStore, tree_id: str, task_key: str | None = None) -> TreeScan:
    """One pass: the tree's records, and (any tree) the spawns of `task_key` with their start times."""
    result = TreeScan()
    for record in ledger.records():
        if record.get("kind") != KIND:
            continue
        if record.get("tree_id") == tree_id:
            result.records.append(record)
        if task_key is not None and record.get("task_key") == task_key and record.get("spawned") is True:
            started = epoch_of(record.get("started_at"))
            if started is not None:
                result.spawns_of_task.append((str(record.get("child_id")), started))
    return result


def totals_of(records: Iterable[dict[str, Any]]) -> Totals:
    totals = Totals()
    for record in records:
        totals.add(record)
    return totals


def subtree(records: list[dict[str, Any]], root_id: str) -> list[dict[str, Any]]:
    """Every record below `root_id` (not the root's own record), through parent_id links."""
    children: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        children.setdefault(str(record.get("parent_id")), []).append(record)
    found, frontier = [], [root_id]
    while frontier:
        current = frontier.pop()
        for record in children.get(current, []):
            found.append(record)
            child_id = record.get("child_id")
            if isinstance(child_id, str) and child_id != current:
                frontier.append(child_id)
    return found
