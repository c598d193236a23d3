"""The codec entry points and JSON walks copied into every generated package
(``_codec.py``, the walks of ``_runtime.py``), tested as the ordinary modules
they are in the generator, over hand-written tables."""

from __future__ import annotations

import collections
import enum
import json
import math

import pytest
from acpgen.runtime import _codec
from acpgen.runtime._runtime import (
    UNSET,
    NotPlainJson,
    ValidationError,
    check_json,
    check_str,
    check_wire,
    salvage,
    type_error,
    wire_json,
    wire_map,
)


class Point:
    def __init__(self, x: object) -> None:
        self.x = x


def _decode_point(d, strict):
    if type(d) is not dict:
        raise type_error("an object", d)
    try:
        x = check_str(d["x"])
    except ValidationError as error:
        if strict:
            raise error.at("x") from None
        salvage(d["x"])
        x = UNSET
    return Point(x)


def _encode_point(o):
    return {"x": wire_json(o.x)}


SCHEMA = json.dumps({"Point": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}})
decode = _codec.decoding({"Point": (_decode_point, "#/$defs/Point")})
decode_class = _codec.class_decoding({Point: (_decode_point, "#/$defs/Point")})
encode = _codec.encoding({Point: _encode_point}, {Point: "#/$defs/Point"}, SCHEMA)


class Colour(str, enum.Enum):
    RED = "red"


def test_decode_looks_the_name_up_and_passes_strict():
    assert decode("Point", {"x": "a"}).x == "a"
    assert decode("Point", {"x": 1}).x is UNSET
    with pytest.raises(ValidationError) as info:
        decode("Point", {"x": 1}, strict=True)
    assert info.value.path == "$.x"
    with pytest.raises(KeyError, match="no definition named 'Nope'"):
        decode("Nope", {})
    assert decode_class(Point, {"x": "b"}).x == "b"
    with pytest.raises(KeyError, match="not a class of this package"):
        decode_class(int, {})


def test_a_refused_subclass_of_a_json_type_is_decoded_again_as_plain_json():
    # Lenient decoding would drop the str enum member; the entry point
    # decodes again with it replaced by the string it stands for.
    point = decode("Point", {"x": Colour.RED})
    assert point.x == "red" and type(point.x) is str
    point = decode_class(Point, collections.OrderedDict(x=Colour.RED))
    assert type(point.x) is str


def test_deep_input_is_a_validation_error_not_a_recursion_error():
    def deep(d, strict):
        return deep(d, strict)

    with pytest.raises(ValidationError, match="nested too deeply"):
        _codec.decoding({"D": (deep, "#/$defs/D")})("D", {})


def test_encode_fast_path_and_validation():
    assert encode(Point("a")) == {"x": "a"}
    assert encode(Point("a"), validate=True) == {"x": "a"}
    with pytest.raises(ValidationError) as info:
        encode(Point(5), validate=True)
    assert info.value.path == "$.x"
    with pytest.raises(ValidationError, match="UNSET"):
        encode(Point(UNSET), validate=True)
    with pytest.raises(TypeError, match="not list"):
        encode([Point("a")], validate=True)
    assert encode([Point("a"), {"k": Colour.RED}, (1,)]) == [{"x": "a"}, {"k": "red"}, (1,)]
    with pytest.raises(ValueError, match="UNSET has no wire form"):
        encode([UNSET])


def test_encode_raises_on_a_reference_cycle_in_a_json_field():
    cycle: list[object] = []
    cycle.append({"again": cycle})
    with pytest.raises(ValueError, match="reference cycle"):
        encode(Point(cycle))
    with pytest.raises(ValueError, match="reference cycle"):
        encode([cycle])
    shared = [1]
    assert encode(Point([shared, {"a": shared}])) == {"x": [[1], {"a": [1]}]}


def test_wire_json_and_wire_map():
    flat = {"a": 1, "b": "x", "c": None, "d": True}
    assert wire_json(flat) is flat and wire_json("s") == "s" and wire_json(None) is None
    copy = wire_map(flat)
    assert copy == flat and copy is not flat
    loop: dict[str, object] = {}
    loop["self"] = loop
    for value in (loop, [loop], collections.OrderedDict(a=loop)):
        with pytest.raises(ValueError, match="reference cycle"):
            wire_json(value)
    with pytest.raises(ValueError, match="reference cycle"):
        wire_map({"a": loop})


def test_check_json_names_what_json_cannot_hold_by_its_path():
    cases = [
        ({"a": [1, math.nan]}, "$.a[1]", "finite"),
        ({"a": {1: "x"}}, "$.a", "string key"),
        ({"a": [set()]}, "$.a[0]", "set is not a JSON value"),
        ([math.inf], "$[0]", "finite"),
    ]
    for value, path, message in cases:
        with pytest.raises(ValidationError, match=message) as info:
            check_json(value)
        assert info.value.path == path
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(ValidationError, match="cycle") as info:
        check_json({"a": [cycle]})
    assert info.value.path == "$.a[0][0]"
    for value in ({"a": collections.OrderedDict()}, [Colour.RED], {Colour.RED: 1}):
        with pytest.raises(NotPlainJson):
            check_json(value)
    check_json({"a": [1, 2.5, "x", None, {"b": [True]}]})


def test_check_wire_refuses_subclasses_and_is_linear_in_depth():
    with pytest.raises(ValidationError, match="OrderedDict is not a JSON value"):
        check_wire({"a": collections.OrderedDict()})
    # 200,000 levels: each level's path is built only for an error, so this
    # is one step a level (a path tuple per level would be 2*10^10 steps).
    depth = 200_000
    deep: list[object] = []
    inner = deep
    for _ in range(depth):
        nested: list[object] = []
        inner.append(nested)
        inner = nested
    check_wire(deep)
    check_json(deep)
    inner.append(math.nan)
    with pytest.raises(ValidationError) as info:
        check_wire(deep)
    assert info.value.segments == (0,) * (depth + 1)
