"""Strict mode runs the generated decoders, not a schema interpreter: shapes
whose checks the decoders must carry themselves agree with jsonschema too."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from ..conftest import schema_with

SCOPE = {"type": "object", "properties": {"sessionId": {"type": "string"}}, "required": ["sessionId"]}
OTHER = {"type": "object", "properties": {"requestId": {"type": "integer"}}, "required": ["requestId"]}
DEFS = {
    "Closed": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
    "Needs": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]},
    "SessionScope": SCOPE,
    "RequestScope": OTHER,
    "Form": {
        "type": "object",
        "properties": {"schema": {"type": "object"}},
        "required": ["schema"],
        "oneOf": [{"allOf": [{"$ref": "#/$defs/SessionScope"}]}, {"allOf": [{"$ref": "#/$defs/RequestScope"}]}],
    },
    "Either": {"oneOf": [{"$ref": "#/$defs/SessionScope"}, {"$ref": "#/$defs/RequestScope"}]},
    "Block": {
        "anyOf": [
            {
                "type": "object",
                "properties": {"type": {"type": "string", "const": "text"}, "text": {"type": "string"}},
                "required": ["type", "text"],
            },
            {
                "title": "other",
                "type": "object",
                "properties": {"type": {"type": "string"}},
                "required": ["type"],
                "not": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"type": {"type": "string", "const": "text"}},
                            "required": ["type"],
                        }
                    ]
                },
            },
        ]
    },
}
CASES = [
    ("Closed", {"a": "x"}),
    ("Closed", {"a": "x", "b": 1}),
    ("Closed", {}),
    ("Needs", {"a": "x", "b": None}),
    ("Needs", {"a": "x"}),
    ("Form", {"schema": {}, "sessionId": "s"}),
    ("Form", {"schema": {}, "requestId": 1}),
    ("Form", {"schema": {}, "sessionId": "s", "requestId": 1}),
    ("Form", {"schema": {}, "sessionId": 5, "requestId": 1}),
    ("Form", {"schema": {}}),
    ("Either", {"sessionId": "s", "requestId": "x"}),
    ("Either", {"sessionId": "s", "requestId": 2}),
    ("Block", {"type": "text", "text": "t"}),
    ("Block", {"type": "text"}),
    ("Block", {"type": "img", "x": 1}),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    import importlib
    import json
    import sys

    from acpgen.output.write import write_packages
    from acpgen.pipeline import build_package

    tmp = tmp_path_factory.mktemp("strict_shapes")
    path = tmp / "shapes.schema.json"
    path.write_text(json.dumps(schema_with(DEFS)), encoding="utf-8")
    write_packages(tmp / "out", {"acpgen_strict_shapes": build_package(path, "acpgen_strict_shapes")})
    sys.path.insert(0, str(tmp / "out"))
    try:
        yield importlib.import_module("acpgen_strict_shapes")
    finally:
        sys.path.remove(str(tmp / "out"))


@pytest.mark.parametrize("name, value", CASES)
def test_strict_decoders_agree_with_jsonschema(package, name, value):
    expected = Draft202012Validator({"$defs": DEFS, "$ref": f"#/$defs/{name}"}).is_valid(value)
    try:
        package.decode(name, value, strict=True)
        accepted = True
    except package.ValidationError:
        accepted = False
    assert accepted == expected


def test_the_catch_all_class_refuses_a_known_tag_in_strict_mode_only(package):
    other = next(cls for cls in vars(package).values() if isinstance(cls, type) and cls.__name__ == "OtherBlock")
    with pytest.raises(package.ValidationError) as info:
        package.decode_class(other, {"type": "text"}, strict=True)
    assert info.value.path == "$.type"
    assert package.decode_class(other, {"type": "text"}).type == "text"


def test_a_closed_object_ignores_unknown_keys_in_lenient_mode(package):
    assert package.encode(package.decode("Closed", {"a": "x", "b": 1})) == {"a": "x"}
    assert package.decode("Needs", {"a": "x", "b": 1}).a == "x"
    with pytest.raises(package.ValidationError) as info:
        package.decode("Needs", {"a": "x"})
    assert info.value.path == "$" and '"b"' in info.value.message
