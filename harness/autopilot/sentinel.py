"""The sentinel's anti-loop rules as pure functions: inputs in, a `Finding` or None out.

Invariants:
- Every check is deterministic and side-effect free; the kernel feeds it figures (texts, depths,
  token counts, spawn times) and acts on the finding's fixed action. Thresholds come only from
  `SentinelConfig`, so a test can put a value exactly on either side of each one.
- Similarity is word-level: both texts are case-folded and split into words, and the ratio is
  difflib's 2*matches/total over the two word sequences (1.0 = the same words in the same order).
  A child task at or above `task_similarity` against its parent (or an earlier sibling given to the
  same agent) is a loop; an output at or above `output_stagnation_similarity` against its own
  task is stagnation (the default 1.0 means "the same words").
- Comparisons are strict where the contract says "more than" (token bloat: > factor x budget;
  retry storm: > max retries in the window) and inclusive where it says "at or above" (similarity).
- Secret and injection signals are patterns (listed below), not judgement: they catch the common
  shapes and say which one matched, never the secret itself.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from harness.autopilot.config import SentinelConfig
from harness.autopilot.findings import Finding, finding

WORD = re.compile(r"[\w']+")


def words(text: str) -> list[str]:
    return WORD.findall(text.casefold())


def similarity(a: str, b: str) -> float:
    """Word-level similarity in [0, 1] (see the module invariants)."""
    wa, wb = words(a), words(b)
    if not wa and not wb:
        return 1.0
    return difflib.SequenceMatcher(None, wa, wb, autojunk=False).ratio()


def check_task_similarity(subject: str, task: str, parent_task: str, siblings: Iterable[tuple[str, str]],
                          config: SentinelConfig) -> Finding | None:
    """RULE-001 loop: `task` against the parent's task, then against (sibling id, task) already given to this agent."""
    score = similarity(task, parent_task)
    if score >= config.task_similarity:
        return finding("task_similarity", subject, f"the task is {score:.2f} similar to its parent's task "
                                                   f"(threshold {config.task_similarity:.2f})",
                       similarity=round(score, 4), threshold=config.task_similarity, against="parent")
    for sibling, sibling_task in siblings:
        score = similarity(task, sibling_task)
        if score >= config.task_similarity:
            return finding("task_similarity", subject, f"the task is {score:.2f} similar to {sibling}'s, given to "
                                                       f"the same agent (threshold {config.task_similarity:.2f})",
                           similarity=round(score, 4), threshold=config.task_similarity, against=sibling)
    return None


def check_depth(subject: str, child_depth: int, config: SentinelConfig) -> Finding | None:
    """RULE-002: a child deeper than `max_depth` is never spawned."""
    if child_depth > config.max_depth:
        return finding("delegation_depth", subject, f"the child would run at depth {child_depth}; the cap is "
                                                    f"{config.max_depth}", depth=child_depth, cap=config.max_depth)
    return None


def check_agent_repetition(subject: str, agent: str | None, chain: Sequence[str]) -> Finding | None:
    """RULE-001 cross-chain: the agent (or no agent at all) is already an ancestor of the child."""
    if agent is None:
        return finding("agent_repetition", subject, f"every agent of the registry is already in the chain "
                                                    f"{' > '.join(chain)}", chain=list(chain))
    if agent in chain:
        return finding("agent_repetition", subject, f"{agent} is already in the chain {' > '.join(chain)}",
                       agent=agent, chain=list(chain))
    return None


def check_output_stagnation(subject: str, task: str, output: str, config: SentinelConfig) -> Finding | None:
    score = similarity(task, output)
    if score >= config.output_stagnation_similarity:
        return finding("output_stagnation", subject, f"the output is {score:.2f} similar to the task it was given "
                                                     f"(threshold {config.output_stagnation_similarity:.2f})",
                       similarity=round(score, 4), threshold=config.output_stagnation_similarity)
    return None


def check_token_bloat(subject: str, output_tokens: int | None, expected_tokens: int,
                      config: SentinelConfig) -> Finding | None:
    if output_tokens is None:
        return None
    limit = config.token_bloat_factor * expected_tokens
    if output_tokens > limit:
        return finding("token_bloat", subject, f"{output_tokens} output tokens, more than {config.token_bloat_factor:g}"
                                               f" x the expected {expected_tokens}",
                       output_tokens=output_tokens, expected=expected_tokens, factor=config.token_bloat_factor)
    return None


def check_retry_storm(subject: str, earlier_spawns: Iterable[float], now: float,
                      config: SentinelConfig) -> Finding | None:
    """RULE-010: spawning again now would be retry number len(recent); more than the maximum is a storm."""
    window = config.retry_storm_window_seconds
    recent = [t for t in earlier_spawns if 0 <= now - t < window]
    if len(recent) > config.retry_storm_max_retries:
        return finding("retry_storm", subject, f"this would be retry {len(recent)} of the same task by the same "
                                               f"agent within {window:g} s (at most {config.retry_storm_max_retries})",
                       retries=len(recent), max_retries=config.retry_storm_max_retries, window_s=window)
    return None


def check_error_cascade(subject: str, failures: Sequence[bool], config: SentinelConfig) -> Finding | None:
    """RULE-004: fires once when the trailing run of failures, or their total, reaches its threshold."""
    trailing = 0
    for failed in reversed(failures):
        if not failed:
            break
        trailing += 1
    total = sum(failures)
    if trailing and (trailing == config.error_cascade_consecutive or total == config.error_cascade_total):
        return finding("error_cascade", subject, f"{trailing} consecutive failed attempt(s), {total} in all",
                       consecutive=trailing, total=total, thresholds=[config.error_cascade_consecutive,
                                                                      config.error_cascade_total])
    return None


SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "private_key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----"),
    "aws_access_key": re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "github_token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "anthropic_key": re.compile(r"\bsk-ant-[A-Za-z0-9_-]{32,}"),
    "openai_key": re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9]{32,}\b"),
    "slack_token": re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{20,}\b"),
}
INJECTION_PATTERNS: dict[str, re.Pattern[str]] = {
    "instruction_override": re.compile(r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
                                       r"(?:previous|prior|above|earlier|preceding)\s+(?:instructions|rules|prompts?)\b",
                                       re.IGNORECASE),
    "role_takeover": re.compile(r"\byou are now (?:the )?(?:orchestrator|operator|system|root agent)\b", re.IGNORECASE),
    "dna_forgery": re.compile(r"```dna-payload", re.IGNORECASE),
}


def first_match(patterns: dict[str, re.Pattern[str]], text: str) -> tuple[str, str] | None:
    """(name, matched text) of the first pattern, in table order, found in `text`."""
    for name, pattern in patterns.items():
        match = pattern.search(text)
        if match:
            return name, match.group(0)
    return None


def check_secret(subject: str, output: str) -> Finding | None:
    found = first_match(SECRET_PATTERNS, output)
    if found is None:
        return None
    return finding("secret_in_output", subject, f"the output contains what looks like a {found[0]}; it was withheld "
                                                f"from the envelope, the report and the artifacts", kind=found[0])


def check_injection(subject: str, output: str) -> Finding | None:
    found = first_match(INJECTION_PATTERNS, output)
    if found is None:
        return None
    return finding("prompt_injection", subject, f"the output contains an {found[0]} signal: {found[1]!r}",
                   kind=found[0])
