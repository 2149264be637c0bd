"""A scriptable stand-in for the `hermes` executable, for the delegation tests.

It reads the command line the way hermes-agent 0.19.0 does (`--profile NAME` anywhere, `--flag=value`
elements, `chat --quiet --query=…` or `--oneshot=…`), appends one JSON line per invocation to
`$FAKE_HERMES_LOG` (under flock, so the line number is the invocation number), then plays step
N of the scenario in `$FAKE_HERMES_SCENARIO` (the last step repeats). It writes Hermes's accounting
as Hermes does: a row in `<home>/state.db` plus `session_id:` on stderr in chat mode, the usage
file in one-shot mode.

A scenario is a list of steps (or one step), played by invocation number; or, for runs whose order
is not fixed (parallel children), `{"by_prompt": [{"match": TEXT, "steps": [...]}, ...], "steps": [...]}`:
the first entry whose `match` occurs in the prompt plays its steps by how many earlier invocations
matched it; a prompt matching none plays `steps` by invocation number.

Step keys (all optional): stdout, stderr, exit, record ("ok" | "failed" | "none"), usage {input,
output, cost}, routes [[provider, model], ...] (who answered; default: what was asked for),
huge (bytes of stdout), hang (spawn two grandchildren, one in its own session, write their pids
to `pids_file`, then block, or go on to the gate when there is one),
gate {started, release} (FIFOs: announce, then block until released),
huge_stderr (bytes of stderr), ignore_term (ignore SIGTERM, so only the supervisor's sweep stops it),
nested (run `python -m harness delegate --intent-file <nested>` and answer with its stdout),
reenter (run `python -m harness autopilot run <plan> --compact`, the child re-entering auto-pilot as a
real process, and answer with its stdout), block (wait until killed), work_s (simulated work: the
bench's stand-in for a model's latency), concurrency (a JSON file {"now", "max"} counting the fakes
running at once, under flock, so a test can read the highest concurrency afterwards), swap_spools
(replace the files its stdout and stderr write to with FIFOs at their paths before answering, as an
agent with a terminal tool could).

SIGTERM is handled as hermes-agent 0.19.0's `chat -q` handles it: the run is interrupted, its session
is recorded (state.db row, or the usage file in one-shot mode, with the step's usage), `session_id:` is
printed on stderr, and the exit code is 130. A run killed before it logged its invocation spent nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT, billing_provider TEXT,
  input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
  cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, estimated_cost_usd REAL,
  actual_cost_usd REAL, cost_status TEXT, api_call_count INTEGER DEFAULT 0, title TEXT, started_at REAL);
CREATE TABLE IF NOT EXISTS session_model_usage (session_id TEXT, model TEXT, billing_provider TEXT,
  task TEXT DEFAULT '', api_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
  output_tokens INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT,
  content TEXT);
"""


def parse_argv(argv: list[str]) -> dict[str, Any]:
    parsed: dict[str, Any] = {"profile": None, "mode": None, "prompt": None, "flags": {}}
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in ("--profile", "-p"):
            parsed["profile"] = argv[index + 1]
            index += 2
            continue
        if arg == "chat":
            parsed["mode"] = "chat"
        elif arg.startswith("--query="):
            parsed["prompt"] = arg[len("--query="):]
        elif arg.startswith("--oneshot="):
            parsed["mode"], parsed["prompt"] = "oneshot", arg[len("--oneshot="):]
        elif arg.startswith("--") and "=" in arg:
            name, value = arg[2:].split("=", 1)
            parsed["flags"][name] = value
        else:
            parsed["flags"][arg.lstrip("-")] = True
        index += 1
    return parsed


