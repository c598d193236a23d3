"""Stage 2: which IR a schema shape lowers to."""

from __future__ import annotations

import json

from acpgen.compile import ir
from acpgen.compile.load import parse_schema
from acpgen.compile.lower import lower

from ..conftest import SCHEMAS


def _lower(defs: dict) -> dict:
    schema = parse_schema(json.dumps({"$defs": defs}).encode(), "t.json")
    return {d.name: d for d in lower(schema).definitions}


def test_object_fields_required_nullable_defaults_and_lenient_keywords():
    defs = _lower(
        {
            "A": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "title": {"type": ["string", "null"], "x-deserialize-default-on-error": True},
                    "n": {"type": "integer", "format": "uint16", "minimum": 1},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-deserialize-skip-invalid-items": True},
                    "flag": {"type": "boolean", "default": False},
                    "args": {"type": "array", "items": {"type": "string"}, "x-deserialize-default-on-null": True},
                },
                "required": ["id"],
            }
        }
    )
    fields = {f.wire_name: f for f in defs["A"].fields}
    assert fields["id"].required and fields["id"].type == ir.StrT()
    assert fields["title"].type == ir.NullableT(ir.StrT()) and fields["title"].default_on_error
    assert fields["n"].type == ir.IntT(minimum=1, format="uint16", format_min=0, format_max=65535)
    assert fields["n"].type.lenient_min == 1 and fields["n"].type.lenient_max == 65535
    assert fields["tags"].type == ir.ListT(ir.StrT(), skip_invalid=True)
    assert fields["flag"].default is False
    assert fields["args"].default_on_null


def test_open_and_closed_enums():
    defs = _lower(
        {
            "Open": {"anyOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"}, {"type": "string"}]},
            "Closed": {"oneOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"}]},
            "Code": {"anyOf": [{"type": "integer", "const": -1}, {"type": "integer", "format": "int32"}]},
        }
    )
    assert defs["Open"].kind == "enum" and defs["Open"].open
    assert [m.value for m in defs["Open"].members] == ["a", "b"]
    assert defs["Closed"].kind == "enum" and not defs["Closed"].open
    assert defs["Code"].value_kind == "int" and (defs["Code"].open_min, defs["Code"].open_max) == (-(2**31), 2**31 - 1)


def test_tagged_union_with_catch_all_and_shared_fields():
    defs = _lower(
        {
            "Text": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "Block": {
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"],
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"type": {"type": "string", "const": "text"}},
                        "required": ["type"],
                        "allOf": [{"$ref": "#/$defs/Text"}],
                    },
                    {
                        "title": "other",
                        "type": "object",
                        "properties": {"type": {"type": "string"}},
                        "required": ["type"],
                        "additionalProperties": True,
                    },
                ],
            },
        }
    )
    union = defs["Block"]
    assert union.kind == "union" and union.tag == "type"
    text, other = union.variants
    assert text.role == ir.TAGGED and text.tag == "text" and text.ref == "Text"
    assert [f.wire_name for f in text.fields] == ["id", "text"]
    assert other.role == ir.CATCH_ALL and [f.wire_name for f in other.fields] == ["id"]


def test_untagged_union_needs_distinguishing_required_keys():
    obj = lambda key: {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}  # noqa: E731
    defs = _lower(
        {
            "T": obj("text"),
            "B": obj("blob"),
            "R": {"anyOf": [{"$ref": "#/$defs/T"}, {"$ref": "#/$defs/B"}]},
            "Same": {"anyOf": [{"$ref": "#/$defs/T"}, {"$ref": "#/$defs/T"}]},
        }
    )
    assert defs["R"].kind == "union" and defs["R"].tag is None
    assert [v.required_keys for v in defs["R"].variants] == [("text",), ("blob",)]
    assert all(v.reuses_ref for v in defs["R"].variants)
    # Nothing tells the members apart: the first that decodes wins.
    assert defs["Same"].kind == "alias" and defs["Same"].target.kind == "first_match"


def test_scalar_union_and_unmodelled_shapes():
    defs = _lower(
        {
            "Id": {"anyOf": [{"type": "integer", "format": "int64"}, {"type": "string"}]},
            "Odd": {"type": "string", "maxLength": 3},
            "NotThis": {"not": {"type": "string"}},
        }
    )
    assert defs["Id"].target.kind == "scalar_union"
    # Keywords the typed codec does not model keep the value as JSON, checked
    # against the schema itself, and say why.
    assert defs["Odd"].target == ir.RawT("/$defs/Odd")
    assert defs["Odd"].target.reason == "maxLength on a string"
    assert defs["NotThis"].target == ir.RawT("/$defs/NotThis")
    assert defs["NotThis"].target.reason == "no type, and not that no type expression states"


