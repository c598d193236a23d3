"""Lowering of subschemas to type expressions (:data:`~acpgen.compile.ir.TypeExpr`),
and the reading helpers the definition lowering (:mod:`.definitions`) shares.

A subschema whose keywords go beyond what a type expression states becomes
:class:`~acpgen.compile.ir.RawT`: the codec keeps it as JSON and validates it
against the schema itself, so nothing the schema says is lost. Every
``RawT`` says why it is one (its ``reason``): lowering never falls back
silently, and ``acpgen generate --explain`` lists each such place.
"""

from __future__ import annotations

from typing import Any

from ...errors import AcpgenError, pointer
from ...jsontypes import Json, JsonArray, JsonObject, JsonPath
from ...records import dataclass
from ...vocabulary import ANNOTATIONS, format_range
from .. import ir
from ..load import Schema, ref_target

# The keywords each scalar type expression states (``type`` included).
STRING_KEYWORDS = frozenset({"type", "minLength", "pattern"})
NUMBER_KEYWORDS = frozenset({"type", "minimum", "maximum"})
ARRAY_KEYWORDS = frozenset({"type", "items", "minItems"})


@dataclass(frozen=True)
class Declined:
    """A recogniser's answer for a schema of its kind that it does not
    model: why, in a few words (an error as a value)."""

    reason: str


def keys_of(node: JsonObject) -> set[str]:
    """The keywords of a subschema that constrain its value."""
    return {key for key in node if key not in ANNOTATIONS}


def ref_name(node: Any) -> str | None:
    """The ``$defs`` name of ``{"$ref": ...}`` or ``{"allOf": [{"$ref": ...}]}``."""
    if not isinstance(node, dict):
        return None
    keys = keys_of(node)
    if keys == {"$ref"}:
        return ref_target(node["$ref"])
    if keys == {"allOf"} and isinstance(node["allOf"], list) and len(node["allOf"]) == 1:
        return ref_name(node["allOf"][0])
    return None


def is_null(node: Any) -> bool:
    return isinstance(node, dict) and keys_of(node) == {"type"} and node["type"] == "null"


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def listed(words: set[str] | frozenset[str]) -> str:
    """``a, b and c`` for a set of keywords, sorted."""
    ordered = sorted(words)
    return ordered[0] if len(ordered) == 1 else ", ".join(ordered[:-1]) + " and " + ordered[-1]


