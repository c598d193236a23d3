"""Compare two schema files at the level users care about, and say what
breaks.

``diff_schemas(old, new)`` lowers both schemas to the named IR (the same
:func:`acpgen.pipeline.build_ir` the generator uses) and lists the changes
between them: types, fields, union variants, enum values, defaults,
``x-deserialize-*`` keywords, methods (``x-method``/``x-side``) and the
top-level message forms (the titled members of the document's ``anyOf``).
Where the IR does not carry something (``additionalProperties``, message
forms, ``x-method``, subschemas kept raw) the raw schema is read instead.

Every change is classified twice, each time with a one-line reason:

* **wire**: can a peer built on the old schema and a peer built on the new
  one still exchange the messages concerned? Two things can fail, and a
  change names which in ``affects``:

  - ``old-senders``: the new schema no longer accepts something the old one
    allowed, so a receiver built on the new schema refuses what a sender
    built on the old one may send (a *narrowing*);
  - ``old-receivers``: the new schema lets a sender emit something the old
    one did not allow, so a receiver built on the old schema refuses what a
    sender built on the new one may send (a *widening*).

  A change can do both. Who sends a type comes from the message forms (the
  ``Agent``, ``Client``, ``Proxy`` and ``ProtocolLevel`` members of the
  document's ``anyOf`` and every type they reach), so the reasons name
  agents and clients: "clients built on the new schema reject an
  ``ElicitationSchema`` without ``type`` that agents built on the old schema
  may send".
* **api**: does Python code written against the package generated from the
  old schema still work with the one generated from the new schema? It
  breaks when a name it uses goes or is renamed (class, variant class,
  attribute, enum member), when a constructor needs a new argument, when a
  definition turns into another kind of thing, or when the Python type of
  an attribute changes other than by gaining union members (readers would
  see ``None``/``UNSET``/another class, writers could not pass theirs).

The rules, change by change (``kind`` is the change's key in the JSON form)::

    kind                     wire                                      Python API
    -----------------------  ----------------------------------------  ---------------------------------
    type-added               compatible: it reaches the wire only      compatible
                             where other changes refer to it
    type-removed             as the changes where the old schema used  breaking: the class or alias is
                             it (old senders may still send it there); gone (the reason names a rename)
                             compatible when renamed: a removed type
                             whose exact shape one added type has
    type-kind-changed        shape against shape (an object that       breaking: a dataclass, enum,
                             became a union, and back)                 union or alias became another
    class-renamed            compatible                                breaking
    field-added              required: breaks old senders (they omit   required without a default:
                             it); optional: compatible, unless the     breaking (a new constructor
                             old object forbids other properties       argument); otherwise compatible
    field-removed            was required: breaks old receivers (new   breaking: the attribute is gone
                             senders omit it); was optional:
                             compatible (receivers did without it, and
                             an unknown property is ignored)
    field-required           breaks old senders                        breaking, unless it has a default
    field-optional           breaks old receivers                      breaking (may now read as UNSET),
                                                                       unless it has a default
    field-nullable           breaks old receivers (null)               breaking (may now read as None)
    field-non-nullable       breaks old senders (null)                 breaking (None is not a value)
    field-type-changed,      by shape: wider breaks old receivers,     breaking when the annotation
    alias-type-changed       narrower old senders, unrelated both      changes, except by new members
    field-renamed            compatible (same wire name)               breaking
    field-default-changed    a changed value breaks both (an omitted   removed: breaking (may now read as
                             field means different things); added or   UNSET), unless now required;
                             removed: compatible                       otherwise compatible
    deserialize-added,       compatible: messages valid under both     compatible
    deserialize-removed      schemas decode the same way; only
    (x-deserialize-*)        invalid values are repaired or refused
    variant-added            breaks old receivers, unless the old      compatible
                             union has a catch-all variant
    variant-removed          breaks old senders, unless the new union  breaking: the variant class is gone
                             has a catch-all variant
    variant-renamed          compatible                                breaking
    variant-changed          shape against shape (new payload type)    breaking when attributes go or a
                                                                       required one comes
    union-tag-changed        breaks both                               breaking
    enum-value-added         closed enum: breaks old receivers; open   compatible
                             enum: compatible (the catch-all)
    enum-value-removed       closed enum: breaks old senders; open     breaking: the member is gone
                             enum: compatible (the catch-all)
    enum-opened              compatible (senders emit known values)    breaking (may read as a plain str)
    enum-closed              compatible (senders emit known values)    breaking (a plain str is refused)
    enum-member-renamed      compatible                                breaking
    method-added             compatible: old peers answer "method not  compatible
                             found", which callers must expect
    method-removed           breaks old senders: old peers may still   compatible (its classes are listed
                             call it                                   as types)
    method-changed           breaks both (another side handles it)     compatible
    message-form-added       compatible                                compatible (not generated)
    message-form-removed     breaks old senders                        compatible (not generated)
    message-form-changed     breaks both (compare the envelopes)       compatible (not generated)

"Shape against shape" asks of the two schemas' types whether every value
one side's senders may emit is accepted by the other side's receivers
(``covers``), in both directions, conservatively: when it cannot tell, the
change breaks. The principles behind the table:

* Senders emit only what they know: the properties an object declares, the
  tagged variants of a union, the members of an enum. Catch-all variants
  and open enums are for *receiving*: they make unknown values acceptable,
  and are not counted as something a sender produces.
* Objects accept properties they do not declare (no ACP object says
  ``additionalProperties: false``; one that does is judged accordingly).
* A change inside a referenced type is reported once, on that type: a field
  of type ``ToolKind`` does not change when ``ToolKind`` gains a value.
* Receivers decode leniently, like the reference SDKs: a widening is
  *tolerated* (compatible, and the reason says so) when old receivers drop
  just the values they do not know, because the field is
  ``x-deserialize-default-on-error`` (or ``-on-null`` for a null), or every
  place that holds the type is, and some of what new senders emit still
  reads (a type that changed beyond recognition is not tolerated). This is
  how ACP adds enum values and variants. A narrowing is never tolerated:
  new receivers that drop what old senders send lose it (the reason then
  says "drop" rather than "reject"). A validator in strict mode tolerates
  nothing.
* Python names come from the naming stage, so a class, variant class,
  attribute or enum member whose generated name changes is reported even
  when the wire name did not change.

``breaking`` on a change is ``wire.breaking or api.breaking``.

The JSON form (:func:`render_json`) has sorted keys and a stable order::

    {
      "format": 1,
      "old": {"file", "sha256", "title", "version"},   # version "" when unknown
      "new": {...},
      "summary": {"changes", "breaking", "wire_breaking", "api_breaking",
                  "compatible", "kinds": {kind: count}},
      "changes": [                                     # by definition, path, kind
        {"kind", "definition", "path", "summary",
         "senders": ["agent", "client", "proxy"],      # who sends it, when the schema says
         "old": ..., "new": ...,                       # what was compared, as JSON, or null
         "breaking": bool,
         "wire": {"breaking": bool, "affects": ["old-receivers", "old-senders"], "reason": str},
         "api": {"breaking": bool, "reason": str}}
      ]
    }

``path`` names the place: ``Type``, ``Type.wireField``, ``Union[tag]``
(``Union[*]`` for the catch-all variant, ``Union[untagged]``/``Union[null]``
for the other untagged roles, ``Union[RefName]`` in a union without a tag),
``Union[tag].wireField``, ``Enum:value``, ``method <name> (<side>)`` or
``message <Title>``. ``definition`` is the ``$defs`` name it belongs to
(empty for methods and message forms). ``summary`` and the reasons put
names, types and values between backticks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable

from . import ir
from .load import DEFS_PREFIX, Schema, iter_refs, load_schema, parse_schema
from .lower import strip_annotations
from .pipeline import build_ir, schema_version

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
    old: Any = None
    new: Any = None

    @property
    def breaking(self) -> bool:
        return self.wire.breaking or self.api.breaking

    def to_json(self) -> dict:
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

    def to_json(self) -> dict:
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

    def summary(self) -> dict:
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

    def to_json(self) -> dict:
        return {
            "format": FORMAT_VERSION,
            "old": self.old.to_json(),
            "new": self.new.to_json(),
            "summary": self.summary(),
            "changes": [c.to_json() for c in self.changes],
        }


# ---------------------------------------------------------------- entry points


def diff_files(old_path, new_path) -> SchemaDiff:
    """The diff of two schema files; bad input is an AcpgenError."""
    return diff_schemas(load_cached(old_path), load_cached(new_path))


_LOADED: dict[str, Schema] = {}


def load_cached(path, raw: bytes | None = None, name: str | None = None) -> Schema:
    """``load_schema``, or ``parse_schema(raw, name)``, remembering the last
    few results by content: the metaschema check is the slow part of a diff,
    and a bump diffs the same files more than once."""
    if raw is None:
        try:
            raw = Path(path).read_bytes()
        except OSError:
            return load_schema(path)  # the same error as the generator's
    name = str(path) if name is None else name
    key = hashlib.sha256(raw).hexdigest()
    schema = _LOADED.get(key)
    if schema is None:
        schema = parse_schema(raw, name)
        if len(_LOADED) >= 16:
            _LOADED.pop(next(iter(_LOADED)))
        _LOADED[key] = schema
    return replace(schema, path=name, location=str(path))


def diff_schemas(
    old: Schema,
    new: Schema,
    *,
    old_version: str | None = None,
    new_version: str | None = None,
) -> SchemaDiff:
    """The diff of two loaded schemas. The versions default to what
    SOURCE.json beside each file records (see ``pipeline.schema_version``)."""
    before = _Side(old, "old")
    after = _Side(new, "new")
    differ = _Differ(before, after)
    changes = differ.run()
    changes = sorted(changes, key=lambda c: (c.definition, c.path, KINDS.index(c.kind), c.summary))
    return SchemaDiff(
        old=_info(old, old_version),
        new=_info(new, new_version),
        changes=tuple(changes),
    )


def _info(schema: Schema, version: str | None) -> SchemaInfo:
    if version is None:
        try:
            version = schema_version(schema)
        except OSError:  # pragma: no cover - an unreadable SOURCE.json
            version = ""
    return SchemaInfo(file=schema.path, sha256=schema.sha256, version=version, title=schema.title)


# ---------------------------------------------------------------- one schema, analysed


@dataclass
class _Edge:
    target: str
    protected: bool
    where: str
    """The change path of the place that refers to ``target``."""
    owner: str
    """The ``$defs`` name that place belongs to ("" for a message form)."""


class _Side:
    """A schema with the IR and the facts the classification needs."""

    def __init__(self, schema: Schema, label: str) -> None:
        self.schema = schema
        self.label = label
        self.package = build_ir(schema, "acpgen_diff")
        self.defs: dict[str, ir.Definition] = {d.name: d for d in self.package.definitions}
        self.raw: dict[str, Any] = dict(schema.defs)
        self.forms = _message_forms(schema.document)
        self.edges: dict[str, list[_Edge]] = {name: [] for name in self.defs}
        for definition in self.package.definitions:
            self.edges[definition.name] = list(self._edges(definition))
        self.referrers: dict[str, list[_Edge]] = {name: [] for name in self.defs}
        for edges in self.edges.values():
            for edge in edges:
                self.referrers.setdefault(edge.target, []).append(edge)
        self.form_refs: dict[str, set[str]] = {}
        for title, node in self.forms.items():
            targets = {ref[len(DEFS_PREFIX) :] for _, ref in iter_refs(node)}
            self.form_refs[title] = targets
            for target in targets:
                self.referrers.setdefault(target, []).append(_Edge(target, False, f"message {title}", ""))
        # References from the rest of the document (outside the message forms).
        rest = {k: v for k, v in schema.document.items() if k != "$defs"} if isinstance(schema.document, dict) else {}
        in_forms = {t for targets in self.form_refs.values() for t in targets}
        for _, ref in iter_refs(rest):
            target = ref[len(DEFS_PREFIX) :]
            if target not in in_forms:
                self.referrers.setdefault(target, []).append(_Edge(target, False, "(document)", ""))
        self.protected = {
            name for name, edges in self.referrers.items() if edges and all(e.protected for e in edges)
        }
        """Definitions whose every holder drops an invalid value (x-deserialize-*)."""
        self.senders = self._senders()
        self.methods = _methods(self.raw)

    # -------------------------------------------------------- references

    def _edges(self, definition: ir.Definition) -> Iterable[_Edge]:
        name = definition.name
        seen = set()
        if isinstance(definition, ir.ObjectDef):
            for f in definition.fields:
                for target, protected in _type_refs(f.type, f.on_error != "raise"):
                    seen.add(target)
                    yield _Edge(target, protected, f"{name}.{f.wire_name}", name)
        elif isinstance(definition, ir.UnionDef):
            for variant in definition.variants:
                where = f"{name}[{_variant_label(definition, variant)}]"
                for target in (variant.ref, variant.wraps):
                    if target:
                        seen.add(target)
                        yield _Edge(target, False, where, name)
                for f in variant.fields:
                    for target, protected in _type_refs(f.type, f.on_error != "raise"):
                        seen.add(target)
                        yield _Edge(target, protected, f"{where}.{f.wire_name}", name)
        elif isinstance(definition, ir.AliasDef):
            for target, protected in _type_refs(definition.target, False):
                seen.add(target)
                yield _Edge(target, protected, name, name)
        # References the IR keeps as raw JSON (RawT) count as unprotected.
        node = self.raw.get(name)
        for _, ref in iter_refs(node):
            target = ref[len(DEFS_PREFIX) :]
            if target not in seen:
                seen.add(target)
                yield _Edge(target, False, name, name)

    def _senders(self) -> dict[str, set[str]]:
        """``{$defs name: the peers that send it}``, from the message forms."""
        out: dict[str, set[str]] = {}
        for title, targets in self.form_refs.items():
            peers = _form_senders(title)
            for name in _closure(targets, lambda n: (e.target for e in self.edges.get(n, ()))):
                out.setdefault(name, set()).update(peers)
        return out

    # -------------------------------------------------------- helpers

    def closed(self, name: str) -> bool:
        node = self.raw.get(name)
        return isinstance(node, dict) and node.get("additionalProperties") is False

    def base_fields(self, union: ir.UnionDef) -> set[str]:
        """The wire names of the properties a union shares between variants."""
        node = self.raw.get(union.name)
        if not isinstance(node, dict) or not isinstance(node.get("properties"), dict):
            return set()
        return set(node["properties"]) - {union.tag}

    def annotation(self, t: ir.TypeExpr) -> str:
        return " | ".join(self.annotation_parts(t))

    def annotation_parts(self, t: ir.TypeExpr) -> list[str]:
        kind = t.kind
        if kind == "nullable":
            return self.annotation_parts(t.inner) + ["None"]
        if kind in ("scalar_union", "first_match"):
            parts: list[str] = []
            for member in t.members:
                parts.extend(p for p in self.annotation_parts(member) if p not in parts)
            return parts
        if kind == "ref":
            definition = self.defs.get(t.name)
            if isinstance(definition, ir.EnumDef) and definition.open:
                return [definition.class_name, definition.value_kind]
            return [definition.class_name if definition else t.name]
        simple = {"any": "Any", "raw": "Any", "str": "str", "int": "int", "num": "float", "bool": "bool", "null": "None"}
        if kind in simple:
            return [simple[kind]]
        if kind == "const":
            return [f"Literal[{t.value!r}]"]
        if kind == "list":
            return [f"list[{self.annotation(t.items)}]"]
        if kind == "map":
            return [f"dict[str, {self.annotation(t.values)}]"]
        return [kind]  # pragma: no cover

    def shape(self, name: str, role: str) -> Any:
        """The values a definition stands for, as a structure ``covers``
        compares. ``role`` is ``"receiver"`` (catch-alls included) or
        ``"sender"`` (only the known values)."""
        definition = self.defs[name]
        if isinstance(definition, ir.ObjectDef):
            return _Obj(
                {f.wire_name: (f.type, f.required) for f in definition.fields},
                not self.closed(name),
            )
        if isinstance(definition, ir.AliasDef):
            return definition.target
        if isinstance(definition, ir.EnumDef):
            members: list[Any] = [ir.ConstT(m.value) for m in definition.members]
            if definition.open and role == "receiver":
                members.append(ir.StrT() if definition.value_kind == "str" else ir.IntT())
            return _Alt(tuple(members))
        variants = []
        for variant in definition.variants:
            if variant.role == ir.CATCH_ALL and role == "sender":
                continue
            variants.append(self.variant_shape(definition, variant))
        return _Alt(tuple(variants))

    def variant_shape(self, union: ir.UnionDef, variant: ir.Variant) -> Any:
        if variant.wraps:
            return _Opaque(f"{union.name}[{variant.tag}]->{variant.wraps}")
        fields = {f.wire_name: (f.type, f.required) for f in variant.fields}
        if union.tag and variant.role == ir.TAGGED:
            fields[union.tag] = (ir.ConstT(variant.tag), True)
        elif union.tag and variant.role == ir.CATCH_ALL:
            fields[union.tag] = (ir.StrT(), True)
        return _Obj(fields, True)


@dataclass(frozen=True)
class _Obj:
    fields: dict
    open: bool

    kind = "obj"


@dataclass(frozen=True)
class _Alt:
    members: tuple

    kind = "alt"


@dataclass(frozen=True)
class _Opaque:
    key: str

    kind = "opaque"


def _closure(start: Iterable[str], step) -> set[str]:
    seen = set(start)
    stack = list(seen)
    while stack:
        for target in step(stack.pop()):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def _type_refs(t: ir.TypeExpr, protected: bool) -> Iterable[tuple[str, bool]]:
    if t.kind == "ref":
        yield t.name, protected
    elif t.kind == "nullable":
        yield from _type_refs(t.inner, protected)
    elif t.kind == "list":
        yield from _type_refs(t.items, protected or t.skip_invalid)
    elif t.kind == "map":
        yield from _type_refs(t.values, protected)
    elif t.kind in ("scalar_union", "first_match"):
        for member in t.members:
            yield from _type_refs(member, protected)


def _message_forms(document: Any) -> dict[str, Any]:
    """The titled members of the document's top-level ``anyOf``/``oneOf``."""
    out = {}
    for key in ("anyOf", "oneOf"):
        for node in document.get(key, ()) if isinstance(document, dict) else ():
            if isinstance(node, dict) and isinstance(node.get("title"), str):
                out[node["title"]] = node
    return out


