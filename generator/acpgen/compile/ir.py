"""The intermediate representation: what will be generated, nothing more.

Small immutable dataclasses. ``lower`` builds them from a schema with wire
names only; ``naming`` fills in the Python names; the templates print them.
Two families:

* type expressions (:data:`TypeExpr`) describe the JSON a field or an alias
  holds: scalars with their constraints, arrays, maps, nullability, references
  to named definitions, unions of scalar kinds, and ``RawT`` for a shape the
  typed codec does not model (kept as JSON, checked against its subschema);
* definitions (:data:`Definition`), one per ``$defs`` entry: objects, aliases,
  enums and unions, with their documentation and ``x-method``/``x-side``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Literal, Union


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
    items: "TypeExpr" = field(default_factory=AnyT)
    min_items: int | None = None
    skip_invalid: bool = False
    """``x-deserialize-skip-invalid-items``: lenient decoding drops bad items."""


@dataclass(frozen=True)
class MapT:
    """A JSON object used as a map (``additionalProperties`` only)."""

    kind: ClassVar[Literal["map"]] = "map"
    values: "TypeExpr" = field(default_factory=AnyT)


@dataclass(frozen=True)
class RefT:
    """A reference to a named definition, by its ``$defs`` name."""

    kind: ClassVar[Literal["ref"]] = "ref"
    name: str = ""


@dataclass(frozen=True)
class NullableT:
    kind: ClassVar[Literal["nullable"]] = "nullable"
    inner: "TypeExpr" = field(default_factory=AnyT)


@dataclass(frozen=True)
class ScalarUnionT:
    """A union whose members have distinct JSON types (``integer | string``):
    decoding dispatches on the JSON type and keeps it."""

    kind: ClassVar[Literal["scalar_union"]] = "scalar_union"
    members: tuple["TypeExpr", ...] = ()


@dataclass(frozen=True)
class FirstMatchT:
    """An untagged union that nothing on the wire tells apart: the first
    member that decodes wins, as serde's ``untagged`` enums do; from a
    ``oneOf`` (``exclusive``), exactly one member may decode."""

    kind: ClassVar[Literal["first_match"]] = "first_match"
    members: tuple["TypeExpr", ...] = ()
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

    @property
    def no_match_message(self) -> str:
        """The error for an object with the required keys of no member."""
        return "expected the members of " + self._members_text

    @property
    def ambiguous_message(self) -> str:
        """The error for an ``exclusive`` field whose object has the
        required keys of more than one member."""
        return "expected the members of exactly one of " + self._members_text

    @property
    def _members_text(self) -> str:
        return " or ".join(self.refs) + " (" + "; ".join(", ".join(k) for k in self.keys) + ")"


@dataclass(frozen=True)
class RawT:
    """A shape the typed codec does not model: the value is kept as JSON and
    checked against the subschema at ``pointer`` in both modes."""

    kind: ClassVar[Literal["raw"]] = "raw"
    pointer: str = ""


TypeExpr = Union[
    AnyT,
    StrT,
    IntT,
    NumT,
    BoolT,
    NullT,
    ConstT,
    ListT,
    MapT,
    RefT,
    NullableT,
    ScalarUnionT,
    FirstMatchT,
    KeyedT,
    RawT,
]


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
    fields: tuple[tuple[str, "Value"], ...] = ()
    mutable = True


@dataclass(frozen=True)
class ListValue:
    kind: ClassVar[Literal["list"]] = "list"
    items: tuple["Value", ...] = ()
    mutable = True


Value = Union[JsonValue, EnumValue, ObjectValue, ListValue]


# ---------------------------------------------------------------- definitions


@dataclass(frozen=True)
class InitParam:
    """One keyword parameter of a generated class's ``__init__``."""

    name: str
    default: "Value | None" = None
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
    default_value: "Value | None" = None
    """The default as the Python value to construct (set by ``defaults``)."""
    default_on_error: bool = False
    """``x-deserialize-default-on-error``."""
    default_on_null: bool = False
    """``x-deserialize-default-on-null``."""
    on_null: str = ""
    """With ``default_on_null``: what null becomes, ``"[]"`` or ``"{}"`` (as
    Python source; ``lower`` resolves aliases to tell which)."""
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
    def on_error(self) -> str:
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
    side: str


