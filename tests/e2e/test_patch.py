"""Patch-merge: each sentence of the schema about upserts, the laws of
``apply`` for every upsert type of the four packages, and a realistic stream.

Each sentence test quotes, in its docstring, the schema sentence it checks.
"""

from __future__ import annotations

import copy
import functools
import json

import pytest
from acpgen.compile.passes.upserts import load_rules, rule_set
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from ..conftest import SCHEMAS, examples, load_generated
from ..strategies import valid_values

v1 = load_generated("acp_v1")
v2 = load_generated("acp_v2")
RULE_SETS = {"acp_v1": "v1", "acp_v1_unstable": "v1_unstable", "acp_v2": "v2", "acp_v2_unstable": "v2_unstable"}


def fold(p, name, updates, state=None):
    for update in updates:
        state = p.apply(state, p.decode(name, update))
    return state


def snapshot(p, name, updates):
    return p.encode(fold(p, name, updates))


# ------------------------------------------------------------------ v2 ToolCallUpdate


def test_new_tool_call_starts_from_the_protocol_defaults():
    """When a client receives a tool call ID it has not seen before, omitted
    fields start at their protocol defaults."""
    assert snapshot(v2, "ToolCallUpdate", [{"toolCallId": "c1"}]) == {
        "toolCallId": "c1",
        "name": None,
        "title": None,
        "kind": "other",
        "status": "pending",
        "content": [],
        "locations": [],
        "rawInput": None,
        "rawOutput": None,
        "capabilities": None,
        "_meta": {},
    }


def test_omitted_fields_leave_the_value_unchanged():
    """omitted fields leave the existing tool call value unchanged"""
    state = snapshot(
        v2, "ToolCallUpdate", [{"toolCallId": "c1", "title": "Read", "kind": "read"}, {"toolCallId": "c1"}]
    )
    assert (state["title"], state["kind"]) == ("Read", "read")


def test_null_clears_name_title_and_capabilities():
    """`null` clears or unsets the value (Omission means no change, `null`
    clears the name, and a string replaces it.)"""
    first = {"toolCallId": "c1", "name": "grep", "title": "t", "capabilities": {"cancel": {}}}
    state = snapshot(
        v2, "ToolCallUpdate", [first, {"toolCallId": "c1", "name": None, "title": None, "capabilities": None}]
    )
    assert (state["name"], state["title"], state["capabilities"]) == (None, None, None)


def test_null_resets_kind_to_other_and_status_to_pending():
    """Omission leaves the kind unchanged, `null` resets it to `other` ...
    `null` resets it to `pending`"""
    state = snapshot(
        v2,
        "ToolCallUpdate",
        [
            {"toolCallId": "c1", "kind": "edit", "status": "completed"},
            {"toolCallId": "c1", "kind": None, "status": None},
        ],
    )
    assert (state["kind"], state["status"]) == ("other", "pending")


def test_a_concrete_value_replaces():
    """concrete values replace the previous value"""
    state = snapshot(v2, "ToolCallUpdate", [{"toolCallId": "c1", "title": "a"}, {"toolCallId": "c1", "title": "b"}])
    assert state["title"] == "b"


@pytest.mark.parametrize("clear", [None, []])
def test_collections_are_replaced_and_cleared_by_null_or_empty(clear):
    """For collection fields, concrete arrays replace the previous collection,
    and both `null` and `[]` clear the collection."""
    a = {"type": "content", "content": {"type": "text", "text": "a"}}
    b = {"type": "content", "content": {"type": "text", "text": "b"}}
    steps = [{"toolCallId": "c1", "content": [a], "locations": [{"path": "/x"}]}, {"toolCallId": "c1", "content": [b]}]
    assert snapshot(v2, "ToolCallUpdate", steps)["content"] == [b]
    state = snapshot(v2, "ToolCallUpdate", [*steps, {"toolCallId": "c1", "content": clear, "locations": clear}])
    assert state["content"] == [] and state["locations"] == []


def test_meta_is_patched_by_top_level_key():
    """An object patches the stored metadata by top-level key: keys it omits
    are unchanged, a key set to `null` is removed, and any other value
    replaces that key's stored value without merging nested objects."""
    steps = [
        {"toolCallId": "c1", "_meta": {"keep": 1, "drop": 2, "nested": {"a": 1}}},
        {"toolCallId": "c1", "_meta": {"drop": None, "nested": {"b": 2}, "new": True}},
    ]
    assert snapshot(v2, "ToolCallUpdate", steps)["_meta"] == {"keep": 1, "nested": {"b": 2}, "new": True}


