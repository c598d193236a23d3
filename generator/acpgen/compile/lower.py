"""Stage 2, lower: turn a loaded schema into the IR of :mod:`acpgen.compile.ir`.

Every ``$defs`` entry becomes one definition. The shapes the typed codec
models are recognised here, and only here:

* an object with ``properties`` becomes an :class:`~acpgen.compile.ir.ObjectDef`;
* ``anyOf``/``oneOf`` of constants (plus, optionally, a catch-all of the same
  JSON type) becomes an :class:`~acpgen.compile.ir.EnumDef`, open when the catch-all
  is there;
* ``anyOf``/``oneOf`` of objects told apart by one constant property becomes
  a :class:`~acpgen.compile.ir.UnionDef`; the object's own properties, when the union
  sits inside an object, are shared by every variant;
* anything else is an :class:`~acpgen.compile.ir.AliasDef` of a type expression.

A subschema whose keywords go beyond what a type expression states becomes
:class:`~acpgen.compile.ir.RawT`: the codec keeps it as JSON and validates it against
the schema itself, so nothing the schema says is lost.
"""

from __future__ import annotations

import re
from dataclasses import replace
from collections.abc import Mapping
from typing import Any, TypeGuard

from . import ir, patterns
from ..errors import AcpgenError, pointer
from ..jsontypes import Json, JsonArray, JsonObject, JsonPath
from .load import Schema, canonical_ref, ref_target

# Keywords that never change what a value may be.
ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "format",
        "contentEncoding",
        "contentMediaType",
        "examples",
        "$comment",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "discriminator",
        "x-docs-ignore",
        "x-side",
        "x-method",
        "x-deserialize-default-on-error",
        "x-deserialize-default-on-null",
        "x-deserialize-skip-invalid-items",
    }
)

# The value range of each integer ``format``: Rust integer types in the
# reference implementation.
INTEGER_FORMATS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
}


def format_range(format_name: Any) -> tuple[int | None, int | None]:
    """The range of an integer ``format``; (None, None) when it has none."""
    if isinstance(format_name, str) and format_name in INTEGER_FORMATS:
        return INTEGER_FORMATS[format_name]
    return None, None

SCALAR_KIND = {"string": "str", "integer": "int", "number": "num", "boolean": "bool"}


def lower(schema: Schema) -> ir.Package:
    """The IR of a whole schema, definitions in ``$defs`` order."""
    lowerer = _Lowerer(schema)
    definitions = tuple(lowerer.definition(name, node) for name, node in schema.defs.items())
    return ir.Package(
        name="",
        schema_path=schema.path,
        schema_sha256=schema.sha256,
        schema_title=schema.title,
        definitions=definitions,
        validation_defs={
            name: strip_annotations(node, ("$defs", name), schema.path) for name, node in schema.defs.items()
        },
    )


# What the strict-mode validator of the generated packages implements.
VALIDATION_KEYWORDS = frozenset(
    {
        "$ref", "$schema", "$id", "$defs", "$anchor",
        "type", "const", "enum",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "pattern",
        "items", "prefixItems", "minItems", "maxItems", "uniqueItems",
        "properties", "patternProperties", "additionalProperties", "required",
        "minProperties", "maxProperties", "propertyNames", "dependentRequired",
        "unevaluatedProperties",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    }
)  # fmt: skip