class _Named:
    """What every definition has: its ``$defs`` name and where it is."""

    name: str
    class_name: str

    @property
    def pointer(self) -> str:
        """The JSON pointer of the definition (RFC 6901 escapes applied)."""
        return "/$defs/" + self.name.replace("~", "~0").replace("/", "~1")

    @property
    def annotation(self) -> str:
        """The Python annotation of a value of this definition (its class)."""
        return self.class_name


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
    value_kind: str
    """``"str"`` or ``"int"``."""
    description: str = ""
    open_description: str = ""
    open_min: int | None = None
    open_max: int | None = None
    """For an open integer enum: the range its catch-all's ``format`` and
    bounds allow (enforced in lenient mode, like other integer formats)."""
    method: Method | None = None
    class_name: str = ""

    kind: ClassVar[Literal["enum"]] = "enum"

    @property
    def annotation(self) -> str:
        """The class, or for an open enum the class or a plain value."""
        return f"{self.class_name} | {self.value_kind}" if self.open else self.class_name

    @property
    def doc(self) -> str:
        """The class docstring: the schema's description, and for an open
        enum what happens to other values."""
        if not self.open:
            return self.description
        kind = "string" if self.value_kind == "str" else "integer"
        text = f"{self.description}\n\nOpen: any other {kind} is accepted and kept as a plain {self.value_kind}."
        return text + (f"\n\n{self.open_description}" if self.open_description else "")

    @property
    def expected_message(self) -> str:
        """The error for a value that is not a member of a closed enum."""
        return "expected one of " + ", ".join(json.dumps(m.value) for m in self.members)


TAGGED = "tagged"
"""A variant chosen by a constant tag value."""
CATCH_ALL = "catch_all"
"""The variant for any other tag string; keeps the payload as it is."""
UNTAGGED = "untagged"
"""The variant for an object without the tag property."""
NULL_TAG = "null_tag"
"""The variant for a tag that is ``null`` or absent."""


@dataclass(frozen=True)
class Variant:
    role: str
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

    @property
    def unknown_tag_message(self) -> str:
        """The error for a tag string no variant has."""
        return "expected one of " + ", ".join(json.dumps(v.tag) for v in self.tagged)

    @property
    def no_match_message(self) -> str:
        """The error for an object of an untagged union with the required
        keys of no variant."""
        return "expected an object with the members of " + self._members_text

    @property
    def ambiguous_message(self) -> str:
        """The error for an object of an exclusive untagged union with the
        required keys of more than one variant."""
        return "expected an object with the members of exactly one of " + self._members_text

    @property
    def _members_text(self) -> str:
        titles = " or ".join(v.title for v in self.variants)
        keys = "; ".join(", ".join(v.required_keys) for v in self.variants)
        return f"{titles} ({keys})"


Definition = Union[ObjectDef, AliasDef, EnumDef, UnionDef]


# ---------------------------------------------------------------- upserts


@dataclass(frozen=True)
class PatchField:
    """One field of a stored state and the rule an update applies to it."""

    wire_name: str
    name: str
    rule: str
    """``key``, ``replace``, ``null-clears``, ``null-resets``, ``collection``
    or ``meta-patch`` (see the rules file)."""
    type: TypeExpr
    """The state's type: never UNSET; nullable only where null is a value."""
    initial: "Value | None" = None
    """The value of a new entity (None for a key, which comes from the update)."""
    sentence: str = ""
    everywhere: bool = False
    """Every class an apply function takes (``accepts`` and ``creates``) has
    this attribute, so the function reads it directly."""

    @property
    def doc(self) -> str:
        """The field's docstring: its rule, and the sentence it comes from."""
        return f"Rule: {self.rule}." + (f" {self.sentence}" if self.sentence else "")

    @property
    def is_key(self) -> bool:
        """The field names the entity: taken from the first update, then
        checked, never changed."""
        return self.rule == "key"

    @property
    def state_copy(self) -> str:
        """``list`` or ``dict`` when the stored value is a container the new
        state copies (so that states share none), else empty."""
        t = self.type.inner if isinstance(self.type, NullableT) else self.type
        return _copy_of(t)

    @property
    def null_value(self) -> "Value | None":
        """What a null in the update stores; None when null keeps the stored
        value (``replace``)."""
        if self.rule == "null-clears":
            return JsonValue(None)
        if self.rule == "null-resets":
            return self.initial
        if self.rule == "collection":
            return JsonValue({} if isinstance(self.type, MapT) else [])
        if self.rule == "meta-patch":
            return JsonValue({})
        return None

    @property
    def value_copy(self) -> str:
        """``list`` or ``dict`` when a value in the update is stored as a
        copy, else empty (stored as it is, or merged)."""
        if self.rule in ("replace", "collection"):
            return _copy_of(self.type)
        if self.rule == "null-clears" and isinstance(self.type, NullableT):
            return "list" if isinstance(self.type.inner, ListT) else ""
        return ""

    @property
    def merges(self) -> bool:
        """A value in the update is merged into the stored one key by key
        (``merge_meta``) rather than replacing it."""
        return self.rule == "meta-patch"


