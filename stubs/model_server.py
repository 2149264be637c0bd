#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (see docs/stub-model.md).

It lets the real Hermes Agent run fully offline: agent calls (`"stream": true`) are answered from
a script, one reply per call, as SSE; Hermes's own auxiliary calls (not streaming, with one of
Hermes's own prompts, such as the title's) get a short plain JSON completion; every other call
that does not stream is a sampling call (Hermes's SamplingHandler asks the model through its
auxiliary client, without streaming, with the MCP server's messages), answered in plain JSON from
the script's `sampling` replies; the model-metadata probes report a context length Hermes accepts.

Invariants:
- Standard library only, so any Python 3.11 runs it without the project's venv.
- Binds 127.0.0.1, never another interface. The port file appears (temp + rename) only once
  the socket listens, so a reader never sees a partial number or a port not yet bound.
- Every request is logged as one JSON line, flushed, before its reply is written: once the
  client has a reply, the log already holds the request.
- Script replies are consumed under a lock, in order, one per streaming call; once the list is
  exhausted the last one repeats, or with `"after_last": "restart"` the list starts again (so each
  `hermes chat` of a tool call then a quote calls the tool once). Sampling calls consume the `sampling` list the same way,
  apart; auxiliary calls consume nothing. Each log line says which kind the request was.
- SIGTERM and SIGINT stop the server at once with exit status 0; so does `--max-seconds`.
- A bad command line or script exits 2 with a message naming the problem, before binding.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_CONTEXT_LENGTH = 128000
# Hermes refuses models whose reported context is below this.
HERMES_MIN_CONTEXT = 64000
# A forgotten server must not outlive a test run by much; ten minutes exceeds any test.
DEFAULT_MAX_SECONDS = 600.0
DEFAULT_USAGE = {"prompt_tokens": 10, "completion_tokens": 5}
TOOL_RESULT_PLACEHOLDER = "{last_tool_result}"
AUXILIARY_TEXT = "stub title"
# How Hermes 0.19.0's own auxiliary requests begin (agent/title_generator.py): its first, system message.
HERMES_AUXILIARY_PROMPTS = ("Generate a short, descriptive title",)
AGENT, SAMPLING, AUXILIARY = "agent", "sampling", "auxiliary"
SAMPLING_CALL_PLACEHOLDER = "{sampling_call}"
DEFAULT_SAMPLING = [{"text": "stub thought " + SAMPLING_CALL_PLACEHOLDER}]
# What agent calls get once the script's replies are used up: the last again, or the whole list again.
REPEAT, RESTART = "repeat", "restart"
# Request bodies beyond this are refused (413): Hermes sends tens of kB, never megabytes.
MAX_BODY_BYTES = 64 * 1024 * 1024


class ScriptError(Exception):
    """The script file cannot be used; the message names the file and the problem."""


# -- the script ----------------------------------------------------------------------------

def load_script(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScriptError(f"cannot read script {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScriptError(f"script {path} is not valid JSON: {exc}") from None
    return validate_script(document, str(path))


def validate_script(document: Any, where: str) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise ScriptError(f"{where}: the script must be a JSON object with a 'replies' list")
    replies = document.get("replies")
    if not isinstance(replies, list) or not replies:
        raise ScriptError(f"{where}: 'replies' must be a non-empty list")
    for number, reply in enumerate(replies, start=1):
        _validate_reply(reply, f"{where}: reply {number}")
    model = document.get("model", "stub-model")
    if not isinstance(model, str) or not model:
        raise ScriptError(f"{where}: 'model' must be a non-empty string")
    usage = document.get("usage", DEFAULT_USAGE)
    if not (isinstance(usage, dict) and all(isinstance(usage.get(k), int) for k in DEFAULT_USAGE)):
        raise ScriptError(f"{where}: 'usage' must hold integer prompt_tokens and completion_tokens")
    sampling = document.get("sampling", DEFAULT_SAMPLING)
    if not isinstance(sampling, list) or not sampling:
        raise ScriptError(f"{where}: 'sampling' must be a non-empty list")
    for number, reply in enumerate(sampling, start=1):
        _validate_reply(reply, f"{where}: sampling reply {number}", ("text", "error"))
    after_last = document.get("after_last", REPEAT)
    if after_last not in (REPEAT, RESTART):
        raise ScriptError(f"{where}: 'after_last' must be {REPEAT!r} or {RESTART!r}")
    return {"model": model, "usage": usage, "replies": replies, "sampling": sampling, "after_last": after_last}


def _validate_reply(reply: Any, where: str, allowed: tuple[str, ...] = ("text", "tool_call", "error")) -> None:
    kinds = [k for k in allowed if isinstance(reply, dict) and k in reply]
    if len(kinds) != 1:
        raise ScriptError(f"{where} must be an object with exactly one of {', '.join(map(repr, allowed))}")
    value = reply[kinds[0]]
    if kinds[0] == "text" and not isinstance(value, str):
        raise ScriptError(f"{where}: 'text' must be a string")
    if kinds[0] == "error" and not (isinstance(value, int) and 400 <= value <= 599):
        raise ScriptError(f"{where}: 'error' must be an HTTP status between 400 and 599")
    if kinds[0] == "tool_call" and not (isinstance(value, dict) and isinstance(value.get("name"), str)
                                        and isinstance(value.get("arguments", {}), dict)):
        raise ScriptError(f"{where}: 'tool_call' must be {{\"name\": str, \"arguments\": {{...}}}}")


class Replies:
    """A list of replies handed out one per call, in order, then the last repeating or the list again (thread-safe)."""

    def __init__(self, replies: list[dict[str, Any]], after_last: str = REPEAT) -> None:
        self._replies = replies
        self._restart = after_last == RESTART
        self._next = 0
        self._lock = threading.Lock()

    def next_reply(self) -> tuple[int, dict[str, Any]]:
        """The 1-based call number and the reply for it."""
        with self._lock:
            number = self._next
            self._next += 1
        index = number % len(self._replies) if self._restart else min(number, len(self._replies) - 1)
        return number + 1, self._replies[index]


class Script:
    """The replies of a script: one per agent call, and apart, one per sampling call."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.model: str = document["model"]
        self.usage: dict[str, int] = document["usage"]
        self._agent = Replies(document["replies"], document.get("after_last", REPEAT))
        self.sampling = Replies(document.get("sampling", DEFAULT_SAMPLING))

    def next_reply(self) -> tuple[int, dict[str, Any]]:
        return self._agent.next_reply()


def kind_of(request: dict[str, Any]) -> str:
    """Which caller sent a chat request, told by what Hermes sends: agent, sampling or auxiliary."""
    if request.get("stream"):
        return AGENT
    messages = request.get("messages")
    first = messages[0] if isinstance(messages, list) and messages else None
    if isinstance(first, dict) and first.get("role") == "system" \
            and content_text(first.get("content")).startswith(HERMES_AUXILIARY_PROMPTS):
        return AUXILIARY
    return SAMPLING


def last_tool_result(request: dict[str, Any]) -> str:
    """The content of the last `role: "tool"` message of a chat request, as text ('' if none)."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "tool":
            return content_text(message.get("content"))
    return ""


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else json.dumps(content)


# -- replies -------------------------------------------------------------------------------

def _usage_block(usage: dict[str, int]) -> dict[str, int]:
    prompt, completion = usage["prompt_tokens"], usage["completion_tokens"]
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def sse_body(script: Script, reply: dict[str, Any], request: dict[str, Any], call_number: int) -> bytes:
    """A whole streamed completion: SSE chunks, a final chunk with finish_reason and usage, [DONE]."""
    base = {"id": f"chatcmpl-stub-{call_number}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": script.model}
    if "tool_call" in reply:
        call = reply["tool_call"]
        delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": f"call_stub_{call_number}", "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))}}]}
        finish = "tool_calls"
    else:
        text = reply["text"].replace(TOOL_RESULT_PLACEHOLDER, last_tool_result(request))
        delta = {"role": "assistant", "content": text}
        finish = "stop"
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
         "usage": _usage_block(script.usage)},
    ]
    events = [b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks]
    return b"".join(events) + b"data: [DONE]\n\n"


