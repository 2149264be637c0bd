"""The skills host agents load (`skills/*/SKILL.md`) hold to what exists: their format, and every tool and command they name.

The Agent Skills format: YAML frontmatter with `name` (the folder's name: lowercase words joined by
hyphens, at most 64 characters) and `description` (at most 1,024), the file under 12,288 bytes (the
auto-pilot seed's own validation). Every ```mcp line is `TOOL {JSON arguments}` and must be accepted by
that tool's input model, the one `serve` validates calls with; every `mafiabot-harness ...` line in a
```sh block must parse with the real command line; every tool-like name in inline code (not a field of the
autobot envelope) must be a tool.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex

import pytest
import yaml

from harness.autobot import Envelope
from harness.cli import build_parser
from harness.serve.tools import TOOLS_BY_NAME
from support import REPO

SKILLS = REPO / "skills"
EXPECTED = ("agent-dispatch", "auto-pilot", "autobot")
MAX_SKILL_BYTES = 12_288
NAME_RULE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
TOOL_FAMILIES = ("autobot_", "delegation_", "queue_", "agent_", "autopilot_", "ledger_")
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def skill_text(name: str) -> str:
    return (SKILLS / name / "SKILL.md").read_text(encoding="utf-8")


def blocks(text: str, language: str) -> list[str]:
    return [line for lang, body in FENCE.findall(text) if lang == language for line in body.splitlines() if line]


def test_the_three_seeds_are_skills() -> None:
    assert tuple(sorted(p.name for p in SKILLS.iterdir() if (p / "SKILL.md").is_file())) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_a_skill_has_the_agent_skills_frontmatter_and_fits_the_size_cap(name: str) -> None:
    path = SKILLS / name / "SKILL.md"
    assert path.stat().st_size < MAX_SKILL_BYTES
    _, front, body = path.read_text(encoding="utf-8").split("---\n", 2)
    meta = yaml.safe_load(front)
    assert set(meta) == {"name", "description"} and meta["name"] == name and NAME_RULE.match(name)
    assert len(name) <= 64 and 0 < len(meta["description"].strip()) <= 1024
    assert body.strip()


@pytest.mark.parametrize("name", EXPECTED)
def test_every_tool_call_a_skill_shows_is_accepted_by_that_tools_real_input_model(name: str) -> None:
    calls = blocks(skill_text(name), "mcp")
    assert calls
    for line in calls:
        tool, _, arguments = line.partition(" ")
        assert tool in TOOLS_BY_NAME, line
        TOOLS_BY_NAME[tool].parse(json.loads(arguments))  # raises ToolFailure naming the field


@pytest.mark.parametrize("name", EXPECTED)
def test_every_command_a_skill_shows_parses_with_the_real_command_line(name: str) -> None:
    commands = [line for line in blocks(skill_text(name), "sh") if line.startswith("mafiabot-harness ")]
    assert commands
    parser = build_parser()
    for line in commands:
        args = parser.parse_args(shlex.split(line)[1:])  # argparse exits on an unknown command or option
        assert callable(args.handler), line


@pytest.mark.parametrize("name", EXPECTED)
def test_every_tool_a_skill_names_in_its_prose_exists_and_the_tools_come_before_the_cli(name: str) -> None:
    text = skill_text(name)
    envelope_fields = {f.name for f in dataclasses.fields(Envelope)}
    named = {token for token in re.findall(r"`([a-z_]+)`", text)
             if token.startswith(TOOL_FAMILIES) and token not in envelope_fields}
    assert named <= set(TOOLS_BY_NAME), named - set(TOOLS_BY_NAME)
    assert text.index("```mcp") < text.index("```sh")