def strip_annotations(node: Any, parts: JsonPath = (), file: str = "") -> Any:
    """A schema without the keywords that do not affect validation.

    A keyword that affects validation but that the generated validator does
    not implement is an error: strict mode must accept exactly what the schema
    accepts.
    """
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ANNOTATIONS or key.startswith("x-"):
                continue
            if key not in VALIDATION_KEYWORDS:
                raise AcpgenError(
                    f"the keyword {key!r} is not supported by strict mode",
                    file=file,
                    pointer=pointer(parts + (key,)),
                )
            if key in ("properties", "$defs", "patternProperties"):
                if key == "patternProperties":
                    for pattern in value:
                        _check_pattern(pattern, parts + (key, pattern), file)
                out[key] = {k: strip_annotations(v, parts + (key, k), file) for k, v in value.items()}
            elif key == "$ref":
                # One spelling of every reference, the one the generated
                # validator resolves (no percent-encoding).
                target = ref_target(value)
                out[key] = canonical_ref(target) if target is not None else value
            elif key in ("const", "enum", "required", "dependentRequired", "type", "pattern"):
                if key == "pattern":
                    _check_pattern(value, parts + (key,), file)
                out[key] = value
            else:
                out[key] = strip_annotations(value, parts + (key,), file)
        return out
    if isinstance(node, list):
        return [strip_annotations(item, parts + (i,), file) for i, item in enumerate(node)]
    return node


def _check_pattern(pattern: Any, parts: JsonPath, file: str) -> None:
    try:
        re.compile(pattern)
    except (re.error, TypeError) as exc:
        raise AcpgenError(f"the pattern {pattern!r} is not a valid regular expression: {exc}", file=file, pointer=pointer(parts)) from None
    at = patterns.nested_repetition(pattern)
    if at is not None:
        raise AcpgenError(
            f"the pattern {pattern!r} repeats a group that holds a quantifier or an alternation (at index {at}),"
            " which can take exponential time to match: strict mode refuses it",
            file=file,
            pointer=pointer(parts),
        )


def _keys(node: JsonObject) -> set[str]:
    return {key for key in node if key not in ANNOTATIONS}


def _ref_name(node: Any) -> str | None:
    """The ``$defs`` name of ``{"$ref": ...}`` or ``{"allOf": [{"$ref": ...}]}``."""
    if not isinstance(node, dict):
        return None
    keys = _keys(node)
    if keys == {"$ref"}:
        return ref_target(node["$ref"])
    if keys == {"allOf"} and isinstance(node["allOf"], list) and len(node["allOf"]) == 1:
        return _ref_name(node["allOf"][0])
    return None


def _is_null(node: Any) -> bool:
    return isinstance(node, dict) and _keys(node) == {"type"} and node["type"] == "null"