def test_a_pattern_string_is_a_str_with_its_pattern():
    defs = _lower({"Code": {"type": "string", "pattern": "^[A-Z]{3}$", "minLength": 3}})
    assert defs["Code"].target == ir.StrT(min_length=3, pattern="^[A-Z]{3}$")


def test_a_plain_string_definition_is_a_named_string_type():
    """A definition that is a string, constrained or not, is a type of its
    own (printed as a NewType); a string enum, a constant, a union with a
    string, a nullable string and an alias of another definition are not."""
    defs = _lower(
        {
            "SessionId": {"type": "string", "description": "A session."},
            "Slug": {"type": "string", "pattern": "^[a-z]+$", "minLength": 1, "format": "slug"},
            "Role": {"type": "string", "enum": ["assistant", "user"]},
            "Twice": {"type": "string", "enum": ["a", "a"]},
            "Fixed": {"type": "string", "const": "x"},
            "RequestId": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "MaybeName": {"type": ["string", "null"]},
            "Again": {"$ref": "#/$defs/SessionId"},
            "Count": {"type": "integer"},
        }
    )
    named = {name for name, d in defs.items() if isinstance(d, ir.AliasDef) and d.named_string}
    assert named == {"SessionId", "Slug"}
    assert defs["Twice"].kind == "alias" and defs["Twice"].declined  # an enum declined: not a plain string


def test_an_enum_keyword_definition_is_a_closed_enum():
    defs = _lower(
        {
            "Role": {"type": "string", "enum": ["assistant", "user"], "description": "Who."},
            "Untyped": {"enum": ["a", "b"]},
            "Level": {"type": "integer", "enum": [1, 2, 3]},
            "Mixed": {"enum": ["a", 1]},
            "Flags": {"enum": [True, False]},
            "Twice": {"type": "string", "enum": ["a", "a"]},
            "Mistyped": {"type": "integer", "enum": ["a"]},
        }
    )
    role = defs["Role"]
    assert role.kind == "enum" and not role.open and role.value_kind == "str"
    assert [m.value for m in role.members] == ["assistant", "user"] and role.description == "Who."
    assert defs["Untyped"].kind == "enum" and defs["Untyped"].value_kind == "str"
    assert defs["Level"].kind == "enum" and defs["Level"].value_kind == "int"
    for name, why in [
        ("Mixed", "enum values that are not all strings or all integers"),
        ("Flags", "enum values that are not all strings or all integers"),
        ("Twice", "a value listed twice"),
        ("Mistyped", "enum values that are not all of the type 'integer'"),
    ]:
        assert defs[name].kind == "alias" and defs[name].declined == (f"not an enum: {why}",), name


def _package(defs: dict) -> ir.Package:
    return lower(parse_schema(json.dumps({"$defs": defs}).encode(), "t.json"))


def test_every_fallback_is_listed_with_its_pointer_and_reason():
    package = _package(
        {
            "Box": {
                "type": "object",
                "properties": {"size": {"type": "integer", "multipleOf": 2}, "name": {"type": "string"}},
            },
            "Either": {"anyOf": [{"$ref": "#/$defs/Box"}, {"type": "string"}]},
            "Plain": {"type": "string"},
            "Pair": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "Nothing": False,
        }
    )
    assert [(f.pointer, f.became, f.reasons) for f in package.fallbacks] == [
        ("/$defs/Box/properties/size", "any", ("multipleOf on an integer",)),
        (
            "/$defs/Either",
            "alias",
            ("not a union: no constant tag, and member 1 is not a plain object",),
        ),
        ("/$defs/Nothing", "any", ("the schema false as a definition",)),
    ]
    # A plain alias, or a union of scalars, is modelled in full: no fallback.
    assert package.fallbacks[1].definition == "Either"


