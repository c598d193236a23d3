"""Values a Python caller can pass that ``json.loads`` does not make (or makes
but JSON does not have): each is a ValidationError with a path, or behaves as
the README says."""

from __future__ import annotations

import collections
import enum
import json

import pytest

from ..conftest import load_generated

v1 = load_generated("acp_v1")
v2 = load_generated("acp_v2")
BOTH = pytest.mark.parametrize("p", [v1, v2], ids=["v1", "v2"])
HUGE = 10**5000  # beyond the 4,300 digits int -> str converts


def _error(p, name, data, strict=False):
    with pytest.raises(p.ValidationError) as info:
        p.decode(name, data, strict=strict)
    return info.value


# ------------------------------------------------------------------ numbers


@BOTH
@pytest.mark.parametrize("strict", [False, True])
def test_a_huge_integer_is_a_validation_error_never_a_value_error_from_str(p, strict):
    error = _error(p, "ProtocolVersion", HUGE, strict)
    assert error.path == "$" and "digits" in error.message
    assert "digits" in str(error)
    # In a default-on-error field lenient mode drops it; strict names it.
    update = {"toolCallId": "c", "kind": HUGE}
    assert p.decode("ToolCallUpdate", update).kind is p.UNSET
    assert _error(p, "ToolCallUpdate", update, strict=True).path == "$.kind"


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinities_are_not_numbers(strict, bad):
    error = _error(v2, "Cost", {"amount": bad, "currency": "USD"}, strict)
    assert error.path == "$.amount"
    assert v2.decode("Cost", {"amount": 1.5, "currency": "USD"}).amount == 1.5


# ------------------------------------------------------------------ keys and paths


@BOTH
def test_a_key_that_is_not_a_string_is_an_error_whose_str_works(p):
    content = {"type": "text", "text": "t", "_meta": {1: "x"}} if p is v2 else {"text": "t", "_meta": {1: "x"}}
    error = _error(p, "TextContent", content, strict=True)
    assert error.path == "$._meta"
    assert str(error) == "$._meta: expected a string key, found integer 1"
    # _meta is x-deserialize-default-on-error: lenient mode drops it.
    assert p.decode("TextContent", content).meta is p.UNSET


def test_a_path_with_an_odd_segment_still_prints():
    error = v2.ValidationError("m", ("a", (1, 2), None))
    assert str(error) == "$.a[[1, 2]][null]: m"


# ------------------------------------------------------------------ subclasses of the JSON types


@BOTH
@pytest.mark.parametrize("strict", [False, True])
def test_subclasses_of_the_json_types_decode_as_the_json_they_stand_for(p, strict):
    class Kind(str, enum.Enum):
        TEXT = "text"

    class Number(enum.IntEnum):
        SEVEN = 7

    text = collections.OrderedDict([("type", Kind.TEXT), ("text", Kind.TEXT)])
    block = p.decode("ContentBlock", text, strict=strict)
    assert type(block).__name__ == "TextContentBlock"
    assert type(block.text) is str and block.text == "text"
    request_id = p.decode("RequestId", Number.SEVEN, strict=strict)
    assert type(request_id) is int and request_id == 7
    wire = p.encode(block)
    assert json.loads(json.dumps(wire)) == wire and type(wire["text"]) is str
    # bool stays a boolean, never an integer.
    assert _error(p, "RequestId", True, strict).path == "$"


class _Kind(str, enum.Enum):
    EXECUTE = "execute"
    END_TURN = "end_turn"


class _Size(enum.IntEnum):
    BIG = 1289


# Subclasses where lenient decoding drops what it refuses: a default-on-error
# field (a map, an enum, an integer), an item of a skip-invalid list, an Any
# field, and (v2) a default-on-error tag. Inside a plain dict, so the decoders
# get past the top-level type check with them.
_NESTED = {
    "ToolCallUpdate": {
        "toolCallId": "c",
        "kind": _Kind.EXECUTE,
        "content": [collections.OrderedDict(type="terminal", terminalId="t")],
        "rawInput": collections.OrderedDict(a=[1]),
        "_meta": collections.OrderedDict(trace="x"),
    },
    "ResourceLink": {"name": "n", "uri": "u", "size": _Size.BIG},
}


@BOTH
@pytest.mark.parametrize("name", sorted(_NESTED))
def test_nested_subclasses_are_decoded_where_lenient_decoding_would_drop_them(p, name):
    data = _NESTED[name]
    plain = json.loads(json.dumps(data))
    decoded = p.decode(name, data)
    assert decoded == p.decode(name, plain)
    assert p.encode(decoded) == plain
    assert p.encode(decoded, validate=True) == plain


def test_a_union_never_passes_to_another_variant_what_a_subclass_made_one_refuse():
    class Flag(str, enum.Enum):
        VERBOSE = "--verbose"

    # Tagged with an untagged fallback: the terminal variant, not the fallback.
    method = v1.decode("AuthMethod", {"type": "terminal", "id": "i", "name": "n", "args": [Flag.VERBOSE]})
    assert type(method).__name__ == "TerminalAuthMethod" and method.args == ["--verbose"]
    # Tried in order, the last member taking any value: the first member.
    data = v2.decode("ErrorData", {"requested": _Size.BIG, "supported": [1]})
    assert type(data).__name__ == "UnsupportedProtocolVersionErrorData" and type(data.requested) is int


