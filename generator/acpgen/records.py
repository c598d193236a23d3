"""``dataclass`` for acpgen's own records (the IR of ``compile/ir/`` and the
views of ``views/``): the standard decorator, with ``__eq__``, ``__hash__``
and ``__repr__`` made without compiling code for each class.

``dataclasses.dataclass(frozen=True)`` writes six methods of each class as
source text and compiles them (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__``, ``__delattr__``): for the 115 records of the
IR and the views, about a tenth of a second of every ``acpgen generate``,
spent at import. For ``@dataclass(frozen=True)`` this module's decorator
has the standard one write ``__init__`` and the two methods that keep
instances frozen, and gives the class an ``__eq__``, ``__hash__`` and
``__repr__`` that compare, hash and print the same fields in the same order
as the standard ones do (closures over the class's fields: no new code), so
that values are equal, hash and print alike either way
(``tests/unit/test_records.py`` compares them). A method the class defines
itself is kept, as the standard decorator keeps it. Any other options are
the standard decorator's own.

Type checkers see the standard decorator.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

__all__ = ["dataclass"]

if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:

    def dataclass(cls: type | None = None, /, **options: Any) -> Any:
        """``dataclasses.dataclass``; ``frozen=True`` alone: see the module."""

        def wrap(cls: type) -> type:
            if options == {"frozen": True}:
                return _frozen_record(cls)
            return dataclasses.dataclass(cls, **options)

        return wrap if cls is None else wrap(cls)


def _frozen_record(cls: type) -> type:
    own = cls.__dict__
    # The standard decorator's rule: a class that defines __eq__ and no
    # __hash__ has __hash__ None in its namespace, which does not count.
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    made: Any = dataclasses.dataclass(cls, frozen=True, eq=False, repr=False)
    fields = dataclasses.fields(made)
    methods: list[Callable[..., Any]] = []
    if "__repr__" not in own:
        methods.append(_repr([f.name for f in fields if f.repr]))
    if "__eq__" not in own:
        methods.append(_eq(_values([f.name for f in fields if f.compare])))
    if not explicit_hash:
        methods.append(_hash(_values([f.name for f in fields if (f.compare if f.hash is None else f.hash)])))
    for method in methods:
        method.__qualname__ = f"{made.__qualname__}.{method.__name__}"
        setattr(made, method.__name__, method)
    result: type = made
    return result


def _values(names: list[str]) -> Callable[[object], tuple[Any, ...]]:
    """The tuple of an object's attributes ``names``, in that order."""
    if not names:
        return lambda _: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda o: (one(o),)
    several: Callable[[object], tuple[Any, ...]] = operator.attrgetter(*names)
    return several


def _eq(values: Callable[[object], tuple[Any, ...]]) -> Callable[[object, object], bool]:
    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(values: Callable[[object], tuple[Any, ...]]) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        return hash(values(self))

    return __hash__


def _repr(names: list[str]) -> Callable[[object], str]:
    @reprlib.recursive_repr()
    def __repr__(self: object) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__
