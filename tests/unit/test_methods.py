"""The method table: built from x-method/x-side and the envelopes, handler
names from the rule and the overrides, clear errors on inconsistent schemas."""

from __future__ import annotations

import json

import pytest
from acpgen.compile.load import load_schema, parse_schema
from acpgen.compile.lower.facts import envelope_kinds
from acpgen.compile.passes.methods import handler_name, handler_overrides
from acpgen.errors import AcpgenError
from acpgen.pipeline import build_ir

from ..conftest import SCHEMAS


def _table(defs: dict, document: dict | None = None):
    schema = parse_schema(json.dumps({**(document or {}), "$defs": defs}).encode(), "t.json")
    return {m.name: m for m in build_ir(schema, "t").methods}


def _message(method: str, side: str, props: dict | None = None) -> dict:
    return {"type": "object", "x-method": method, "x-side": side, "properties": props or {}}


def _envelopes(requests=(), responses=(), notifications=()) -> dict:
    def refs(names):
        return {"anyOf": [{"$ref": f"#/$defs/{n}"} for n in names] + [{"type": "null"}]}

    return {
        "Req": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "method": {"type": "string"}, "params": refs(requests)},
        },
        "Res": {"type": "object", "properties": {"id": {"type": "integer"}, "result": refs(responses)}},
        "Note": {"type": "object", "properties": {"method": {"type": "string"}, "params": refs(notifications)}},
    }


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_x_method_type_is_in_the_table_with_its_side_and_kind(name):
    raw = json.loads(SCHEMAS[name].read_text())["$defs"]
    package = build_ir(load_schema(SCHEMAS[name]), name)
    kinds = envelope_kinds(load_schema(SCHEMAS[name]))
    listed = {}
    for method in package.methods:
        for call in method.calls:
            listed[call.params] = (method.name, call.side, call.kind)
            if call.kind == "request":
                listed[call.result] = (method.name, call.side, "response")
    expected = {n: (d["x-method"], d["x-side"]) for n, d in raw.items() if "x-method" in d}
    assert {n: v[:2] for n, v in listed.items()} == expected
    # The envelopes name every one of them, and the kind they give agrees
    # with the type's name.
    for def_name, (_, _, kind) in listed.items():
        assert kinds[def_name] == {kind}
        assert def_name.endswith({"request": "Request", "response": "Response", "notification": "Notification"}[kind])


def test_v2_unstable_mcp_message_is_a_client_request_and_an_agent_notification():
    package = build_ir(load_schema(SCHEMAS["acp_v2_unstable"]), "p")
    method = {m.name: m for m in package.methods}["mcp/message"]
    assert (method.request.side, method.request.params, method.request.result) == (
        "client",
        "MessageMcpRequest",
        "MessageMcpResponse",
    )
    assert (method.notification.side, method.notification.params) == ("agent", "MessageMcpNotification")
    proxy = {m.name: m for m in package.methods}["proxy/successor"]
    assert proxy.request.side == proxy.notification.side == "proxy"
    assert proxy.request.handler != proxy.notification.handler


def test_v1_and_v2_method_sets_differ_as_the_schemas_say():
    v1 = {m.name for m in build_ir(load_schema(SCHEMAS["acp_v1"]), "p").methods}
    v2 = {m.name for m in build_ir(load_schema(SCHEMAS["acp_v2"]), "p").methods}
    assert {"auth/login", "auth/logout", "tool_call/cancel", "terminal/cancel"} <= v2 - v1
    assert {"authenticate", "fs/read_text_file", "terminal/create", "session/set_mode"} <= v1 - v2


def test_handler_names_follow_the_rule_with_the_overrides():
    overrides = handler_overrides()
    assert handler_name("NewSessionRequest", {}) == "new_session"
    assert handler_name("RequestPermissionRequest", {}) == "request_permission"
    assert handler_name("CancelNotification", {}) == "cancel"
    assert handler_name("SessionNotification", {}) == "session"
    assert handler_name("SessionNotification", overrides) == "session_update"
    assert handler_name("UpdateSessionNotification", overrides) == "session_update"
    assert handler_name("ImportRequest", {}) == "import_"


