"""The JSON-RPC layer of the runtime (``_jsonrpc``), with a tiny method table:
envelopes a hostile peer sends, and replies that have no JSON text."""

from __future__ import annotations

import collections
import json
import math

import pytest
from acpgen.runtime import _jsonrpc as rpc
from acpgen.runtime._runtime import ValidationError


def _decode(name: str, value: object, strict: bool = False) -> object:
    if not isinstance(value, dict):
        raise ValidationError(f"expected an object for {name}")
    return value


def _encode(value: object, validate: bool = False) -> object:
    return value


METHODS = {
    "echo": rpc.MethodInfo("echo", request=rpc.RequestInfo("agent", dict, dict, "echo", "P", "R")),
    "note": rpc.MethodInfo("note", notification=rpc.NotificationInfo("agent", dict, "note", "P")),
}
CODEC = rpc.MessageCodec(METHODS, _decode, _encode, null_request_id=False)


def test_a_jsonrpc_integer_too_long_to_print_is_a_validation_error():
    # Python refuses to print an integer of more than 4,300 digits (json.loads
    # refuses to read one, but a value built in Python reaches decode_message):
    # the message must say what it found without printing it.
    huge = 10**5000
    with pytest.raises(ValidationError) as raised:
        CODEC.decode_message({"jsonrpc": huge, "id": 1, "method": "echo"})
    assert "a very large integer" in raised.value.message
    assert len(raised.value.message) < 200


def test_a_huge_jsonrpc_string_is_not_echoed():
    with pytest.raises(ValidationError) as raised:
        CODEC.decode_message({"jsonrpc": "x" * 10_000_000, "id": 1, "method": "echo"})
    assert len(raised.value.message) < 200
    assert "xxx..." in raised.value.message


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0"},
        {"jsonrpc": "2.0", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": [1], "method": "echo"},
        {"jsonrpc": "2.0", "id": True, "method": "echo"},
        {"jsonrpc": "2.0", "id": None, "method": "echo"},
        {"jsonrpc": "2.0", "result": {}},
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "1", "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}},
        {"jsonrpc": "1.0", "id": 1, "method": "echo"},
        [],
        "2.0",
    ],
)
def test_bad_envelopes_are_validation_errors(message):
    with pytest.raises(ValidationError):
        CODEC.decode_message(message)


def test_a_null_request_id_is_read_only_where_the_schema_allows_it():
    codec = rpc.MessageCodec(METHODS, _decode, _encode, null_request_id=True)
    assert codec.decode_message({"jsonrpc": "2.0", "id": None, "method": "echo"}).id is None


def test_params_that_do_not_decode_are_a_params_error_with_the_request_id():
    with pytest.raises(rpc.ParamsError) as raised:
        CODEC.decode_message({"jsonrpc": "2.0", "id": 4, "method": "echo", "params": [1]})
    assert raised.value.request and raised.value.id == 4 and raised.value.method == "echo"
    with pytest.raises(rpc.ParamsError) as raised:
        CODEC.decode_message({"jsonrpc": "2.0", "method": "note", "params": 3})
    assert not raised.value.request


@pytest.mark.parametrize(
    "text",
    [
        "[" * 1000 + "]" * 1000,
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        '{"jsonrpc":"2.0","id":1,"method":"echo","params":{"_meta":' + "[" * 5000 + "]" * 5000 + "}}",
        "",
        "{",
        "\x00",
        "NaN-ish",
    ],
)
def test_load_message_raises_value_error_for_anything_not_json(text):
    # How deep json parses differs between Pythons (3.13's reads a 1,000-deep
    # array that 3.11's refuses): whatever json refuses, load_message refuses
    # with a ValueError, never a RecursionError; what json reads, it reads.
    try:
        expected = json.loads(text)
    except (ValueError, RecursionError):
        with pytest.raises(ValueError):
            rpc.load_message(text.encode())
    else:
        assert rpc.load_message(text.encode()) == expected


def test_a_document_json_cannot_parse_is_a_value_error_on_every_python():
    deep = "[" * 10_000_000 + "]" * 10_000_000
    with pytest.raises(ValueError):
        rpc.load_message(deep.encode())


@pytest.mark.parametrize(
    "result",
    [
        "\ud800",
        {"\udfff": 1},
        [math.nan],
        math.inf,
        object(),
        {1j: 2},
    ],
    ids=["lone-surrogate", "surrogate-key", "nan", "infinity", "object", "complex-key"],
)
def test_dump_message_refuses_what_has_no_json_text(result):
    with pytest.raises(ValueError):
        rpc.dump_message(CODEC.encode_message(rpc.Response(1, result)))


def test_dump_message_refuses_a_cycle_and_nesting_too_deep():
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(ValueError):
        rpc.dump_message({"result": cycle})
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ValueError):
        rpc.dump_message({"result": deep})


def test_dump_message_is_one_line_of_utf8_json():
    data = rpc.dump_message({"text": "a\nb \u2028 é"})
    assert b"\n" not in data
    assert json.loads(data) == {"text": "a\nb \u2028 é"}
    assert "é".encode() in data


