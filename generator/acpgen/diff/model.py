"""The results of ``acpgen diff``: what one change says and how a whole diff
is summed up. :class:`Impact` is a verdict with its reason (for the wire or
for the Python API), :class:`Change` one classified change, :class:`SchemaInfo`
the identity of a compared file and :class:`SchemaDiff` the whole result with
its JSON form; beside them the constants the rest of the package shares: the
JSON format version, the wire ``affects`` values (:data:`OLD_SENDERS`,
:data:`OLD_RECEIVERS`), the change kinds in listing order (:data:`KINDS`) and
their titles (:data:`KIND_TITLES`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..jsontypes import Json, JsonObject

FORMAT_VERSION = 1

OLD_SENDERS = "old-senders"
OLD_RECEIVERS = "old-receivers"

# Kinds in the order the text and markdown forms list them within a group.
KINDS = (
    "message-form-removed",
    "message-form-changed",
    "message-form-added",
    "method-removed",
    "method-changed",
    "method-added",
    "type-removed",
    "type-kind-changed",
    "class-renamed",
    "type-added",
    "alias-type-changed",
    "union-tag-changed",
    "variant-removed",
    "variant-changed",
    "variant-renamed",
    "variant-added",
    "enum-value-removed",
    "enum-closed",
    "enum-opened",
    "enum-member-renamed",
    "enum-value-added",
    "field-removed",
    "field-added",
    "field-required",
    "field-optional",
    "field-nullable",
    "field-non-nullable",
    "field-type-changed",
    "field-renamed",
    "field-default-changed",
    "deserialize-removed",
    "deserialize-added",
)

KIND_TITLES = {
    "message-form-removed": "message form removed",
    "message-form-changed": "message form changed",
    "message-form-added": "message form added",
    "method-removed": "method removed",
    "method-changed": "method changed",
    "method-added": "method added",
    "type-removed": "type removed",
    "type-kind-changed": "type changed kind",
    "class-renamed": "class renamed",
    "type-added": "type added",
    "alias-type-changed": "alias changed",
    "union-tag-changed": "union tag changed",
    "variant-removed": "variant removed",
    "variant-changed": "variant changed",
    "variant-renamed": "variant class renamed",
    "variant-added": "variant added",
    "enum-value-removed": "enum value removed",
    "enum-closed": "enum closed",
    "enum-opened": "enum opened",
    "enum-member-renamed": "enum member renamed",
    "enum-value-added": "enum value added",
    "field-removed": "field removed",
    "field-added": "field added",
    "field-required": "field now required",
    "field-optional": "field now optional",
    "field-nullable": "field now nullable",
    "field-non-nullable": "field no longer nullable",
    "field-type-changed": "field type changed",
    "field-renamed": "field attribute renamed",
    "field-default-changed": "default changed",
    "deserialize-removed": "x-deserialize keyword removed",
    "deserialize-added": "x-deserialize keyword added",
}


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Impact:
    breaking: bool
    reason: str
    affects: tuple[str, ...] = ()
    """For the wire: :data:`OLD_SENDERS` and/or :data:`OLD_RECEIVERS`."""


COMPATIBLE = Impact(False, "")


@dataclass(frozen=True)
class Change:
    kind: str
    definition: str
    path: str
    summary: str
    wire: Impact
    api: Impact
    senders: tuple[str, ...] = ()
    old: Json = None
    new: Json = None
    python: tuple[str, ...] = ()
    """The names of the old package the change concerns (``Class``,
    ``Class.attribute``, ``Enum.MEMBER``); not in the JSON form."""

    @property
    def breaking(self) -> bool:
        return self.wire.breaking or self.api.breaking

    def to_json(self) -> JsonObject:
        return {
            "kind": self.kind,
            "definition": self.definition,
            "path": self.path,
            "summary": self.summary,
            "senders": list(self.senders),
            "old": self.old,
            "new": self.new,
            "breaking": self.breaking,
            "wire": {
                "breaking": self.wire.breaking,
                "affects": sorted(self.wire.affects),
                "reason": self.wire.reason,
            },
            "api": {"breaking": self.api.breaking, "reason": self.api.reason},
        }


@dataclass(frozen=True)
class SchemaInfo:
    file: str
    sha256: str
    version: str
    title: str

    def to_json(self) -> JsonObject:
        return {"file": self.file, "sha256": self.sha256, "version": self.version, "title": self.title}

    @property
    def label(self) -> str:
        return self.version or self.sha256[:12]


@dataclass(frozen=True)
class SchemaDiff:
    old: SchemaInfo
    new: SchemaInfo
    changes: tuple[Change, ...]

    @property
    def breaking(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.breaking)

    @property
    def compatible(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if not c.breaking)

    def summary(self) -> JsonObject:
        kinds: dict[str, int] = {}
        for change in self.changes:
            kinds[change.kind] = kinds.get(change.kind, 0) + 1
        return {
            "changes": len(self.changes),
            "breaking": len(self.breaking),
            "wire_breaking": sum(1 for c in self.changes if c.wire.breaking),
            "api_breaking": sum(1 for c in self.changes if c.api.breaking),
            "compatible": len(self.compatible),
            "kinds": dict(sorted(kinds.items())),
        }

    def to_json(self) -> JsonObject:
        return {
            "format": FORMAT_VERSION,
            "old": self.old.to_json(),
            "new": self.new.to_json(),
            "summary": self.summary(),
            "changes": [c.to_json() for c in self.changes],
        }