def _form_senders(title: str) -> set[str]:
    lowered = title.lower()
    for peer in ("agent", "client", "proxy"):
        if lowered.startswith(peer):
            return {peer}
    return {"agent", "client"}


def _methods(raw: dict) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for name, node in raw.items():
        if isinstance(node, dict) and isinstance(node.get("x-method"), str):
            side = node.get("x-side") if isinstance(node.get("x-side"), str) else ""
            out.setdefault((node["x-method"], side), []).append(name)
    return out


def _variant_label(union: ir.UnionDef, variant: ir.Variant) -> str:
    if variant.role == ir.TAGGED:
        return str(variant.tag)
    if variant.role == ir.CATCH_ALL:
        return "*"
    if union.tag is None:
        return variant.ref or variant.title
    return "null" if variant.role == ir.NULL_TAG else "untagged"


def _variant_key(union: ir.UnionDef, variant: ir.Variant) -> tuple:
    return (variant.role, _variant_label(union, variant))


# ---------------------------------------------------------------- type display


def show_type(t: ir.TypeExpr) -> str:
    """A type expression in schema terms: ``string``, ``ToolKind | null`` ..."""
    kind = t.kind
    if kind == "any":
        return "any"
    if kind == "raw":
        return "(schema)"
    if kind == "str":
        return "string" + (f"(minLength {t.min_length})" if t.min_length is not None else "")
    if kind in ("int", "num"):
        name = "integer" if kind == "int" else "number"
        bits = []
        if t.format:
            bits.append(t.format)
        if t.minimum is not None:
            bits.append(f">= {t.minimum}")
        if t.maximum is not None:
            bits.append(f"<= {t.maximum}")
        return name + (f"({', '.join(bits)})" if bits else "")
    if kind == "bool":
        return "boolean"
    if kind == "null":
        return "null"
    if kind == "const":
        return json.dumps(t.value)
    if kind == "list":
        inner = show_type(t.items)
        if " " in inner:
            inner = f"({inner})"
        return inner + "[]" + (f"(minItems {t.min_items})" if t.min_items is not None else "")
    if kind == "map":
        return f"map<{show_type(t.values)}>"
    if kind == "ref":
        return t.name
    if kind == "nullable":
        return f"{show_type(t.inner)} | null"
    if kind in ("scalar_union", "first_match"):
        return " | ".join(show_type(m) for m in t.members)
    return kind  # pragma: no cover