def test_kinds_come_from_the_envelopes_before_the_names():
    defs = {
        "Ask": _message("x/ask", "agent"),
        "Answer": _message("x/ask", "agent"),
        "Tell": _message("x/tell", "client"),
        **_envelopes(["Ask"], ["Answer"], ["Tell"]),
    }
    table = _table(defs)
    assert table["x/ask"].request.params == "Ask" and table["x/ask"].request.result == "Answer"
    assert table["x/ask"].request.handler == "ask"
    assert table["x/tell"].notification.params == "Tell" and table["x/tell"].request is None


@pytest.mark.parametrize(
    "defs, message, pointer",
    [
        ({"DoResponse": _message("do", "agent")}, "has no request type", "/$defs/DoResponse"),
        ({"DoRequest": _message("do", "agent")}, "has no response type", "/$defs/DoRequest"),
        (
            {
                "DoRequest": _message("do", "agent"),
                "OtherDoRequest": _message("do", "agent"),
                "DoResponse": _message("do", "agent"),
            },
            "two request types",
            "/$defs/OtherDoRequest",
        ),
        (
            {"DoRequest": _message("do", "agent"), "DoResponse": _message("do", "client")},
            "its response says",
            "/$defs/DoResponse/x-side",
        ),
        ({"DoNotification": _message("do", "server")}, "x-side must be one of", "/$defs/DoNotification/x-side"),
        (
            {"DoNotification": {**_message("do", "agent"), "x-method": 3}},
            "x-method must be",
            "/$defs/DoNotification/x-method",
        ),
        ({"Thing": _message("do", "agent")}, "does not say whether", "/$defs/Thing"),
        (
            {
                "GoRequest": _message("a", "agent"),
                "GoResponse": _message("a", "agent"),
                "GoNotification": _message("b", "agent"),
            },
            "would both be handled as 'go'",
            "/$defs/GoNotification",
        ),
    ],
)
def test_an_inconsistent_schema_is_an_error_naming_the_definition(defs, message, pointer):
    with pytest.raises(AcpgenError) as caught:
        _table(defs)
    assert message in caught.value.message
    assert caught.value.file == "t.json" and caught.value.pointer == pointer


def test_a_type_used_as_two_kinds_by_the_envelopes_is_an_error():
    defs = {"Both": _message("x", "agent"), **_envelopes(["Both"], ["Both"])}
    with pytest.raises(AcpgenError, match="as request and as response") as caught:
        _table(defs)
    assert caught.value.pointer == "/$defs/Both"


def test_the_passes_after_lowering_read_the_facts_it_carries():
    from acpgen.compile.lower import lower
    from acpgen.compile.passes import ruleselect
    from acpgen.compile.passes.methods import find_methods
    from acpgen.compile.passes.naming import name_package

    from ..conftest import ROOT

    package = lower(load_schema(SCHEMAS["acp_v1"]))
    version = json.loads((ROOT / "schema" / "SOURCE.json").read_text())["version"]
    assert package.facts.version == version and package.schema_version == version
    assert package.facts.null_request_id and not package.facts.unstable_marked
    assert "session/prompt" in package.facts.methods_named
    assert ruleselect.choose(package, None) == "v1"
    # The method table needs the named IR only, not the schema.
    table = find_methods(name_package(package, "p"))
    assert {m.name for m in table.methods} >= {"initialize", "session/prompt", "session/update"}
    assert table.null_request_id


def test_an_unusable_mark_is_reported_by_the_method_table_with_its_pointer():
    with pytest.raises(AcpgenError) as caught:
        _table({"PingRequest": _message("ping", "server")})
    assert caught.value.pointer == "/$defs/PingRequest/x-side"
    assert "x-side must be one of agent, client, protocol, proxy" in str(caught.value)


def test_a_handler_named_like_a_connection_attribute_keeps_clear_of_it():
    # ``close`` is the runtime connection's own method: the handler of
    # CloseRequest takes the next free name instead of an error.
    table = _table({"CloseRequest": _message("c", "agent"), "CloseResponse": _message("c", "agent")})
    assert table["c"].request.handler == "close_"
