"""Schema JSON as typed IR values (:data:`~acpgen.compile.ir.Value`): a
field's ``default`` (:mod:`.defaults`) and a patch rule's reset value
(:mod:`.upserts`), each built as what the generated codec decodes it to. A
value that does not fit its type is an error naming where it stands.
"""

from __future__ import annotations

from dataclasses import replace

from ...errors import AcpgenError, pointer
from ...jsontypes import Json, JsonPath
from .. import ir

__all__ = ["ValueBuilder"]


class ValueBuilder:
    """Builds :data:`~acpgen.compile.ir.Value` trees from JSON and a type."""

    def __init__(self, package: ir.Package) -> None:
        self.package = package
        self.defs = {d.name: d for d in package.definitions}

    def fields(self, owner: str, fields: tuple[ir.Field, ...]) -> tuple[ir.Field, ...]:
        out = []
        for f in fields:
            if f.has_default:
                where = ("$defs", owner, "properties", f.wire_name, "default")
                f = replace(f, default_value=self.value(f.type, f.default, where))
            out.append(f)
        return tuple(out)

    def fail(self, what: str, value: Json, where: JsonPath) -> AcpgenError:
        return AcpgenError(
            f"the default {value!r} is not {what}",
            file=self.package.schema_path,
            pointer=pointer(where),
        )

    def value(self, t: ir.TypeExpr, value: Json, where: JsonPath) -> ir.Value:
        if t.kind in ("any", "raw"):
            return ir.JsonValue(value)
        if t.kind == "nullable":
            return ir.JsonValue(None) if value is None else self.value(t.inner, value, where)
        if t.kind == "str":
            if not isinstance(value, str):
                raise self.fail("a string", value, where)
            return ir.JsonValue(value)
        if t.kind == "int":
            if type(value) is not int:
                raise self.fail("an integer", value, where)
            return ir.JsonValue(value)
        if t.kind == "num":
            if type(value) not in (int, float):
                raise self.fail("a number", value, where)
            return ir.JsonValue(value)
        if t.kind == "bool":
            if type(value) is not bool:
                raise self.fail("a boolean", value, where)
            return ir.JsonValue(value)
        if t.kind == "null":
            if value is not None:
                raise self.fail("null", value, where)
            return ir.JsonValue(None)
        if t.kind == "const":
            if value != t.value:
                raise self.fail(repr(t.value), value, where)
            return ir.JsonValue(value)
        if t.kind == "list":
            if not isinstance(value, list):
                raise self.fail("an array", value, where)
            items = [self.value(t.items, item, (*where, i)) for i, item in enumerate(value)]
            if all(isinstance(i, ir.JsonValue) for i in items):
                return ir.JsonValue(value)
            return ir.ListValue(tuple(items))
        if t.kind == "map":
            if not isinstance(value, dict):
                raise self.fail("an object", value, where)
            for key, item in value.items():
                if not isinstance(self.value(t.values, item, (*where, key)), ir.JsonValue):
                    raise self.fail("a map of plain JSON values", value, where)
            return ir.JsonValue(value)
        if t.kind in ("scalar_union", "first_match"):
            for member in t.members:
                try:
                    return self.value(member, value, where)
                except AcpgenError:
                    continue
            raise self.fail("a value of any member of the union", value, where)
        if t.kind == "ref":
            return self.ref_value(self.defs[t.name], value, where)
        raise self.fail(f"supported for a {t.kind} field", value, where)

    def ref_value(self, definition: ir.Definition, value: Json, where: JsonPath) -> ir.Value:
        if isinstance(definition, ir.AliasDef):
            return self.value(definition.target, value, where)
        if isinstance(definition, ir.EnumDef):
            for member in definition.members:
                if member.value == value and type(member.value) is type(value):
                    return ir.EnumValue(definition.class_name, member.name)
            if definition.open and isinstance(value, str if definition.value_kind == "str" else int):
                return ir.JsonValue(value)
            raise self.fail(f"a value of {definition.name}", value, where)
        if isinstance(definition, ir.ObjectDef):
            return self.object_value(definition.class_name, definition.fields, value, where)
        if isinstance(definition, ir.UnionDef) and definition.tag and isinstance(value, dict):
            for variant in definition.tagged:
                if value.get(definition.tag) == variant.tag and not variant.wraps:
                    rest = {k: v for k, v in value.items() if k != definition.tag}
                    return self.object_value(variant.class_name, variant.fields, rest, where)
        raise self.fail(f"a value of {definition.name} that acpgen can construct", value, where)

    def object_value(
        self, class_name: str, fields: tuple[ir.Field, ...], value: Json, where: JsonPath
    ) -> ir.ObjectValue:
        if not isinstance(value, dict):
            raise self.fail("an object", value, where)
        members = []
        for f in fields:
            if f.wire_name in value:
                member = self.value(f.type, value[f.wire_name], (*where, f.wire_name))
                members.append((f.name, member))
            elif f.required:
                raise self.fail(f"complete: it lacks the required {f.wire_name!r}", value, where)
        return ir.ObjectValue(class_name, tuple(members))