def test_meta_omitted_unchanged_and_null_clears():
    """Omitted leaves the stored metadata unchanged. `null` clears it."""
    steps = [{"toolCallId": "c1", "_meta": {"k": 1}}, {"toolCallId": "c1", "title": "t"}]
    assert snapshot(v2, "ToolCallUpdate", steps)["_meta"] == {"k": 1}
    assert snapshot(v2, "ToolCallUpdate", [*steps, {"toolCallId": "c1", "_meta": None}])["_meta"] == {}


def test_merge_meta_directly():
    stored = {"a": 1, "b": {"x": 1}}
    assert v2.merge_meta(stored, {"a": None, "b": {"y": 2}, "c": 3}) == {"b": {"y": 2}, "c": 3}
    assert stored == {"a": 1, "b": {"x": 1}}


def test_apply_refuses_an_update_for_another_entity():
    state = fold(v2, "ToolCallUpdate", [{"toolCallId": "c1"}])
    with pytest.raises(ValueError, match="c2"):
        v2.apply(state, v2.decode("ToolCallUpdate", {"toolCallId": "c2"}))
    with pytest.raises(TypeError, match="not an upsert"):
        v2.apply(None, v2.decode("ContentBlock", {"type": "text", "text": "x"}))


# ------------------------------------------------------------------ other v2 upserts


def test_terminal_update_patch_and_output_chunks():
    """Only `terminalId` is required. Other fields have patch semantics:
    omitted fields leave the stored value unchanged, `null` clears it, and
    concrete values replace it. When the terminal ID is new, omitted fields
    start unknown. (TerminalOutputChunk: A chunk of bytes appended to an
    agent-owned terminal's output.)"""
    state = fold(v2, "TerminalUpdate", [{"terminalId": "t", "command": "ls", "size": {"cols": 80, "rows": 24}}])
    state = v2.apply(state, v2.decode("TerminalOutputChunk", {"terminalId": "t", "data": "aGVs"}))
    state = v2.apply(
        state, v2.decode("SessionUpdate", {"sessionUpdate": "terminal_output_chunk", "terminalId": "t", "data": "bG8="})
    )
    state = fold(v2, "TerminalUpdate", [{"terminalId": "t", "size": None, "exitStatus": {"exitCode": 0}}], state)
    out = v2.encode(state)
    assert out["command"] == "ls" and out["size"] is None and out["exitStatus"] == {"exitCode": 0}
    assert out["output"] == {"data": "aGVsbG8="}  # b"hel" + b"lo"


def test_message_content_is_replaced_by_upserts_and_extended_by_chunks():
    """When a `user_message` update includes `content`, that array replaces
    any content previously accumulated for the message, including content from
    earlier chunks. Later chunks with the same `messageId` append to the
    current content."""

    def chunk(text):
        return {
            "sessionUpdate": "user_message_chunk",
            "messageId": "m",
            "content": {"type": "text", "text": text},
        }

    state = None
    for update in [chunk("a"), chunk("b")]:
        state = v2.apply(state, v2.decode("SessionUpdate", update))
    assert [b["text"] for b in v2.encode(state)["content"]] == ["a", "b"]
    state = v2.apply(
        state,
        v2.decode(
            "SessionUpdate",
            {"sessionUpdate": "user_message", "messageId": "m", "content": [{"type": "text", "text": "z"}]},
        ),
    )
    state = v2.apply(state, v2.decode("SessionUpdate", chunk("c")))
    assert [b["text"] for b in v2.encode(state)["content"]] == ["z", "c"]
    assert type(state).__name__ == "UserMessageState"
    # A bare ContentChunk could belong to a user message, an agent message or
    # a thought: only its tagged variants are accepted.
    with pytest.raises(TypeError):
        v2.apply(None, v2.decode("ContentChunk", chunk("x")))


