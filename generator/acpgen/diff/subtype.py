"""Shape comparison: whether the values one schema's senders may emit are
accepted by the other schema's receivers. It holds the shapes a definition
stands for (``shapes``: objects, alternatives, opaque payloads), the display and
normalisation of IR type expressions (:func:`show_type` in schema terms for
the JSON form, :func:`python_type` as the generated package types it for the
summaries, :func:`_norm`), the
``covers``/``overlaps`` relations (as the :class:`_Shapes` mixin of the
classifier, which supplies ``old``, ``new`` and ``renamed``), and the scalar,
range and raw-subschema helpers they rest on. It reads schemas through
``facts._Side`` objects; the shapes themselves are in ``shapes``."""

from __future__ import annotations

import json
import re
from collections.abc import Hashable
from dataclasses import replace

from ..compile import ir
from ..compile.lower import strip_annotations
from ..jsontypes import Json
from ..vocabulary import ANNOTATIONS
from .facts import _Side
from .shapes import Shape, _SeenKey

# ---------------------------------------------------------------- type display


def show_type(t: ir.TypeExpr, side: _Side | None = None) -> str:
    """A type expression in schema terms: ``string``, ``ToolKind | null`` ...
    A subschema the codec keeps as JSON is shown by its keywords when the
    ``side`` it comes from is given, else as ``(schema)``."""
    if t.kind == "any":
        return "any"
    if t.kind == "raw":
        return "(schema)" if side is None else _raw_text(_node_at(side, t.pointer), python=False)
    if t.kind == "str":
        return "string" + "".join(_str_limits(t))
    if t.kind in ("int", "num"):
        name = "integer" if t.kind == "int" else "number"
        bits = []
        if t.format:
            bits.append(t.format)
        if t.minimum is not None:
            bits.append(f">= {t.minimum}")
        if t.maximum is not None:
            bits.append(f"<= {t.maximum}")
        return name + (f"({', '.join(bits)})" if bits else "")
    if t.kind == "bool":
        return "boolean"
    if t.kind == "null":
        return "null"
    if t.kind == "const":
        return json.dumps(t.value)
    if t.kind == "list":
        inner = show_type(t.items, side)
        if " " in inner:
            inner = f"({inner})"
        return inner + "[]" + (f"(minItems {t.min_items})" if t.min_items is not None else "")
    if t.kind == "map":
        return f"map<{show_type(t.values, side)}>"
    if t.kind == "ref":
        return t.name
    if t.kind == "nullable":
        return f"{show_type(t.inner, side)} | null"
    if t.kind in ("scalar_union", "first_match"):
        return " | ".join(show_type(m, side) for m in t.members)
    if t.kind == "keyed":
        return f"{' | '.join(t.refs)} (flattened, {'oneOf' if t.exclusive else 'anyOf'})"
    return t.kind  # pragma: no cover


_JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
    "array": "list",
    "object": "dict",
}
"""JSON Schema ``type`` names as the Python types that hold them."""


def python_type(t: ir.TypeExpr, side: _Side) -> str:
    """A type expression as the Python type the package generated from
    ``side`` gives it, class names included, with what the schema
    restricts beyond that type in parentheses: ``int (uint32, >= 1)``,
    ``list[ContentBlock] (minItems 1)``, ``str (pattern '^[A-Z]{3}$')``,
    ``ElicitationSessionScope | ElicitationRequestScope (flattened, oneOf)``."""
    if t.kind == "nullable":
        return f"{python_type(t.inner, side)} | None"
    if t.kind in ("scalar_union", "first_match"):
        parts: list[str] = []
        for member in t.members:
            shown = python_type(member, side)
            if shown not in parts:
                parts.append(shown)
        return " | ".join(parts)
    if t.kind == "ref":
        return " | ".join(side.annotation_parts(t))
    if t.kind == "str":
        return "str" + "".join(_str_limits(t))
    if t.kind in ("int", "num"):
        bits = [t.format] if t.format else []
        if t.minimum is not None:
            bits.append(f">= {t.minimum}")
        if t.maximum is not None:
            bits.append(f"<= {t.maximum}")
        return ("int" if t.kind == "int" else "float") + (f" ({', '.join(bits)})" if bits else "")
    if t.kind == "list":
        inner = python_type(t.items, side)
        return f"list[{inner}]" + (f" (minItems {t.min_items})" if t.min_items is not None else "")
    if t.kind == "map":
        return f"dict[str, {python_type(t.values, side)}]"
    if t.kind == "keyed":
        members = " | ".join(side.annotation_parts(ir.RefT(ref))[0] for ref in t.refs)
        return f"{members} (flattened, {'oneOf' if t.exclusive else 'anyOf'})"
    if t.kind == "raw":
        return _raw_text(_node_at(side, t.pointer), python=True)
    return " | ".join(side.annotation_parts(t))


