"""Lowering of unions of objects: told apart by a constant tag property
(with a catch-all, an untagged member or one whose tag is null), or, with no
tag, by their required keys (:class:`UnionLowering`, a stage of
:mod:`.definitions`). Each recogniser declines with a reason
(:class:`~.types.Declined`)."""

from __future__ import annotations

from dataclasses import replace

from ...errors import pointer
from ...jsontypes import Json, JsonArray, JsonObject, JsonPath
from ...vocabulary import common_tag
from .. import ir
from .objects import ObjectLowering, required_declared
from .types import Declined, is_null, keys_of, listed, ref_name, text


class UnionLowering(ObjectLowering):
    """Tagged and untagged unions of objects."""

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
            node.get("type") == "object" and base_keys <= {"type", "properties", "required"} and required_declared(node)
        ):
            return Declined(
                f"{combinator} beside {listed(base_keys)} (shared members need an object whose required keys it declares)"
            )
        options = node[combinator]
        if not isinstance(options, list) or not any(self._object_like(o) for o in options):
            return None
        tag = common_tag(options)
        if tag is None:
            if base_keys:
                return Declined("no one constant property tells the members apart")
            return self.untagged_union(name, options, (*parts, combinator), description, method, combinator == "oneOf")
        base_fields = self.fields(node, parts, skip=(tag,)) if base_keys else ()
        tag_schema = node.get("properties", {}).get(tag) if base_keys else None
        tag_lenient = isinstance(tag_schema, dict) and tag_schema.get("x-deserialize-default-on-error") is True
        variants = []
        seen_roles = set()
        for index, option in enumerate(options):
            option_parts = (*parts, combinator, index)
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
                        fields=self.fields(option, (*parts, index)),
                        title=title,
                        description=text(option.get("description")),
                        required_keys=tuple(option.get("required", ())),
                        pointer=pointer((*parts, index)),
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
        if not required_declared(option):
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
            null_field = self.field(tag, tag_schema, False, (*parts, "properties", tag))
            null_field = replace(null_field, default_on_error=tag_lenient)
            own = self.fields(option, parts, skip=(tag,))
            return ir.Variant(
                role=ir.NULL_TAG,
                tag=None,
                fields=self._merge(base_fields, (null_field, *own)),
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
            extra = option_keys - {
                "type",
                "properties",
                "required",
                "not",
                "unevaluatedProperties",
                "additionalProperties",
            }
            if (
                option.get("unevaluatedProperties", True) is not True
                or option.get("additionalProperties", True) is not True
            ):
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
