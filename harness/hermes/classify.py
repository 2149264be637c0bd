"""Hermes's failure texts, mapped to the transport's stable reasons.

Hermes prints provider failures on stdout (with exit 0 in `-z` mode), and missing profiles,
sessions or credentials on stdout or stderr. These patterns are the texts of hermes-agent 0.19.0
(see docs/delegation.md); a text that matches none is left to the exit code.

Invariants:
- `classify` is only consulted for a run already known to have failed (exit code, or Hermes's
  record): an answer that merely quotes "HTTP 401" is never turned into a failure by it.
- `bare_failure` is the one exception: it recognises output that consists of nothing but one of
  Hermes's own failure lines, for the case where the run left no record to consult.
- First match wins, most specific first (a missing profile before a provider error).
"""

from __future__ import annotations

import re

from harness.hermes import outcome as reasons

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Profile '[^']*' does not exist"), reasons.PROFILE_NOT_FOUND),
    (re.compile(r"No session found matching|Session not found", re.IGNORECASE), reasons.SESSION_NOT_FOUND),
    (re.compile(r"No usable credentials found for provider '([^']+)'"), "no_key"),
    (re.compile(r"isn't configured yet|No inference provider configured|no API keys or providers found",
                re.IGNORECASE), "not_configured"),
    (re.compile(r"HTTP (?:401|403)\b|\bunauthori[sz]ed\b|invalid[ _-]api[ _-]key|incorrect api key"
                r"|authentication (?:failed|error)", re.IGNORECASE), reasons.AUTH_FAILED),
    (re.compile(r"API call failed|HTTP (?:408|409|429|5\d\d)\b|Connection error|connection refused"
                r"|rate.?limit|timed out|overloaded|service unavailable", re.IGNORECASE), reasons.PROVIDER_ERROR),
)

_BARE_FAILURE = re.compile(
    r"\A\s*(?:API call failed after \d+ retries: .*|HTTP \d{3}: .*|No usable credentials found for provider .*"
    r"|Error: .*|hermes -z: .*)\s*\Z")


def classify(text: str, provider: str | None) -> str | None:
    """The reason a failed run's output points at, or None when it names no known cause."""
    for pattern, reason in _RULES:
        match = pattern.search(text)
        if match is None:
            continue
        if reason == "no_key":
            return reasons.no_key(match.group(1))
        if reason == "not_configured":
            return reasons.no_key(provider) if provider else reasons.NO_PROVIDER_CONFIGURED
        return reason
    return None


def bare_failure(stdout: str) -> bool:
    return bool(_BARE_FAILURE.match(stdout))


# What of a line a detail quotes: enough to say what Hermes (or an answer) said, never a whole answer.
FIRST_LINE_CHARS = 300


def first_line(text: str, limit: int = FIRST_LINE_CHARS) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""
