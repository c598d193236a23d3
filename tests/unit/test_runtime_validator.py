"""The strict-mode validator copied into every generated package
(``_validator.py``), tested as the ordinary module it is in the generator."""

from __future__ import annotations

import pytest
from acpgen.runtime import _runtime as rt
from acpgen.runtime import _validator as va
from acpgen.runtime._runtime import ValidationError


def test_validator_reports_the_branch_that_was_meant():
    root = {"$defs": {"X": {"oneOf": [
        {"type": "object", "properties": {"type": {"const": "a"}, "n": {"type": "integer"}}, "required": ["type"]},
        {"type": "object", "properties": {"type": {"const": "b"}}, "required": ["type"]},
    ]}}}  # fmt: skip
    va.validate(root, "#/$defs/X", {"type": "b"})
    with pytest.raises(ValidationError) as info:
        va.validate(root, "#/$defs/X", {"type": "a", "n": "1"})
    assert info.value.path == "$.n"
    with pytest.raises(ValidationError) as info:
        va.validate(root, "#/$defs/X", {"type": "c"})
    assert info.value.path == "$.type" and '"a", "b"' in info.value.message


TAGGED = {"$defs": {
    "A": {"type": "object", "properties": {"kind": {"const": "a"}, "n": {"type": "integer"}}, "required": ["kind", "n"]},
    "B": {"allOf": [{"properties": {"kind": {"const": "b"}}, "required": ["kind"]}]},
    "Loose": {"type": "object", "properties": {"kind": {"const": "a"}, "m": {"type": "string"}}, "required": ["m"]},
    "One": {"oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}, {"$ref": "#/$defs/Loose"}]},
    "Any": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}, {"$ref": "#/$defs/Loose"}]},
    "Wide": {"type": "object", "properties": {"x": {"$ref": "#/$defs/One"}}, "unevaluatedProperties": False},
}}  # fmt: skip

TAGGED_VALUES = [
    {"kind": "a", "n": 1},
    {"kind": "a", "n": "1"},
    {"kind": "a", "n": 1, "m": "x"},  # A and Loose: more than one
    {"kind": "b"},
    {"kind": "b", "m": "x"},  # Loose's optional tag is present and says "a": B only
    {"m": "x"},  # no tag: only Loose, whose tag is optional
    {"n": 1},
    {"kind": "c"},
    {"kind": "c", "m": "x"},
    {},
    [],
    "a",
]


def _outcome(pointer: str, value: object) -> tuple[str, str] | None:
    try:
        va.validate(TAGGED, pointer, value)
    except ValidationError as error:
        return error.path, error.message
    return None


@pytest.mark.parametrize("pointer", ["#/$defs/One", "#/$defs/Any"])
def test_branches_ruled_out_by_a_tag_give_what_trying_every_branch_gives(monkeypatch, pointer):
    fast = [_outcome(pointer, value) for value in TAGGED_VALUES]
    wide = [_outcome("#/$defs/Wide", {"x": value}) for value in TAGGED_VALUES]
    calls: list[int] = []

    def every_branch(self: object, options: list[object], value: object) -> list[object]:
        calls.append(len(options))
        return list(options)

    monkeypatch.setattr(va._Validator, "_candidates", every_branch)
    assert [_outcome(pointer, value) for value in TAGGED_VALUES] == fast
    assert [_outcome("#/$defs/Wide", {"x": value}) for value in TAGGED_VALUES] == wide
    assert calls  # the patched rule was consulted, so the two runs differ in it
    # What each value comes to (not read off the code): the tag picks A, B
    # or the loose branch whose tag is optional.
    one = pointer.endswith("One")
    assert fast[0] is None and fast[3] is None and fast[5] is None
    assert fast[1] is not None and fast[1][0] == "$.n"
    assert (fast[2] is not None) if one else (fast[2] is None)
    assert fast[4] is None  # Loose's tag says "a": only B matches
    assert all(fast[i] is not None for i in (6, 7, 8, 9))
    assert fast[10] is None and fast[11] is None  # B has no "type": any non-object passes it