def _copy_of(t: TypeExpr) -> str:
    return "list" if isinstance(t, ListT) else "dict" if isinstance(t, MapT) else ""


@dataclass(frozen=True)
class Upsert:
    update: str
    """The ``$defs`` name of the update type."""
    state_class: str
    function: str
    """The per-type apply function, ``apply_tool_call_update``."""
    fields: tuple[PatchField, ...]
    accepts: tuple[str, ...]
    """The classes that carry this update: the type's own and the union
    variants that flatten it."""
    creates: tuple[str, ...] = ()
    """Classes of full snapshots that replace the state outright."""
    sentence: str = ""

    @property
    def state_doc(self) -> str:
        """The docstring of the state class."""
        return (
            f"The stored state of {self.update} upserts: every field concrete, never UNSET. "
            "`apply` folds updates into it; `encode` gives the full snapshot.\n\n" + self.sentence
        )

    @property
    def doc(self) -> str:
        """The docstring of the apply function."""
        return f"Fold a {self.update} into the stored state (None for an entity not seen before).\n\n" + self.sentence

    @property
    def takes(self) -> tuple[str, ...]:
        """The classes the apply function takes: ``accepts`` then
        ``creates``, each once."""
        return tuple(dict.fromkeys(self.accepts + self.creates))

    @property
    def updated(self) -> tuple[PatchField, ...]:
        """The fields an update may change (all but the keys)."""
        return tuple(f for f in self.fields if not f.is_key)

    @property
    def keys(self) -> tuple[PatchField, ...]:
        return tuple(f for f in self.fields if f.rule == "key")

    @property
    def init_params(self) -> tuple[InitParam, ...]:
        """The state class's ``__init__`` parameters: keys required, every
        other field with its initial value."""
        return tuple(InitParam(f.name) if f.rule == "key" else InitParam(f.name, f.initial) for f in self.fields)


@dataclass(frozen=True)
class Chunk:
    """A streamed item appended to an upsert's collection."""

    chunk: str
    function: str
    accepts: tuple[str, ...]
    target: Upsert
    field: str
    """The state's field (Python name) it appends to."""
    source: str
    """The chunk's field (Python name) that is appended."""
    append: str
    """``item`` or ``base64``."""
    keys: tuple[tuple[str, str], ...] = ()
    """(state field, chunk field) pairs that must match."""
    payload_class: str = ""
    """For ``base64``: the class of the payload object holding ``data``."""

    @property
    def doc(self) -> str:
        """The docstring of the append function."""
        return (
            f"Append a streamed {self.chunk} to the {self.field} of a {self.target.state_class}"
            " (None for an entity not seen before)."
        )


@dataclass(frozen=True)
class SessionField:
    """One attribute of the generated ``Session`` state."""

    name: str
    """The Python attribute (snake_case)."""
    wire_name: str
    """Its key in the snapshot's JSON (camelCase)."""
    container: str
    """``entities`` (a dict of states by key), ``state`` (one state or None),
    ``messages`` (v1: a dict of chunked messages), ``value`` (one value or
    None, or [] when ``empty``), ``values`` (a dict of values by key) or
    ``items`` (a list of values)."""
    state_class: str = ""
    """For ``entities`` and ``state``: the patch state class."""
    restore_from: str = ""
    """For ``entities`` and ``state``: the ``$defs`` name of the update type a
    snapshot is decoded as, to be folded into a new state ..."""
    restore_function: str = ""
    """... by this patch function."""
    value_type: "TypeExpr | None" = None
    """For ``value``, ``values`` and ``items``: the stored value's type."""
    item_def: str = ""
    """The ``$defs`` name one stored value (or each list item) decodes as."""
    empty: bool = False
    """For ``value``: starts as [] rather than None."""
    history: bool = False
    """Its entities take a place in ``history`` when they first appear."""
    entry_class: str = ""
    """With ``history``: the class of its entries in ``history``."""


