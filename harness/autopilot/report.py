"""Phase 4: one consolidated outcome, as a JSON envelope and as a markdown report made from it.

Invariants:
- The envelope lists every child (every attempt, and every step a rule kept from running) with its
  status, reason, artifacts, tokens and cost, plus its subtree (the runs it started by re-entering
  auto-pilot, read from the ledger), and every rule that fired with its figures.
- The status is a `RunStatus`, decided in this order: `escalate` when any rule paused or blocked
  the run; a debate's verdict; then `completed` (every sub-task ok), `partial` (some ok), `failed`
  (none ok, and at least one ran or was blocked), `stopped` (none ran: rules stopped them all).
  `refused` is the run that did not start; `stopped_by` says who stopped a run by its own stop (a host's
  cancel), whatever its status. The envelope carries no exit code: the CLI derives it
  from the status (harness.cli.exit_codes), so a saved envelope and the command can never disagree.
- An escalation says exactly why (the first halting rule, and all of them), where in the tree
  (chain, depth, ids), every failed attempt of the tree, what was done so far and what was not.
- The markdown report is a pure function of the envelope, so the two never disagree.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from harness.autopilot.findings import Finding
from harness.autopilot.kernel import Kernel, KernelSettings
from harness.autopilot.plan import Plan
from harness.autopilot.selection import Pick, select_agents
from harness.autopilot.tree import scan, subtree, totals_of
from harness.hermes import cancellation


class RunStatus(StrEnum):
    """What a run came to, as its envelope's `status` says it (the text is the envelope's)."""

    COMPLETED = "completed"
    PARTIAL = "partial"
    FAILED = "failed"
    STOPPED = "stopped"
    NO_CONVERGENCE_POSSIBLE = "no-convergence-possible"
    ESCALATE = "escalate"
    REFUSED = "refused"


SHOWN_ANSWER_CHARS = 4000


def status_of(kernel: Kernel) -> RunStatus:
    if kernel.halting:
        return RunStatus.ESCALATE
    if kernel.debate is not None:
        return RunStatus.COMPLETED if kernel.debate["verdict"] == "converged" else RunStatus.NO_CONVERGENCE_POSSIBLE
    finals = [kernel.final.get(s.id) for s in kernel.plan.subtasks]
    ok = sum(1 for c in finals if c is not None and c.status == "ok")
    if ok == len(finals):
        return RunStatus.COMPLETED
    if ok:
        return RunStatus.PARTIAL
    spent = any(c is not None and (c.spawned or c.status == "unknown") for c in finals)
    return RunStatus.FAILED if spent else RunStatus.STOPPED


def build_envelope(kernel: Kernel, picks: list[Pick], started_at: str, duration_ms: int) -> dict[str, Any]:
    plan, ident = kernel.plan, kernel.ident
    seen = scan(kernel.ledger, ident.tree_id)
    records = seen.records
    status = status_of(kernel)
    children = []
    for child in kernel.children:
        row = child.to_dict()
        below = subtree(records, child.child_id) if child.child_id else []
        totals = totals_of(below).to_dict()
        row["subtree"] = {"runs": len(below), "max_depth": max((r.get("depth", 0) for r in below), default=None),
                          "statuses": sorted({str(r.get("status")) for r in below}), **totals}
        children.append(row)
    own = [r for r in records if r.get("run_id") == ident.run_id]
    envelope: dict[str, Any] = {
        "autopilot": 1, "status": status,
        "run_id": ident.run_id, "tree_id": ident.tree_id, "agent_id": ident.agent_id,
        "parent_agent_id": ident.parent_agent_id, "depth": ident.depth, "chain": list(ident.chain),
        "goal": plan.goal, "goal_root": ident.goal_root, "mode": plan.mode, "requested_mode": plan.requested_mode,
        "width": plan.width, "band": ident.band.value, "plan": plan.source,
        "registry": kernel.settings.registry.source, "sentinel": kernel.config.to_dict(),
        "limits": plan.limits.model_dump(),
        "attempts": {"budget": ident.attempts_floor, "remaining": max(0, kernel.remaining(seen)),
                     "failed_in_tree": len(seen.failed_attempts)},
        "selection": [p.to_dict() for p in picks],
        "subtasks": [_subtask_row(kernel, s.id) for s in plan.subtasks],
        "children": children,
        "rules_fired": [f.to_dict() for f in kernel.findings],
        "debate": kernel.debate,
        "escalation": _escalation(kernel, seen.failed_attempts) if kernel.halting else None,
        "stopped_by": cancellation.stop_cause(kernel.settings.stop) if kernel.stopped() else None,
        "totals": {"run": totals_of(own).to_dict(), "tree": totals_of(records).to_dict()},
        "run_dir": str(kernel.run_dir), "report": None, "started_at": started_at, "duration_ms": duration_ms,
    }
    return envelope


def _subtask_row(kernel: Kernel, subtask_id: str) -> dict[str, Any]:
    child = kernel.final.get(subtask_id)
    tries = [c for c in kernel.children if c.subtask == subtask_id]
    return {"id": subtask_id, "agent": kernel.picks[subtask_id].agent, "status": child.status if child else "not run",
            "child_id": child.child_id if child else None, "attempts": sum(1 for c in tries if c.spawned),
            "artifacts": child.artifacts if child else []}


def _escalation(kernel: Kernel, failed: list[dict[str, Any]]) -> dict[str, Any]:
    first: Finding = kernel.halting[0]
    ident = kernel.ident
    finals = {s.id: kernel.final.get(s.id) for s in kernel.plan.subtasks}
    return {
        "reason": first.rule, "detail": first.detail, "subject": first.subject,
        "halting_rules": [f.to_dict() for f in kernel.halting],
        "chain": {"tree_id": ident.tree_id, "depth": ident.depth, "agents": ["(operator)", *ident.chain],
                  "agent_id": ident.agent_id, "parent_agent_id": ident.parent_agent_id},
        "failed_attempts": [{k: r.get(k) for k in ("child_id", "parent_id", "run_id", "agent", "subtask", "depth",
                                                  "attempt", "status", "reason", "started_at")} for r in failed],
        "done_so_far": [{"subtask": sid, "child_id": c.child_id, "answer_file": c.answer_file,
                         "artifacts": c.artifacts} for sid, c in finals.items() if c is not None and c.status == "ok"],
        "not_done": [sid for sid, c in finals.items() if c is None or c.status != "ok"],
    }


def refused_envelope(run_id: str, reason: str, detail: str, started_at: str, context: dict[str, Any]) -> dict[str, Any]:
    return {"autopilot": 1, "status": RunStatus.REFUSED, "run_id": run_id,
            "reason": reason, "detail": detail, "children": [], "rules_fired": [], "started_at": started_at,
            **context}


def check_envelope(plan: Plan, settings: KernelSettings) -> dict[str, Any]:
    """What a check of a plan answers (`autopilot check`, serve's autopilot_check): the plan as read and the agent
    each sub-task would get; nothing is spawned."""
    picks = select_agents(plan, settings.registry, ())
    return {"autopilot": 1, "status": "valid", "goal": plan.goal, "mode": plan.mode,
            "requested_mode": plan.requested_mode, "width": plan.width, "band": plan.band.value,
            "registry": settings.registry.source, "sentinel": settings.sentinel.to_dict(),
            "selection": [p.to_dict() for p in picks]}


def invalid_envelope(field_name: str, message: str) -> dict[str, Any]:
    """The envelope of a plan, registry or sentinel config that cannot be used (nothing ran)."""
    return {"autopilot": 1, "status": "invalid", "field": field_name, "detail": message}


# -- markdown ------------------------------------------------------------------------------------
def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    return " ".join(text.replace("|", "\\|").split()) or "–"


def _table(headers: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _money(totals: dict[str, Any]) -> str:
    unknown = f", {totals['cost_unknown']} of unknown cost" if totals.get("cost_unknown") else ""
    return (f"{totals['calls']} record(s), {totals['input_tokens']} + {totals['output_tokens']} tokens, "
            f"${totals['cost_usd']:.4f} reported{unknown}")


def render_markdown(envelope: dict[str, Any]) -> str:
    if envelope["status"] == RunStatus.REFUSED:
        return (f"# Auto-pilot run {envelope['run_id']}: refused\n\n**{envelope['reason']}**: {envelope['detail']}\n\n"
                f"Nothing was spawned.\n")
    lines = [f"# Auto-pilot run {envelope['run_id']}: {envelope['status']}", "",
             f"- Goal: {envelope['goal']}" + ("" if envelope["goal"] == envelope["goal_root"]
                                               else f" (root goal: {envelope['goal_root']})"),
             f"- Mode: {envelope['mode']}" + (f" (as {envelope['requested_mode']})"
                                              if envelope["requested_mode"] != envelope["mode"] else "")
             + f", {envelope['width']} at once; band {envelope['band']}",
             (f"- Tree {envelope['tree_id']}, depth {envelope['depth']}, chain: "
              f"{' > '.join(['(operator)', *envelope['chain']])}"),
             (f"- Attempts: {envelope['attempts']['remaining']} of "
              f"{envelope['attempts']['budget']} left, {envelope['attempts']['failed_in_tree']} failed in the tree"),
             f"- This run: {_money(envelope['totals']['run'])}; whole tree: {_money(envelope['totals']['tree'])}"]
    if envelope.get("stopped_by"):
        lines.append(f"- Stopped by {envelope['stopped_by']}: no step started after it")
    escalation = envelope.get("escalation")
    if escalation:
        lines += ["", "## Escalation: a human is needed", "",
                  f"**{escalation['reason']}** on {escalation['subject']}: {escalation['detail']}", ""]
        lines += [f"- {f['rule']} ({f['ref']}, {f['severity']}) on {f['subject']}: {f['detail']}"
                  for f in escalation["halting_rules"][1:]]
        lines += [f"- Done so far: {', '.join(d['subtask'] for d in escalation['done_so_far']) or 'nothing'}",
                  f"- Not done: {', '.join(escalation['not_done']) or 'nothing'}"]
        if escalation["failed_attempts"]:
            lines += ["", "Failed attempts in the tree:", ""]
            lines += _table(("child", "parent", "agent", "subtask", "depth", "attempt", "reason"),
                            [(a["child_id"], a["parent_id"], a["agent"], a["subtask"], a["depth"], a["attempt"],
                              a["reason"]) for a in escalation["failed_attempts"]])
    lines += ["", "## Selection", ""]
    lines += _table(("subtask", "agent", "rule", "why", "skipped"),
                    [(p["subtask"], p["agent"], p["rule"], p["why"], "; ".join(p["skipped"])) for p in envelope["selection"]])
    lines += ["", "## Children", ""]
    lines += _table(("child", "step", "agent", "try", "depth", "status", "reason", "artifacts", "tokens", "cost USD",
                     "subtree"),
                    [(c["child_id"] or "(not run)", c["subject"], c["agent"], c["attempt"], c["depth"], c["status"],
                      c["reason"], ", ".join(c["artifacts"]), _tokens(c["usage"]), _cost(c["usage"]),
                      f"{c['subtree']['runs']} run(s), ${c['subtree']['cost_usd']:.4f}" if c["subtree"]["runs"] else "")
                     for c in envelope["children"]])
    lines += ["", "## Rules fired", ""]
    if envelope["rules_fired"]:
        lines += _table(("rule", "ref", "severity", "action", "subject", "detail"),
                        [(f["rule"], f["ref"], f["severity"], f["action"], f["subject"], f["detail"])
                         for f in envelope["rules_fired"]])
    else:
        lines.append("None.")
    debate = envelope.get("debate")
    if debate:
        lines += ["", "## Debate", "", (f"Consolidator: {debate['consolidator']['agent']} "
                                        f"({debate['consolidator']['rule']}); {len(debate['rounds'])} round(s) of at most "
                                        f"{debate['max_rounds']}; verdict: **{debate['verdict']}**")]
        if debate.get("merged"):
            lines += ["", debate["merged"]]
        lines += [f"- {reason}" for reason in debate.get("reasons") or []]
    answered = [c for c in envelope["children"] if c["status"] == "ok" and c["answer"]]
    if answered:
        lines += ["", "## Results"]
        for c in answered:
            text = c["answer"]
            cut = f"\n\n(first {SHOWN_ANSWER_CHARS} characters; all of it in {c['answer_file']})" \
                if len(text) > SHOWN_ANSWER_CHARS else ""
            lines += ["", f"### {c['subject']} ({c['agent']}, {c['child_id']})", "", text[:SHOWN_ANSWER_CHARS] + cut]
    return "\n".join(lines) + "\n"


def _tokens(usage: dict[str, Any] | None) -> str:
    if not usage or usage.get("total_tokens") is None:
        return ""
    return f"{usage['total_tokens']}{' (est.)' if usage.get('source') == 'estimate' else ''}"


def _cost(usage: dict[str, Any] | None) -> str:
    if not usage or usage.get("cost_usd") is None:
        return "" if not usage or usage.get("source") == "not_run" else "unknown"
    return f"{usage['cost_usd']:.4f}"
