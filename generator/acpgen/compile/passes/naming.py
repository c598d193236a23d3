"""Stage 3, naming: give every definition, variant, field and enum member its
Python identifier.

All names that reach the generated code are made here, from schema text that
is input and may be hostile: each is reduced to ASCII letters, digits and
underscores, kept clear of keywords, and made unique without numbers (a
colliding name gets a trailing underscore). The result depends only on the
schema, so two runs agree.

A ``$defs`` name that is an ASCII identifier, not a keyword (nor
``annotations``, :data:`MODULE_RESERVED`) and not underscore-first is kept
exactly: ``RequestId``, ``str``, ``Connection`` or
``UNSET`` included. The generated modules keep clear of the schema's names
instead (:mod:`acpgen.views.names`): their own imports and helpers are
underscore-first, and they reach a builtin or a fixed name a schema name
hides another way. Only the attributes of a class are reserved here: a field
may not take one its runtime base class has (``to_wire`` ...,
:mod:`acpgen.compile.passes.attributes`).
"""

from __future__ import annotations

import keyword
from collections.abc import Set as AbstractSet
from dataclasses import replace

from .. import ir
from .attributes import model_attributes
from .identifiers import pascal, snake, upper_snake
from .options import Options

# Attribute names a generated class has from its runtime base class.
RESERVED_ATTRIBUTES = model_attributes()

MODULE_RESERVED = frozenset({"annotations"})
"""Module-level names no schema name may take besides the keywords:
``from __future__ import annotations``, which every generated module starts
with, binds ``annotations`` (a type checker refuses a class of that name
beside it)."""

CATCH_ALL_EXTRA = "extra"
"""The attribute of a catch-all variant that keeps the members it does not
declare, as JSON."""
WRAPPED_VALUE = "value"
"""The attribute of a variant that wraps another union."""

UNION_ATTRIBUTES = RESERVED_ATTRIBUTES | {CATCH_ALL_EXTRA, WRAPPED_VALUE}
"""What a union variant class has besides its fields."""


def _not_digit_first(name: str, prefix: str) -> str:
    return prefix + name if name[:1].isdigit() else name


def _taken(name: str, used: set[str], reserved: AbstractSet[str] = frozenset()) -> bool:
    return name in used or keyword.iskeyword(name) or name in reserved


def unique(name: str, used: set[str], reserved: AbstractSet[str] = frozenset()) -> str:
    """``name``, or ``name_``, ``name__`` ... whichever is free; recorded in ``used``."""
    while _taken(name, used, reserved):
        name += "_"
    used.add(name)
    return name


def class_name(def_name: str) -> str:
    """A definition keeps its ``$defs`` name when that is a usable identifier
    (not starting with an underscore, which the generated modules keep for
    their own names)."""
    if def_name.isidentifier() and def_name.isascii() and not def_name.startswith("_"):
        return def_name
    return _not_digit_first(pascal(def_name), "T")


def field_name(wire: str) -> str:
    """``toolCallId`` -> ``tool_call_id``; ``_meta`` -> ``meta``."""
    return _not_digit_first(snake(wire), "f_")


def member_name(member: ir.EnumMember) -> str:
    if member.title:
        return _not_digit_first(upper_snake(member.title), "V_")
    if isinstance(member.value, int):
        return ("MINUS_" if member.value < 0 else "VALUE_") + str(abs(member.value))
    return _not_digit_first(upper_snake(member.value), "V_")


def name_package(package: ir.Package, package_name: str) -> ir.Package:
    """The package with every Python name filled in. Module-level names are
    unique among themselves and neither keywords nor ``annotations``
    (:data:`MODULE_RESERVED`); nothing else is reserved."""
    module_names: set[str] = set()
    # Definitions first, in $defs order, so they keep their names whenever
    # they can; variant classes are fitted around them.
    def_classes: dict[str, str] = {}
    for definition in package.definitions:
        def_classes[definition.name] = unique(class_name(definition.name), module_names, MODULE_RESERVED)
    named: list[ir.Definition] = []
    for definition in package.definitions:
        cls = def_classes[definition.name]
        if isinstance(definition, ir.ObjectDef):
            named.append(replace(definition, class_name=cls, fields=_name_fields(definition.fields)))
        elif isinstance(definition, ir.EnumDef):
            used: set[str] = set()
            members = tuple(
                replace(m, name=unique(member_name(m), used, {"name", "value"})) for m in definition.members
            )
            named.append(replace(definition, class_name=cls, members=members))
        elif isinstance(definition, ir.UnionDef):
            named.append(_name_union(definition, cls, module_names, def_classes))
        else:
            named.append(replace(definition, class_name=cls))
    return replace(package, name=package_name, definitions=tuple(named))


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: every name of the package (:func:`name_package`)."""
    return name_package(package, options.package_name)


def _name_fields(fields: tuple[ir.Field, ...], extra_reserved: AbstractSet[str] = frozenset()) -> tuple[ir.Field, ...]:
    used: set[str] = set()
    reserved = RESERVED_ATTRIBUTES | set(extra_reserved)
    return tuple(replace(f, name=unique(field_name(_wire_label(f)), used, reserved)) for f in fields)


def _wire_label(f: ir.Field) -> str:
    """What a field's name comes from: its wire name, or for a flattened
    field (which has none) what its members have in common."""
    if f.flatten and isinstance(f.type, ir.KeyedT):
        return f.type.label
    return f.wire_name


def _name_union(union: ir.UnionDef, cls: str, module_names: set[str], def_classes: dict[str, str]) -> ir.UnionDef:
    # The tag is an attribute of every variant class: it must be a name no
    # generated member takes (from_wire, to_wire, the catch-all's extra, a
    # wrapper's value) and not a keyword.
    tag_name = unique(field_name(union.tag), set(), UNION_ATTRIBUTES) if union.tag else ""
    variants = []
    for variant in union.variants:
        if variant.reuses_ref:
            assert variant.ref is not None  # lower sets reuses_ref only on a variant with a ref
            variants.append(replace(variant, class_name=def_classes[variant.ref]))
            continue
        label = variant.tag if variant.role == ir.TAGGED else variant.title
        base = pascal(label or "")
        candidates = [_not_digit_first(base + cls, "T"), cls + base, cls + base + "Variant"]
        name = next(
            (c for c in candidates if not _taken(c, module_names, MODULE_RESERVED)),
            candidates[-1],
        )
        name = unique(name, module_names, MODULE_RESERVED)
        # The tag is an attribute of every variant (a constant on the tagged
        # ones), so no field may take its name.
        taken = {tag_name} if tag_name else set()
        if variant.role == ir.CATCH_ALL:
            taken.add(CATCH_ALL_EXTRA)
        fields = _name_fields(variant.fields, taken)
        if variant.role == ir.NULL_TAG:
            fields = tuple(replace(f, name=tag_name) if f.wire_name == union.tag else f for f in fields)
        variants.append(replace(variant, class_name=name, fields=fields))
    return replace(union, class_name=cls, tag_name=tag_name, variants=tuple(variants))