def test_agent_messages_and_thoughts_are_separate_states():
    """AgentMessage / AgentThought: `content` has patch semantics."""
    msg = v2.apply(
        None,
        v2.decode(
            "SessionUpdate",
            {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text", "text": "x"}},
        ),
    )
    thought = v2.apply(
        None,
        v2.decode(
            "SessionUpdate",
            {"sessionUpdate": "agent_thought_chunk", "messageId": "m", "content": {"type": "text", "text": "y"}},
        ),
    )
    assert type(msg).__name__ == "AgentMessageState" and type(thought).__name__ == "AgentThoughtState"
    msg = v2.apply(msg, v2.decode("AgentMessage", {"messageId": "m", "content": None}))
    assert v2.encode(msg)["content"] == []


def test_session_info_update():
    """Omitted fields leave the existing session info unchanged. `null` clears
    the corresponding value."""
    state = snapshot(v2, "SessionInfoUpdate", [{"title": "a", "updatedAt": "2025-01-01T00:00:00Z"}, {"title": None}])
    assert state == {"title": None, "updatedAt": "2025-01-01T00:00:00Z", "_meta": {}}


def test_usage_update_cost():
    """Omitted leaves the last reported cost unchanged. `null` clears it. A value replaces it."""
    cost = {"amount": 1.5, "currency": "USD"}
    steps = [{"used": 1, "size": 10, "cost": cost}, {"used": 2, "size": 10}]
    assert snapshot(v2, "UsageUpdate", steps) == {"used": 2, "size": 10, "cost": cost}
    assert snapshot(v2, "UsageUpdate", [*steps, {"used": 3, "size": 10, "cost": None}])["cost"] is None


def test_compaction_update_and_summary_chunks():
    """`summary`, `error`, and `_meta` have patch semantics ... `summary: []`
    also clears the summary. (Chunks append in receive order.)"""
    state = fold(v2, "CompactionUpdate", [{"compactionId": "k", "status": "in_progress", "error": "e"}])
    state = v2.apply(
        state, v2.decode("CompactionSummaryChunk", {"compactionId": "k", "content": {"type": "text", "text": "s"}})
    )
    assert v2.encode(state)["summary"] == [{"type": "text", "text": "s"}]
    state = fold(
        v2, "CompactionUpdate", [{"compactionId": "k", "status": "completed", "summary": [], "error": None}], state
    )
    assert v2.encode(state) == {"compactionId": "k", "status": "completed", "summary": [], "error": None, "_meta": {}}


def test_session_message_in_v2_unstable():
    """SessionMessage: Omitted leaves the stored value unchanged. `null` clears
    it. A value replaces it."""
    p = load_generated("acp_v2_unstable")
    state = fold(
        p, "SessionMessage", [{"messageId": "m", "senderSessionId": "a", "content": [{"type": "text", "text": "x"}]}]
    )
    state = p.apply(
        state, p.decode("SessionMessageChunk", {"messageId": "m", "content": {"type": "text", "text": "y"}})
    )
    state = fold(p, "SessionMessage", [{"messageId": "m", "senderSessionId": None}], state)
    out = p.encode(state)
    assert out["senderSessionId"] is None and [c["text"] for c in out["content"]] == ["x", "y"]


# ------------------------------------------------------------------ v1


def test_v1_null_and_omitted_both_leave_a_field_unchanged():
    """v1 ToolCallUpdate name: Omitting it or sending `null` both mean that the
    existing name is left unchanged. (All fields except the tool call ID are
    optional - only changed fields need to be included.)"""
    call = {"sessionUpdate": "tool_call", "toolCallId": "x", "title": "Read", "name": "read", "kind": "read"}
    state = v1.apply(None, v1.decode("SessionUpdate", call))
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "x",
        "name": None,
        "title": None,
        "status": "completed",
    }
    state = v1.apply(state, v1.decode("SessionUpdate", update))
    out = v1.encode(state)
    assert (out["name"], out["title"], out["kind"], out["status"]) == ("read", "Read", "read", "completed")


def test_v1_a_tool_call_replaces_the_stored_state():
    state = fold(v1, "ToolCallUpdate", [{"toolCallId": "x", "title": "old", "status": "failed"}])
    state = v1.apply(state, v1.decode("ToolCall", {"toolCallId": "x", "title": "new"}))
    assert v1.encode(state)["status"] == "pending" and v1.encode(state)["title"] == "new"


# ------------------------------------------------------------------ capabilities


