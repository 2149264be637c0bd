"""Turn inputs built to cost the body the most per byte: the worst cases of issue 12, item 4.

Each case names the organ (or stage) it aims at, the session's earlier turns (what MoRAG
remembers) and the fixture it runs under, and builds an input of a given size. The bench
(`bench/worst_case.py`) reports the CPU of one such turn at 4 MB; the tests
(`tests/python/test_linear_turns.py`) hold the work of a turn at two sizes to a ratio.

Invariants:
- `Case.line(id, size)`, the turn of `Case.input(size)` (or of a short input among filler
  members of params or of the message itself, for `members`), is deterministic, compact JSON in UTF-8 and at most
  `size` bytes (what `line_bytes` counts), so any size up to the body's 4 MiB line cap is
  served, never refused.
- Every case runs under `fixture(largest=...)`: the shipped fixture, plus a 128-byte
  near-miss contains rule ahead of its own rules, and with `largest` the largest recall the
  fixture allows (16 turns of 1,024 bytes). The near-miss rule matches no input here.
- `Case.lighter()` changes only what the aimed-at organ compares against (less memory, a
  2-byte near-miss rule), never the input: the two cost the same per byte iff that organ's
  work per byte does not grow with it.
- A case's memory turns are short enough to be kept whole (excerpts are cut at 1,024 bytes).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FIXTURE = ROOT / "stubs" / "organs" / "default.json"

LARGEST_RECALL = {"organ": "F1", "recall_depth": 16, "excerpt_bytes": 1024}
NEAR_MISS_BYTES = 128
# The longest name the loader allows is 128 bytes; a rule's word is not a name, but 128 is
# what a fixture is likely to hold and already makes a naive search 128 comparisons a byte.


def near_miss_rule(length: int = NEAR_MISS_BYTES) -> dict:
    """A contains rule that a run of "a" almost matches everywhere: "aa...ab"."""
    return {"intent": "remember", "contains": "a" * (length - 1) + "b"}

KEY = ("worst", "case", "bench")
LINE_OVERHEAD = 512  # the envelope, the key and the arguments' names around the input


def fixture(largest: bool, near_miss_bytes: int = NEAR_MISS_BYTES) -> dict:
    """The fixture a case runs under (see the module's invariants)."""
    data = json.loads(DEFAULT_FIXTURE.read_text(encoding="utf-8"))
    data["intent"]["rules"].insert(0, near_miss_rule(near_miss_bytes))
    if largest:
        data["morag"] = dict(LARGEST_RECALL)
    return data


def write_fixture(directory: Path, largest: bool, near_miss_bytes: int = NEAR_MISS_BYTES) -> Path:
    path = directory / f"worst-case-{'largest' if largest else 'default'}-{near_miss_bytes}.json"
    path.write_text(json.dumps(fixture(largest, near_miss_bytes)), encoding="utf-8")
    return path


def turn_line(request_id: int, text: str, filler: int = 0, filler_in: str = "params") -> bytes:
    """A turn of `text`; `filler` more members in its params (or in the message, `filler_in`
    "message"), which the body reads past."""
    uid, channel, server = KEY
    params: dict = {"name": "turn", "arguments": {"input": text, "uid": uid,
                                                  "channel": channel, "server": server}}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    {"params": params, "message": message}[filler_in].update({f"m{number}": 0 for number in range(filler)})
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


MEMBER_BYTES = 12  # '"m123456":0,' at most, for the sizes served (up to 4 MiB)


def _repeat(unit: str, size: int, escaped_bytes: int) -> str:
    """`unit` repeated so that its JSON spelling takes at most `size` bytes of the line."""
    budget = max(0, size - LINE_OVERHEAD)
    return unit * (budget // escaped_bytes)


def _short_words(alphabet: str, length: int) -> Callable[[int], str]:
    def build(size: int) -> str:
        chooser = random.Random(12)
        count = max(0, size - LINE_OVERHEAD) // (length + 1)
        return " ".join("".join(chooser.choice(alphabet) for _ in range(length)) for _ in range(count))
    return build


@dataclass(frozen=True)
class Case:
    name: str
    target: str
    # what it aims at, and why it is a worst case there
    why: str
    largest: bool
    memory: tuple[str, ...]
    input: Callable[[int], str]
    # What the organ aimed at compares the input against, which a naive organ pays for once
    # per byte of input: "memory" (MoRAG's kept turns) or "rule" (the near-miss rule's word).
    # `lighter()` is the same case with far less of it.
    against: str | None = None
    # The size is spent on filler members around a short input instead of on the input: of
    # "params" or of the "message" itself
    members: str | None = None

    def line(self, request_id: int, size: int) -> bytes:
        if self.members:
            return turn_line(request_id, self.input(size), max(0, size - LINE_OVERHEAD) // MEMBER_BYTES,
                             self.members)
        return turn_line(request_id, self.input(size))

    def lighter(self) -> tuple[tuple[str, ...], int]:
        """(memory, near-miss rule bytes) of the same case with little to compare against."""
        if self.against == "memory":
            return tuple(text[:LIGHT_MEMORY_BYTES] for text in self.memory[-2:]), NEAR_MISS_BYTES
        if self.against == "rule":
            return self.memory, LIGHT_RULE_BYTES
        return self.memory, NEAR_MISS_BYTES


LIGHT_MEMORY_BYTES = 64   # the last two turns, 64 bytes of each: both kinds of turn kept
LIGHT_RULE_BYTES = 2      # "ab"


# Memory that shares no byte with the inputs of the word cases (they use a .. p)
UNRELATED_MEMORY = tuple(("zq" * 512)[:1000] for _ in range(16))
# Memory whose older turns hold every word of the deep-walk input and whose latest holds none:
# every word is walked to its end and none ends the search early
DEEP_MEMORY = tuple(["abcdefg " * 120] * 15 + ["zzzz " * 200])

CASES: tuple[Case, ...] = (
    Case("short words, nothing shared", "F1 recall",
         "the known case: every word compared against every remembered turn", False,
         UNRELATED_MEMORY[:3], _short_words("abcdefghijklmnop", 3), "memory"),
    Case("short words, nothing shared, largest recall", "F1 recall",
         "the same against 16 turns of 1,024 bytes", True,
         UNRELATED_MEMORY, _short_words("abcdefghijklmnop", 3), "memory"),
    Case("words found in older turns only", "F1 recall",
         "every word walked to its end through the index, none in the latest turn", True,
         DEEP_MEMORY, lambda size: _repeat("abcdefg ", size, 8), "memory"),
    Case("a run of 'a' against 'aaa...ab'", "C3 intender",
         "a naive search compares 127 bytes at every position", True,
         UNRELATED_MEMORY, lambda size: _repeat("a", size, 1), "rule"),
    Case("one word as long as the input", "F1 recall, C3",
         "one word longer than anything remembered", True,
         UNRELATED_MEMORY, lambda size: _repeat("x", size, 1)),
    Case("two-byte characters", "guard, reader, excerpts",
         "every byte non-ASCII: the UTF-8 decoder on every character", True,
         UNRELATED_MEMORY, lambda size: _repeat("\u00e9", size, 2)),
    Case("four-byte characters", "guard, reader, excerpts",
         "the longest UTF-8 sequences", True,
         UNRELATED_MEMORY, lambda size: _repeat("\U0001F600", size, 4)),
    Case("escapes", "reader",
         "quotes, backslashes and newlines: every byte escaped on the wire", True,
         UNRELATED_MEMORY, lambda size: _repeat('"\\\n', size, 6)),
    Case("blanks", "every word scan",
         "no word at all: the scans between words", True,
         UNRELATED_MEMORY, lambda size: _repeat(" ", size, 1)),
    Case("params of many members", "reader, argument checks",
         "every member looked up by name is looked for among all the others", True,
         UNRELATED_MEMORY, lambda size: "what is the moon?", members="params"),
    Case("a message of many members", "reader, envelope",
         "every member of the message compared with each of JSON-RPC's six names", True,
         UNRELATED_MEMORY, lambda size: "what is the moon?", members="message"),
)


def line_bytes(case: Case, size: int) -> int:
    return len(case.line(1000, size))


def _handshake() -> list[bytes]:
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                  "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                             "clientInfo": {"name": "worst-case", "version": "1"}}}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    return [json.dumps(m, separators=(",", ":")).encode() + b"\n" for m in (initialize, initialized)]


def requests(case: Case, size: int | None, memory: tuple[str, ...] | None = None) -> bytes:
    """A whole conversation: the handshake, the case's memory turns (or `memory`), then
    (unless `size` is None, the baseline) one turn of `case.input(size)`. One worst-case turn
    per conversation: a second would meet the first one's excerpt in memory, which is no
    longer the worst case."""
    kept = case.memory if memory is None else memory
    lines = _handshake() + [turn_line(1 + n, text) for n, text in enumerate(kept)]
    if size is not None:
        lines.append(case.line(1000, size))
    return b"".join(lines)
