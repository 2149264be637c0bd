"""The real `hermes` executable: finding it, and reading what `hermes mcp test NAME` printed.

`hermes mcp test` exits 0 whether or not it connected, so its exit status means nothing; the
verdict is read from its output:
    ✓ Connected (88ms)
    ✓ Tools discovered: 1
        turn          Carry one user turn, ...
or `✗ Connection failed (7231ms): Connection closed`, or `✗ Server 'x' not found in config.`

Invariants:
- Hermes is found by `harness.hermes.locate.find_executable`, the order every command uses.
- Hermes runs with HERMES_HOME set to the home being checked (a profile is its own home), with
  colours off, from the caller's working directory, bounded by `mcp_test_timeout`.
- `parse_mcp_test` is pure: the same output always gives the same report.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from harness.hermes_mount.home import HermesHome

# Hermes spends ~3 s importing, then up to the entry's connect_timeout connecting, then on a
# failure ~7 s in its reconnect backoff; this is added to connect_timeout for the whole run.
HERMES_OVERHEAD_SECONDS = 30.0
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CONNECTED = re.compile(r"✓\s*Connected\s*\((\d+)\s*ms\)")
_DISCOVERED = re.compile(r"✓\s*Tools discovered:\s*(\d+)")
_FAILED = re.compile(r"✗\s*(.+)")
_TOOL_ROW = re.compile(r"^ {4}(\S+)(?:\s{2,}.*)?$")


@dataclass(frozen=True)
class McpTestReport:
    connected: bool
    connect_ms: int | None
    tools: tuple[str, ...]
    problem: str | None  # Hermes's own words when it did not connect
    output: str


def parse_mcp_test(output: str) -> McpTestReport:
    text = _ANSI.sub("", output)
    connected = _CONNECTED.search(text)
    if connected is None:
        failed = _FAILED.search(text)
        problem = failed.group(1).strip() if failed else "no verdict in its output"
        return McpTestReport(False, None, (), problem, output)
    tools: list[str] = []
    discovered = _DISCOVERED.search(text)
    if discovered is not None:
        # The rows follow a blank line and end at the next one (a traceback may come after).
        rows = text[discovered.end():].splitlines()[1:]
        while rows and not rows[0].strip():
            rows.pop(0)
        for line in rows:
            row = _TOOL_ROW.match(line)
            if row is None:
                break
            tools.append(row.group(1))
    return McpTestReport(True, int(connected.group(1)), tuple(tools), None, output)


def run_mcp_test(hermes: Path, home: HermesHome, name: str, connect_timeout: float) -> McpTestReport:
    env = dict(os.environ, HERMES_HOME=str(home.path), NO_COLOR="1", TERM="dumb")
    bound = connect_timeout + HERMES_OVERHEAD_SECONDS
    started = time.monotonic()
    try:
        completed = subprocess.run([str(hermes), "mcp", "test", name], env=env, capture_output=True,
                                   text=True, timeout=bound, stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        return McpTestReport(False, None, (), f"`hermes mcp test {name}` did not finish within {bound:g} s", "")
    except OSError as exc:
        return McpTestReport(False, None, (), f"cannot run {hermes}: {exc.strerror or exc}", "")
    report = parse_mcp_test(completed.stdout + completed.stderr)
    if not report.connected and report.problem == "no verdict in its output":
        tail = " ".join((completed.stdout + completed.stderr).split())[-300:]
        return McpTestReport(False, None, (), f"no verdict after {time.monotonic() - started:.1f} s "
                                              f"(exit {completed.returncode}): {tail}", report.output)
    return report