def log_invocation(parsed: dict[str, Any], argv: list[str]) -> list[str]:
    """Append this call to the log; returns the prompts of the calls that came before it."""
    log = Path(os.environ["FAKE_HERMES_LOG"])
    entry = {"argv": argv, "cwd": os.getcwd(), "pid": os.getpid(), **parsed,
             "env": {k: os.environ.get(k) for k in ("HERMES_HOME", "HERMES_AUTOBOT_DELEGATED", "FAKE_MARK")},
             "autopilot_dna": os.environ.get("MAFIABOT_AUTOPILOT_DNA")}
    fd = os.open(log, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        earlier = os.pread(fd, os.fstat(fd).st_size, 0).decode().splitlines()
        os.write(fd, (json.dumps(entry) + "\n").encode())
    finally:
        os.close(fd)
    return [json.loads(line).get("prompt") or "" for line in earlier]


def load_step(prompt: str, earlier: list[str]) -> dict[str, Any]:
    scenario = json.loads(Path(os.environ["FAKE_HERMES_SCENARIO"]).read_text())
    if isinstance(scenario, dict) and "by_prompt" in scenario:
        for route in scenario["by_prompt"]:
            if route["match"] in prompt:
                return _nth(route["steps"], sum(route["match"] in p for p in earlier))
        return _nth(scenario.get("steps") or [{}], len(earlier))
    return _nth(scenario if isinstance(scenario, list) else [scenario], len(earlier))


def _nth(steps: list[dict[str, Any]], number: int) -> dict[str, Any]:
    return steps[min(number, len(steps) - 1)]


def home_of(profile: str | None) -> Path:
    root = Path(os.environ["HERMES_HOME"])
    return root if profile in (None, "default") else root / "profiles" / profile


def write_state_db(home: Path, session_id: str, step: dict[str, Any], routes: list[list[str]], answer: str,
                   prompt: str) -> None:
    usage = step.get("usage", {})
    failed = step.get("record") == "failed"
    calls = 0 if failed else 1
    db = sqlite3.connect(home / "state.db")
    with db:
        db.executescript(SCHEMA)
        first = routes[0] if routes else [None, None]
        db.execute("INSERT INTO sessions (id, source, model, billing_provider, input_tokens, output_tokens,"
                   " estimated_cost_usd, cost_status, api_call_count, started_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (session_id, "tool", first[1], None if failed else first[0], 0 if failed else usage.get("input", 100),
                    0 if failed else usage.get("output", 20), usage.get("cost"),
                    "estimated" if usage.get("cost") is not None else "unknown", calls, time.time()))
        if not failed:
            for provider, model in routes:
                db.execute("INSERT INTO session_model_usage (session_id, model, billing_provider, api_call_count,"
                           " input_tokens, output_tokens) VALUES (?,?,?,?,?,?)",
                           (session_id, model, provider, 1, usage.get("input", 100), usage.get("output", 20)))
        db.execute("INSERT INTO messages (session_id, role, content) VALUES (?,?,?)", (session_id, "user", prompt))
        if not failed:
            db.execute("INSERT INTO messages (session_id, role, content) VALUES (?,?,?)",
                       (session_id, "assistant", answer))
    db.close()


def write_usage_file(path: Path, step: dict[str, Any], routes: list[list[str]], session_id: str) -> None:
    usage = step.get("usage", {})
    failed = step.get("record") == "failed"
    first = routes[0] if routes else [None, None]
    report = {"estimated_cost_usd": None if failed else usage.get("cost", 0.0), "cost_status": "unknown",
              "input_tokens": None if failed else usage.get("input", 100),
              "output_tokens": None if failed else usage.get("output", 20), "api_calls": 1,
              "model": None if failed else first[1], "provider": None if failed else first[0],
              "session_id": None if failed else session_id, "completed": not failed, "failed": failed}
    path.write_text(json.dumps(report))


def hang(step: dict[str, Any]) -> None:
    blocker = [sys.executable, "-c", "import signal; signal.pause()"]
    same_group = subprocess.Popen(blocker)
    own_session = subprocess.Popen(blocker, start_new_session=True)
    Path(step["pids_file"]).write_text(json.dumps([os.getpid(), same_group.pid, own_session.pid]))
    if "gate" not in step:
        signal.pause()


def gate(step: dict[str, Any]) -> None:
    """Open the release FIFO first (so the test can always write to it), announce, then wait for it."""
    release = os.open(step["gate"]["release"], os.O_RDONLY | os.O_NONBLOCK)
    with open(step["gate"]["started"], "w") as started:
        started.write("started\n")
    poller = select.poll()
    poller.register(release, select.POLLIN)
    poller.poll()
    os.close(release)


