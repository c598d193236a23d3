"""Stage 1: reading and checking schema files."""

from __future__ import annotations

import json

import pytest
from acpgen.compile.load import load_schema, parse_schema
from acpgen.errors import AcpgenError

from ..conftest import SCHEMAS


def test_vendored_schemas_load_with_their_defs():
    for path in SCHEMAS.values():
        schema = load_schema(path)
        assert schema.defs == json.loads(path.read_text())["$defs"]
        assert len(schema.sha256) == 64


def test_missing_file_names_the_file(tmp_path):
    with pytest.raises(AcpgenError) as info:
        load_schema(tmp_path / "nope.json")
    assert str(info.value) == f"{tmp_path / 'nope.json'}: no such file"


def test_invalid_json_gives_line_and_column():
    with pytest.raises(AcpgenError) as info:
        parse_schema(b'{"$defs": {\n  "A": {"type": "string",}\n}}', "bad.json")
    message = str(info.value)
    assert message.startswith("bad.json: invalid JSON at line 2 column")
    assert "\n" not in message


def test_metaschema_violation_gives_the_json_pointer():
    doc = {"$defs": {"A": {"type": "object", "properties": {"x": {"type": 12}}}}}
    with pytest.raises(AcpgenError) as info:
        parse_schema(json.dumps(doc).encode(), "s.json")
    assert str(info.value).startswith("s.json#/$defs/A/properties/x/type: does not conform")


def test_unresolvable_ref_gives_its_pointer():
    doc = {"$defs": {"A": {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}}}}
    with pytest.raises(AcpgenError) as info:
        parse_schema(json.dumps(doc).encode(), "s.json")
    assert str(info.value) == "s.json#/$defs/A/properties/x/$ref: unresolvable $ref '#/$defs/Missing'"


def test_remote_refs_are_refused():
    doc = {"$defs": {"A": {"$ref": "https://example.com/other.json#/$defs/B"}}}
    with pytest.raises(AcpgenError, match="only local references"):
        parse_schema(json.dumps(doc).encode(), "s.json")


def test_a_schema_without_defs_is_refused():
    with pytest.raises(AcpgenError, match="no \\$defs"):
        parse_schema(b'{"type": "object"}', "s.json")


def test_pointer_escapes_slash_and_tilde():
    doc = {"$defs": {"a/b~c": {"$ref": "#/$defs/none"}}}
    with pytest.raises(AcpgenError) as info:
        parse_schema(json.dumps(doc).encode(), "s.json")
    assert "#/$defs/a~1b~0c/$ref" in str(info.value)


def _nested(depth: int) -> bytes:
    """A valid schema nested ``depth`` levels deep, as text (too deep for
    ``json.dumps`` at 5,000)."""
    return (
        '{"$defs": {"Deep": ' + '{"type": "array", "items": ' * depth + '{"type": "string"}' + "}" * depth + "}}"
    ).encode()


