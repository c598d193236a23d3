"""One schema, analysed for the comparison: :class:`_Side` holds a loaded
schema with its IR and the facts the classification needs beyond it: the
references between definitions (:class:`_Edge`, with whether the place that
holds them is ``x-deserialize-*``), the top-level message forms and the peers
that send each type, the methods (``x-method``/``x-side``), the Python
annotation of a type and the shape a definition stands for; with the small
helpers that compute them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..compile import ir
from ..compile.load import Schema, iter_refs, ref_target
from ..jsontypes import Json, JsonObject
from ..pipeline import build_ir
from .shapes import Shape, _Alt, _Obj, _Opaque

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
        self.package = build_ir(schema, "acpgen_diff", "none", methods=False)
        self.defs: dict[str, ir.Definition] = {d.name: d for d in self.package.definitions}
        self.raw: JsonObject = dict(schema.defs)
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
            targets = {t for _, ref in iter_refs(node) if (t := ref_target(ref)) is not None}
            self.form_refs[title] = targets
            for target in targets:
                self.referrers.setdefault(target, []).append(_Edge(target, False, f"message {title}", ""))
        # References from the rest of the document (outside the message forms).
        rest = {k: v for k, v in schema.document.items() if k != "$defs"} if isinstance(schema.document, dict) else {}
        in_forms = {t for targets in self.form_refs.values() for t in targets}
        for _, ref in iter_refs(rest):
            found = ref_target(ref)
            if found is not None and found not in in_forms:
                self.referrers.setdefault(found, []).append(_Edge(found, False, "(document)", ""))
        self.protected = {name for name, edges in self.referrers.items() if edges and all(e.protected for e in edges)}
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
                    yield _Edge(target, protected, f"{name}.{field_key(f)}", name)
        elif isinstance(definition, ir.UnionDef):
            for variant in definition.variants:
                where = f"{name}[{_variant_label(definition, variant)}]"
                for ref in (variant.ref, variant.wraps):
                    if ref:
                        seen.add(ref)
                        yield _Edge(ref, False, where, name)
                for f in variant.fields:
                    for target, protected in _type_refs(f.type, f.on_error != "raise"):
                        seen.add(target)
                        yield _Edge(target, protected, f"{where}.{field_key(f)}", name)
        elif isinstance(definition, ir.AliasDef):
            for target, protected in _type_refs(definition.target, False):
                seen.add(target)
                yield _Edge(target, protected, name, name)
        # References the IR keeps as raw JSON (RawT) count as unprotected.
        node = self.raw.get(name)
        for _, ref in iter_refs(node):
            found = ref_target(ref)
            if found is not None and found not in seen:
                seen.add(found)
                yield _Edge(found, False, name, name)

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
        if t.kind == "nullable":
            return [*self.annotation_parts(t.inner), "None"]
        if t.kind in ("scalar_union", "first_match"):
            parts: list[str] = []
            for member in t.members:
                parts.extend(p for p in self.annotation_parts(member) if p not in parts)
            return parts
        if t.kind == "ref":
            definition = self.defs.get(t.name)
            if isinstance(definition, ir.EnumDef) and definition.open:
                return [definition.class_name, definition.value_kind]
            return [definition.class_name if definition else t.name]
        simple = {
            "any": "Any",
            "raw": "Any",
            "str": "str",
            "int": "int",
            "num": "float",
            "bool": "bool",
            "null": "None",
        }
        if t.kind in simple:
            return [simple[t.kind]]
        if t.kind == "const":
            return [f"Literal[{t.value!r}]"]
        if t.kind == "keyed":
            return [self.annotation_parts(ir.RefT(ref))[0] for ref in t.refs]
        if t.kind == "list":
            return [f"list[{self.annotation(t.items)}]"]
        if t.kind == "map":
            return [f"dict[str, {self.annotation(t.values)}]"]
        return [t.kind]  # pragma: no cover

    def shape(self, name: str, role: str) -> Shape:
        """The values a definition stands for, as a structure ``covers``
        compares. ``role`` is ``"receiver"`` (catch-alls included) or
        ``"sender"`` (only the known values)."""
        definition = self.defs[name]
        if isinstance(definition, ir.ObjectDef):
            properties: dict[str, tuple[Shape, bool]] = {f.wire_name: (f.type, f.required) for f in definition.fields}
            return _Obj(
                properties,
                not self.closed(name),
            )
        if isinstance(definition, ir.AliasDef):
            return definition.target
        if isinstance(definition, ir.EnumDef):
            members: list[Shape] = [ir.ConstT(m.value) for m in definition.members]
            if definition.open and role == "receiver":
                members.append(ir.StrT() if definition.value_kind == "str" else ir.IntT())
            return _Alt(tuple(members))
        variants: list[Shape] = []
        for variant in definition.variants:
            if variant.role == ir.CATCH_ALL and role == "sender":
                continue
            variants.append(self.variant_shape(definition, variant))
        return _Alt(tuple(variants))

    def variant_shape(self, union: ir.UnionDef, variant: ir.Variant) -> Shape:
        if variant.wraps:
            return _Opaque(f"{union.name}[{variant.tag}]->{variant.wraps}")
        fields: dict[str, tuple[Shape, bool]] = {f.wire_name: (f.type, f.required) for f in variant.fields}
        if union.tag and variant.role == ir.TAGGED:
            fields[union.tag] = (ir.ConstT(variant.tag), True)
        elif union.tag and variant.role == ir.CATCH_ALL:
            fields[union.tag] = (ir.StrT(), True)
        return _Obj(fields, True)


def _closure(start: Iterable[str], step: Callable[[str], Iterable[str]]) -> set[str]:
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


def _message_forms(document: Json) -> JsonObject:
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


def _methods(raw: JsonObject) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for name, node in raw.items():
        if isinstance(node, dict) and isinstance(node.get("x-method"), str):
            side: str = node["x-side"] if isinstance(node.get("x-side"), str) else ""
            out.setdefault((node["x-method"], side), []).append(name)
    return out


def field_key(f: ir.Field) -> str:
    """A field's place in change paths: its wire name, or for a flattened
    field (whose members share the object that holds it, and which has no
    wire name of its own) its attribute name in parentheses: ``(scope)``."""
    return f.wire_name or f"({f.name})"


def _variant_label(union: ir.UnionDef, variant: ir.Variant) -> str:
    if variant.role == ir.TAGGED:
        return str(variant.tag)
    if variant.role == ir.CATCH_ALL:
        return "*"
    if union.tag is None:
        return variant.ref or variant.title
    return "null" if variant.role == ir.NULL_TAG else "untagged"
