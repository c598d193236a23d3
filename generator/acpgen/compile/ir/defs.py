"""Definitions, one per ``$defs`` entry: objects, aliases, enums and unions,
with their fields, documentation and ``x-method``/``x-side``."""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

from ...records import dataclass
from .methods import Side
from .types import NO_DEFAULT, JsonValue, KeyedT, NullableT, TypeExpr, Value

Role = Literal["tagged", "catch_all", "untagged", "null_tag"]
"""What selects a union variant (the constants below)."""
ValueKind = Literal["str", "int"]
"""The JSON type of an enum's values."""
OnError = Literal["raise", "absent", "empty"]
"""What lenient decoding does with a field's invalid value."""
Empty = Literal["list", "map"]
"""What ``x-deserialize-default-on-null`` makes of null: an empty list or map."""


@dataclass(frozen=True)
class InitParam:
    """One keyword parameter of a generated class's ``__init__``."""

    name: str
    default: Value | None = None
    """The default value; None with ``unset`` false: the parameter is required."""
    unset: bool = False
    """The default is ``UNSET`` (an optional field without a schema default)."""

    @property
    def factory(self) -> bool:
        """The default is a list or dict: built afresh for each instance."""
        return self.default is not None and self.default.mutable


@dataclass(frozen=True)
class Field:
    wire_name: str
    type: TypeExpr
    required: bool
    description: str = ""
    default: Any = NO_DEFAULT
    """The schema ``default`` as JSON, or :data:`NO_DEFAULT`."""
    default_value: Value | None = None
    """The default as the Python value to construct (set by ``defaults``)."""
    default_on_error: bool = False
    """``x-deserialize-default-on-error``."""
    default_on_null: bool = False
    """``x-deserialize-default-on-null``."""
    on_null: Empty | None = None
    """With ``default_on_null``: what null becomes, an empty list or map
    (``lower`` resolves aliases to tell which)."""
    name: str = ""
    """The Python attribute name (set by ``naming``)."""
    flatten: bool = False
    """The field has no key of its own: its value (a :class:`KeyedT`) is read
    from, and written into, the object that holds it. ``wire_name`` is
    empty."""

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def init_param(self) -> InitParam:
        if self.required:
            return InitParam(self.name)
        if self.default_value is not None:
            return InitParam(self.name, self.default_value)
        return InitParam(self.name, unset=True)

    @property
    def on_error(self) -> OnError:
        """What lenient decoding does with an invalid value, as the reference
        does: ``"raise"``, ``"absent"`` (the default, or UNSET) or ``"empty"``
        (``[]``, for a list that cannot be null: serde's ``Default``)."""
        if not self.default_on_error:
            return "raise"
        if self.has_default:
            return "absent"
        if self.type.kind == "list":
            return "empty"
        return "raise" if self.required else "absent"

    @property
    def nullable(self) -> bool:
        return isinstance(self.type, NullableT)

    @property
    def value_type(self) -> TypeExpr:
        """The type without its nullability."""
        return self.type.inner if isinstance(self.type, NullableT) else self.type


@dataclass(frozen=True)
class Method:
    """``x-method`` and ``x-side``: the JSON-RPC method a definition carries."""

    name: str
    side: Side


class _Named:
    """What every definition has: its ``$defs`` name and where it is."""

    name: str
    class_name: str

    @property
    def pointer(self) -> str:
        """The JSON pointer of the definition (RFC 6901 escapes applied)."""
        return "/$defs/" + self.name.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True)
class ObjectDef(_Named):
    name: str
    fields: tuple[Field, ...]
    description: str = ""
    method: Method | None = None
    class_name: str = ""
    closed: bool = False
    """``additionalProperties: false``: strict mode refuses other keys
    (lenient mode ignores them, as it does everywhere)."""
    undeclared_required: tuple[str, ...] = ()
    """Keys ``required`` names without a property: they must be there."""

    @property
    def declared_keys(self) -> tuple[str, ...]:
        """The keys its fields read, flattened ones included."""
        out: list[str] = []
        for f in self.fields:
            out.extend(f.type.wire_names if isinstance(f.type, KeyedT) else (f.wire_name,))
        return tuple(out)

    @property
    def init_params(self) -> tuple[InitParam, ...]:
        """The ``__init__`` parameters, in field order."""
        return tuple(f.init_param for f in self.fields)

    kind: ClassVar[Literal["object"]] = "object"


@dataclass(frozen=True)
class AliasDef(_Named):
    """A named type that is not a class of its own (``SessionId = str``)."""

    name: str
    target: TypeExpr
    description: str = ""
    method: Method | None = None
    class_name: str = ""
    declined: tuple[str, ...] = ()
    """Why the definition is not an enum, a union or a class, when it has
    the keywords of one (empty for a plain alias such as ``str``)."""
    named_string: bool = False
    """A named string type: the target is a string (a ``pattern``, ``format``
    or length still counts) and the definition has no ``enum``, ``const``
    or combinator that was declined. Its values are a type of their own
    (``SessionId`` is not a ``ToolCallId``), though they are plain strings
    on the wire and in memory."""

    kind: ClassVar[Literal["alias"]] = "alias"


@dataclass(frozen=True)
class EnumMember:
    value: str | int
    description: str = ""
    title: str = ""
    name: str = ""


