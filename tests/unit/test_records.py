"""``acpgen.records.dataclass``: for ``frozen=True`` the standard decorator
with ``__eq__``, ``__hash__`` and ``__repr__`` made without compiling code
per class, which must behave as the standard decorator's own."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from typing import Any, ClassVar

import acpgen.compile.ir
import acpgen.views
import pytest
from acpgen import records


def _pair(body: dict[str, Any], bases: tuple[type, ...] = ()) -> tuple[type, type]:
    """The same class made by the standard decorator and by records'."""
    made = []
    for decorate in (dataclasses.dataclass(frozen=True), records.dataclass(frozen=True)):
        namespace = dict(body)
        namespace["__annotations__"] = dict(body.get("__annotations__", {}))
        made.append(decorate(type("Rec", bases, namespace)))
    return made[0], made[1]


SHAPES: dict[str, dict[str, Any]] = {
    "no fields": {},
    "one field": {"__annotations__": {"a": "int"}},
    "fields and defaults": {
        "__annotations__": {"a": "int", "b": "str", "c": "tuple[int, ...]", "k": "ClassVar[int]"},
        "b": "x",
        "c": (),
        "k": 3,
    },
    "a default factory": {
        "__annotations__": {"a": "int", "items": "list[int]"},
        "__doc__": "A documented record.",
        "items": dataclasses.field(default_factory=list),
    },
    "a field named self": {"__annotations__": {"self": "int", "other": "int"}, "other": 0},
    "compare, hash and repr flags": {
        "__annotations__": {"a": "int", "b": "str", "c": "int", "d": "int"},
        "b": dataclasses.field(default="", compare=False),
        "c": dataclasses.field(default=0, repr=False),
        "d": dataclasses.field(default=0, hash=False),
    },
}


def _values(shape: str) -> list[dict[str, Any]]:
    names = list(SHAPES[shape].get("__annotations__", {}))
    names = [n for n in names if n != "k"]
    if shape == "a default factory":
        return [{"a": 1}, {"a": 1, "items": [2]}, {"a": 2, "items": []}]
    rows = [{n: 1 if n != "b" else "x" for n in names}, {n: 2 if n != "b" else "y" for n in names}]
    if names:
        rows.append({**rows[0], names[-1]: 5 if names[-1] != "b" else "z"})
    return rows


def _hash_or_error(value: object) -> object:
    try:
        return hash(value)
    except TypeError as error:  # a list among the fields: in both, the same error
        return str(error)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_frozen_record_compares_hashes_and_prints_as_a_standard_dataclass(shape: str) -> None:
    standard, fast = _pair(SHAPES[shape])
    rows = _values(shape)
    for left in rows:
        for right in rows:
            assert (fast(**left) == fast(**right)) == (standard(**left) == standard(**right))
            assert (fast(**left) != fast(**right)) == (standard(**left) != standard(**right))
        assert _hash_or_error(fast(**left)) == _hash_or_error(standard(**left))
        assert repr(fast(**left)) == repr(standard(**left))
        assert fast(**left).__eq__(object()) is NotImplemented
    assert [f.name for f in dataclasses.fields(fast)] == [f.name for f in dataclasses.fields(standard)]
    assert fast.__init__.__qualname__ == "Rec.__init__"
    assert fast.__repr__.__qualname__ == "Rec.__repr__"
    # The same __init__ (parameters, defaults, annotations), and so the same
    # docstring for a class without one; the same record of the options.
    assert str(inspect.signature(fast)) == str(inspect.signature(standard))
    assert fast.__doc__ == standard.__doc__
    assert fast.__match_args__ == standard.__match_args__
    assert fast.__dataclass_params__.frozen and fast.__dataclass_params__.eq  # type: ignore[attr-defined]
    if rows[0]:
        positional = list(rows[0].values())
        assert fast(*positional) == fast(**rows[0])
        assert repr(fast(*positional)) == repr(standard(*positional))
        with pytest.raises(TypeError):
            fast(*positional, *positional, 1)
    with pytest.raises(TypeError):
        fast(no_such_field=1)


def test_a_frozen_record_stays_frozen_and_replace_works() -> None:
    standard, fast = _pair(SHAPES["fields and defaults"])
    value = fast(a=1)
    for made in (fast(a=1), standard(a=1)):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'a'"):
            made.a = 2
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'other'"):
            made.other = 2
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'a'"):
            del made.a
    # A default factory makes a fresh value per instance.
    _, with_factory = _pair(SHAPES["a default factory"])
    assert with_factory(1).items is not with_factory(1).items
    changed = dataclasses.replace(value, a=2)
    assert (changed.a, changed.b, value.a) == (2, "x", 1)
    assert {value, fast(a=1), changed} == {value, changed}


def test_a_method_the_class_defines_is_kept() -> None:
    def __repr__(self: object) -> str:
        return "mine"

    def __eq__(self: object, other: object) -> bool:
        return True

    standard, fast = _pair({"__annotations__": {"a": "int"}, "__repr__": __repr__, "__eq__": __eq__})
    assert repr(fast(1)) == repr(standard(1)) == "mine"
    assert (fast(1) == fast(2)) is (standard(1) == standard(2)) is True
    # __eq__ without __hash__ in the class body: the body's __hash__ is None,
    # and the decorator gives the frozen class one.
    assert hash(fast(1)) == hash(standard(1))

    def __hash__(self: object) -> int:
        return 7

    standard, fast = _pair({"__annotations__": {"a": "int"}, "__hash__": __hash__})
    assert hash(fast(1)) == hash(standard(1)) == 7


def test_a_subclass_record_compares_its_own_fields_and_not_across_classes() -> None:
    standard_base, fast_base = _pair({"__annotations__": {"a": "int"}})
    standard, _ = _pair({"__annotations__": {"b": "int"}}, (standard_base,))
    _, fast_sub = _pair({"__annotations__": {"b": "int"}}, (fast_base,))
    assert (fast_sub(a=1, b=2) == fast_sub(a=1, b=3)) is (standard(a=1, b=2) == standard(a=1, b=3)) is False
    assert repr(fast_sub(a=1, b=2)) == repr(standard(a=1, b=2))
    assert fast_base(a=1) != fast_sub(a=1, b=2)
    assert hash(fast_sub(a=1, b=2)) == hash(standard(a=1, b=2))


def test_a_record_that_holds_itself_prints_an_ellipsis() -> None:
    standard, fast = _pair({"__annotations__": {"items": "list[Any]"}})
    for cls in (standard, fast):
        value = cls([])
        value.items.append(value)
        assert repr(value) == "Rec(items=[...])"


def test_other_options_are_the_standard_decorators() -> None:
    @records.dataclass
    class Plain:
        a: int

    @records.dataclass(frozen=True, order=True)
    class Ordered:
        a: int
        b: ClassVar[int] = 0

    plain = Plain(1)
    plain.a = 2
    assert plain == Plain(2) and Plain.__hash__ is None
    assert Ordered(1) < Ordered(2)


def test_every_ir_and_view_record_has_the_shared_methods() -> None:
    # The IR and the views use records.dataclass: each frozen class of theirs
    # gets its comparison from the closures, not from code compiled per class.
    found = 0
    for package in (acpgen.compile.ir, acpgen.views):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and value.__module__ == module.__name__
                    and dataclasses.is_dataclass(value)
                    and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
                ):
                    found += 1
                    assert value.__eq__.__code__ is records._eq(lambda o: ()).__code__, value
                    assert value.__init__.__code__.co_varnames[0] in ("self", "__dataclass_self__")
                    assert value.__setattr__.__code__ is not object.__setattr__
    assert found > 100
