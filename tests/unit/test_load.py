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
