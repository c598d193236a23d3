"""The entry points of the comparison: :func:`diff_files`,
:func:`diff_schemas`, and :func:`load_cached`, which loads a schema once per
content (refusing, in one line, a file that is not an ACP JSON Schema)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

from ..compile.load import Schema, parse_schema, read_schema_bytes
from ..errors import AcpgenError
from ..jsontypes import Json
from ..pipeline import schema_version
from .classify import _Differ
from .facts import _Side
from .model import KINDS, SchemaDiff, SchemaInfo


def diff_files(old_path: str | Path, new_path: str | Path) -> SchemaDiff:
    """The diff of two schema files; bad input is an AcpgenError."""
    return diff_schemas(load_cached(old_path), load_cached(new_path))


_LOADED: dict[str, Schema] = {}


def load_cached(path: str | Path, raw: bytes | None = None, name: str | None = None) -> Schema:
    """``load_schema``, or ``parse_schema(raw, name)``, remembering the last
    few results by content: the metaschema check is the slow part of a diff,
    and a bump diffs the same files more than once."""
    if raw is None:
        raw = read_schema_bytes(path)  # the same errors as the generator's
    name = str(path) if name is None else name
    key = hashlib.sha256(raw).hexdigest()
    schema = _LOADED.get(key)
    if schema is None:
        _refuse_non_schema(raw, name)
        schema = parse_schema(raw, name)
        if len(_LOADED) >= 16:
            _LOADED.pop(next(iter(_LOADED)))
        _LOADED[key] = schema
    return replace(schema, path=name, location=str(path))


def _refuse_non_schema(raw: bytes, name: str) -> None:
    """Refuse, saying what it holds instead, a file that is not a JSON
    Schema with definitions: an ACP schema is a JSON object whose ``$defs``
    holds the types. Checked before the metaschema, which would complain
    about whichever keyword of, say, a ``package.json`` it trips on first.
    A file that is not JSON at all is left to ``parse_schema``'s exact
    error, unless it is JSON lines (a transcript)."""
    try:
        document = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        lines = [line for line in raw.splitlines() if line.strip()]
        try:
            first = json.loads(lines[0]) if len(lines) > 1 else None
        except (ValueError, UnicodeDecodeError):
            first = None
        if first is None:
            return
        what = f"JSON lines ({len(lines)} lines, the first {_describe(first)})"
        if isinstance(first, dict) and ("jsonrpc" in first or "message" in first):
            what += ": a transcript of JSON-RPC messages, which `acpgen validate` checks"
        raise AcpgenError(
            f"not an ACP JSON Schema (a JSON object whose $defs holds the types): it holds {what}", file=name
        ) from None
    if isinstance(document, dict):
        defs = document.get("$defs")
        if isinstance(defs, dict) and defs:
            return
        what = _describe(document)
        if "$defs" in document:
            what += f", whose $defs is {'empty' if defs in ({}, []) else 'not an object'}"
        else:
            what += ", without $defs"
        if {"name", "version"} <= set(document) and "$defs" not in document:
            what += " (an npm package.json? its schemas are under schema/ in the package)"
        elif "jsonrpc" in document:
            what += " (a JSON-RPC message)"
    else:
        what = _describe(document)
    raise AcpgenError(
        f"not an ACP JSON Schema (a JSON object whose $defs holds the types): it holds {what}", file=name, pointer=""
    )


def _describe(value: Json) -> str:
    if isinstance(value, dict):
        keys = [k for k in value]
        shown = ", ".join(keys[:6]) + (f" and {len(keys) - 6} more" if len(keys) > 6 else "")
        return f"a JSON object with the keys {shown}" if keys else "an empty JSON object"
    if isinstance(value, list):
        return f"a JSON array of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, bool):
        return "a JSON boolean"
    if value is None:
        return "JSON null"
    if isinstance(value, str):
        return "a JSON string"
    return "a JSON number"


def diff_schemas(
    old: Schema,
    new: Schema,
    *,
    old_version: str | None = None,
    new_version: str | None = None,
) -> SchemaDiff:
    """The diff of two loaded schemas. The versions default to what
    SOURCE.json beside each file records (see ``pipeline.schema_version``)."""
    before = _Side(old, "old")
    after = _Side(new, "new")
    differ = _Differ(before, after)
    changes = differ.run()
    changes = sorted(changes, key=lambda c: (c.definition, c.path, KINDS.index(c.kind), c.summary))
    return SchemaDiff(
        old=_info(old, old_version),
        new=_info(new, new_version),
        changes=tuple(changes),
    )


def _info(schema: Schema, version: str | None) -> SchemaInfo:
    if version is None:
        try:
            version = schema_version(schema)
        except OSError:  # pragma: no cover - an unreadable SOURCE.json
            version = ""
    return SchemaInfo(file=schema.path, sha256=schema.sha256, version=version, title=schema.title)
