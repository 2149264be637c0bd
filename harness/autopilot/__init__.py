"""auto-pilot: a goal-level orchestration kernel over Hermes sub-agents, every rule of its contract in code.

Layers, bottom to top: `errors`, `config` (sentinel thresholds), `findings` (the rule table),
`sentinel` (pure anti-loop checks), `bands` (toolsets, writes, destructive operations), `plan`
(the host agent's plan), `dna` (DNA payload v1.1 render/parse), `selection` (phase 1), `prompt`
(phase 2), `tree` (the run tree as the ledger holds it), `identity` (root or re-entered child),
`steps` (a step, a child, a gate), `kernel` (phase 3: gates, attempts, judging, ledgering),
`modes` (sequential, parallel, recursive, debate-converge), `report` (phase 4: envelope and
markdown), `run` (one run end to end).

Children run only through `harness.hermes`'s transport; every spawn is ledgered through
`harness.ledger` with its parent id; agents come from `harness.dispatch`'s registry.
"""

from harness.autopilot.errors import AutopilotError, DnaInvalid, PlanInvalid
from harness.autopilot.kernel import KernelSettings
from harness.autopilot.plan import Plan, load_plan, parse_plan
from harness.autopilot.report import RunStatus
from harness.autopilot.run import RunResult, run_plan

__all__ = ["AutopilotError", "DnaInvalid", "KernelSettings", "Plan", "PlanInvalid", "RunResult", "RunStatus",
           "load_plan", "parse_plan", "run_plan"]
