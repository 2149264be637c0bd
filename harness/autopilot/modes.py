"""The modes: sequential and recursive (one step after another), parallel (N <= 3 at once; `dueto`
and `swarm` are this code path), and debate-converge (proposals, then converge rounds).

Invariants:
- Parallel never cancels or discards a sibling: each step runs to its own end in its own thread,
  and one failing or halting child only keeps steps that have not started from starting. The wait
  on the pool is bounded by waves x attempts x (deadline + POOL_GRACE_S); a step still running past
  that (the transport's own deadline failed) is reported `unknown`, never silently dropped.
- At most `plan.width` (<= 3) children of one kernel run at once, because the pool has that many
  workers and each worker runs one step at a time.
- Debate-converge returns `converged` with the consolidator's merged text only when a consolidator
  said so (or every proposal is byte-identical once whitespace is normalised; word similarity, the
  loop detector's measure, never counts as agreement); otherwise `no-convergence-possible` with the
  reasons: fewer than two proposals, the consolidator's own verdict, a failed consolidator, or
  `max_rounds` (<= 3) spent. It never writes a synthesis of its own.
"""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from harness.autobot.output import OutputInvalid, validate_output
from harness.autobot.writer import write_artifact
from harness.autopilot.bands import decide_write
from harness.autopilot.findings import finding
from harness.autopilot.kernel import POOL_GRACE_S, Kernel, Unacceptable
from harness.autopilot.plan import Subtask
from harness.autopilot.prompt import Quoted
from harness.autopilot.selection import select_consolidator
from harness.autopilot.steps import Child, Step
from harness.durable import DurableWriteError
from harness.hermes.locate import hermes_root

VERDICTS = ("converged", "needs-another-round", "no-convergence-possible")


def quoted_results(kernel: Kernel, subtask: Subtask) -> tuple[Quoted, ...]:
    return tuple(Quoted(f"RESULT {used}", kernel.final[used].answer or "") for used in subtask.uses)


def run_ordered(kernel: Kernel) -> None:
    """sequential and recursive: each step in plan order, with the results it `uses` quoted as data."""
    for subtask in kernel.plan.subtasks:
        step = Step(subtask, kernel.picks[subtask.id], write_to=subtask.write_to,
                    quoted=quoted_results(kernel, subtask) if all(
                        kernel.final.get(u) and kernel.final[u].status == "ok" for u in subtask.uses) else ())
        kernel.final[subtask.id] = kernel.run_step(step)


def run_parallel(kernel: Kernel, steps: list[Step], width: int) -> dict[str, Child]:
    """Every step to its end, at most `width` at once; results by subtask id."""
    attempts = kernel.plan.limits.retries + 1
    bound = math.ceil(len(steps) / width) * attempts * (kernel.deadline_s + POOL_GRACE_S)
    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix=f"autopilot-{kernel.ident.run_id}")
    futures = {pool.submit(kernel.run_step, step): step for step in steps}
    done, pending = wait(futures, timeout=bound)
    pool.shutdown(wait=not pending, cancel_futures=True)
    results: dict[str, Child] = {}
    for future, step in futures.items():
        if future in done:
            results[step.subtask.id] = future.result()
        else:
            results[step.subtask.id] = kernel.add(kernel.blank(
                step, 1, status="unknown", reason="wait_bound",
                detail=f"still running after {bound:g} s; its outcome is unknown (see the ledger)"))
    return results


def run_side_by_side(kernel: Kernel) -> None:
    steps = [Step(s, kernel.picks[s.id], write_to=s.write_to) for s in kernel.plan.subtasks]
    kernel.final.update(run_parallel(kernel, steps, kernel.plan.width))


def parse_verdict(text: str) -> dict[str, Any]:
    """The consolidator's verdict, or Unacceptable saying why it is not one."""
    try:
        document = json.loads(validate_output(text, "json"))
    except OutputInvalid as exc:
        raise Unacceptable(f"the consolidator's answer is not a JSON verdict: {exc}") from None
    if not isinstance(document, dict) or document.get("verdict") not in VERDICTS:
        raise Unacceptable(f"the verdict must be one of {', '.join(VERDICTS)}")
    verdict = document["verdict"]
    needed = {"converged": "merged", "needs-another-round": "open_points", "no-convergence-possible": "reasons"}[verdict]
    value = document.get(needed)
    if verdict == "converged":
        if not isinstance(value, str) or not value.strip():
            raise Unacceptable("a converged verdict needs a non-empty 'merged' text")
    elif not isinstance(value, list) or not value or not all(isinstance(v, str) and v.strip() for v in value):
        raise Unacceptable(f"a {verdict} verdict needs a non-empty '{needed}' list of strings")
    return document


