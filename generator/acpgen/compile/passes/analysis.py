"""The analysis pass before rendering: facts about the whole package the
templates need and would otherwise work out while printing.

* :func:`alias_order`: the type aliases in an order where each comes after
  the aliases its value names (they are evaluated when the module loads); an
  alias that refers to itself is an error;
* :func:`referenced`: the definitions another type names (whose encoders
  the codec calls);
* whether any type is a constant (the models import ``Literal``).

:func:`analyse` stores them in the package (:class:`~acpgen.compile.ir.Package`
``alias_order``, ``referenced``, ``uses_const``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Literal

from ...errors import AcpgenError
from .. import ir
from ..ir.walk import type_exprs, walk
from .options import Options


def analyse(package: ir.Package) -> ir.Package:
    """The package with the facts its templates print from."""
    exprs = list(type_exprs(package))
    return replace(
        package,
        alias_order=alias_order(package),
        referenced=referenced(package, exprs),
        uses_const=any(t.kind == "const" for t in exprs),
    )


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: :func:`analyse`."""
    return analyse(package)


def alias_order(package: ir.Package) -> tuple[str, ...]:
    """The ``$defs`` names of the type aliases (plain and union) in an order
    where each comes after the aliases its value names."""
    aliases = {d.name: d for d in package.definitions if isinstance(d, (ir.AliasDef, ir.UnionDef))}
    ordered: list[str] = []
    state: dict[str, Literal["active", "done"]] = {}

    def visit(name: str) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "active":
            raise AcpgenError(f"the type alias {name!r} refers to itself", file=package.schema_path)
        state[name] = "active"
        definition = aliases[name]
        if isinstance(definition, ir.AliasDef):
            for ref in _refs(definition.target):
                if ref in aliases:
                    visit(ref)
        state[name] = "done"
        ordered.append(name)

    for name in aliases:
        visit(name)
    return tuple(ordered)


def referenced(package: ir.Package, exprs: Iterable[ir.TypeExpr] | None = None) -> frozenset[str]:
    """The definitions another type names (whose encoders the codec calls)."""
    names: set[str] = set()
    for t in type_exprs(package) if exprs is None else exprs:
        if isinstance(t, ir.RefT):
            names.add(t.name)
        elif isinstance(t, ir.KeyedT):
            names.update(t.refs)
    for definition in package.definitions:
        if isinstance(definition, ir.UnionDef):
            names.update(v.wraps for v in definition.variants if v.wraps)
    return frozenset(names)


def _refs(t: ir.TypeExpr) -> Iterator[str]:
    for node in walk((t,)):
        if isinstance(node, ir.RefT):
            yield node.name
        elif isinstance(node, ir.KeyedT):
            yield from node.refs