def _norm(t: ir.TypeExpr) -> ir.TypeExpr:
    """A type expression without what does not change the values it allows
    (string formats) nor the ``x-deserialize-*`` flags, compared on their own."""
    kind = t.kind
    if kind == "str":
        return replace(t, format=None)
    if kind == "num":
        return replace(t, format=None)
    if kind == "list":
        return replace(t, items=_norm(t.items), skip_invalid=False)
    if kind == "map":
        return replace(t, values=_norm(t.values))
    if kind == "nullable":
        return replace(t, inner=_norm(t.inner))
    if kind in ("scalar_union", "first_match"):
        return replace(t, members=tuple(_norm(m) for m in t.members))
    return t


def _skip_positions(t: ir.TypeExpr, where: str = "") -> set[str]:
    """Where in a type expression lists are ``x-deserialize-skip-invalid-items``."""
    out = set()
    if t.kind == "list":
        if t.skip_invalid:
            out.add(where)
        out |= _skip_positions(t.items, where + "[]")
    elif t.kind == "nullable":
        out |= _skip_positions(t.inner, where)
    elif t.kind == "map":
        out |= _skip_positions(t.values, where + "{}")
    return out


def _json_value(value: Any) -> Any:
    return None if value is ir.NO_DEFAULT else value


def _same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) and type(a) is type(b)


def _plural(peers: set[str], fallback: str = "peers") -> str:
    names = {"agent": "agents", "client": "clients", "proxy": "proxies"}
    known = [names[p] for p in ("agent", "client", "proxy") if p in peers]
    if not known:
        return fallback
    return " and ".join(known) if len(known) <= 2 else ", ".join(known[:-1]) + " and " + known[-1]


def _receivers(senders: set[str]) -> set[str]:
    if senders == {"agent"}:
        return {"client"}
    if senders == {"client"}:
        return {"agent"}
    return set()


# ---------------------------------------------------------------- the comparison


