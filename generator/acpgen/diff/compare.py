"""The entry points of the comparison: :func:`diff_files`,
:func:`diff_schemas`, and :func:`load_cached`, which loads a schema once per
content (refusing, in one line, a file that is not an ACP JSON Schema)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from ..compile.load import Schema, load_schema, parse_schema
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
        try:
            raw = Path(path).read_bytes()
        except OSError:
            return load_schema(path)  # the same error as the generator's
    name = str(path) if name is None else name
    key = hashlib.sha256(raw).hexdigest()
    schema = _LOADED.get(key)
    if schema is None:
        schema = parse_schema(raw, name)
        if len(_LOADED) >= 16:
            _LOADED.pop(next(iter(_LOADED)))
        _LOADED[key] = schema
    return replace(schema, path=name, location=str(path))


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
