"""The real Hermes Agent cancelled mid-run: SIGTERM of `delegate` while Hermes waits on a model that never answers.

The model endpoint is a loopback HTTP server that answers Hermes's start-up probes (GET) and never answers
a completion (POST), so Hermes is certainly mid-call when the command gets SIGTERM (the test waits for
that POST, not for time).
What hermes-agent 0.19.0 does then (seen here): it interrupts the agent, waits its 1.5 s grace, and dies
of SIGINT without printing `session_id:`; a session interrupted in its first model call has no row in
state.db yet, and it leaves two helper processes behind. So the run is ledgered `cancelled` with
Hermes's record when state.db holds one for it and otherwise an estimate marked as such, and the
supervisor's sweep must leave nothing running.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .delegation_support import PROCESS_BOUND_S, read_ledger_lines, wait_all_gone
from .test_real_hermes import HERMES, PROFILE_CONFIG

pytestmark = pytest.mark.skipif(not HERMES.exists(), reason=f"real Hermes not installed at {HERMES} (`make hermes`)")
# Hermes starting up and reaching its first model call takes a few seconds; on a loaded machine, more.
FIRST_CALL_BOUND_S = 60.0


class Silent(BaseHTTPRequestHandler):
    """Answers probes with an empty list; holds every completion until the test lets go."""

    posted = threading.Event()
    let_go = threading.Event()

    def do_GET(self) -> None:
        body = b'{"object": "list", "data": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        Silent.posted.set()
        Silent.let_go.wait(FIRST_CALL_BOUND_S)

    def log_message(self, *_args: object) -> None:
        pass


def test_sigterm_of_a_real_delegation_is_ledgered_cancelled_with_hermes_own_session(tmp_path: Path) -> None:
    hermes_root, project, home = tmp_path / "hermes", tmp_path / "project", tmp_path / "home"
    (hermes_root / "profiles" / "tester").mkdir(parents=True)
    (hermes_root / "profiles" / "tester" / "config.yaml").write_text(PROFILE_CONFIG)
    project.mkdir()
    home.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Silent)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    marker = f"MAFIABOT_CANCEL_TEST={tmp_path}"
    env = {k: v for k, v in os.environ.items() if k != "HERMES_AUTOBOT_DELEGATED"}
    env.update(HOME=str(home), HERMES_HOME=str(hermes_root), MINIMAX_API_KEY="dummy", MAFIABOT_HERMES=str(HERMES),
               MINIMAX_BASE_URL=f"http://127.0.0.1:{server.server_address[1]}/v1",
               MAFIABOT_PROJECT_ROOT=str(project), MAFIABOT_CANCEL_TEST=str(tmp_path))
    intent = tmp_path / "intent.json"
    intent.write_text(json.dumps({"intent": "Say hello.", "project_root": str(project),
                                  "payload": {"hermes_profile": "tester", "timeout_seconds": 120}}))
    cli = subprocess.Popen([sys.executable, "-m", "harness", "delegate", "--intent-file", str(intent), "--compact"],
                           cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert Silent.posted.wait(FIRST_CALL_BOUND_S), f"Hermes made no model call within {FIRST_CALL_BOUND_S:g} s"
        cli.send_signal(signal.SIGTERM)
        out, err = cli.communicate(timeout=PROCESS_BOUND_S * 2)
    finally:
        Silent.let_go.set()
        server.shutdown()
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 128 + signal.SIGTERM, err
    assert json.loads(out)["degraded_reason"] == "cancelled"
    assert wait_all_gone(marker) == []
    started, settled = read_ledger_lines(project)
    assert settled["started_record_id"] == started["record_id"] and settled["status"] == "cancelled"
    state_db = hermes_root / "profiles" / "tester" / "state.db"
    sessions = sqlite3.connect(f"file:{state_db}?mode=ro", uri=True).execute(
        "SELECT id FROM sessions").fetchall() if state_db.exists() else []
    if sessions:
        assert (settled["usage"]["source"], [settled["session_id"]]) == ("hermes_state_db", [sessions[0][0]])
    else:
        assert settled["usage"]["source"] == "estimate"
        assert settled["transport"]["warnings"][0].startswith("hermes_record_missing")