@pytest.mark.parametrize(
    "doc",
    [
        *[path.read_bytes() for path in SCHEMAS.values()],
        {"$defs": {"A": {"type": "object", "properties": {"x": {"type": 12}}}}},
        {"$defs": {"A": {"minLength": -1}}},
        {"$defs": {"A": {"anyOf": []}}},
        {"$defs": {"A": {"required": ["a", "a"]}}},
        {"$defs": {"A": {"enum": 3}}},
        {"$defs": {"A": {"minimum": 10**30}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "$defs": {"A": {"prefixItems": 5}}},
        _nested(40),
        _nested(200),
        _nested(5000),
    ],
)
def test_the_compiled_metaschema_check_changes_no_outcome(doc, monkeypatch):
    """Valid schemas are checked by jsonschema-rs, everything else by
    jsonschema: the result, and any error, is what jsonschema alone gives."""
    import acpgen.compile.load.schema

    def outcome():
        try:
            raw = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
            return parse_schema(raw, "s.json").sha256
        except (AcpgenError, RecursionError) as error:
            return f"{type(error).__name__}: {error}"

    quick = outcome()
    monkeypatch.setattr(acpgen.compile.load.schema, "jsonschema_rs", None)
    assert quick == outcome()


def test_a_nested_id_is_refused_and_the_roots_is_not():
    doc = {"$id": "urn:root", "$defs": {"A": {"type": "object", "properties": {"x": {"$id": "urn:x"}}}}}
    with pytest.raises(AcpgenError, match="a nested \\$id is not supported") as info:
        parse_schema(json.dumps(doc).encode(), "s.json")
    assert str(info.value).startswith("s.json#/$defs/A/properties/x/$id: ")
    del doc["$defs"]["A"]["properties"]["x"]["$id"]
    assert parse_schema(json.dumps(doc).encode(), "s.json").defs == doc["$defs"]


def test_ref_and_id_keys_in_data_are_not_references():
    # const, enum, default and examples hold data: a "$ref" or "$id" key in
    # them is a value like any other.
    data = {"$ref": "#/$defs/Missing", "$id": "urn:nested"}
    doc = {"$defs": {"A": {"const": data, "default": data, "examples": [data], "enum": [data]}}}
    assert parse_schema(json.dumps(doc).encode(), "s.json").defs == doc["$defs"]


def test_a_wrong_ref_is_named_before_a_nested_id_and_percent_escapes_resolve():
    doc = {
        "$defs": {
            "a b": {"type": "string"},
            "A": {"$id": "urn:a", "properties": {"x": {"$ref": "#/$defs/a%20b"}, "y": {"$ref": "#/$defs/Gone"}}},
        }
    }
    with pytest.raises(AcpgenError) as info:
        parse_schema(json.dumps(doc).encode(), "s.json")
    assert str(info.value) == "s.json#/$defs/A/properties/y/$ref: unresolvable $ref '#/$defs/Gone'"
    del doc["$defs"]["A"]["properties"]["y"]
    with pytest.raises(AcpgenError, match="a nested \\$id"):
        parse_schema(json.dumps(doc).encode(), "s.json")
    del doc["$defs"]["A"]["$id"]
    assert parse_schema(json.dumps(doc).encode(), "s.json").defs == doc["$defs"]


@pytest.mark.parametrize("python_limit", [None, 0, 5000])
def test_an_integer_of_more_than_4300_digits_is_refused_whatever_pythons_own_limit(python_limit):
    # Under Python's default limit (4300 digits) its int() refuses the text;
    # without a limit (0) or over a higher one, acpgen's own check does.
    import sys

    if python_limit is not None and not hasattr(sys, "set_int_max_str_digits"):
        pytest.skip("this Python has no limit on integer text")
    before = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    try:
        if python_limit is not None:
            sys.set_int_max_str_digits(python_limit)
        ok = '{"$defs": {"A": {"type": "integer", "maximum": -%s}}}' % ("9" * 4300)
        assert parse_schema(ok.encode(), "s.json").defs["A"]["maximum"] == -int("9" * 4300)
        with pytest.raises(AcpgenError) as info:
            parse_schema(ok.replace("9" * 4300, "9" * 4301).encode(), "s.json")
        assert str(info.value) == "s.json#/$defs/A/maximum: an integer of 4301 digits (more than 4300)"
    finally:
        if before is not None:
            sys.set_int_max_str_digits(before)


@pytest.mark.parametrize(
    "text, where, surrogate",
    [
        ('{"$defs": {"A": {"type": "string", "description": "x\\ud800y"}}}', "#/$defs/A/description", "ud800"),
        ('{"$defs": {"A": {"type": "string", "examples": ["ok", "\\uDFFF"]}}}', "#/$defs/A/examples/1", "udfff"),
        ('{"$defs": {"A": {"type": "object", "properties": {"k\\udc00": {}}}}}', "#/$defs/A/properties", "udc00"),
        # A high surrogate followed by another escape that is no low one.
        ('{"$defs": {"A": {"const": "\\ud83d\\u0041"}}}', "#/$defs/A/const", "ud83d"),
    ],
)
def test_a_lone_surrogate_is_refused_with_its_pointer(text, where, surrogate):
    """serde_json, the reference's parser, refuses a lone surrogate: it is
    not Unicode text, and the schema validator of the later stages cannot
    take one (it raised from inside a pass)."""
    with pytest.raises(AcpgenError) as info:
        parse_schema(text.encode(), "s.json")
    message = str(info.value)
    assert message.startswith(f"s.json{where}: ")
    assert f"lone surrogate (\\{surrogate})" in message
    message.encode("utf-8")  # printable as it is: the pointer holds no surrogate either


def test_a_surrogate_pair_and_an_escaped_backslash_are_text():
    text = '{"$defs": {"A": {"type": "string", "description": "\\ud83d\\ude00 and \\\\ud800"}}}'
    schema = parse_schema(text.encode(), "s.json")
    assert schema.defs["A"]["description"] == "\U0001f600 and \\ud800"
