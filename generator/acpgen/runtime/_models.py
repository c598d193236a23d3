"""The base classes of the generated models, and the light stand-ins for
``dataclasses.dataclass(slots=True, kw_only=True)`` and ``dataclasses.field``
that ``models.py`` uses at import (type checkers see the real ones).

Importing a package does not import ``dataclasses`` (with ``inspect``, ``ast``
and ``dis`` it costs more than the package's models): a class's
``__dataclass_fields__`` and ``__dataclass_params__`` are made on their first
read, by ``dataclasses.fields``, ``replace``, ``asdict`` or
``is_dataclass``, whose caller has imported ``dataclasses`` already."""

from __future__ import annotations

import functools
import reprlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

if TYPE_CHECKING:
    import dataclasses

    from ._codec import DecodeClass, Encode

__all__ = ["FACTORY", "Model", "State", "bind", "dataclass", "field"]

_C = TypeVar("_C", bound=type)
_M = TypeVar("_M", bound="Model")

FACTORY: Any = object()
"""The default of an ``__init__`` parameter whose field default is made fresh
per instance."""


def dataclass(**options: object) -> Callable[[_C], _C]:
    """At import, a light stand-in for ``dataclasses.dataclass(slots=True,
    kw_only=True)``: the class defines ``__init__`` as source, and this
    builds the slotted class with what the dataclass fields table is made
    from on its first read (so ``dataclasses.fields``, ``replace`` and
    ``is_dataclass`` work), the shared ``__repr__`` and ``__eq__`` of its
    base, and no per-class code generation. ``options`` are what the real
    decorator is given, for type checkers; this always makes what those
    give."""
    return _slotted


class _Field:
    """What :func:`field` gives: the options of the ``dataclasses.field``
    the fields table makes when it is first read."""

    __slots__ = ("options",)

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options


def field(**options: Any) -> Any:
    """At import, a light stand-in for ``dataclasses.field``: the field's
    options, kept for the fields table (see :func:`dataclass`)."""
    return _Field(options)


_NO_DEFAULT: Any = object()
"""The default of a field that has none (``dataclasses.MISSING``, once
``dataclasses`` is imported)."""


def _slotted(cls: _C) -> _C:
    body = dict(cls.__dict__)
    declared: list[tuple[str, str, Any]] = []
    annotations: dict[str, str] = body.get("__annotations__", {})
    for name, hint in annotations.items():
        # The generated models import ClassVar as _ClassVar.
        if hint.startswith(("ClassVar", "_ClassVar")):
            continue
        declared.append((name, hint, body.pop(name, _NO_DEFAULT)))
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    body["__slots__"] = body["_FIELD_NAMES"] = tuple(name for name, _, _ in declared)
    body["__dataclass_fields__"] = _Made(lambda: _fields_table(declared))
    body["__dataclass_params__"] = _Made(_params)
    body["__match_args__"] = ()
    body["__hash__"] = None
    if sys.version_info >= (3, 13):  # copy.replace
        body["__replace__"] = _replace
    made: Any = type(cls)(cls.__name__, cls.__bases__, body)
    return cast(_C, made)


class _Made:
    """A class attribute made on its first read (``make()``), which then
    replaces this in the class that declared it."""

    __slots__ = ("make", "name", "owner")

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make

    def __set_name__(self, owner: type, name: str) -> None:
        self.owner, self.name = owner, name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        value = self.make()
        setattr(self.owner, self.name, value)
        return value


def _fields_table(
    declared: list[tuple[str, str, Any]],
) -> dict[str, dataclasses.Field[Any]]:
    """The ``__dataclass_fields__`` of a class whose fields are ``declared``
    (name, annotation, default or :func:`field`'s options): what the real
    decorator records for keyword-only fields."""
    import dataclasses

    table: dict[str, dataclasses.Field[Any]] = {}
    for name, hint, default in declared:
        made: Any = default
        if type(default) is _Field:
            made = dataclasses.field(**default.options)
        elif default is _NO_DEFAULT:
            made = dataclasses.field()
        elif not isinstance(default, dataclasses.Field):
            made = dataclasses.field(default=default)
        f: dataclasses.Field[Any] = made
        f.name = name
        f.type = hint
        # What the decorator records for a keyword-only field of the class.
        setattr(f, "_field_type", getattr(dataclasses, "_FIELD"))
        f.kw_only = True
        table[name] = f
    return table


class _Params:
    pass


@functools.cache
def _params() -> object:
    """What dataclasses.dataclass(slots=True, kw_only=True) records, for code
    that reads it (``__dataclass_params__.frozen`` and the like)."""
    import dataclasses

    made = dataclasses.dataclass(slots=True, kw_only=True)(_Params)
    return getattr(made, "__dataclass_params__")


def _replace(self: Any, /, **changes: Any) -> Any:
    """``__replace__`` of a dataclass (``copy.replace``, Python 3.13+)."""
    import dataclasses

    return dataclasses.replace(self, **changes)


_UNBOUND = "the package's codec module is not loaded"
_decode_class: DecodeClass | None = None
_encode: Encode | None = None


def bind(decode_class: DecodeClass, encode: Encode) -> None:
    """Give ``from_wire`` and ``to_wire`` the package's codec (its
    ``codec.py`` calls this once, as it loads)."""
    global _decode_class, _encode
    _decode_class, _encode = decode_class, encode


class _Shared:
    """``__repr__`` and ``__eq__`` over the dataclass fields."""

    __slots__ = ()

    # Not dataclasses.Field: typing.get_type_hints of a generated class
    # evaluates this, and the module does not import dataclasses.
    __dataclass_fields__: ClassVar[dict[str, Any]]
    _FIELD_NAMES: ClassVar[tuple[str, ...]] = ()
    """The class's fields, in order (set by the stand-in)."""

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={getattr(self, name)!r}" for name in self._FIELD_NAMES
        )
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = self._FIELD_NAMES
        return tuple(getattr(self, name) for name in names) == tuple(
            getattr(other, name) for name in names
        )


class Model(_Shared):
    """Wire conversions shared by every generated class."""

    __slots__ = ()

    @classmethod
    def from_wire(cls: type[_M], data: Any, *, strict: bool = False) -> _M:
        """Decode ``data`` (parsed JSON) as this class; see ``decode``."""
        if _decode_class is None:
            raise RuntimeError(_UNBOUND)
        return _decode_class(cls, data, strict=strict)

    def to_wire(self) -> dict[str, Any]:
        """The JSON-compatible wire form; see ``encode``."""
        if _encode is None:
            raise RuntimeError(_UNBOUND)
        return _encode(self)


class State(_Shared):
    """Patch-merge state: its wire form is the full snapshot."""

    __slots__ = ()

    def to_wire(self) -> dict[str, Any]:
        """The full snapshot: every field present, cleared values as null."""
        if _encode is None:
            raise RuntimeError(_UNBOUND)
        return _encode(self)
