"""The base classes of the generated models, and the light stand-in for
``dataclasses.dataclass(slots=True, kw_only=True)`` that ``models.py`` uses
at import (type checkers see the real decorator)."""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

if TYPE_CHECKING:
    from ._codec import DecodeClass, Encode

__all__ = ["FACTORY", "Model", "State", "bind", "dataclass"]

_C = TypeVar("_C", bound=type)
_M = TypeVar("_M", bound="Model")

FACTORY: Any = object()
"""The default of an ``__init__`` parameter whose field default is made fresh
per instance."""


def dataclass(**options: object) -> Callable[[_C], _C]:
    """At import, a light stand-in for ``dataclasses.dataclass(slots=True,
    kw_only=True)``: the class defines ``__init__`` as source, and this
    builds the slotted class with the dataclass fields table (so
    ``dataclasses.fields``, ``replace`` and ``is_dataclass`` work), the
    shared ``__repr__`` and ``__eq__`` of its base, and no per-class code
    generation. ``options`` are what the real decorator is given, for type
    checkers; this always makes what those give."""
    return _slotted


def _slotted(cls: _C) -> _C:
    body = dict(cls.__dict__)
    table: dict[str, dataclasses.Field[Any]] = {}
    f: dataclasses.Field[Any]
    annotations: dict[str, str] = body.get("__annotations__", {})
    for name, hint in annotations.items():
        # The generated models import ClassVar as _ClassVar.
        if hint.startswith(("ClassVar", "_ClassVar")):
            continue
        default: Any = body.pop(name, dataclasses.MISSING)
        if isinstance(default, dataclasses.Field):
            f = cast("dataclasses.Field[object]", default)
        else:
            f = dataclasses.field(default=default)
        f.name = name
        f.type = hint
        # What the decorator records for a keyword-only field of the class.
        setattr(f, "_field_type", _FIELD)
        f.kw_only = True
        table[name] = f
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    body["__slots__"] = tuple(table)
    body["__dataclass_fields__"] = table
    body["__dataclass_params__"] = _PARAMS
    body["__match_args__"] = ()
    body["__hash__"] = None
    if _REPLACE is not None:  # copy.replace, Python 3.13+
        body["__replace__"] = _REPLACE
    made: Any = type(cls)(cls.__name__, cls.__bases__, body)
    return cast(_C, made)


_FIELD: object = getattr(dataclasses, "_FIELD")
"""The marker of an ordinary field in ``dataclasses``' own records."""

_REPLACE: object = getattr(dataclasses, "_replace", None)
"""``__replace__`` of a dataclass (Python 3.13+), or None."""


class _Params:
    pass


# What dataclasses.dataclass(slots=True, kw_only=True) records, for code that
# reads it (``__dataclass_params__.frozen`` and the like).
_PARAMS: object = getattr(
    dataclasses.dataclass(slots=True, kw_only=True)(_Params), "__dataclass_params__"
)


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

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={getattr(self, name)!r}" for name in self.__dataclass_fields__
        )
        return f"{type(self).__qualname__}({fields})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = self.__dataclass_fields__
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