@pytest.mark.parametrize("name", ["image", "audio", "embeddedContext"])
def test_v2_prompt_capabilities(name):
    """Omitted and `null` are equivalent and mean the agent does not advertise
    support. Supplying `{}` means the agent supports ... content in prompts."""
    assert v2.supports(v2.decode("PromptCapabilities", {name: {}}), name)
    assert not v2.supports(v2.decode("PromptCapabilities", {name: None}), name)
    assert not v2.supports(v2.decode("PromptCapabilities", {}), name)


@pytest.mark.parametrize("package", sorted(SCHEMAS))
def test_every_capability_of_every_schema(package):
    p = load_generated(package)
    assert p.CAPABILITIES, "no capability found"
    checked = 0
    for cls, fields in p.CAPABILITIES.items():
        name = next(k for k, v in p.DEFINITIONS.items() if v is cls)
        for attribute, (field_name, kind) in fields.items():
            if attribute != field_name:
                continue  # the wire-name alias of a field checked below
            wire = p.encode(cls.from_wire({}))
            base = {k: v for k, v in wire.items()}
            present = dict(base, **{_wire(p, cls, attribute): {} if kind == "presence" else True})
            absent_null = dict(base, **{_wire(p, cls, attribute): None if kind == "presence" else False})
            assert p.supports(p.decode(name, present), attribute) is True
            assert p.supports(p.decode(name, absent_null), attribute) is False
            if kind == "presence":
                assert p.supports(p.decode(name, base), attribute) is False
            checked += 1
    assert checked >= 7


def _wire(p, cls, attribute):
    for key, (field_name, _) in p.CAPABILITIES[cls].items():
        if field_name == attribute and key != attribute:
            return key
    return attribute


def test_supports_names_unknown_capabilities():
    with pytest.raises(KeyError, match="known"):
        v2.supports(v2.decode("PromptCapabilities", {}), "video")


# ------------------------------------------------------------------ laws


def _upserts():
    rules = load_rules()
    for package, set_name in RULE_SETS.items():
        for entry in rule_set(rules, set_name, "rules")["upserts"]:
            yield pytest.param(package, entry, id=f"{package}:{entry['update']}")


_ROOTS = {name: json.loads(path.read_text()) for name, path in SCHEMAS.items()}


@functools.cache
def _validator(package: str, name: str) -> Draft202012Validator:
    return Draft202012Validator({"$defs": _ROOTS[package]["$defs"], "$ref": f"#/$defs/{name}"})


def _valid_update(p, package: str, entry, data):
    """A decoded valid update of ``entry`` with the entity's key ``k1``,
    built rather than filtered: every example is used."""
    name = entry["update"]
    raw = data.draw(valid_values(_ROOTS[package], name, _validator(package, name)), label=name)
    return p.decode(name, dict(raw, **{k: "k1" for k in entry["key"]}))


@pytest.mark.parametrize("package, entry", list(_upserts()))
@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_patch_laws(package, entry, data):
    p = load_generated(package)
    name = entry["update"]
    root = _ROOTS[package]
    keys = {k: "k1" for k in entry["key"]}
    a, b = _valid_update(p, package, entry, data), _valid_update(p, package, entry, data)
    state = p.apply(None, a)
    frozen = copy.deepcopy((state, b))
    after = p.apply(state, b)
    # apply never mutates its inputs.
    assert (state, b) == frozen
    # An update carrying only the key (and whatever else the type requires,
    # at its stored values) is the identity on an existing state.
    required = set(root["$defs"][name].get("required", ())) - set(keys)
    stored = p.encode(after)
    base = dict(keys, **{r: stored[r] for r in required})
    assert p.apply(after, p.decode(name, base)) == after
    # Applying the same update twice equals applying it once.
    assert p.apply(after, b) == after
    # A `_meta` patch of {} changes nothing.
    if "_meta" in entry["fields"] and entry["fields"]["_meta"]["rule"] == "meta-patch":
        assert p.apply(after, p.decode(name, dict(base, _meta={}))) == after
    # null then a value equals the value.
    nullable = [
        w for w, spec in entry["fields"].items() if spec["rule"] in ("null-clears", "null-resets", "collection")
    ]
    valid_b = p.encode(b)  # what lenient decoding kept of b's wire form
    for wire in nullable:
        if valid_b.get(wire) is not None:
            stored_a = p.encode(state)
            base_a = dict(keys, **{r: stored_a[r] for r in required})
            cleared = p.apply(state, p.decode(name, dict(base_a, **{wire: None})))
            value = p.decode(name, dict(base_a, **{wire: valid_b[wire]}))
            assert p.apply(cleared, value) == p.apply(state, value)
    # The snapshot of a state re-decodes to the same state (v2: every field
    # present, cleared values as null; v1 reads null as "unchanged", so from
    # a new entity it gives the initial value, which the snapshot also has).
    snap = p.encode(after)
    assert p.apply(None, p.decode(name, snap)) == after