def test_a_request_error_shows_a_short_preview_of_its_data():
    error = rpc.RequestError(-1, "m", {"x": "y" * 1000})
    assert len(str(error)) < 300
    unprintable = rpc.RequestError(-1, "m", object())
    assert "object" in str(unprintable)


def test_decoded_messages_are_the_frozen_classes_with_every_field():
    import dataclasses

    request = CODEC.decode_message({"jsonrpc": "2.0", "id": 7, "method": "echo", "params": {"a": 1}})
    note = CODEC.decode_message({"jsonrpc": "2.0", "method": "note", "params": {"b": 2}})
    other = CODEC.decode_message({"jsonrpc": "2.0", "id": "x", "method": "_ext"})
    assert request == rpc.Request(7, "echo", {"a": 1}) and type(request) is rpc.Request
    assert note == rpc.Notification("note", {"b": 2}) and type(note) is rpc.Notification
    assert other == rpc.Request("x", "_ext", None)
    assert repr(note) == "Notification(method='note', params={'b': 2})"
    with pytest.raises(dataclasses.FrozenInstanceError):
        note.method = "other"  # type: ignore[misc]


# ---------------------------------------------------------------- bound decoders
#
# A package's ``decode`` lends its table's decoders (``decoder_of``), which
# decode_message calls directly; when one refuses, the params go through
# ``decode`` again, which retries plain JSON and words the error.


def _bound_codec() -> tuple[rpc.MessageCodec, list[str]]:
    """A codec over a real ``decoding`` table whose decoder refuses what is
    not a plain dict of ints (as a generated decoder refuses an OrderedDict
    member where it needs plain JSON) and counts its calls."""
    import collections

    from acpgen.runtime._codec import decoding
    from acpgen.runtime._runtime import NotPlainJson

    calls: list[str] = []

    def decode_p(data: object, strict: bool) -> object:
        calls.append("P")
        if type(data) is not dict:
            if isinstance(data, collections.OrderedDict):
                raise NotPlainJson
            raise ValidationError("expected an object", ())
        return {key: int(value) for key, value in data.items()}

    decode = decoding({"P": (decode_p, "#/$defs/P"), "R": (decode_p, "#/$defs/R")})
    return rpc.MessageCodec(METHODS, decode, _encode, null_request_id=False), calls


def test_a_known_method_is_decoded_by_its_bound_decoder_once():
    codec, calls = _bound_codec()
    note = codec.decode_message({"jsonrpc": "2.0", "method": "note", "params": {"a": 1}})
    request = codec.decode_message({"jsonrpc": "2.0", "id": 7, "method": "echo", "params": {"b": 2}})
    assert note == rpc.Notification("note", {"a": 1})
    assert request == rpc.Request(7, "echo", {"b": 2})
    assert calls == ["P", "P"]


def test_params_a_bound_decoder_refuses_are_retried_as_plain_json():
    import collections

    codec, calls = _bound_codec()
    params = collections.OrderedDict(a=1)
    for message in (
        {"jsonrpc": "2.0", "method": "note", "params": params},
        {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": params},
    ):
        decoded = codec.decode_message(message)
        assert decoded.params == {"a": 1} and type(decoded.params) is dict
    # Each: the bound decoder, then decode's first try and its retry.
    assert calls == ["P"] * 6


def test_params_a_bound_decoder_refuses_for_good_are_a_params_error_in_both_modes():
    codec, _ = _bound_codec()
    for strict in (False, True):
        with pytest.raises(rpc.ParamsError) as raised:
            codec.decode_message({"jsonrpc": "2.0", "method": "note", "params": [1]}, strict=strict)
        assert not raised.value.request and raised.value.method == "note"
        with pytest.raises(rpc.ParamsError) as raised:
            codec.decode_message({"jsonrpc": "2.0", "id": 3, "method": "echo", "params": [1]}, strict)
        assert raised.value.request and raised.value.id == 3


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "note", "params": {"a": 1}},
        {"jsonrpc": "2.0", "method": "note"},
        {"jsonrpc": "2.0", "method": "_unknown", "params": [1]},
        {"jsonrpc": "2.0", "method": "note", "params": [1]},
        {"jsonrpc": "2.0", "method": "echo", "params": {"b": 2}},
        {"jsonrpc": "2.0", "method": ["note"]},
        {"jsonrpc": "2.0", "method": 5, "params": {}},
    ],
)
def test_a_notification_decodes_the_same_leniently_and_strictly(message):
    """One path reads notifications in both modes: the same value, or the
    same error at the same place (strict only adds the checks of the
    envelope's other members, which these messages do not have)."""
    codec, _ = _bound_codec()

    def outcome(strict: bool) -> object:
        try:
            return codec.decode_message(dict(message), strict=strict)
        except ValidationError as error:
            return (type(error), error.message, error.path)

    assert outcome(False) == outcome(True)