def test_a_class_that_is_not_modelled_says_why_once():
    package = _package({"Loose": {"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 1}})
    (entry,) = package.fallbacks
    assert entry.pointer == "/$defs/Loose" and entry.became == "any"
    assert entry.reasons == (
        "not a class: minProperties beside properties",
        "an object with properties inside another schema (only a $defs object becomes a class)",
    )


def test_vendored_schemas_lower_every_definition():
    for path in SCHEMAS.values():
        document = json.loads(path.read_text())
        schema = parse_schema(path.read_bytes(), str(path))
        package = lower(schema)
        assert [d.name for d in package.definitions] == list(document["$defs"])
        # The main protocol types are typed, not kept as JSON.
        by_name = {d.name: d for d in package.definitions}
        for name in ("ContentBlock", "ToolCallUpdate", "SessionUpdate", "ToolKind", "RequestId"):
            assert not (by_name[name].kind == "alias" and by_name[name].target.kind == "raw"), name
        # Nothing but the JSON-RPC params and results (whose type the method
        # decides) is kept as JSON.
        raw = sorted(_raw_places(package))
        assert raw and all(where.endswith((".params", ".result")) for where in raw), raw


def _raw_places(package):
    def walk(t, where):
        if t.kind == "raw":
            yield where
        for child in ("items", "values", "inner"):
            if hasattr(t, child):
                yield from walk(getattr(t, child), where)
        for member in getattr(t, "members", ()):
            yield from walk(member, where)

    for d in package.definitions:
        if d.kind == "alias":
            yield from walk(d.target, d.name)
        fields = [f for f in getattr(d, "fields", ())] + [f for v in getattr(d, "variants", ()) for f in v.fields]
        for f in fields:
            yield from walk(f.type, f"{d.name}.{f.wire_name}")


def test_a_scope_union_beside_properties_is_a_flattened_field():
    scope = {"type": "object", "properties": {"sessionId": {"type": "string"}}, "required": ["sessionId"]}
    other = {"type": "object", "properties": {"requestId": {"type": "integer"}}, "required": ["requestId"]}
    defs = _lower(
        {
            "SessionScope": scope,
            "RequestScope": other,
            "Form": {
                "type": "object",
                "properties": {"schema": {"type": "object"}},
                "required": ["schema"],
                "oneOf": [{"allOf": [{"$ref": "#/$defs/SessionScope"}]}, {"allOf": [{"$ref": "#/$defs/RequestScope"}]}],
            },
            "Loose": {
                "type": "object",
                "properties": {"schema": {"type": "object"}},
                "anyOf": [{"$ref": "#/$defs/SessionScope"}, {"$ref": "#/$defs/RequestScope"}],
            },
            "Clash": {
                "type": "object",
                "properties": {"sessionId": {"type": "object"}},
                "oneOf": [{"$ref": "#/$defs/SessionScope"}, {"$ref": "#/$defs/RequestScope"}],
            },
        }
    )
    form = defs["Form"]
    assert form.kind == "object" and [f.wire_name for f in form.fields] == ["schema", ""]
    flattened = form.fields[1]
    assert flattened.flatten and flattened.required
    assert flattened.type == ir.KeyedT(
        refs=("SessionScope", "RequestScope"),
        keys=(("sessionId",), ("requestId",)),
        exclusive=True,
        wire_names=("sessionId", "requestId"),
        label="scope",
    )
    assert not defs["Loose"].fields[-1].type.exclusive
    # A member whose keys collide with the object's own is not flattened.
    assert defs["Clash"].kind == "alias" and defs["Clash"].target.kind == "raw"


def test_an_untagged_union_of_inline_objects_is_a_union_by_required_keys():
    defs = _lower(
        {
            "Response": {
                "anyOf": [
                    {
                        "title": "Result",
                        "type": "object",
                        "properties": {"id": {"type": "integer"}, "result": {}},
                        "required": ["id", "result"],
                    },
                    {
                        "title": "Error",
                        "type": "object",
                        "properties": {"id": {"type": "integer"}, "error": {"type": "object"}},
                        "required": ["id", "error"],
                    },
                ]
            }
        }
    )
    union = defs["Response"]
    assert union.kind == "union" and union.tag is None and not union.exclusive
    assert [(v.title, v.required_keys, v.reuses_ref) for v in union.variants] == [
        ("Result", ("id", "result"), False),
        ("Error", ("id", "error"), False),
    ]


def test_a_validation_keyword_strict_mode_cannot_check_is_an_error():
    import pytest
    from acpgen.errors import AcpgenError

    with pytest.raises(AcpgenError) as info:
        _lower({"A": {"type": "array", "contains": {"type": "string"}}})
    assert str(info.value) == "t.json#/$defs/A/contains: the keyword 'contains' is not supported by strict mode"
    # Annotations and extension keywords are fine.
    _lower({"A": {"type": "string", "examples": ["x"], "x-anything": 1, "deprecated": True}})


def test_an_invalid_pattern_is_an_error_with_its_pointer():
    import pytest
    from acpgen.errors import AcpgenError

    with pytest.raises(AcpgenError, match=r"#/\$defs/A/pattern: the pattern '\(' is not a valid regular expression"):
        _lower({"A": {"type": "string", "pattern": "("}})


def test_refs_are_json_pointers():
    defs = _lower({"a/b~c": {"type": "string"}, "B": {"$ref": "#/$defs/a~1b~0c"}})
    assert defs["B"].target == ir.RefT("a/b~c")
