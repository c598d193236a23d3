"""The IR stage's last step: schema ``default`` values as Python values.

A default is JSON in the schema; the generated code constructs it as the
typed value it decodes to (``ClientCapabilities(fs=FileSystemCapabilities(...))``,
an enum member ...), so a dataclass default and the codec's value for an
omitted field are the same thing. A default that does not fit its field's
type is an error in the schema.
"""

from __future__ import annotations

from dataclasses import replace

from .. import ir
from .options import Options
from .values import ValueBuilder


def resolve_defaults(package: ir.Package) -> ir.Package:
    builder = ValueBuilder(package)
    definitions = []
    for definition in package.definitions:
        if isinstance(definition, ir.ObjectDef):
            definition = replace(definition, fields=builder.fields(definition.name, definition.fields))
        elif isinstance(definition, ir.UnionDef):
            variants = tuple(replace(v, fields=builder.fields(definition.name, v.fields)) for v in definition.variants)
            definition = replace(definition, variants=variants)
        definitions.append(definition)
    return replace(package, definitions=tuple(definitions))


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: :func:`resolve_defaults`."""
    return resolve_defaults(package)