class _Differ:
    def __init__(self, old: _Side, new: _Side) -> None:
        self.old = old
        self.new = new
        self.renamed = self._renames()
        self.changes: list[Change] = []

    # -------------------------------------------------------- entry

    def run(self) -> list[Change]:
        old_names, new_names = set(self.old.defs), set(self.new.defs)
        for definition in self.new.package.definitions:
            if definition.name not in old_names:
                self.type_added(definition)
        for name in sorted(old_names & new_names):
            self.definition(self.old.defs[name], self.new.defs[name])
        self.methods()
        self.message_forms()
        # Removed types last: their wire impact is that of the changes at
        # the places that used them.
        memo: dict[str, Impact] = {}
        for definition in self.old.package.definitions:
            if definition.name not in new_names:
                self.type_removed(definition, memo)
        return self.changes

    def _renames(self) -> dict[str, str]:
        """Removed types whose exact shape (without annotations) one added
        type carries: ``{old name: new name}``."""
        def by_shape(side: _Side, names) -> dict[str, list[str]]:
            out: dict[str, list[str]] = {}
            for name in names:
                key = json.dumps(strip_annotations(side.raw[name]), sort_keys=True)
                out.setdefault(key, []).append(name)
            return out

        removed = by_shape(self.old, [n for n in self.old.raw if n not in self.new.raw])
        added = by_shape(self.new, [n for n in self.new.raw if n not in self.old.raw])
        return {
            names[0]: added[key][0]
            for key, names in removed.items()
            if len(names) == 1 and len(added.get(key, ())) == 1
        }

    # -------------------------------------------------------- building changes

    def senders(self, *names: str) -> set[str]:
        peers: set[str] = set()
        for name in names:
            peers |= self.old.senders.get(name, set()) | self.new.senders.get(name, set())
        return peers

    def add(self, kind: str, definition: str, path: str, summary: str, wire: Impact, api: Impact, *,
            old=None, new=None, senders=None) -> Change:
        peers = self.senders(definition) if senders is None else senders
        change = Change(
            kind=kind,
            definition=definition,
            path=path,
            summary=summary,
            wire=wire,
            api=api,
            senders=tuple(p for p in ("agent", "client", "proxy") if p in peers),
            old=old,
            new=new,
        )
        self.changes.append(change)
        return change

    def wire(self, owner: str, *, narrows: bool, widens: bool, what: str, narrow_why: str = "",
             widen_why: str = "", old_tolerant: str = "", new_tolerant: str = "", compatible: str = "",
             overlap: bool = True) -> Impact:
        """The wire impact of a change that ``narrows`` (new receivers refuse
        what old senders may send) and/or ``widens`` (old receivers refuse
        what new senders may send) what ``owner`` allows; ``what`` names the
        thing in the reasons.

        A widening is tolerated when old receivers drop just the values they
        do not know: ``old_tolerant`` says why at the field, or every place
        that holds an ``owner`` is ``x-deserialize-*``; and some of what new
        senders emit must still be readable (``overlap``), or everything
        would be dropped. A narrowing is not: new receivers that drop what
        old senders send lose it all the same."""
        peers = self.senders(owner)
        sends, gets = _plural(peers, "peers"), _plural(_receivers(peers), "receivers")
        affects, reasons, tolerated = [], [], []
        if narrows:
            why = new_tolerant or (
                f"every place that holds {_a(owner)} drops an invalid one (x-deserialize-*)"
                if owner and owner in self.new.protected else ""
            )
            affects.append(OLD_SENDERS)
            reasons.append(
                f"{gets} built on the new schema {'drop' if why else 'reject'} {what} that {sends} "
                "built on the old schema may send"
                + (f" ({narrow_why})" if narrow_why else "")
                + (f"; {why}" if why else "")
            )
        if widens:
            why = old_tolerant or (
                f"old receivers drop {_a(owner)} they cannot read: every place that holds one is x-deserialize-*"
                if owner and owner in self.old.protected else ""
            )
            if not overlap:
                why = ""
            if why:
                tolerated.append(why)
            else:
                affects.append(OLD_RECEIVERS)
                reasons.append(
                    f"{gets} built on the old schema reject {what} that {sends} built on the new schema may send"
                    + (f" ({widen_why})" if widen_why else "")
                )
        if affects:
            return Impact(True, "; ".join(reasons), tuple(sorted(affects)))
        if tolerated:
            return Impact(False, "tolerated: " + "; ".join(tolerated))
        return Impact(False, compatible or "messages valid under one schema are valid under the other")

    # -------------------------------------------------------- types

    def describe(self, definition: ir.Definition) -> str:
        if isinstance(definition, ir.ObjectDef):
            return f"object ({_count(len(definition.fields), 'field')})"
        if isinstance(definition, ir.EnumDef):
            return f"{'open' if definition.open else 'closed'} enum ({_count(len(definition.members), 'value')})"
        if isinstance(definition, ir.UnionDef):
            how = f"tagged by {_c(definition.tag)}" if definition.tag else "untagged"
            return f"union {how} ({_count(len(definition.variants), 'variant')})"
        return f"alias of {_c(show_type(definition.target))}"

    def type_added(self, definition: ir.Definition) -> None:
        renamed_from = next((o for o, n in self.renamed.items() if n == definition.name), None)
        summary = f"new {self.describe(definition)}"
        if renamed_from:
            summary += f", the shape of the removed {_c(renamed_from)}"
        self.add(
            "type-added", definition.name, definition.name, summary,
            Impact(False, "a new type: it reaches the wire only where other changes, classified there, refer to it"),
            Impact(False, f"a new name, {_c(definition.class_name)}"),
            new=self.describe(definition),
        )

    def type_removed(self, definition: ir.Definition, memo: dict) -> None:
        name = definition.name
        renamed = self.renamed.get(name)
        what = "the alias" if definition.kind == "alias" else "the class"
        api_reason = f"{what} {_c(definition.class_name)} is gone"
        if renamed:
            api_reason += f" (renamed to {_c(self.new.defs[renamed].class_name)})"
        summary = f"removed {self.describe(definition)}" + (f", renamed to {_c(renamed)}" if renamed else "")
        self.add("type-removed", name, name, summary, self._removed_wire(name, memo, frozenset()),
                 Impact(True, api_reason), old=self.describe(definition), new=renamed)

    def _removed_wire(self, name: str, memo: dict, active: frozenset) -> Impact:
        if name in memo:
            return memo[name]
        renamed = self.renamed.get(name)
        places = sorted({e.where for e in self.old.referrers.get(name, ())})
        if renamed:
            impact = Impact(False, f"renamed to {_c(renamed)} with the same shape")
        elif not places:
            impact = Impact(False, "no message of the old schema used it")
        else:
            active = active | {name}
            breaking: list[Change] = [
                change
                for change in self.changes
                if change.kind in _USE_KINDS
                and change.wire.breaking
                and any(p == change.path or p.startswith((change.path + ".", change.path + "[")) for p in places)
            ]
            # Places inside other removed types carry those types' impact.
            for edge in self.old.referrers.get(name, ()):
                owner = edge.owner
                if owner and owner not in self.new.defs and owner not in active:
                    inner = self._removed_wire(owner, memo, active)
                    if inner.breaking:
                        breaking.append(Change("type-removed", owner, owner, "", inner, COMPATIBLE))
            shown = _list(places)
            if breaking:
                impact = Impact(
                    True,
                    f"old peers may still send it where the old schema used it ({shown}); the new schema "
                    f"no longer accepts it there (see {_list(sorted({c.path for c in breaking}))})",
                    tuple(sorted({a for c in breaking for a in c.wire.affects})),
                )
            else:
                impact = Impact(False, f"its former uses ({shown}) changed compatibly")
        memo[name] = impact
        return impact

    def definition(self, old: ir.Definition, new: ir.Definition) -> None:
        name = old.name
        if old.kind != new.kind:
            self.kind_changed(old, new)
            return
        if old.class_name != new.class_name:
            self.add("class-renamed", name, name,
                     f"Python class {_c(old.class_name)} is now {_c(new.class_name)}",
                     Impact(False, "the wire name is unchanged"),
                     Impact(True, f"{_c(old.class_name)} was renamed to {_c(new.class_name)}"),
                     old=old.class_name, new=new.class_name)
        if isinstance(old, ir.ObjectDef):
            self.fields(name, name, old.fields, new.fields, classes=(old.class_name, new.class_name),
                        closed=(self.old.closed(name), self.new.closed(name)))
        elif isinstance(old, ir.AliasDef):
            self.alias(old, new)
        elif isinstance(old, ir.EnumDef):
            self.enum(old, new)
        elif isinstance(old, ir.UnionDef):
            self.union(old, new)

    def kind_changed(self, old: ir.Definition, new: ir.Definition) -> None:
        name = old.name
        narrows = not self.covers(self.new.shape(name, "receiver"), self.new, self.old.shape(name, "sender"), self.old)
        widens = not self.covers(self.old.shape(name, "receiver"), self.old, self.new.shape(name, "sender"), self.new)
        overlap = self.overlaps(self.old.shape(name, "receiver"), self.old, self.new.shape(name, "sender"), self.new)
        wire = self.wire(name, narrows=narrows, widens=widens, what=_a(name), overlap=overlap,
                         widen_why="" if overlap else "none of them reads as the old shape",
                         compatible=f"every {_c(name)} a sender of either schema emits, the other schema accepts")
        self.add("type-kind-changed", name, name, f"was {self.describe(old)}, now {self.describe(new)}", wire,
                 Impact(True, f"{_c(old.class_name)} was {_python_kind(old)} and is now {_python_kind(new)}"),
                 old=self.describe(old), new=self.describe(new))

    def alias(self, old: ir.AliasDef, new: ir.AliasDef) -> None:
        name = old.name
        if _norm(old.target) != _norm(new.target):
            narrows = not self.covers(new.target, self.new, old.target, self.old)
            widens = not self.covers(old.target, self.old, new.target, self.new)
            self.add("alias-type-changed", name, name,
                     f"was {_c(show_type(old.target))}, now {_c(show_type(new.target))}",
                     self.wire(name, narrows=narrows, widens=widens, what=f"{_a(name)} value",
                               overlap=self.overlaps(old.target, self.old, new.target, self.new),
                               compatible=self._compatible_type_reason(old.target, new.target)),
                     self.api_type(_c(old.class_name), self.old.annotation_parts(old.target),
                                   self.new.annotation_parts(new.target)),
                     old=show_type(old.target), new=show_type(new.target))
        self.skip_items(name, name, old.target, new.target)

    # -------------------------------------------------------- fields

    def fields(self, owner: str, prefix: str, old_fields, new_fields, *, classes, closed=(False, False),
               skip=frozenset()) -> None:
        old_by = {f.wire_name: f for f in old_fields if f.wire_name not in skip}
        new_by = {f.wire_name: f for f in new_fields if f.wire_name not in skip}
        old_class, new_class = classes
        for wire_name, f in new_by.items():
            path = f"{prefix}.{wire_name}"
            if wire_name in old_by:
                self.field(owner, path, old_by[wire_name], f, classes)
                continue
            wire = self.wire(
                owner, narrows=f.required, widens=closed[0],
                what=f"{_a(prefix)} {'without' if f.required else 'with'} {_c(wire_name)}",
                narrow_why="they omit the new required field",
                widen_why="the old object allows no other properties",
                compatible="an optional field: old receivers ignore it and new receivers do without it",
            )
            if f.required and not f.has_default:
                api = Impact(True, f"constructing {_c(new_class)} now needs the argument {_c(f.name)}")
            elif f.has_default:
                api = Impact(False, f"a new attribute {_c(f.name)}, defaulting to {_c(_show_json(f.default))}")
            else:
                api = Impact(False, f"a new optional attribute {_c(f.name)} (UNSET when omitted)")
            self.add("field-added", owner, path,
                     f"new {'required' if f.required else 'optional'} field {_c(wire_name)}: {_c(show_type(f.type))}",
                     wire, api, new=self.field_json(f))
        for wire_name, f in old_by.items():
            if wire_name in new_by:
                continue
            wire = self.wire(
                owner, narrows=closed[1], widens=f.required,
                what=f"{_a(prefix)} {'with' if closed[1] else 'without'} {_c(wire_name)}",
                narrow_why="the new object allows no other properties",
                widen_why="the field was required",
                compatible="it was optional: receivers already did without it, and an old sender's extra property is ignored",
            )
            self.add("field-removed", owner, f"{prefix}.{wire_name}",
                     f"removed {'required' if f.required else 'optional'} field {_c(wire_name)}",
                     wire, Impact(True, f"the attribute {_c(old_class + '.' + f.name)} is gone"),
                     old=self.field_json(f))

    @staticmethod
    def field_json(f: ir.Field) -> dict:
        out = {"type": show_type(f.type), "required": f.required, "python": f.name}
        if f.has_default:
            out["default"] = f.default
        return out

    def field(self, owner: str, path: str, old: ir.Field, new: ir.Field, classes) -> None:
        old_class, new_class = classes
        wire_name = _c(old.wire_name)
        attribute = _c(f"{new_class}.{new.name}")
        holder = _a(path.rsplit(".", 1)[0])
        old_tol = "old receivers drop the invalid value (x-deserialize-default-on-error)" if old.on_error != "raise" else ""
        new_tol = "new receivers drop the invalid value (x-deserialize-default-on-error)" if new.on_error != "raise" else ""
        if old.name != new.name:
            self.add("field-renamed", owner, path, f"Python attribute {_c(old.name)} is now {_c(new.name)}",
                     Impact(False, "the wire name is unchanged"),
                     Impact(True, f"{_c(old_class + '.' + old.name)} was renamed to {_c(new.name)}"),
                     old=old.name, new=new.name)
        if old.required != new.required:
            if new.required:
                wire = self.wire(owner, narrows=True, widens=False, what=f"{holder} without {wire_name}",
                                 narrow_why="the field was optional")
                api = (Impact(False, f"{_c(new.name)} keeps a default") if new.has_default
                       else Impact(True, f"constructing {_c(new_class)} now needs the argument {_c(new.name)}"))
                self.add("field-required", owner, path, f"{wire_name} is now required", wire, api, old=False, new=True)
            else:
                wire = self.wire(owner, narrows=False, widens=True, what=f"{holder} without {wire_name}",
                                 widen_why="the field was required")
                api = (Impact(False, f"an omitted {_c(new.name)} reads as its default") if new.has_default
                       else Impact(True, f"{attribute} may now be UNSET when read"))
                self.add("field-optional", owner, path, f"{wire_name} is now optional", wire, api, old=True, new=False)
        if old.nullable != new.nullable:
            if new.nullable:
                tol = old_tol or ("old receivers take null as the default (x-deserialize-default-on-null)"
                                  if old.default_on_null else "")
                wire = self.wire(owner, narrows=False, widens=True, what=f"null as {wire_name}", old_tolerant=tol)
                self.add("field-nullable", owner, path, f"{wire_name} may now be null", wire,
                         Impact(True, f"{attribute} may now be None when read"), old=False, new=True)
            else:
                tol = new_tol or ("new receivers take null as the default (x-deserialize-default-on-null)"
                                  if new.default_on_null else "")
                wire = self.wire(owner, narrows=True, widens=False, what=f"null as {wire_name}", new_tolerant=tol)
                self.add("field-non-nullable", owner, path, f"{wire_name} may no longer be null", wire,
                         Impact(True, f"None is no longer a value of {attribute}"), old=True, new=False)
        old_t, new_t = _norm(old.value_type), _norm(new.value_type)
        if old_t != new_t:
            narrows = not self.covers(new_t, self.new, old_t, self.old)
            widens = not self.covers(old_t, self.old, new_t, self.new)
            wire = self.wire(owner, narrows=narrows, widens=widens, what=f"{_a(old.wire_name)} value",
                             old_tolerant=old_tol, new_tolerant=new_tol,
                             overlap=self.overlaps(old_t, self.old, new_t, self.new),
                             compatible=self._compatible_type_reason(old_t, new_t))
            api = self.api_type(attribute, self.old.annotation_parts(old.value_type),
                                self.new.annotation_parts(new.value_type))
            self.add("field-type-changed", owner, path,
                     f"{wire_name} was {_c(show_type(old.value_type))}, now {_c(show_type(new.value_type))}",
                     wire, api, old=show_type(old.type), new=show_type(new.type))
        if old.has_default != new.has_default or (old.has_default and not _same_json(old.default, new.default)):
            self.default_changed(owner, path, old, new, attribute)
        for flag, keyword in (("default_on_error", "x-deserialize-default-on-error"),
                              ("default_on_null", "x-deserialize-default-on-null")):
            if getattr(old, flag) != getattr(new, flag):
                self.deserialize(owner, path, keyword, getattr(new, flag))
        self.skip_items(owner, path, old.type, new.type)

    def _compatible_type_reason(self, old_t, new_t) -> str:
        if self.covers(new_t, self.new, old_t, self.old) and self.covers(old_t, self.old, new_t, self.new):
            return "both types allow the same values"
        return "messages valid under one schema are valid under the other"

    def default_changed(self, owner: str, path: str, old: ir.Field, new: ir.Field, attribute: str) -> None:
        wire_name = _c(old.wire_name)
        before, after = _c(_show_json(old.default)), _c(_show_json(new.default))
        if not old.has_default:
            summary = f"{wire_name} now defaults to {after}"
            wire = Impact(False, "the values that may be sent are unchanged; an omitted value now stands for the default")
            api = Impact(False, f"an omitted {attribute} now reads as {after} instead of UNSET")
        elif not new.has_default:
            summary = f"{wire_name} no longer defaults to {before}"
            wire = Impact(False, "the values that may be sent are unchanged")
            api = (Impact(False, f"{attribute} is now required, so it always reads as sent") if new.required
                   else Impact(True, f"{attribute} may now be UNSET where it read as {before}"))
        else:
            summary = f"{wire_name} defaulted to {before}, now {after}"
            peers = _plural(self.senders(owner))
            wire = Impact(True, f"an omitted {wire_name} means {before} to {peers} built on the old schema "
                                f"and {after} to those built on the new one", (OLD_RECEIVERS, OLD_SENDERS))
            api = Impact(False, f"the constructor default of {attribute} is now {after}")
        self.add("field-default-changed", owner, path, summary, wire, api,
                 old=_json_value(old.default), new=_json_value(new.default))

    def deserialize(self, owner: str, path: str, keyword: str, added: bool) -> None:
        if added:
            wire = Impact(False, f"new receivers repair what {keyword} covers instead of rejecting it; "
                                 "valid messages decode the same")
        else:
            wire = Impact(False, f"new receivers reject what {keyword} used to repair; "
                                 "messages valid under both schemas decode the same")
        self.add("deserialize-added" if added else "deserialize-removed", owner, path,
                 f"{keyword} {'added' if added else 'removed'}", wire,
                 Impact(False, "the Python API is the same; only lenient decoding changes"),
                 old=not added, new=added)

    def skip_items(self, owner: str, path: str, old_t: ir.TypeExpr, new_t: ir.TypeExpr) -> None:
        before, after = _skip_positions(old_t), _skip_positions(new_t)
        for where in sorted(after - before):
            self.deserialize(owner, path + where, "x-deserialize-skip-invalid-items", True)
        for where in sorted(before - after):
            self.deserialize(owner, path + where, "x-deserialize-skip-invalid-items", False)

    def api_type(self, what: str, old_parts: list[str], new_parts: list[str]) -> Impact:
        old_text, new_text = _c(" | ".join(old_parts)), _c(" | ".join(new_parts))
        if old_parts == new_parts:
            return Impact(False, f"the Python type of {what} is unchanged ({new_text}); only the allowed values changed")
        if set(old_parts) < set(new_parts):
            added = _c(" | ".join(p for p in new_parts if p not in old_parts))
            return Impact(False, f"{what} may also be {added}: new union members only")
        return Impact(True, f"{what} was {old_text}, now {new_text}")

    # -------------------------------------------------------- enums

    def enum(self, old: ir.EnumDef, new: ir.EnumDef) -> None:
        name = old.name
        if old.value_kind != new.value_kind:
            self.add("type-kind-changed", name, name, f"was an enum of {old.value_kind}, now of {new.value_kind}",
                     self.wire(name, narrows=True, widens=True, what=f"{_a(name)} value"),
                     Impact(True, f"{_c(old.class_name)} now holds {new.value_kind} values"),
                     old=old.value_kind, new=new.value_kind)
            return
        old_members = {(type(m.value), m.value): m for m in old.members}
        new_members = {(type(m.value), m.value): m for m in new.members}
        for key, member in new_members.items():
            path = f"{name}:{member.value}"
            value = _c(json.dumps(member.value))
            if key in old_members:
                before = old_members[key]
                if before.name != member.name:
                    self.add("enum-member-renamed", name, path,
                             f"member {_c(before.name)} is now {_c(member.name)}",
                             Impact(False, "the wire value is unchanged"),
                             Impact(True, f"{_c(old.class_name + '.' + before.name)} was renamed to {_c(member.name)}"),
                             old=before.name, new=member.name)
                continue
            if old.open:
                wire = Impact(False, f"old receivers keep it as a plain value: {_c(name)} is open")
            else:
                wire = self.wire(name, narrows=False, widens=True, what=f"the {_c(name)} value {value}",
                                 widen_why=f"{_c(name)} is closed")
            self.add("enum-value-added", name, path, f"new value {value}", wire,
                     Impact(False, f"a new member {_c(new.class_name + '.' + member.name)}"), new=member.value)
        for key, member in old_members.items():
            if key in new_members:
                continue
            value = _c(json.dumps(member.value))
            if new.open:
                wire = Impact(False, f"new receivers still accept it as a plain value: {_c(name)} is open")
            else:
                wire = self.wire(name, narrows=True, widens=False, what=f"the {_c(name)} value {value}",
                                 narrow_why=f"{_c(name)} is closed")
            self.add("enum-value-removed", name, f"{name}:{member.value}", f"removed value {value}", wire,
                     Impact(True, f"the member {_c(old.class_name + '.' + member.name)} is gone"), old=member.value)
        if old.open != new.open:
            if new.open:
                self.add("enum-opened", name, name, f"{_c(name)} now accepts any other {new.value_kind}",
                         Impact(False, "receivers accept more; senders still emit only the known values"),
                         Impact(True, f"a value of {_c(new.class_name)} may now be read as a plain {new.value_kind}"),
                         old=False, new=True)
            else:
                self.add("enum-closed", name, name, f"{_c(name)} no longer accepts other values",
                         Impact(False, "senders emit only the known values, which both schemas accept"),
                         Impact(True, f"a plain {old.value_kind} is no longer a value where {_c(new.class_name)} is expected"),
                         old=True, new=False)

    # -------------------------------------------------------- unions

    def union(self, old: ir.UnionDef, new: ir.UnionDef) -> None:
        name = old.name
        if old.tag != new.tag:
            self.add("union-tag-changed", name, name,
                     f"told apart by {_c(new.tag) if new.tag else 'required keys'}, "
                     f"was {_c(old.tag) if old.tag else 'required keys'}",
                     self.wire(name, narrows=True, widens=True, what=_a(name)),
                     Impact(True, f"the variant classes of {_c(new.class_name)} changed with the tag"),
                     old=old.tag, new=new.tag)
            return
        if old.tag and old.tag_name != new.tag_name:
            self.add("field-renamed", name, f"{name}.{new.tag}",
                     f"Python tag attribute {_c(old.tag_name)} is now {_c(new.tag_name)}",
                     Impact(False, "the wire name is unchanged"),
                     Impact(True, f"the tag attribute {_c(old.tag_name)} was renamed to {_c(new.tag_name)}"),
                     old=old.tag_name, new=new.tag_name)
        if old.tag_lenient != new.tag_lenient:
            self.deserialize(name, f"{name}.{new.tag}", "x-deserialize-default-on-error", new.tag_lenient)
        old_base, new_base = self.old.base_fields(old), self.new.base_fields(new)
        # The shared fields, once for the whole union.
        self.fields(name, name, _first_fields(old, old_base), _first_fields(new, new_base),
                    classes=(old.class_name, new.class_name))
        old_variants = {_variant_key(old, v): v for v in old.variants}
        new_variants = {_variant_key(new, v): v for v in new.variants}
        for key, variant in new_variants.items():
            label = _variant_label(new, variant)
            path = f"{name}[{label}]"
            if key in old_variants:
                self.variant(old, new, old_variants[key], variant, path, old_base | new_base)
                continue
            if variant.role == ir.CATCH_ALL:
                wire = Impact(False, "receivers now keep unknown tags; senders still emit only the known variants")
            elif old.catch_all is not None:
                wire = Impact(False, f"old receivers keep it as the catch-all variant {_c(old.catch_all.class_name)}")
            else:
                wire = self.wire(name, narrows=False, widens=True, what=f"the {_c(name)} variant {_c(label)}",
                                 widen_why="the old union has no catch-all variant")
            self.add("variant-added", name, path,
                     f"new variant {_c(label)}" + (f" ({_c(variant.ref)})" if variant.ref else ""),
                     wire, Impact(False, f"a new class {_c(variant.class_name)}"), new=variant.class_name)
        for key, variant in old_variants.items():
            if key in new_variants:
                continue
            label = _variant_label(old, variant)
            if variant.role == ir.CATCH_ALL:
                wire = Impact(False, "senders emit only the known variants, which the new union still accepts")
            elif new.catch_all is not None:
                wire = Impact(False, f"new receivers keep it as the catch-all variant {_c(new.catch_all.class_name)}")
            else:
                wire = self.wire(name, narrows=True, widens=False, what=f"the {_c(name)} variant {_c(label)}",
                                 narrow_why="the new union has no catch-all variant")
            what = "the union member" if variant.reuses_ref else "the variant class"
            self.add("variant-removed", name, f"{name}[{label}]",
                     f"removed variant {_c(label)}" + (f" ({_c(variant.ref)})" if variant.ref else ""),
                     wire, Impact(True, f"{what} {_c(variant.class_name)} is gone from {_c(old.class_name)}"),
                     old=variant.class_name)

    def variant(self, old_union, new_union, old: ir.Variant, new: ir.Variant, path: str, base: set[str]) -> None:
        name = old_union.name
        if old.class_name != new.class_name:
            self.add("variant-renamed", name, path,
                     f"variant class {_c(old.class_name)} is now {_c(new.class_name)}",
                     Impact(False, "the wire form is unchanged"),
                     Impact(True, f"{_c(old.class_name)} was renamed to {_c(new.class_name)}"),
                     old=old.class_name, new=new.class_name)
        same_payload = old.wraps == new.wraps and (
            old.ref == new.ref or (old.ref in self.renamed and self.renamed[old.ref] == new.ref)
        )
        if not same_payload:
            new_shape, old_shape = self.new.variant_shape(new_union, new), self.old.variant_shape(old_union, old)
            narrows = not self.covers(new_shape, self.new, old_shape, self.old)
            widens = not self.covers(old_shape, self.old, new_shape, self.new)
            old_names = {f.name for f in old.fields}
            if old.wraps != new.wraps or not old_names <= {f.name for f in new.fields} or any(
                f.required and not f.has_default for f in new.fields if f.name not in old_names
            ):
                api = Impact(True, f"the attributes of {_c(new.class_name)} changed with its payload")
            else:
                api = Impact(False, f"{_c(new.class_name)} keeps its attributes")
            before, after = old.wraps or old.ref, new.wraps or new.ref
            old_wire = [f.wire_name for f in old.fields]
            new_wire = [f.wire_name for f in new.fields]
            details = []
            if [w for w in new_wire if w not in old_wire]:
                details.append("fields added: " + _list([w for w in new_wire if w not in old_wire], code=True))
            if [w for w in old_wire if w not in new_wire]:
                details.append("fields removed: " + _list([w for w in old_wire if w not in new_wire], code=True))
            self.add("variant-changed", name, path,
                     f"payload was {_c(before) if before else 'inline'}, now {_c(after) if after else 'inline'}"
                     + (f" ({'; '.join(details)})" if details else ""),
                     self.wire(name, narrows=narrows, widens=widens, what=_a(path),
                               overlap=self.overlaps(old_shape, self.old, new_shape, self.new)), api,
                     old=before, new=after)
            return
        if old.reuses_ref and new.reuses_ref:
            return
        # Fields of the payload type are reported on that type; the union's
        # shared fields on the union.
        skip = set(base)
        for side, variant in ((self.old, old), (self.new, new)):
            payload = side.defs.get(variant.ref or "")
            if isinstance(payload, ir.ObjectDef):
                skip |= {f.wire_name for f in payload.fields}
        self.fields(name, path, old.fields, new.fields, classes=(old.class_name, new.class_name), skip=skip)

    # -------------------------------------------------------- methods and message forms

    def methods(self) -> None:
        def by_name(methods) -> dict[str, dict[str, list[str]]]:
            out: dict[str, dict[str, list[str]]] = {}
            for (method, side), names in methods.items():
                out.setdefault(method, {})[side] = sorted(names)
            return out

        old_methods, new_methods = by_name(self.old.methods), by_name(self.new.methods)
        for method in sorted(set(old_methods) | set(new_methods)):
            before, after = old_methods.get(method, {}), new_methods.get(method, {})
            if before and after and set(before) != set(after):
                sides_old, sides_new = ", ".join(sorted(before)), ", ".join(sorted(after))
                self.add("method-changed", "", f"method {method}",
                         f"{_c(method)} is handled by the {sides_new}, was the {sides_old}",
                         Impact(True, f"peers built on the old schema send {_c(method)} to a side that no longer "
                                      "handles it, and expect it from the other", (OLD_RECEIVERS, OLD_SENDERS)),
                         Impact(False, "the classes keep their names"),
                         old=sides_old, new=sides_new, senders=set())
                continue
            for side, names in after.items():
                if side not in before:
                    self.add("method-added", "", f"method {method} ({side})",
                             f"new method {_c(method)}, handled by the {side or 'unknown side'} ({_list(names, code=True)})",
                             Impact(False, f"{_plural({side}, 'peers')} built on the old schema answer 'method not "
                                           "found', which callers of a new method must expect"),
                             Impact(False, "new classes only"), new=names, senders=_callers(side))
            for side, names in before.items():
                if side not in after:
                    callers = _callers(side)
                    self.add("method-removed", "", f"method {method} ({side})",
                             f"removed method {_c(method)}, handled by the {side or 'unknown side'} ({_list(names, code=True)})",
                             Impact(True, f"{_plural(callers)} built on the old schema may still call it; "
                                          f"{_plural({side}, 'peers')} built on the new schema answer 'method not found'",
                                    (OLD_SENDERS,)),
                             Impact(False, "its classes are reported as types"), old=names, senders=callers)

    def message_forms(self) -> None:
        old_forms, new_forms = self.old.forms, self.new.forms
        for title in sorted(set(old_forms) | set(new_forms)):
            peers = _form_senders(title)
            path = f"message {title}"
            if title not in old_forms:
                self.add("message-form-added", "", path, f"new top-level message form {_c(title)}",
                         Impact(False, "a new kind of message: peers that do not take part in it need not handle it"),
                         Impact(False, "message forms are not generated"), senders=peers)
            elif title not in new_forms:
                self.add("message-form-removed", "", path, f"removed top-level message form {_c(title)}",
                         Impact(True, f"{_plural(peers)} built on the old schema may still send it; "
                                      "receivers built on the new schema reject it", (OLD_SENDERS,)),
                         Impact(False, "message forms are not generated"), senders=peers)
            elif _stripped(old_forms[title]) != _stripped(new_forms[title]):
                self.add("message-form-changed", "", path, f"the top-level message form {_c(title)} changed",
                         Impact(True, "the envelope itself changed (not only the types it refers to); "
                                      "compare the schemas' top-level anyOf", (OLD_RECEIVERS, OLD_SENDERS)),
                         Impact(False, "message forms are not generated"), senders=peers)

    # -------------------------------------------------------- shapes

    def covers(self, a, a_side: _Side, b, b_side: _Side, seen: frozenset = frozenset()) -> bool:
        """Whether every value ``b`` lets a sender emit (in ``b_side``) is
        accepted by ``a`` (in ``a_side``). Conservative: False when unsure.
        References to the same definition cover each other (changes inside
        it are reported on it); others are expanded."""
        kind_a, kind_b = a.kind, b.kind
        if kind_b in ("alt", "scalar_union", "first_match"):
            return all(self.covers(a, a_side, m, b_side, seen) for m in b.members)
        if kind_b == "nullable":
            return self.covers(a, a_side, ir.NullT(), b_side, seen) and self.covers(a, a_side, b.inner, b_side, seen)
        if kind_a == "any":
            return True
        if kind_b == "ref":
            if self._mentions(a, a_side, b.name, b_side):
                return True
            if b.name not in b_side.defs:
                return False
            key = (a_side.label, _key(a), b_side.label, b.name)
            if key in seen:
                return True
            return self.covers(a, a_side, b_side.shape(b.name, "sender"), b_side, seen | {key})
        if kind_a == "ref":
            if a.name not in a_side.defs:
                return False
            key = (a_side.label, a.name, b_side.label, _key(b))
            if key in seen:
                return True
            return self.covers(a_side.shape(a.name, "receiver"), a_side, b, b_side, seen | {key})
        if kind_b == "raw" and kind_a != "raw":
            # A sender's raw subschema allows at most what its JSON type does.
            base = _raw_base(b_side, b.pointer)
            return base is not None and self.covers(a, a_side, base, b_side, seen)
        if kind_a in ("alt", "scalar_union", "first_match"):
            return any(self.covers(m, a_side, b, b_side, seen) for m in a.members)
        if kind_a == "nullable":
            return kind_b == "null" or self.covers(a.inner, a_side, b, b_side, seen)
        if kind_a == "obj":
            if kind_b != "obj":
                return False
            # Senders emit only the properties they declare.
            for key, (a_type, a_required) in a.fields.items():
                if key not in b.fields:
                    if a_required:
                        return False
                    continue
                b_type, b_required = b.fields[key]
                if a_required and not b_required:
                    return False
                if not self.covers(a_type, a_side, b_type, b_side, seen):
                    return False
            return a.open or not set(b.fields) - set(a.fields)
        if kind_a == "opaque":
            return kind_b == "opaque" and a.key == b.key
        if kind_a == "map":
            if kind_b == "obj":
                return all(self.covers(a.values, a_side, t, b_side, seen) for t, _ in b.fields.values())
            return kind_b == "map" and self.covers(a.values, a_side, b.values, b_side, seen)
        if kind_a == "raw":
            return kind_b == "raw" and _raw_at(a_side, a.pointer) == _raw_at(b_side, b.pointer)
        if kind_a == "list":
            return (
                kind_b == "list"
                and (a.min_items or 0) <= (b.min_items or 0)
                and self.covers(a.items, a_side, b.items, b_side, seen)
            )
        return _scalar_covers(a, b)

    def overlaps(self, a, a_side: _Side, b, b_side: _Side, seen: frozenset = frozenset()) -> bool:
        """Whether some value ``b`` lets a sender emit is accepted by ``a``.
        Conservative the other way from ``covers``: False when unsure."""
        kind_a, kind_b = a.kind, b.kind
        if kind_a == "any":
            return kind_b != "alt" or bool(b.members)
        if kind_b in ("alt", "scalar_union", "first_match"):
            return any(self.overlaps(a, a_side, m, b_side, seen) for m in b.members)
        if kind_b == "nullable":
            return self.overlaps(a, a_side, ir.NullT(), b_side, seen) or self.overlaps(a, a_side, b.inner, b_side, seen)
        if kind_b == "ref":
            if self._mentions(a, a_side, b.name, b_side):
                return True
            key = (a_side.label, _key(a), b_side.label, b.name)
            if b.name not in b_side.defs or key in seen:
                return False
            return self.overlaps(a, a_side, b_side.shape(b.name, "sender"), b_side, seen | {key})
        if kind_a == "ref":
            key = (a_side.label, a.name, b_side.label, _key(b))
            if a.name not in a_side.defs or key in seen:
                return False
            return self.overlaps(a_side.shape(a.name, "receiver"), a_side, b, b_side, seen | {key})
        if kind_a in ("alt", "scalar_union", "first_match"):
            return any(self.overlaps(m, a_side, b, b_side, seen) for m in a.members)
        if kind_a == "nullable":
            return kind_b == "null" or self.overlaps(a.inner, a_side, b, b_side, seen)
        if kind_a == "obj":
            if kind_b != "obj":
                return False
            for key, (a_type, a_required) in a.fields.items():
                if key in b.fields:
                    b_type, b_required = b.fields[key]
                    if (a_required or b_required) and not self.overlaps(a_type, a_side, b_type, b_side, seen):
                        return False
                elif a_required:
                    return False
            return a.open or all(key in a.fields for key, (_, required) in b.fields.items() if required)
        if kind_a == "map":
            return kind_b in ("map", "obj")
        if kind_a == "list":
            return kind_b == "list" and (
                (a.min_items or 0) == 0 or self.overlaps(a.items, a_side, b.items, b_side, seen)
            )
        if kind_a == "raw" or kind_b == "raw":
            # A raw subschema restricts a plain JSON type (a pattern, a
            # format ...): assume it leaves values of that type.
            if kind_a == "raw" and kind_b == "raw" and _raw_at(a_side, a.pointer) == _raw_at(b_side, b.pointer):
                return True
            base_a = _raw_base(a_side, a.pointer) if kind_a == "raw" else a
            base_b = _raw_base(b_side, b.pointer) if kind_b == "raw" else b
            return base_a is not None and base_b is not None and self.overlaps(base_a, a_side, base_b, b_side, seen)
        if kind_b == "const" or kind_a == "const":
            value_side, other = (b, a) if kind_b == "const" else (a, b)
            return _scalar_covers(other, value_side)
        if {kind_a, kind_b} <= {"int", "num"}:
            low = max((v for v in (a.minimum, b.minimum) if v is not None), default=None)
            high = min((v for v in (a.maximum, b.maximum) if v is not None), default=None)
            return low is None or high is None or low <= high
        return kind_a == kind_b

    def _mentions(self, a, a_side: _Side, name: str, b_side: _Side) -> bool:
        """``a`` is, or has as a member, a reference to the definition ``name``
        of ``b_side`` (the same name, or its renamed self)."""
        if a.kind == "ref":
            return a.name == name or self._renamed_pair(name, b_side, a.name, a_side)
        if a.kind == "nullable":
            return self._mentions(a.inner, a_side, name, b_side)
        if a.kind in ("alt", "scalar_union", "first_match"):
            return any(self._mentions(m, a_side, name, b_side) for m in a.members)
        return False

    def _renamed_pair(self, b_name: str, b_side: _Side, a_name: str, a_side: _Side) -> bool:
        if a_side is self.new and b_side is self.old:
            return self.renamed.get(b_name) == a_name
        if a_side is self.old and b_side is self.new:
            return self.renamed.get(a_name) == b_name
        return False