def _raw_text(node: Json, *, python: bool) -> str:
    """A subschema the codec keeps as JSON, as the type of the JSON it
    allows (the Python type, or with ``python=False`` the JSON Schema one)
    and the keywords that restrict it."""
    anything = "Any" if python else "any"
    if not isinstance(node, dict):
        return anything
    kinds = node.get("type")
    names = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    base = " | ".join((_JSON_TYPES.get(k, anything) if python else k) for k in names if isinstance(k, str)) or anything
    restrictions = []
    for key, value in node.items():
        if key in ANNOTATIONS or key == "type":  # the type is the text before
            continue
        if key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            restrictions.append(f"{key} of {len(value)} subschemas")
        elif isinstance(value, str):
            restrictions.append(f"{key} {value!r}")
        else:
            shown = json.dumps(strip_annotations(value), sort_keys=True)
            restrictions.append(f"{key} {shown if len(shown) <= 40 else shown[:37] + '...'}")
    return base + (f" ({', '.join(restrictions)})" if restrictions else "")


def _norm(t: ir.TypeExpr) -> ir.TypeExpr:
    """A type expression without what does not change the values it allows
    (string formats) nor the ``x-deserialize-*`` flags, compared on their own."""
    if t.kind == "str":
        return replace(t, format=None)
    if t.kind == "num":
        return replace(t, format=None)
    if t.kind == "list":
        return replace(t, items=_norm(t.items), skip_invalid=False)
    if t.kind == "map":
        return replace(t, values=_norm(t.values))
    if t.kind == "nullable":
        return replace(t, inner=_norm(t.inner))
    if t.kind in ("scalar_union", "first_match"):
        return replace(t, members=tuple(_norm(m) for m in t.members))
    return t


def _same_json(a: Json, b: Json) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) and type(a) is type(b)


# ---------------------------------------------------------------- covers and overlaps


