"""Upserts and chunks: the stored states the patch module folds updates
into, and the capability fields ``supports`` answers for."""

from __future__ import annotations

from typing import Literal

from ...records import dataclass
from .defs import InitParam
from .types import JsonValue, MapT, TypeExpr, Value

Rule = Literal["key", "replace", "null-clears", "null-resets", "collection", "meta-patch"]
"""What an update does to one field of a stored state (see ``rules/patch.toml``)."""
Append = Literal["item", "base64"]
"""How a chunk extends its collection: one more item, or more base64 data."""
CapabilityKind = Literal["presence", "flag"]
"""How a capability says it is supported: by being there, or as a boolean."""


@dataclass(frozen=True)
class PatchField:
    """One field of a stored state and the rule an update applies to it."""

    wire_name: str
    name: str
    rule: Rule
    type: TypeExpr
    """The state's type: never UNSET; nullable only where null is a value."""
    initial: Value | None = None
    """The value of a new entity (None for a key, which comes from the update)."""
    sentence: str = ""
    everywhere: bool = False
    """Every class an apply function takes (``accepts`` and ``creates``) has
    this attribute, so the function reads it directly."""

    @property
    def is_key(self) -> bool:
        """The field names the entity: taken from the first update, then
        checked, never changed."""
        return self.rule == "key"

    @property
    def null_value(self) -> Value | None:
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
    def merges(self) -> bool:
        """A value in the update is merged into the stored one key by key
        (``merge_meta``) rather than replacing it."""
        return self.rule == "meta-patch"


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
    append: Append
    keys: tuple[tuple[str, str], ...] = ()
    """(state field, chunk field) pairs that must match."""
    payload_class: str = ""
    """For ``base64``: the class of the payload object holding ``data``."""


@dataclass(frozen=True)
class Capability:
    """A capability whose presence means support: ``{}`` is supported,
    omitted and ``null`` are not (v2), or a boolean with a default (v1)."""

    class_name: str
    field: str
    wire_name: str
    kind: CapabilityKind
