"""Stage 1, load: read a schema file (:mod:`.schema`), refuse what is not
JSON (:mod:`.jsontext`), check it against the 2020-12 metaschema and resolve
every ``$ref``. The result, a :class:`~.schema.Schema`, is what lowering
reads; this package's names below are what the other stages and tools use.
"""

from __future__ import annotations

from .schema import (
    Schema,
    canonical_ref,
    iter_objects,
    iter_refs,
    load_schema,
    parse_schema,
    read_schema_bytes,
    ref_target,
)

__all__ = [
    "Schema",
    "canonical_ref",
    "iter_objects",
    "iter_refs",
    "load_schema",
    "parse_schema",
    "read_schema_bytes",
    "ref_target",
]