class _Lowerer:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def error(self, message: str, parts: JsonPath) -> AcpgenError:
        return AcpgenError(message, file=self.schema.path, pointer=pointer(parts))

    # ------------------------------------------------------------ definitions

    def definition(self, name: str, node: Any) -> ir.Definition:
        parts = ("$defs", name)
        if not isinstance(node, dict):
            # ``true`` / ``false`` schemas.
            return ir.AliasDef(name=name, target=ir.RawT(pointer(parts)))
        description = _text(node.get("description"))
        method = _method(node)
        keys = _keys(node)
        enum = self.enum(name, node, description, method)
        if enum is not None:
            return enum
        union = self.union(name, node, parts, description, method)
        if union is not None:
            return union
        if node.get("type") == "object" and "properties" in keys and self._object_definition(node):
            declared = set(node["properties"]) if isinstance(node["properties"], dict) else set()
            return ir.ObjectDef(
                name=name,
                fields=self.fields(node, parts),
                description=description,
                method=method,
                closed=node.get("additionalProperties") is False,
                undeclared_required=tuple(k for k in node.get("required", ()) if k not in declared),
            )
        return ir.AliasDef(
            name=name, target=self.type_of(node, parts), description=description, method=method
        )

    def fields(self, node: JsonObject, parts: JsonPath, skip: tuple[str, ...] = ()) -> tuple[ir.Field, ...]:
        properties = node.get("properties", {})
        required = set(node.get("required", ()))
        out = []
        for wire, prop in properties.items():
            if wire in skip:
                continue
            out.append(self.field(wire, prop, wire in required, parts + ("properties", wire)))
        scope = self.scope_field(node)
        if scope is not None:
            out.append(scope)
        return tuple(out)

    def scope_field(self, node: JsonObject) -> ir.Field | None:
        """The flattened field of an object with properties of its own and a
        ``oneOf``/``anyOf`` of plain objects told apart by their required keys
        (the elicitation scopes), or None when ``node`` has no such thing."""
        combinators = [c for c in ("oneOf", "anyOf") if c in node]
        if len(combinators) != 1 or node.get("type") != "object":
            return None
        options = node[combinators[0]]
        if not isinstance(options, list) or len(options) < 2:
            return None
        members: list[str] = []
        keys: list[tuple[str, ...]] = []
        for option in options:
            ref = _ref_name(option)
            if not ref:
                return None
            target = self.schema.defs.get(ref)
            if target is None or not self._plain_object(target):
                return None
            members.append(ref)
            keys.append(tuple(target.get("required", ())))
        for index, own in enumerate(keys):
            others = {key for i, k in enumerate(keys) if i != index for key in k}
            if not set(own) - others:
                return None
        properties = node.get("properties", {})
        member_keys = {key for name in members for key in self.schema.defs[name].get("properties", {})}
        if member_keys & set(properties if isinstance(properties, dict) else ()):
            return None
        return ir.Field(
            wire_name="",
            type=ir.KeyedT(
                refs=tuple(members),
                keys=tuple(keys),
                exclusive=combinators[0] == "oneOf",
                wire_names=tuple(dict.fromkeys(member_keys_ordered(self.schema.defs, members))),
                label=_common_suffix(members),
            ),
            required=True,
            description="One of " + " or ".join(members) + ", whose members share the JSON object.",
            flatten=True,
        )

    def field(self, wire: str, prop: Any, required: bool, parts: JsonPath) -> ir.Field:
        # A boolean subschema is its own type: `true` takes any value, `false`
        # none (kept as JSON, and so checked against it).
        field_type = self.type_of(prop, parts)
        prop = prop if isinstance(prop, dict) else {}
        on_null = prop.get("x-deserialize-default-on-null") is True
        return ir.Field(
            wire_name=wire,
            type=field_type,
            required=required,
            description=_text(prop.get("description")),
            default=prop.get("default", ir.NO_DEFAULT),
            default_on_error=prop.get("x-deserialize-default-on-error") is True,
            default_on_null=on_null,
            on_null=self.empty_value(field_type, parts) if on_null else "",
        )

    def empty_value(self, t: ir.TypeExpr, parts: JsonPath) -> str:
        """``[]`` or ``{}``: what ``x-deserialize-default-on-null`` makes of null."""
        seen = set()
        while True:
            if t.kind == "nullable":
                t = t.inner
            elif t.kind == "ref" and t.name not in seen:
                seen.add(t.name)
                node = self.schema.defs[t.name]
                t = self.type_of(node, ("$defs", t.name)) if isinstance(node, dict) else ir.RawT()
            else:
                break
        if t.kind == "list":
            return "[]"
        if t.kind == "map":
            return "{}"
        raise self.error("x-deserialize-default-on-null needs an array or object type", parts)

    def enum(self, name: str, node: JsonObject, description: str, method: ir.Method | None) -> ir.EnumDef | None:
        keys = _keys(node)
        if len(keys) != 1 or not keys <= {"anyOf", "oneOf"}:
            return None
        options = node[keys.pop()]
        if not isinstance(options, list) or not options:
            return None
        members, catch_all, kinds = [], None, set()
        for option in options:
            if not isinstance(option, dict):
                return None
            option_keys = _keys(option)
            if option_keys == {"type", "const"} and option["type"] in ("string", "integer"):
                value = option["const"]
                if option["type"] == "string" and not isinstance(value, str):
                    return None
                if option["type"] == "integer" and (type(value) is not int):
                    return None
                kinds.add(option["type"])
                members.append(
                    ir.EnumMember(
                        value=value,
                        description=_text(option.get("description")),
                        title=_text(option.get("title")),
                    )
                )
            elif option_keys == {"type"} and option["type"] in ("string", "integer") and catch_all is None:
                kinds.add(option["type"])
                catch_all = option
            else:
                return None
        if len(kinds) != 1 or not members:
            return None
        values = [member.value for member in members]
        if len(set(values)) != len(values):
            return None
        if catch_all is not None and "oneOf" in node:
            # oneOf with a catch-all rejects the known values: not an open enum.
            return None
        open_min = open_max = None
        if catch_all is not None and catch_all["type"] == "integer":
            open_min, open_max = format_range(catch_all.get("format"))
        return ir.EnumDef(
            name=name,
            members=tuple(members),
            open=catch_all is not None,
            open_min=open_min,
            open_max=open_max,
            value_kind="str" if kinds == {"string"} else "int",
            description=description,
            open_description=_text(catch_all.get("description")) if catch_all else "",
            method=method,
        )

    def union(
        self, name: str, node: JsonObject, parts: JsonPath, description: str, method: ir.Method | None
    ) -> ir.UnionDef | None:
        keys = _keys(node)
        combinator = "anyOf" if "anyOf" in keys else "oneOf" if "oneOf" in keys else None
        if combinator is None or ({"anyOf", "oneOf"} <= keys):
            return None
        base_keys = keys - {combinator}
        if base_keys and not (
            node.get("type") == "object" and base_keys <= {"type", "properties", "required"} and _required_declared(node)
        ):
            return None
        if not base_keys and _keys(node) != {combinator}:
            return None
        options = node[combinator]
        if not isinstance(options, list) or not options:
            return None
        tag = _common_tag(options)
        if tag is None:
            if base_keys:
                return None
            return self.untagged_union(name, options, parts + (combinator,), description, method, combinator == "oneOf")
        base_fields = self.fields(node, parts, skip=(tag,)) if base_keys else ()
        tag_schema = node.get("properties", {}).get(tag) if base_keys else None
        tag_lenient = isinstance(tag_schema, dict) and tag_schema.get("x-deserialize-default-on-error") is True
        variants = []
        seen_roles = set()
        for index, option in enumerate(options):
            option_parts = parts + (combinator, index)
            variant = self.variant(option, tag, base_fields, option_parts, tag_lenient)
            if variant is None:
                return None
            if variant.role != ir.TAGGED:
                if variant.role in seen_roles:
                    return None
                seen_roles.add(variant.role)
            variants.append(variant)
        if ir.UNTAGGED in seen_roles and ir.NULL_TAG in seen_roles:
            return None
        tags = [v.tag for v in variants if v.role == ir.TAGGED]
        if len(set(tags)) != len(tags) or not tags:
            return None
        for option in options:
            if isinstance(option, dict) and "not" in option and _negated_tags(option["not"], tag) != set(tags):
                # A catch-all must exclude exactly the known tags.
                return None
        if combinator == "oneOf" and seen_roles - {ir.CATCH_ALL}:
            # An untagged member of a oneOf could also match a tagged one.
            return None
        return ir.UnionDef(
            name=name,
            tag=tag,
            variants=tuple(variants),
            description=description,
            method=method,
            tag_lenient=tag_lenient,
        )

    def untagged_union(
        self,
        name: str,
        options: JsonArray,
        parts: JsonPath,
        description: str,
        method: ir.Method | None,
        exclusive: bool,
    ) -> ir.UnionDef | None:
        """A union of plain objects that differ in their required keys:
        ``$defs`` objects, or inline objects (the JSON-RPC responses' result
        and error)."""
        variants = []
        for index, option in enumerate(options):
            if (
                isinstance(option, dict)
                and _ref_name(option) is None
                and self._plain_object(option)
                and isinstance(option.get("properties"), dict)
                and "additionalProperties" not in option
            ):
                title = _text(option.get("title"))
                if not title:
                    return None
                variants.append(
                    ir.Variant(
                        role=ir.UNTAGGED,
                        tag=None,
                        fields=self.fields(option, parts + (index,)),
                        title=title,
                        description=_text(option.get("description")),
                        required_keys=tuple(option.get("required", ())),
                        pointer=pointer(parts + (index,)),
                    )
                )
                continue
            ref = _ref_name(option)
            if not ref:
                return None
            target = self.schema.defs.get(ref)
            if not self._flat_object(target):
                return None
            required = tuple(target.get("required", ()))
            variants.append(
                ir.Variant(
                    role=ir.UNTAGGED,
                    tag=None,
                    fields=self.fields(target, ("$defs", ref)),
                    title=_text(option.get("title")) or ref,
                    description=_text(option.get("description")),
                    ref=ref,
                    required_keys=required,
                    reuses_ref=True,
                    pointer=pointer(("$defs", ref)),
                )
            )
        # Each variant must be selected by a key no other variant requires.
        for variant in variants:
            others = {key for v in variants if v is not variant for key in v.required_keys}
            if len(variants) > 1 and not set(variant.required_keys) - others:
                return None
        return ir.UnionDef(
            name=name,
            tag=None,
            variants=tuple(variants),
            description=description,
            method=method,
            exclusive=exclusive,
        )

    def variant(
        self, option: Json, tag: str, base_fields: tuple[ir.Field, ...], parts: JsonPath, tag_lenient: bool = False
    ) -> ir.Variant | None:
        if not isinstance(option, dict):
            return None
        title = _text(option.get("title"))
        text = _text(option.get("description"))
        ref = _ref_name(option)
        if ref is not None:
            # ``{"title": ..., "allOf": [{"$ref": ...}]}`` without the tag.
            target = self.schema.defs.get(ref)
            if not self._flat_object(target) or tag in target.get("properties", {}):
                return None
            fields = self._merge(base_fields, self.fields(target, ("$defs", ref)))
            return ir.Variant(
                role=ir.UNTAGGED,
                tag=None,
                fields=fields,
                title=title or ref,
                description=text,
                ref=ref,
                reuses_ref=not base_fields,
                pointer=pointer(parts),
            )
        properties = option.get("properties")
        if option.get("type") != "object" or not isinstance(properties, dict) or not _required_declared(option):
            return None
        if tag not in properties:
            # An inline object without the tag: it takes what no tag selects.
            if _keys(option) - {"type", "properties", "required"}:
                return None
            return ir.Variant(
                role=ir.UNTAGGED,
                tag=None,
                fields=self._merge(base_fields, self.fields(option, parts)),
                title=title or "untagged",
                description=text,
                pointer=pointer(parts),
            )
        tag_schema = properties[tag]
        option_keys = _keys(option)
        if _is_null(tag_schema):
            if option_keys - {"type", "properties", "required"} or tag in option.get("required", ()):
                return None
            null_field = self.field(tag, tag_schema, False, parts + ("properties", tag))
            null_field = replace(null_field, default_on_error=tag_lenient)
            own = self.fields(option, parts, skip=(tag,))
            return ir.Variant(
                role=ir.NULL_TAG,
                tag=None,
                fields=self._merge(base_fields, (null_field,) + own),
                title=title or "none",
                description=text,
                pointer=pointer(parts),
            )
        if tag not in option.get("required", ()):
            return None
        if isinstance(tag_schema, dict) and isinstance(tag_schema.get("const"), str):
            allowed = {"type", "properties", "required", "allOf"}
            if option_keys - allowed:
                return None
            own = self.fields(option, parts, skip=(tag,))
            ref = None
            if "allOf" in option:
                ref = _ref_name({"allOf": option["allOf"]})
                if ref is None:
                    return None
                target = self.schema.defs[ref]
                if not self._flat_object(target):
                    if own or base_fields:
                        return None
                    # A tagged payload that is itself a union: wrap it.
                    return ir.Variant(
                        role=ir.TAGGED,
                        tag=tag_schema["const"],
                        fields=(),
                        title=title,
                        description=text,
                        ref=ref,
                        wraps=ref,
                        pointer=pointer(parts),
                    )
                own = own + self.fields(target, ("$defs", ref), skip=(tag,))
            return ir.Variant(
                role=ir.TAGGED,
                tag=tag_schema["const"],
                fields=self._merge(base_fields, own),
                title=title,
                description=text,
                ref=ref,
                pointer=pointer(parts),
            )
        if isinstance(tag_schema, dict) and _keys(tag_schema) == {"type"} and tag_schema["type"] == "string":
            # The catch-all: any other tag; what it does not declare is kept
            # as it is. ``not`` (the known tags) and ``unevaluatedProperties:
            # true`` say nothing the dispatch on the tag does not.
            extra = option_keys - {"type", "properties", "required", "not", "unevaluatedProperties", "additionalProperties"}
            if option.get("unevaluatedProperties", True) is not True or option.get("additionalProperties", True) is not True:
                return None
            if extra and not (len(extra) == 1 and extra <= {"oneOf", "anyOf"} and self.scope_field(option)):
                return None
            return ir.Variant(
                role=ir.CATCH_ALL,
                tag=None,
                fields=self._merge(base_fields, self.fields(option, parts, skip=(tag,))),
                title=title or "other",
                description=text,
                pointer=pointer(parts),
            )
        return None

    def _flat_object(self, node: Any) -> TypeGuard[dict[str, Any]]:
        """Whether a definition is an object whose fields can be carried by a
        union variant: plain, or with a flattened union of scopes."""
        if self._plain_object(node):
            return True
        if not isinstance(node, dict) or node.get("type") != "object":
            return False
        extra = _keys(node) - {"type", "properties", "required", "additionalProperties"}
        return (
            len(extra) == 1
            and extra <= {"oneOf", "anyOf"}
            and node.get("additionalProperties", True) is True
            and _required_declared(node)
            and self.scope_field(node) is not None
        )

    def _object_definition(self, node: JsonObject) -> bool:
        """A definition the typed decoder can check in full: a plain or
        flat object, or one that is closed (``additionalProperties: false``)
        or requires keys it does not declare, which the decoder checks too."""
        if self._flat_object(node):
            return True
        loose = dict(node)
        if loose.get("additionalProperties") is False:
            del loose["additionalProperties"]
        if isinstance(loose.get("required"), list) and isinstance(loose.get("properties"), dict):
            loose["required"] = [k for k in loose["required"] if k in loose["properties"]]
        return isinstance(loose.get("required", []), list) and self._flat_object(loose)

    @staticmethod
    def _plain_object(node: Any) -> TypeGuard[dict[str, Any]]:
        """An object whose typed decoder checks all the schema says: its
        properties, which of them are required, unknown keys allowed."""
        if not isinstance(node, dict) or node.get("type") != "object":
            return False
        return (
            _keys(node) <= {"type", "properties", "required", "additionalProperties"}
            and node.get("additionalProperties", True) is True
            and _required_declared(node)
        )

    @staticmethod
    def _merge(first: tuple[ir.Field, ...], second: tuple[ir.Field, ...]) -> tuple[ir.Field, ...]:
        names = {f.wire_name for f in first}
        return tuple(first) + tuple(f for f in second if f.wire_name not in names)

    # ------------------------------------------------------------ type expressions

    def type_of(self, node: Any, parts: JsonPath) -> ir.TypeExpr:
        """The type expression of a subschema."""
        if not isinstance(node, dict):
            return ir.RawT(pointer(parts)) if node is not True else ir.AnyT()
        keys = _keys(node)
        if not keys:
            return ir.AnyT()
        ref = _ref_name(node)
        if ref is not None:
            return ir.RefT(ref)
        if "const" in keys:
            if keys <= {"const", "type"} and _json_type_matches(node.get("type"), node["const"]):
                return ir.ConstT(node["const"])
            return ir.RawT(pointer(parts))
        if "enum" in keys:
            values = node["enum"]
            if keys <= {"enum", "type"} and isinstance(values, list) and len(values) == 1 and (
                _json_type_matches(node.get("type"), values[0])
            ):
                return ir.ConstT(values[0])
            return ir.RawT(pointer(parts))
        for combinator in ("anyOf", "oneOf"):
            if keys == {combinator} and isinstance(node[combinator], list):
                return self._combination(node[combinator], combinator, parts + (combinator,), parts)
        if "type" in keys:
            kind = node["type"]
            if isinstance(kind, list):
                if len(kind) == 2 and "null" in kind:
                    inner_kind = kind[0] if kind[1] == "null" else kind[1]
                    inner = self.type_of(dict(node, type=inner_kind), parts)
                    if isinstance(inner, ir.RawT):
                        return inner
                    return ir.NullableT(inner)
                return ir.RawT(pointer(parts))
            return self._typed(kind, node, keys, parts)
        return ir.RawT(pointer(parts))

    def _combination(self, options: JsonArray, combinator: str, parts: JsonPath, node_parts: JsonPath) -> ir.TypeExpr:
        if len(options) == 2 and any(_is_null(o) for o in options):
            other_index = 0 if _is_null(options[1]) else 1
            other = options[other_index]
            if _is_null(other):
                return ir.RawT(pointer(node_parts))
            inner = self.type_of(other, parts + (other_index,))
            if isinstance(inner, (ir.RawT, ir.NullableT)):
                return ir.RawT(pointer(node_parts))
            return ir.NullableT(inner)
        members = [self.type_of(o, parts + (i,)) for i, o in enumerate(options)]
        if any(m.kind == "ref" and isinstance(self.schema.defs[m.name], dict) and "x-method" in self.schema.defs[m.name] for m in members):
            # JSON-RPC params or results: the method, not the shape, says which
            # type applies, and the schema cannot express that. Kept as JSON,
            # checked against the schema, for the caller to decode by method.
            return ir.RawT(pointer(node_parts))
        kinds = [_json_kinds(member, self.schema) for member in members]
        known_kinds = [k for k in kinds if k is not None]
        if len(known_kinds) == len(kinds):
            flat = [kind for k in known_kinds for kind in k]
            overlap = len(flat) != len(set(flat))
            if combinator == "oneOf" and {"integer", "number"} <= set(flat):
                overlap = True
            if not overlap and not any(isinstance(m, ir.NullableT) for m in members):
                return ir.ScalarUnionT(tuple(members))
        if len(members) > 1 and not any(isinstance(m, ir.RawT) for m in members):
            return ir.FirstMatchT(tuple(members), exclusive=combinator == "oneOf")
        return ir.RawT(pointer(node_parts))

    def _typed(self, kind: Json, node: JsonObject, keys: set[str], parts: JsonPath) -> ir.TypeExpr:
        raw = ir.RawT(pointer(parts))
        if kind == "string":
            if not keys <= {"type", "minLength"}:
                return raw
            return ir.StrT(min_length=node.get("minLength"), format=node.get("format"))
        if kind == "integer":
            if not keys <= {"type", "minimum", "maximum"}:
                return raw
            fmt = node.get("format")
            fmt_min, fmt_max = format_range(fmt)
            minimum, maximum = node.get("minimum"), node.get("maximum")
            if not all(v is None or type(v) is int for v in (minimum, maximum)):
                return raw
            return ir.IntT(
                minimum=minimum, maximum=maximum, format=fmt, format_min=fmt_min, format_max=fmt_max
            )
        if kind == "number":
            if not keys <= {"type", "minimum", "maximum"}:
                return raw
            return ir.NumT(minimum=node.get("minimum"), maximum=node.get("maximum"), format=node.get("format"))
        if kind == "boolean":
            return ir.BoolT() if keys == {"type"} else raw
        if kind == "null":
            return ir.NullT() if keys == {"type"} else raw
        if kind == "array":
            if not keys <= {"type", "items", "minItems"}:
                return raw
            items = self.type_of(node["items"], parts + ("items",)) if "items" in node else ir.AnyT()
            return ir.ListT(
                items=items,
                min_items=node.get("minItems"),
                skip_invalid=node.get("x-deserialize-skip-invalid-items") is True,
            )
        if kind == "object":
            if keys <= {"type"}:
                return ir.MapT(ir.AnyT())
            if keys == {"type", "additionalProperties"}:
                values = node["additionalProperties"]
                if values is True:
                    return ir.MapT(ir.AnyT())
                value_type = self.type_of(values, parts + ("additionalProperties",))
                if isinstance(value_type, ir.RawT):
                    return raw
                return ir.MapT(value_type)
            return raw
        return raw