def nested_answer(step: dict[str, Any]) -> str:
    result = subprocess.run([sys.executable, "-m", "harness", "delegate", "--intent-file", step["nested"],
                             "--compact"], capture_output=True, text=True, timeout=60, check=False)
    return result.stdout.strip() or f"(nested exited {result.returncode}: {result.stderr.strip()})"


def reentered_answer(step: dict[str, Any]) -> str:
    result = subprocess.run([sys.executable, "-m", "harness", "autopilot", "run", step["reenter"], "--compact"],
                            capture_output=True, text=True, timeout=120, check=False)
    return result.stdout.strip() or f"(autopilot exited {result.returncode}: {result.stderr.strip()})"


def count_running(path: str, delta: int) -> None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        raw = os.pread(fd, 4096, 0)
        state = json.loads(raw) if raw else {"now": 0, "max": 0}
        state["now"] += delta
        state["max"] = max(state["max"], state["now"])
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(state).encode(), 0)
    finally:
        os.close(fd)


def _interrupted(_signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt


def record_run(parsed: dict[str, Any], step: dict[str, Any], routes: list[list[str]], answer: str,
               session_id: str) -> None:
    if step.get("record", "ok") == "none":
        return
    if parsed["mode"] == "oneshot":
        if "usage-file" in parsed["flags"]:
            write_usage_file(Path(parsed["flags"]["usage-file"]), step, routes, session_id)
    else:
        write_state_db(home_of(parsed["profile"]), session_id, step, routes, answer, parsed["prompt"] or "")


def main(argv: list[str]) -> int:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # no interruption before the invocation is logged
    parsed = parse_argv(argv)
    step = load_step(parsed["prompt"] or "", log_invocation(parsed, argv))
    signal.signal(signal.SIGTERM, signal.SIG_IGN if step.get("ignore_term") else _interrupted)
    if "concurrency" not in step:
        return play(parsed, step)
    count_running(step["concurrency"], +1)
    try:
        return play(parsed, step)
    finally:
        count_running(step["concurrency"], -1)


def play(parsed: dict[str, Any], step: dict[str, Any]) -> int:
    home = home_of(parsed["profile"])
    if not home.is_dir():
        print(f"Error: Profile '{parsed['profile']}' does not exist. Create it with: hermes profile create "
              f"{parsed['profile']}", file=sys.stderr)
        return 1
    flags = parsed["flags"]
    routes = step.get("routes") or [[flags.get("provider", "minimax"), flags.get("model", "MiniMax-M3")]]
    session_id = f"fake_{os.getpid()}_{time.monotonic_ns()}"
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        if "hang" in step:
            hang(step)
        if "gate" in step:
            gate(step)
        if step.get("block"):
            signal.pause()
        if "work_s" in step:
            time.sleep(step["work_s"])
    except KeyboardInterrupt:
        record_run(parsed, step, routes, "", session_id)
        if parsed["mode"] == "chat":
            sys.stderr.write(f"\nsession_id: {session_id}\n")
        return 130
    if "nested" in step:
        answer = nested_answer(step)
    elif "reenter" in step:
        answer = reentered_answer(step)
    else:
        answer = step.get("stdout", "fake answer")
    record_run(parsed, step, routes, answer, session_id)
    if step.get("swap_spools"):
        for fd in (1, 2):
            spool = os.readlink(f"/proc/self/fd/{fd}")
            os.unlink(spool)
            os.mkfifo(spool)
    if "huge_stderr" in step:
        chunk = b"e" * 65536
        for _ in range(step["huge_stderr"] // len(chunk)):
            sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.flush()
    if "huge" in step:
        chunk = b"x" * 65536
        for _ in range(step["huge"] // len(chunk)):
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
    else:
        sys.stdout.write(answer + ("\n" if answer else ""))
    sys.stderr.write(step.get("stderr", ""))
    if parsed["mode"] == "chat" and step.get("record", "ok") != "none":
        sys.stderr.write(f"\nsession_id: {session_id}\n")
    return step.get("exit", 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
