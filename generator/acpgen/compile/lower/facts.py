"""The facts of a whole schema document the passes after lowering need,
read once (:class:`~acpgen.compile.ir.SchemaFacts`): the ``x-method`` and
``x-side`` of each definition, which envelopes refer to which types, whether
a request id may be null, which methods and **UNSTABLE** markers the
document has (which patch rule set fits), and the version a SOURCE.json
beside the file records."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import pointer
from ...jsontypes import one_of
from .. import ir
from ..load import Schema, iter_objects, ref_target

SIDES: tuple[ir.Side, ...] = ("agent", "client", "protocol", "proxy")
UNSTABLE_MARK = "**UNSTABLE**"


def schema_facts(schema: Schema) -> ir.SchemaFacts:
    methods, unstable, kinds = _read_objects(schema)
    return ir.SchemaFacts(
        marks=tuple(_marks(schema)),
        envelope_kinds=tuple((name, tuple(sorted(found))) for name, found in kinds.items()),
        null_request_id=allows_null(schema.defs.get("RequestId")),
        methods_named=frozenset(methods),
        unstable_marked=unstable,
        version=schema_version(schema),
    )


def _read_objects(schema: Schema) -> tuple[set[str], bool, dict[str, set[ir.MessageKind]]]:
    """What the facts read of every object of the document, in one walk:
    the ``x-method`` names, whether a description starts with
    :data:`UNSTABLE_MARK`, and :func:`envelope_kinds`."""
    methods: set[str] = set()
    unstable = False
    kinds: dict[str, set[ir.MessageKind]] = {}
    for node in iter_objects(schema.document):
        method = node.get("x-method")
        if isinstance(method, str):
            methods.add(method)
        description = node.get("description")
        if isinstance(description, str) and description.lstrip().startswith(UNSTABLE_MARK):
            unstable = True
        properties = node.get("properties")
        if isinstance(properties, dict):
            _add_envelope_kinds(properties, kinds)
    return methods, unstable, kinds


def _marks(schema: Schema) -> Iterator[ir.Mark]:
    for name, node in schema.defs.items():
        if not isinstance(node, dict) or ("x-method" not in node and "x-side" not in node):
            continue
        where = ("$defs", name)
        method, side = node.get("x-method"), one_of(node.get("x-side"), SIDES)
        if not isinstance(method, str) or not method:
            yield ir.Mark(
                name,
                error="x-method must be a non-empty string beside x-side",
                error_at=pointer((*where, "x-method")),
            )
        elif side is None:
            yield ir.Mark(
                name,
                error=f"x-side must be one of {', '.join(SIDES)}, not {node.get('x-side')!r}",
                error_at=pointer((*where, "x-side")),
            )
        else:
            yield ir.Mark(name, method, side)


def envelope_kinds(schema: Schema) -> dict[str, set[ir.MessageKind]]:
    """``{$defs name: {kind}}`` for every type an envelope's ``params`` or
    ``result`` refers to, anywhere in the document."""
    return _read_objects(schema)[2]


def _add_envelope_kinds(properties: dict[str, Any], out: dict[str, set[ir.MessageKind]]) -> None:
    """Add to ``out`` the kinds of the types the ``params`` or ``result`` of
    an object with ``properties`` refers to."""
    for key in ("params", "result"):
        if key not in properties:
            continue
        kind: ir.MessageKind
        kind = "response" if key == "result" else "request" if "id" in properties else "notification"
        for target in _members(properties[key]):
            out.setdefault(target, set()).add(kind)


def _members(node: Any) -> Iterator[str]:
    """The ``$defs`` names a subschema is made of, through ``anyOf``/``oneOf``/``allOf``."""
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = ref_target(ref)
        if target is not None:
            yield target
    for key in ("anyOf", "oneOf", "allOf"):
        for option in node.get(key, ()) if isinstance(node.get(key), list) else ():
            yield from _members(option)


def allows_null(node: Any) -> bool:
    """Whether a (request id) schema accepts ``null``: by its ``type`` or a
    ``{"type": "null"}`` member of its ``anyOf``/``oneOf``."""
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(allows_null(option) for key in ("anyOf", "oneOf") for option in node.get(key) or ())


def schema_version(schema: Schema) -> str:
    """The version recorded for this exact file (by sha256) in a SOURCE.json
    beside it or in a parent directory, or ``""``."""
    here = Path(schema.location).resolve().parent
    for directory in (here, here.parent):
        source = directory / "SOURCE.json"
        if not source.is_file():
            continue
        try:
            record = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return ""
        files = record.get("files", {}) if isinstance(record, dict) else {}
        version = record.get("version") if isinstance(record, dict) else None
        if schema.sha256 in files.values() and isinstance(version, str):
            return version
    return ""
