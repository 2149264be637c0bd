"""Both eras of MCP over stdio: handshake, version negotiation, discovery, listing, ordering rules."""

from __future__ import annotations

import pytest

from harness.client import MODERN_PROTOCOL_VERSION, modern_params
from harness.errors import RpcError
from support import LATEST_LEGACY, LEGACY_VERSIONS, check_text_block, turn_arguments

INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
UNSUPPORTED_VERSION = -32022


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_initialize_echoes_a_supported_legacy_version(body, version):
    result = body.initialize(protocol_version=version)
    assert result["protocolVersion"] == version


@pytest.mark.parametrize("version", ["1999-01-01", "2026-07-28", "not-a-date"])
def test_initialize_answers_the_latest_legacy_version_to_an_unknown_one(body, version):
    assert body.initialize(protocol_version=version)["protocolVersion"] == LATEST_LEGACY


def test_initialize_result_has_the_contract_fields_in_order(body):
    result = body.initialize()
    assert list(result) == ["protocolVersion", "capabilities", "serverInfo", "instructions"]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"]["name"] == "mafiabot"
    assert isinstance(result["serverInfo"]["version"], str) and result["serverInfo"]["version"]
    assert isinstance(result["instructions"], str) and result["instructions"]


def test_ping_answers_an_empty_object_before_and_after_initialize(body):
    assert body.ping() == {}
    body.initialize()
    assert body.ping() == {}


@pytest.mark.parametrize("method,params", [
    ("tools/list", None),
    ("tools/call", {"name": "turn", "arguments": turn_arguments()}),
])
def test_known_methods_before_initialize_are_refused_as_not_initialized(body, method, params):
    with pytest.raises(RpcError) as caught:
        body.request(method, params)
    assert caught.value.code == INVALID_REQUEST
    assert "not initialized" in caught.value.message.lower()


def test_unknown_method_before_initialize_is_method_not_found(body):
    with pytest.raises(RpcError) as caught:
        body.request("resources/list")
    assert caught.value.code == METHOD_NOT_FOUND


def test_a_second_initialize_is_an_invalid_request(ready_body):
    with pytest.raises(RpcError) as caught:
        ready_body.initialize()
    assert caught.value.code == INVALID_REQUEST
    assert ready_body.ping() == {}


@pytest.mark.parametrize("method", ["prompts/list", "resources/list", "logging/setLevel", "completion/complete",
                                    "tools/lists", "Ping"])
def test_unknown_methods_get_method_not_found_at_once(ready_body, method):
    with pytest.raises(RpcError) as caught:
        ready_body.request(method, {})
    assert caught.value.code == METHOD_NOT_FOUND


def test_legacy_tools_list_offers_exactly_the_turn_tool(ready_body):
    result = ready_body.request("tools/list")
    assert [tool["name"] for tool in result["tools"]] == ["turn"]
    assert "resultType" not in result and "nextCursor" not in result
    schema = result["tools"][0]["inputSchema"]
    assert schema["type"] == "object"
    assert sorted(schema["required"]) == ["channel", "input", "server", "uid"]
    assert {name: prop.get("type") for name, prop in schema["properties"].items()} == {
        "input": "string", "uid": "string", "channel": "string", "server": "string", "key_origin": "string"}
    assert schema.get("additionalProperties") is False


def test_tools_list_refuses_any_cursor(ready_body):
    with pytest.raises(RpcError) as caught:
        ready_body.request("tools/list", {"cursor": "abc"})
    assert caught.value.code == INVALID_PARAMS


def test_legacy_turn_returns_output_then_json_text_and_structured_content(ready_body):
    result = ready_body.call_tool("turn", turn_arguments("hello there"))
    assert list(result) == ["content", "structuredContent", "isError"]
    assert result["isError"] is False
    check_text_block(result)


# -- modern era (2026-07-28): stateless, no handshake -------------------------------------------

def test_server_discover_describes_the_server_without_a_handshake(body):
    result = body.request("server/discover", modern_params())
    assert MODERN_PROTOCOL_VERSION in result["supportedVersions"]
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mafiabot"
    assert "tools" in result["capabilities"]
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert list(result) == ["supportedVersions", "capabilities", "instructions", "ttlMs", "cacheScope",
                            "resultType", "_meta"]


def test_server_discover_without_meta_is_answered_before_initialize(body):
    result = body.request("server/discover")
    assert MODERN_PROTOCOL_VERSION in result["supportedVersions"]


def test_modern_tools_list_carries_cache_hints_and_result_type(body):
    result = body.request("tools/list", modern_params())
    assert [tool["name"] for tool in result["tools"]] == ["turn"]
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert isinstance(result["cacheScope"], str) and result["cacheScope"]


def test_modern_tools_call_runs_a_turn_without_initialize(body):
    result = body.call_tool("turn", turn_arguments("modern hello"), params=modern_params())
    assert result["resultType"] == "complete"
    assert result["isError"] is False
    assert result["structuredContent"]["turn"] == 1


def test_modern_request_with_unsupported_version_gets_minus_32022_listing_supported(body):
    with pytest.raises(RpcError) as caught:
        body.request("tools/list", modern_params(version="2099-01-01"))
    assert caught.value.code == UNSUPPORTED_VERSION
    assert MODERN_PROTOCOL_VERSION in caught.value.data["supported"]


@pytest.mark.parametrize("method", ["server/discover", "tools/list"])
def test_modern_request_without_client_capabilities_is_invalid_params(body, method):
    with pytest.raises(RpcError) as caught:
        body.request(method, modern_params(include_capabilities=False))
    assert caught.value.code == INVALID_PARAMS


def test_modern_unknown_method_is_method_not_found(body):
    with pytest.raises(RpcError) as caught:
        body.request("prompts/list", modern_params())
    assert caught.value.code == METHOD_NOT_FOUND


def test_legacy_session_keeps_working_after_modern_requests(body):
    body.request("server/discover", modern_params())
    assert body.initialize()["protocolVersion"] == LATEST_LEGACY
    assert body.call_turn("after discover", "u", "c", "s")["turn"] == 1
