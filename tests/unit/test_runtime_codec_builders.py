"""The decoders and checks ``_codec.py`` builds for a package's generated
``codec.py``: the decoders of tagged and untagged unions and the fallback
decoders of enums (over hand-written tables here), the union encoder, and
the checks of closed objects, catch-all variants and default-on-error
members. Expected values follow the schema semantics the generated codec
documents (serde's tagged and untagged enums, open enums)."""

from __future__ import annotations

import collections
import enum

import pytest
from acpgen.runtime import _codec
from acpgen.runtime._runtime import UNSET, NotPlainJson, ValidationError, check_str, type_error


class Circle:
    def __init__(self, r: object) -> None:
        self.r = r


class Square:
    def __init__(self, side: object) -> None:
        self.side = side


class Other:
    def __init__(self, d: dict[str, object]) -> None:
        self.d = d


def _member(cls, key):
    def read(d, strict):
        if type(d) is not dict:
            raise type_error("an object", d)
        if key not in d:
            raise ValidationError(f"no {key}")
        if type(d[key]) is not int:
            raise type_error("an integer", d[key]).at(key)
        return cls(d[key])

    return read


read_circle = _member(Circle, "r")
read_square = _member(Square, "side")
VARIANTS = {"circle": read_circle, "square": read_square}


def _error(decode, value, strict=False) -> ValidationError:
    with pytest.raises(ValidationError) as raised:
        decode(value, strict)
    return raised.value


def test_a_tagged_union_reads_the_variant_its_tag_selects() -> None:
    decode = _codec.tagged_union("kind", VARIANTS, unknown='expected one of "circle", "square"')
    assert decode({"kind": "circle", "r": 2}, False).r == 2
    assert decode({"kind": "square", "side": 3}, True).side == 3
    error = _error(decode, {"kind": "hexagon"})
    assert (error.path, error.message) == ("$.kind", 'expected one of "circle", "square", found "hexagon"')
    assert "kind" in _error(decode, {"r": 1}).message
    assert _error(decode, {"kind": 5}).path == "$.kind"
    assert _error(decode, [1]).message.startswith("expected an object")
    # The variant's own error stands, with its path.
    assert _error(decode, {"kind": "circle", "r": "x"}).path == "$.r"


def test_a_tagged_union_gives_other_tags_to_its_catch_all() -> None:
    decode = _codec.tagged_union("kind", VARIANTS, catch_all=lambda d, strict: Other(d))
    other = decode({"kind": "hexagon", "n": 6}, False)
    assert isinstance(other, Other) and other.d == {"kind": "hexagon", "n": 6}
    assert isinstance(decode({"kind": "circle", "r": 1}, False), Circle)


def test_a_tagged_union_with_a_fallback_gives_it_what_the_tagged_variants_refuse() -> None:
    fallback = _member(Other, "n")
    decode = _codec.tagged_union("kind", VARIANTS, fallback=fallback)
    # No tag, an unknown tag, and a tagged variant refusing: the fallback.
    assert decode({"n": 1}, False).d == 1
    assert decode({"kind": "hexagon", "n": 6}, False).d == 6
    assert decode({"kind": "circle", "r": "x", "n": 7}, False).d == 7
    # When the fallback refuses too, the tagged variant's error is raised.
    error = _error(decode, {"kind": "circle", "r": "x"})
    assert (error.path, error.message.startswith("expected an integer")) == ("$.r", True)


def test_a_tagged_union_with_a_null_tag_variant() -> None:
    decode = _codec.tagged_union("kind", VARIANTS, unknown="no", null_tag=_member(Other, "n"))
    assert decode({"n": 1}, False).d == 1
    assert decode({"kind": None, "n": 2}, False).d == 2
    error = _error(decode, {"kind": 3, "n": 2})
    assert (error.path, error.message.startswith("expected a string or null")) == ("$.kind", True)


def test_a_lenient_tag_that_is_not_a_string_counts_as_absent_in_lenient_mode_only() -> None:
    fallback = _codec.tagged_union("kind", VARIANTS, lenient_tag=True, fallback=_member(Other, "n"))
    assert fallback({"kind": 5, "n": 1}, False).d == 1
    decode = _codec.tagged_union("kind", VARIANTS, unknown="no", lenient_tag=True)
    assert decode({"kind": "circle", "r": 1}, False).r == 1
    absent, wrong = _error(decode, {"kind": 5}), _error(decode, {"kind": 5}, strict=True)
    assert absent.message == _error(decode, {}).message
    assert (wrong.path, wrong.message.startswith("expected a string")) == ("$.kind", True)
    # A dropped tag holding a subclass of a JSON type asks for plain JSON.
    with pytest.raises(NotPlainJson):
        decode({"kind": collections.OrderedDict()}, False)


