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
  (`subtasks[1].uses`); unknown keys are errors, never ignored. The shape and the per-field rules
  are the strict models `PlanFile`, `Subtask`, `Limits` and `Converge`; what spans fields (ids
  unique, `uses`, widths, distinct writes, the band of recursive mode) is checked after them.
  A plan file is read by `strict_yaml` (size, depth, aliases, duplicate keys bounded first).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from harness.autopilot.bands import DEFAULT_BAND, Band, parse_band
from harness.autopilot.config import read_yaml
from harness.autopilot.errors import PlanInvalid
from harness.dispatch.registry import TurnCap, normalize
from harness.typed_inputs import Items, PathText, StrictModel, block, line, matching, validate

MODES = ("sequential", "parallel", "recursive", "debate-converge")
ALIASES = {"dueto": 2, "swarm": 3}
HARD_MAX_PARALLEL = 3
HARD_MAX_ROUNDS = 3
HARD_MAX_RETRIES = 5
MAX_SUBTASKS = 12
MAX_TASK_CHARS = 4000
MAX_GOAL_CHARS = 500
# A DNA block is a few hundred bytes (dna.render); 64 kB is room for any honest one and none for a document.
MAX_DNA_CHARS = 65_536
SUBTASK_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")

AgentName = Annotated[str, line(64, strip=True), AfterValidator(normalize)]


def mode_name(value: str) -> str:
    """A mode as the plan or `--mode` spells it (case-insensitive), or ValueError listing the modes."""
    text = value.strip().casefold()
    if text not in MODES and text not in ALIASES:
        raise ValueError(f"is not a mode ({', '.join([*MODES, *ALIASES])})")
    return text


class Limits(StrictModel):
    child_timeout_s: Annotated[float, Field(ge=0.001, le=86400)] = 180.0
    max_turns: TurnCap = 10
    retries: Annotated[int, Field(ge=0, le=HARD_MAX_RETRIES)] = 2
    expected_output_tokens: Annotated[int, Field(ge=1, le=10_000_000)] = 2000
    parallel: Annotated[int, Field(ge=1, le=HARD_MAX_PARALLEL)] = HARD_MAX_PARALLEL
    max_cost_usd: Annotated[float, Field(ge=0, le=1e9)] | None = None
    max_total_tokens: Annotated[int, Field(ge=1, le=10**12)] | None = None


class Subtask(StrictModel):
    id: Annotated[str, matching(SUBTASK_ID, "an id (lowercase letters, digits, '_', '-')")]
    task: Annotated[str, block(MAX_TASK_CHARS, strip=True)]
    agent: AgentName | None = None
    write_to: PathText | None = None
    destructive: bool = False
    expected_output_tokens: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    uses: Items[str] = ()

    @model_validator(mode="before")
    @classmethod
    def _bare_task(cls, value: Any) -> Any:
        return {"task": value} if isinstance(value, str) else value


class Converge(StrictModel):
    agent: AgentName | None = None
    max_rounds: Annotated[int, Field(ge=1, le=HARD_MAX_ROUNDS)] = HARD_MAX_ROUNDS
    write_to: PathText | None = None


class PlanFile(StrictModel):
    """A plan as written; sub-tasks without an id get `s<position>`."""

    version: Literal[1] = 1
    goal: Annotated[str, line(MAX_GOAL_CHARS, strip=True)]
    mode: Annotated[str, AfterValidator(mode_name)] = "sequential"
    band: Annotated[str, line(64)] | None = None
    registry: PathText | None = None
    default_agent: AgentName | None = None
    limits: Limits = Limits()
    converge: Converge | None = None
    subtasks: Annotated[Items[Subtask], Field(min_length=1, max_length=MAX_SUBTASKS)]
    dna: Annotated[str, block(MAX_DNA_CHARS)] | None = None

    @field_validator("subtasks", mode="before")
    @classmethod
    def _numbered(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [{"id": f"s{index}", **item} if isinstance(item, dict) and "id" not in item else
                {"id": f"s{index}", "task": item} if isinstance(item, str) else item
                for index, item in enumerate(value, start=1)]


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
                "subtasks": [s.model_dump() for s in self.subtasks],
                "converge": self.converge.model_dump() if self.converge else None}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def load_plan(path: Path, mode: str | None = None, band: str | None = None) -> Plan:
    document = read_yaml(path, "plan")
    return parse_plan(document, base_dir=path.resolve().parent, source=str(path), mode=mode, band=band)


def parse_plan(document: Any, base_dir: Path, source: str = "(inline)", mode: str | None = None,
               band: str | None = None) -> Plan:
    """A validated plan; `mode` and `band` (command-line overrides) replace the plan's own."""
    given = validate(PlanFile, document, PlanInvalid, root="plan")
    if mode is None:
        requested = given.mode
    else:
        try:
            requested = mode_name(mode)
        except ValueError as exc:
            raise PlanInvalid("--mode", str(exc)) from None
    chosen_band = parse_band(band, "--band") if band is not None else (
        parse_band(given.band) if given.band is not None else DEFAULT_BAND)
    subtasks = given.subtasks
    _check_ids(subtasks)
    resolved = "parallel" if requested in ALIASES else requested
    width = _width(requested, resolved, given.limits, len(subtasks))
    _check_order(subtasks, resolved)
    if resolved == "recursive" and chosen_band is Band.L1:
        raise PlanInvalid("band", "recursive mode needs L2 or L3: its children re-enter auto-pilot by running a "
                                  "command, which L1-cautious children cannot do")
    if given.converge is not None and resolved != "debate-converge":
        raise PlanInvalid("converge", f"only debate-converge plans converge; this one is {resolved}")
    converge = given.converge or (Converge() if resolved == "debate-converge" else None)
    writes = [s.write_to for s in subtasks if s.write_to] + ([converge.write_to] if converge and converge.write_to
                                                             else [])
    if len(writes) != len(set(writes)):
        raise PlanInvalid("subtasks", "two steps write the same file; each write_to must be distinct")
    return Plan(goal=given.goal, mode=resolved, requested_mode=requested, width=width, band=chosen_band,
                subtasks=subtasks, limits=given.limits, converge=converge, default_agent=given.default_agent,
                registry=base_dir / given.registry if given.registry is not None else None, dna=given.dna,
                source=source)


def _check_ids(subtasks: tuple[Subtask, ...]) -> None:
    seen: set[str] = set()
    for index, subtask in enumerate(subtasks):
        if subtask.id in seen:
            raise PlanInvalid(f"subtasks[{index}].id", "is the id of an earlier sub-task")
        seen.add(subtask.id)


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
                raise PlanInvalid(f"subtasks[{index}].uses", f"entry {subtask.uses.index(used)} names no earlier sub-task")
        seen.add(subtask.id)
