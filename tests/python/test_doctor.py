"""`mafiabot-harness doctor` without Hermes (test_hermes_real.py runs it with Hermes), and the
reading of `hermes mcp test` output, which exits 0 whatever happened."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from harness.cli import main
from harness.hermes_mount import doctor as doctor_module
from harness.hermes_mount.cognition import SamplingBounds
from harness.hermes_mount.hermes_cli import parse_mcp_test
from harness.hermes_mount.probe import SCRIPTED_MODEL, SamplingProbe
from stand_in_support import BUDGET_CALLS, BUDGET_WINDOW_S, stand_in_body

CONNECTED = """
  Testing 'mafiabot'...
  Transport: stdio → /opt/mafiabot/bin/mafiabot
  Auth: none
  ✓ Connected (88ms)
  ✓ Tools discovered: 1

    turn                                 Carry one user turn, scoped to its session (uid, channe...

"""
FAILED = """
  Testing 'mafiabot'...
  Transport: stdio → /nonexistent/mafiabot
  Auth: none
  ✗ Connection failed (7231ms): Connection closed
Exception ignored in: <coroutine object MCPServerTask._wait_for_reconnect_or_shutdown at 0x7f80f2e38f20>
Traceback (most recent call last):
    t.cancel()
RuntimeError: Event loop is closed
"""
NOT_FOUND = "  ✗ Server 'mafiabot' not found in config.\n  Available: github\n"


def doctor(home: Path, *extra: str) -> int:
    return main(["doctor", "--hermes-home", str(home), "--no-hermes", *extra])


def lines_of(out: str) -> dict[str, str]:
    """check name -> its status, from doctor's output."""
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("ok", "warn", "fail", "skip"):
            found[parts[1]] = parts[0]
    return found


def test_doctor_passes_every_check_of_a_freshly_mounted_body(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home)]) == 0
    capsys.readouterr()
    assert doctor(home) == 0
    out = capsys.readouterr().out
    assert lines_of(out) == {"config": "ok", "entry": "ok", "env": "ok", "body": "ok", "handshake": "ok",
                             "turn": "ok", "soul": "ok", "state": "ok", "discovery": "ok", "cognition": "ok",
                             "sampling": "skip",
                             "level1": "ok", "loaded": "skip",
                             "hermes": "skip"}
    assert "23 steps, 8 passes" in out and out.rstrip().endswith("all checks passed")
    assert "skip  sampling   the entry thinks with the stub organs" in out
    assert not (home / "SOUL.md").exists(), "doctor must not write SOUL.md"


def test_doctor_says_plainly_that_the_mounted_body_is_gone(body_exe, tmp_path, capsys):
    home, moved = tmp_path / "home", tmp_path / "bin" / "mafiabot"
    moved.parent.mkdir()
    moved.write_bytes(body_exe.read_bytes())
    moved.chmod(0o755)
    assert main(["mount", "--hermes-home", str(home), "--body", str(moved)]) == 0
    moved.unlink()
    capsys.readouterr()
    assert doctor(home) == 1
    out = capsys.readouterr().out
    assert f"fail  body       the body {moved} does not exist (build it with `make build`" in out
    assert lines_of(out)["handshake"] == "skip"
    assert "1 check(s) failed: body" in out


def test_doctor_quotes_the_stderr_of_a_body_that_crashes_at_start(tmp_path, capsys):
    crashing = tmp_path / "mafiabot"
    crashing.write_text("#!/bin/sh\necho 'mafiabot: --organs: cannot read /gone.json' >&2\nexit 2\n")
    crashing.chmod(0o755)
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home), "--body", str(crashing), "--no-check"]) == 0
    capsys.readouterr()
    assert doctor(home) == 1
    out = capsys.readouterr().out
    assert "fail  handshake  the body exited with exit code 2" in out
    assert "mafiabot: --organs: cannot read /gone.json" in out