def test_an_untagged_union_takes_the_first_variant_with_its_keys_that_decodes() -> None:
    decode = _codec.untagged_union(((("r",), read_circle), (("side",), read_square)), "expected r or side")
    assert isinstance(decode({"r": 1, "side": 2}, False), Circle)
    assert isinstance(decode({"r": "x", "side": 2}, False), Square)
    assert _error(decode, {"n": 1}).message == "expected r or side"
    # Both refuse: the error of the one that got furthest.
    furthest = _codec.untagged_union(
        ((("r",), lambda d, strict: check_str(d["r"])), (("r",), read_circle)), "expected r"
    )
    assert _error(furthest, {"r": 1.5}).path == "$.r"


def test_an_exclusive_untagged_union_takes_exactly_one_variant() -> None:
    decode = _codec.untagged_union(
        ((("r",), read_circle), (("side",), read_square)), "expected r or side", "expected exactly one"
    )
    assert isinstance(decode({"r": 1}, True), Circle)
    assert _error(decode, {"r": 1, "side": 2}).message == "expected exactly one"
    assert _error(decode, {}).message == "expected r or side"
    assert isinstance(decode({"r": 1, "side": "x"}, False), Circle)


class Colour(str, enum.Enum):
    RED = "red"


class Level(int, enum.Enum):
    LOW = 1


def test_closed_enums_refuse_other_values() -> None:
    colours = _codec.closed_enum({"red": Colour.RED}, True, 'expected one of "red"')
    assert colours("red", False) is Colour.RED
    assert _error(colours, "blue").message == 'expected one of "red", found "blue"'
    assert _error(colours, 1).message.startswith("expected a string")
    levels = _codec.closed_enum({1: Level.LOW}, False, "expected one of 1")
    assert levels(1, True) is Level.LOW
    assert _error(levels, 2).message == "expected one of 1, found 2"
    assert _error(levels, "1").message.startswith("expected an integer")


def test_open_enums_keep_other_values_of_their_type() -> None:
    colours = _codec.open_str_enum({"red": Colour.RED})
    assert colours("red", False) is Colour.RED
    assert colours("blue", True) == "blue"
    assert _error(colours, 1).message.startswith("expected a string")
    levels = _codec.open_int_enum({1: Level.LOW}, -10, 10)
    assert levels(1, False) is Level.LOW
    assert levels(5, False) == 5
    # The catch-all's bounds hold in lenient mode; strict mode checks the schema.
    assert _error(levels, 11).message.startswith("expected an integer")
    assert levels(11, True) == 11
    assert _codec.open_int_enum({1: Level.LOW})(10**30, False) == 10**30


def test_a_union_encoder_uses_its_variants_encoder() -> None:
    encode = _codec.variant_encoding({Circle: lambda o: {"r": o.r}}, "Shape")
    assert encode(Circle(1)) == {"r": 1}
    with pytest.raises(TypeError, match="Square is not a variant of Shape"):
        encode(Square(1))


def test_a_closed_object_refuses_the_first_undeclared_member() -> None:
    _codec.check_closed({"a": 1}, frozenset({"a", "b"}))
    with pytest.raises(ValidationError) as raised:
        _codec.check_closed({"a": 1, "c": 2, "d": 3}, frozenset({"a"}))
    assert raised.value.path == "$.c"
    assert raised.value.message.startswith("no member the schema does not declare")


def test_a_catch_all_keeps_its_other_members_and_encodes_them_back_after_its_own() -> None:
    d = {"kind": "x", "name": "n", "more": [1], "weird": float("nan")}
    assert _codec.extra_members(d, ["kind", "name"], False) == {"more": [1], "weird": d["weird"]}
    with pytest.raises(ValidationError):
        _codec.extra_members(d, ["kind", "name"], True)
    wire = {"kind": "x"}
    _codec.add_extra(wire, {"kind": "shadowed", "more": [1, 2]})
    assert wire == {"kind": "x", "more": [1, 2]}
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(ValueError):
        _codec.add_extra({}, {"cycle": cycle})


def test_the_tag_of_a_catch_all_is_a_string_no_other_variant_has_in_strict_mode() -> None:
    _codec.check_other_tag({"kind": "hexagon"}, "kind", VARIANTS, True)
    _codec.check_other_tag({"kind": "circle"}, "kind", VARIANTS, False)
    with pytest.raises(ValidationError) as raised:
        _codec.check_other_tag({"kind": "circle"}, "kind", VARIANTS, True)
    assert raised.value.path == "$.kind"
    with pytest.raises(ValidationError) as raised:
        _codec.check_other_tag({"kind": 1}, "kind", VARIANTS, False)
    assert raised.value.message.startswith("expected a string")


def test_a_refused_member_is_its_default_in_lenient_mode_and_the_error_in_strict_mode() -> None:
    error = ValidationError("bad")
    assert _codec.recovered(error, "x", False, "m", UNSET) is UNSET
    with pytest.raises(ValidationError) as raised:
        _codec.recovered(error, "x", True, "m", UNSET)
    assert raised.value.path == "$.m"
    with pytest.raises(NotPlainJson):
        _codec.recovered(ValidationError("bad"), collections.OrderedDict(a=1), False, "m", [])
