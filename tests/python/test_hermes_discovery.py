"""What the real Hermes Agent 0.19.0 does with a body slower to start than mcp_discovery_timeout.

Measured, not assumed: the body is started through a wrapper that sleeps before it execs the body,
in a temporary home with the stub model, and a one-shot `hermes chat -q` is asked to call the
tool. The model's first request lists the tools Hermes offered. `hermes chat` starts MCP
discovery in the background as it launches, so a server gets Hermes's own start-up (seconds of
imports) plus mcp_discovery_timeout: a body 4 s late against a 1 s timeout was still offered, one
8 s late was not (bench/hermes-discovery.md). Here the slow body is far past either, and the
model is told the tool does not exist; the between-turns refresh that would add it later needs a
second turn, which a one-shot chat does not have. This is what mount's note and doctor's
`discovery` line say (harness.hermes_mount.doctor.late_server_effect).
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from harness.cli import main
from harness.hermes_mount.entry import tool_name
from hermes_support import SCRIPTS, StubModel, offline_config, requires_hermes, run_hermes

pytestmark = requires_hermes
DISCOVERY_SECONDS = 1
# Far past Hermes's own start-up plus the discovery timeout, even on a loaded two-core machine.
SLOW_START_SECONDS = 15


def delayed_body(folder: Path, body: Path, delay: float) -> Path:
    wrapper = folder / "delayed-body"
    wrapper.write_text(f"#!/bin/sh\nsleep {delay}\nexec {body} \"$@\"\n", encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


@pytest.mark.parametrize("delay, offered", [(0, True), (SLOW_START_SECONDS, False)], ids=["fast", "slow"])
def test_a_body_slower_than_the_discovery_timeout_is_not_offered_to_a_one_shot_chat(
        body_exe, tmp_path, delay, offered):
    home, root = tmp_path / "home", tmp_path / "hermes-root"
    home.mkdir()
    root.mkdir()
    wrapper = delayed_body(tmp_path, body_exe.absolute(), delay)
    script = json.loads((SCRIPTS / "turn_then_quote.json").read_text())
    with StubModel(script, tmp_path / "model") as model:
        (root / "config.yaml").write_text(offline_config(model.base_url), encoding="utf-8")
        assert main(["mount", "--hermes-home", str(root), "--body", str(wrapper), "--no-check",
                     "--discovery-timeout", str(DISCOVERY_SECONDS)]) == 0
        completed = run_hermes(["chat", "-Q", "-q", "Who sits at the head of the table?", "--source", "tool"],
                               home, root, tmp_path / "cwd")
        calls = model.agent_calls()
    assert calls, completed.stdout + completed.stderr
    tools = [tool["function"]["name"] for tool in calls[0]["body"].get("tools", [])]
    assert (tool_name("mafiabot") in tools) is offered, tools
    if not offered:
        assert f"Tool '{tool_name('mafiabot')}' does not exist" in completed.stdout
