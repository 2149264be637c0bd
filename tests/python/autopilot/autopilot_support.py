"""Helpers of the auto-pilot suites: running a plan in-process or as a command, reading what it left.

Every wait here is bounded by a named constant and event-driven (a FIFO's readiness, a child's exit).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from harness.autopilot import KernelSettings, parse_plan, run_plan
from harness.autopilot.config import SentinelConfig
from harness.autopilot.run import RunResult
from harness.dispatch.registry import Registry
from harness.ledger import Ledger, default_ledger_path

# A plan of a few fake children runs in well under a second; a loaded 2-core machine is slower.
COMMAND_BOUND_S = 60.0
FIFO_BOUND_S = 20.0


def run(project: Path, document: dict[str, Any], registry: Registry, sentinel: SentinelConfig | None = None,
        mode: str | None = None, band: str | None = None, environ: dict[str, str] | None = None,
        clock: Any = None, database: str | None = None) -> RunResult:
    plan = parse_plan(document, base_dir=project, mode=mode, band=band)
    extra = {"clock": clock} if clock is not None else {}
    settings = KernelSettings(project_root=project, ledger_path=default_ledger_path(project), registry=registry,
                              sentinel=sentinel or SentinelConfig(), database=database, **extra)
    return run_plan(plan, settings, environ=dict(os.environ) if environ is None else environ)


def plan(goal: str, *subtasks: Any, **fields: Any) -> dict[str, Any]:
    return {"goal": goal, "subtasks": list(subtasks), **fields}


def ledger(project: Path) -> list[dict[str, Any]]:
    return list(Ledger(default_ledger_path(project)).records())


def children(result: RunResult, **match: Any) -> list[dict[str, Any]]:
    return [c for c in result.envelope["children"] if all(c.get(k) == v for k, v in match.items())]


def rules(result: RunResult) -> list[str]:
    return [f["rule"] for f in result.envelope["rules_fired"]]


def write_yaml(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def command(*args: str, cwd: Path) -> tuple[int, dict[str, Any] | str, str]:
    """Run `python -m harness autopilot ...`; (exit code, parsed stdout when JSON, stderr)."""
    done = subprocess.run([sys.executable, "-m", "harness", "autopilot", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=COMMAND_BOUND_S, check=False)
    try:
        out: dict[str, Any] | str = json.loads(done.stdout)
    except json.JSONDecodeError:
        out = done.stdout
    return done.returncode, out, done.stderr


class LineReader:
    """Reads lines that many writers put on one FIFO; holds a write end itself, so it never sees EOF."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.keep = os.open(path, os.O_WRONLY)
        self.buffer = b""

    def lines(self, count: int, bound_s: float = FIFO_BOUND_S) -> list[str]:
        deadline = time.monotonic() + bound_s
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while self.buffer.count(b"\n") < count:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(int(left * 1000)):
                got = self.buffer.count(b"\n")
                raise AssertionError(f"{got} of {count} line(s) on {self.path} within {bound_s:g} s")
            self.buffer += os.read(self.fd, 4096)
        return self.buffer.decode().splitlines()

    def close(self) -> None:
        os.close(self.fd)
        os.close(self.keep)
