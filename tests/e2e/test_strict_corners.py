"""Strict mode on the corners of JSON Schema, and names and values that
used to break a generated package: each case generates a small schema and
imports the package."""

from __future__ import annotations

import importlib
import json
import math
import sys

import pytest
from acpgen.errors import AcpgenError
from acpgen.output.write import write_packages
from acpgen.pipeline import build_package
from jsonschema import Draft202012Validator

from ..conftest import schema_with

DEFS = {
    "Never": {"type": "object", "properties": {"f": False, "t": True}},
    "Number": {"type": "object", "properties": {"n": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}},
    "Meta": {
        "type": "object",
        "properties": {"_meta": {"type": ["object", "null"], "additionalProperties": True}, "x": {}},
    },
    "Shape": {
        "oneOf": [
            {
                "type": "object",
                "properties": {"kind": {"const": "circle", "type": "string"}, "r": {"type": "number"}},
                "required": ["kind"],
            },
            {
                "type": "object",
                "properties": {"kind": {"const": "square", "type": "string"}},
                "required": ["kind"],
            },
        ],
        "discriminator": {"propertyName": "kind"},
    },
    "Selfish": {
        "type": "object",
        "properties": {"self": {"type": "string"}, "cls": {"type": "string"}, "strict": {"type": "boolean"}},
        "required": ["self"],
    },
}
CASES = [
    ("Never", {"f": True}),
    ("Never", {"f": None}),
    ("Never", {"t": [1, {"a": None}]}),
    ("Never", {}),
    ("Number", {"n": 7}),
    ("Number", {"n": 7.0}),
    ("Number", {"n": 7.5}),
    ("Number", {"n": "7"}),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("strict_corners")
    path = tmp / "corners.schema.json"
    path.write_text(json.dumps(schema_with(DEFS)), encoding="utf-8")
    write_packages(tmp / "out", {"acpgen_strict_corners": build_package(path, "acpgen_strict_corners")})
    sys.path.insert(0, str(tmp / "out"))
    try:
        yield importlib.import_module("acpgen_strict_corners")
    finally:
        sys.path.remove(str(tmp / "out"))


@pytest.mark.parametrize("name, value", CASES)
def test_strict_agrees_with_jsonschema(package, name, value):
    expected = Draft202012Validator({"$defs": DEFS, "$ref": f"#/$defs/{name}"}).is_valid(value)
    try:
        package.decode(name, value, strict=True)
        accepted = True
    except package.ValidationError:
        accepted = False
    assert accepted == expected


def test_a_false_subschema_refuses_every_value_and_true_takes_any(package):
    with pytest.raises(package.ValidationError) as info:
        package.decode("Never", {"f": True}, strict=True)
    assert info.value.path == "$.f"
    assert package.decode("Never", {"t": {"any": [1]}}, strict=True).t == {"any": [1]}


def test_one_of_with_overlapping_branches_takes_exactly_one(package):
    for strict in (True, False):
        with pytest.raises(package.ValidationError) as info:
            package.decode("Number", {"n": 7}, strict=strict)
        assert info.value.path == "$.n" and "more than one" in info.value.message
    assert package.decode("Number", {"n": 7.5}, strict=True).n == 7.5


def test_a_field_named_self_gets_a_working_init(package):
    value = package.Selfish(self="me", cls="c", strict=True)
    assert (value.self, value.cls, value.strict) == ("me", "c", True)
    assert package.encode(value) == {"self": "me", "cls": "c", "strict": True}
    assert package.decode("Selfish", {"self": "me"}) == package.Selfish(self="me")


def test_strict_decode_refuses_what_json_cannot_hold_in_json_fields(package):
    cycle: list[object] = []
    cycle.append(cycle)
    cases = [
        ({"_meta": {"a": math.nan}}, "$._meta.a"),
        ({"_meta": {"a": {1: "x"}}}, "$._meta.a"),
        ({"x": [1, math.inf]}, "$.x[1]"),
        ({"x": {"k": [cycle]}}, "$.x.k[0][0]"),
        ({"x": {2: 1}}, "$.x"),
    ]
    for value, path in cases:
        with pytest.raises(package.ValidationError) as info:
            package.decode("Meta", value, strict=True)
        assert info.value.path == path
        # What strict accepts, encode(validate=True) accepts too.
    accepted = package.decode("Meta", {"_meta": {"a": [1.5, None]}, "x": {"k": "v"}}, strict=True)
    assert package.encode(accepted, validate=True) == {"_meta": {"a": [1.5, None]}, "x": {"k": "v"}}
    # Lenient decoding keeps such values, as the reference keeps any JSON.
    assert math.isnan(package.decode("Meta", {"x": math.nan}).x)


def _not_json() -> list[tuple[str, object, str]]:
    """Values that are no JSON value, each with the path below the member
    holding it where strict decoding must refuse it."""
    cycle: dict[str, object] = {}
    cycle["again"] = [cycle]
    return [
        ("nan", math.nan, ""),
        ("-inf", -math.inf, ""),
        ("nested-inf", {"a": [1, math.inf]}, ".a[1]"),
        ("int-key", {1: "x"}, ""),
        ("none-key", {"a": {None: 1}}, ".a"),
        ("cycle", cycle, ".again[0]"),
        ("object", object(), ""),
    ]


@pytest.mark.parametrize("name, base", [("Selfish", {"self": "me"}), ("Shape", {"kind": "circle", "r": 1})])
def test_strict_decode_refuses_what_json_cannot_hold_in_undeclared_members(package, name, base):
    # The schema lets undeclared members through (no additionalProperties):
    # JSON Schema takes any JSON value there, and only JSON values.
    for what, value, below in _not_json():
        with pytest.raises(package.ValidationError) as info:
            package.decode(name, {**base, "other": value}, strict=True)
        assert info.value.path == "$.other" + below, what
        # Lenient decoding drops undeclared members, as the reference does.
        package.decode(name, {**base, "other": value})
    for key in (2, None, ("a",)):
        with pytest.raises(package.ValidationError, match="a string key"):
            package.decode(name, {**base, key: 1}, strict=True)
    # A JSON value there is accepted, and each agrees with jsonschema.
    valid = {**base, "other": {"a": [1.5, None, "x"]}}
    assert Draft202012Validator({"$defs": DEFS, "$ref": f"#/$defs/{name}"}).is_valid(valid)
    assert package.encode(package.decode(name, valid, strict=True), validate=True) == base


def test_strict_decode_refuses_an_object_that_holds_itself_as_an_undeclared_member(package):
    value: dict[str, object] = {"self": "me"}
    value["again"] = value
    with pytest.raises(package.ValidationError, match="reference cycle"):
        package.decode("Selfish", value, strict=True)


def test_plain_encode_raises_on_a_cycle_in_a_json_field(package):
    cycle: list[object] = []
    cycle.append({"again": cycle})
    for value in (package.Meta(x=cycle), package.Meta(meta={"k": cycle})):
        with pytest.raises(ValueError, match="reference cycle"):
            package.encode(value)
    shared = [1]
    assert package.encode(package.Meta(x=[shared, shared])) == {"x": [[1], [1]]}


def test_encode_validate_is_linear_in_nesting_depth(package):
    # 100,000 levels: a path tuple per level, as before, is 5*10^9 steps.
    deep: list[object] = []
    inner = deep
    for _ in range(100_000):
        nested: list[object] = []
        inner.append(nested)
        inner = nested
    assert package.encode(package.Meta(x=deep), validate=True)["x"] is deep
    assert package.decode("Meta", {"x": deep}, strict=True).x == deep


def _build(tmp_path, defs, extra=None):
    path = tmp_path / "s.schema.json"
    path.write_text(json.dumps({**schema_with(defs), **(extra or {})}), encoding="utf-8")
    return build_package(path, "acpgen_refused")


def test_a_nested_id_is_refused_naming_its_pointer(tmp_path):
    defs = {
        "A": {"$id": "https://example.com/a", "type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
        "B": {},
    }
    with pytest.raises(AcpgenError) as info:
        _build(tmp_path, defs)
    assert "nested $id" in str(info.value) and "/$defs/A/$id" in str(info.value)
    _build(tmp_path, {"B": {"type": "string"}}, {"$id": "https://example.com/root"})  # the root's own is fine


@pytest.mark.parametrize("pattern", ["(a+)+$", "^(a|a)*$", "(?:x\\d*){2,}", "((ab)+)+", "(a?){3}"])
def test_a_pattern_that_can_backtrack_exponentially_is_refused(tmp_path, pattern):
    defs = {"S": {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}}
    with pytest.raises(AcpgenError) as info:
        _build(tmp_path, defs)
    assert "exponential" in str(info.value) and "/$defs/S/properties/s/pattern" in str(info.value)
    keyed = {"S": {"type": "object", "patternProperties": {pattern: {}}}}
    with pytest.raises(AcpgenError, match="exponential"):
        _build(tmp_path, keyed)


@pytest.mark.parametrize("pattern", ["^[a-z]+(-[a-z])*$", "(ab)+", "a{2}(b|c)?", "[(+]+", "\\(a+\\)+", "(a+)?"])
def test_patterns_without_nested_repetition_are_kept(tmp_path, pattern):
    _build(tmp_path, {"S": {"type": "string", "pattern": pattern}})


def test_session_from_json_reports_a_huge_integer_as_a_validation_error():
    sys.path.insert(0, "generated")
    try:
        acp = importlib.import_module("acp_v2")
    finally:
        sys.path.remove("generated")
    with pytest.raises(acp.ValidationError, match="not a session snapshot"):
        acp.session_from_json({"sessionId": 10**5000})