def test_doctor_on_an_unmounted_home_says_how_to_mount_and_skips_what_only_an_entry_could_pass(body_exe, tmp_path,
                                                                                             capsys):
    assert doctor(tmp_path / "empty", "--profile", "ops") == 1
    out = capsys.readouterr().out
    checks = lines_of(out)
    assert checks["config"] == "warn" and checks["entry"] == "fail" and checks["body"] == "ok"
    # the hint acts on the same home when run as printed
    assert f"run `mafiabot-harness mount --hermes-home {tmp_path / 'empty'} --profile ops`" in out
    # No check of what Hermes would start may pass when Hermes would start nothing.
    assert "ok" not in {status for check, status in checks.items() if check != "body"}
    for check in ("handshake", "soul", "state", "sampling"):
        assert checks[check] == "skip" and f"skip  {check:<10} nothing is mounted as 'mafiabot'" in out
    assert "turn" not in checks


def test_doctor_warns_when_the_entry_does_not_pass_hermes_home(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(f"mcp_servers:\n  mafiabot:\n    command: {body_exe.absolute()}\n")
    assert doctor(home) == 0
    out = capsys.readouterr().out
    assert "warn  env        the entry's env has no HERMES_HOME" in out


def test_doctor_reports_a_malformed_config_with_its_line(tmp_path, capsys):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("mcp_servers:\n  mafiabot: [\n")
    assert doctor(home) == 1
    assert "fail  config" in capsys.readouterr().out


# -- reading `hermes mcp test` -------------------------------------------------------------

def test_a_connected_report_lists_the_tools_hermes_discovered():
    report = parse_mcp_test(CONNECTED)
    assert report.connected and report.connect_ms == 88 and report.tools == ("turn",)


def test_a_failed_connection_is_read_from_the_output_not_the_exit_status():
    report = parse_mcp_test(FAILED)
    assert not report.connected and report.tools == ()
    assert report.problem == "Connection failed (7231ms): Connection closed"


@pytest.mark.parametrize("output, problem", [
    (NOT_FOUND, "Server 'mafiabot' not found in config."),
    ("", "no verdict in its output"),
    ("\x1b[32m✓ Connected (5ms)\x1b[0m\n  ✓ Tools discovered: 0\n", None),
])
def test_other_verdicts_of_hermes_mcp_test_are_read_too(output, problem):
    assert parse_mcp_test(output).problem == problem


def discovery_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.split()[1:2] == ["discovery"])


def test_doctor_s_discovery_line_says_what_it_measured_against_what(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home)]) == 0
    capsys.readouterr()
    assert doctor(home) == 0
    line = discovery_line(capsys.readouterr().out)
    assert re.search(r"ok +discovery +started in \d+ ms against a discovery timeout of 1\.5 s \(Hermes's default\)$",
                     line), line


@pytest.mark.parametrize("written, status, says", [
    ("0.001", "warn", ("against a discovery timeout of 0.001 s (set in config.yaml) (outside the 1 to 600 s mount "
                       "writes): `hermes chat` starts MCP servers as it launches")),
    ("700", "warn", ("against a discovery timeout of 700 s (set in config.yaml) (outside the 1 to 600 s mount "
                     "writes): run mount with --discovery-timeout 5")),
    ("0", "ok", "against a discovery timeout of 1.5 s (Hermes's default)"),  # Hermes ignores a value not above 0
])
def test_doctor_reads_a_hand_written_discovery_timeout_as_hermes_does(body_exe, tmp_path, capsys, written, status,
                                                                      says):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home)]) == 0
    config = home / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8") + f"mcp_discovery_timeout: {written}\n", encoding="utf-8")
    capsys.readouterr()
    doctor(home)
    line = discovery_line(capsys.readouterr().out)
    assert line.split()[0] == status and says in line, line
    assert "close to" not in line


# --- Level1: installed, enabled, loaded ---------------------------------------------------------------------


