"""Walking the IR's type expressions: what a type is made of, and every
type expression of a definition or a package, for the stages that read
them all (the fallback record of lowering, the analysis pass)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .defs import AliasDef, Definition, ObjectDef, UnionDef
from .package import Package
from .types import FirstMatchT, ListT, MapT, NullableT, ScalarUnionT, TypeExpr

__all__ = ["children", "definition_types", "type_exprs", "walk"]


def children(t: TypeExpr) -> tuple[TypeExpr, ...]:
    """The type expressions ``t`` is made of, one level down."""
    if isinstance(t, NullableT):
        return (t.inner,)
    if isinstance(t, ListT):
        return (t.items,)
    if isinstance(t, MapT):
        return (t.values,)
    if isinstance(t, (ScalarUnionT, FirstMatchT)):
        return t.members
    return ()


def walk(roots: Iterable[TypeExpr]) -> Iterator[TypeExpr]:
    """Every type expression of ``roots``, nested ones included, depth first."""
    for root in roots:
        yield root
        yield from walk(children(root))


def definition_types(definition: Definition) -> tuple[TypeExpr, ...]:
    """The outermost type expressions of a definition: its fields' types (a
    union's: every variant's), or an alias's target."""
    if isinstance(definition, ObjectDef):
        return tuple(f.type for f in definition.fields)
    if isinstance(definition, UnionDef):
        return tuple(f.type for v in definition.variants for f in v.fields)
    if isinstance(definition, AliasDef):
        return (definition.target,)
    return ()


def type_exprs(package: Package) -> Iterator[TypeExpr]:
    """Every type expression of the package's definitions and patch states,
    nested ones included."""
    roots = [t for d in package.definitions for t in definition_types(d)]
    roots += [f.type for u in package.upserts for f in u.fields]
    return walk(roots)
