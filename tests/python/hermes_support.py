"""Helpers for the suites that run the stub model server and the real Hermes Agent.

Invariants:
- The stub model server runs as its own process (stubs/model_server.py, standard library only),
  bound to 127.0.0.1, and is always stopped (SIGTERM, then SIGKILL) when its context ends.
- Waiting for it to listen is a bounded read of its "listening on" line, never a sleep.
- Real Hermes always runs with HOME and HERMES_HOME inside the test's tmp_path, from a temporary
  working directory (no AGENTS.md is picked up), bounded by HERMES_RUN_TIMEOUT.
- A test that needs Hermes skips, saying why, only when .hermes-venv/bin/hermes is absent.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from harness.cli import main

REPO = Path(__file__).resolve().parents[2]
MODEL_SERVER = REPO / "stubs" / "model_server.py"
SCRIPTS = REPO / "stubs" / "scripts"
HERMES = REPO / ".hermes-venv" / "bin" / "hermes"
# The stub imports only the standard library: it listens within a few hundred ms even on a
# loaded two-core machine. Both bounds only stop a hang, so they leave room for a machine at load 10+.
STUB_START_TIMEOUT = 30.0
STUB_STOP_TIMEOUT = 15.0
# One hermes run costs ~3 s of imports plus the turn; 120 s only matters when something hangs.
HERMES_RUN_TIMEOUT = 120.0

# Real Hermes costs seconds a run: these tests are `slow` (outside `pytest -m "not slow"`, in `make test`).
requires_hermes = [pytest.mark.hermes, pytest.mark.slow, pytest.mark.skipif(
    not HERMES.exists(),
    reason=f"the real Hermes Agent is not installed at {HERMES} (run `make deps`, which creates .hermes-venv)")]


class StubModel:
    """The stub model server as a context manager: `with StubModel(script, tmp_path) as model:`."""

    def __init__(self, script: Path | dict[str, Any], workdir: Path, *extra: str) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        if isinstance(script, dict):
            path = workdir / "script.json"
            path.write_text(json.dumps(script), encoding="utf-8")
            script = path
        self.script = script
        self.port_file = workdir / "model.port"
        self.log = workdir / "model-requests.jsonl"
        self.argv = [sys.executable, str(MODEL_SERVER), "--script", str(script), "--port-file",
                     str(self.port_file), "--log", str(self.log), *extra]
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    def __enter__(self) -> StubModel:
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = read_line_within(self.proc, STUB_START_TIMEOUT, "the stub model's 'listening on' line")
        assert line.startswith(b"listening on http://127.0.0.1:"), line
        self.port = int(line.rsplit(b":", 1)[1].split(b"/")[0])
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STUB_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(STUB_STOP_TIMEOUT)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        return self.proc.returncode

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines()]

    def agent_calls(self) -> list[dict[str, Any]]:
        """The chat-completion requests that consumed the script (streaming ones)."""
        return [r for r in self.requests() if r["path"].endswith("/chat/completions")
                and isinstance(r["body"], dict) and r["body"].get("stream")]


def read_line_within(proc: subprocess.Popen[bytes], bound: float, what: str) -> bytes:
    """One line of the process's stdout, or a test failure naming `what` after `bound` seconds."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + bound
    data = b""
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(remaining, 0))
        if not ready:
            pytest.fail(f"timed out after {bound:g} s waiting for {what}")
        chunk = os.read(fd, 1)
        if not chunk:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            pytest.fail(f"the process exited ({proc.wait()}) before {what}: {err}")
        data += chunk
    return data.rstrip(b"\n")


def offline_config(base_url: str) -> str:
    """The config.yaml head that makes Hermes use the stub model and nothing online.

    `environment_probe: false`: Hermes's toolchain probe starts python3 and pip (through whatever shims the
    PATH has) a few times a chat, for a system-prompt line only when the toolchain looks broken; every test
    here would pay it for a line no stub model's script depends on (docs/testing.md, what the suite costs)."""
    return (f"model: {{provider: custom, default: stub-model, base_url: {base_url}, api_key: dummy-key}}\n"
            "agent: {api_max_retries: 0, environment_probe: false}\n"
            "security: {tirith_enabled: false}\n")


def hermes_env(home: Path, hermes_home: Path) -> dict[str, str]:
    env = dict(os.environ, HOME=str(home), HERMES_HOME=str(hermes_home), NO_COLOR="1")
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
        env.pop(var, None)
    return env


def run_hermes(args: list[str], home: Path, hermes_home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(HERMES), *args], env=hermes_env(home, hermes_home), cwd=cwd, capture_output=True,
                          text=True, timeout=HERMES_RUN_TIMEOUT, stdin=subprocess.DEVNULL)


@pytest.fixture
def project_hermes(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The checkout's real Hermes, put back where the locator looks (the autouse fixture hides it), for
    tests that run commands which find Hermes themselves (doctor)."""
    from conftest import REAL_PROJECT_HERMES
    from harness.hermes import locate
    monkeypatch.setattr(locate, "PROJECT_HERMES", REAL_PROJECT_HERMES)
    return HERMES


# --- Level1: what the real-Hermes suites of the session key share (the CLI's and the gateway's) ---------------


def chat_in_profile(profile: str, home: Path, root: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """One `hermes chat -q` in the profile, with only the body's tools."""
    return run_hermes(["-p", profile, "chat", "-Q", "-q", "What do you remember?", "-t", "mafiabot",
                       "--source", "tool"], home, root, cwd)


def tool_results(calls: list[dict]) -> list[dict]:
    """The structured traces the body returned, as Hermes handed them to the model, in order."""
    traces = []
    for call in calls:
        messages = call["body"]["messages"]
        if messages and messages[-1].get("role") == "tool":  # the call that follows a tool result
            content = messages[-1]["content"]
            text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            # Hermes 0.19.0 hands the model an <untrusted_tool_result> notice, then {"result": <the body's text
            # block>}: the output, a blank line, the trace.
            block = json.JSONDecoder().raw_decode(text[text.index('{"result"'):])[0]["result"]
            traces.append(json.loads(block.split("\n\n", 1)[1]))
    return traces


def hermes_sessions(profile_home: Path) -> list[str]:
    """The ids of the home's Hermes sessions, oldest first."""
    with sqlite3.connect(profile_home / "state.db") as db:
        return [row[0] for row in db.execute("SELECT id FROM sessions ORDER BY started_at")]


def mount_offline(root: Path, profile: str, base_url: str) -> Path:
    """The profile's home under `root`, offline against the stub model at `base_url`, with the body mounted."""
    profile_home = root / "profiles" / profile
    profile_home.mkdir(parents=True)
    (profile_home / "config.yaml").write_text(offline_config(base_url), encoding="utf-8")
    assert main(["mount", "--hermes-home", str(root), "--profile", profile, "--discovery-timeout", "30"]) == 0
    return profile_home