class _Shapes:
    """``covers`` and ``overlaps``, the shape relations of :class:`_Differ`
    (which inherits them): they read ``self.old``, ``self.new`` (the two
    ``_Side`` objects) and ``self.renamed`` (``{old name: new name}``)."""

    old: _Side
    new: _Side
    renamed: dict[str, str]

    # -------------------------------------------------------- shapes

    def covers(self, a: Shape, a_side: _Side, b: Shape, b_side: _Side, seen: frozenset[_SeenKey] = frozenset()) -> bool:
        """Whether every value ``b`` lets a sender emit (in ``b_side``) is
        accepted by ``a`` (in ``a_side``). Conservative: False when unsure.
        References to the same definition cover each other (changes inside
        it are reported on it); others are expanded."""
        if b.kind in ("alt", "scalar_union", "first_match"):
            return all(self.covers(a, a_side, m, b_side, seen) for m in b.members)
        if b.kind == "nullable":
            return self.covers(a, a_side, ir.NullT(), b_side, seen) and self.covers(a, a_side, b.inner, b_side, seen)
        if a.kind == "any":
            return True
        if b.kind == "ref":
            if self._mentions(a, a_side, b.name, b_side):
                return True
            if b.name not in b_side.defs:
                return False
            key: _SeenKey = (a_side.label, _key(a), b_side.label, b.name)
            if key in seen:
                return True
            return self.covers(a, a_side, b_side.shape(b.name, "sender"), b_side, seen | {key})
        if a.kind == "ref":
            if a.name not in a_side.defs:
                return False
            key = (a_side.label, a.name, b_side.label, _key(b))
            if key in seen:
                return True
            return self.covers(a_side.shape(a.name, "receiver"), a_side, b, b_side, seen | {key})
        if b.kind == "raw" and a.kind != "raw":
            # A sender's raw subschema allows at most what its JSON type does.
            base = _raw_base(b_side, b.pointer)
            return base is not None and self.covers(a, a_side, base, b_side, seen)
        if a.kind in ("alt", "scalar_union", "first_match"):
            return any(self.covers(m, a_side, b, b_side, seen) for m in a.members)
        if a.kind == "nullable":
            return b.kind == "null" or self.covers(a.inner, a_side, b, b_side, seen)
        if a.kind == "obj":
            if b.kind != "obj":
                return False
            # Senders emit only the properties they declare.
            for prop, (a_type, a_required) in a.fields.items():
                if prop not in b.fields:
                    if a_required:
                        return False
                    continue
                b_type, b_required = b.fields[prop]
                if a_required and not b_required:
                    return False
                if not self.covers(a_type, a_side, b_type, b_side, seen):
                    return False
            return a.open or not set(b.fields) - set(a.fields)
        if a.kind == "opaque":
            return b.kind == "opaque" and a.key == b.key
        if a.kind == "map":
            if b.kind == "obj":
                return all(self.covers(a.values, a_side, t, b_side, seen) for t, _ in b.fields.values())
            return b.kind == "map" and self.covers(a.values, a_side, b.values, b_side, seen)
        if a.kind == "raw":
            return b.kind == "raw" and _raw_at(a_side, a.pointer) == _raw_at(b_side, b.pointer)
        if a.kind == "list":
            return (
                b.kind == "list"
                and (a.min_items or 0) <= (b.min_items or 0)
                and self.covers(a.items, a_side, b.items, b_side, seen)
            )
        if a.kind == "keyed":
            # Senders emit one member's keys; an anyOf sender may emit two
            # members' keys at once, which a oneOf receiver refuses.
            return (
                b.kind == "keyed"
                and (b.exclusive or not a.exclusive)
                and all(
                    any(self.covers(ir.RefT(mine), a_side, ir.RefT(theirs), b_side, seen) for mine in a.refs)
                    for theirs in b.refs
                )
            )
        return _scalar_covers(a, b)

    def overlaps(
        self, a: Shape, a_side: _Side, b: Shape, b_side: _Side, seen: frozenset[_SeenKey] = frozenset()
    ) -> bool:
        """Whether some value ``b`` lets a sender emit is accepted by ``a``.
        Conservative the other way from ``covers``: False when unsure."""
        if a.kind == "any":
            return b.kind != "alt" or bool(b.members)
        if b.kind in ("alt", "scalar_union", "first_match"):
            return any(self.overlaps(a, a_side, m, b_side, seen) for m in b.members)
        if b.kind == "nullable":
            return self.overlaps(a, a_side, ir.NullT(), b_side, seen) or self.overlaps(a, a_side, b.inner, b_side, seen)
        if b.kind == "ref":
            if self._mentions(a, a_side, b.name, b_side):
                return True
            key: _SeenKey = (a_side.label, _key(a), b_side.label, b.name)
            if b.name not in b_side.defs or key in seen:
                return False
            return self.overlaps(a, a_side, b_side.shape(b.name, "sender"), b_side, seen | {key})
        if a.kind == "ref":
            key = (a_side.label, a.name, b_side.label, _key(b))
            if a.name not in a_side.defs or key in seen:
                return False
            return self.overlaps(a_side.shape(a.name, "receiver"), a_side, b, b_side, seen | {key})
        if a.kind == "keyed" or b.kind == "keyed":
            return (
                a.kind == "keyed"
                and b.kind == "keyed"
                and any(
                    self.overlaps(ir.RefT(mine), a_side, ir.RefT(theirs), b_side, seen)
                    for mine in a.refs
                    for theirs in b.refs
                )
            )
        if a.kind in ("alt", "scalar_union", "first_match"):
            return any(self.overlaps(m, a_side, b, b_side, seen) for m in a.members)
        if a.kind == "nullable":
            return b.kind == "null" or self.overlaps(a.inner, a_side, b, b_side, seen)
        if a.kind == "obj":
            if b.kind != "obj":
                return False
            for prop, (a_type, a_required) in a.fields.items():
                if prop in b.fields:
                    b_type, b_required = b.fields[prop]
                    if (a_required or b_required) and not self.overlaps(a_type, a_side, b_type, b_side, seen):
                        return False
                elif a_required:
                    return False
            return a.open or all(prop in a.fields for prop, (_, required) in b.fields.items() if required)
        if a.kind == "map":
            return b.kind in ("map", "obj")
        if a.kind == "list":
            return b.kind == "list" and (
                (a.min_items or 0) == 0 or self.overlaps(a.items, a_side, b.items, b_side, seen)
            )
        if a.kind == "raw" or b.kind == "raw":
            # A raw subschema restricts a plain JSON type (a pattern, a
            # format ...): assume it leaves values of that type.
            if a.kind == "raw" and b.kind == "raw" and _raw_at(a_side, a.pointer) == _raw_at(b_side, b.pointer):
                return True
            base_a = _raw_base(a_side, a.pointer) if a.kind == "raw" else a
            base_b = _raw_base(b_side, b.pointer) if b.kind == "raw" else b
            return base_a is not None and base_b is not None and self.overlaps(base_a, a_side, base_b, b_side, seen)
        if b.kind == "const" or a.kind == "const":
            value_side, other = (b, a) if b.kind == "const" else (a, b)
            return _scalar_covers(other, value_side)
        if a.kind in ("int", "num") and b.kind in ("int", "num"):
            low = max((v for v in (a.minimum, b.minimum) if v is not None), default=None)
            high = min((v for v in (a.maximum, b.maximum) if v is not None), default=None)
            return low is None or high is None or low <= high
        return a.kind == b.kind

    def _mentions(self, a: Shape, a_side: _Side, name: str, b_side: _Side) -> bool:
        """``a`` is, or has as a member, a reference to the definition ``name``
        of ``b_side`` (the same name, or its renamed self)."""
        if a.kind == "ref":
            return a.name == name or self._renamed_pair(name, b_side, a.name, a_side)
        if a.kind == "nullable":
            return self._mentions(a.inner, a_side, name, b_side)
        if a.kind in ("alt", "scalar_union", "first_match"):
            return any(self._mentions(m, a_side, name, b_side) for m in a.members)
        return False

    def _renamed_pair(self, b_name: str, b_side: _Side, a_name: str, a_side: _Side) -> bool:
        if a_side is self.new and b_side is self.old:
            return self.renamed.get(b_name) == a_name
        if a_side is self.old and b_side is self.new:
            return self.renamed.get(a_name) == b_name
        return False