def check_line(out: str, check: str) -> str:
    [line] = [line for line in out.splitlines() if line.split()[1:2] == [check]]
    return line


def test_doctor_warns_when_the_level1_plugin_is_not_installed(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home), "--no-check", "--no-level1"]) == 0
    capsys.readouterr()
    assert doctor(home) == 0  # a choice the operator may make: a warning, not a failure
    out = capsys.readouterr().out
    assert lines_of(out)["level1"] == "warn" and lines_of(out)["loaded"] == "skip"
    assert "not installed for mcp__mafiabot__turn: the model's own uid, channel and server reach" in out


@pytest.mark.parametrize(("config_edit", "said"), [
    (lambda text: text.replace("  - mafiabot-level1\n", "  - other\n"), "plugins.enabled does not name it"),
    (lambda text: text + "  disabled: [mafiabot-level1]\n", "Hermes's deny list wins"),
])
def test_doctor_reads_plugins_enabled_and_disabled_as_hermes_does(body_exe, tmp_path, capsys, config_edit, said):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home), "--no-check"]) == 0
    config = home / "config.yaml"
    config.write_text(config_edit(config.read_text()))
    capsys.readouterr()
    assert doctor(home) == 0
    out = capsys.readouterr().out
    assert lines_of(out)["level1"] == "warn" and said in check_line(out, "level1")


def test_doctor_says_an_edited_plugin_is_not_this_harness_s(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home), "--no-check"]) == 0
    with (home / "plugins" / "mafiabot-level1" / "__init__.py").open("a") as init:
        init.write("# edited\n")
    capsys.readouterr()
    doctor(home)
    line = check_line(capsys.readouterr().out, "level1")
    assert "warn" in line and "its __init__.py differ from this harness's: mount again" in line


def test_the_loaded_probe_is_hermes_s_own_loader_and_middleware(body_exe, tmp_path):
    from harness.hermes_mount.hermes_cli import hermes_python, probe_plugin
    from harness.hermes_mount.home import HermesHome
    from hermes_support import HERMES
    python = hermes_python(HERMES) if HERMES.exists() else None
    if python is None:
        pytest.skip(f"no Hermes at {HERMES}")
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home), "--no-check"]) == 0
    forged = {"input": "x", "uid": "forged", "channel": "forged", "server": "forged"}
    probe = probe_plugin(python, HermesHome(home), "mafiabot-level1", "mcp__mafiabot__turn", forged)
    assert probe.problem is None and probe.plugin is not None
    assert probe.plugin["enabled"] is True and probe.plugin["middleware"] == 1
    # The probe's session has no row in the scratch home: a session of its own, never the forged key
    assert probe.args["uid"] == "session:mafiabot-doctor-probe" and probe.args["server"] != "forged"
    assert probe.args["key_origin"].startswith("level1 unknown session=mafiabot-doctor-probe (no session row")
    # Not enabled: Hermes's loader finds it and says why it did not load it; the call passes as written.
    config = home / "config.yaml"
    config.write_text(config.read_text().replace("  - mafiabot-level1\n", "  - other\n"))
    probe = probe_plugin(python, HermesHome(home), "mafiabot-level1", "mcp__mafiabot__turn", forged)
    assert probe.plugin is not None and probe.plugin["enabled"] is False and "not enabled" in probe.plugin["error"]
    assert probe.args == forged


