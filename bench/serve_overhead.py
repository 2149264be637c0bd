"""Benchmark (not a test): what `mafiabot-harness serve` adds to one delegation over the command line's path.

    .venv/bin/python bench/serve_overhead.py [--repeat 40]

With the test suite's fake `hermes` (it answers at once, so the figures are the harness's, not a model's),
in a temporary project and Hermes home, alternating the two paths `--repeat` times each:
- `delegate()` in this process: what `mafiabot-harness delegate` runs once its interpreter is up (the
  intent, the lock, the journal, the supervised fake, the ledger);
- `autobot_delegate` through the official SDK client over stdio to one `serve` process: the same
  delegation plus the JSON-RPC round trip, the job's thread and its two atomic job-file writes.
Prints both medians and the median of the per-pair differences (what serve adds), and, for scale, the
median of a whole `mafiabot-harness delegate` process (its interpreter start included).

Then (alone with `--waits-only`) the latency of `delegation_status` and `delegation_cancel` on a job
that `--waits` (default 100) `delegation_result` calls are waiting on: a host that fans out waits
must still see and stop its job at once.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402 - after the checkout joins sys.path

FAKE = REPO / "tests" / "python" / "delegation" / "fake_hermes.py"


def prepare(root: Path) -> dict[str, str]:
    home, project = root / "hermes", root / "project"
    (home / "profiles" / "tester").mkdir(parents=True)
    (home / "profiles" / "tester" / "config.yaml").write_text("agent: {api_max_retries: 0}\n")
    (home / "memories").mkdir()
    project.mkdir()
    fake = root / "bin" / "hermes"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    fake.chmod(0o755)
    (root / "scenario.json").write_text(json.dumps([{}]))
    return {"HERMES_HOME": str(home), "MAFIABOT_HERMES": str(fake), "MAFIABOT_PROJECT_ROOT": str(project),
            "FAKE_HERMES_SCENARIO": str(root / "scenario.json"), "FAKE_HERMES_LOG": str(root / "calls.jsonl")}


def intent(project: str) -> dict[str, object]:
    return {"intent": "Summarise the notes.", "project_root": project, "payload": {"hermes_profile": "tester"}}


async def measure(repeat: int, env: dict[str, str]) -> tuple[list[float], list[float]]:
    from harness.autobot import delegate

    document = intent(env["MAFIABOT_PROJECT_ROOT"])
    direct, served = [], []
    params = StdioServerParameters(command=sys.executable, args=["-m", "harness", "serve"], env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("autobot_delegate", {"intent": document})  # warm both paths once
        delegate(document)
        for _ in range(repeat):
            t0 = time.perf_counter()
            envelope = delegate(document)
            direct.append((time.perf_counter() - t0) * 1000)
            assert envelope.status == "ok", envelope.to_dict()
            t0 = time.perf_counter()
            result = await session.call_tool("autobot_delegate", {"intent": document})
            served.append((time.perf_counter() - t0) * 1000)
            assert result.structured_content["status"] == "ok", result.content
    return direct, served


async def waits_latency(waits: int, env: dict[str, str]) -> tuple[float, float]:
    """Milliseconds of one `delegation_status`, then one `delegation_cancel`, with `waits` waits outstanding."""
    scenario = Path(env["FAKE_HERMES_SCENARIO"])
    kept = scenario.read_text()
    scenario.write_text(json.dumps([{"hang": True, "pids_file": str(scenario.with_name("pids.json"))}]))
    params = StdioServerParameters(command=sys.executable, args=["-m", "harness", "serve"], env=dict(os.environ))
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            handle = await session.call_tool("autobot_delegate", {"intent": intent(env["MAFIABOT_PROJECT_ROOT"]),
                                                                  "wait_seconds": 0})
            job_id = handle.structured_content["job_id"]
            async with anyio.create_task_group() as group:
                for _ in range(waits):
                    group.start_soon(session.call_tool, "delegation_result", {"job_id": job_id, "wait_seconds": 45})
                await anyio.sleep(1.0)  # every wait has reached the server (this is a bench, not a test)
                t0 = time.perf_counter()
                await session.call_tool("delegation_status", {"job_id": job_id})
                status_ms = (time.perf_counter() - t0) * 1000
                t0 = time.perf_counter()
                cancelled = await session.call_tool("delegation_cancel", {"job_id": job_id})
                cancel_ms = (time.perf_counter() - t0) * 1000
                assert cancelled.structured_content["degraded_reason"] == "cancelled", cancelled.content
    finally:
        scenario.write_text(kept)
    return status_ms, cancel_ms


def cli_runs(repeat: int, env: dict[str, str], root: Path) -> list[float]:
    path = root / "intent.json"
    path.write_text(json.dumps(intent(env["MAFIABOT_PROJECT_ROOT"])))
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "harness", "delegate", "--intent-file", str(path), "--compact"],
                       check=True, capture_output=True, timeout=60)
        samples.append((time.perf_counter() - t0) * 1000)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--waits", type=int, default=100)
    parser.add_argument("--waits-only", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        env = prepare(root)
        os.environ.update(env)
        os.environ["HOME"] = str(root)
        status_ms, cancel_ms = anyio.run(waits_latency, args.waits, env)
        print(f"delegation_status with {args.waits} waits outstanding  {status_ms:8.1f} ms")
        print(f"delegation_cancel with {args.waits} waits outstanding  {cancel_ms:8.1f} ms  (the run's settling "
              f"included)")
        if args.waits_only:
            return 0
        direct, served = anyio.run(measure, args.repeat, env)
        cli = cli_runs(max(5, args.repeat // 4), env, root)
    added = [s - d for d, s in zip(direct, served, strict=True)]
    print(f"delegate() in process   median {statistics.median(direct):7.2f} ms")
    print(f"serve autobot_delegate  median {statistics.median(served):7.2f} ms")
    print(f"serve adds per call     median {statistics.median(added):7.2f} ms  (of {len(added)} pairs)")
    print(f"CLI delegate process    median {statistics.median(cli):7.2f} ms  (interpreter start included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
