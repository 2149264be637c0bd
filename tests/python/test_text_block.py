"""The body's `--text-block compact`: what a model reads per turn, held against the full block.

The compact text block is the output, a blank line, then one line of JSON holding the result's
summary members (turn, energy, passes_run, route, coherence) with the values structuredContent
holds; structuredContent itself, the advertised tool and every other reply are the full body's
byte for byte. The figures docs/hermes.md states for one turn are computed here, not trusted.
"""

from __future__ import annotations

import json
import re
import subprocess
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from conftest import isolated_env
from harness.cli import main
from harness.client import BodyClient
from harness.hermes_mount.mount import COMPACT_TEXT_BLOCK
from support import REPO, check_text_block, check_trace, turn_arguments

SUMMARY_MEMBERS = ["turn", "energy", "passes_run", "route", "coherence"]
# Sessions pinned at each energy the default curve distinguishes, so every pass count is seen.
ROOMS = [("vito", "#docks", "corleone"), ("michael", "#tavern", "corleone"), ("tired", "general", "demo")]
# Spaces match any white space: the sentence may be wrapped anywhere.
STATED_FIGURES = re.compile(r"text block of (\d[\d,]*) bytes in full and (\d[\d,]*) bytes compact".replace(" ", r"\s+"))
# The example turn of docs/hermes.md is the one the stub model's script has Hermes call (test_hermes_compact measures it there).
EXAMPLE_TURN = json.loads((REPO / "stubs" / "scripts" / "turn_then_quote.json").read_text())["replies"][0]["tool_call"][
    "arguments"]


def text_of(result: dict[str, Any]) -> str:
    [block] = result["content"]
    assert block["type"] == "text"
    return block["text"]


def turns(client, count: int) -> list[dict[str, Any]]:
    results = []
    for n in range(count):
        uid, channel, server = ROOMS[n % len(ROOMS)]
        results.append(client.call_tool("turn", turn_arguments(f"turn {n}: who took the {n}th ring?",
                                                               uid, channel, server)))
    return results


@pytest.fixture
def full_and_compact(spawn_body):
    full = spawn_body()
    compact = spawn_body(extra_args=COMPACT_TEXT_BLOCK)
    for client in (full, compact):
        client.initialize()
    return full, compact


def test_a_compact_text_block_is_the_output_and_a_one_line_summary_of_structured_content(full_and_compact):
    full, compact = full_and_compact
    for long, short in zip(turns(full, 12), turns(compact, 12), strict=True):
        check_text_block(long)
        assert short["structuredContent"] == long["structuredContent"]
        trace = short["structuredContent"]
        output, blank, summary_line = text_of(short).partition("\n\n")
        assert blank and output == trace["output"]
        assert "\n" not in summary_line
        summary = json.loads(summary_line)
        assert list(summary) == SUMMARY_MEMBERS
        assert summary == {name: trace[name] for name in SUMMARY_MEMBERS}


def test_a_compact_text_block_is_under_a_quarter_of_the_full_one_at_every_energy(full_and_compact):
    full, compact = full_and_compact
    seen_passes = set()
    for long, short in zip(turns(full, 24), turns(compact, 24), strict=True):
        seen_passes.add(long["structuredContent"]["passes_run"])
        assert 4 * len(text_of(short).encode()) < len(text_of(long).encode()), long["structuredContent"]["passes_run"]
    assert len(seen_passes) > 1, "the turns should span more than one number of passes"


def test_compact_structured_content_still_validates_against_the_advertised_schema(full_and_compact):
    full, compact = full_and_compact
    assert compact.list_tools() == full.list_tools()
    [tool] = compact.list_tools()
    validator = Draft202012Validator(tool["outputSchema"])
    for result in turns(compact, 9):
        validator.validate(result["structuredContent"])
        check_trace(result["structuredContent"])


def test_the_readme_states_the_bytes_of_its_example_turn_as_the_body_writes_them(full_and_compact):
    full, compact = full_and_compact
    stated = STATED_FIGURES.search((REPO / "docs" / "hermes.md").read_text(encoding="utf-8"))
    assert stated, f"docs/hermes.md should say: {STATED_FIGURES.pattern}"
    measured = [len(text_of(client.call_tool("turn", EXAMPLE_TURN)).encode()) for client in (full, compact)]
    assert [int(figure.replace(",", "")) for figure in stated.groups()] == measured


def test_a_bad_text_block_form_is_refused_naming_the_option(body_exe):
    completed = subprocess.run([str(body_exe), "--text-block", "tiny"], capture_output=True, text=True,
                               timeout=10, stdin=subprocess.DEVNULL)
    assert completed.returncode == 2
    assert completed.stderr.splitlines()[0] == "mafiabot: error: --text-block needs full or compact, got 'tiny'"


def test_mount_compact_writes_the_option_and_the_mounted_body_answers_compact(body_exe, tmp_path, capsys):
    home = tmp_path / "hermes-home"
    assert main(["mount", "--hermes-home", str(home), "--compact"]) == 0
    assert "--text-block compact" in capsys.readouterr().out
    entry = yaml.safe_load((home / "config.yaml").read_text(encoding="utf-8"))["mcp_servers"]["mafiabot"]
    assert entry["args"][-2:] == list(COMPACT_TEXT_BLOCK)
    argv = [entry["command"], *entry["args"], "--soul", "off"]
    with BodyClient(argv, env=isolated_env(tmp_path / "env")) as client:
        client.initialize()
        _, _, summary_line = text_of(client.call_tool("turn", EXAMPLE_TURN)).partition("\n\n")
    assert list(json.loads(summary_line)) == SUMMARY_MEMBERS
