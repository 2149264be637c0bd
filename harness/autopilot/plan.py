"""The plan a host agent hands to auto-pilot: goal, mode, band, sub-tasks and limits, validated whole.

YAML shape (only `goal` and `subtasks` required):

    goal: Prepare the weekly report           # one line, the operator's goal
    mode: sequential                          # sequential | parallel | dueto | swarm | recursive | debate-converge
    band: L2                                  # L1 | L2 | L3 (or L1-cautious, L2-bounded, L3-extended)
    registry: agents.yaml                     # relative to the plan; else --registry / $MAFIABOT_AGENT_REGISTRY
    default_agent: andy
    limits: {child_timeout_s: 180, max_turns: 10, retries: 2, expected_output_tokens: 2000, parallel: 3,
             max_cost_usd: 1.5, max_total_tokens: 200000}
    converge: {agent: judge, max_rounds: 3, write_to: out/decision.md}    # debate-converge only
    subtasks:
      - {id: gather, task: "Collect the figures", agent: andy, write_to: out/figures.md}
      - {id: draft, task: "Draft the summary", uses: [gather], expected_output_tokens: 800}
    dna: |                                    # a child re-entering: the DNA block it was given
      ...

Invariants:
- `parse_plan` returns a fully normalised `Plan` or raises `PlanInvalid` naming the first bad field
  (`subtasks[1].uses`); unknown keys are errors, never ignored.
- The hard caps hold whatever the plan says: at most 3 children at once (`dueto` is exactly 2
  sub-tasks at width 2, `swarm` at least 3 at width 3, both the parallel code path), at most 3
  debate rounds and 2-3 proposers, at most MAX_SUBTASKS sub-tasks, at most 5 retries per sub-task.
- Sub-task ids are unique; `uses` names only earlier sub-tasks and only in ordered modes; no two
  sub-tasks write the same file; recursive mode needs a band whose children can run commands.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.autopilot.bands import DEFAULT_BAND, Band, parse_band
from harness.autopilot.config import number_in_range, read_yaml
from harness.autopilot.errors import PlanInvalid
from harness.dispatch.registry import normalize

MODES = ("sequential", "parallel", "recursive", "debate-converge")
ALIASES = {"dueto": 2, "swarm": 3}
HARD_MAX_PARALLEL = 3
HARD_MAX_ROUNDS = 3
HARD_MAX_RETRIES = 5
MAX_SUBTASKS = 12
MAX_TASK_CHARS = 4000
MAX_GOAL_CHARS = 500
SUBTASK_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
TOP_KEYS = frozenset({"version", "goal", "mode", "band", "registry", "default_agent", "limits", "converge",
                      "subtasks", "dna"})
SUBTASK_KEYS = frozenset({"id", "task", "agent", "write_to", "destructive", "expected_output_tokens", "uses"})
CONVERGE_KEYS = frozenset({"agent", "max_rounds", "write_to"})


@dataclass(frozen=True)
class Limits:
    child_timeout_s: float = 180.0
    max_turns: int = 10
    retries: int = 2
    expected_output_tokens: int = 2000
    parallel: int = HARD_MAX_PARALLEL
    max_cost_usd: float | None = None
    max_total_tokens: int | None = None


LIMIT_TYPES: dict[str, tuple[type, float, float]] = {
    "child_timeout_s": (float, 0.001, 86400), "max_turns": (int, 1, 250), "retries": (int, 0, HARD_MAX_RETRIES),
    "expected_output_tokens": (int, 1, 10_000_000), "parallel": (int, 1, HARD_MAX_PARALLEL),
    "max_cost_usd": (float, 0, 1e9), "max_total_tokens": (int, 1, 10**12),
}


@dataclass(frozen=True)
class Subtask:
    id: str
    task: str
    agent: str | None = None
    write_to: str | None = None
    destructive: bool = False
    expected_output_tokens: int | None = None
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Converge:
    agent: str | None = None
    max_rounds: int = HARD_MAX_ROUNDS
    write_to: str | None = None


@dataclass(frozen=True)
class Plan:
    goal: str
    mode: str
    requested_mode: str
    width: int
    band: Band
    subtasks: tuple[Subtask, ...]
    limits: Limits = field(default_factory=Limits)
    converge: Converge | None = None
    default_agent: str | None = None
    registry: Path | None = None
    dna: str | None = None
    source: str = "(inline)"

    @property
    def ordered(self) -> bool:
        return self.mode in ("sequential", "recursive")

    def subtask(self, subtask_id: str) -> Subtask:
        return next(s for s in self.subtasks if s.id == subtask_id)

    @property
    def hash(self) -> str:
        """Identity of the work, for the lock that keeps the same plan from running twice at once."""
        body = {"goal": self.goal, "mode": self.mode, "width": self.width, "band": self.band.value,
                "subtasks": [asdict(s) for s in self.subtasks], "converge": asdict(self.converge) if self.converge
                else None}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def load_plan(path: Path, mode: str | None = None, band: str | None = None) -> Plan:
    document = read_yaml(path, "plan")
    return parse_plan(document, base_dir=path.resolve().parent, source=str(path), mode=mode, band=band)


def parse_plan(document: Any, base_dir: Path, source: str = "(inline)", mode: str | None = None,
               band: str | None = None) -> Plan:
    """A validated plan; `mode` and `band` (command-line overrides) replace the plan's own."""
    if not isinstance(document, dict):
        raise PlanInvalid("plan", "must be a mapping with 'goal' and 'subtasks'")
    _no_unknown(document, TOP_KEYS, "")
    if document.get("version", 1) != 1:
        raise PlanInvalid("version", f"only version 1 exists, got {document.get('version')!r}")
    goal = _text(document.get("goal"), "goal", MAX_GOAL_CHARS, one_line=True)
    requested = _mode(mode if mode is not None else document.get("mode", "sequential"),
                      "--mode" if mode is not None else "mode")
    chosen_band = parse_band(band, "--band") if band is not None else (
        parse_band(document["band"]) if document.get("band") is not None else DEFAULT_BAND)
    limits = _limits(document.get("limits", {}))
    subtasks = _subtasks(document.get("subtasks"))
    resolved = "parallel" if requested in ALIASES else requested
    width = _width(requested, resolved, limits, len(subtasks))
    _check_order(subtasks, resolved)
    if resolved == "recursive" and chosen_band is Band.L1:
        raise PlanInvalid("band", "recursive mode needs L2 or L3: its children re-enter auto-pilot by running a "
                                  "command, which L1-cautious children cannot do")
    converge = _converge(document.get("converge"), resolved)
    writes = [s.write_to for s in subtasks if s.write_to] + ([converge.write_to] if converge and converge.write_to
                                                             else [])
    if len(writes) != len(set(writes)):
        raise PlanInvalid("subtasks", "two steps write the same file; each write_to must be distinct")
    registry = document.get("registry")
    if registry is not None:
        registry = base_dir / _text(registry, "registry", 4096, one_line=True)
    default_agent = document.get("default_agent")
    if default_agent is not None:
        default_agent = normalize(_text(default_agent, "default_agent", 64, one_line=True))
    dna = document.get("dna")
    if dna is not None and (not isinstance(dna, str) or not dna.strip()):
        raise PlanInvalid("dna", "must be the DNA block text")
    return Plan(goal=goal, mode=resolved, requested_mode=requested, width=width, band=chosen_band,
                subtasks=subtasks, limits=limits, converge=converge, default_agent=default_agent,
                registry=registry, dna=dna, source=source)


