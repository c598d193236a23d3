"""The semantic model: what decoding a value must give, worked out from the
raw schema and the rules of the README, independently of the generator.

:class:`Model` reads a schema document (plain JSON, nothing from the
generator's stages) and answers, for any ``$defs`` name and JSON value, what
``encode(decode(name, value))`` must be in lenient and in strict mode, or where
decoding must fail. The fixture generator uses it to write the expected
outputs into the committed fixtures; the runner never uses it (it compares
packages with the fixtures), so the model is a second, independent
implementation of the decoding rules, checked against the recordings of the
TypeScript SDK by ``tests/unit/test_fixturegen.py``.

The shapes it understands are the ones the README describes: objects with
properties (``x-deserialize-*`` keywords, defaults, required keys, unknown keys
ignored), maps, arrays, scalars with ``minimum``/``maximum`` and integer
``format`` ranges (``minLength`` and ``minItems`` checked in strict mode only), constants, closed and open enums, unions tagged by a
constant property (catch-all, untagged and null-tag variants), unions told
apart by required keys, unions of distinct JSON types, first-match unions, and
the JSON-RPC envelopes, whose ``params``/``result`` are kept as JSON. Anything
else is kept as JSON and checked against its subschema, as the README says.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeGuard

from jsonschema import Draft202012Validator

if TYPE_CHECKING:
    from ..jsontypes import Json, JsonArray, JsonObject, JsonPath


DEFS = "#/$defs/"

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

LENIENT_KEYWORDS = (
    "x-deserialize-default-on-error",
    "x-deserialize-default-on-null",
    "x-deserialize-skip-invalid-items",
)

# Rust integer types: the range lenient decoding enforces for a ``format``.
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

MISSING: Any = object()

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def format_path(segments: Iterable[str | int]) -> str:
    """``("update", "content", 2, "type")`` -> ``$.update.content[2].type``,
    as the generated ``ValidationError.path`` writes it."""
    out = ["$"]
    for segment in segments:
        if isinstance(segment, int):
            out.append(f"[{segment}]")
        elif _PLAIN_KEY.fullmatch(segment):
            out.append("." + segment)
        else:
            out.append("[" + json.dumps(segment) + "]")
    return "".join(out)


class Reject(Exception):
    """Decoding fails at ``path`` (a tuple of segments). ``exact`` is False
    when the model cannot say more than "at or below ``path``" (a value kept
    as JSON and checked against its subschema)."""

    def __init__(self, path: JsonPath, message: str, exact: bool = True) -> None:
        super().__init__(message)
        self.path = path
        self.message = message
        self.exact = exact


def keys(node: JsonObject) -> set[str]:
    return {k for k in node if k not in ANNOTATIONS}


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    t = type(value)
    if t is bool:
        return "boolean"
    if t is int:
        return "integer"
    if t is float:
        return "number"
    if t is str:
        return "string"
    if t is list:
        return "array"
    if t is dict:
        return "object"
    return t.__name__


def json_equal(a: object, b: object) -> bool:
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if type(a) in (int, float) and type(b) in (int, float):
        return a == b
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def ref_name(node: Any) -> str | None:
    """The ``$defs`` name of ``{"$ref"}`` or ``{"allOf": [{"$ref"}]}``."""
    if not isinstance(node, dict):
        return None
    k = keys(node)
    if k == {"$ref"} and isinstance(node["$ref"], str) and node["$ref"].startswith(DEFS):
        return node["$ref"][len(DEFS) :]
    if k == {"allOf"} and isinstance(node["allOf"], list) and len(node["allOf"]) == 1:
        return ref_name(node["allOf"][0])
    return None


def _is_null_schema(node: Any) -> bool:
    return isinstance(node, dict) and keys(node) == {"type"} and node["type"] == "null"


def _type_matches(kind: Any, value: Any) -> bool:
    if kind is None:
        return True
    return {
        "string": lambda: isinstance(value, str),
        "integer": lambda: type(value) is int,
        "number": lambda: type(value) in (int, float),
        "boolean": lambda: type(value) is bool,
        "null": lambda: value is None,
    }.get(kind, lambda: False)()


# ------------------------------------------------------------------ shapes


@dataclass
class Field:
    wire: str
    node: Any
    """The property's subschema."""
    shape: Any
    required: bool
    default: Any = MISSING
    on_error: bool = False
    on_null: bool = False
    flatten: bool = False
    """A union of scopes whose members share the object (``wire`` is empty)."""

    @property
    def keywords(self) -> tuple[str, ...]:
        node = self.node if isinstance(self.node, dict) else {}
        return tuple(k for k in LENIENT_KEYWORDS if node.get(k) is True)