@dataclass(frozen=True)
class SessionAction:
    """What one SessionUpdate variant does to the session."""

    tag: str | None
    """The ``sessionUpdate`` value; None for the catch-all variant."""
    variant_class: str
    function: str
    """The generated fold function for this variant."""
    action: str
    """``upsert``, ``chunk``, ``message-chunk``, ``set``, ``keyed-set``,
    ``remove`` or ``append`` (see ``rules/session.toml``)."""
    field: SessionField
    source: str = ""
    """For ``set`` and ``keyed-set``: the variant's attribute holding the
    value; empty for the variant itself."""
    key: str = ""
    """The attribute holding the entity's key: on the variant (``upsert``,
    ``chunk``, ``remove``, ``message-chunk``: the message id) or on the
    stored value (``keyed-set``)."""
    patch_function: str = ""
    """For ``upsert`` and ``chunk``: the patch function that folds it ..."""
    replaces: bool = False
    """... starting from a new state (a full snapshot, v1's ``tool_call``)."""
    chunk_attr: str = ""
    """For a ``chunk`` that appends an item: the state's list it appends to
    (the fold appends in place to a state it owns) ..."""
    chunk_source: str = ""
    """... and the variant's attribute holding the item."""
    started_by: tuple[str, ...] = ()
    """Tags that must have started the entity (checked by ``acpgen validate``)."""
    reason: str = ""

    @property
    def doc(self) -> str:
        """The docstring of the fold function: the tag, what it does, why."""
        text = f"{self.tag or 'Any other kind'}: {self.action} {self.field.name}."
        return text + ("\n\n" + self.reason if self.reason else "")


@dataclass(frozen=True)
class SessionRules:
    """The ``Session`` state and ``apply_session_update`` of one package."""

    notification_class: str
    """The class of the ``session/update`` params."""
    fields: tuple[SessionField, ...]
    actions: tuple[SessionAction, ...]
    protocol_version: int
    message_class: str = ""
    """(v1) The class of a message streamed as bare chunks."""
    sessions_from: tuple[tuple[str, str], ...] = ()
    """(method, ``result`` or ``params``) pairs that name a session."""
    prompt_field: str = ""
    """(v1) The message field ``apply_prompt`` adds the user's prompt to ..."""
    prompt_class: str = ""
    """... the class of the ``session/prompt`` params ..."""
    prompt_entry_class: str = ""
    """... and the class of that field's history entries."""

    def field(self, name: str) -> SessionField:
        """The Session field called ``name``."""
        return next(f for f in self.fields if f.name == name)


@dataclass(frozen=True)
class Capability:
    """A capability whose presence means support: ``{}`` is supported,
    omitted and ``null`` are not (v2), or a boolean with a default (v1)."""

    class_name: str
    field: str
    wire_name: str
    kind: str
    """``presence`` or ``flag``."""


@dataclass(frozen=True)
class Call:
    """One way a JSON-RPC method is used: a request (answered with a result)
    or a notification, and the side that handles it."""

    method: str
    kind: str
    """``request`` or ``notification``."""
    side: str
    """``x-side``: ``agent``, ``client``, ``protocol`` or ``proxy``."""
    params: str
    """The ``$defs`` name of the params type."""
    params_class: str
    handler: str
    """The Python method name on the handler interface and the connection."""
    result: str = ""
    """For a request: the ``$defs`` name of the result type."""
    result_class: str = ""
    summary: str = ""
    """The first paragraph of the params type's description."""

    @property
    def send_doc(self) -> str:
        """The docstring of the connection's method that sends it."""
        return f"Send ``{self.method}`` (a {self.kind})."

    @property
    def handler_doc(self) -> str:
        """The docstring of the handler interface's method."""
        return f"``{self.method}`` {self.kind}" + (f": {self.summary}" if self.summary else "")


