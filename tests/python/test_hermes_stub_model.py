"""The stub model server (stubs/model_server.py), held to docs/stub-model.md."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

import pytest

from hermes_support import MODEL_SERVER, SCRIPTS, STUB_STOP_TIMEOUT, StubModel

HTTP_TIMEOUT = 10.0
SCRIPT = {"model": "stub-model", "usage": {"prompt_tokens": 7, "completion_tokens": 3}, "replies": [
    {"tool_call": {"name": "mcp__mafiabot__turn", "arguments": {"input": "hi", "uid": "u", "channel": "c", "server": "s"}}},
    {"text": "The body said: {last_tool_result}"},
    {"error": 503},
]}


def post(model: StubModel, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
    request = urllib.request.Request(f"http://127.0.0.1:{model.port}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:  # noqa: S310 (http://127.0.0.1 only)
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


def get(model: StubModel, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{model.port}{path}", timeout=HTTP_TIMEOUT) as response:
        return json.loads(response.read())


def sse_chunks(payload: bytes) -> list[Any]:
    events = [e for e in payload.decode().split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events), events
    assert events[-1] == "data: [DONE]"
    return [json.loads(e[len("data: "):]) for e in events[:-1]]


def chat(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "stub-model", "stream": True, "messages": messages}


def test_agent_calls_consume_the_script_in_order_as_sse_and_the_last_reply_repeats(tmp_path):
    with StubModel(SCRIPT, tmp_path) as model:
        status, kind, body = post(model, "/v1/chat/completions", chat([{"role": "user", "content": "hi"}]))
        assert (status, kind) == (200, "text/event-stream")
        first, final = sse_chunks(body)
        call = first["choices"][0]["delta"]["tool_calls"][0]
        assert call["function"]["name"] == "mcp__mafiabot__turn"
        assert json.loads(call["function"]["arguments"]) == {"input": "hi", "uid": "u", "channel": "c", "server": "s"}
        assert final["choices"][0]["finish_reason"] == "tool_calls"
        assert final["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}

        tool_result = {"role": "tool", "tool_call_id": call["id"], "content": [{"type": "text", "text": "TRACE"}]}
        _, _, body = post(model, "/v1/chat/completions", chat([{"role": "tool", "content": "old"}, tool_result]))
        first, final = sse_chunks(body)
        assert first["choices"][0]["delta"]["content"] == "The body said: TRACE"
        assert final["choices"][0]["finish_reason"] == "stop"

        for _ in range(2):
            status, kind, body = post(model, "/v1/chat/completions", chat([]))
            assert (status, kind) == (503, "application/json")
            assert json.loads(body)["error"]["code"] == "503"


def test_a_script_that_restarts_hands_out_its_replies_again_once_used_up(tmp_path):
    script = {**SCRIPT, "replies": SCRIPT["replies"][:2], "after_last": "restart"}
    with StubModel(script, tmp_path) as model:
        kinds = []
        for _ in range(5):
            _, _, body = post(model, "/v1/chat/completions", chat([{"role": "user", "content": "hi"}]))
            kinds.append(sse_chunks(body)[-1]["choices"][0]["finish_reason"])
    assert kinds == ["tool_calls", "stop", "tool_calls", "stop", "tool_calls"], "each chat calls the tool once"


def test_auxiliary_calls_get_plain_json_and_do_not_consume_the_script(tmp_path):
    with StubModel(SCRIPT, tmp_path) as model:
        status, kind, body = post(model, "/v1/chat/completions", {"model": "m", "messages": []})
        assert (status, kind) == (200, "application/json")
        assert json.loads(body)["object"] == "chat.completion"
        _, _, body = post(model, "/v1/chat/completions", chat([]))
        assert "tool_calls" in sse_chunks(body)[0]["choices"][0]["delta"]


TITLE_REQUEST = {"model": "m", "max_tokens": 500, "messages": [
    {"role": "system", "content": "Generate a short, descriptive title (3-7 words) for a conversation that ..."},
    {"role": "user", "content": "User: hi\n\nAssistant: hello"}]}


def sampling_request(text: str) -> dict[str, Any]:
    """What Hermes's SamplingHandler sends for a server's sampling/createMessage: not streaming, the server's messages."""
    return {"model": "stub-model", "max_tokens": 256, "messages": [
        {"role": "system", "content": "You think one pass of a turn."}, {"role": "user", "content": text}]}


def completion_text(body: bytes) -> str:
    document = json.loads(body)
    assert document["object"] == "chat.completion"
    return document["choices"][0]["message"]["content"]