def test_params_too_deep_for_a_bound_decoder_are_a_params_error():
    from acpgen.runtime._codec import decoding

    def recursive(data: object, strict: bool) -> object:
        return recursive(data, strict)

    codec = rpc.MessageCodec(METHODS, decoding({"P": (recursive, "#/$defs/P")}), _encode, null_request_id=False)
    with pytest.raises(rpc.ParamsError) as raised:
        codec.decode_message({"jsonrpc": "2.0", "method": "note", "params": {}})
    assert "nested too deeply" in raised.value.message


def test_a_result_is_decoded_by_its_bound_decoder_and_through_decode_only_when_refused():
    """decode_result calls the result's bound decoder (one call, no lookup
    by name); what it refuses goes through ``decode``, which retries plain
    JSON and words the error, as before; in lenient mode a null result
    reads as ``{}``."""
    import collections

    from acpgen.runtime._codec import decoding

    bound, _ = _bound_codec()
    table = bound._decode
    by_name: list[str] = []

    def decode(name: str, data: object, strict: bool = False) -> object:
        by_name.append(name)
        return table(name, data, strict=strict)

    decode.decoder_of = table.decoder_of  # type: ignore[attr-defined]
    codec = rpc.MessageCodec(METHODS, decode, _encode, null_request_id=False)
    assert codec.decode_result("echo", {"b": "2"}) == {"b": 2}
    assert codec.decode_result("_unknown", [1]) == [1]
    assert by_name == []
    retried = codec.decode_result("echo", collections.OrderedDict(a=1))
    assert retried == {"a": 1} and type(retried) is dict
    assert codec.decode_result("echo", None) == {}
    assert by_name == ["R", "R", "R"]
    with pytest.raises(ValidationError) as raised:
        codec.decode_result("echo", None, strict=True)
    with pytest.raises(ValidationError) as direct:
        table("R", None, strict=True)
    assert (raised.value.message, raised.value.path) == (direct.value.message, direct.value.path)

    def recursive(data: object, strict: bool) -> object:
        return recursive(data, strict)

    deep = rpc.MessageCodec(
        METHODS,
        decoding({"P": (recursive, "#/$defs/P"), "R": (recursive, "#/$defs/R")}),
        _encode,
        null_request_id=False,
    )
    with pytest.raises(ValidationError, match="nested too deeply"):
        deep.decode_result("echo", {})


def test_a_method_name_that_is_not_hashable_is_a_validation_error():
    for message in (
        {"jsonrpc": "2.0", "method": ["note"]},
        {"jsonrpc": "2.0", "method": {"a": 1}, "params": {}},
        {"jsonrpc": "2.0", "method": None},
    ):
        with pytest.raises(ValidationError) as raised:
            CODEC.decode_message(message)
        assert raised.value.path == "$.method"
        assert "expected the method name (a string)" in raised.value.message


def test_ids_beyond_the_plain_types_go_through_the_full_check():
    class Text(str):
        pass

    # An integral float reads as an int, a str subclass is kept, a bool is refused.
    for raw, expected in ((2.0, 2), (Text("a"), "a")):
        request = CODEC.decode_message({"jsonrpc": "2.0", "id": raw, "method": "echo", "params": {}})
        assert request.id == expected and isinstance(request.id, type(expected))
        answer = CODEC.decode_message({"jsonrpc": "2.0", "id": raw, "result": {}})
        assert answer == rpc.Response(expected, {})
    assert type(CODEC.decode_message({"jsonrpc": "2.0", "id": 2.0, "result": {}}).id) is int
    for bad in (True, 1.5, None):
        with pytest.raises(ValidationError):
            CODEC.decode_message({"jsonrpc": "2.0", "id": bad, "result": {}})


def test_strict_decoding_refuses_other_envelope_members_that_are_not_json():
    cycle: list[object] = []
    cycle.append(cycle)
    request = {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {}}
    for extra, path in [
        ({"x": math.nan}, "$.x"),
        ({"x": [1, -math.inf]}, "$.x[1]"),
        ({"x": {2: 1}}, "$.x"),
        ({3: "x"}, "$"),
        ({"x": cycle}, "$.x[0]"),
    ]:
        for message in (request, {"jsonrpc": "2.0", "id": 1, "result": {}}):
            with pytest.raises(ValidationError) as raised:
                CODEC.decode_message({**message, **extra}, strict=True)
            assert raised.value.path == path
            CODEC.decode_message({**message, **extra})  # lenient: ignored
    decoded = CODEC.decode_message({**request, "x": {"a": [1.5, None]}}, strict=True)
    assert decoded == rpc.Request(1, "echo", {})


def test_strict_decoding_reads_subclasses_of_json_types_in_other_members_as_json():
    request = {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {}}
    ordered = collections.OrderedDict([("a", [1, None])])
    assert CODEC.decode_message({**request, "x": ordered}, strict=True) == rpc.Request(1, "echo", {})
    with pytest.raises(ValidationError) as raised:
        CODEC.decode_message({**request, "x": collections.OrderedDict([("a", math.nan)])}, strict=True)
    assert raised.value.path == "$.x.a"
