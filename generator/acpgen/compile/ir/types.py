"""Type expressions and default values: the JSON a field or an alias holds.

Scalars with their constraints, arrays, maps, nullability, references to
named definitions, unions of scalar kinds, and ``RawT`` for a shape the
typed codec does not model (kept as JSON, checked against its subschema);
and the Python values a schema ``default`` becomes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from typing import Any, ClassVar, Literal

from ...records import dataclass


class _NoDefault:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()
"""Marks a field without a schema ``default``."""


# ---------------------------------------------------------------- type expressions


@dataclass(frozen=True)
class AnyT:
    """Any JSON value (an empty schema); kept as it is."""

    kind: ClassVar[Literal["any"]] = "any"


@dataclass(frozen=True)
class StrT:
    kind: ClassVar[Literal["str"]] = "str"
    min_length: int | None = None
    format: str | None = None
    """An annotation only: never checked (the Rust reference does not)."""
    pattern: str | None = None
    """A regular expression the string must match: checked in strict mode
    only (lenient mode keeps any string, as the Rust reference does)."""


@dataclass(frozen=True)
class IntT:
    """An integer. ``minimum``/``maximum`` come from the schema; ``format`` is a
    Rust integer type whose range lenient decoding also enforces."""

    kind: ClassVar[Literal["int"]] = "int"
    minimum: int | None = None
    maximum: int | None = None
    format: str | None = None
    format_min: int | None = None
    format_max: int | None = None

    @property
    def lenient_min(self) -> int | None:
        return _tightest(self.minimum, self.format_min, max)

    @property
    def lenient_max(self) -> int | None:
        return _tightest(self.maximum, self.format_max, min)


@dataclass(frozen=True)
class NumT:
    kind: ClassVar[Literal["num"]] = "num"
    minimum: float | None = None
    maximum: float | None = None
    format: str | None = None


@dataclass(frozen=True)
class BoolT:
    kind: ClassVar[Literal["bool"]] = "bool"


@dataclass(frozen=True)
class NullT:
    kind: ClassVar[Literal["null"]] = "null"


@dataclass(frozen=True)
class ConstT:
    """Exactly one JSON value."""

    kind: ClassVar[Literal["const"]] = "const"
    value: Any = None


@dataclass(frozen=True)
class ListT:
    kind: ClassVar[Literal["list"]] = "list"
    items: TypeExpr = field(default_factory=AnyT)
    min_items: int | None = None
    skip_invalid: bool = False
    """``x-deserialize-skip-invalid-items``: lenient decoding drops bad items."""


@dataclass(frozen=True)
class MapT:
    """A JSON object used as a map (``additionalProperties`` only)."""

    kind: ClassVar[Literal["map"]] = "map"
    values: TypeExpr = field(default_factory=AnyT)


@dataclass(frozen=True)
class RefT:
    """A reference to a named definition, by its ``$defs`` name."""

    kind: ClassVar[Literal["ref"]] = "ref"
    name: str = ""


@dataclass(frozen=True)
class NullableT:
    kind: ClassVar[Literal["nullable"]] = "nullable"
    inner: TypeExpr = field(default_factory=AnyT)


@dataclass(frozen=True)
class ScalarUnionT:
    """A union whose members have distinct JSON types (``integer | string``):
    decoding dispatches on the JSON type and keeps it."""

    kind: ClassVar[Literal["scalar_union"]] = "scalar_union"
    members: tuple[TypeExpr, ...] = ()


@dataclass(frozen=True)
class FirstMatchT:
    """An untagged union that nothing on the wire tells apart: the first
    member that decodes wins, as serde's ``untagged`` enums do; from a
    ``oneOf`` (``exclusive``), exactly one member may decode."""

    kind: ClassVar[Literal["first_match"]] = "first_match"
    members: tuple[TypeExpr, ...] = ()
    exclusive: bool = False


@dataclass(frozen=True)
class KeyedT:
    """Objects told apart by which of their required keys are present, read
    from the JSON object that holds them (serde's ``flatten`` of an
    ``untagged`` enum): the ``oneOf``/``anyOf`` of scopes inside an object
    with properties of its own (``ElicitationFormMode``). Only a field with
    ``flatten`` has this type.

    ``refs`` are the ``$defs`` names of plain objects, ``keys`` the required
    keys that select each one. With ``exclusive`` (``oneOf``) an object that
    has the keys of two members is an error; otherwise (``anyOf``) the first
    member whose keys are present and that decodes wins."""

    kind: ClassVar[Literal["keyed"]] = "keyed"
    refs: tuple[str, ...] = ()
    keys: tuple[tuple[str, ...], ...] = ()
    exclusive: bool = False
    wire_names: tuple[str, ...] = ()
    """Every property of every member: the keys the field reads."""
    label: str = "variant"
    """What the members have in common (``scope`` for ``...Scope``): the
    attribute name of the flattened field."""


@dataclass(frozen=True)
class RawT:
    """A shape the typed codec does not model: the value is kept as JSON and
    checked against the subschema at ``pointer`` in both modes."""

    kind: ClassVar[Literal["raw"]] = "raw"
    pointer: str = ""
    reason: str = field(default="", compare=False)
    """Why lowering keeps it as JSON (what the typed codec does not model)."""


TypeExpr = (
    AnyT
    | StrT
    | IntT
    | NumT
    | BoolT
    | NullT
    | ConstT
    | ListT
    | MapT
    | RefT
    | NullableT
    | ScalarUnionT
    | FirstMatchT
    | KeyedT
    | RawT
)


# ---------------------------------------------------------------- default values


@dataclass(frozen=True)
class JsonValue:
    """A JSON value used as it is (a scalar, or a list/dict of plain JSON)."""

    kind: ClassVar[Literal["json"]] = "json"
    value: Any = None

    @property
    def mutable(self) -> bool:
        return isinstance(self.value, (list, dict))


@dataclass(frozen=True)
class EnumValue:
    kind: ClassVar[Literal["enum"]] = "enum"
    class_name: str = ""
    member: str = ""
    mutable = False


@dataclass(frozen=True)
class ObjectValue:
    """``ClassName(field=value, ...)``."""

    kind: ClassVar[Literal["object"]] = "object"
    class_name: str = ""
    fields: tuple[tuple[str, Value], ...] = ()
    mutable = True


@dataclass(frozen=True)
class ListValue:
    kind: ClassVar[Literal["list"]] = "list"
    items: tuple[Value, ...] = ()
    mutable = True


Value = JsonValue | EnumValue | ObjectValue | ListValue


def _tightest(a: int | None, b: int | None, pick: Callable[[int, int], int]) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return pick(a, b)