class TypeLowering:
    """``type_of``: the type expression of a subschema of ``schema``."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def error(self, message: str, parts: JsonPath) -> AcpgenError:
        return AcpgenError(message, file=self.schema.path, pointer=pointer(parts))

    def type_of(self, node: Any, parts: JsonPath) -> ir.TypeExpr:
        """The type expression of a subschema."""
        if not isinstance(node, dict):
            if node is True:
                return ir.AnyT()
            return ir.RawT(pointer(parts), "the schema false (no value is valid)")
        keys = keys_of(node)
        if not keys:
            return ir.AnyT()
        ref = ref_name(node)
        if ref is not None:
            return ir.RefT(ref)
        if "const" in keys:
            if not keys <= {"const", "type"}:
                return self.raw(parts, f"const beside {listed(keys - {'const', 'type'})}")
            if not _json_type_matches(node.get("type"), node["const"]):
                return self.raw(parts, "a const that is not of its type")
            return ir.ConstT(node["const"])
        if "enum" in keys:
            values = node["enum"]
            if not keys <= {"enum", "type"}:
                return self.raw(parts, f"enum beside {listed(keys - {'enum', 'type'})}")
            if not isinstance(values, list) or len(values) != 1:
                return self.raw(
                    parts, "an enum of several values inside another schema (only a $defs entry becomes an Enum)"
                )
            if not _json_type_matches(node.get("type"), values[0]):
                return self.raw(parts, "an enum value that is not of its type")
            return ir.ConstT(values[0])
        for combinator in ("anyOf", "oneOf"):
            if keys == {combinator} and isinstance(node[combinator], list):
                return self._combination(node[combinator], combinator, (*parts, combinator), parts)
        if "type" in keys:
            kind = node["type"]
            if isinstance(kind, list):
                if len(kind) == 2 and "null" in kind:
                    inner_kind = kind[0] if kind[1] == "null" else kind[1]
                    inner = self.type_of(dict(node, type=inner_kind), parts)
                    if isinstance(inner, ir.RawT):
                        return inner
                    return ir.NullableT(inner)
                return self.raw(parts, "a list of types that is not one type and null")
            return self._typed(kind, node, keys, parts)
        return self.raw(parts, f"no type, and {listed(keys)} that no type expression states")

    @staticmethod
    def raw(parts: JsonPath, reason: str) -> ir.RawT:
        return ir.RawT(pointer(parts), reason)

    def _combination(self, options: JsonArray, combinator: str, parts: JsonPath, node_parts: JsonPath) -> ir.TypeExpr:
        if len(options) == 2 and any(is_null(o) for o in options):
            other_index = 0 if is_null(options[1]) else 1
            other = options[other_index]
            if is_null(other):
                return self.raw(node_parts, f"an {combinator} of null and null")
            inner = self.type_of(other, (*parts, other_index))
            if isinstance(inner, ir.RawT):
                return self.raw(node_parts, f"null or a member that is not modelled ({inner.reason})")
            if isinstance(inner, ir.NullableT):
                return self.raw(node_parts, "null or a member that is itself nullable")
            return ir.NullableT(inner)
        members = [self.type_of(o, (*parts, i)) for i, o in enumerate(options)]
        if any(
            m.kind == "ref" and isinstance(self.schema.defs[m.name], dict) and "x-method" in self.schema.defs[m.name]
            for m in members
        ):
            # JSON-RPC params or results: the method, not the shape, says which
            # type applies, and the schema cannot express that. Kept as JSON,
            # checked against the schema, for the caller to decode by method.
            return self.raw(
                node_parts, "JSON-RPC params or results: the method, not the shape, says which type applies"
            )
        kinds = [_json_kinds(member) for member in members]
        known_kinds = [k for k in kinds if k is not None]
        if len(known_kinds) == len(kinds):
            flat = [kind for k in known_kinds for kind in k]
            overlap = len(flat) != len(set(flat))
            if combinator == "oneOf" and {"integer", "number"} <= set(flat):
                overlap = True
            if not overlap and not any(isinstance(m, ir.NullableT) for m in members):
                return ir.ScalarUnionT(tuple(members))
        unmodelled = next((m for m in members if isinstance(m, ir.RawT)), None)
        if unmodelled is not None:
            return self.raw(node_parts, f"a member is not modelled ({unmodelled.reason})")
        if len(members) > 1:
            return ir.FirstMatchT(tuple(members), exclusive=combinator == "oneOf")
        return self.raw(node_parts, f"an {combinator} of one member that is not a plain scalar")

    def _typed(self, kind: Json, node: JsonObject, keys: set[str], parts: JsonPath) -> ir.TypeExpr:
        def beyond(allowed: set[str] | frozenset[str]) -> ir.RawT | None:
            extra = keys - allowed
            return self.raw(parts, f"{listed(extra)} on {_a(kind)}") if extra else None

        if kind == "string":
            refused = beyond(STRING_KEYWORDS)
            if refused is not None:
                return refused
            pattern = node.get("pattern")
            return ir.StrT(
                min_length=node.get("minLength"),
                format=node.get("format"),
                pattern=pattern if isinstance(pattern, str) else None,
            )
        if kind == "integer":
            refused = beyond(NUMBER_KEYWORDS)
            if refused is not None:
                return refused
            fmt = node.get("format")
            fmt_min, fmt_max = format_range(fmt)
            minimum, maximum = node.get("minimum"), node.get("maximum")
            if not all(v is None or type(v) is int for v in (minimum, maximum)):
                return self.raw(parts, "integer bounds that are not integers")
            return ir.IntT(minimum=minimum, maximum=maximum, format=fmt, format_min=fmt_min, format_max=fmt_max)
        if kind == "number":
            refused = beyond(NUMBER_KEYWORDS)
            if refused is not None:
                return refused
            return ir.NumT(minimum=node.get("minimum"), maximum=node.get("maximum"), format=node.get("format"))
        if kind == "boolean":
            return beyond({"type"}) or ir.BoolT()
        if kind == "null":
            return beyond({"type"}) or ir.NullT()
        if kind == "array":
            refused = beyond(ARRAY_KEYWORDS)
            if refused is not None:
                return refused
            items = self.type_of(node["items"], (*parts, "items")) if "items" in node else ir.AnyT()
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
                value_type = self.type_of(values, (*parts, "additionalProperties"))
                if isinstance(value_type, ir.RawT):
                    return self.raw(parts, f"a map whose values are not modelled ({value_type.reason})")
                return ir.MapT(value_type)
            if "properties" in keys:
                return self.raw(
                    parts, "an object with properties inside another schema (only a $defs object becomes a class)"
                )
            return self.raw(parts, f"{listed(keys - {'type', 'additionalProperties'})} on an object")
        return self.raw(parts, f"the type {kind!r}")


def _a(kind: Json) -> str:
    return f"an {kind}" if isinstance(kind, str) and kind[:1] in "aeiou" else f"a {kind}"


def _json_kinds(member: ir.TypeExpr) -> tuple[str, ...] | None:
    """The JSON types a scalar-union member accepts, or None when it is not a
    plain scalar, array or map."""
    simple = {
        "str": ("string",),
        "int": ("integer",),
        "num": ("number",),
        "bool": ("boolean",),
        "null": ("null",),
        "list": ("array",),
        "map": ("object",),
    }
    return simple.get(member.kind)


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
