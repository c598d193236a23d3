"""The semantic model: what decoding a value must give, worked out from the
raw schema and the rules of docs/codec.md, independently of the generator.

:class:`Model` reads a schema document (plain JSON, nothing from the
generator's stages) and answers, for any ``$defs`` name and JSON value, what
``encode(decode(name, value))`` must be in lenient and in strict mode, or where
decoding must fail. The fixture generator uses it to write the expected
outputs into the committed fixtures; the runner never uses it (it compares
packages with the fixtures), so the model is a second, independent
implementation of the decoding rules, checked against the recordings of the
TypeScript SDK by ``tests/unit/test_fixturegen.py``.

The shapes it understands are the ones docs/codec.md describes: objects with
properties (``x-deserialize-*`` keywords, defaults, required keys, unknown keys
ignored), maps, arrays, scalars with ``minimum``/``maximum`` and integer
``format`` ranges (``minLength``, ``pattern`` and ``minItems`` checked in strict mode only), constants, closed and open enums, unions tagged by a
constant property (catch-all, untagged and null-tag variants), unions told
apart by required keys, unions of distinct JSON types, first-match unions, and
the JSON-RPC envelopes, whose ``params``/``result`` are kept as JSON. Anything
else is kept as JSON and checked against its subschema, as docs/codec.md says.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator

from ..vocabulary import ANNOTATIONS, INTEGER_FORMATS, JSON_TYPES
from .reading import ShapeReader
from .shapes import (
    DEFS,
    LENIENT_KEYWORDS,
    MISSING,
    Field,
    Reject,
    Shape,
    Variant,
    format_path,
    json_equal,
    json_kind,
    ref_name,
)

__all__ = [
    # The model and, for the fixture generator and the coverage report, the
    # vocabulary it speaks (defined in .shapes and acpgen.vocabulary).
    "ANNOTATIONS",
    "DEFS",
    "INTEGER_FORMATS",
    "LENIENT_KEYWORDS",
    "MISSING",
    "Model",
    "Reject",
    "Shape",
    "format_path",
    "json_equal",
    "json_kind",
    "ref_name",
]

if TYPE_CHECKING:
    from ..jsontypes import Json, JsonArray, JsonObject, JsonPath


class Model(ShapeReader):
    """The decoding rules of docs/codec.md over one schema document."""

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
            if strict and shape.pattern is not None and re.search(shape.pattern, value) is None:
                raise Reject(path, f"expected a string matching {json.dumps(shape.pattern)}")
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
            return {k: self._decode(shape.inner, v, (*path, k), strict) for k, v in value.items()}
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
                by_kind.setdefault(JSON_TYPES[member.kind], member)
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
                out.append(self._decode(shape.inner, item, (*path, index), strict))
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
                    out[f.wire] = self._decode(f.shape, v, (*path, f.wire), strict)
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
            raise Reject((*path, tag_key), f"unknown tag {tag!r}")
        if untagged is not None:
            try:
                return self._variant_value(untagged, tag_key, value, path, strict)
            except Reject as error:
                raise Reject(path, error.message, exact=False) from None
        if null_tag is not None and (tag is MISSING or tag is None):
            return self._variant_value(null_tag, tag_key, value, path, strict)
        if tag is MISSING:
            raise Reject(path, f"missing required property {tag_key!r}")
        raise Reject((*path, tag_key), f"expected a string tag, found {json_kind(tag)}")

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
