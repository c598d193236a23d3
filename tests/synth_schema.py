"""A synthetic schema of the ACP shape with any number of definitions, for
timing generation at scale: ``python tests/synth_schema.py 5000 > big.json``.

A quarter each of plain objects (every kind of field: strings, bounded
integers, booleans, lists and maps of references, nullable references,
defaults, ``_meta``), string enums, tagged unions of two of those objects
with a catch-all, and string aliases; deterministic for a given count.
"""

from __future__ import annotations

import json
import sys


def synthesise(count: int) -> dict:
    defs: dict[str, dict] = {}
    objects = [f"Thing{_word(i)}" for i in range(0, count, 4)]
    for i in range(count):
        name = _word(i)
        kind = i % 4
        if kind == 0:
            defs[f"Thing{name}"] = _object(i, objects)
        elif kind == 1:
            defs[f"Kind{name}"] = {
                "description": f"The kinds of {name}.",
                "oneOf": [
                    {"type": "string", "const": f"value_{j}", "description": f"Value {j} of {name}."} for j in range(4)
                ],
            }
        elif kind == 2:
            a, b = objects[(i // 4) % len(objects)], objects[(i // 4 + 1) % len(objects)]
            defs[f"Choice{name}"] = {
                "description": f"Either of two things, told apart by `type` ({name}).",
                "anyOf": [
                    {"allOf": [{"$ref": f"#/$defs/{a}"}], "properties": {"type": {"const": "first", "type": "string"}}, "required": ["type"], "type": "object"},
                    {"allOf": [{"$ref": f"#/$defs/{b}"}], "properties": {"type": {"const": "second", "type": "string"}}, "required": ["type"], "type": "object"},
                    {"description": "Any other kind.", "properties": {"type": {"type": "string"}}, "required": ["type"], "type": "object"},
                ],
            }  # fmt: skip
        else:
            defs[f"Id{name}"] = {"description": f"An identifier of {name}.", "type": "string"}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Synthetic", "$defs": defs}


def _object(i: int, objects: list[str]) -> dict:
    name = _word(i)
    other = objects[(i // 4 + 7) % len(objects)]
    kind = f"Kind{_word(i + 1)}" if i + 1 < len(objects) * 4 else None
    properties = {
        "_meta": {"additionalProperties": True, "type": ["object", "null"], "description": "Extension point."},
        "id": {"type": "string", "description": f"The id of {name}."},
        "title": {"type": ["string", "null"], "description": "A title, cleared with null."},
        "count": {"type": "integer", "format": "uint32", "minimum": 0, "description": "How many."},
        "size": {"type": ["integer", "null"], "format": "int64"},
        "ratio": {"type": "number"},
        "enabled": {"type": "boolean", "default": False},
        "tags": {"type": "array", "items": {"type": "string"}, "x-deserialize-skip-invalid-items": True},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "parent": {"anyOf": [{"$ref": f"#/$defs/{other}"}, {"type": "null"}]},
        "children": {"type": "array", "items": {"$ref": f"#/$defs/{other}"}},
        "payload": {"description": "Anything at all."},
    }
    if kind is not None:
        properties["kind"] = {"$ref": f"#/$defs/{kind}", "x-deserialize-default-on-error": True}
    return {
        "description": f"Thing number {i}, {name}.\n\nWith a longer second paragraph that says a little more about it.",
        "type": "object",
        "properties": properties,
        "required": ["id", "count"],
    }


def _word(i: int) -> str:
    """A name made of letters only (numbered names are what acpgen avoids)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        out = letters[r] + out
    return out.capitalize()


if __name__ == "__main__":
    json.dump(synthesise(int(sys.argv[1]) if len(sys.argv) > 1 else 5000), sys.stdout, indent=1)
