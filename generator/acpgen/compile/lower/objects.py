"""Lowering of objects: the fields of a class (or of a union variant), the
flattened union of scopes some objects hold, and whether the typed decoder
can check an object in full (:class:`ObjectLowering`, a stage of
:mod:`.definitions`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from ...jsontypes import JsonObject, JsonPath
from .. import ir
from .types import Declined, TypeLowering, keys_of, listed, ref_name, text


class ObjectLowering(TypeLowering):
    """Fields and objects."""

    def fields(self, node: JsonObject, parts: JsonPath, skip: tuple[str, ...] = ()) -> tuple[ir.Field, ...]:
        properties = node.get("properties", {})
        required = set(node.get("required", ()))
        out = []
        for wire, prop in properties.items():
            if wire in skip:
                continue
            out.append(self.field(wire, prop, wire in required, (*parts, "properties", wire)))
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
            and required_declared(node)
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
        return Declined(
            "a oneOf/anyOf beside properties that is not a union of plain objects told apart by required keys"
        )

    @staticmethod
    def _plain_object(node: Any) -> TypeGuard[dict[str, Any]]:
        """An object whose typed decoder checks all the schema says: its
        properties, which of them are required, unknown keys allowed."""
        if not isinstance(node, dict) or node.get("type") != "object":
            return False
        return (
            keys_of(node) <= {"type", "properties", "required", "additionalProperties"}
            and node.get("additionalProperties", True) is True
            and required_declared(node)
        )

    @staticmethod
    def _merge(first: tuple[ir.Field, ...], second: tuple[ir.Field, ...]) -> tuple[ir.Field, ...]:
        names = {f.wire_name for f in first}
        return tuple(first) + tuple(f for f in second if f.wire_name not in names)


def member_keys_ordered(defs: Mapping[str, Any], names: list[str]) -> list[str]:
    return [key for name in names for key in defs[name].get("properties", {})]


def required_declared(node: JsonObject) -> bool:
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