def run_debate(kernel: Kernel) -> None:
    plan = kernel.plan
    converge = plan.converge
    assert converge is not None  # parse_plan gives every debate a converge block
    target = _converge_target(kernel)
    steps = [Step(s, kernel.picks[s.id], role="proposer", debate_round=1) for s in plan.subtasks]
    latest = run_parallel(kernel, steps, plan.width)
    kernel.final.update(latest)
    proposers = [agent for s in plan.subtasks if (agent := kernel.picks[s.id].agent)]
    judge = select_consolidator(plan, kernel.settings.registry, kernel.ident.chain, proposers)
    rounds: list[dict[str, Any]] = []
    kernel.debate = {"consolidator": judge.to_dict(), "max_rounds": converge.max_rounds, "rounds": rounds,
                     "verdict": None, "merged": None, "reasons": []}
    open_points: tuple[str, ...] = ()
    for number in range(1, converge.max_rounds + 1):
        proposals = {sid: c for sid, c in latest.items() if c.status == "ok"}
        entry: dict[str, Any] = {"round": number, "proposals": {sid: c.child_id for sid, c in proposals.items()}}
        rounds.append(entry)
        if kernel.halted.is_set():
            return _verdict(kernel, "no-convergence-possible", reasons=["the run halted before converging"])
        if len(proposals) < 2:
            missing = [f"{sid}: {c.status} ({c.reason})" for sid, c in latest.items() if c.status != "ok"]
            return _verdict(kernel, "no-convergence-possible", reasons=[
                f"only {len(proposals)} of {len(latest)} proposals came back", *missing])
        texts = [c.answer or "" for c in proposals.values()]
        # Agreement is a judge's call: words alike are not a decision alike ("Do not hold the review on Friday"
        # is 0.88 similar to "Hold the review on Friday"). Only proposals that are the same text, whitespace
        # aside, skip the consolidator.
        if len({normalised(text) for text in texts}) == 1:
            kernel.fire(finding("proposals_agree", f"round {number}", "every proposal is the same text (whitespace "
                                                                     "aside); merged is that text"))
            return _verdict(kernel, "converged", merged=texts[0], target=target)
        quoted = tuple(Quoted(f"PROPOSAL {sid} by {c.agent}", c.answer or "") for sid, c in proposals.items())
        task = Subtask(id="converge", task=f"Converge the {len(quoted)} proposals on: {plan.goal}")
        child = kernel.run_step(Step(task, judge, role="consolidator", debate_round=number, quoted=quoted,
                                     open_points=open_points, check_similarity=False, accept=parse_verdict,
                                     max_rounds=converge.max_rounds))
        entry["consolidator"] = child.child_id
        if child.status != "ok":
            return _verdict(kernel, "no-convergence-possible", reasons=[
                f"the consolidator did not give a verdict: {child.status} ({child.reason}): {child.detail}"])
        verdict = child.parsed
        entry["verdict"] = verdict["verdict"]
        if verdict["verdict"] == "converged":
            return _verdict(kernel, "converged", merged=verdict["merged"], target=target)
        if verdict["verdict"] == "no-convergence-possible":
            return _verdict(kernel, "no-convergence-possible", reasons=list(verdict["reasons"]))
        open_points = tuple(verdict["open_points"])
        entry["open_points"] = list(open_points)
        if number == converge.max_rounds:
            break
        revisions = [Step(plan.subtask(sid), kernel.picks[sid], role="proposer", debate_round=number + 1,
                          quoted=tuple(q for q in quoted if not q.label.startswith(f"PROPOSAL {sid} ")),
                          open_points=open_points) for sid in proposals]
        revised = run_parallel(kernel, revisions, plan.width)
        latest = {**latest, **revised}
        kernel.final.update(revised)
    return _verdict(kernel, "no-convergence-possible", reasons=[
        *open_points, f"no agreement after {converge.max_rounds} round(s), the most allowed"])


def normalised(text: str) -> str:
    """`text` with every run of whitespace one space, and none at either end: what "the same text" compares."""
    return " ".join(text.split())


def _converge_target(kernel: Kernel) -> Any:
    write_to = kernel.plan.converge.write_to if kernel.plan.converge else None
    if write_to is None:
        return None
    settings = kernel.settings
    decision = decide_write("converge", write_to, kernel.ident.band, settings.project_root,
                            hermes_root(settings.transport.hermes_home, settings.transport.env()))
    if decision.refusal is not None:
        kernel.fire(decision.refusal)
    return decision.target


def _verdict(kernel: Kernel, verdict: str, merged: str | None = None, reasons: list[str] | None = None,
             target: Any = None) -> None:
    assert kernel.debate is not None
    kernel.debate.update(verdict=verdict, merged=merged, reasons=reasons or [])
    if verdict == "converged" and target is not None and merged is not None:
        try:
            write_artifact(target, merged, None)
            kernel.debate["artifacts"] = [str(target)]
        except DurableWriteError as exc:
            kernel.debate["write_error"] = str(exc)
