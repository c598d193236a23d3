"""The wire codec's rules, one test each, on a v1 and a v2 type where the rule
exists in both (the generated acp_v1 and acp_v2 packages)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ..conftest import SCHEMAS, examples, load_generated
from ..strategies import ANY_JSON

v1 = load_generated("acp_v1")
v2 = load_generated("acp_v2")
BOTH = pytest.mark.parametrize("p", [v1, v2], ids=["v1", "v2"])


def _error(p, name, data, strict=False):
    with pytest.raises(p.ValidationError) as info:
        p.decode(name, data, strict=strict)
    return info.value


# ------------------------------------------------------------------ the API


@BOTH
def test_validation_error_has_a_path_and_says_expected_and_found(p):
    update = {
        "sessionId": "s",
        "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 7}},
    }
    if p is v2:
        update["update"]["messageId"] = "m1"
    error = _error(p, "SessionNotification" if p is v1 else "UpdateSessionNotification", update)
    assert isinstance(error, ValueError)
    assert error.path == "$.update.content.text"
    assert error.message == "expected a string, found integer 7"
    assert str(error) == "$.update.content.text: expected a string, found integer 7"


@BOTH
def test_paths_name_list_indexes_and_odd_keys(p):
    prompt = {
        "sessionId": "s",
        "prompt": [{"type": "text", "text": "a"}, {"type": "image", "data": 1, "mimeType": "x"}],
    }
    assert _error(p, "PromptRequest", prompt).path == "$.prompt[1].data"
    error = _error(p, "ToolCallLocation", {"path": 5})
    assert error.path == "$.path"


def test_unknown_definition_names_are_a_key_error():
    with pytest.raises(KeyError, match="no definition named 'Nope'"):
        v2.decode("Nope", {})


@BOTH
def test_deep_or_huge_input_raises_only_validation_error(p):
    deep: object = "x"
    for _ in range(100_000):
        deep = [deep]
    for strict in (False, True):
        with pytest.raises(p.ValidationError):
            p.decode("ContentBlock", deep, strict=strict)
        # Deep JSON where any value is allowed is kept, not walked.
        meta = p.decode("TextContent", {"text": "t", "_meta": {"deep": deep}}, strict=False)
        assert meta.meta["deep"] is deep
    assert (
        len(p.decode("PromptRequest", {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}] * 50_000}).prompt)
        == 50_000
    )


@pytest.mark.parametrize("package", sorted(SCHEMAS))
@settings(max_examples=examples(150))
@given(value=ANY_JSON, index=st.integers(min_value=0))
def test_nothing_but_validation_error_escapes_and_input_is_untouched(package, value, index):
    p = load_generated(package)
    names = sorted(p.DEFINITIONS)
    name = names[index % len(names)]
    before = json.dumps(value, sort_keys=True)
    for strict in (False, True):
        try:
            decoded = p.decode(name, value, strict=strict)
        except p.ValidationError:
            continue
        assert p.decode(name, p.encode(decoded), strict=strict) == decoded
    assert json.dumps(value, sort_keys=True) == before


@BOTH
def test_encode_leaves_out_unset_writes_null_for_none_and_restores_wire_names(p):
    update = p.ToolCallUpdate(tool_call_id="c1", title=None, raw_input={"a": 1}, meta={"k": None})
    assert p.encode(update) == {"toolCallId": "c1", "title": None, "rawInput": {"a": 1}, "_meta": {"k": None}}
    assert update.to_wire() == p.encode(update)
    assert p.ToolCallUpdate.from_wire({"toolCallId": "c1"}) == p.ToolCallUpdate(tool_call_id="c1")


class _Foreign:
    """Not a class of the package."""


@BOTH
def test_encode_builds_a_list_of_variants_in_order_and_keeps_none_and_empty(p):
    text = p.ContentToolCallContent(content=p.TextContentBlock(text="t"))
    terminal = p.TerminalToolCallContent(terminal_id="t1")
    location = p.ToolCallLocation(path="/a", line=3)
    update = p.ToolCallUpdate(tool_call_id="c", content=[text, terminal, text], locations=[location])
    wire = p.encode(update)
    assert wire["content"] == [
        {"type": "content", "content": {"type": "text", "text": "t"}},
        {"type": "terminal", "terminalId": "t1"},
        {"type": "content", "content": {"type": "text", "text": "t"}},
    ]
    assert wire["locations"] == [{"path": "/a", "line": 3}]
    assert list(wire) == ["toolCallId", "content", "locations"]
    none = p.encode(p.ToolCallUpdate(tool_call_id="c", content=None, locations=[]))
    assert none == {"toolCallId": "c", "content": None, "locations": []}


@BOTH
def test_encode_refuses_a_value_of_no_class_of_the_package_where_a_union_is(p):
    update = p.ToolCallUpdate(tool_call_id="c", content=[_Foreign()])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"^_Foreign is not a variant of ToolCallContent$"):
        p.encode(update)
    block = p.ContentToolCallContent(content=_Foreign())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^_Foreign is not a variant of ContentBlock$"):
        p.encode(block)


def test_encode_keeps_the_order_of_members_around_a_required_list():
    entry = v1.PlanEntry(content="c", priority=v1.PlanEntryPriority.HIGH, status=v1.PlanEntryStatus.PENDING)
    update = v1.PlanSessionUpdate(entries=[entry, entry], meta={"k": 1})
    wire = v1.encode(v1.SessionNotification(session_id=v1.SessionId("s"), update=update))
    assert list(wire["update"]) == ["sessionUpdate", "entries", "_meta"]
    assert wire["update"]["entries"] == [{"content": "c", "priority": "high", "status": "pending"}] * 2


@BOTH
def test_encode_refuses_a_reference_cycle_in_meta_and_json_fields_whatever_else_they_hold(p):
    loop: dict[str, object] = {}
    loop["self"] = loop
    flat = {"f": 1.5, "s": "x", "n": None, "b": True, "i": 1}
    update = p.ToolCallUpdate(tool_call_id="c", raw_input=flat, raw_output=[1.5, "x"], meta=flat)
    wire = p.encode(update)
    # A value kept as JSON is the caller's own object; a map of them is copied.
    assert wire["rawInput"] is flat and wire["rawOutput"] is update.raw_output
    assert wire["_meta"] == flat and wire["_meta"] is not flat
    text = p.ContentToolCallContent(content=p.TextContentBlock(text="t"), meta={"f": 1.5, "loop": loop})
    for cyclic in (
        p.ToolCallUpdate(tool_call_id="c", meta={"f": 1.5, "loop": loop}),
        p.ToolCallUpdate(tool_call_id="c", raw_input={"f": 1.5, "l": [loop]}),
        p.ToolCallUpdate(tool_call_id="c", raw_output=[1.5, loop]),
        p.ToolCallUpdate(tool_call_id="c", content=[text]),
    ):
        with pytest.raises(ValueError, match="reference cycle"):
            p.encode(cyclic)
    with pytest.raises(ValueError, match="reference cycle"):
        p.encode(p.ToolCallUpdate(tool_call_id="c", raw_input=loop), validate=True)


# ------------------------------------------------------------------ lenient mode


@BOTH
def test_default_on_error_drops_an_invalid_value_and_keeps_the_rest(p):
    """x-deserialize-default-on-error: an invalid value is dropped; nothing else is lost."""
    update = p.decode("ToolCallUpdate", {"toolCallId": "c1", "status": 42, "title": "t", "rawOutput": [1]})
    assert update.status is p.UNSET and update.title == "t" and update.raw_output == [1]


def test_default_on_error_falls_back_to_the_schema_default():
    request = v1.decode("InitializeRequest", {"protocolVersion": 1, "clientCapabilities": "nope"})
    assert request.client_capabilities == v1.ClientCapabilities()
    request = v2.decode(
        "InitializeRequest", {"protocolVersion": 2, "info": {"name": "c", "version": "1"}, "capabilities": 3}
    )
    assert request.capabilities == v2.ClientCapabilities()


def test_default_on_error_gives_an_empty_list_for_a_list_that_cannot_be_null():
    call = v1.decode("ToolCall", {"toolCallId": "c", "title": "t", "content": "nope", "locations": None})
    assert call.content == [] and call.locations == []
    assert v1.decode("ToolCall", {"toolCallId": "c", "title": "t"}).content is v1.UNSET


@BOTH
def test_skip_invalid_items_keeps_the_valid_ones_in_order(p):
    """x-deserialize-skip-invalid-items."""
    update = p.decode(
        "ToolCallUpdate", {"toolCallId": "c", "locations": [{"path": "/a"}, {"path": 3}, {"path": "/b"}, 7]}
    )
    assert [loc.path for loc in update.locations] == ["/a", "/b"]


def test_default_on_null_gives_the_empty_value():
    """x-deserialize-default-on-null: null becomes []."""
    request = v1.decode("CreateTerminalRequest", {"sessionId": "s", "command": "ls", "args": None})
    assert request.args == []
    info = v2.decode("SessionInfo", {"sessionId": "s", "cwd": "/w", "additionalDirectories": None})
    assert info.additional_directories == []
    with pytest.raises(v1.ValidationError):
        v1.decode("CreateTerminalRequest", {"sessionId": "s", "command": "ls", "args": None}, strict=True)


@BOTH
def test_omitted_is_unset_or_the_default_and_null_is_none(p):
    update = p.decode("ToolCallUpdate", {"toolCallId": "c1", "title": None})
    assert update.title is None and update.kind is p.UNSET and update.content is p.UNSET
    assert p.encode(update) == {"toolCallId": "c1", "title": None}


def test_prompt_capabilities_omitted_null_and_empty_object():
    caps = v2.decode("PromptCapabilities", {"image": {}, "audio": None})
    assert caps.image == v2.PromptImageCapabilities() and caps.audio is None and caps.embedded_context is v2.UNSET
    assert v2.encode(caps) == {"image": {}, "audio": None}
    old = v1.decode("PromptCapabilities", {"image": True})
    assert (old.image, old.audio, old.embedded_context) == (True, False, False)


def test_defaults_fill_recursively():
    request = v1.decode(
        "InitializeRequest", {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}
    )
    assert request.client_capabilities.fs.read_text_file is True
    assert request.client_capabilities.fs.write_text_file is False
    assert request.client_capabilities.terminal is False
    bare = v1.decode("InitializeRequest", {"protocolVersion": 1})
    assert bare.client_capabilities.fs.write_text_file is False


@BOTH
def test_a_known_tag_with_a_bad_payload_is_an_error_never_the_catch_all(p):
    error = _error(p, "ContentBlock", {"type": "image", "mimeType": "image/png"})
    assert error.path == "$" and "data" in error.message


def test_an_unknown_tag_goes_to_the_catch_all_and_encodes_back_unchanged():
    payload = {"type": "_zed/diagram", "nodes": [1, 2], "_meta": "not even an object"}
    block = v2.decode("ContentBlock", payload)
    assert isinstance(block, v2.OtherContentBlock) and block.type == "_zed/diagram"
    assert v2.encode(block) == payload
    # v1's ContentBlock is closed: an unknown tag is an error at the tag.
    assert _error(v1, "ContentBlock", payload).path == "$.type"


def test_v1_untagged_variant_takes_what_no_tag_selects():
    server = v1.decode("McpServer", {"type": "stdio", "name": "fs", "command": "/bin/fs", "args": [], "env": []})
    assert isinstance(server, v1.McpServerStdio)
    http = v1.decode("McpServer", {"type": "http", "name": "r", "url": "https://x", "headers": []})
    assert type(http).__name__ == "HttpMcpServer"


def test_untagged_objects_dispatch_on_their_required_keys():
    text = v2.decode("EmbeddedResourceResource", {"uri": "file:///a", "text": "x"})
    blob = v2.decode("EmbeddedResourceResource", {"uri": "file:///a", "blob": "AA=="})
    assert isinstance(text, v2.TextResourceContents) and isinstance(blob, v2.BlobResourceContents)
    assert _error(v2, "EmbeddedResourceResource", {"uri": "file:///a"}).path == "$"


FORM = {"type": "object", "properties": {}}


@BOTH
def test_elicitation_scopes_are_one_field_whose_members_share_the_object(p):
    form = p.decode(
        "CreateElicitationRequest",
        {
            "message": "m",
            "mode": "form",
            "requestedSchema": FORM,
            "sessionId": "s",
            "toolCallId": 5,
            "_meta": 1,
            "x": 1,
        },
    )
    assert isinstance(form, p.FormCreateElicitationRequest)
    # Lenient rules inside the scope and beside it: invalid toolCallId and
    # _meta dropped, unknown keys ignored.
    assert form.scope == p.ElicitationSessionScope(session_id="s")
    assert form.meta is p.UNSET
    assert p.encode(form) == {"mode": "form", "message": "m", "requestedSchema": FORM, "sessionId": "s"}
    url = p.ElicitationUrlMode(elicitation_id="e", url="u", scope=p.ElicitationRequestScope(request_id=7))
    assert p.encode(url) == {"elicitationId": "e", "url": "u", "requestId": 7}
    assert p.decode("ElicitationUrlMode", p.encode(url)) == url
    custom = p.decode("CreateElicitationRequest", {"message": "m", "mode": "_qr", "code": 1, "requestId": 3})
    assert custom.scope == p.ElicitationRequestScope(request_id=3) and custom.extra == {"code": 1}
    assert p.encode(custom) == {"mode": "_qr", "message": "m", "requestId": 3, "code": 1}
    assert _error(p, "ElicitationUrlMode", {"elicitationId": "e", "url": "u", "sessionId": 7}).path == "$.sessionId"
    with pytest.raises(TypeError):
        p.encode(p.ElicitationUrlMode(elicitation_id="e", url="u", scope="s"))  # type: ignore[arg-type]


def test_v2_scopes_are_exclusive_and_v1_scopes_take_the_session():
    both = {"elicitationId": "e", "url": "u", "sessionId": "s", "requestId": 7}
    assert "exactly one" in _error(v2, "ElicitationUrlMode", both).message
    assert v1.decode("ElicitationUrlMode", both).scope == v1.ElicitationSessionScope(session_id="s")


@BOTH
def test_responses_are_a_result_or_an_error(p):
    result = p.decode("AgentResponse", {"id": 1, "result": {"x": 1}, "error": {"code": 1, "message": "m"}})
    assert isinstance(result, p.ResultAgentResponse) and result.result == {"x": 1}
    error = p.decode("ClientResponse", {"id": 2, "error": {"code": -32601, "message": "m"}, "junk": 1})
    assert isinstance(error, p.ErrorClientResponse) and error.error.code == -32601
    assert p.encode(error) == {"id": 2, "error": {"code": -32601, "message": "m"}}
    assert _error(p, "AgentResponse", {"id": 3}).path == "$"


@BOTH
def test_scalar_unions_keep_the_json_type(p):
    assert p.decode("RequestId", 7) == 7 and type(p.decode("RequestId", 7.0)) is int
    assert p.decode("RequestId", "7") == "7"
    if p is v1:
        assert p.decode("RequestId", None) is None
    else:
        assert _error(p, "RequestId", None).message.startswith("expected")
    _error(p, "RequestId", True)


def test_open_enums_keep_unknown_strings_and_closed_ones_refuse_them():
    assert v2.decode("ToolKind", "read") is v2.ToolKind.READ
    assert v2.decode("ToolKind", "teleport") == "teleport"
    assert v2.encode(v2.ToolKind.READ) == "read" and type(v2.encode(v2.ToolKind.READ)) is str
    assert _error(v1, "ToolKind", "teleport").message.startswith("expected one of")
    _error(v2, "ToolKind", 3)


@BOTH
def test_unknown_keys_are_ignored_except_in_meta(p):
    block = p.decode("ContentBlock", {"type": "text", "text": "t", "bogus": 1, "_meta": {"keep": {"me": 1}}})
    assert p.encode(block) == {"type": "text", "text": "t", "_meta": {"keep": {"me": 1}}}


@BOTH
def test_integers_booleans_whole_floats_formats_and_bounds(p):
    assert _error(p, "ProtocolVersion", True).message == "expected an integer, found boolean true"
    assert p.decode("ProtocolVersion", 1.0) == 1 and type(p.decode("ProtocolVersion", 1.0)) is int
    _error(p, "ProtocolVersion", 1.5)
    _error(p, "ProtocolVersion", 65536)  # uint16
    _error(p, "ProtocolVersion", -1)
    error = _error(p, "Error", {"code": 2**31, "message": "m"})  # int32
    assert error.path == "$.code"


def test_integer_formats_are_not_asserted_in_strict_mode():
    # A JSON Schema validator does not assert format: strict accepts what the
    # schema accepts; lenient mode enforces the Rust integer type.
    assert v2.decode("Error", {"code": 2**31, "message": "m"}, strict=True).code == 2**31


@BOTH
def test_string_formats_are_not_checked(p):
    link = p.decode("ResourceLink", {"name": "a", "uri": "  not a uri "})
    assert link.uri == "  not a uri "


# ------------------------------------------------------------------ strict mode


@BOTH
def test_strict_mode_salvages_nothing(p):
    data = {"toolCallId": "c", "status": 42}
    assert p.decode("ToolCallUpdate", data).status is p.UNSET
    assert _error(p, "ToolCallUpdate", data, strict=True).path == "$.status"
    items = {"toolCallId": "c", "locations": [{"path": "/a"}, {"path": 3}]}
    assert _error(p, "ToolCallUpdate", items, strict=True).path == "$.locations[1].path"


def test_strict_mode_checks_the_catch_all_not():
    # The catch-all's `not` refuses known tags, so a bad known block fails.
    error = _error(v2, "ContentBlock", {"type": "text"}, strict=True)
    assert error.path == "$" and "text" in error.message
    assert isinstance(v2.decode("ContentBlock", {"type": "_x"}, strict=True), v2.OtherContentBlock)


def test_untagged_members_are_tried_in_order_when_several_fit():
    # Schema-valid: the Blob branch matches (text is just an unknown key to it).
    value = {"uri": "file:///a", "text": 5, "blob": "AA=="}
    for strict in (False, True):
        assert isinstance(v2.decode("EmbeddedResourceResource", value, strict=strict), v2.BlobResourceContents)


def test_encode_handles_any_depth_json_does():
    deep: object = {"leaf": 1}
    for _ in range(900):  # json.dumps itself stops near 1000
        deep = [deep]
    value = v2.decode("ExtRequest", deep)
    assert json.dumps(v2.encode(value)) == json.dumps(deep)