def member_keys_ordered(defs: Mapping[str, Any], names: list[str]) -> list[str]:
    return [key for name in names for key in defs[name].get("properties", {})]


def _negated_tags(node: Json, tag: str) -> set[str] | None:
    """The tags of ``{"anyOf": [{"properties": {tag: {"const": T}}}, ...]}``
    (a catch-all's ``not``), or None for any other ``not``."""
    if not isinstance(node, dict) or _keys(node) != {"anyOf"} or not isinstance(node["anyOf"], list):
        return None
    out = set()
    for option in node["anyOf"]:
        if not isinstance(option, dict) or _keys(option) - {"type", "properties", "required"}:
            return None
        prop = option.get("properties", {}).get(tag) if isinstance(option.get("properties"), dict) else None
        if not isinstance(prop, dict) or not isinstance(prop.get("const"), str) or set(option["properties"]) != {tag}:
            return None
        if option.get("required") != [tag]:
            return None
        out.add(prop["const"])
    return out


def _required_declared(node: JsonObject) -> bool:
    """Every required key is a declared property (the typed decoder checks
    only those)."""
    required = node.get("required", [])
    properties = node.get("properties", {})
    return isinstance(required, list) and isinstance(properties, dict) and set(required) <= set(properties)


def _common_suffix(names: list[str]) -> str:
    """``scope`` for ``ElicitationSessionScope`` and ``ElicitationRequestScope``:
    the words the names end with in common, or ``variant``."""
    split = [re.findall(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+", name) for name in names]
    common: list[str] = []
    while all(len(words) > len(common) for words in split):
        word = split[0][-1 - len(common)]
        if any(words[-1 - len(common)] != word for words in split):
            break
        common.insert(0, word)
    return "_".join(w.lower() for w in common) or "variant"


def _common_tag(options: JsonArray) -> str | None:
    """The property every constant-tagged option is told apart by."""
    tags = set()
    for option in options:
        if not isinstance(option, dict):
            return None
        properties = option.get("properties")
        if not isinstance(properties, dict):
            continue
        for key, prop in properties.items():
            if isinstance(prop, dict) and isinstance(prop.get("const"), str) and key in option.get("required", ()):
                tags.add(key)
    return tags.pop() if len(tags) == 1 else None


def _json_kinds(member: ir.TypeExpr, schema: Schema) -> tuple[str, ...] | None:
    """The JSON types a scalar-union member accepts, or None when it is not a
    plain scalar, array or map."""
    simple = {
        "str": ("string",),
        "int": ("integer",),
        "num": ("number",),
        "bool": ("boolean",),
        "null": ("null",),
        "list": ("array",),
    }
    if member.kind in simple:
        return simple[member.kind]
    if member.kind == "any" or member.kind == "map":
        return ("object",) if member.kind == "map" else None
    return None


def _json_type_matches(kind: Any, value: Any) -> bool:
    if kind is None:
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return type(value) is int
    if kind == "number":
        return type(value) in (int, float)
    if kind == "boolean":
        return type(value) is bool
    if kind == "null":
        return value is None
    return False


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _method(node: JsonObject) -> ir.Method | None:
    name, side = node.get("x-method"), node.get("x-side")
    if isinstance(name, str) and isinstance(side, str):
        return ir.Method(name=name, side=side)
    return None
