"""The IR stage for capability helpers.

A capability that is advertised by its presence is a trap in Python: ``{}``
decodes to an object with no members, and code that tests its truthiness
misses it. The schemas say which fields work this way:

* v2 states it in prose on each such field: "Omitted and `null` are
  equivalent and mean ... does not advertise ...", with "Supplying `{}`
  means ..." or "An object (including `{}`) means supported";
* v1 uses booleans with a schema default of ``false``.

Every field of either kind, in a definition whose name ends in
``Capabilities``, becomes a :class:`~acpgen.compile.ir.Capability`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .. import ir
from .options import Options

_OMITTED_AND_NULL = re.compile(r"Omitted and `null` are equivalent and mean")
_PRESENCE = re.compile(r"Supplying `\{\}`|An object \(including `\{\}`\) means|advertise", re.IGNORECASE)


def find_capabilities(package: ir.Package) -> ir.Package:
    defs = {d.name: d for d in package.definitions}
    found = []
    for definition in package.definitions:
        if not isinstance(definition, ir.ObjectDef) or not definition.name.endswith("Capabilities"):
            continue
        for f in definition.fields:
            kind = _kind(f, defs)
            if kind is not None:
                found.append(
                    ir.Capability(class_name=definition.class_name, field=f.name, wire_name=f.wire_name, kind=kind)
                )
    return replace(package, capabilities=tuple(found))


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: :func:`find_capabilities`."""
    return find_capabilities(package)


def _kind(f: ir.Field, defs: dict[str, ir.Definition]) -> ir.CapabilityKind | None:
    if f.wire_name == "_meta":
        return None
    if f.value_type.kind == "bool" and f.default is False:
        return "flag"
    target = f.value_type
    if (
        f.nullable
        and target.kind == "ref"
        and isinstance(defs.get(target.name), ir.ObjectDef)
        and _OMITTED_AND_NULL.search(f.description)
        and _PRESENCE.search(f.description)
    ):
        return "presence"
    return None
