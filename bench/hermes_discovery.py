"""How late a body may start and still be offered to the model by the real Hermes Agent 0.19.0.

Invariants:
- Each row is one one-shot `hermes chat -q` in a fresh temporary home (HOME and HERMES_HOME under
  one temporary folder), offline against the stub model (stubs/model_server.py on 127.0.0.1),
  with the body mounted behind a wrapper that sleeps DELAY seconds before it execs the body, and
  `mcp_discovery_timeout` set by `mount --discovery-timeout`.
- "offered" is read from the model's side: whether the first chat-completion request Hermes sent
  lists `mcp__mafiabot__turn` among its tools. The wall time is the whole `hermes chat` run.
- `python -m bench.hermes_discovery [--discovery S] DELAY...` prints one Markdown row per delay.
  It needs `.hermes-venv` (`make hermes`) and a built body; it takes ~15 s plus twice the delay
  per row. The figures it gave are in docs/hermes.md ("How late a server may start").
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))  # the stub model's runner is the tests' own

from harness.body import find_body  # noqa: E402
from harness.cli import main as harness_main  # noqa: E402
from harness.hermes_mount.entry import tool_name  # noqa: E402
from hermes_support import SCRIPTS, StubModel, offline_config, run_hermes  # noqa: E402


def measure(delay: float, discovery: float) -> tuple[bool, float]:
    """(whether the tool was offered, seconds the hermes run took)."""
    with tempfile.TemporaryDirectory(prefix="mafiabot-discovery-") as scratch:
        root = Path(scratch)
        home, hermes_home = root / "home", root / "hermes-home"
        home.mkdir()
        hermes_home.mkdir()
        wrapper = root / "delayed-body"
        wrapper.write_text(f"#!/bin/sh\nsleep {delay:g}\nexec {find_body().absolute()} \"$@\"\n", encoding="utf-8")
        wrapper.chmod(0o755)
        script = json.loads((SCRIPTS / "turn_then_quote.json").read_text(encoding="utf-8"))
        with StubModel(script, root / "model") as model:
            (hermes_home / "config.yaml").write_text(offline_config(model.base_url), encoding="utf-8")
            said = io.StringIO()
            with contextlib.redirect_stdout(said):
                mounted = harness_main(["mount", "--hermes-home", str(hermes_home), "--body", str(wrapper),
                                        "--no-check", "--discovery-timeout", f"{discovery:g}"])
            if mounted != 0:
                raise SystemExit(f"mount failed: {said.getvalue()}")
            started = time.monotonic()
            run_hermes(["chat", "-Q", "-q", "Who sits at the head of the table?", "--source", "tool"],
                       home, hermes_home, root / "cwd")
            took = time.monotonic() - started
            calls = model.agent_calls()
    offered = bool(calls) and tool_name("mafiabot") in [t["function"]["name"] for t in calls[0]["body"].get("tools", [])]
    return offered, took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hermes_discovery", description=__doc__.splitlines()[0])
    parser.add_argument("--discovery", type=float, default=1.0, help="mcp_discovery_timeout in seconds (default 1)")
    parser.add_argument("delays", nargs="+", type=float, help="seconds the body starts late")
    args = parser.parse_args(argv)
    rows = [(delay, *measure(delay, args.discovery)) for delay in args.delays]
    print("| body late by | mcp_discovery_timeout | offered to the model | hermes chat -q took |\n"
          "| --- | --- | --- | --- |")
    for delay, offered, took in rows:
        print(f"| {delay:g} s | {args.discovery:g} s | {'yes' if offered else 'no'} | {took:.1f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
