"""What strict mode validates against: the ``$defs`` without their
annotations, checked for keywords the generated validator does not
implement (an error: strict mode must accept exactly what the schema
accepts)."""

from __future__ import annotations

import re
from typing import Any

from ...errors import AcpgenError, pointer
from ...jsontypes import JsonPath
from ...vocabulary import ANNOTATIONS
from ..load import canonical_ref, ref_target
from . import patterns

# What the strict-mode validator of the generated packages implements.
VALIDATION_KEYWORDS = frozenset(
    {
        "$ref", "$schema", "$id", "$defs", "$anchor",
        "type", "const", "enum",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "pattern",
        "items", "prefixItems", "minItems", "maxItems", "uniqueItems",
        "properties", "patternProperties", "additionalProperties", "required",
        "minProperties", "maxProperties", "propertyNames", "dependentRequired",
        "unevaluatedProperties",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    }
)  # fmt: skip


def strip_annotations(node: Any, parts: JsonPath = (), file: str = "") -> Any:
    """A schema without the keywords that do not affect validation.

    A keyword that affects validation but that the generated validator does
    not implement is an error: strict mode must accept exactly what the schema
    accepts.
    """
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ANNOTATIONS or key.startswith("x-"):
                continue
            if key not in VALIDATION_KEYWORDS:
                raise AcpgenError(
                    f"the keyword {key!r} is not supported by strict mode",
                    file=file,
                    pointer=pointer((*parts, key)),
                )
            if key in ("properties", "$defs", "patternProperties"):
                if key == "patternProperties":
                    for pattern in value:
                        _check_pattern(pattern, (*parts, key, pattern), file)
                out[key] = {k: strip_annotations(v, (*parts, key, k), file) for k, v in value.items()}
            elif key == "$ref":
                # One spelling of every reference, the one the generated
                # validator resolves (no percent-encoding).
                target = ref_target(value)
                out[key] = canonical_ref(target) if target is not None else value
            elif key in ("const", "enum", "required", "dependentRequired", "type", "pattern"):
                if key == "pattern":
                    _check_pattern(value, (*parts, key), file)
                out[key] = value
            else:
                out[key] = strip_annotations(value, (*parts, key), file)
        return out
    if isinstance(node, list):
        return [strip_annotations(item, (*parts, i), file) for i, item in enumerate(node)]
    return node


def _check_pattern(pattern: Any, parts: JsonPath, file: str) -> None:
    try:
        re.compile(pattern)
    except (re.error, TypeError) as exc:
        raise AcpgenError(
            f"the pattern {pattern!r} is not a valid regular expression: {exc}", file=file, pointer=pointer(parts)
        ) from None
    at = patterns.nested_repetition(pattern)
    if at is not None:
        raise AcpgenError(
            f"the pattern {pattern!r} repeats a group that holds a quantifier or an alternation (at index {at}),"
            " which can take exponential time to match: strict mode refuses it",
            file=file,
            pointer=pointer(parts),
        )