@dataclass
class Shape:
    kind: str
    """any, raw, ref, nullable, str, int, num, bool, null, const, enum, list,
    map, object, tagged, keyed, scalar_union, first_match."""
    node: Any = None
    name: str = ""
    inner: Any = None
    members: list[Any] = field(default_factory=list)
    """scalar_union and first_match: the member shapes; keyed: a
    :data:`KeyedMember` per member (like ``node``, ``inner`` and the bounds,
    what it holds depends on ``kind``)."""
    fields: list[Field] = field(default_factory=list)
    minimum: Any = None
    maximum: Any = None
    lenient_min: Any = None
    lenient_max: Any = None
    min_length: Any = None
    min_items: Any = None
    skip_invalid: bool = False
    value: Any = None
    values: tuple[Json, ...] = ()
    open: bool = False
    value_kind: str = ""
    tag: str = ""
    tag_lenient: bool = False
    variants: list[Variant] = field(default_factory=list)
    exclusive: bool = False
    """keyed, from ``oneOf``: the keys of two members may not both be there."""


KeyedMember = tuple[str | int, tuple[str, ...], Shape | None]
"""A member of a keyed union: its ``$defs`` name (or, for an inline object,
its index among the options), the keys it requires, and its inline shape."""


@dataclass
class Variant:
    role: str
    """tagged, catch_all, untagged or null_tag."""
    tag: Any
    fields: list[Field]
    node: Any
    index: int
    title: str = ""
    wraps: str | None = None
    """A tagged variant whose payload is itself a union definition."""


def _tightest(a: int | None, b: int | None, pick: Callable[[int, int], int]) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return pick(a, b)


