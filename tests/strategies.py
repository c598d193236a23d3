"""Hypothesis strategies for JSON values shaped by a schema.

``values(root, node)`` draws values that mostly follow a subschema (its
types, properties, required keys, constants, unions) and sometimes break it
(a dropped key, a wrong type, an unknown tag, an out-of-range number), so a
property test sees both sides of every check. Whether a value is valid is
left to an oracle (jsonschema), not assumed.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
ANY_JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6,
)
INTERESTING_INTS = [0, 1, -1, 2**31 - 1, 2**31, -(2**31) - 1, 2**16, 2**32, 2**63, 2**64, 1.0, 1.5, True]


def resolve(root: dict, ref: str) -> Any:
    node = root
    for part in ref.lstrip("#").split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


@st.composite
def values(draw, root: dict, node: Any, depth: int = 0) -> Any:
    if depth > 6 or node is True or not isinstance(node, dict):
        return draw(SCALARS)
    if draw(st.integers(0, 19)) == 0:
        return draw(ANY_JSON)  # anything at all, now and then
    if "$ref" in node and draw(st.integers(0, 3)):
        return draw(values(root, resolve(root, node["$ref"]), depth + 1))
    if "const" in node and draw(st.integers(0, 5)):
        return node["const"]
    if "enum" in node and draw(st.integers(0, 5)):
        return draw(st.sampled_from(node["enum"]))
    branches = list(node.get("anyOf", ())) + list(node.get("oneOf", ()))
    parts = [node, *list(node.get("allOf", ()))]
    if branches:
        parts.append(draw(st.sampled_from(branches)))
    merged = _merge(root, parts)
    kinds = merged["types"] or ["object", "string", "integer", "number", "boolean", "null", "array"]
    kind = draw(st.sampled_from(kinds))
    if merged["const"] and draw(st.integers(0, 3)):
        return draw(st.sampled_from(merged["const"]))
    if kind == "object":
        return draw(_object(root, merged, depth))
    if kind == "array":
        items = merged["items"]
        count = draw(st.integers(0, 3))
        return [draw(values(root, items, depth + 1)) for _ in range(count)]
    if kind == "integer":
        return draw(st.one_of(st.sampled_from(INTERESTING_INTS), st.integers(-1000, 100000)))
    if kind == "number":
        return draw(st.one_of(st.floats(-2, 2, allow_nan=False), st.integers(-3, 3)))
    if kind == "string":
        return draw(st.one_of(st.text(max_size=5), st.sampled_from(["", "other", "_custom"])))
    if kind == "boolean":
        return draw(st.booleans())
    return None


def _merge(root: dict, parts: list) -> dict:
    """Types, properties and required keys of a conjunction of subschemas,
    following single ``$ref``s and ``allOf``s."""
    merged = {"types": [], "properties": {}, "required": [], "items": True, "const": []}
    stack = list(parts)
    seen = 0
    while stack and seen < 20:
        seen += 1
        part = stack.pop(0)
        if not isinstance(part, dict):
            continue
        if "$ref" in part:
            stack.append(resolve(root, part["$ref"]))
        stack.extend(part.get("allOf", ()))
        kind = part.get("type")
        if kind is not None:
            kinds = kind if isinstance(kind, list) else [kind]
            merged["types"] = [k for k in merged["types"] if k in kinds] if merged["types"] else list(kinds)
            if not merged["types"]:
                merged["types"] = list(kinds)
        for key, sub in part.get("properties", {}).items():
            merged["properties"].setdefault(key, []).append(sub)
        merged["required"] += [k for k in part.get("required", ()) if k not in merged["required"]]
        if "items" in part:
            merged["items"] = part["items"]
        if "const" in part:
            merged["const"].append(part["const"])
    return merged


@st.composite
def _object(draw, root: dict, merged: dict, depth: int) -> dict:
    out = {}
    for key, subs in merged["properties"].items():
        required = key in merged["required"]
        if required and draw(st.integers(0, 15)) == 0:
            continue  # drop a required key now and then
        if not required and draw(st.booleans()):
            continue
        consts = [s["const"] for s in subs if isinstance(s, dict) and "const" in s]
        if consts and draw(st.integers(0, 7)):
            out[key] = consts[0]
            continue
        sub = subs[-1] if len(subs) == 1 else {"allOf": subs}
        out[key] = draw(values(root, sub, depth + 1))
    for key in merged["required"]:
        if key not in out and draw(st.integers(0, 7)):
            out[key] = draw(SCALARS)
    if draw(st.integers(0, 5)) == 0:
        out[draw(st.sampled_from(["extra", "_meta", "type"]))] = draw(SCALARS)
    return out


@st.composite
def valid_values(draw, root: dict, name: str, validator=None) -> Any:
    """A value valid against ``$defs/<name>``, built directly (no filtering)
    by the conformance fixture generator from randomness hypothesis draws:
    any union member, optional members present or not, null where allowed.
    The generator's rare invalid draw (a constraint it does not model) is
    redrawn, as the fixture generator does, and checked with ``validator``
    (a jsonschema validator for the definition) when one is given."""
    from acpgen.conformance.fixturegen import Instances

    rng = draw(st.randoms(use_true_random=False))
    for _ in range(12):
        value = Instances(root, rng).value({"$ref": f"#/$defs/{name}"}, "random")
        if validator is None or validator.is_valid(value):
            return value
    raise AssertionError(f"no valid instance of {name} in 12 tries")  # pragma: no cover
