"""The conformance model's reading of a schema: which :class:`~.shapes.Shape`
each definition and subschema is, by the rules of docs/codec.md, independently
of the generator's lowering (:class:`ShapeReader`, the base of
:class:`~.model.Model`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard

from jsonschema import Draft202012Validator

from ..vocabulary import JSON_TYPES, common_tag, format_range
from .shapes import (
    MISSING,
    Field,
    KeyedMember,
    Shape,
    Variant,
    envelope_defs,
    is_null_schema,
    keys,
    merge_fields,
    ref_name,
    tightest,
    type_matches,
)

if TYPE_CHECKING:
    from ..jsontypes import Json, JsonArray, JsonObject


class ShapeReader:
    """The shapes of one schema document's definitions."""

    def __init__(self, document: JsonObject) -> None:
        self.document = document
        self.defs: JsonObject = document["$defs"]
        self._shapes: dict[str, Shape] = {}
        self._validators: dict[int, tuple[Json, Draft202012Validator]] = {}
        self._named: dict[str, JsonObject] = {}
        self._rejected: dict[tuple[int, str], JsonArray] = {}
        self.envelopes = envelope_defs(document)

    # ------------------------------------------------------------ shapes

    def shape(self, name: str) -> Shape:
        shape = self._shapes.get(name)
        if shape is None:
            shape = self._shapes[name] = self._definition(name, self.defs[name])
        return shape

    def _definition(self, name: str, node: Any) -> Shape:
        if not isinstance(node, dict):
            return Shape("raw", node=node) if node is not True else Shape("any")
        shape = self._enum(node) or self._union(name, node)
        if shape is not None:
            return shape
        k = keys(node)
        if node.get("type") == "object" and "properties" in k and self._flat(node):
            return Shape("object", node=node, fields=self._fields(node, envelope=name in self.envelopes))
        return self.type_of(node)

    def _fields(self, node: JsonObject, skip: tuple[str, ...] = (), envelope: bool = False) -> list[Field]:
        required = set(node.get("required", ()))
        out = []
        for wire, prop in node.get("properties", {}).items():
            if wire in skip:
                continue
            p = prop if isinstance(prop, dict) else {}
            # The envelopes' params and result are kept as JSON (docs/codec.md).
            shape = Shape("raw", node=prop) if envelope and wire in ("params", "result") else self.type_of(prop)
            out.append(
                Field(
                    wire=wire,
                    node=prop,
                    shape=shape,
                    required=wire in required,
                    default=p.get("default", MISSING),
                    on_error=p.get("x-deserialize-default-on-error") is True,
                    on_null=p.get("x-deserialize-default-on-null") is True,
                )
            )
        scope = self._scope(node)
        if scope is not None:
            out.append(Field(wire="", node=node, shape=scope, required=True, flatten=True))
        return out

    def _scope(self, node: Any) -> Shape | None:
        """An object's ``oneOf``/``anyOf`` of plain ``$defs`` objects told
        apart by required keys, their members sharing the object (the
        elicitation scopes): keyed, flattened into the object's fields."""
        if not isinstance(node, dict) or node.get("type") != "object":
            return None
        combinators = [c for c in ("oneOf", "anyOf") if c in node]
        if len(combinators) != 1 or not isinstance(node[combinators[0]], list):
            return None
        members = []
        for option in node[combinators[0]]:
            ref = ref_name(option)
            target = self.defs.get(ref) if ref else None
            if not self._plain(target):
                return None
            members.append((ref, tuple(target.get("required", ())), None))
        if len(members) < 2:
            return None
        for ref, required, _ in members:
            others = {key for r, req, _ in members if r != ref for key in req}
            if not set(required) - others:
                return None
        return Shape("keyed", node=node, members=members, exclusive=combinators[0] == "oneOf")

    def _enum(self, node: JsonObject) -> Shape | None:
        k = keys(node)
        if len(k) != 1 or not k <= {"anyOf", "oneOf"}:
            return None
        combinator = k.pop()
        options = node[combinator]
        if not isinstance(options, list) or not options:
            return None
        values, catch_all, kinds = [], None, set()
        for option in options:
            if not isinstance(option, dict):
                return None
            ok = keys(option)
            if ok == {"type", "const"} and option["type"] in ("string", "integer"):
                value = option["const"]
                if option["type"] == "string" and not isinstance(value, str):
                    return None
                if option["type"] == "integer" and type(value) is not int:
                    return None
                kinds.add(option["type"])
                values.append(value)
            elif ok == {"type"} and option["type"] in ("string", "integer") and catch_all is None:
                kinds.add(option["type"])
                catch_all = option
            else:
                return None
        if len(kinds) != 1 or not values or len(set(values)) != len(values):
            return None
        if catch_all is not None and combinator == "oneOf":
            return None
        low = high = None
        if catch_all is not None and catch_all["type"] == "integer":
            low, high = format_range(catch_all.get("format"))
        return Shape(
            "enum",
            node=node,
            values=tuple(values),
            open=catch_all is not None,
            value_kind="str" if kinds == {"string"} else "int",
            lenient_min=low,
            lenient_max=high,
        )

    def _union(self, name: str, node: JsonObject) -> Shape | None:
        k = keys(node)
        combinator = "anyOf" if "anyOf" in k else "oneOf" if "oneOf" in k else None
        if combinator is None or {"anyOf", "oneOf"} <= k:
            return None
        base_keys = k - {combinator}
        if base_keys and not (node.get("type") == "object" and base_keys <= {"type", "properties", "required"}):
            return None
        options = node[combinator]
        if not isinstance(options, list) or not options:
            return None
        tag = common_tag(options)
        if tag is None:
            return None if base_keys else self._keyed(name, node, options, combinator == "oneOf")
        base = self._fields(node, skip=(tag,)) if base_keys else []
        tag_schema = node.get("properties", {}).get(tag) if base_keys else None
        tag_lenient = isinstance(tag_schema, dict) and tag_schema.get("x-deserialize-default-on-error") is True
        variants, roles = [], set()
        for index, option in enumerate(options):
            variant = self._variant(option, index, tag, base, tag_lenient)
            if variant is None:
                return None
            if variant.role != "tagged":
                if variant.role in roles:
                    return None
                roles.add(variant.role)
            variants.append(variant)
        if {"untagged", "null_tag"} <= roles:
            return None
        tags = [v.tag for v in variants if v.role == "tagged"]
        if not tags or len(set(tags)) != len(tags):
            return None
        if combinator == "oneOf" and roles - {"catch_all"}:
            return None
        return Shape("tagged", node=node, tag=tag, tag_lenient=tag_lenient, variants=variants)

    def _variant(self, option: Any, index: int, tag: str, base: list[Field], tag_lenient: bool) -> Variant | None:
        if not isinstance(option, dict):
            return None
        title = option.get("title", "") if isinstance(option.get("title"), str) else ""
        ref = ref_name(option)
        if ref is not None:
            target = self.defs.get(ref)
            if not self._flat(target) or tag in target.get("properties", {}):
                return None
            return Variant("untagged", None, merge_fields(base, self._fields(target)), option, index, title or ref)
        properties = option.get("properties")
        if option.get("type") != "object" or not isinstance(properties, dict):
            return None
        ok = keys(option)
        if tag not in properties:
            if ok - {"type", "properties", "required"}:
                return None
            return Variant(
                "untagged", None, merge_fields(base, self._fields(option)), option, index, title or "untagged"
            )
        tag_schema = properties[tag]
        if is_null_schema(tag_schema):
            if ok - {"type", "properties", "required"} or tag in option.get("required", ()):
                return None
            null_field = Field(tag, tag_schema, Shape("null"), False, on_error=tag_lenient)
            own = self._fields(option, skip=(tag,))
            return Variant("null_tag", None, merge_fields(base, [null_field, *own]), option, index, title or "none")
        if tag not in option.get("required", ()):
            return None
        if isinstance(tag_schema, dict) and isinstance(tag_schema.get("const"), str):
            if ok - {"type", "properties", "required", "allOf"}:
                return None
            own = self._fields(option, skip=(tag,))
            if "allOf" in option:
                ref = ref_name({"allOf": option["allOf"]})
                if ref is None:
                    return None
                target = self.defs[ref]
                if not self._flat(target):
                    if own or base:
                        return None
                    return Variant("tagged", tag_schema["const"], [], option, index, title, wraps=ref)
                own = own + self._fields(target, skip=(tag,))
            return Variant("tagged", tag_schema["const"], merge_fields(base, own), option, index, title)
        if isinstance(tag_schema, dict) and keys(tag_schema) == {"type"} and tag_schema["type"] == "string":
            # ``not`` (the known tags) and ``unevaluatedProperties: true`` add
            # nothing to the dispatch on the tag; a scope union is flattened.
            other = ok - {"type", "properties", "required", "not", "unevaluatedProperties", "additionalProperties"}
            if other and not (len(other) == 1 and self._scope(option) is not None):
                return None
            own = self._fields(option, skip=(tag,))
            return Variant("catch_all", None, merge_fields(base, own), option, index, title or "other")
        return None

    def _keyed(self, name: str, node: JsonObject, options: JsonArray, exclusive: bool) -> Shape | None:
        """A union of plain objects told apart by their required keys: each
        member requires a key no other member requires. The first member
        whose required keys are all present and that decodes wins; from a
        ``oneOf``, exactly one member must decode (docs/codec.md)."""
        members: list[KeyedMember] = []
        for index, option in enumerate(options):
            ref = ref_name(option)
            if ref is not None:
                target = self.defs.get(ref)
                if not self._flat(target):
                    return None
                members.append((ref, tuple(target.get("required", ())), None))
            elif (
                isinstance(option, dict)
                and option.get("type") == "object"
                and isinstance(option.get("properties"), dict)
                and keys(option) <= {"type", "properties", "required"}
            ):
                # An inline object (MessageMcpResponse's and the JSON-RPC
                # responses' Result and Error).
                shape = Shape("object", node=option, fields=self._fields(option, envelope=name in self.envelopes))
                members.append((index, tuple(option.get("required", ())), shape))
            else:
                return None
        for member_id, required, _ in members:
            others = {key for r, req, _ in members if r != member_id for key in req}
            if len(members) > 1 and not set(required) - others:
                return None
        return Shape("keyed", node=node, members=members, exclusive=exclusive)

    @staticmethod
    def _plain(node: Any) -> TypeGuard[dict[str, Any]]:
        if not isinstance(node, dict) or node.get("type") != "object":
            return False
        return keys(node) <= {"type", "properties", "required", "additionalProperties"}

    def _flat(self, node: Any) -> TypeGuard[dict[str, Any]]:
        """A plain object, or one with a flattened scope union."""
        if self._plain(node):
            return True
        if not isinstance(node, dict):
            return False
        other = keys(node) - {"type", "properties", "required", "additionalProperties"}
        return len(other) == 1 and self._scope(node) is not None

    def type_of(self, node: Any) -> Shape:
        """The shape of a subschema used as a value (not a definition)."""
        if not isinstance(node, dict):
            return Shape("any") if node is True else Shape("raw", node=node)
        k = keys(node)
        if not k:
            return Shape("any")
        ref = ref_name(node)
        if ref is not None:
            return Shape("ref", name=ref)
        raw = Shape("raw", node=node)
        if "const" in k:
            if k <= {"const", "type"} and type_matches(node.get("type"), node["const"]):
                return Shape("const", value=node["const"])
            return raw
        if "enum" in k:
            values = node["enum"]
            if (
                k <= {"enum", "type"}
                and isinstance(values, list)
                and len(values) == 1
                and type_matches(node.get("type"), values[0])
            ):
                return Shape("const", value=values[0])
            return raw
        for combinator in ("anyOf", "oneOf"):
            if k == {combinator} and isinstance(node[combinator], list):
                return self._combination(node, node[combinator], combinator)
        if "type" in k:
            kind = node["type"]
            if isinstance(kind, list):
                if len(kind) == 2 and "null" in kind:
                    inner_kind = kind[0] if kind[1] == "null" else kind[1]
                    inner = self.type_of(dict(node, type=inner_kind))
                    if inner.kind == "raw":
                        return raw
                    return Shape("nullable", inner=inner)
                return raw
            return self._typed(kind, node, k)
        return raw

    def _combination(self, node: JsonObject, options: JsonArray, combinator: str) -> Shape:
        raw = Shape("raw", node=node)
        if len(options) == 2 and any(is_null_schema(o) for o in options):
            other = options[0] if is_null_schema(options[1]) else options[1]
            if is_null_schema(other):
                return raw
            inner = self.type_of(other)
            if inner.kind in ("raw", "nullable"):
                return raw
            return Shape("nullable", inner=inner)
        members = [self.type_of(o) for o in options]
        simple = JSON_TYPES
        if all(m.kind in simple for m in members):
            flat = [simple[m.kind] for m in members]
            overlap = len(flat) != len(set(flat))
            if combinator == "oneOf" and {"integer", "number"} <= set(flat):
                overlap = True
            if not overlap:
                return Shape("scalar_union", members=members)
        if len(members) > 1 and not any(m.kind == "raw" for m in members):
            return Shape("first_match", members=members)
        return raw

    def _typed(self, kind: Json, node: JsonObject, k: set[str]) -> Shape:
        raw = Shape("raw", node=node)
        if kind == "string":
            if not k <= {"type", "minLength", "pattern"}:
                return raw
            return Shape("str", min_length=node.get("minLength"), pattern=node.get("pattern"))
        if kind == "integer":
            if not k <= {"type", "minimum", "maximum"}:
                return raw
            low, high = node.get("minimum"), node.get("maximum")
            if not all(v is None or type(v) is int for v in (low, high)):
                return raw
            fmin, fmax = format_range(node.get("format"))
            return Shape(
                "int",
                minimum=low,
                maximum=high,
                lenient_min=tightest(low, fmin, max),
                lenient_max=tightest(high, fmax, min),
            )
        if kind == "number":
            if not k <= {"type", "minimum", "maximum"}:
                return raw
            return Shape("num", minimum=node.get("minimum"), maximum=node.get("maximum"))
        if kind == "boolean":
            return Shape("bool") if k == {"type"} else raw
        if kind == "null":
            return Shape("null") if k == {"type"} else raw
        if kind == "array":
            if not k <= {"type", "items", "minItems"}:
                return raw
            items = self.type_of(node["items"]) if "items" in node else Shape("any")
            return Shape(
                "list",
                inner=items,
                min_items=node.get("minItems"),
                skip_invalid=node.get("x-deserialize-skip-invalid-items") is True,
            )
        if kind == "object":
            if k <= {"type"}:
                return Shape("map")
            if k == {"type", "additionalProperties"}:
                values = node["additionalProperties"]
                if values is True:
                    return Shape("map")
                inner = self.type_of(values)
                if inner.kind == "raw":
                    return raw
                return Shape("map", inner=inner)
            return raw
        return raw
