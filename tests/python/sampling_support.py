"""A scripted MCP client for the sampling body, on raw pipes: what the official SDK cannot send.

`run_turn` sends one `tools/call` of `turn` and then reads every message the body writes until the
turn's response (or, for a cancelled turn, until the ping sent after it is answered). Each
`sampling/createMessage` request is handed to a script, which returns the raw lines to send back
(the answer, something hostile, or nothing at all). Every wait is bounded by the harness client's
request timeout; nothing sleeps.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.client import BodyClient, encode_message

SAMPLING = "sampling/createMessage"
SAMPLING_ARGS = ("--cognition", "sampling")
SAMPLING_CAPABILITY = {"sampling": {}}
STATUSES = {"answered", "failed", "timed_out", "cancelled"}
TURN_ID = 4242
CALL_KEYS = ["step", "thinker", "status", "model", "tokens", "latency_ms", "error"]

# A script: given the sampling request and its rank in the turn (1 = the first), the lines to send.
Script = Callable[[dict[str, Any], int], list[bytes]]


def text_result(request_id: Any, text: str, model: str = "scripted-model") -> bytes:
    return encode_message({"jsonrpc": "2.0", "id": request_id, "result": {
        "role": "assistant", "content": {"type": "text", "text": text}, "model": model, "stopReason": "endTurn"}})


def reply_for(rank: int) -> str:
    return f"scripted thought number {rank}"


def answer_all(request: dict[str, Any], rank: int) -> list[bytes]:
    return [text_result(request["id"], reply_for(rank))]


@dataclass
class Turn:
    response: dict[str, Any] | None
    requests: list[dict[str, Any]] = field(default_factory=list)
    others: list[dict[str, Any]] = field(default_factory=list)
    # Every message the body wrote that is neither the turn's response nor a sampling request, in order

    @property
    def trace(self) -> dict[str, Any]:
        assert self.response is not None and "result" in self.response, self.response
        structured: dict[str, Any] = self.response["result"]["structuredContent"]
        return structured

    @property
    def cognition(self) -> dict[str, Any]:
        account: dict[str, Any] = self.trace["cognition"]
        return account

    def statuses(self) -> list[str]:
        return [call["status"] for call in self.cognition["calls"]]


def start_sampling_body(spawn_body: Callable[..., BodyClient], *extra: str,
                        capabilities: dict[str, Any] | None = None, **options: Any) -> BodyClient:
    client = spawn_body(no_soul=True, extra_args=(*SAMPLING_ARGS, *extra), **options)
    client.initialize(capabilities=SAMPLING_CAPABILITY if capabilities is None else capabilities)
    return client


def turn_request(input_text: str = "who sits at the head of the table?", uid: str = "u",
                 request_id: Any = TURN_ID, params: dict[str, Any] | None = None) -> bytes:
    call = {"name": "turn", "arguments": {"input": input_text, "uid": uid, "channel": "c", "server": "s"}}
    call.update(params or {})
    return encode_message({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call})


def run_turn(client: BodyClient, script: Script = answer_all, *, request: bytes | None = None,
             request_id: Any = TURN_ID, until_id: Any = None) -> Turn:
    """One turn; reads until the message whose id is `until_id` (default: the turn's own)."""
    client.send_raw(request if request is not None else turn_request(request_id=request_id))
    awaited = request_id if until_id is None else until_id
    turn = Turn(response=None)
    while True:
        message = client.read_message(awaiting=f"the message with id {awaited!r}")
        if message.get("method") == SAMPLING and "id" in message:
            turn.requests.append(message)
            for line in script(message, len(turn.requests)):
                client.send_raw(line)
        elif "method" not in message and message.get("id") == request_id:
            turn.response = message
            if awaited == request_id:
                return turn
        else:
            turn.others.append(message)
            if "method" not in message and message.get("id") == awaited:
                return turn


def prompt_of(request: dict[str, Any]) -> str:
    text: str = request["params"]["messages"][0]["content"]["text"]
    return text


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
