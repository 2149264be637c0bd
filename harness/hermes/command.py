"""The Hermes command line for a `RunRequest`, and the one limit it must respect.

Invariants:
- Every value goes in its own `--flag=value` element, so a prompt or session name that starts
  with `-` is never read as a flag, and Hermes's argv pre-scans (profile, session-name joining)
  never split or swallow it. `--profile NAME` comes first, before anything user-supplied.
- Linux refuses any single argv element longer than MAX_ARG_STRLEN (32 pages, 128 KiB on x86-64)
  with E2BIG. Hermes has no other channel for the prompt in its quiet modes (no stdin, and `@file:`
  references are expanded only in the interactive path), so a prompt that does not fit is refused
  here, before anything is spawned (`PromptTooLarge`).
- Chat runs always pass `--source tool` (kept out of the user's session lists) and
  `--no-restore-cwd` (a continued session never moves the run into a recorded directory).
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.errors import HarnessError
from harness.hermes.outcome import RunRequest

PROMPT_FLAG = "--query="
ONESHOT_FLAG = "--oneshot="


def max_arg_bytes() -> int:
    """The kernel's per-element limit, terminating NUL included (MAX_ARG_STRLEN = 32 pages)."""
    return 32 * os.sysconf("SC_PAGE_SIZE")


class PromptTooLarge(HarnessError):
    def __init__(self, prompt_bytes: int, limit: int) -> None:
        self.prompt_bytes = prompt_bytes
        self.limit = limit
        super().__init__(f"the prompt is {prompt_bytes} bytes; one command-line argument holds at most "
                         f"{limit} (Linux MAX_ARG_STRLEN), and Hermes reads quiet-mode prompts from nowhere "
                         f"else: trim the materials")


def prompt_room() -> int:
    """The largest prompt, in UTF-8 bytes, that fits in one argument."""
    return max_arg_bytes() - 1 - max(len(PROMPT_FLAG), len(ONESHOT_FLAG))


def check_prompt_fits(prompt: str) -> int:
    size = len(prompt.encode("utf-8"))
    if size > prompt_room():
        raise PromptTooLarge(size, prompt_room())
    return size


def build_argv(executable: Path, request: RunRequest, usage_file: Path | None) -> list[str]:
    """The full command line; raises PromptTooLarge when the prompt cannot be passed."""
    check_prompt_fits(request.prompt)
    argv = [str(executable), "--profile", request.profile or "default"]
    if request.provider is not None:
        argv.append(f"--provider={request.provider}")
    if request.model is not None:
        argv.append(f"--model={request.model}")
    if request.toolsets is not None:
        argv.append(f"--toolsets={','.join(request.toolsets)}")
    if request.mode == "oneshot":
        argv.append(ONESHOT_FLAG + request.prompt)
        if usage_file is not None:
            argv.append(f"--usage-file={usage_file}")
        return argv
    argv += ["chat", "--quiet", PROMPT_FLAG + request.prompt, "--source=tool", "--no-restore-cwd"]
    if request.session is not None:
        argv.append(f"--continue={request.session}")
    if request.max_turns is not None:
        argv.append(f"--max-turns={request.max_turns}")
    return argv


def display_argv(argv: list[str]) -> str:
    """The command line for logs and envelopes, with the prompt elided."""
    return " ".join(_elided(element) for element in argv)


def _elided(element: str) -> str:
    for flag in (PROMPT_FLAG, ONESHOT_FLAG):
        if element.startswith(flag):
            return f"{flag}<prompt: {len(element) - len(flag)} chars>"
    return element