def _no_unknown(mapping: dict[Any, Any], known: frozenset[str], prefix: str) -> None:
    unknown = sorted(str(k) for k in mapping if k not in known)
    if unknown:
        raise PlanInvalid(f"{prefix}{unknown[0]}", f"is not a plan field (known: {', '.join(sorted(known))})")


def _text(value: Any, field_name: str, limit: int, one_line: bool = False) -> str:
    if not isinstance(value, str) or not value.strip():
        raise PlanInvalid(field_name, f"must be a non-empty string, got {value!r}")
    if "\0" in value:
        raise PlanInvalid(field_name, "contains a NUL character")
    if one_line and any(ch in value.strip() for ch in "\n\r"):
        raise PlanInvalid(field_name, "must be one line")
    if len(value) > limit:
        raise PlanInvalid(field_name, f"is {len(value)} characters; at most {limit}")
    return value.strip()


def _mode(value: Any, field_name: str) -> str:
    text = str(value).strip().casefold() if isinstance(value, str) else value
    if text not in MODES and text not in ALIASES:
        raise PlanInvalid(field_name, f"{value!r} is not a mode ({', '.join([*MODES, *ALIASES])})")
    return text


def _limits(raw: Any) -> Limits:
    if not isinstance(raw, dict):
        raise PlanInvalid("limits", "must be a mapping")
    _no_unknown(raw, frozenset(LIMIT_TYPES), "limits.")
    values = {}
    for key, value in raw.items():
        kind, low, high = LIMIT_TYPES[key]
        if key == "parallel" and isinstance(value, int) and not isinstance(value, bool) and value > high:
            raise PlanInvalid("limits.parallel", f"at most {HARD_MAX_PARALLEL} children run at once (a hard cap), "
                                                 f"got {value}")
        if key == "retries" and isinstance(value, int) and not isinstance(value, bool) and value > high:
            raise PlanInvalid("limits.retries", f"at most {HARD_MAX_RETRIES} retries per sub-task, got {value}")
        values[key] = number_in_range(f"limits.{key}", value, kind, low, high)
    return Limits(**values)