def plain_completion(script: Script, text: str = AUXILIARY_TEXT, call_id: str = "aux") -> dict[str, Any]:
    return {"id": f"chatcmpl-stub-{call_id}", "object": "chat.completion", "created": int(time.time()),
            "model": script.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": _usage_block(script.usage)}


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "stub_error", "param": None, "code": str(status)}}


def model_card(model: str, context_length: int) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": 0, "owned_by": "stub",
            "context_length": context_length, "max_model_len": context_length}


# -- HTTP ----------------------------------------------------------------------------------

class StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, script: Script, log_path: Path | None, context_length: int) -> None:
        super().__init__(("127.0.0.1", port), StubHandler)
        self.script = script
        self.context_length = context_length
        # Held open for the server's life: the stub's process ends with it.
        self._log = open(log_path, "a", encoding="utf-8") if log_path is not None else None  # noqa: SIM115
        self._log_lock = threading.Lock()

    def log_request_line(self, method: str, path: str, body: Any, kind: str | None) -> None:
        if self._log is None:
            return
        record = {"method": method, "path": path, "body": body}
        if kind is not None:
            record["kind"] = kind
        line = json.dumps(record, ensure_ascii=False)
        with self._log_lock:
            self._log.write(line + "\n")
            self._log.flush()


class StubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StubServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the --log file is the record; stderr stays quiet

    def do_GET(self) -> None:
        self._handle("GET", b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._send_json(413, error_body(413, f"request body over {MAX_BODY_BYTES} bytes"))
            return
        self._handle("POST", self.rfile.read(length))

    def _handle(self, method: str, raw: bytes) -> None:
        try:
            body: Any = json.loads(raw) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = raw.decode("utf-8", errors="replace")
        path = self.path.split("?", 1)[0]
        chat = method == "POST" and path.endswith("/chat/completions")
        request = body if isinstance(body, dict) else {}
        kind = kind_of(request) if chat else None
        self.server.log_request_line(method, self.path, body, kind)
        if chat:
            self._chat(request, kind)
        elif method == "GET" or path == "/api/show":
            self._metadata(method, path)
        else:
            self._send_json(404, error_body(404, f"no route for {method} {path}"))

    def _chat(self, request: dict[str, Any], kind: str | None) -> None:
        script = self.server.script
        if kind == AUXILIARY:
            self._send_json(200, plain_completion(script))
            return
        if kind == SAMPLING:
            number, reply = script.sampling.next_reply()
            if "error" in reply:
                status = reply["error"]
                self._send_json(status, error_body(status, f"scripted error {status} on sampling call {number}"))
                return
            text = reply["text"].replace(SAMPLING_CALL_PLACEHOLDER, str(number))
            self._send_json(200, plain_completion(script, text, f"sampling-{number}"))
            return
        number, reply = script.next_reply()
        if "error" in reply:
            status = reply["error"]
            self._send_json(status, error_body(status, f"scripted error {status} on call {number}"))
            return
        self._send(200, "text/event-stream", sse_body(script, reply, request, number))

    def _metadata(self, method: str, path: str) -> None:
        model, context = self.server.script.model, self.server.context_length
        card = model_card(model, context)
        if path in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [card]})
        elif path.startswith(("/v1/models/", "/models/")):
            self._send_json(200, card)
        elif path == "/api/v1/models":
            self._send_json(200, {"models": [{"key": model, "id": model, "name": model,
                                              "max_context_length": context,
                                              "loaded_instances": [{"config": {"context_length": context}}]}],
                                  "data": [card]})
        elif method == "POST" and path == "/api/show":
            self._send_json(200, {"model_info": {"stub.context_length": context},
                                  "parameters": f"num_ctx {context}"})
        else:
            self._send_json(404, error_body(404, f"no route for {method} {path}"))

    def _send_json(self, status: int, document: Any) -> None:
        self._send(status, "application/json", json.dumps(document).encode())

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()