def test_doctor_says_the_full_turns_a_minute_the_block_allows_and_fails_one_below_a_full_turn(tmp_path, capsys):
    home, body = tmp_path / "home", stand_in_body(tmp_path)
    assert main(["mount", "--hermes-home", str(home), "--body", str(body), "--no-check", "--cognition",
                 "sampling"]) == 0
    capsys.readouterr()
    doctor(home)
    out = capsys.readouterr().out
    assert lines_of(out)["cognition"] == "ok"
    assert "ok    cognition  sampling: Hermes answers the body's calls with its model, enabled, max_rpm 54, " in out
    assert ": 6 full turns of 9 calls a minute back to back, then Hermes throttles" in out
    config = home / "config.yaml"
    mounted = config.read_text(encoding="utf-8")
    # Less than the default is the operator's brake to keep: 17 calls a minute is one full turn and is no fault.
    config.write_text(re.sub(r"max_rpm: \d+", "max_rpm: 17", mounted), encoding="utf-8")
    doctor(home)
    out = capsys.readouterr().out
    assert lines_of(out)["cognition"] == "ok" and ": 1 full turn of 9 calls a minute back to back" in out
    config.write_text(re.sub(r"max_rpm: \d+", "max_rpm: 8", mounted), encoding="utf-8")
    doctor(home)
    out = capsys.readouterr().out
    assert lines_of(out)["cognition"] == "fail" and lines_of(out)["sampling"] == "skip"
    assert "Hermes reads sampling.max_rpm: 8 < 9" in out and "run mount again to size it" in out


def test_doctor_shows_the_configured_budget_and_warns_when_max_rpm_cannot_carry_it(tmp_path, capsys):
    home, body = tmp_path / "home", stand_in_body(tmp_path)
    assert main(["mount", "--hermes-home", str(home), "--body", str(body), "--no-check", "--cognition", "sampling",
                 "--body-arg=--energy", "--body-arg=budget"]) == 0
    capsys.readouterr()
    doctor(home)
    out = capsys.readouterr().out
    most = BUDGET_CALLS * math.ceil(60 / BUDGET_WINDOW_S)
    assert lines_of(out)["cognition"] == "ok"
    assert (f"budget: --budget-calls {BUDGET_CALLS} in --budget-window-s {BUDGET_WINDOW_S} a session, at most {most} "
            "calls of one session a minute, within max_rpm") in out
    config = home / "config.yaml"
    config.write_text(re.sub(r"max_rpm: \d+", "max_rpm: 17", config.read_text(encoding="utf-8")), encoding="utf-8")
    doctor(home)
    out = capsys.readouterr().out
    assert lines_of(out)["cognition"] == "warn" and f"at most {most} calls of one session a minute, more than max_rpm 17" in out


def test_doctor_says_what_the_probe_turn_cost_of_the_real_body_s_budget(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home), "--cognition", "sampling", "--body-arg=--energy",
                 "--body-arg=budget", "--body-arg=--budget-calls", "--body-arg=30"]) == 0
    capsys.readouterr()
    assert doctor(home) == 0
    out = capsys.readouterr().out
    assert lines_of(out)["sampling"] == "ok"
    assert "sent 9 sampling requests" in out and "; it cost 9 of the session's 30 calls in 300 s (--energy budget)" in out


def test_doctor_probes_a_sampled_turn_of_the_real_body_with_its_own_scripted_client(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home), "--cognition", "sampling"]) == 0
    capsys.readouterr()
    assert doctor(home) == 0
    out = capsys.readouterr().out
    assert lines_of(out)["cognition"] == "ok" and lines_of(out)["sampling"] == "ok"
    assert "a turn of 8 passes sent 9 sampling requests (the passes and the synthesis), all answered by doctor's" in out
    assert not (home / "SOUL.md").exists(), "doctor's sampled turn must not write SOUL.md"


def test_doctor_probes_a_turn_whose_intent_the_model_is_asked_for_and_counts_that_call(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home), "--cognition", "sampling", "--body-arg=--intent", "--body-arg=model"]) == 0
    capsys.readouterr()
    assert doctor(home) == 0
    out = capsys.readouterr().out
    assert lines_of(out)["cognition"] == "ok" and lines_of(out)["sampling"] == "ok"
    assert ": 6 full turns of 10 calls a minute back to back" in out
    assert "a turn of 8 passes sent 10 sampling requests (the passes, the intent and the synthesis)" in out


