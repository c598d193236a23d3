"""The conformance model's vocabulary: reading helpers over plain schema
JSON (no stage of the generator: the keyword facts both read a schema by are
:mod:`acpgen.vocabulary`'s), the error a rejected value raises, and the
shapes (:class:`Shape`, :class:`Field`, :class:`Variant`) the model reads a
definition into (see :mod:`.model`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..vocabulary import ANNOTATIONS

if TYPE_CHECKING:
    from ..jsontypes import Json, JsonObject, JsonPath


DEFS = "#/$defs/"

LENIENT_KEYWORDS = (
    "x-deserialize-default-on-error",
    "x-deserialize-default-on-null",
    "x-deserialize-skip-invalid-items",
)

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
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=False))
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


def is_null_schema(node: Any) -> bool:
    return isinstance(node, dict) and keys(node) == {"type"} and node["type"] == "null"


def type_matches(kind: Any, value: Any) -> bool:
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
    pattern: Any = None
    """str: a regular expression the string must match (strict mode only)."""
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


def tightest(a: int | None, b: int | None, pick: Callable[[int, int], int]) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return pick(a, b)


def merge_fields(first: list[Field], second: list[Field]) -> list[Field]:
    names = {f.wire for f in first}
    return list(first) + [f for f in second if f.wire not in names]


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
