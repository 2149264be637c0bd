"""A stand-in body for the sampling tests of mount and doctor that need no Ada build.

Its `--help` states the sampling defaults the way the Ada body's does (mafiabot_core/src/config/body_config.ads,
a default wrapped onto the next line included), so what mount sizes is read from a body, not from a test; it
speaks no MCP (any other argument exits 2), so mount runs it with --no-check. It is not named `mafiabot`: it has
no SOUL.md rules for unmount to ask.
"""

from __future__ import annotations

from pathlib import Path

REQUEST_TIMEOUT_MS, TURN_DEADLINE_MS, MAX_TOKENS = 20000, 50000, 512
BUDGET_CALLS, BUDGET_WINDOW_S = 30, 20
HELP = f"""\
usage: mafiabot [options]
  --cognition stub|sampling  stub (default): canned organs; sampling: ask the client's model
  --sampling-timeout-ms N  how long one sampling request may take (default {REQUEST_TIMEOUT_MS})
  --turn-deadline-ms N   how long a whole sampled turn may take, the passes that
                         did not run marked (default {TURN_DEADLINE_MS})
  --sampling-max-tokens N  maxTokens of each request (default {MAX_TOKENS})
  --energy fixture|budget  fixture (default): the fixture's energy; budget: the session's budget
  --budget-calls N       model calls a session may make in a window (default {BUDGET_CALLS};
                         at least one full turn's 9)
  --budget-window-s S    the sliding window, in seconds (default {BUDGET_WINDOW_S})
  --version, --help
"""


def stand_in_body(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "stand-in-body"
    path.parent.mkdir(exist_ok=True)
    (tmp_path / "help.txt").write_text(HELP, encoding="utf-8")
    path.write_text(f"#!/bin/sh\n[ \"$1\" = --help ] && exec cat {tmp_path / 'help.txt'}\nexit 2\n")
    path.chmod(0o755)
    return path