def _subtasks(raw: Any) -> tuple[Subtask, ...]:
    if not isinstance(raw, list) or not raw:
        raise PlanInvalid("subtasks", "must be a non-empty list")
    if len(raw) > MAX_SUBTASKS:
        raise PlanInvalid("subtasks", f"{len(raw)} sub-tasks; at most {MAX_SUBTASKS} per plan (split the goal)")
    result: list[Subtask] = []
    for index, item in enumerate(raw):
        where = f"subtasks[{index}]"
        if isinstance(item, str):
            item = {"task": item}
        if not isinstance(item, dict):
            raise PlanInvalid(where, "must be a task string or a mapping with 'task'")
        _no_unknown(item, SUBTASK_KEYS, f"{where}.")
        subtask_id = item.get("id", f"s{index + 1}")
        if not isinstance(subtask_id, str) or not SUBTASK_ID.match(subtask_id):
            raise PlanInvalid(f"{where}.id", f"{subtask_id!r} is not an id (lowercase letters, digits, '_', '-')")
        if any(s.id == subtask_id for s in result):
            raise PlanInvalid(f"{where}.id", f"{subtask_id!r} is used twice")
        agent = item.get("agent")
        if agent is not None:
            agent = normalize(_text(agent, f"{where}.agent", 64, one_line=True))
        write_to = item.get("write_to")
        if write_to is not None:
            write_to = _text(write_to, f"{where}.write_to", 4096, one_line=True)
        destructive = item.get("destructive", False)
        if not isinstance(destructive, bool):
            raise PlanInvalid(f"{where}.destructive", f"must be true or false, got {destructive!r}")
        expected = item.get("expected_output_tokens")
        if expected is not None:
            expected = number_in_range(f"{where}.expected_output_tokens", expected, int, 1, 10_000_000)
        uses = item.get("uses", [])
        if not isinstance(uses, list) or not all(isinstance(u, str) for u in uses):
            raise PlanInvalid(f"{where}.uses", "must be a list of earlier sub-task ids")
        result.append(Subtask(subtask_id, _text(item.get("task"), f"{where}.task", MAX_TASK_CHARS), agent, write_to,
                              destructive, expected, tuple(uses)))
    return tuple(result)


def _width(requested: str, resolved: str, limits: Limits, count: int) -> int:
    if requested == "dueto" and count != 2:
        raise PlanInvalid("subtasks", f"dueto runs exactly 2 sub-tasks side by side, got {count}")
    if requested == "swarm" and count < 3:
        raise PlanInvalid("subtasks", f"swarm runs 3 sub-tasks at a time and needs at least 3, got {count}")
    if resolved == "debate-converge" and not 2 <= count <= HARD_MAX_PARALLEL:
        raise PlanInvalid("subtasks", f"debate-converge needs 2 or 3 proposals (one per sub-task), got {count}")
    if requested in ALIASES:
        return ALIASES[requested]
    if resolved == "parallel":
        return limits.parallel
    return count if resolved == "debate-converge" else 1


def _check_order(subtasks: tuple[Subtask, ...], mode: str) -> None:
    seen: set[str] = set()
    for index, subtask in enumerate(subtasks):
        for used in subtask.uses:
            if mode not in ("sequential", "recursive"):
                raise PlanInvalid(f"subtasks[{index}].uses", f"{mode} sub-tasks run side by side; only sequential "
                                                             f"and recursive plans can use earlier results")
            if used not in seen:
                raise PlanInvalid(f"subtasks[{index}].uses", f"{used!r} is not an earlier sub-task")
        seen.add(subtask.id)


def _converge(raw: Any, mode: str) -> Converge | None:
    if raw is None:
        return Converge() if mode == "debate-converge" else None
    if mode != "debate-converge":
        raise PlanInvalid("converge", f"only debate-converge plans converge; this one is {mode}")
    if not isinstance(raw, dict):
        raise PlanInvalid("converge", "must be a mapping")
    _no_unknown(raw, CONVERGE_KEYS, "converge.")
    rounds = raw.get("max_rounds", HARD_MAX_ROUNDS)
    if isinstance(rounds, int) and not isinstance(rounds, bool) and rounds > HARD_MAX_ROUNDS:
        raise PlanInvalid("converge.max_rounds", f"at most {HARD_MAX_ROUNDS} rounds (a hard cap), got {rounds}")
    rounds = number_in_range("converge.max_rounds", rounds, int, 1, HARD_MAX_ROUNDS)
    agent = raw.get("agent")
    if agent is not None:
        agent = normalize(_text(agent, "converge.agent", 64, one_line=True))
    write_to = raw.get("write_to")
    if write_to is not None:
        write_to = _text(write_to, "converge.write_to", 4096, one_line=True)
    return Converge(agent, rounds, write_to)