def _call(status: str, model: str = SCRIPTED_MODEL) -> dict:
    return {"step": 4, "thinker": "sampling", "status": status, "model": model, "tokens": None, "latency_ms": 1,
            "error": None}


@pytest.mark.parametrize("cognition, requests, says", [
    (None, 0, "without its cognition member: it predates --cognition sampling"),
    ({"requested": "sampling", "thinker": "stub", "fallback": "the client did not declare sampling", "calls": []},
     0, "the body thought with 'stub' although the client declared sampling: the client did not declare sampling"),
    ({"requested": "sampling", "thinker": "sampling", "fallback": None,
      "calls": [_call("answered"), _call("timed_out")]}, 2, "the trace's calls: answered, timed_out"),
    ({"requested": "sampling", "thinker": "sampling", "fallback": None,
      "calls": [_call("answered"), _call("answered", "someone-else")]}, 2, "the trace's calls: answered, answered"),
])
def test_doctor_s_sampling_verdict_fails_a_turn_that_did_not_sample_every_pass(monkeypatch, cognition, requests, says):
    trace = {"passes_run": 1, "steps": [], **({"cognition": cognition} if cognition is not None else {})}
    monkeypatch.setattr(doctor_module, "probe_sampling",
                        lambda *_args: SamplingProbe(tuple({} for _ in range(requests)), trace))
    checks: list[tuple[str, str, str]] = []
    bounds = SamplingBounds(20000, 50000, 256)
    doctor_module._check_sampling("/bin/body", [], {}, bounds, lambda *check: checks.append(check))
    [(name, status, detail)] = checks
    assert (name, status) == ("sampling", "fail") and says in detail


# --- state: the entry's real session store, opened as Hermes's start of the body opens it -------------------


def test_doctor_fails_a_store_the_body_refuses_with_the_body_s_own_reason(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home)]) == 0
    store = home / "mafiabot" / "sessions.db"
    store.write_bytes(b"not a database, whatever its name says\n" * 100)
    capsys.readouterr()
    assert doctor(home) == 1
    out = capsys.readouterr().out
    checks = lines_of(out)
    assert checks["handshake"] == "ok", "the handshake's scratch store hides it: only the state check sees it"
    assert checks["state"] == "fail" and "1 check(s) failed: state" in out
    line = check_line(out, "state")
    assert (f"the body refuses its store (exit code 2: mafiabot: error: session store {store}: cannot be read: "
            "file is not a database)") in line
    assert store.read_bytes() == b"not a database, whatever its name says\n" * 100


def test_doctor_opens_a_healthy_store_and_changes_none_of_its_sessions(body_exe, spawn_body, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home)]) == 0
    store = home / "mafiabot" / "sessions.db"
    key = {"uid": "ann", "channel": "dm", "server": "tavern"}
    first = spawn_body(extra_args=["--state", str(store)])
    first.initialize()
    assert first.call_turn("hello", **key)["turn"] == 1
    first.close()
    held = store.read_bytes()
    capsys.readouterr()
    assert doctor(home) == 0
    line = check_line(capsys.readouterr().out, "state")
    assert line.split()[0] == "ok" and f"sessions: {store}, usable" in line
    assert store.read_bytes() == held
    again = spawn_body(extra_args=["--state", str(store)])
    again.initialize()
    assert again.call_turn("hello again", **key)["turn"] == 2, "the session doctor's body saw is the one left"


def test_doctor_never_makes_a_store_that_does_not_exist_yet(body_exe, tmp_path, capsys):
    home = tmp_path / "home"
    assert main(["mount", "--hermes-home", str(home)]) == 0
    capsys.readouterr()
    assert doctor(home) == 0
    store = home / "mafiabot" / "sessions.db"
    line = check_line(capsys.readouterr().out, "state")
    assert line.split()[0] == "ok" and f"sessions: {store} not made yet (the body makes it at its first start)" in line
    assert sorted(p.name for p in store.parent.iterdir()) == []