class Model:
    """The decoding rules of the README over one schema document."""

    def __init__(self, document: JsonObject) -> None:
        self.document = document
        self.defs: JsonObject = document["$defs"]
        self._shapes: dict[str, Shape] = {}
        self._validators: dict[int, tuple[Json, Draft202012Validator]] = {}
        self._named: dict[str, JsonObject] = {}
        self._rejected: dict[tuple[int, str], JsonArray] = {}
        self.envelopes = envelope_defs(document)

    # ------------------------------------------------------------ public API

    def decode(self, name: str, value: Any, strict: bool = False) -> Any:
        """The wire form ``encode(decode(name, value))`` must give; raises
        :class:`Reject`. In strict mode the value must first be valid."""
        if strict:
            errors = self.schema_errors(name, value)
            if errors:
                raise Reject((), "invalid: " + errors[0], exact=False)
        return self._decode(self.shape(name), value, (), strict)

    def is_valid(self, name: str, value: Any) -> bool:
        return self.named_validator(name).is_valid(value)

    def schema_errors(self, name: str, value: Any) -> list[str]:
        """The first of jsonschema's errors (finding them all costs much
        more), or none."""
        error = next(self.named_validator(name).iter_errors(value), None)
        return [] if error is None else [error.message]

    def rejected(self, node: Json, candidates: JsonArray) -> JsonArray:
        """The candidates ``node`` does not accept, in order; remembered,
        since the fixture generator asks about the same nodes again and
        again."""
        key = (id(node), repr(candidates))
        entry = self._rejected.get(key)
        if entry is None:
            validator = self.validator(node)  # keeps ``node``, so its id stays its own
            entry = self._rejected[key] = [c for c in candidates if not validator.is_valid(c)]
        return entry

    def named_validator(self, name: str) -> Draft202012Validator:
        """The validator of ``$defs/<name>``, made once."""
        node = self._named.get(name)
        if node is None:
            node = self._named[name] = {"$ref": DEFS + name}
        return self.validator(node)

    def validator(self, node: Any) -> Draft202012Validator:
        entry = self._validators.get(id(node))
        if entry is None:
            root = {"$defs": self.defs, "allOf": [node]} if isinstance(node, dict) else node
            # ``node`` is kept with its validator so that its id stays its own.
            entry = self._validators[id(node)] = (node, Draft202012Validator(root))
        return entry[1]

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
            if envelope and wire in ("params", "result"):
                shape = Shape("raw", node=prop)  # README: kept as JSON
            else:
                shape = self.type_of(prop)
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
        if base_keys and not (
            node.get("type") == "object" and base_keys <= {"type", "properties", "required"}
        ):
            return None
        options = node[combinator]
        if not isinstance(options, list) or not options:
            return None
        tag = common_tag(options)
        if tag is None:
            return None if base_keys else self._keyed(name, node, options, combinator == "oneOf")
        base = self._fields(node, skip=(tag,)) if base_keys else []
        tag_schema = node.get("properties", {}).get(tag) if base_keys else None
        tag_lenient = (
            isinstance(tag_schema, dict) and tag_schema.get("x-deserialize-default-on-error") is True
        )
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
            return Variant("untagged", None, _merge(base, self._fields(target)), option, index, title or ref)
        properties = option.get("properties")
        if option.get("type") != "object" or not isinstance(properties, dict):
            return None
        ok = keys(option)
        if tag not in properties:
            if ok - {"type", "properties", "required"}:
                return None
            return Variant(
                "untagged", None, _merge(base, self._fields(option)), option, index, title or "untagged"
            )
        tag_schema = properties[tag]
        if _is_null_schema(tag_schema):
            if ok - {"type", "properties", "required"} or tag in option.get("required", ()):
                return None
            null_field = Field(tag, tag_schema, Shape("null"), False, on_error=tag_lenient)
            own = self._fields(option, skip=(tag,))
            return Variant("null_tag", None, _merge(base, [null_field] + own), option, index, title or "none")
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
            return Variant("tagged", tag_schema["const"], _merge(base, own), option, index, title)
        if isinstance(tag_schema, dict) and keys(tag_schema) == {"type"} and tag_schema["type"] == "string":
            # ``not`` (the known tags) and ``unevaluatedProperties: true`` add
            # nothing to the dispatch on the tag; a scope union is flattened.
            other = ok - {"type", "properties", "required", "not", "unevaluatedProperties", "additionalProperties"}
            if other and not (len(other) == 1 and self._scope(option) is not None):
                return None
            own = self._fields(option, skip=(tag,))
            return Variant("catch_all", None, _merge(base, own), option, index, title or "other")
        return None

    def _keyed(self, name: str, node: JsonObject, options: JsonArray, exclusive: bool) -> Shape | None:
        """A union of plain objects told apart by their required keys: each
        member requires a key no other member requires. The first member
        whose required keys are all present and that decodes wins; from a
        ``oneOf``, exactly one member must decode (README)."""
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
            if k <= {"const", "type"} and _type_matches(node.get("type"), node["const"]):
                return Shape("const", value=node["const"])
            return raw
        if "enum" in k:
            values = node["enum"]
            if (
                k <= {"enum", "type"}
                and isinstance(values, list)
                and len(values) == 1
                and _type_matches(node.get("type"), values[0])
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
        if len(options) == 2 and any(_is_null_schema(o) for o in options):
            other = options[0] if _is_null_schema(options[1]) else options[1]
            if _is_null_schema(other):
                return raw
            inner = self.type_of(other)
            if inner.kind in ("raw", "nullable"):
                return raw
            return Shape("nullable", inner=inner)
        members = [self.type_of(o) for o in options]
        simple = {
            "str": "string",
            "int": "integer",
            "num": "number",
            "bool": "boolean",
            "null": "null",
            "list": "array",
            "map": "object",
        }
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
            return Shape("str", min_length=node.get("minLength")) if k <= {"type", "minLength"} else raw
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
                lenient_min=_tightest(low, fmin, max),
                lenient_max=_tightest(high, fmax, min),
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

    # ------------------------------------------------------------ decoding

    def _decode(self, shape: Shape, value: Any, path: JsonPath, strict: bool) -> Any:
        kind = shape.kind
        if kind == "ref":
            return self._decode(self.shape(shape.name), value, path, strict)
        if kind == "any":
            return value
        if kind == "raw":
            errors = list(self.validator(shape.node).iter_errors(value))
            if errors:
                raise Reject(path, "not valid against its subschema: " + errors[0].message, exact=False)
            return value
        if kind == "nullable":
            return None if value is None else self._decode(shape.inner, value, path, strict)
        if kind == "str":
            if type(value) is not str:
                raise Reject(path, f"expected a string, found {json_kind(value)}")
            if strict and shape.min_length is not None and len(value) < shape.min_length:
                raise Reject(path, f"expected at least {shape.min_length} characters")
            return value
        if kind == "int":
            low, high = (shape.minimum, shape.maximum) if strict else (shape.lenient_min, shape.lenient_max)
            return _int(value, low, high, path)
        if kind == "num":
            if type(value) not in (int, float):
                raise Reject(path, f"expected a number, found {json_kind(value)}")
            if (shape.minimum is not None and value < shape.minimum) or (
                shape.maximum is not None and value > shape.maximum
            ):
                raise Reject(path, "number out of range")
            return value
        if kind == "bool":
            if type(value) is not bool:
                raise Reject(path, f"expected a boolean, found {json_kind(value)}")
            return value
        if kind == "null":
            if value is not None:
                raise Reject(path, f"expected null, found {json_kind(value)}")
            return None
        if kind == "const":
            if not json_equal(value, shape.value):
                raise Reject(path, f"expected {shape.value!r}")
            return shape.value
        if kind == "enum":
            return self._enum_value(shape, value, path, strict)
        if kind == "list":
            return self._list(shape, value, path, strict)
        if kind == "map":
            if type(value) is not dict:
                raise Reject(path, f"expected an object, found {json_kind(value)}")
            if shape.inner is None:
                return dict(value)
            return {k: self._decode(shape.inner, v, path + (k,), strict) for k, v in value.items()}
        if kind == "object":
            if type(value) is not dict:
                raise Reject(path, f"expected an object, found {json_kind(value)}")
            return self._fields_of(shape.fields, value, path, strict)
        if kind == "tagged":
            return self._tagged(shape, value, path, strict)
        if kind == "keyed":
            if type(value) is not dict:
                raise Reject(path, f"expected an object, found {json_kind(value)}")
            present = [m for m in shape.members if all(key in value for key in m[1])]
            if not present:
                raise Reject(path, "no member's required keys are present")
            errors, results = [], []
            for ref, _, inline in present:
                try:
                    results.append(self._decode(inline or self.shape(ref), value, path, strict))
                except Reject as error:
                    errors.append(error)
                    continue
                if not shape.exclusive:
                    return results[0]
            if len(results) == 1:
                return results[0]
            if results:
                raise Reject(path, "more than one member (oneOf) accepts the value")
            if len(errors) == 1:
                raise errors[0]
            best = max(errors, key=lambda e: len(e.path))
            raise Reject(path, best.message, exact=False)
        if kind == "scalar_union":
            actual = json_kind(value)
            by_kind: dict[str, Any] = {}
            for member in shape.members:
                by_kind.setdefault(
                    {
                        "str": "string",
                        "int": "integer",
                        "num": "number",
                        "bool": "boolean",
                        "null": "null",
                        "list": "array",
                        "map": "object",
                    }[member.kind],
                    member,
                )
            member = by_kind.get(actual)
            if member is None and actual == "number" and value.is_integer():
                member = by_kind.get("integer")
            if member is None:
                raise Reject(path, f"expected one of {sorted(by_kind)}, found {actual}")
            return self._decode(member, value, path, strict)
        if kind == "first_match":
            errors = []
            for member in shape.members:
                try:
                    return self._decode(member, value, path, strict)
                except Reject as error:
                    errors.append(error)
            # Which member's error is reported is a choice of the decoder:
            # only "at or below the union" is required.
            best = max(errors, key=lambda e: len(e.path))
            raise Reject(path, best.message, exact=False)
        raise AssertionError(kind)

    def _enum_value(self, shape: Shape, value: Any, path: JsonPath, strict: bool) -> Any:
        if shape.value_kind == "str":
            if type(value) is not str:
                raise Reject(path, f"expected a string, found {json_kind(value)}")
            if value in shape.values or shape.open:
                return value
            raise Reject(path, f"expected one of {list(shape.values)}, found {value!r}")
        low, high = (None, None) if strict else (shape.lenient_min, shape.lenient_max)
        number = _int(value, low if shape.open else None, high if shape.open else None, path)
        if number in shape.values or shape.open:
            return number
        raise Reject(path, f"expected one of {list(shape.values)}, found {number!r}")

    def _list(self, shape: Shape, value: Any, path: JsonPath, strict: bool) -> JsonArray:
        if type(value) is not list:
            raise Reject(path, f"expected an array, found {json_kind(value)}")
        out = []
        for index, item in enumerate(value):
            try:
                out.append(self._decode(shape.inner, item, path + (index,), strict))
            except Reject:
                if strict or not shape.skip_invalid:
                    raise
        if strict and shape.min_items is not None and len(out) < shape.min_items:
            raise Reject(path, f"expected at least {shape.min_items} items")
        return out

    def _fields_of(self, fields: list[Field], value: JsonObject, path: JsonPath, strict: bool) -> JsonObject:
        out = {}
        for f in fields:
            if f.flatten:
                out.update(self._decode(f.shape, value, path, strict))
                continue
            v = value.get(f.wire, MISSING)
            if v is MISSING:
                if f.required:
                    raise Reject(path, f"missing required property {f.wire!r}")
                if f.default is not MISSING:
                    out[f.wire] = self.default_of(f)
                continue
            try:
                if v is None and f.on_null and not strict:
                    out[f.wire] = self._empty(f.shape)
                else:
                    out[f.wire] = self._decode(f.shape, v, path + (f.wire,), strict)
            except Reject:
                if strict or not f.on_error:
                    raise
                fallback = self.fallback(f)
                if fallback is RAISE:
                    raise
                if fallback is not MISSING:
                    out[f.wire] = fallback
        return out

    def fallback(self, f: Field) -> Any:
        """What ``x-deserialize-default-on-error`` puts in place of an invalid
        value: the default, ``[]`` for a list that cannot be null, absence
        (MISSING), or RAISE for a required field."""
        if f.default is not MISSING:
            return self.default_of(f)
        if f.shape.kind == "list":
            return []
        return RAISE if f.required else MISSING

    def default_of(self, f: Field) -> Any:
        """The schema default as decoding gives it (with nested defaults)."""
        return self._decode(f.shape, f.default, (), False)

    def _empty(self, shape: Shape) -> Any:
        while shape.kind in ("ref", "nullable"):
            shape = self.shape(shape.name) if shape.kind == "ref" else shape.inner
        return [] if shape.kind == "list" else {}

    def _tagged(self, shape: Shape, value: Any, path: JsonPath, strict: bool) -> Any:
        if type(value) is not dict:
            raise Reject(path, f"expected an object, found {json_kind(value)}")
        tag_key = shape.tag
        tag = value.get(tag_key, MISSING)
        if not strict and shape.tag_lenient and not (tag is MISSING or tag is None or type(tag) is str):
            tag = MISSING
        tagged = {v.tag: v for v in shape.variants if v.role == "tagged"}
        catch_all = next((v for v in shape.variants if v.role == "catch_all"), None)
        untagged = next((v for v in shape.variants if v.role == "untagged"), None)
        null_tag = next((v for v in shape.variants if v.role == "null_tag"), None)
        if type(tag) is str:
            variant = tagged.get(tag)
            if variant is not None:
                try:
                    return self._variant_value(variant, tag_key, value, path, strict)
                except Reject as error:
                    if untagged is None:
                        raise
                    try:
                        return self._variant_value(untagged, tag_key, value, path, strict)
                    except Reject:
                        # Both the tagged and the untagged variant refuse it.
                        raise Reject(path, error.message, exact=False) from None
            if catch_all is not None:
                return self._variant_value(catch_all, tag_key, value, path, strict)
            if untagged is not None:
                try:
                    return self._variant_value(untagged, tag_key, value, path, strict)
                except Reject as error:
                    raise Reject(path, error.message, exact=False) from None
            raise Reject(path + (tag_key,), f"unknown tag {tag!r}")
        if untagged is not None:
            try:
                return self._variant_value(untagged, tag_key, value, path, strict)
            except Reject as error:
                raise Reject(path, error.message, exact=False) from None
        if null_tag is not None and (tag is MISSING or tag is None):
            return self._variant_value(null_tag, tag_key, value, path, strict)
        if tag is MISSING:
            raise Reject(path, f"missing required property {tag_key!r}")
        raise Reject(path + (tag_key,), f"expected a string tag, found {json_kind(tag)}")

    def _variant_value(
        self, variant: Variant, tag_key: str, value: JsonObject, path: JsonPath, strict: bool
    ) -> JsonObject:
        if variant.role == "tagged":
            if variant.wraps:
                inner = self._decode(self.shape(variant.wraps), value, path, strict)
                return {tag_key: variant.tag, **inner}
            return {tag_key: variant.tag, **self._fields_of(variant.fields, value, path, strict)}
        if variant.role == "catch_all":
            declared = {f.wire for f in variant.fields if not f.flatten} | {tag_key}
            for f in variant.fields:
                if f.flatten:
                    declared |= {key for ref, _, _ in f.shape.members for key in self.defs[ref].get("properties", {})}
            decoded = self._fields_of(variant.fields, value, path, strict)
            out = {k: v for k, v in value.items() if k not in declared}
            out[tag_key] = value[tag_key]
            out.update(decoded)
            return out
        return self._fields_of(variant.fields, value, path, strict)


RAISE: Any = object()


def _int(value: Json, low: int | None, high: int | None, path: JsonPath) -> int:
    if type(value) is int:
        number: int = value
    elif type(value) is float and value.is_integer():
        number = int(value)
    else:
        raise Reject(path, f"expected an integer, found {json_kind(value)}")
    if (low is not None and number < low) or (high is not None and number > high):
        raise Reject(path, f"integer {number} out of range [{low}, {high}]")
    return number


def _merge(first: list[Field], second: list[Field]) -> list[Field]:
    names = {f.wire for f in first}
    return list(first) + [f for f in second if f.wire not in names]


def common_tag(options: JsonArray) -> str | None:
    """The property every constant-tagged option of a union is told apart by."""
    tags = set()
    for option in options:
        if not isinstance(option, dict):
            return None
        properties = option.get("properties")
        if not isinstance(properties, dict):
            continue
        for key, prop in properties.items():
            if (
                isinstance(prop, dict)
                and isinstance(prop.get("const"), str)
                and key in option.get("required", ())
            ):
                tags.add(key)
    return tags.pop() if len(tags) == 1 else None


def envelope_defs(document: JsonObject) -> set[str]:
    """The JSON-RPC envelope definitions: the ``$defs`` the document's
    top-level ``anyOf`` (the message forms) refers to."""
    out = set()
    for form in document.get("anyOf", ()) if isinstance(document.get("anyOf"), list) else ():
        if not isinstance(form, dict):
            continue
        for member in form.get("anyOf", ()) if isinstance(form.get("anyOf"), list) else ():
            name = ref_name(member)
            if name:
                out.add(name)
    return out
