"""The runtime module copied into every generated package, tested as the
ordinary module it is in the generator."""

from __future__ import annotations

import copy
import math
import pickle

import pytest
from acpgen.runtime import _runtime as rt


def test_unset_is_the_only_member_of_its_enum_and_falsy():
    assert list(rt.Unset) == [rt.UNSET]
    assert rt.UNSET is rt.Unset.UNSET and rt.Unset("UNSET") is rt.UNSET
    assert not rt.UNSET and bool(rt.UNSET) is False
    assert rt.UNSET is not None and rt.UNSET != None  # noqa: E711
    assert repr(rt.UNSET) == str(rt.UNSET) == f"{rt.UNSET}" == "UNSET"


def test_unset_keeps_its_identity_through_copy_and_pickle():
    assert copy.copy(rt.UNSET) is rt.UNSET
    assert copy.deepcopy({"x": [rt.UNSET]})["x"][0] is rt.UNSET
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(rt.UNSET, protocol)) is rt.UNSET


def test_validation_error_path_and_pickle():
    error = rt.ValidationError("expected a string", ("update",)).at("content").at(2)
    assert error.segments == (2, "content", "update")
    error = rt.ValidationError("boom").at("type").at(2).at("content").at("a b")
    assert error.path == '$["a b"].content[2].type'
    assert str(error) == '$["a b"].content[2].type: boom'
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.path, clone.message) == (error.path, error.message)


def test_any_str_is_str_for_the_type_test():
    """The codec's decoders of named string types test ``type(v) is any_str``:
    at run time that is the test for a string, exactly."""
    assert rt.any_str is str
    assert [type(v) is rt.any_str for v in ("s", 1, None, b"s")] == [True, False, False, False]


def test_scalar_checks():
    assert rt.check_int(3.0) == 3 and type(rt.check_int(3.0)) is int
    with pytest.raises(rt.ValidationError, match="expected an integer"):
        rt.check_int(True)
    with pytest.raises(rt.ValidationError, match=r"in \[0, 10\]"):
        rt.check_int(11, 0, 10)
    # A bound on one side only reads as such (not "[0, -inf]").
    with pytest.raises(rt.ValidationError, match=r"^\$: expected an integer >= 0, found -1$"):
        rt.check_int(-1, 0)
    with pytest.raises(rt.ValidationError, match=r"^\$: expected a number <= 2, found 3$"):
        rt.check_num(3, None, 2)
    assert rt.check_num(1.5, 0, 2) == 1.5
    with pytest.raises(rt.ValidationError, match="expected a number"):
        rt.check_num("1")
    # NaN and the infinities are no JSON numbers; the largest floats are.
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(rt.ValidationError, match=r"^\$: expected a finite number, found number"):
            rt.check_num(value)
    assert rt.check_num(1.7976931348623157e308) == 1.7976931348623157e308
    assert rt.check_num(-1.7976931348623157e308) == -1.7976931348623157e308
    with pytest.raises(rt.ValidationError, match="expected null, found string"):
        rt.not_null("x")
    assert rt.check_const("a", "a") == "a"
    with pytest.raises(rt.ValidationError, match="at least 2 characters"):
        rt.check_str("a", 2)


def test_lists_maps_and_unions():
    def item(value: object, strict: bool) -> int:
        return rt.check_int(value)

    with pytest.raises(rt.ValidationError) as info:
        rt.check_list([1, "x"], item, False)
    assert info.value.path == "$[1]"
    assert rt.check_list_skipping([1, "x", 2], item, False) == [1, 2]
    with pytest.raises(rt.ValidationError):
        rt.check_list_skipping([1, "x"], item, True)
    source = {"a": 1}
    copied = rt.check_map(source)
    assert copied == source and copied is not source
    assert rt.check_map({"a": 1.0}, item, False) == {"a": 1}
    assert rt.scalar_union(2.0, False, {"integer": item}, "an integer") == 2
    assert rt.first_match("x", False, (item, lambda v, s: rt.check_str(v))) == "x"


def test_salvage_signals_only_values_refused_for_holding_subclasses():
    import collections
    import enum

    class Number(enum.IntEnum):
        ONE = 1

    def item(value: object, strict: bool) -> int:
        return rt.check_int(value)

    rt.salvage({"a": [1, "x", None]})  # plain JSON: lenient decoding may drop it
    for value in (collections.OrderedDict(a=1), {"a": [Number.ONE]}, [Number.ONE]):
        with pytest.raises(rt.NotPlainJson):
            rt.salvage(value)
    assert not issubclass(rt.NotPlainJson, rt.ValidationError)  # no lenient handler swallows it
    assert rt.check_list_skipping([1, "x"], item, False) == [1]
    with pytest.raises(rt.NotPlainJson):
        rt.check_list_skipping([1, [Number.ONE]], item, False)


def test_variant_lists_read_known_tags_directly_and_leave_the_rest_to_the_union():
    calls: list[str] = []

    def variant(value: object, strict: bool) -> str:
        calls.append("variant")
        return "a"

    def union(value: object, strict: bool) -> str:
        calls.append("union")
        if isinstance(value, dict) and value.get("kind") == "other":
            return "catch-all"
        raise rt.ValidationError("expected an object with a known kind")

    variants = {"a": variant}
    items = [{"kind": "a"}, {"kind": "other"}]
    assert rt.check_variants(items, "kind", variants, union, False) == ["a", "catch-all"]
    assert calls == ["variant", "union"]
    # Not an object, no tag, a tag that is not a string (unhashable too): the union decides.
    for bad in ("x", {}, {"kind": ["a"]}, {"kind": 1}):
        with pytest.raises(rt.ValidationError) as info:
            rt.check_variants([{"kind": "a"}, bad], "kind", variants, union, False)
        assert info.value.path == "$[1]"
    assert rt.check_variants_skipping([{"kind": ["a"]}, {"kind": "a"}, 3], "kind", variants, union, False) == ["a"]
    with pytest.raises(rt.ValidationError) as info:
        rt.check_variants_skipping([{"kind": "a"}, 3], "kind", variants, union, True)
    assert info.value.path == "$[1]"
    with pytest.raises(rt.ValidationError, match="at least 2 items"):
        rt.check_variants([{"kind": "a"}], "kind", variants, union, True, 2)
    assert rt.check_variants([{"kind": "a"}], "kind", variants, union, False, 2) == ["a"]


def test_json_equal_tells_booleans_from_numbers():
    assert rt.json_equal(1, 1.0) and not rt.json_equal(True, 1)
    assert rt.json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not rt.json_equal([1], {"0": 1}) and not rt.json_equal({"a": 1}, [1])


def test_check_unknown_checks_only_the_members_a_class_does_not_read():
    known = frozenset({"a", "b"})
    # The known members are the fields' business: not walked here.
    rt.check_unknown({"a": math.nan, "b": object()}, known)
    rt.check_unknown({"a": 1, "c": {"d": [1.5, None, "x", True]}}, known)
    cycle: list[object] = []
    cycle.append(cycle)
    for value, path, message in [
        ({"c": math.nan}, "$.c", "finite number"),
        ({"a": 1, "c": [-math.inf]}, "$.c[0]", "finite number"),
        ({"c": {1: 2}}, "$.c", "string key"),
        ({5: "x"}, "$", "string key"),
        ({"c": cycle}, "$.c[0]", "reference cycle"),
        ({"c": {1, 2}}, "$.c", "not a JSON value"),
    ]:
        with pytest.raises(rt.ValidationError, match=message) as info:
            rt.check_unknown(value, known)  # type: ignore[arg-type]
        assert info.value.path == path
