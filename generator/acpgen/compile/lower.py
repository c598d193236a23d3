"""Stage 2, lower: turn a loaded schema into the IR of :mod:`acpgen.compile.ir`.

Every ``$defs`` entry becomes one definition. The shapes the typed codec
models are recognised here, and only here:

* an object with ``properties`` becomes an :class:`~acpgen.compile.ir.ObjectDef`;
* ``anyOf``/``oneOf`` of constants (plus, optionally, a catch-all of the same
  JSON type), or a string or integer ``enum``, becomes an
  :class:`~acpgen.compile.ir.EnumDef`, open when the catch-all is there;
* ``anyOf``/``oneOf`` of objects told apart by one constant property becomes
  a :class:`~acpgen.compile.ir.UnionDef`; the object's own properties, when the union
  sits inside an object, are shared by every variant;
* anything else is an :class:`~acpgen.compile.ir.AliasDef` of a type expression
  (:mod:`.lowertypes`).

Each recogniser answers None for a schema that is not of its kind, and
:class:`~.lowertypes.Declined` with a reason for one of its kind that it does
not model. A definition that falls back to an alias that way, and every
:class:`~acpgen.compile.ir.RawT` (kept as JSON), is listed with its pointer
and reason in :attr:`~acpgen.compile.ir.Package.fallbacks`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, TypeGuard

from . import ir
from ..errors import pointer
from ..jsontypes import Json, JsonArray, JsonObject, JsonPath, one_of
from .fallbacks import collect_fallbacks
from .load import Schema
from .lowertypes import (
    ANNOTATIONS,
    INTEGER_FORMATS,
    Declined,
    TypeLowering,
    format_range,
    is_null,
    keys_of,
    listed,
    ref_name,
    text,
)
from .validation import strip_annotations

__all__ = ["ANNOTATIONS", "INTEGER_FORMATS", "format_range", "lower", "strip_annotations"]

SIDES: tuple[ir.Side, ...] = ("agent", "client", "protocol", "proxy")
ENUM_TYPES: dict[Json, ir.ValueKind] = {"string": "str", "integer": "int"}


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
        fallbacks=collect_fallbacks(definitions),
    )


class _Lowerer(TypeLowering):
    # ------------------------------------------------------------ definitions

    def definition(self, name: str, node: Any) -> ir.Definition:
        parts = ("$defs", name)
        if not isinstance(node, dict):
            # ``true`` / ``false`` schemas.
            return ir.AliasDef(name=name, target=self.raw(parts, f"the schema {json.dumps(node)} as a definition"))
        description = text(node.get("description"))
        method = _method(node)
        keys = keys_of(node)
        declined: list[str] = []
        enum = self.enum(name, node, description, method)
        if isinstance(enum, ir.EnumDef):
            return enum
        if enum is not None:
            declined.append(f"not an enum: {enum.reason}")
        union = self.union(name, node, parts, description, method)
        if isinstance(union, ir.UnionDef):
            return union
        if union is not None:
            declined.append(f"not a union: {union.reason}")
        if node.get("type") == "object" and "properties" in keys:
            refused = self._object_definition(node)
            if refused is None:
                declared = set(node["properties"]) if isinstance(node["properties"], dict) else set()
                return ir.ObjectDef(
                    name=name,
                    fields=self.fields(node, parts),
                    description=description,
                    method=method,
                    closed=node.get("additionalProperties") is False,
                    undeclared_required=tuple(k for k in node.get("required", ()) if k not in declared),
                )
            declined.append(f"not a class: {refused.reason}")
        return ir.AliasDef(
            name=name,
            target=self.type_of(node, parts),
            description=description,
            method=method,
            declined=tuple(declined),
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
            ref = ref_name(option)
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
        prop = prop if isinstance(prop, dict) else {}
        field_type = self.type_of(prop, parts)
        on_null = prop.get("x-deserialize-default-on-null") is True
        return ir.Field(
            wire_name=wire,
            type=field_type,
            required=required,
            description=text(prop.get("description")),
            default=prop.get("default", ir.NO_DEFAULT),
            default_on_error=prop.get("x-deserialize-default-on-error") is True,
            default_on_null=on_null,
            on_null=self.empty_value(field_type, parts) if on_null else None,
        )

    def empty_value(self, t: ir.TypeExpr, parts: JsonPath) -> ir.Empty:
        """An empty list or map: what ``x-deserialize-default-on-null`` makes of null."""
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
        if t.kind == "list" or t.kind == "map":
            return t.kind
        raise self.error("x-deserialize-default-on-null needs an array or object type", parts)

    def enum(
        self, name: str, node: JsonObject, description: str, method: ir.Method | None
    ) -> ir.EnumDef | Declined | None:
        keys = keys_of(node)
        if "enum" in keys:
            return self.enum_keyword(name, node, keys, description, method)
        if len(keys) != 1 or not keys <= {"anyOf", "oneOf"}:
            return None
        combinator = keys.pop()
        options = node[combinator]
        if not isinstance(options, list) or not any(isinstance(o, dict) and "const" in o for o in options):
            return None
        members, catch_all, kinds = [], None, set()
        for index, option in enumerate(options):
            if not isinstance(option, dict):
                return Declined(f"member {index} is a boolean schema")
            option_keys = keys_of(option)
            if option_keys == {"type", "const"} and option["type"] in ("string", "integer"):
                value = option["const"]
                if option["type"] == "string" and not isinstance(value, str):
                    return Declined(f"member {index} is a string const that is not a string")
                if option["type"] == "integer" and (type(value) is not int):
                    return Declined(f"member {index} is an integer const that is not an integer")
                kinds.add(option["type"])
                members.append(
                    ir.EnumMember(
                        value=value,
                        description=text(option.get("description")),
                        title=text(option.get("title")),
                    )
                )
            elif option_keys == {"type"} and option["type"] in ("string", "integer") and catch_all is None:
                kinds.add(option["type"])
                catch_all = option
            else:
                return Declined(f"member {index} is not a string or integer const (nor the one catch-all type)")
        if len(kinds) != 1:
            return Declined("members of both string and integer type")
        if not members:
            return Declined("no const member")
        values = [member.value for member in members]
        if len(set(values)) != len(values):
            return Declined("a value listed twice")
        if catch_all is not None and "oneOf" in node:
            # oneOf with a catch-all rejects the known values: not an open enum.
            return Declined("a oneOf with a catch-all, which refuses the known values")
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
            open_description=text(catch_all.get("description")) if catch_all else "",
            method=method,
        )

    def enum_keyword(
        self, name: str, node: JsonObject, keys: set[str], description: str, method: ir.Method | None
    ) -> ir.EnumDef | Declined:
        """A closed enum from ``{"type": "string", "enum": [...]}`` (or
        ``integer``; ``type`` may be left out when the values say it)."""
        values = node["enum"]
        if keys - {"type", "enum"}:
            return Declined(f"enum beside {listed(keys - {'type', 'enum'})}")
        if not isinstance(values, list) or not values:
            return Declined("an empty enum")
        kinds = {ENUM_TYPES.get(_json_type(v)) for v in values}
        kind = kinds.pop() if len(kinds) == 1 else None
        if kind is None:
            return Declined("enum values that are not all strings or all integers")
        if "type" in node and ENUM_TYPES.get(node["type"]) != kind:
            return Declined(f"enum values that are not all of the type {node['type']!r}")
        if len(set(values)) != len(values):
            return Declined("a value listed twice")
        return ir.EnumDef(
            name=name,
            members=tuple(ir.EnumMember(value=v) for v in values),
            open=False,
            value_kind=kind,
            description=description,
            method=method,
        )

    def union(
        self, name: str, node: JsonObject, parts: JsonPath, description: str, method: ir.Method | None
    ) -> ir.UnionDef | Declined | None:
        keys = keys_of(node)
        combinator = "anyOf" if "anyOf" in keys else "oneOf" if "oneOf" in keys else None
        if combinator is None:
            return None
        if {"anyOf", "oneOf"} <= keys:
            return Declined("both anyOf and oneOf")
        base_keys = keys - {combinator}
        if base_keys and not (
            node.get("type") == "object" and base_keys <= {"type", "properties", "required"} and _required_declared(node)
        ):
            return Declined(f"{combinator} beside {listed(base_keys)} (shared members need an object whose required keys it declares)")
        options = node[combinator]
        if not isinstance(options, list) or not any(self._object_like(o) for o in options):
            return None
        tag = _common_tag(options)
        if tag is None:
            if base_keys:
                return Declined("no one constant property tells the members apart")
            return self.untagged_union(name, options, parts + (combinator,), description, method, combinator == "oneOf")
        base_fields = self.fields(node, parts, skip=(tag,)) if base_keys else ()
        tag_schema = node.get("properties", {}).get(tag) if base_keys else None
        tag_lenient = isinstance(tag_schema, dict) and tag_schema.get("x-deserialize-default-on-error") is True
        variants = []
        seen_roles = set()
        for index, option in enumerate(options):
            option_parts = parts + (combinator, index)
            variant = self.variant(option, tag, base_fields, option_parts, tag_lenient)
            if isinstance(variant, Declined):
                return Declined(f"member {index} by {tag!r}: {variant.reason}")
            if variant.role != ir.TAGGED:
                if variant.role in seen_roles:
                    return Declined(f"two {variant.role.replace('_', '-')} members")
                seen_roles.add(variant.role)
            variants.append(variant)
        if ir.UNTAGGED in seen_roles and ir.NULL_TAG in seen_roles:
            return Declined("both an untagged member and one whose tag is null")
        tags = [v.tag for v in variants if v.role == ir.TAGGED]
        if not tags:
            return Declined(f"no member with a constant {tag!r}")
        if len(set(tags)) != len(tags):
            return Declined(f"two members with one {tag!r}")
        for option in options:
            if isinstance(option, dict) and "not" in option and _negated_tags(option["not"], tag) != set(tags):
                # A catch-all must exclude exactly the known tags.
                return Declined("a catch-all whose not does not exclude exactly the known tags")
        if combinator == "oneOf" and seen_roles - {ir.CATCH_ALL}:
            # An untagged member of a oneOf could also match a tagged one.
            return Declined("a oneOf with an untagged member, which could also match a tagged one")
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
    ) -> ir.UnionDef | Declined:
        """A union of plain objects that differ in their required keys:
        ``$defs`` objects, or inline objects (the JSON-RPC responses' result
        and error)."""
        variants = []
        for index, option in enumerate(options):
            if (
                isinstance(option, dict)
                and ref_name(option) is None
                and self._plain_object(option)
                and isinstance(option.get("properties"), dict)
                and "additionalProperties" not in option
            ):
                title = text(option.get("title"))
                if not title:
                    return Declined(f"no constant tag, and inline member {index} has no title to name it")
                variants.append(
                    ir.Variant(
                        role=ir.UNTAGGED,
                        tag=None,
                        fields=self.fields(option, parts + (index,)),
                        title=title,
                        description=text(option.get("description")),
                        required_keys=tuple(option.get("required", ())),
                        pointer=pointer(parts + (index,)),
                    )
                )
                continue
            ref = ref_name(option)
            if not ref:
                return Declined(f"no constant tag, and member {index} is not a plain object")
            target = self.schema.defs.get(ref)
            if not self._flat_object(target):
                return Declined(f"no constant tag, and member {index} ({ref}) is not a plain object")
            required = tuple(target.get("required", ()))
            variants.append(
                ir.Variant(
                    role=ir.UNTAGGED,
                    tag=None,
                    fields=self.fields(target, ("$defs", ref)),
                    title=text(option.get("title")) or ref,
                    description=text(option.get("description")),
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
                return Declined(f"no constant tag, and no required key of {variant.title} tells it from the others")
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
    ) -> ir.Variant | Declined:
        if not isinstance(option, dict):
            return Declined("a boolean schema")
        title = text(option.get("title"))
        doc = text(option.get("description"))
        ref = ref_name(option)
        if ref is not None:
            # ``{"title": ..., "allOf": [{"$ref": ...}]}`` without the tag.
            target = self.schema.defs.get(ref)
            if not self._flat_object(target):
                return Declined(f"{ref} is not a plain object")
            if tag in target.get("properties", {}):
                return Declined(f"{ref} has the tag itself")
            fields = self._merge(base_fields, self.fields(target, ("$defs", ref)))
            return ir.Variant(
                role=ir.UNTAGGED,
                tag=None,
                fields=fields,
                title=title or ref,
                description=doc,
                ref=ref,
                reuses_ref=not base_fields,
                pointer=pointer(parts),
            )
        properties = option.get("properties")
        if option.get("type") != "object" or not isinstance(properties, dict):
            return Declined("not an object with properties")
        if not _required_declared(option):
            return Declined("required keys it does not declare")
        if tag not in properties:
            # An inline object without the tag: it takes what no tag selects.
            extra = keys_of(option) - {"type", "properties", "required"}
            if extra:
                return Declined(f"an untagged member with {listed(extra)}")
            return ir.Variant(
                role=ir.UNTAGGED,
                tag=None,
                fields=self._merge(base_fields, self.fields(option, parts)),
                title=title or "untagged",
                description=doc,
                pointer=pointer(parts),
            )
        tag_schema = properties[tag]
        option_keys = keys_of(option)
        if is_null(tag_schema):
            extra = option_keys - {"type", "properties", "required"}
            if extra:
                return Declined(f"a member whose tag is null with {listed(extra)}")
            if tag in option.get("required", ()):
                return Declined("a required tag that is null")
            null_field = self.field(tag, tag_schema, False, parts + ("properties", tag))
            null_field = replace(null_field, default_on_error=tag_lenient)
            own = self.fields(option, parts, skip=(tag,))
            return ir.Variant(
                role=ir.NULL_TAG,
                tag=None,
                fields=self._merge(base_fields, (null_field,) + own),
                title=title or "none",
                description=doc,
                pointer=pointer(parts),
            )
        if tag not in option.get("required", ()):
            return Declined("a tag that is not required")
        if isinstance(tag_schema, dict) and isinstance(tag_schema.get("const"), str):
            allowed = {"type", "properties", "required", "allOf"}
            if option_keys - allowed:
                return Declined(f"a tagged member with {listed(option_keys - allowed)}")
            own = self.fields(option, parts, skip=(tag,))
            ref = None
            if "allOf" in option:
                ref = ref_name({"allOf": option["allOf"]})
                if ref is None:
                    return Declined("an allOf that is not one $ref")
                target = self.schema.defs[ref]
                if not self._flat_object(target):
                    if own or base_fields:
                        return Declined(f"{ref} is not a plain object, and there are members beside it")
                    # A tagged payload that is itself a union: wrap it.
                    return ir.Variant(
                        role=ir.TAGGED,
                        tag=tag_schema["const"],
                        fields=(),
                        title=title,
                        description=doc,
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
                description=doc,
                ref=ref,
                pointer=pointer(parts),
            )
        if isinstance(tag_schema, dict) and keys_of(tag_schema) == {"type"} and tag_schema["type"] == "string":
            # The catch-all: any other tag; what it does not declare is kept
            # as it is. ``not`` (the known tags) and ``unevaluatedProperties:
            # true`` say nothing the dispatch on the tag does not.
            extra = option_keys - {"type", "properties", "required", "not", "unevaluatedProperties", "additionalProperties"}
            if option.get("unevaluatedProperties", True) is not True or option.get("additionalProperties", True) is not True:
                return Declined("a catch-all that refuses other members")
            if extra and not (len(extra) == 1 and extra <= {"oneOf", "anyOf"} and self.scope_field(option)):
                return Declined(f"a catch-all with {listed(extra)}")
            return ir.Variant(
                role=ir.CATCH_ALL,
                tag=None,
                fields=self._merge(base_fields, self.fields(option, parts, skip=(tag,))),
                title=title or "other",
                description=doc,
                pointer=pointer(parts),
            )
        return Declined("a tag that is neither a string const, a string nor null")

    def _object_like(self, option: Json) -> bool:
        """A union member that is an object, or refers to a definition that
        is one: what makes an ``anyOf``/``oneOf`` a candidate union."""
        target = self.schema.defs.get(ref_name(option) or "") if isinstance(option, dict) else None
        return any(isinstance(n, dict) and n.get("type") == "object" for n in (option, target))

    def _flat_object(self, node: Any) -> TypeGuard[dict[str, Any]]:
        """Whether a definition is an object whose fields can be carried by a
        union variant: plain, or with a flattened union of scopes."""
        if self._plain_object(node):
            return True
        if not isinstance(node, dict) or node.get("type") != "object":
            return False
        extra = keys_of(node) - {"type", "properties", "required", "additionalProperties"}
        return (
            len(extra) == 1
            and extra <= {"oneOf", "anyOf"}
            and node.get("additionalProperties", True) is True
            and _required_declared(node)
            and self.scope_field(node) is not None
        )

    def _object_definition(self, node: JsonObject) -> Declined | None:
        """None for a definition the typed decoder can check in full: a
        plain or flat object, or one that is closed (``additionalProperties:
        false``) or requires keys it does not declare, which the decoder
        checks too; else why not."""
        if self._flat_object(node):
            return None
        loose = dict(node)
        if loose.get("additionalProperties") is False:
            del loose["additionalProperties"]
        if isinstance(loose.get("required"), list) and isinstance(loose.get("properties"), dict):
            loose["required"] = [k for k in loose["required"] if k in loose["properties"]]
        if isinstance(loose.get("required", []), list) and self._flat_object(loose):
            return None
        extra = keys_of(node) - {"type", "properties", "required", "additionalProperties", "oneOf", "anyOf"}
        if extra:
            return Declined(f"{listed(extra)} beside properties")
        if node.get("additionalProperties", True) not in (True, False):
            return Declined("additionalProperties that is a schema, beside properties")
        if not isinstance(node.get("properties"), dict) or not isinstance(node.get("required", []), list):
            return Declined("properties or required that are not an object and an array")
        if {"oneOf", "anyOf"} <= set(node):
            return Declined("both oneOf and anyOf beside properties")
        return Declined("a oneOf/anyOf beside properties that is not a union of plain objects told apart by required keys")

    @staticmethod
    def _plain_object(node: Any) -> TypeGuard[dict[str, Any]]:
        """An object whose typed decoder checks all the schema says: its
        properties, which of them are required, unknown keys allowed."""
        if not isinstance(node, dict) or node.get("type") != "object":
            return False
        return (
            keys_of(node) <= {"type", "properties", "required", "additionalProperties"}
            and node.get("additionalProperties", True) is True
            and _required_declared(node)
        )

    @staticmethod
    def _merge(first: tuple[ir.Field, ...], second: tuple[ir.Field, ...]) -> tuple[ir.Field, ...]:
        names = {f.wire_name for f in first}
        return tuple(first) + tuple(f for f in second if f.wire_name not in names)


def member_keys_ordered(defs: Mapping[str, Any], names: list[str]) -> list[str]:
    return [key for name in names for key in defs[name].get("properties", {})]


def _negated_tags(node: Json, tag: str) -> set[str] | None:
    """The tags of ``{"anyOf": [{"properties": {tag: {"const": T}}}, ...]}``
    (a catch-all's ``not``), or None for any other ``not``."""
    if not isinstance(node, dict) or keys_of(node) != {"anyOf"} or not isinstance(node["anyOf"], list):
        return None
    out = set()
    for option in node["anyOf"]:
        if not isinstance(option, dict) or keys_of(option) - {"type", "properties", "required"}:
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


def _json_type(value: Json) -> str:
    """The JSON type name of a parsed value (``bool`` is not an integer)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    return "other"


def _method(node: JsonObject) -> ir.Method | None:
    name, side = node.get("x-method"), node.get("x-side")
    known_side = one_of(side, SIDES)
    if isinstance(name, str) and known_side is not None:
        return ir.Method(name=name, side=known_side)
    return None
