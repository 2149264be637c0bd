"""Autonomy bands: which toolsets children get and where the kernel may write, band by band."""

from __future__ import annotations

from harness.autopilot.bands import Band, child_toolsets

from .autopilot_support import children, plan, rules, run

GOAL = "Weekly check-in for Maxime"
ANDY = ("web", "todo", "file", "terminal", "memory", "delegation")


def toolsets_passed(call) -> list[str]:
    return next(a.split("=", 1)[1] for a in call["argv"] if a.startswith("--toolsets=")).split(",")


def test_each_band_grants_only_its_toolsets_and_delegation_never() -> None:
    assert child_toolsets(ANDY, Band.L1) == (("web", "todo"), ("file", "terminal", "memory", "delegation"))
    assert child_toolsets(ANDY, Band.L2) == (("web", "todo", "file", "terminal"), ("memory", "delegation"))
    assert child_toolsets(ANDY, Band.L3) == (("web", "todo", "file", "terminal", "memory"), ("delegation",))
    assert child_toolsets(None, Band.L3) == (("todo",), ()), "no grant in the registry: todo only"
    assert child_toolsets(("cronjob",), Band.L3) == (("todo",), ("cronjob",))


def test_an_l1_child_gets_read_only_toolsets_on_its_command_line(fake_hermes, project, registry) -> None:
    result = run(project, plan(GOAL, {"task": "Email to the career coach.", "agent": "andy"}), registry, band="L1")
    assert toolsets_passed(fake_hermes.calls()[0]) == ["web", "todo"]
    assert rules(result) == ["band_toolsets"] and result.status == "completed"


def test_an_l2_child_may_get_file_and_terminal_but_not_memory(fake_hermes, project, registry) -> None:
    run(project, plan(GOAL, {"task": "Email to the career coach.", "agent": "andy"}), registry, band="L2")
    assert toolsets_passed(fake_hermes.calls()[0]) == ["web", "todo", "file", "terminal"]


def test_an_l3_child_may_also_get_memory(fake_hermes, project, registry) -> None:
    run(project, plan(GOAL, {"task": "Email to the career coach.", "agent": "andy"}), registry, band="L3")
    assert toolsets_passed(fake_hermes.calls()[0]) == ["web", "todo", "file", "terminal", "memory"]


def test_l1_pauses_a_write_for_a_human_and_writes_nothing_but_still_runs_the_read_only_work(fake_hermes, project,
                                                                                           registry) -> None:
    result = run(project, plan(GOAL, "Summary of the sleep log.", {"task": "Draft the report.",
                                                                   "write_to": "out/r.md"}),
                 registry, band="L1", mode="dueto")
    assert result.status == "escalate" and result.envelope["escalation"]["reason"] == "band_write"
    assert [s["status"] for s in result.envelope["subtasks"]] == ["ok", "paused"]
    assert not (project / "out").exists() and len(fake_hermes.calls()) == 1
    assert result.envelope["escalation"]["done_so_far"][0]["subtask"] == "s1"


def test_l2_writes_inside_the_project_root(fake_hermes, project, registry) -> None:
    fake_hermes.script({"stdout": "the report"})
    result = run(project, plan(GOAL, {"task": "Draft the report.", "write_to": "out/r.md"}), registry, band="L2")
    assert result.status == "completed" and (project / "out" / "r.md").read_text() == "the report\n"


def test_l2_pauses_a_write_outside_the_project_root_before_spawning(fake_hermes, project, registry,
                                                                    tmp_path) -> None:
    outside = tmp_path / "elsewhere.md"
    result = run(project, plan(GOAL, {"task": "Draft the report.", "write_to": str(outside)}), registry, band="L2")
    assert result.envelope["escalation"]["reason"] == "write_refused"
    assert not outside.exists() and not fake_hermes.calls()


def test_a_protected_file_pauses_in_every_band_even_l3(fake_hermes, project, registry) -> None:
    for band, target in (("L2", "AGENTS.md"), ("L3", ".env"), ("L3", "config.yaml")):
        result = run(project, plan(GOAL, {"task": "Draft the report.", "write_to": target}), registry, band=band)
        assert result.envelope["escalation"]["reason"] == "protected_file", (band, target)
    assert not fake_hermes.calls()


def test_l3_may_write_into_hermes_memories_and_l2_may_not(fake_hermes, project, registry, hermes_root) -> None:
    memory = hermes_root / "memories" / "notes.md"
    refused = run(project, plan(GOAL, {"task": "Draft the report.", "write_to": str(memory)}), registry, band="L2")
    assert refused.envelope["escalation"]["reason"] == "write_refused"
    fake_hermes.script({"stdout": "remember this"})
    allowed = run(project, plan(GOAL, {"task": "Draft the report.", "write_to": str(memory)}), registry, band="L3")
    assert allowed.status == "completed" and memory.read_text() == "remember this\n"


def test_a_write_target_held_by_another_run_is_a_worktree_collision(fake_hermes, project, registry) -> None:
    import hashlib

    from harness.durable import HolderLock
    target = (project / "out" / "r.md").resolve()
    digest = hashlib.sha256(str(target).encode()).hexdigest()[:16]
    with HolderLock(project / ".agents" / "state" / "autopilot" / "locks" / f"write.{digest}.lock").acquire("now"):
        result = run(project, plan(GOAL, {"task": "Draft the report.", "write_to": "out/r.md"}), registry)
    assert children(result)[0]["reason"] == "worktree_collision" and not fake_hermes.calls()
    assert result.status == "stopped"