@dataclass(frozen=True)
class EnumDef(_Named):
    """Constants of one JSON type; ``open`` when a catch-all accepts any other
    value of that type (kept as a plain ``str``/``int``)."""

    name: str
    members: tuple[EnumMember, ...]
    open: bool
    value_kind: ValueKind
    description: str = ""
    open_description: str = ""
    open_min: int | None = None
    open_max: int | None = None
    """For an open integer enum: the range its catch-all's ``format`` and
    bounds allow (enforced in lenient mode, like other integer formats)."""
    method: Method | None = None
    class_name: str = ""

    kind: ClassVar[Literal["enum"]] = "enum"


TAGGED: Final = "tagged"
"""A variant chosen by a constant tag value."""
CATCH_ALL: Final = "catch_all"
"""The variant for any other tag string; keeps the payload as it is."""
UNTAGGED: Final = "untagged"
"""The variant for an object without the tag property."""
NULL_TAG: Final = "null_tag"
"""The variant for a tag that is ``null`` or absent."""


@dataclass(frozen=True)
class Variant:
    role: Role
    """One of :data:`TAGGED`, :data:`CATCH_ALL`, :data:`UNTAGGED`, :data:`NULL_TAG`."""
    tag: str | None
    fields: tuple[Field, ...]
    """All fields but the tag: the union's shared fields, then the variant's."""
    title: str = ""
    description: str = ""
    ref: str | None = None
    """The ``$defs`` name whose properties the variant carries, if any."""
    wraps: str | None = None
    """Set when the tagged payload is itself a union (or another shape that is
    not a plain object): the variant then holds that definition's value in
    one attribute, ``value``, decoded from the same JSON object."""
    required_keys: tuple[str, ...] = ()
    """For the variants of an untagged union: the keys that select it."""
    reuses_ref: bool = False
    """The variant is the class of ``ref`` itself (an untagged variant with
    nothing to add), not a class of its own."""
    pointer: str = ""
    """The JSON pointer of the variant's subschema, for strict validation."""
    class_name: str = ""

    @property
    def declared_keys(self) -> tuple[str, ...]:
        """The keys its fields read, flattened ones included."""
        out: list[str] = []
        for f in self.fields:
            out.extend(f.type.wire_names if isinstance(f.type, KeyedT) else (f.wire_name,))
        return tuple(out)


@dataclass(frozen=True)
class UnionDef(_Named):
    """A union of objects told apart by the tag property ``tag``, or, when
    ``tag`` is None, by which required keys an object has (every variant is
    then :data:`UNTAGGED` and their ``required_keys`` differ)."""

    name: str
    tag: str | None
    variants: tuple[Variant, ...]
    description: str = ""
    method: Method | None = None
    class_name: str = ""
    tag_name: str = ""
    """The Python name of the tag attribute on catch-all variants."""
    tag_lenient: bool = False
    """The tag property is ``x-deserialize-default-on-error``: in lenient mode
    a tag that is not a string counts as absent."""
    exclusive: bool = False
    """For a union without a tag from ``oneOf``: an object with the required
    keys of two variants is an error (with ``anyOf`` the first that decodes
    wins)."""

    kind: ClassVar[Literal["union"]] = "union"

    @property
    def catch_all(self) -> Variant | None:
        return next((v for v in self.variants if v.role == CATCH_ALL), None)

    @property
    def tagged(self) -> tuple[Variant, ...]:
        return tuple(v for v in self.variants if v.role == TAGGED)

    @property
    def untagged(self) -> Variant | None:
        return next((v for v in self.variants if v.role in (UNTAGGED, NULL_TAG)), None)

    def init_params(self, variant: Variant) -> tuple[InitParam, ...]:
        """The ``__init__`` parameters of a variant class: a catch-all's tag
        first, a wrapped payload's ``value``, the fields, and a catch-all's
        ``extra``."""
        params: list[InitParam] = []
        if variant.role == CATCH_ALL:
            params.append(InitParam(self.tag_name))
        if variant.wraps:
            params.append(InitParam("value"))
        params.extend(f.init_param for f in variant.fields)
        if variant.role == CATCH_ALL:
            params.append(InitParam("extra", JsonValue({})))
        return tuple(params)

    @property
    def catch_all_known_keys(self) -> tuple[str, ...]:
        """The wire keys the catch-all variant reads (the tag and its
        declared fields): every other key goes to its ``extra``."""
        if self.catch_all is None or self.tag is None:
            return ()
        return (self.tag, *self.catch_all.declared_keys)

    @property
    def dispatch_by_tag(self) -> bool:
        """Callers may look up the variant for a tag in ``_VARIANTS_<class>``
        themselves, and call the union's own decoder only for what the table
        has no entry for (no object, no tag, an unknown tag): so for a tagged
        union whose tagged variants have no untagged fallback to try after
        them."""
        return self.tag is not None and self.fallback is None

    @property
    def fallback(self) -> Variant | None:
        """The variant for an object whose tag is absent or that the tagged
        variants refuse (an :data:`UNTAGGED` one, not a :data:`NULL_TAG` one)."""
        return next((v for v in self.variants if v.role == UNTAGGED), None)

    @property
    def null_tag_variant(self) -> Variant | None:
        """The variant for a tag that is ``null`` or absent."""
        return next((v for v in self.variants if v.role == NULL_TAG), None)


Definition = ObjectDef | AliasDef | EnumDef | UnionDef