@dataclass(frozen=True)
class RpcMethod:
    """A JSON-RPC method name and how it is used; a name may be both a
    request and a notification (JSON-RPC tells them apart by ``id``)."""

    name: str
    request: Call | None = None
    notification: Call | None = None

    @property
    def calls(self) -> tuple[Call, ...]:
        return tuple(c for c in (self.request, self.notification) if c is not None)


@dataclass(frozen=True)
class Package:
    """Everything one generated package holds."""

    name: str
    schema_path: str
    schema_sha256: str
    schema_title: str
    definitions: tuple[Definition, ...]
    """In ``$defs`` order."""
    schema_version: str = ""
    """The version of the npm package the schema came in, from SOURCE.json."""
    upserts: tuple[Upsert, ...] = ()
    chunks: tuple[Chunk, ...] = ()
    capabilities: tuple[Capability, ...] = ()
    session: SessionRules | None = None
    """The session fold, when the package has session rules."""
    methods: tuple[RpcMethod, ...] = ()
    """The JSON-RPC methods, from ``x-method``/``x-side`` (set by ``methods``)."""
    null_request_id: bool = False
    """The schema's ``RequestId`` allows ``null`` (v1 does, as serde's ``Null``)."""
    warnings: tuple[str, ...] = ()
    """What the generator noticed but generated anyway (rules that do not fit
    the schema)."""
    validation_defs: Any = None
    """The ``$defs`` without their annotations: what strict mode validates
    against, and what :class:`RawT` pointers point into."""
    reserved_names: frozenset[str] = frozenset()
    """Module-level names no generated name may take (set by naming)."""
    reserved_attributes: frozenset[str] = frozenset()
    """Names no handler may take besides the runtime connection's attributes."""

    @property
    def capability_classes(self) -> tuple[str, ...]:
        """The capability classes ``supports`` takes, each once, in order."""
        return tuple(dict.fromkeys(c.class_name for c in self.capabilities))

    @property
    def applies(self) -> bool:
        """The patch module has apply functions (upserts or chunks)."""
        return bool(self.upserts or self.chunks)

    @property
    def appends_base64(self) -> bool:
        """Some chunk appends base64 data (the patch module decodes and
        re-encodes it)."""
        return any(c.append == "base64" for c in self.chunks)

    @property
    def doc(self) -> str:
        """The package's docstring: where it comes from and its contract."""
        source = self.schema_path + (f" ({self.schema_title})" if self.schema_title else "")
        return (
            f"Typed Agent Client Protocol models and wire codec, generated from {source}.\n\n"
            "The contract: decode(name, data, *, strict=False), encode(value), ValidationError"
            " and UNSET. Every $defs name of the schema is an attribute of this package."
        )

    def variant_doc(self, union: UnionDef, variant: Variant) -> str:
        """A variant class's docstring: its description (or that of the
        definition it refers to) and what makes it the variant."""
        text = variant.description
        if not text and variant.ref:
            text = next((d.description for d in self.definitions if d.name == variant.ref), "")
        text += f"\n\nA variant of {union.class_name}"
        if variant.role == "tagged":
            return text + f" (`{union.tag}` is {variant.tag!r})."
        if variant.role == "catch_all":
            return (
                text + f" for any other `{union.tag}`: the members it does not declare are kept in `extra`,"
                " so it encodes back unchanged."
            )
        return text + "."

    def calls(self, side: str) -> tuple[Call, ...]:
        """Every request and notification handled by ``side``, in method order."""
        return tuple(c for m in self.methods for c in m.calls if c.side == side)

    def classes_of(self, *sides: str) -> tuple[str, ...]:
        """The classes the methods handled by ``sides`` (all, when none is
        given) name as params or results, each once, sorted."""
        names = (
            n
            for m in self.methods
            for c in m.calls
            if not sides or c.side in sides
            for n in (c.params_class, c.result_class)
        )
        return tuple(sorted(set(n for n in names if n)))


def _tightest(a: int | None, b: int | None, pick: Callable[[int, int], int]) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return pick(a, b)
