"""protocol.py of the generated packages: the method table, whole-message
decoding and encoding, and the constants the schema defines."""

from __future__ import annotations

import json

import pytest

from ..conftest import SCHEMAS, load_generated

PACKAGES = sorted(SCHEMAS)


def _schema(name: str) -> dict:
    return json.loads(SCHEMAS[name].read_text())


@pytest.mark.parametrize("name", PACKAGES)
def test_the_error_codes_are_the_schemas(name):
    package = load_generated(name)
    codes = {
        option["title"]: option["const"] for option in _schema(name)["$defs"]["ErrorCode"]["anyOf"] if "const" in option
    }
    assert codes["Parse error"] == package.PARSE_ERROR
    assert codes["Invalid request"] == package.INVALID_REQUEST
    assert codes["Method not found"] == package.METHOD_NOT_FOUND
    assert codes["Invalid params"] == package.INVALID_PARAMS
    assert codes["Internal error"] == package.INTERNAL_ERROR
    assert codes["Request cancelled"] == package.REQUEST_CANCELLED


@pytest.mark.parametrize("name", PACKAGES)
def test_cancel_request_is_a_protocol_notification_with_a_request_id(name):
    package = load_generated(name)
    info = package.METHODS[package.CANCEL_REQUEST]
    assert info.request is None and info.notification.side == "protocol"
    message = package.decode_message({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}})
    assert isinstance(message.params, package.CancelRequestNotification)
    assert package.encode(message.params) == {"requestId": 7}


@pytest.mark.parametrize("name", PACKAGES)
def test_session_update_carries_the_schemas_notification_type(name):
    package = load_generated(name)
    params = "SessionNotification" if name.startswith("acp_v1") else "UpdateSessionNotification"
    info = package.METHODS["session/update"]
    assert (info.notification.params, info.notification.side, info.notification.handler) == (
        getattr(package, params),
        "client",
        "session_update",
    )
    assert hasattr(package.Client, "session_update") and hasattr(package.AgentSideConnection, "session_update")
    assert hasattr(package.Agent, "prompt") and hasattr(package.ClientSideConnection, "prompt")


def test_a_request_is_typed_by_its_method_and_encodes_back():
    acp = load_generated("acp_v1")
    wire = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]},
    }
    message = acp.decode_message(wire)
    assert message == acp.Request(
        3, "session/prompt", acp.PromptRequest(session_id="s", prompt=[acp.TextContentBlock(text="hi")])
    )
    assert acp.encode_message(message) == wire


def test_initialize_shaped_params_under_another_method_are_decoded_by_that_method():
    # The zod envelope picks the first union member that matches; the method decides here.
    acp = load_generated("acp_v2")
    params = {"protocolVersion": 2, "info": {"name": "zed", "version": "1"}}
    message = acp.decode_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    assert isinstance(message.params, acp.InitializeRequest)
    with pytest.raises(acp.ParamsError) as caught:
        acp.decode_message({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params})
    assert caught.value.request and caught.value.id == 1 and caught.value.method == "session/new"
    assert (
        isinstance(caught.value, acp.ValidationError)
        and caught.value.path == "$.params"
        and "cwd" in caught.value.message
    )


def test_lenient_salvages_params_where_strict_rejects_them():
    acp = load_generated("acp_v1")
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "kind": "not-a-kind"}
    wire = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}
    lenient = acp.decode_message(wire)
    assert acp.encode(lenient.params) == {
        "sessionId": "s",
        "update": {"sessionUpdate": "tool_call_update", "toolCallId": "c"},
    }
    with pytest.raises(acp.ValidationError) as caught:
        acp.decode_message(wire, strict=True)
    assert caught.value.path.startswith("$.params.update")


def test_absent_or_null_params_read_as_an_empty_object():
    acp = load_generated("acp_v2")
    for wire in (
        {"jsonrpc": "2.0", "id": 1, "method": "auth/logout"},
        {"jsonrpc": "2.0", "id": 1, "method": "auth/logout", "params": None},
    ):
        assert acp.decode_message(wire).params == acp.LogoutAuthRequest()


def test_responses_keep_their_result_as_json_until_decode_result():
    acp = load_generated("acp_v2")
    message = acp.decode_message({"jsonrpc": "2.0", "id": "r", "result": {"messageId": "m1", "extra": 1}})
    assert message == acp.Response("r", {"messageId": "m1", "extra": 1})
    assert acp.decode_result("session/prompt", message.result) == acp.PromptResponse(message_id="m1")
    assert acp.decode_result("_ext/thing", {"a": 1}) == {"a": 1}
    # A peer answering a void method with null: lenient reads {}, strict refuses.
    assert acp.decode_result("auth/logout", None) == acp.LogoutAuthResponse()
    with pytest.raises(acp.ValidationError):
        acp.decode_result("auth/logout", None, strict=True)


def test_error_responses():
    acp = load_generated("acp_v2")
    wire = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    message = acp.decode_message(wire)
    assert message == acp.ErrorResponse(None, acp.RpcError(-32700, "Parse error"))
    assert message.error.data is acp.UNSET
    assert acp.encode_message(message) == wire
    with_data = acp.encode_message(acp.ErrorResponse(4, acp.RpcError(-32602, "Invalid params", {"path": "$.x"})))
    assert with_data["error"]["data"] == {"path": "$.x"}


@pytest.mark.parametrize(
    "wire, path",
    [
        ({"id": 1, "method": "initialize"}, "$.jsonrpc"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "initialize"}, "$.id"),
        ({"jsonrpc": "2.0", "id": False, "method": "initialize"}, "$.id"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}}, "$"),
        ({"jsonrpc": "2.0", "id": 1}, "$"),
        ("not a message", "$"),
    ],
)
def test_bad_envelopes_raise_validation_error_with_a_path(wire, path):
    acp = load_generated("acp_v2")
    for strict in (False, True):
        with pytest.raises(acp.ValidationError) as caught:
            acp.decode_message(wire, strict=strict)
        assert caught.value.path == path
        assert not isinstance(caught.value, acp.ParamsError)


def test_v1_allows_null_request_ids_and_v2_does_not():
    v1, v2 = load_generated("acp_v1"), load_generated("acp_v2")
    wire = {"jsonrpc": "2.0", "id": None, "method": "_x/y"}
    assert v1.decode_message(wire) == v1.Request(None, "_x/y", None)
    with pytest.raises(v2.ValidationError, match="request id"):
        v2.decode_message(wire)


def test_mcp_message_is_a_request_with_an_id_and_a_notification_without():
    acp = load_generated("acp_v2_unstable")
    params = {"serverId": "srv", "requestId": "r1", "method": "tools/list"}
    request = acp.decode_message({"jsonrpc": "2.0", "id": 5, "method": "mcp/message", "params": params})
    notification = acp.decode_message({"jsonrpc": "2.0", "method": "mcp/message", "params": params})
    assert isinstance(request, acp.Request) and isinstance(request.params, acp.MessageMcpRequest)
    assert isinstance(notification, acp.Notification) and isinstance(notification.params, acp.MessageMcpNotification)
    assert acp.METHODS["mcp/message"].request.side == "client"
    assert acp.METHODS["mcp/message"].notification.side == "agent"
    assert hasattr(acp.Client, "mcp_message") and hasattr(acp.Agent, "mcp_message")