def test_sampling_calls_are_told_from_agent_and_title_calls_and_consume_their_own_list(tmp_path):
    script = {**SCRIPT, "sampling": [{"text": "thought {sampling_call}"}, {"error": 502}, {"text": "late {sampling_call}"}]}
    with StubModel(script, tmp_path) as model:
        assert completion_text(post(model, "/v1/chat/completions", sampling_request("pass 1"))[2]) == "thought 1"
        assert completion_text(post(model, "/v1/chat/completions", TITLE_REQUEST)[2]) == "stub title"
        status, _, body = post(model, "/v1/chat/completions", sampling_request("pass 2"))
        assert status == 502 and "sampling call 2" in json.loads(body)["error"]["message"]
        _, _, body = post(model, "/v1/chat/completions", chat([]))
        assert "tool_calls" in sse_chunks(body)[0]["choices"][0]["delta"], "sampling calls consumed the agent's script"
        for number in (3, 4):
            assert completion_text(post(model, "/v1/chat/completions", sampling_request("again"))[2]) == f"late {number}"
        kinds = [r["kind"] for r in model.requests()]
    assert kinds == ["sampling", "auxiliary", "sampling", "agent", "sampling", "sampling"]


def test_without_a_sampling_list_each_sampling_call_gets_its_numbered_default_thought(tmp_path):
    with StubModel(SCRIPT, tmp_path) as model:
        texts = [completion_text(post(model, "/v1/chat/completions", sampling_request(str(n)))[2]) for n in (1, 2)]
        assert json.loads(post(model, "/v1/chat/completions", sampling_request("x"))[2])["model"] == "stub-model"
    assert texts == ["stub thought 1", "stub thought 2"]


def test_metadata_probes_report_a_context_length_hermes_accepts(tmp_path):
    with StubModel(SCRIPT, tmp_path, "--context-length", "200000") as model:
        assert get(model, "/v1/models")["data"][0] == get(model, "/v1/models/stub-model")
        assert get(model, "/v1/models/stub-model")["context_length"] == 200000
        lm_studio = get(model, "/api/v1/models")["models"][0]
        assert lm_studio["loaded_instances"][0]["config"]["context_length"] == 200000
        _, _, body = post(model, "/api/show", {"name": "stub-model"})
        assert json.loads(body)["model_info"]["stub.context_length"] == 200000


def test_every_request_is_logged_before_its_reply_and_the_port_file_names_the_port(tmp_path):
    with StubModel(SCRIPT, tmp_path) as model:
        post(model, "/v1/chat/completions", chat([{"role": "user", "content": "logged?"}]))
        logged = model.requests()
        assert logged[-1]["method"] == "POST" and logged[-1]["path"] == "/v1/chat/completions"
        assert logged[-1]["body"]["messages"][0]["content"] == "logged?"
        assert model.port_file.read_text().strip() == str(model.port)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_server_stops_at_once_with_status_0_on_sigterm_or_sigint(tmp_path, signum):
    with StubModel(SCRIPT, tmp_path) as model:
        assert model.proc is not None
        model.proc.send_signal(signum)
        assert model.proc.wait(STUB_STOP_TIMEOUT) == 0


@pytest.mark.parametrize("script, says", [
    ({"replies": []}, "'replies' must be a non-empty list"),
    ({"replies": [{"text": "a", "error": 500}]}, "reply 1 must be an object with exactly one of"),
    ({"replies": [{"error": 200}]}, "between 400 and 599"),
    ({"replies": [{"tool_call": {"arguments": {}}}]}, "'tool_call' must be"),
    ({"replies": [{"text": "a"}], "sampling": []}, "'sampling' must be a non-empty list"),
    ({"replies": [{"text": "a"}], "after_last": "loop"}, "'after_last' must be 'repeat' or 'restart'"),
    ({"replies": [{"text": "a"}], "sampling": [{"tool_call": {"name": "x"}}]},
     "sampling reply 1 must be an object with exactly one of 'text', 'error'"),
])
def test_a_bad_script_exits_2_naming_the_reply_at_fault(tmp_path, script, says):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(script))
    completed = subprocess.run([sys.executable, str(MODEL_SERVER), "--script", str(path)], capture_output=True,
                               text=True, timeout=30)
    assert completed.returncode == 2 and says in completed.stderr


def test_the_shipped_scripts_are_valid():
    for path in SCRIPTS.glob("*.json"):
        completed = subprocess.run([sys.executable, str(MODEL_SERVER), "--script", str(path), "--max-seconds",
                                    "0.01"], capture_output=True, text=True, timeout=30)
        assert completed.returncode == 0, (path, completed.stderr)
