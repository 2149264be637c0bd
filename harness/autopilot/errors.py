"""The auto-pilot kernel's exceptions: one per layer, turned into exit codes only by the CLI.

- `PlanInvalid` (a `FieldError`): the plan, the sentinel config or a command-line override is
  unusable; `.field` names it (`subtasks[1].agent`, `sentinel.task_similarity`, `--band`). Exit 2.
- `DnaInvalid` (a `FieldError`): an inherited DNA block does not parse or contradicts itself. The
  kernel turns it into a `refused` outcome (fail-closed) before anything runs; it never escapes a run.
- `AutopilotError`: the kernel cannot keep its promises (its state directory cannot be written
  before the first spawn). Exit 1.
"""

from __future__ import annotations

from harness.errors import FieldError, HarnessError


class PlanInvalid(FieldError):
    """A plan, sentinel-config or command-line field is unusable; nothing was run."""


class DnaInvalid(FieldError):
    """An inherited DNA payload block is unusable; the run is refused (fail-closed)."""


class AutopilotError(HarnessError):
    """The kernel's own state cannot be written, so it does not start."""
