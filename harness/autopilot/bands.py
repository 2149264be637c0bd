"""Autonomy bands: which Hermes toolsets a child may get, where the kernel may write, what pauses.

Invariants:
- The bands are ordered L1 < L2 < L3, and a child kernel runs in the narrower of what it asks and
  what its DNA carries: no band is ever widened down a chain.
- Toolsets: L1 children get read-only toolsets only (they cannot write, run commands, edit memory
  or delegate); L2 adds `file`, `terminal`, `code_execution` (work in a worktree); L3 adds
  `memory`, `skills`, `browser`, `image_gen`, `tts`. A toolset is granted only when the agent's
  registry entry lists it *and* the band allows it; anything unknown, and `delegation` or `cronjob`
  in any band, is withheld (Hermes's own delegation would bypass the kernel's depth cap and ledger;
  a cron job would outlive the run). An agent left with nothing gets `todo`.
- Writes by the kernel (a subtask's `write_to`): L1 pauses every one for a human; L2 writes only
  under the project root; L3 also into Hermes memories folders. In every band a protected file
  (configuration, secrets, SOUL.md, AGENTS.md, cron, `.git`, the harness's own state) pauses.
- Destructive operations pause in every band: a subtask marked `destructive: true`, or whose text
  matches one of DESTRUCTIVE_PATTERNS (a pattern list, not judgement; it says which one matched).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from harness.autobot.delegate import READ_ONLY_TOOLSETS
from harness.autobot.intent import IntentError
from harness.autobot.writer import WriteTarget, resolve_write_target
from harness.autopilot.errors import PlanInvalid
from harness.autopilot.findings import Finding, finding
from harness.autopilot.sentinel import first_match


class Band(str, Enum):
    L1 = "L1-cautious"
    L2 = "L2-bounded"
    L3 = "L3-extended"

    @property
    def rank(self) -> int:
        return int(self.value[1])

    @property
    def short(self) -> str:
        return self.value[:2]


DEFAULT_BAND = Band.L2
# What a plan or an override may spell a band as: each band's short name, then its full one.
BAND_NAMES: tuple[str, ...] = (*(band.short for band in Band), *(band.value for band in Band))
WORKTREE_TOOLSETS = frozenset({"file", "terminal", "code_execution"})
EXTENDED_TOOLSETS = frozenset({"memory", "skills", "browser", "image_gen", "tts"})
FALLBACK_TOOLSETS = ("todo",)
DESTRUCTIVE_PATTERNS: dict[str, re.Pattern[str]] = {
    "rm -rf": re.compile(r"\brm\s+-(?:[a-z]*r[a-z]*f|[a-z]*f[a-z]*r)[a-z]*\b", re.IGNORECASE),
    "force push": re.compile(r"\bforce[- ]push|\bpush\s+(?:-f\b|--force\b)", re.IGNORECASE),
    "drop": re.compile(r"\bdrop\s+(?:table|database|schema)\b", re.IGNORECASE),
    "truncate": re.compile(r"\btruncate\s+table\b", re.IGNORECASE),
    "hard reset": re.compile(r"\bgit\s+reset\s+--hard\b", re.IGNORECASE),
    "mass delete": re.compile(r"\b(?:mass[- ]delete|delete\s+(?:all|every)\s+(?:files|rows|records|branches))\b",
                              re.IGNORECASE),
    "disk wipe": re.compile(r"\b(?:mkfs(?:\.\w+)?|dd\s+if=)", re.IGNORECASE),
}


def parse_band(text: str, field_name: str = "band") -> Band:
    cleaned = str(text).strip()
    for band in Band:
        if cleaned.casefold() in (band.value.casefold(), band.short.casefold()):
            return band
    short, full = BAND_NAMES[:len(Band)], BAND_NAMES[len(Band):]
    raise PlanInvalid(field_name, f"not a band ({', '.join(short)} or {', '.join(full)})")


def narrower(a: Band, b: Band) -> Band:
    return a if a.rank <= b.rank else b


def allowed_toolsets(band: Band) -> frozenset[str]:
    allowed = set(READ_ONLY_TOOLSETS)
    if band.rank >= 2:
        allowed |= WORKTREE_TOOLSETS
    if band.rank >= 3:
        allowed |= EXTENDED_TOOLSETS
    return frozenset(allowed)


def child_toolsets(granted: tuple[str, ...] | None, band: Band) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(toolsets the child gets, toolsets withheld) for an agent's registry grant in `band`."""
    allowed = allowed_toolsets(band)
    wanted = granted if granted is not None else FALLBACK_TOOLSETS
    kept = tuple(t for t in wanted if t in allowed)
    dropped = tuple(t for t in wanted if t not in allowed)
    return (kept or FALLBACK_TOOLSETS), dropped


@dataclass(frozen=True)
class WriteDecision:
    target: WriteTarget | None
    refusal: Finding | None


def decide_write(subject: str, write_to: str, band: Band, project_root: Path, hermes_root: Path) -> WriteDecision:
    """Where `write_to` lands, or the finding that pauses it (see the module invariants)."""
    if band is Band.L1:
        return WriteDecision(None, finding("band_write", subject, f"{band.value} pauses every write for a human; "
                                                                  f"{write_to} was not written", write_to=write_to))
    memories = band is Band.L3
    try:
        resolve_write_target(write_to, project_root, hermes_root, approve_sensitive=True, allow_memories=memories)
    except IntentError as exc:
        return WriteDecision(None, finding("write_refused", subject, exc.message, write_to=write_to))
    try:
        target = resolve_write_target(write_to, project_root, hermes_root, approve_sensitive=False,
                                      allow_memories=memories)
    except IntentError as exc:
        return WriteDecision(None, finding("protected_file", subject, exc.message, write_to=write_to))
    return WriteDecision(target, None)


def destructive_signal(subject: str, task: str, declared: bool) -> Finding | None:
    if declared:
        return finding("destructive_action", subject, "the plan marks this subtask destructive", declared=True)
    found = first_match(DESTRUCTIVE_PATTERNS, task)
    if found is None:
        return None
    return finding("destructive_action", subject, f"the task asks for a destructive operation ({found[0]}: "
                                                  f"{found[1]!r})", pattern=found[0])
