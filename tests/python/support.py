"""Helpers shared by the suites: raw message builders and the trace invariants of the contract."""

from __future__ import annotations

import importlib.util
import json
import resource
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from harness import body
from harness.client import BodyClient

STEP_COUNT = 23
PASS_COUNT = 8
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_LEGACY = "2025-11-25"
TRACE_KEYS = ["session", "turn", "energy", "passes_run", "steps", "route", "coherence", "output", "identity"]
CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpus"
# The checkout these suites run from, and the organ fixture it ships (the body's default).
REPO = Path(__file__).resolve().parents[2]
SHIPPED_ORGANS = REPO / body.SHIPPED_ORGANS


def turn_arguments(input: str = "hello", uid: str = "u", channel: str = "c", server: str = "s") -> dict[str, str]:
    return {"input": input, "uid": uid, "channel": channel, "server": server}


def raw_ping(id_raw: bytes) -> bytes:
    """A ping line whose id is spelled exactly as `id_raw`."""
    return b'{"jsonrpc":"2.0","id":' + id_raw + b',"method":"ping"}\n'


def ping_after(client: BodyClient, marker: str = "after") -> dict[str, Any]:
    """Send a ping with a string id and return the next message read (which must be its reply)."""
    client.send_raw(raw_ping(json.dumps(marker).encode()))
    return client.read_message(awaiting=f"the reply to ping {marker!r}")


def assert_answers_ping_next(client: BodyClient, marker: str = "after") -> None:
    reply = ping_after(client, marker)
    assert reply == {"jsonrpc": "2.0", "id": marker, "result": {}}, reply


def assert_compact(line: bytes) -> None:
    """No whitespace outside strings, no raw control bytes anywhere, valid UTF-8 JSON."""
    text = line.decode("utf-8")
    json.loads(text)
    in_string = escaped = False
    for position, ch in enumerate(text):
        if in_string:
            assert ord(ch) >= 0x20, f"raw control character at {position}"
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        else:
            assert ch not in " \t\r\n", f"whitespace outside strings at {position}: {text[:200]!r}"


def step_of_pass(pass_number: int) -> tuple[int, int]:
    """The two step indexes of pass k (1..8): a draw, then a reasoning step."""
    first = 3 + 2 * (pass_number - 1)
    return first, first + 1


def check_text_block(result: dict[str, Any]) -> None:
    """A turn's text block is its output, a blank line, then its structured result as JSON text. The body
    writes that copy separately, already quoted, so it is compared with structuredContent value for value."""
    [block] = result["content"]
    assert block["type"] == "text"
    output, _, serialized = block["text"].rpartition("\n\n")
    trace = result["structuredContent"]
    assert output == trace["output"]
    assert json.loads(serialized) == trace


def check_trace(trace: dict[str, Any]) -> None:
    """The shape the contract promises for every turn (L3 included)."""
    assert list(trace) == TRACE_KEYS
    steps = trace["steps"]
    assert [s["index"] for s in steps] == list(range(1, STEP_COUNT + 1))
    passes = trace["passes_run"]
    assert isinstance(passes, int) and 1 <= passes <= PASS_COUNT
    energy = trace["energy"]
    assert isinstance(energy, (int, float)) and 0.0 <= energy <= 1.0
    if energy == 1.0:
        assert passes == PASS_COUNT
    ran = {s["index"] for s in steps if s["status"] == "ran"}
    for step in steps:
        assert step["status"] in ("ran", "skipped")
        if step["status"] == "skipped":
            assert "detail" not in step, step
            assert list(step) == ["index", "name", "organ", "status"]
        else:
            assert list(step) == ["index", "name", "organ", "status", "detail"]
    for k in range(1, PASS_COUNT + 1):
        expected = k <= passes
        for index in step_of_pass(k):
            assert (index in ran) == expected, f"pass {k} (step {index}) with passes_run={passes}"
    for index in (1, 2, 19, 20, 21, 22, 23):
        assert index in ran, f"step {index} is not a pass and must always run"


def turn_fingerprint(trace: dict[str, Any]) -> str:
    """The trace as canonical JSON, for exact comparisons across bodies."""
    return json.dumps(trace, sort_keys=True, ensure_ascii=False)


def _load_corpus_file(name: str, file: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, CORPUS_DIR / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is being built
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_corpus() -> ModuleType:
    return _load_corpus_file("hostile_corpus", "hostile.py")


def load_worst_cases() -> ModuleType:
    """tests/corpus/worst_case.py: the adversarial turn inputs of issue 12 (shared with bench/)."""
    return _load_corpus_file("worst_case_corpus", "worst_case.py")


# A command given a file that reads without end (/dev/zero) fails fast under this cap instead of taking the
# machine's memory; the harness itself needs a few hundred MiB of address space.
HARNESS_ADDRESS_SPACE_BYTES = 2 << 30
HARNESS_BOUND_S = 20.0


def harness_bounded(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own, its address space capped and its time bounded: a read that waits
    forever fails the test after HARNESS_BOUND_S (the process killed), one without end fails at the cap."""
    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (HARNESS_ADDRESS_SPACE_BYTES, HARNESS_ADDRESS_SPACE_BYTES))
    try:
        return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=cwd,
                              timeout=HARNESS_BOUND_S, preexec_fn=capped)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"harness {' '.join(args)} did not end within {HARNESS_BOUND_S:g} s") from None
