"""DNA payload v1.1: the block appended to every child's prompt, and parsed back when a child re-enters.

The block (a fenced block tagged `dna-payload v1.1`, one `key: value` per line) carries the
contract's seven fields — parent_agent_id, depth, mode, autonomy_band, goal_root,
attempts_remaining, escalation_triggers — then the kernel's own: agent_id (the child's id), agent,
tree_id (the root run), chain (agent names from the root down to this child), task (the child's
task, one line), worktree (the project root it may write under), and the tree's budgets.

Invariants:
- `render` and `parse` are inverse: `parse(render(d)) == d` for every valid `Dna`.
- Parsing is fail-closed: a missing, unknown, repeated or ill-typed key, two blocks where one was
  expected, a chain whose length is not the depth, or escalation triggers other than the five of
  the contract (they are inherited verbatim: a child cannot drop one) raise `DnaInvalid` naming the
  key. A kernel that cannot read its DNA refuses to run instead of starting over at depth 0.
- The same block reaches a child twice: in its prompt (for the agent to read) and in the
  environment variable $MAFIABOT_AUTOPILOT_DNA (settings.AUTOPILOT_DNA_ENV: for the kernel to read
  when the child re-enters). `strictest` combines two readings of the same child's block: the deeper
  depth, the fewer attempts, the narrower band and the smaller budgets win.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields, replace
from typing import Any

from harness.autopilot.bands import Band, narrower
from harness.autopilot.config import HARD_MAX_ATTEMPTS
from harness.autopilot.errors import DnaInvalid
from harness.autopilot.plan import MODES

FENCE_TAG = "dna-payload v1.1"
BLOCK = re.compile(r"^```dna-payload v1\.1[ \t]*\n(.*?)\n```[ \t]*$", re.MULTILINE | re.DOTALL)
ANY_BLOCK = re.compile(r"^```dna-payload\b", re.MULTILINE)
# delegation-dna-prompt.md, Escalation Rule 1-5, in its order.
ESCALATION_TRIGGERS = ("destructive_action", "spending_beyond_scope", "disagreement", "unknown_provider",
                       "attempts_exhausted")
ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
AGENT = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
MAX_TASK_CHARS = 2000


@dataclass(frozen=True)
class Dna:
    parent_agent_id: str
    depth: int
    mode: str
    autonomy_band: Band
    goal_root: str
    attempts_remaining: int
    escalation_triggers: tuple[str, ...]
    agent_id: str
    agent: str
    tree_id: str
    chain: tuple[str, ...]
    task: str
    worktree: str
    max_cost_usd: float | None = None
    max_total_tokens: int | None = None


KEYS = tuple(f.name for f in fields(Dna))


def one_line(text: str, limit: int = MAX_TASK_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render(dna: Dna) -> str:
    values: dict[str, Any] = {
        "parent_agent_id": dna.parent_agent_id, "depth": dna.depth, "mode": dna.mode,
        "autonomy_band": dna.autonomy_band.value, "goal_root": one_line(dna.goal_root),
        "attempts_remaining": dna.attempts_remaining, "escalation_triggers": ", ".join(dna.escalation_triggers),
        "agent_id": dna.agent_id, "agent": dna.agent, "tree_id": dna.tree_id, "chain": ", ".join(dna.chain),
        "task": one_line(dna.task), "worktree": dna.worktree,
        "max_cost_usd": "none" if dna.max_cost_usd is None else repr(float(dna.max_cost_usd)),
        "max_total_tokens": "none" if dna.max_total_tokens is None else dna.max_total_tokens,
    }
    return "\n".join([f"```{FENCE_TAG}", *(f"{key}: {values[key]}" for key in KEYS), "```"])


def parse(text: str) -> Dna:
    """The one DNA block in `text` (a prompt, an environment value, a plan's `dna:`), validated."""
    blocks = BLOCK.findall(text)
    if not blocks:
        other = "a dna-payload block of another version" if ANY_BLOCK.search(text) else "no DNA payload v1.1 block"
        raise DnaInvalid("dna", f"{other} found")
    if len(blocks) > 1:
        raise DnaInvalid("dna", f"{len(blocks)} DNA blocks found where one was expected")
    raw: dict[str, str] = {}
    for number, line in enumerate(blocks[0].splitlines(), start=1):
        key, sep, value = line.partition(":")
        key = key.strip()
        if not sep:
            raise DnaInvalid("dna", f"line {number} is not 'key: value'")
        if key not in KEYS:
            raise DnaInvalid(f"dna.{key}", "is not a DNA v1.1 field")
        if key in raw:
            raise DnaInvalid(f"dna.{key}", "appears twice")
        raw[key] = value.strip()
    missing = [key for key in KEYS if key not in raw]
    if missing:
        raise DnaInvalid(f"dna.{missing[0]}", "is missing")
    return _build(raw)


def _build(raw: dict[str, str]) -> Dna:
    for key in ("parent_agent_id", "agent_id", "tree_id"):
        if not ID.fullmatch(raw[key]):
            raise DnaInvalid(f"dna.{key}", f"{raw[key]!r} is not an id")
    depth = _integer(raw["depth"], "depth", 0, 1000)
    if raw["mode"] not in MODES:
        raise DnaInvalid("dna.mode", f"{raw['mode']!r} is not a mode ({', '.join(MODES)})")
    band = next((b for b in Band if b.value == raw["autonomy_band"]), None)
    if band is None:
        raise DnaInvalid("dna.autonomy_band", "not a band")
    attempts = _integer(raw["attempts_remaining"], "attempts_remaining", 0, HARD_MAX_ATTEMPTS)
    triggers = tuple(t.strip() for t in raw["escalation_triggers"].split(","))
    if triggers != ESCALATION_TRIGGERS:
        raise DnaInvalid("dna.escalation_triggers", f"must be inherited verbatim: {', '.join(ESCALATION_TRIGGERS)}")
    if not AGENT.fullmatch(raw["agent"]):
        raise DnaInvalid("dna.agent", f"{raw['agent']!r} is not an agent name")
    chain = tuple(a.strip() for a in raw["chain"].split(",") if a.strip())
    if not all(AGENT.fullmatch(a) for a in chain):
        raise DnaInvalid("dna.chain", "must be a comma-separated list of agent names")
    if len(chain) != depth or (chain and chain[-1] != raw["agent"]):
        raise DnaInvalid("dna.chain", f"a child at depth {depth} has {depth} agent(s) in its chain, ending with "
                                      f"itself; got {', '.join(chain) or '(none)'}")
    if not raw["goal_root"] or not raw["task"]:
        raise DnaInvalid("dna.goal_root" if not raw["goal_root"] else "dna.task", "must not be empty")
    if not raw["worktree"].startswith("/"):
        raise DnaInvalid("dna.worktree", "must be an absolute path")
    return Dna(parent_agent_id=raw["parent_agent_id"], depth=depth, mode=raw["mode"], autonomy_band=band,
               goal_root=raw["goal_root"], attempts_remaining=attempts, escalation_triggers=triggers,
               agent_id=raw["agent_id"], agent=raw["agent"], tree_id=raw["tree_id"], chain=chain, task=raw["task"],
               worktree=raw["worktree"], max_cost_usd=_budget(raw["max_cost_usd"], "max_cost_usd", float),
               max_total_tokens=_budget(raw["max_total_tokens"], "max_total_tokens", int))


def _integer(text: str, key: str, low: int, high: int) -> int:
    if not re.fullmatch(r"[0-9]{1,6}", text) or not low <= int(text) <= high:
        raise DnaInvalid(f"dna.{key}", f"must be an integer from {low} to {high}, got {text!r}")
    return int(text)


def _budget(text: str, key: str, kind: type) -> Any:
    if text == "none":
        return None
    try:
        value = kind(text)
    except ValueError:
        raise DnaInvalid(f"dna.{key}", f"must be a number or 'none', got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise DnaInvalid(f"dna.{key}", f"must be a non-negative number, got {text!r}")
    return value


def strictest(first: Dna, second: Dna) -> Dna:
    """Two readings of one child's block (environment, plan) combined so that neither can loosen a limit."""
    for key in ("agent_id", "tree_id", "agent"):
        if getattr(first, key) != getattr(second, key):
            raise DnaInvalid(f"dna.{key}", f"the plan's DNA block and the environment's disagree "
                                           f"({getattr(second, key)!r} vs {getattr(first, key)!r})")
    deeper = first if first.depth >= second.depth else second
    return replace(deeper, attempts_remaining=min(first.attempts_remaining, second.attempts_remaining),
                   autonomy_band=narrower(first.autonomy_band, second.autonomy_band),
                   max_cost_usd=smaller(first.max_cost_usd, second.max_cost_usd),
                   max_total_tokens=smaller(first.max_total_tokens, second.max_total_tokens))


def smaller(a: Any, b: Any) -> Any:
    """The smaller of two optional limits (None means no limit)."""
    return b if a is None else a if b is None else min(a, b)