# -- main ----------------------------------------------------------------------------------

def write_atomically(path: Path, text: str) -> None:
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A scripted OpenAI-compatible model on 127.0.0.1.")
    parser.add_argument("--script", required=True, type=Path, help="the script JSON (see docs/stub-model.md)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    parser.add_argument("--log", type=Path, help="append one JSON line per request received")
    parser.add_argument("--context-length", type=int, default=DEFAULT_CONTEXT_LENGTH,
                        help=f"context length the metadata probes report (default {DEFAULT_CONTEXT_LENGTH}; "
                             f"Hermes refuses below {HERMES_MIN_CONTEXT})")
    parser.add_argument("--max-seconds", type=float, default=DEFAULT_MAX_SECONDS,
                        help=f"stop by itself after this long (default {DEFAULT_MAX_SECONDS:g})")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port} is not a port number")
    if args.context_length <= 0:
        parser.error("--context-length must be positive")
    if args.max_seconds <= 0:
        parser.error("--max-seconds must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        script = Script(load_script(args.script))
    except ScriptError as exc:
        print(f"model_server: {exc}", file=sys.stderr)
        return 2
    try:
        server = StubServer(args.port, script, args.log, args.context_length)
    except OSError as exc:
        print(f"model_server: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    threading.Thread(target=server.serve_forever, name="stub-model-http", daemon=True).start()
    port = server.server_address[1]
    if args.port_file is not None:
        write_atomically(args.port_file, f"{port}\n")
    print(f"listening on http://127.0.0.1:{port}/v1", flush=True)
    stop.wait(args.max_seconds)
    # Handler threads are daemons: leaving now drops any reply in flight, which is what
    # "stops at once" means for a stub.
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
