"""A string ``enum`` definition is an Enum, a ``pattern`` string a ``str``:
both decode and encode back, and strict mode refuses what the schema does
(agreeing with jsonschema)."""

from __future__ import annotations

import enum
import typing

import pytest
from jsonschema import Draft202012Validator

from ..conftest import schema_with

# MCP's shapes: string enums written with the enum keyword.
ROLE = {"description": "The sender or recipient.", "type": "string", "enum": ["assistant", "user"]}
LEVEL = {"type": "string", "enum": ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]}
# The 2.0.0 schema's Cost: a currency code with a pattern.
COST = {
    "type": "object",
    "properties": {
        "amount": {"type": "number"},
        "currency": {"description": "ISO 4217 currency code.", "type": "string", "pattern": "^[A-Z]{3}$"},
    },
    "required": ["amount", "currency"],
}
MESSAGE = {
    "type": "object",
    "properties": {"role": {"$ref": "#/$defs/Role"}, "level": {"$ref": "#/$defs/LoggingLevel"}},
    "required": ["role"],
}
DEFS = {"Role": ROLE, "LoggingLevel": LEVEL, "Cost": COST, "LogMessage": MESSAGE}


@pytest.fixture(scope="module")
def pkg(tmp_path_factory):
    import importlib
    import json
    import sys

    from acpgen.output.write import write_packages
    from acpgen.pipeline import build_package

    root = tmp_path_factory.mktemp("enum_pattern")
    path = root / "schema.json"
    path.write_text(json.dumps(schema_with(DEFS)), encoding="utf-8")
    write_packages(root / "out", {"acpgen_enum_pattern": build_package(path, "acpgen_enum_pattern")})
    sys.path.insert(0, str(root / "out"))
    try:
        return importlib.import_module("acpgen_enum_pattern")
    finally:
        sys.path.remove(str(root / "out"))


def test_a_string_enum_is_an_enum_class(pkg):
    assert issubclass(pkg.Role, enum.Enum)
    assert [m.value for m in pkg.LoggingLevel] == LEVEL["enum"]
    assert pkg.Role.__doc__ == "The sender or recipient."
    assert typing.get_type_hints(pkg.LogMessage)["role"] is pkg.Role


@pytest.mark.parametrize("strict", [False, True])
def test_enum_members_decode_to_members_and_encode_back(pkg, strict):
    assert pkg.decode("Role", "user", strict=strict) is pkg.Role.USER
    message = pkg.decode("LogMessage", {"role": "assistant", "level": "warning"}, strict=strict)
    assert message.role is pkg.Role.ASSISTANT and message.level is pkg.LoggingLevel.WARNING
    assert pkg.encode(message) == {"role": "assistant", "level": "warning"}
    assert pkg.encode(pkg.Role.USER) == "user"


@pytest.mark.parametrize("strict", [False, True])
def test_a_value_the_enum_does_not_list_is_refused(pkg, strict):
    # Closed, like the other closed enums: lenient mode refuses it too, as
    # serde does an unknown variant.
    with pytest.raises(pkg.ValidationError) as caught:
        pkg.decode("LogMessage", {"role": "robot"}, strict=strict)
    assert caught.value.path == "$.role"
    assert "assistant" in caught.value.message


def test_a_pattern_string_is_a_str(pkg):
    assert typing.get_type_hints(pkg.Cost)["currency"] is str
    cost = pkg.decode("Cost", {"amount": 1.5, "currency": "EUR"}, strict=True)
    assert cost.currency == "EUR"
    assert pkg.encode(cost) == {"amount": 1.5, "currency": "EUR"}


def test_strict_mode_checks_the_pattern_and_lenient_mode_keeps_the_string(pkg):
    with pytest.raises(pkg.ValidationError) as caught:
        pkg.decode("Cost", {"amount": 1, "currency": "eur"}, strict=True)
    assert caught.value.path == "$.currency"
    assert "^[A-Z]{3}$" in caught.value.message
    # As the Rust reference (a plain String): lenient mode keeps it.
    assert pkg.decode("Cost", {"amount": 1, "currency": "eur"}).currency == "eur"
    with pytest.raises(pkg.ValidationError):
        pkg.decode("Cost", {"amount": 1, "currency": 3}, strict=True)


@pytest.mark.parametrize(
    "name, value",
    [
        ("Role", "user"),
        ("Role", "robot"),
        ("Role", 1),
        ("LoggingLevel", "emergency"),
        ("Cost", {"amount": 1, "currency": "USD"}),
        ("Cost", {"amount": 1, "currency": "USDX"}),
        ("Cost", {"amount": 1, "currency": "usd"}),
        ("LogMessage", {"role": "user", "level": "loud"}),
    ],
)
def test_strict_mode_agrees_with_jsonschema(pkg, name, value):
    validator = Draft202012Validator({**schema_with(DEFS), "$ref": f"#/$defs/{name}"})
    try:
        pkg.decode(name, value, strict=True)
        accepted = True
    except pkg.ValidationError:
        accepted = False
    assert accepted == validator.is_valid(value)


@pytest.mark.parametrize(
    "name, value",
    [
        ("Role", "user"),
        ("Role", "robot"),
        ("Cost", {"amount": 1, "currency": "USD"}),
        ("Cost", {"amount": 1, "currency": "usd"}),
        ("LogMessage", {"role": "assistant", "level": "debug"}),
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_the_conformance_model_agrees_with_the_package(pkg, name, value, strict):
    from acpgen.conformance.model import Model, Reject

    model = Model(schema_with(DEFS))
    try:
        expected = model.decode(name, value, strict=strict)
    except Reject:
        expected = Reject
    try:
        got = pkg.encode(pkg.decode(name, value, strict=strict))
    except pkg.ValidationError:
        got = Reject
    assert got == expected