@BOTH
def test_a_str_enum_member_as_a_map_key_is_the_string_it_stands_for(p):
    class Key(str, enum.Enum):
        TRACE = "trace"

    update = p.decode("ToolCallUpdate", {"toolCallId": "c", "_meta": {Key.TRACE: "x"}})
    assert update.meta == {"trace": "x"} and [type(k) for k in update.meta] == [str]


def test_a_default_on_error_tag_that_is_a_str_enum_member_selects_its_variant():
    state = v2.decode("IdleStateUpdate", {"stopReason": _Kind.END_TURN})
    assert type(state).__name__ == "EndTurnIdleStateUpdate"
    # A tag that is no string at all is still dropped (read as absent).
    assert type(v2.decode("IdleStateUpdate", {"stopReason": 5})).__name__ == "NoneIdleStateUpdate"


def test_an_any_field_holding_an_ordered_dict_gets_a_plain_shallow_copy():
    raw = collections.OrderedDict(a=[1])
    update = v2.decode("ToolCallUpdate", {"toolCallId": "c", "rawInput": raw})
    assert type(update.raw_input) is dict and update.raw_input == {"a": [1]}
    assert update.raw_input["a"] is raw["a"]


def test_a_reference_cycle_in_the_input_is_an_error():
    cycle: list = []
    cycle.append(cycle)
    error = _error(v2, "ContentBlock", collections.OrderedDict(type="text", text=cycle))
    assert "cycle" in error.message or error.path == "$.text"


# ------------------------------------------------------------------ what decode keeps


def test_any_fields_and_maps_are_shallow_copies():
    raw = {"deep": [1]}
    meta = {"k": [1]}
    update = v2.decode("ToolCallUpdate", {"toolCallId": "c", "rawInput": raw, "_meta": meta})
    assert update.raw_input == raw and update.raw_input is not raw
    assert update.raw_input["deep"] is raw["deep"]  # nested values are shared (README)
    assert update.meta is not meta and update.meta["k"] is meta["k"]


# ------------------------------------------------------------------ encode


def test_encode_raises_on_a_reference_cycle():
    cycle: list = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="cycle"):
        v2.encode(cycle)
    shared = [1]
    assert v2.encode([shared, shared]) == [[1], [1]]  # shared is not a cycle


def test_encode_validate_reports_what_is_wrong_with_a_path():
    assert v2.encode(v2.ToolCallUpdate(tool_call_id=5)) == {"toolCallId": 5}  # trusted by default
    with pytest.raises(v2.ValidationError) as info:
        v2.encode(v2.ToolCallUpdate(tool_call_id=5), validate=True)  # type: ignore[arg-type]
    assert info.value.path == "$.toolCallId"
    with pytest.raises(v2.ValidationError) as info:
        v2.encode(v2.TextContentBlock(text=v2.UNSET), validate=True)  # type: ignore[arg-type]
    assert info.value.path == "$.text" and "UNSET" in info.value.message
    with pytest.raises(v2.ValidationError) as info:
        v2.encode(v2.OtherContentBlock(type="text"), validate=True)
    assert info.value.path == "$"
    with pytest.raises(v2.ValidationError) as info:
        v2.encode(v2.Cost(amount=float("nan"), currency="USD"), validate=True)
    assert info.value.path == "$.amount"
    with pytest.raises(v2.ValidationError) as info:
        v2.encode(v2.TextContent(text="t", meta={1: 2}), validate=True)  # type: ignore[dict-item]
    assert info.value.path == "$._meta"
    good = v2.ToolCallUpdate(tool_call_id="c", title=None)
    assert v2.encode(good, validate=True) == v2.encode(good) == {"toolCallId": "c", "title": None}
    assert v2.encode(v2.ToolKind.READ, validate=True) == "read"
    with pytest.raises(TypeError):
        v2.encode([good], validate=True)


# ------------------------------------------------------------------ apply


def test_apply_shares_no_list_or_dict_between_the_old_and_the_new_state():
    first = v2.decode(
        "ToolCallUpdate", {"toolCallId": "c", "title": "t", "locations": [{"path": "/a"}], "_meta": {"k": 1}}
    )
    old = v2.apply(None, first)
    new = v2.apply(old, v2.decode("ToolCallUpdate", {"toolCallId": "c", "title": "u"}))
    assert new.title == "u" and old.title == "t"
    assert new.locations == old.locations and new.locations is not old.locations
    assert new.meta == old.meta and new.meta is not old.meta
    chunked = v2.apply(
        None,
        v2.decode(
            "SessionUpdate",
            {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text", "text": "x"}},
        ),
    )
    longer = v2.apply(
        chunked,
        v2.decode(
            "SessionUpdate",
            {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {"type": "text", "text": "y"}},
        ),
    )
    assert len(chunked.content) == 1 and len(longer.content) == 2
    assert all(
        getattr(longer, name) is not getattr(chunked, name)
        for name in ("meta",)
        if isinstance(getattr(chunked, name, None), dict)
    )
    new.locations.append("x")
    new.meta["z"] = 2
    assert len(old.locations) == 1 and "z" not in old.meta