_USE_KINDS = frozenset(
    {
        "field-removed",
        "field-type-changed",
        "alias-type-changed",
        "variant-removed",
        "variant-changed",
        "type-kind-changed",
        "type-removed",
        "message-form-removed",
        "message-form-changed",
    }
)
"""The changes that can stand for the removal of a type they used."""


def _first_fields(union: ir.UnionDef, names: set[str]) -> tuple[ir.Field, ...]:
    """The union's shared fields, as the first variant carries them."""
    if not names or not union.variants:
        return ()
    return tuple(f for f in union.variants[0].fields if f.wire_name in names)


def _key(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return id(value)
    return value


def _c(text: Any) -> str:
    """``text`` as code: between backticks, which the Markdown form keeps."""
    text = str(text)
    return f"``{text}``" if "`" in text else f"`{text}`"


def _a(text: str) -> str:
    """``text`` as code with its indefinite article: "an `Error`"."""
    return ("an " if text[:1].lower() in "aeiou" else "a ") + _c(text)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _list(items, limit: int = 4, code: bool = False) -> str:
    items = [_c(i) if code else str(i) for i in items]
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _stripped(node: Any) -> str:
    return json.dumps(strip_annotations(node), sort_keys=True)


def _callers(side: str) -> set[str]:
    if side == "agent":
        return {"client"}
    if side == "client":
        return {"agent"}
    if side == "protocol":
        return {"agent", "client"}
    return set()


def _python_kind(definition: ir.Definition) -> str:
    return {
        "object": "a dataclass",
        "enum": "an enum",
        "union": "a union of variant classes",
        "alias": "a type alias",
    }[definition.kind]


def _show_json(value: Any) -> str:
    return json.dumps(_json_value(value), sort_keys=True)


def _node_at(side: _Side, where: str) -> Any:
    node: Any = side.schema.document
    for part in where.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
    return node


def _raw_at(side: _Side, where: str) -> str:
    return json.dumps(strip_annotations(_node_at(side, where)), sort_keys=True)


def _raw_base(side: _Side, where: str) -> ir.TypeExpr | None:
    """The plain type a raw subschema narrows (its other keywords only
    restrict it), or None when it is not one JSON type."""
    node = _node_at(side, where)
    if not isinstance(node, dict) or any(k in node for k in ("$ref", "anyOf", "oneOf", "not", "if")):
        return None
    kind = node.get("type")
    if kind == "string":
        length = node.get("minLength")
        return ir.StrT(min_length=length if type(length) is int else None)
    if kind in ("integer", "number"):
        low, high = node.get("minimum"), node.get("maximum")
        ok = all(v is None or type(v) in (int, float) for v in (low, high))
        if kind == "integer":
            return ir.IntT(minimum=low, maximum=high) if ok and all(v is None or type(v) is int for v in (low, high)) else ir.IntT()
        return ir.NumT(minimum=low, maximum=high) if ok else ir.NumT()
    if kind == "boolean":
        return ir.BoolT()
    if kind == "null":
        return ir.NullT()
    return None


def _scalar_covers(a: ir.TypeExpr, b: ir.TypeExpr) -> bool:
    """``a`` accepts every value of ``b``, both scalar, array or constant."""
    ka, kb = a.kind, b.kind
    if kb == "const":
        value = b.value
        if ka == "const":
            return _same_json(a.value, value)
        if ka == "str":
            return isinstance(value, str) and len(value) >= (a.min_length or 0)
        if ka == "int":
            return type(value) is int and _in_range(value, a.lenient_min, a.lenient_max)
        if ka == "num":
            return type(value) in (int, float) and _in_range(value, a.minimum, a.maximum)
        if ka == "bool":
            return type(value) is bool
        if ka == "null":
            return value is None
        return False
    if ka != kb and not (ka == "num" and kb == "int"):
        return False
    if ka == "str":
        return (a.min_length or 0) <= (b.min_length or 0)
    if ka == "int":
        return _range_covers(a.lenient_min, a.lenient_max, b.lenient_min, b.lenient_max)
    if ka == "num":
        low = b.lenient_min if kb == "int" else b.minimum
        high = b.lenient_max if kb == "int" else b.maximum
        return _range_covers(a.minimum, a.maximum, low, high)
    if ka in ("bool", "null"):
        return True
    return False


def _in_range(value, low, high) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def _range_covers(a_low, a_high, b_low, b_high) -> bool:
    low_ok = a_low is None or (b_low is not None and b_low >= a_low)
    high_ok = a_high is None or (b_high is not None and b_high <= a_high)
    return low_ok and high_ok


# ---------------------------------------------------------------- output


def render_json(diff: SchemaDiff) -> str:
    """The JSON form: sorted keys, two-space indent, a final newline."""
    return json.dumps(diff.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _ordered(changes: Iterable[Change]) -> list[Change]:
    return sorted(changes, key=lambda c: (KINDS.index(c.kind), c.path, c.summary))


def _short_sha(sha: str) -> str:
    return sha[:12]


def headline(diff: SchemaDiff) -> str:
    """One line: how many changes, how many break what."""
    counts = diff.summary()
    if not counts["changes"]:
        return "no changes"
    return (
        f"{counts['changes']} change{'s' if counts['changes'] != 1 else ''}: "
        f"{counts['breaking']} breaking ({counts['wire_breaking']} on the wire, "
        f"{counts['api_breaking']} in the Python API), {counts['compatible']} compatible"
    )


def _tags(change: Change) -> str:
    parts = [name for name, impact in (("wire", change.wire), ("api", change.api)) if impact.breaking]
    return "+".join(parts) if parts else "compatible"


def render_text(diff: SchemaDiff, *, verbose: bool = True) -> str:
    """Plain text: a header, then every breaking change with both reasons,
    then the compatible changes one a line (with ``verbose``)."""
    lines = [
        f"old: {diff.old.file} ({diff.old.version or 'version unknown'}, sha256 {_short_sha(diff.old.sha256)})",
        f"new: {diff.new.file} ({diff.new.version or 'version unknown'}, sha256 {_short_sha(diff.new.sha256)})",
        headline(diff),
    ]
    breaking = _ordered(diff.breaking)
    if breaking:
        lines.append("")
        lines.append("breaking:")
        for change in breaking:
            lines.append(f"  [{_tags(change)}] {change.kind} {change.path}: {change.summary}")
            lines.append(f"      wire: {'BREAKING' if change.wire.breaking else 'ok'}: {change.wire.reason}")
            lines.append(f"      api:  {'BREAKING' if change.api.breaking else 'ok'}: {change.api.reason}")
    compatible = _ordered(diff.compatible)
    if compatible and verbose:
        lines.append("")
        lines.append("compatible:")
        for change in compatible:
            lines.append(f"  {change.kind} {change.path}: {change.summary}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    """Plain text made safe to put in Markdown prose; its code spans (the
    backticks the messages put around names and types) are kept as they are."""
    out = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "`":
            run = len(text[index:]) - len(text[index:].lstrip("`"))
            close = text.find("`" * run, index + run)
            if close != -1:
                out.append(text[index : close + run])
                index = close + run
                continue
            out.append("\\`" * run)
            index += run
            continue
        if char in "\\*_":
            out.append("\\" + char)
        elif char == "<":
            out.append("&lt;")
        elif char == ">":
            out.append("&gt;")
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _code(text: str) -> str:
    ticks = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def render_markdown(diff: SchemaDiff, *, title: str | None = None) -> str:
    """Markdown for a changelog entry or a pull-request comment: the
    breaking changes in full, the compatible ones folded, grouped by kind."""
    old, new = diff.old, diff.new
    name = title or _common_name(old.file, new.file)
    counts = diff.summary()
    lines = [
        f"### Schema changes: {_code(name)} {_md(old.label)} → {_md(new.label)}",
        "",
        f"- old: {_code(old.file)} (version {_md(old.version or 'unknown')}, sha256 {_code(_short_sha(old.sha256))})",
        f"- new: {_code(new.file)} (version {_md(new.version or 'unknown')}, sha256 {_code(_short_sha(new.sha256))})",
        "",
    ]
    if not counts["changes"]:
        lines.append("No changes.")
        return "\n".join(lines) + "\n"
    lines.append(
        f"**{counts['changes']} changes: {counts['breaking']} breaking** "
        f"({counts['wire_breaking']} on the wire, {counts['api_breaking']} for the Python API), "
        f"{counts['compatible']} compatible."
    )
    breaking = _ordered(diff.breaking)
    if breaking:
        lines += ["", f"#### Breaking changes ({len(breaking)})", ""]
        for change in breaking:
            where = "wire and Python API" if change.wire.breaking and change.api.breaking else (
                "wire" if change.wire.breaking else "Python API"
            )
            lines.append(f"- **{_md(KIND_TITLES[change.kind])}** {_code(change.path)}: {_md(change.summary)} _(breaks the {where})_")
            lines.append(f"  - wire: {'**breaking**' if change.wire.breaking else 'compatible'}: {_md(change.wire.reason)}")
            lines.append(f"  - Python: {'**breaking**' if change.api.breaking else 'compatible'}: {_md(change.api.reason)}")
    compatible = diff.compatible
    if compatible:
        lines += ["", "<details>", f"<summary>Compatible changes ({len(compatible)})</summary>", ""]
        groups: dict[str, list[Change]] = {}
        for change in _ordered(compatible):
            groups.setdefault(change.kind, []).append(change)
        for kind, changes in groups.items():
            lines.append(f"**{_md(KIND_TITLES[kind][:1].upper() + KIND_TITLES[kind][1:])}** ({len(changes)})")
            lines.append("")
            for change in changes:
                lines.append(f"- {_code(change.path)}: {_md(change.summary)}")
            lines.append("")
        lines.append("</details>")
    return "\n".join(lines) + "\n"


def _common_name(old: str, new: str) -> str:
    """The longest common trailing path of the two files (``v2/schema.json``)."""
    a, b = old.replace("\\", "/").split("/"), new.replace("\\", "/").split("/")
    common = []
    while a and b and a[-1] == b[-1]:
        common.insert(0, a.pop())
        b.pop()
    return "/".join(common) or new


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
