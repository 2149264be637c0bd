"""SOUL.md as the body judges it: what is there and what a boot would do with it, and putting
back what the body's SOUL.md replaced, both asked of the body itself.

Whose words a SOUL.md holds, when the body may replace it and what a backup is are the body's
rules alone (mafiabot_core/src/soul/); this module runs the body with `--soul-state` or
`--soul-restore` and reads the one line it answers, `WORD<TAB>sentence`.

Invariants:
- The body asked is the one the entry runs (the relay's body when the entry records), with the
  entry's own args (less its `--state`: these tasks hold no session) and under Hermes's filtered
  environment plus the entry's env: it judges the home, the document and the `--soul` policy a boot
  under Hermes would.
- `soul_state` writes nothing; `restore_soul` changes SOUL.md only where the body's own is there
  unedited, and never deletes a backup.
- A command that is not the Ada body (a stand-in body, say) has no SOUL.md rules: both
  functions return None for it rather than guess.
- Every run is bounded by SOUL_TASK_TIMEOUT; a body that cannot answer raises a HarnessError
  carrying its own words.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.errors import BodyDied, BodyNotFound, BodyTimeout, ProtocolViolation
from harness.hermes_mount.entry import is_ada_body, without_state

SOUL_OPTION = "--soul"
SOUL_POLICIES = ("keep", "replace", "off")
# The flag every check adds so that a body it starts writes no SOUL.md (the last --soul wins).
SOUL_OFF = (SOUL_OPTION, "off")
STATE_TASK = "--soul-state"
RESTORE_TASK = "--soul-restore"
# Both tasks read one small file (and restore writes one): milliseconds; this only stops a hang.
SOUL_TASK_TIMEOUT = 10.0
# The Ada body's executables (mafiabot_core.gpr): static or dynamic, contracts on or off.


@dataclass(frozen=True)
class SoulReport:
    word: str  # soul_state: missing, hermes-default, body, operator; restore: restored, removed, kept, missing
    sentence: str  # names the file and says what was or would be done


def soul_state(body_argv: Sequence[str], env: Mapping[str, str]) -> SoulReport | None:
    """Whose SOUL.md the body finds, and what its boot would do; writes nothing."""
    return _ask(body_argv, env, STATE_TASK)


def restore_soul(body_argv: Sequence[str], env: Mapping[str, str]) -> SoulReport | None:
    """Put back what the body's SOUL.md replaced, if the body's is there unedited."""
    return _ask(body_argv, env, RESTORE_TASK)


def _ask(body_argv: Sequence[str], env: Mapping[str, str], task: str) -> SoulReport | None:
    if not body_argv or not is_ada_body(body_argv[0]):
        return None
    argv = [*without_state(body_argv), task]
    try:
        # From "/", not our folder: Hermes boots the body from wherever Hermes runs, so nothing may
        # depend on ours (the probe runs from a scratch folder for the same reason).
        done = subprocess.run(argv, env=dict(env), capture_output=True, text=True, timeout=SOUL_TASK_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False, cwd="/")
    except subprocess.TimeoutExpired:
        raise BodyTimeout(f"the body's answer to {task}", SOUL_TASK_TIMEOUT) from None
    except OSError as exc:
        raise BodyNotFound(f"cannot run {argv[0]}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise BodyDied(done.returncode, done.stderr, f"its answer to {task}")
    word, tab, sentence = done.stdout.rstrip("\n").partition("\t")
    if not tab or "\n" in sentence:
        raise ProtocolViolation(f"{task} answered {done.stdout!r}, not one line WORD<TAB>sentence")
    return SoulReport(word, sentence)
