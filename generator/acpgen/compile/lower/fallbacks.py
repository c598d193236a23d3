"""Where lowering falls back, and why: every :class:`~acpgen.compile.ir.RawT`
(a value kept as JSON, ``Any`` in Python) and every definition that is an
alias because the recognisers of its kind declined it, each with its JSON
pointer and the reasons lowering gave (``acpgen generate --explain``)."""

from __future__ import annotations

from collections.abc import Iterable

from .. import ir
from ..ir.walk import definition_types, walk


def collect_fallbacks(definitions: Iterable[ir.Definition]) -> tuple[ir.Fallback, ...]:
    """The fallbacks of ``definitions``, in their order, each pointer once
    (a variant carries the fields of the definition it refers to, and so the
    same places)."""
    found: dict[str, ir.Fallback] = {}
    for definition in definitions:
        if isinstance(definition, ir.AliasDef) and definition.declined:
            target = definition.target
            if isinstance(target, ir.RawT) and target.pointer == definition.pointer:
                # The alias is Any: one entry, with every reason.
                entry = ir.Fallback(target.pointer, "any", (*definition.declined, target.reason), definition.name)
            else:
                entry = ir.Fallback(definition.pointer, "alias", definition.declined, definition.name)
            found.setdefault(entry.pointer, entry)
        for t in walk(definition_types(definition)):
            if isinstance(t, ir.RawT):
                found.setdefault(t.pointer, ir.Fallback(t.pointer, "any", (t.reason,)))
    return tuple(found.values())