def _key(value: Shape) -> Hashable:
    try:
        hash(value)
    except TypeError:
        return id(value)
    return value


def _node_at(side: _Side, where: str) -> Json:
    node: Json = side.schema.document
    for part in where.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
    return node


def _raw_at(side: _Side, where: str) -> str:
    return json.dumps(strip_annotations(_node_at(side, where)), sort_keys=True)


def _raw_base(side: _Side, where: str) -> ir.TypeExpr | None:
    """The plain type a raw subschema narrows (its other keywords only
    restrict it), or None when it is not one JSON type."""
    node = _node_at(side, where)
    if not isinstance(node, dict) or any(k in node for k in ("$ref", "anyOf", "oneOf", "not", "if")):
        return None
    kind = node.get("type")
    if kind == "string":
        length, pattern = node.get("minLength"), node.get("pattern")
        return ir.StrT(
            min_length=length if type(length) is int else None,
            pattern=pattern if isinstance(pattern, str) else None,
        )
    if kind in ("integer", "number"):
        low, high = node.get("minimum"), node.get("maximum")
        ok = all(v is None or type(v) in (int, float) for v in (low, high))
        if kind == "integer":
            return (
                ir.IntT(minimum=low, maximum=high)
                if ok and all(v is None or type(v) is int for v in (low, high))
                else ir.IntT()
            )
        return ir.NumT(minimum=low, maximum=high) if ok else ir.NumT()
    if kind == "boolean":
        return ir.BoolT()
    if kind == "null":
        return ir.NullT()
    return None


def _scalar_covers(a: Shape, b: Shape) -> bool:
    """``a`` accepts every value of ``b``, both scalar, array or constant."""
    if b.kind == "const":
        value = b.value
        if a.kind == "const":
            return _same_json(a.value, value)
        if a.kind == "str":
            return (
                isinstance(value, str)
                and len(value) >= (a.min_length or 0)
                and (a.pattern is None or re.search(a.pattern, value) is not None)
            )
        if a.kind == "int":
            return type(value) is int and _in_range(value, a.lenient_min, a.lenient_max)
        if a.kind == "num":
            return type(value) in (int, float) and _in_range(value, a.minimum, a.maximum)
        if a.kind == "bool":
            return type(value) is bool
        if a.kind == "null":
            return value is None
        return False
    if a.kind != b.kind and not (a.kind == "num" and b.kind == "int"):
        return False
    # From here b has a's kind, or is an integer where a is a number.
    if a.kind == "str" and b.kind == "str":
        # A pattern is compared as text: another pattern may accept the same
        # strings, but telling that is beyond this check.
        return (a.min_length or 0) <= (b.min_length or 0) and a.pattern in (None, b.pattern)
    if a.kind == "int" and b.kind == "int":
        return _range_covers(a.lenient_min, a.lenient_max, b.lenient_min, b.lenient_max)
    if a.kind == "num" and (b.kind == "int" or b.kind == "num"):
        low = b.lenient_min if b.kind == "int" else b.minimum
        high = b.lenient_max if b.kind == "int" else b.maximum
        return _range_covers(a.minimum, a.maximum, low, high)
    return a.kind in ("bool", "null")


def _in_range(value: float, low: float | None, high: float | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)


def _range_covers(a_low: float | None, a_high: float | None, b_low: float | None, b_high: float | None) -> bool:
    low_ok = a_low is None or (b_low is not None and b_low >= a_low)
    high_ok = a_high is None or (b_high is not None and b_high <= a_high)
    return low_ok and high_ok


def _str_limits(t: ir.StrT) -> list[str]:
    """A string type's limits for a summary: `` (minLength 1)``, `` (pattern '...')``."""
    limits = []
    if t.min_length is not None:
        limits.append(f" (minLength {t.min_length})")
    if t.pattern is not None:
        limits.append(f" (pattern {t.pattern!r})")
    return limits
