"""Small valid instances of a schema's definitions, for the client probe's
updates: one ``session/update`` of every ``SessionUpdate`` kind a version
has, made from the package's own schema (``_schema.SCHEMA_JSON``), so a
kind a new schema adds is sent without a change here.

An instance holds the required members only (and ``sessionUpdate``); a
string is ``probe`` unless the schema fixes it (``const``, ``enum``), a
number the least the schema allows, an array empty unless it must hold
items; of alternatives (``oneOf``, ``anyOf``) the first that is not
``null``. Every instance is checked against the package (strict decoding)
before it is used: one the rules above get wrong is left out, and said.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

SAMPLE_STRING = "probe"
"""The value of a free string (so the ids of one sample agree: a
``tool_call_update`` names the ``tool_call`` sent before it)."""

MAX_DEPTH = 40
"""How deep a sample nests (the schema may be recursive; required members never are, in ACP)."""


def definitions(package: ModuleType) -> dict[str, Any]:
    """The package's schema definitions, by name."""
    schema = getattr(package, "_schema", None)
    if schema is None:
        from importlib import import_module

        schema = import_module(f"{package.__name__}._schema")
    defs: dict[str, Any] = json.loads(schema.SCHEMA_JSON)
    return defs


def sample(defs: dict[str, Any], node: Any, depth: int = 0) -> Any:
    """A small instance of ``node`` (a subschema of ``defs``)."""
    if depth > MAX_DEPTH or not isinstance(node, dict):
        return None
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return node["enum"][0]
    if "$ref" in node:
        return sample(defs, defs[str(node["$ref"]).rsplit("/", 1)[-1]], depth + 1)
    merged: Any = None
    for part in node.get("allOf", []):
        value = sample(defs, part, depth + 1)
        merged = {**merged, **value} if isinstance(merged, dict) and isinstance(value, dict) else value
    for key in ("oneOf", "anyOf"):
        if key in node:
            options = [option for option in node[key] if option.get("type") != "null"] or node[key]
            value = sample(defs, options[0], depth + 1)
            merged = {**merged, **value} if isinstance(merged, dict) and isinstance(value, dict) else value
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in node:
        found: dict[str, Any] = dict(merged) if isinstance(merged, dict) else {}
        properties = node.get("properties", {})
        for name in node.get("required", []):
            found[name] = sample(defs, properties.get(name, {}), depth + 1)
        for name, prop in properties.items():
            if isinstance(prop, dict) and "const" in prop:
                found[name] = prop["const"]
        return found
    if merged is not None:
        return merged
    if kind == "string":
        return SAMPLE_STRING
    if kind in ("integer", "number"):
        return max(0, int(node.get("minimum", 0)))
    if kind == "boolean":
        return False
    if kind == "array":
        return [sample(defs, node.get("items", {}), depth + 1) for _ in range(int(node.get("minItems", 0)))]
    return None


def update_kinds(package: ModuleType) -> list[str]:
    """The ``sessionUpdate`` kinds of the package's ``SessionUpdate``, in schema order."""
    defs = definitions(package)
    kinds: list[str] = []
    for option in defs["SessionUpdate"].get("oneOf", defs["SessionUpdate"].get("anyOf", [])):
        const = option.get("properties", {}).get("sessionUpdate", {}).get("const")
        if isinstance(const, str):
            kinds.append(const)
    return kinds


def session_updates(package: ModuleType, session_id: str) -> tuple[list[dict[str, Any]], list[str]]:
    """A valid ``session/update`` params of every kind, and the kinds no
    valid sample could be made of."""
    defs = definitions(package)
    made: list[dict[str, Any]] = []
    missed: list[str] = []
    for option in defs["SessionUpdate"].get("oneOf", defs["SessionUpdate"].get("anyOf", [])):
        const = option.get("properties", {}).get("sessionUpdate", {}).get("const")
        if not isinstance(const, str):
            continue
        update = sample(defs, option)
        params = {"sessionId": session_id, "update": update}
        message = {"jsonrpc": "2.0", "method": "session/update", "params": params}
        try:
            package.decode_message(message, strict=True)
        except package.ValidationError:
            missed.append(const)
            continue
        made.append(params)
    return made, missed
