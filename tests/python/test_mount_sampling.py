"""`mount --cognition stub|sampling`: the body's option, the entry's `sampling:` block sized from the body's bounds,
its max_rpm the full turns a minute the operator allows (`--sampling-turns-per-minute`, the spend brake), what
remount keeps and what `--cognition stub` takes back (harness.hermes_mount.cognition), in temporary homes.

The body here is a stand-in whose `--help` states the sampling defaults the way the Ada body's does, so the sizes
are read from a body, not from the test; mount runs with --no-check (the stand-in speaks no MCP).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from harness.cli import main
from harness.cli.exit_codes import ExitCode
from harness.hermes.config_yaml import load_as_hermes
from harness.hermes_mount.cognition import (
    BUDGET_BOUNDS,
    CALLS_PER_DRAINED_TURN,
    CALLS_PER_FULL_TURN,
    DEFAULT_TURNS_PER_MINUTE,
    INTENT_CALLS,
    TURNS_PER_MINUTE_RANGE,
    SessionBudget,
    help_defaults,
)
from harness.hermes_mount.config_file import backups_of
from stand_in_support import (
    BUDGET_CALLS,
    BUDGET_WINDOW_S,
    HELP,
    MAX_TOKENS,
    REQUEST_TIMEOUT_MS,
    TURN_DEADLINE_MS,
    stand_in_body,
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes-home"
    path.mkdir()
    return path


@pytest.fixture
def body(tmp_path: Path) -> Path:
    return stand_in_body(tmp_path)


def mount(home: Path, body: Path, *extra: str) -> int:
    return main(["mount", "--hermes-home", str(home), "--body", str(body), "--no-check", *extra])


def entry_of(home: Path) -> dict:
    """The entry as Hermes reads it (YAML 1.1)."""
    return load_as_hermes((home / "config.yaml").read_text(encoding="utf-8"))["mcp_servers"]["mafiabot"]


def test_the_help_parser_reads_each_default_even_when_it_wraps_to_the_next_line():
    assert help_defaults(HELP) == {"--sampling-timeout-ms": REQUEST_TIMEOUT_MS, "--turn-deadline-ms": TURN_DEADLINE_MS,
                                   "--sampling-max-tokens": MAX_TOKENS}


def test_the_help_parser_reads_the_budget_s_defaults_too():
    assert help_defaults(HELP, BUDGET_BOUNDS) == {"--budget-calls": BUDGET_CALLS, "--budget-window-s": BUDGET_WINDOW_S}


@pytest.mark.parametrize(("calls", "window_s", "most"), [(54, 300, 54), (54, 60, 54), (20, 5, 240), (30, 20, 90),
                                                         (30, 25, 90), (9, 61, 9)])
def test_a_session_s_budget_lets_through_a_minute_its_calls_times_the_windows_a_minute_spans(calls, window_s, most):
    assert SessionBudget(calls, window_s).most_calls_a_minute() == most


def test_with_a_budget_max_rpm_also_lets_one_session_spend_all_its_budget_allows_a_minute(home, body, capsys):
    assert mount(home, body, "--cognition", "sampling", "--body-arg=--energy", "--body-arg=budget") == 0
    most = BUDGET_CALLS * math.ceil(60 / BUDGET_WINDOW_S)
    assert most > DEFAULT_TURNS_PER_MINUTE * CALLS_PER_FULL_TURN  # so the budget, not the turns, sizes it here
    assert entry_of(home)["sampling"]["max_rpm"] == most
    out = capsys.readouterr().out
    assert f"--budget-calls {BUDGET_CALLS} in --budget-window-s {BUDGET_WINDOW_S} a session, at most {most}" in out

    # The entry's own budget sizes it instead of the body's defaults
    other = home.parent / "other-home"
    other.mkdir()
    assert mount(other, body, "--cognition", "sampling", "--body-arg=--energy", "--body-arg=budget",
                 "--body-arg=--budget-calls=20", "--body-arg=--budget-window-s", "--body-arg=5") == 0
    assert entry_of(other)["sampling"]["max_rpm"] == 20 * 12


def test_an_own_max_rpm_below_the_budget_s_minute_is_kept_with_a_note(home, body, capsys):
    assert mount(home, body, "--cognition", "sampling", "--sampling-turns-per-minute", "1") == 0
    capsys.readouterr()
    assert mount(home, body, "--cognition", "sampling", "--body-arg=--energy", "--body-arg=budget") == 0
    assert entry_of(home)["sampling"]["max_rpm"] == CALLS_PER_FULL_TURN
    assert (f"sampling.max_rpm 9 is below the {BUDGET_CALLS * math.ceil(60 / BUDGET_WINDOW_S)} calls a minute"
            in capsys.readouterr().out)


def test_a_full_turn_is_nine_calls_and_a_drained_one_two():
    assert (CALLS_PER_FULL_TURN, CALLS_PER_DRAINED_TURN) == (9, 2)


def test_mount_cognition_sampling_writes_the_option_and_a_block_that_brakes_past_the_default_turns(home, body, capsys):
    assert mount(home, body, "--cognition", "sampling") == 0
    entry = entry_of(home)
    assert entry["args"][-2:] == ["--cognition", "sampling"]
    block = entry["sampling"]
    assert set(block) == {"max_rpm", "timeout", "max_tokens_cap"}
    assert DEFAULT_TURNS_PER_MINUTE == 6 and block["max_rpm"] == 54
    assert block["timeout"] * 1000 == REQUEST_TIMEOUT_MS
    assert block["max_tokens_cap"] == MAX_TOKENS
    assert entry["timeout"] * 1000 > TURN_DEADLINE_MS
    out = capsys.readouterr().out
    [chosen] = [line for line in out.splitlines() if line.strip().startswith("sampling: max_rpm")]
    assert "max_rpm >= 54" in chosen and "a full turn is 9 model calls" in chosen
    assert "at least 6 full turns a minute back to back (--sampling-turns-per-minute), then throttles" in chosen
    assert f"--sampling-timeout-ms {REQUEST_TIMEOUT_MS}, the body's default" in out
    assert f"outlasts --turn-deadline-ms {TURN_DEADLINE_MS}" in out


@pytest.mark.parametrize("turns", [1, 2, 60])
def test_the_turns_a_minute_the_operator_allows_size_max_rpm_in_whole_turns(home, body, capsys, turns):
    assert mount(home, body, "--cognition", "sampling", "--sampling-turns-per-minute", str(turns)) == 0
    assert entry_of(home)["sampling"]["max_rpm"] == turns * CALLS_PER_FULL_TURN
    assert f"sampling: max_rpm {turns * CALLS_PER_FULL_TURN}, " in capsys.readouterr().out


def test_a_brake_the_operator_asks_for_holds_even_below_the_entry_s_own_max_rpm(home, body, capsys):
    assert mount(home, body, "--cognition", "sampling", "--sampling-turns-per-minute", "20") == 0
    capsys.readouterr()
    assert mount(home, body, "--sampling-turns-per-minute", "1") == 0
    assert entry_of(home)["sampling"]["max_rpm"] == CALLS_PER_FULL_TURN
    assert "note: set sampling.max_rpm from 180 to 9: --sampling-turns-per-minute 1 asks for it" in capsys.readouterr().out
    # A remount for another reason never loosens the brake: one full turn a minute is the operator's to keep.
    assert mount(home, body, "--compact") == 0
    assert entry_of(home)["sampling"]["max_rpm"] == CALLS_PER_FULL_TURN
    assert "kept the entry's own sampling max_rpm 9" in capsys.readouterr().out


@pytest.mark.parametrize("given", [str(TURNS_PER_MINUTE_RANGE[0] - 1), str(TURNS_PER_MINUTE_RANGE[1] + 1), "-3"])
def test_turns_a_minute_outside_the_range_are_refused_in_one_line_and_nothing_is_written(home, body, capsys, given):
    assert mount(home, body, "--cognition", "sampling", f"--sampling-turns-per-minute={given}") == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err.strip()
    assert f"--sampling-turns-per-minute {given}: give 1 to 60 full turns a minute" in err and len(err.splitlines()) == 1
    assert not (home / "config.yaml").exists()


def test_turns_a_minute_that_are_not_a_whole_number_are_refused_by_the_parser(home, body, capsys):
    assert mount(home, body, "--cognition", "sampling", "--sampling-turns-per-minute", "1.5") == ExitCode.INVALID_INPUT
    assert "invalid int value: '1.5'" in capsys.readouterr().err
    assert not (home / "config.yaml").exists()


def test_remount_without_cognition_keeps_sampling_and_changes_nothing(home, body, capsys):
    assert mount(home, body, "--cognition", "sampling") == 0
    before = (home / "config.yaml").read_text(encoding="utf-8")
    capsys.readouterr()
    assert mount(home, body) == 0
    assert "already mounted as asked" in capsys.readouterr().out
    assert (home / "config.yaml").read_text(encoding="utf-8") == before
    assert backups_of(home / "config.yaml") == []


def test_larger_own_values_are_kept_smaller_ones_raised_with_a_note_and_unsized_keys_left(home, body, capsys):
    (home / "config.yaml").write_text(
        "mcp_servers:\n"
        "  mafiabot:\n"
        f"    command: {body}\n"
        "    sampling:\n"
        "      max_rpm: 5           # less than one full turn\n"
        "      timeout: 120         # my slow model\n"
        "      model: local-llama\n"
        "      allowed_models: [local-llama]\n", encoding="utf-8")
    assert mount(home, body, "--cognition", "sampling") == 0
    block = entry_of(home)["sampling"]
    assert block["timeout"] == 120 and block["model"] == "local-llama" and block["allowed_models"] == ["local-llama"]
    assert block["max_rpm"] == 54 and block["max_tokens_cap"] == MAX_TOKENS
    text = (home / "config.yaml").read_text(encoding="utf-8")
    assert "# my slow model" in text
    out = capsys.readouterr().out
    assert "note: raised sampling.max_rpm from 5 to 54" in out
    assert "note: kept the entry's own sampling timeout 120" in out


def test_an_own_max_rpm_that_lets_a_full_turn_through_is_the_operator_s_brake_and_kept(home, body, capsys):
    (home / "config.yaml").write_text(f"mcp_servers:\n  mafiabot:\n    command: {body}\n    sampling:\n"
                                      "      max_rpm: 10\n", encoding="utf-8")
    assert mount(home, body, "--cognition", "sampling") == 0
    assert entry_of(home)["sampling"]["max_rpm"] == 10
    assert "kept the entry's own sampling max_rpm 10" in capsys.readouterr().out


@pytest.mark.parametrize("spelled, note", [
    ("false", "sampling.enabled was False, so Hermes would not answer the body's requests"),
    ("off", "Hermes would have read the entry's sampling.enabled: False"),  # a string to ruamel, false to Hermes
])
def test_sampling_disabled_in_the_entry_is_enabled_with_a_note(home, body, capsys, spelled, note):
    (home / "config.yaml").write_text(f"mcp_servers:\n  mafiabot:\n    command: {body}\n    sampling:\n"
                                      f"      enabled: {spelled}\n", encoding="utf-8")
    assert mount(home, body, "--cognition", "sampling") == 0
    assert entry_of(home)["sampling"]["enabled"] is True
    assert note in capsys.readouterr().out


def test_a_value_yaml_1_1_reads_otherwise_is_judged_as_hermes_reads_it_and_restated(home, body, capsys):
    # ruamel (YAML 1.2) reads 0o777777 as 262143, enough; Hermes's PyYAML reads the string "0o777777",
    # which its int() refuses, so Hermes would fall back to 10 a minute.
    (home / "config.yaml").write_text(f"mcp_servers:\n  mafiabot:\n    command: {body}\n    sampling:\n"
                                      "      max_rpm: 0o7777777\n", encoding="utf-8")
    assert mount(home, body, "--cognition", "sampling") == 0
    read = entry_of(home)["sampling"]["max_rpm"]
    assert read == 0o7777777  # what ruamel read, now spelled so that Hermes reads it too
    assert "Hermes would have read the entry's sampling.max_rpm: '0o7777777'" in capsys.readouterr().out


def test_an_entry_whose_body_asks_the_model_for_the_intent_sizes_max_rpm_for_its_longer_turns(home, body, capsys):
    assert mount(home, body, "--cognition", "sampling", "--body-arg=--intent", "--body-arg=model") == 0
    full = CALLS_PER_FULL_TURN + INTENT_CALLS
    assert entry_of(home)["sampling"]["max_rpm"] == DEFAULT_TURNS_PER_MINUTE * full
    [chosen] = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("sampling: max_rpm")]
    assert f"a full turn is {full} model calls (8 passes + the intent + the synthesis, 3 drained)" in chosen
    assert f"at least {DEFAULT_TURNS_PER_MINUTE} full turns a minute back to back" in chosen
    # An own brake that lets a turn of the rules' intent through, but not one that asks the intent too, is raised.
    config = home / "config.yaml"
    config.write_text(re.sub(r"max_rpm: \d+", f"max_rpm: {CALLS_PER_FULL_TURN}", config.read_text(encoding="utf-8")),
                      encoding="utf-8")
    assert mount(home, body) == 0
    assert entry_of(home)["sampling"]["max_rpm"] == DEFAULT_TURNS_PER_MINUTE * full
    assert (f"raised sampling.max_rpm from {CALLS_PER_FULL_TURN} to {DEFAULT_TURNS_PER_MINUTE * full}: below it Hermes "
            f"refuses calls of the full turns a minute it allows ({full} each)") in capsys.readouterr().out


def test_the_entry_s_own_body_bounds_size_the_block_instead_of_the_body_s_defaults(home, body):
    assert mount(home, body, "--cognition", "sampling", "--body-arg=--sampling-timeout-ms=45500",
                 "--body-arg=--turn-deadline-ms", "--body-arg=90000", "--body-arg=--sampling-max-tokens",
                 "--body-arg=2048") == 0
    entry = entry_of(home)
    assert entry["sampling"]["timeout"] == 45.5 and entry["sampling"]["max_tokens_cap"] == 2048
    assert entry["timeout"] > 90


def test_a_kept_timeout_short_of_the_turn_deadline_is_raised_and_an_asked_one_refused(home, body, capsys):
    (home / "config.yaml").write_text(f"mcp_servers:\n  mafiabot:\n    command: {body}\n    timeout: 30\n",
                                      encoding="utf-8")
    before = (home / "config.yaml").read_text(encoding="utf-8")
    assert mount(home, body, "--cognition", "sampling", "--timeout", "30") == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err
    assert "--timeout 30: with --cognition sampling Hermes must wait longer than the body's turn deadline" in err
    assert len(err.strip().splitlines()) == 1
    assert (home / "config.yaml").read_text(encoding="utf-8") == before
    assert mount(home, body, "--cognition", "sampling") == 0
    assert entry_of(home)["timeout"] == math.floor(TURN_DEADLINE_MS / 1000) + 1
    assert "raised the entry's timeout from 30 to 51 s" in capsys.readouterr().out


def test_cognition_stub_takes_back_only_what_mount_wrote(home, body, capsys):
    assert mount(home, body, "--cognition", "sampling") == 0
    assert mount(home, body, "--cognition", "stub") == 0
    entry = entry_of(home)
    assert "--cognition" not in entry["args"] and "sampling" not in entry
    capsys.readouterr()

    assert mount(home, body, "--cognition", "sampling") == 0
    text = (home / "config.yaml").read_text(encoding="utf-8")
    (home / "config.yaml").write_text(text.replace("    sampling:\n", "    sampling:\n      model: local-llama\n"
                                                   "      timeout: 300\n", 1).replace("      timeout: 20\n", ""),
                                      encoding="utf-8")
    assert mount(home, body, "--cognition", "stub") == 0
    assert entry_of(home)["sampling"] == {"model": "local-llama", "timeout": 300}
    assert "removed sampling.max_rpm, sampling.max_tokens_cap (what mount wrote)" in capsys.readouterr().out


def test_a_sampling_key_that_is_not_a_mapping_is_refused_naming_its_line(home, body, capsys):
    config = home / "config.yaml"
    config.write_text(f"mcp_servers:\n  mafiabot:\n    command: {body}\n    sampling: 5\n", encoding="utf-8")
    before = config.read_text(encoding="utf-8")
    assert mount(home, body, "--cognition", "sampling") == ExitCode.INVALID_INPUT
    assert "'mcp_servers.mafiabot.sampling' (line 4) is not a mapping but a int" in capsys.readouterr().err
    assert config.read_text(encoding="utf-8") == before


def test_a_body_that_states_no_sampling_defaults_is_refused_in_one_line(home, tmp_path, capsys):
    old = tmp_path / "old" / "stand-in-body"
    old.parent.mkdir()
    old.write_text("#!/bin/sh\necho 'usage: mafiabot [options]'\n")
    old.chmod(0o755)
    assert mount(home, old, "--cognition", "sampling") == ExitCode.INVALID_INPUT
    err = capsys.readouterr().err.strip()
    assert "does not state a default for --sampling-timeout-ms" in err and len(err.splitlines()) == 1
    assert not (home / "config.yaml").exists()


def test_unmount_removes_the_sampling_block_with_the_entry(home, body):
    (home / "config.yaml").write_text("model: {default: mine}\n", encoding="utf-8")  # so the file outlives the entry
    assert mount(home, body, "--cognition", "sampling") == 0
    assert main(["unmount", "--hermes-home", str(home)]) == 0
    assert YAML(typ="safe").load((home / "config.yaml").read_text(encoding="utf-8")) == {"model": {"default": "mine"}}


def test_a_dry_run_shows_the_block_it_would_write_and_why_and_writes_nothing(home, body, capsys):
    assert mount(home, body, "--cognition", "sampling", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "+    sampling:" in out and f"+      max_tokens_cap: {MAX_TOKENS}" in out
    assert "sampling: max_rpm >= " in out and "a full turn is 9 model calls" in out
    assert not (home / "config.yaml").exists()