def test_the_tags_of_a_branch_follow_its_ref_and_all_of():
    validator = va._Validator(TAGGED)
    a, b = {"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}
    assert validator._tags(a) == (("kind", "a", True),)
    assert validator._tags(b) == (("kind", "b", True),)
    assert validator._candidates([a, b], {"kind": "b"}) == [b]
    assert validator._candidates([a, b], {}) == []


ENUMS = {"$defs": {
    "Status": {"oneOf": [{"type": "string", "const": v} for v in ("pending", "in_progress", "completed", "failed")]},
    "Kind": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}]},
    "Level": {"enum": ["debug", "info", "warn", "error"]},
    "Number": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    "Holder": {"type": "object", "properties": {"status": {"$ref": "#/$defs/Status"}}},
}}  # fmt: skip


def _error(pointer: str, value: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        va.validate(ENUMS, pointer, value)
    return info.value


def test_an_enum_error_lists_every_allowed_value():
    # Each of the four values, the last ones too (they were cut at three).
    error = _error("#/$defs/Status", "bogus")
    assert error.message == 'expected one of "pending", "in_progress", "completed", "failed", found "bogus"'
    assert error.path == "$"
    assert "shapes" not in error.message
    error = _error("#/$defs/Holder", {"status": "done"})
    assert error.path == "$.status"
    assert error.message == 'expected one of "pending", "in_progress", "completed", "failed", found "done"'
    error = _error("#/$defs/Level", "trace")
    assert error.message == 'expected one of "debug", "info", "warn", "error", found "trace"'


def test_an_enum_or_null_says_null_is_allowed_too():
    error = _error("#/$defs/Kind", "bogus")
    assert error.message == 'expected one of "pending", "in_progress", "completed", "failed" or null, found "bogus"'


def test_a_union_of_types_names_the_types():
    assert _error("#/$defs/Number", True).message == "expected string or integer, found boolean true"
    assert _error("#/$defs/Status", 5).message == "expected string, found integer 5"


def test_a_null_where_another_type_is_expected_is_named_once():
    # null is its type and its value: "found null", never "found null null".
    assert _error("#/$defs/Status", None).message == "expected string, found null"
    assert _error("#/$defs/Number", None).message == "expected string or integer, found null"
    with pytest.raises(ValidationError) as info:
        va.validate(ENUMS, "#/$defs/Holder", None)
    assert info.value.message == "expected object, found null"
    assert rt.type_error("an array", None).message == "expected an array, found null"
    assert rt.type_error("an array", "x").message == 'expected an array, found string "x"'


def test_a_union_of_shapes_says_how_many_reasons_it_leaves_out():
    # Each branch fixes another member: none is the one meant, and no one
    # member's values are the choices.
    keys = ("a", "b", "c", "d", "e")
    root = {"$defs": {"X": {"anyOf": [{"properties": {key: {"const": n}}} for n, key in enumerate(keys)]}}}
    with pytest.raises(ValidationError) as info:
        va.validate(root, "#/$defs/X", dict.fromkeys(keys, 9))
    assert info.value.message.startswith("expected any of the allowed shapes (expected 0, found 9; ")
    assert info.value.message.endswith("; and 2 more)")


def test_numbers_and_multiples_take_finite_values_only():
    root = {"$defs": {"N": {"type": "number"}, "M": {"type": "number", "multipleOf": 0.5}}}
    for value in (1, 1.5, 1.7976931348623157e308, -1e308):
        va.validate(root, "#/$defs/N", value)
    for value in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(ValidationError, match="expected number"):
            va.validate(root, "#/$defs/N", value)
    va.validate(root, "#/$defs/M", 2.5)
    with pytest.raises(ValidationError, match=r"multiple of 0\.5"):
        va.validate(root, "#/$defs/M", 2.25)
    # A quotient too large for a float is no multiple (OverflowError).
    with pytest.raises(ValidationError, match="multiple of"):
        va.validate({"$defs": {"M": {"multipleOf": 1e-308}}}, "#/$defs/M", 10**400)
    # An error message quotes a property name as JSON.
    with pytest.raises(ValidationError) as info:
        va.validate({"$defs": {"R": {"type": "object", "required": ['a"b']}}}, "#/$defs/R", {})
    assert info.value.message == 'missing required property "a\\"b"'
