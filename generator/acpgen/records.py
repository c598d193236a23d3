"""``dataclass`` for acpgen's own records (the IR of ``compile/ir/`` and the
views of ``views/``): the standard decorator, with the methods of a frozen
class made at less cost.

``dataclasses.dataclass(frozen=True)`` writes six methods of each class as
source text and compiles them (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, ``__setattr__``, ``__delattr__``): for the 115 records of the
IR and the views, about a tenth of a second of every ``acpgen generate``,
spent at import. And its ``__init__`` sets each field with
``object.__setattr__``, three times slower than storing it: the generator
makes some 50,000 records a run. For ``@dataclass(frozen=True)`` this
module's decorator has the standard one read the fields (``init=False``:
no code), then compiles only an ``__init__`` that stores the fields in the
instance's ``__dict__`` (:func:`_make_frozen`), and gives the class a
``__setattr__``, ``__delattr__``, ``__eq__``, ``__hash__`` and ``__repr__``
made as closures over its fields (no new code) that behave as the standard
ones: the same ``__init__`` signature and docstring, the same
``FrozenInstanceError``, the same fields compared, hashed and printed in the
same order (``tests/unit/test_records.py`` compares them). A class with
what that ``__init__`` does not cover (``__post_init__``, ``InitVar``,
keyword-only or ``init=False`` fields, slots, a dataclass base) gets the
standard decorator's ``__init__``, ``__setattr__`` and ``__delattr__``. A
method the class defines itself is kept, as the standard decorator keeps
it. Any other options are the standard decorator's own.

Type checkers see the standard decorator.
"""

from __future__ import annotations

import dataclasses
import inspect
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
    own = dict(cls.__dict__)
    # The standard decorator's rule: a class that defines __eq__ and no
    # __hash__ has __hash__ None in its namespace, which does not count.
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    made: Any
    if _plain(cls, own):
        if not own.get("__doc__"):
            # For now: the standard decorator would write one from the
            # signature of a class without an __init__ yet (by parsing
            # object's text signature); it is written below.
            cls.__doc__ = cls.__name__
        made = dataclasses.dataclass(cls, init=False, repr=False, eq=False, frozen=False)
        fields = dataclasses.fields(made)
        _make_frozen(made, fields)
        if not own.get("__doc__"):
            # What the standard decorator writes for a class without one.
            # The signature of the __init__ just made, without its first
            # parameter: the class's own, which inspect would find by a
            # longer road (one that parses object's text signature).
            parameters = list(inspect.signature(made.__init__).parameters.values())[1:]
            made.__doc__ = made.__name__ + str(inspect.Signature(parameters))
    else:
        made = dataclasses.dataclass(cls, frozen=True, eq=False, repr=False)
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


def _plain(cls: type, own: dict[str, Any]) -> bool:
    """Whether the frozen record ``cls`` is one whose ``__init__`` this
    module writes (:func:`_make_frozen`): no dataclass or slotted base, no
    ``__slots__``, ``__post_init__``, ``__init__``, ``__setattr__`` or
    ``__delattr__`` of its own, no ``InitVar``, ``KW_ONLY``, keyword-only
    or ``init=False`` field. The others are the standard decorator's."""
    if any("__slots__" in base.__dict__ or "__dataclass_fields__" in base.__dict__ for base in cls.__mro__[:-1]):
        return False
    if hasattr(cls, "__post_init__") or any(name in own for name in ("__init__", "__setattr__", "__delattr__")):
        return False
    for name, hint in own.get("__annotations__", {}).items():
        if "InitVar" in str(hint) or "KW_ONLY" in str(hint):
            return False
        value = own.get(name)
        if isinstance(value, dataclasses.Field) and (not value.init or value.kw_only is True):
            return False
    return True


class _Factory:
    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()
"""The default of an ``__init__`` parameter whose field has a default
factory (printed as the standard decorator's is)."""

_PROTOTYPE: Any = dataclasses.dataclass(frozen=True)(type("_Prototype", (), {"__doc__": ""}))
_PARAMS: object = _PROTOTYPE.__dataclass_params__
"""What the standard decorator records of a frozen class (``frozen``,
``eq`` ... as ``dataclass(frozen=True)`` gives them)."""


def _make_frozen(cls: Any, fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """Give the dataclass ``cls`` (made with ``init=False``) the ``__init__``
    of a frozen one and the ``__setattr__`` and ``__delattr__`` that refuse
    to change a field, as ``dataclass(frozen=True)`` does. The ``__init__``
    stores the fields in the instance's ``__dict__`` directly, where the
    standard one calls ``object.__setattr__`` for each (three times slower:
    the generator makes some 50,000 records a run); the other two are
    closures, not code compiled for each class."""
    me = "__dataclass_self__" if any(f.name == "self" for f in fields) else "self"
    scope: dict[str, Any] = {"__name__": cls.__module__, "__dataclass_factory__": _FACTORY}
    parameters: list[str] = []
    body: list[str] = []
    defaulted = False
    for f in fields:
        default = f"__dataclass_dflt_{f.name}__"
        if f.default is not dataclasses.MISSING:
            scope[default] = f.default
            parameters.append(f"{f.name}={default}")
            value = f.name
        elif f.default_factory is not dataclasses.MISSING:
            scope[default] = f.default_factory
            parameters.append(f"{f.name}=__dataclass_factory__")
            value = f"{default}() if {f.name} is __dataclass_factory__ else {f.name}"
        else:
            if defaulted:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            parameters.append(f.name)
            value = f.name
        defaulted = defaulted or f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        body.append(f"    __dataclass_dict__[{f.name!r}] = {value}\n")
    source = f"def __init__({', '.join([me, *parameters])}):\n    __dataclass_dict__ = {me}.__dict__\n" + "".join(body)
    exec(source, scope)
    init = scope["__init__"]
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    names = frozenset(f.name for f in fields)

    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for method in (init, __setattr__, __delattr__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
        setattr(cls, method.__name__, method)
    cls.__dataclass_params__ = _PARAMS


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
