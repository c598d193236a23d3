"""What JSON Schema keywords and shapes mean to acpgen, stated once for
every reader of a schema: lowering (:mod:`acpgen.compile.lower`), the
conformance model (:mod:`acpgen.conformance`, which reads the schema on its
own and loads no stage of the generator) and ``acpgen diff``.

Plain data and functions over parsed JSON; nothing here imports another
part of acpgen.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ANNOTATIONS", "INTEGER_FORMATS", "JSON_TYPES", "common_tag", "format_range"]

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
"""Keywords that never change what a value may be (``format`` included: an
integer ``format`` is a range, read apart, see :data:`INTEGER_FORMATS`)."""

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
"""The value range of each integer ``format``: the Rust integer types of the
reference implementation, which lenient decoding enforces."""


JSON_TYPES = {
    "str": "string",
    "int": "integer",
    "num": "number",
    "bool": "boolean",
    "null": "null",
    "list": "array",
    "map": "object",
}
"""The JSON Schema ``type`` of each simple kind of value (the kinds of the
IR's type expressions and of the conformance model's shapes): how a union
of simple kinds is told apart by the JSON type of a value."""


def format_range(format_name: Any) -> tuple[int | None, int | None]:
    """The range of an integer ``format``; (None, None) when it has none."""
    if isinstance(format_name, str) and format_name in INTEGER_FORMATS:
        return INTEGER_FORMATS[format_name]
    return None, None


def common_tag(options: Any) -> str | None:
    """The property the options of an ``anyOf``/``oneOf`` are told apart by:
    the one property name that, across all options, is required and holds a
    string ``const``. None when there is no such name or more than one, or
    when an option is not an object schema."""
    tags = set()
    for option in options:
        if not isinstance(option, dict):
            return None
        properties = option.get("properties")
        if not isinstance(properties, dict):
            continue
        for key, prop in properties.items():
            if isinstance(prop, dict) and isinstance(prop.get("const"), str) and key in option.get("required", ()):
                tags.add(key)
    return tags.pop() if len(tags) == 1 else None