# ------------------------------------------------------------------ a stream


def test_a_recorded_tool_call_stream_folds_to_the_expected_snapshot():
    """Created, streaming content, retitled, title cleared with null, meta keys
    patched and removed, completed."""
    stream = [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_7",
            "title": "Reading config",
            "kind": "read",
            "status": "in_progress",
            "locations": [{"path": "/repo/app.toml"}],
            "_meta": {"trace": "t1", "ui": {"icon": "file"}},
        },
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "call_7",
            "content": {"type": "content", "content": {"type": "text", "text": "[server]\n"}},
        },
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "call_7",
            "content": {"type": "content", "content": {"type": "text", "text": "port = 80\n"}},
        },
        {"sessionUpdate": "tool_call_update", "toolCallId": "call_7", "title": "Reading app.toml"},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_7",
            "title": None,
            "_meta": {"trace": None, "ui": {"spinner": False}, "progress": 1},
        },
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_7",
            "status": "completed",
            "rawOutput": {"bytes": 19},
        },
    ]
    state = None
    for message in stream:
        state = v2.apply(state, v2.decode("SessionUpdate", message))
    assert v2.encode(state) == {
        "toolCallId": "call_7",
        "name": None,
        "title": None,
        "kind": "read",
        "status": "completed",
        "content": [
            {"type": "content", "content": {"type": "text", "text": "[server]\n"}},
            {"type": "content", "content": {"type": "text", "text": "port = 80\n"}},
        ],
        "locations": [{"path": "/repo/app.toml"}],
        "rawInput": None,
        "rawOutput": {"bytes": 19},
        "capabilities": None,
        "_meta": {"ui": {"spinner": False}, "progress": 1},
    }


# ------------------------------------------------------------------ in place


def _in_place_upserts():
    for package, set_name in RULE_SETS.items():
        p = load_generated(package)
        for entry in rule_set(load_rules(), set_name, "rules")["upserts"]:
            function = p.patch._APPLY[p.DEFINITIONS[entry["update"]]]
            if hasattr(p.session, f"_{function.__name__}_in_place"):
                yield pytest.param(package, entry, id=f"{package}:{entry['update']}")


def test_the_session_folds_tool_call_updates_in_place():
    """The session module folds in place the upserts its fold does (v1: a
    tool call's and a compaction's updates)."""
    ids = [param.id for param in _in_place_upserts() if param.id.startswith("acp_v1:")]
    assert ids == ["acp_v1:ToolCallUpdate", "acp_v1:CompactionUpdate"]


@pytest.mark.parametrize("package, entry", list(_in_place_upserts()))
@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_an_in_place_fold_makes_what_apply_makes_and_says_what_it_replaced(package, entry, data):
    """The session fold patches a state it owns in place: the state becomes
    what the patch module's ``apply`` returns, and the old values the
    in-place fold returns restore it."""
    p = load_generated(package)
    name = entry["update"]
    keys = {k: "k1" for k in entry["key"]}
    a, b = _valid_update(p, package, entry, data), _valid_update(p, package, entry, data)
    in_place = getattr(p.session, f"_{p.patch._APPLY[type(b)].__name__}_in_place")
    state = p.apply(None, a)
    expected = p.apply(state, b)
    before = copy.deepcopy(state)
    patched = copy.copy(state)
    old = in_place(patched, b)
    assert patched == expected and state == before
    assert len(old) % 2 == 0
    for field, value in zip(old[::2], old[1::2], strict=True):
        setattr(patched, field, value)
    assert patched == before
    with pytest.raises(ValueError, match="k2"):
        in_place(copy.copy(state), p.decode(name, dict(p.encode(b), **{k: "k2" for k in keys})))
