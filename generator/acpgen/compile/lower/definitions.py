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
  (:mod:`.types`).

Each recogniser answers None for a schema that is not of its kind, and
:class:`~.types.Declined` with a reason for one of its kind that it does
not model. A definition that falls back to an alias that way, and every
:class:`~acpgen.compile.ir.RawT` (kept as JSON), is listed with its pointer
and reason in :attr:`~acpgen.compile.ir.Package.fallbacks`.
"""

from __future__ import annotations

import json
from typing import Any

from ...jsontypes import Json, JsonObject, one_of
from ...vocabulary import format_range
from .. import ir
from ..load import Schema
from .facts import SIDES, schema_facts
from .fallbacks import collect_fallbacks
from .types import (
    Declined,
    keys_of,
    listed,
    text,
)
from .unions import UnionLowering
from .validation import strip_annotations

__all__ = ["lower"]

ENUM_TYPES: dict[Json, ir.ValueKind] = {"string": "str", "integer": "int"}


def lower(schema: Schema) -> ir.Package:
    """The IR of a whole schema, definitions in ``$defs`` order."""
    lowerer = _Lowerer(schema)
    definitions = tuple(lowerer.definition(name, node) for name, node in schema.defs.items())
    facts = schema_facts(schema)
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
        facts=facts,
        schema_version=facts.version,
    )


class _Lowerer(UnionLowering):
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
        target = self.type_of(node, parts)
        return ir.AliasDef(
            name=name,
            target=target,
            description=description,
            method=method,
            declined=tuple(declined),
            named_string=isinstance(target, ir.StrT) and not declined,
        )

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
