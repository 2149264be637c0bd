"""The real `hermes` executable: finding it, reading what `hermes mcp test NAME` printed, and asking Hermes's
own plugin loader whether a home's plugins load (`probe_plugin`, run by the interpreter of the `hermes` script).

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

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


# Run by Hermes's own interpreter: Hermes's plugin loader, then its tool_request middleware chain on one call.
PLUGIN_PROBE = """
import json, sys
try:
    from hermes_cli.middleware import apply_tool_request_middleware
    from hermes_cli.plugins import get_plugin_manager
except ImportError:
    print(json.dumps({"hermes": False}))
    sys.exit(0)
manager = get_plugin_manager()
manager.discover_and_load()
found = [p for p in manager.list_plugins() if p.get("key") == sys.argv[1]]
done = apply_tool_request_middleware(sys.argv[2], json.loads(sys.argv[3]), session_id=sys.argv[4])
print(json.dumps({"plugin": found[0] if found else None, "args": done.payload}))
"""
# Hermes's imports take ~0.5 s; this only stops a hang.
PLUGIN_PROBE_TIMEOUT = 60.0
PROBE_SESSION = "mafiabot-doctor-probe"


@dataclass(frozen=True)
class PluginProbe:
    plugin: dict[str, Any] | None  # Hermes's own list_plugins() row for it; None when Hermes did not find it
    args: dict[str, Any]  # a probe call's arguments after Hermes's middleware chain
    problem: str | None = None  # why the probe could not run
    hermes: bool = True  # False: the interpreter has no Hermes to ask (a stand-in `hermes` script)


def hermes_python(hermes: Path) -> Path | None:
    """The Python the `hermes` script runs under (its #! line), where that is one."""
    try:
        with hermes.open("rb") as script:
            first = script.readline(4096)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    interpreter = Path(first[2:].decode(errors="replace").strip().split(" ")[0])
    # A pip-installed `hermes` is a Python console script; anything else (a wrapper) has no loader to ask.
    return interpreter if interpreter.name.startswith("python") and interpreter.is_file() else None


def probe_plugin(python: Path, home: HermesHome, plugin: str, tool: str, args: dict[str, Any]) -> PluginProbe:
    """Load `home`'s plugins with Hermes's own loader and pass one call of `tool` through its middleware."""
    env = {"HOME": str(home.path), "HERMES_HOME": str(home.path), "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1",
           "PATH": os.environ.get("PATH", "")}
    argv = [str(python), "-c", PLUGIN_PROBE, plugin, tool, json.dumps(args), PROBE_SESSION]
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=PLUGIN_PROBE_TIMEOUT,
                              stdin=subprocess.DEVNULL, check=False, cwd=home.path)
    except subprocess.TimeoutExpired:
        return PluginProbe(None, {}, f"Hermes's plugin loader did not finish within {PLUGIN_PROBE_TIMEOUT:g} s")
    except OSError as exc:
        return PluginProbe(None, {}, f"cannot run {python}: {exc.strerror or exc}")
    last = done.stdout.strip().splitlines()[-1:] or [""]
    try:
        seen = json.loads(last[0])
    except ValueError:
        tail = " ".join(done.stderr.split())[-300:]
        return PluginProbe(None, {}, f"Hermes's plugin loader exited {done.returncode} without an answer: {tail}")
    return PluginProbe(seen.get("plugin"), seen.get("args") or {}, hermes=seen.get("hermes", True) is not False)
