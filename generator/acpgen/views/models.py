"""The view of ``models.py``: the schema's types as classes and aliases."""

from __future__ import annotations

from ..compile import ir
from ..records import dataclass
from . import text
from .inputs import ViewInputs
from .source import Namer, doc, field_line, header, init_signature, literal, value

SUMMARY = (
    "The types of the schema: a dataclass per object, an enum per set of constants, a class per union variant,"
    " a NewType per named string type (call it on a str to make one), and type aliases for the rest.\n\n"
    "An optional field is UNSET when it is omitted on the wire and None when it is JSON null."
)


def _private(name: str) -> str:
    """What the module imports ``name`` from ``typing`` as."""
    return "_" + name


@dataclass(frozen=True)
class EnumMemberView:
    name: str
    value: str
    """The member's value as a literal."""
    doc: str
    """Its docstring, indented for the class body (empty: none)."""


@dataclass(frozen=True)
class EnumView:
    class_name: str
    base: str
    """The value type's builtin as the module names it."""
    doc: str
    members: tuple[EnumMemberView, ...]


@dataclass(frozen=True)
class AttributeView:
    """A class attribute: its declaration line and docstring (empty: none)."""

    line: str
    doc: str


@dataclass(frozen=True)
class InitView:
    """The keyword-only ``__init__`` the dataclass decorator would write."""

    params: str
    body: tuple[str, ...]


@dataclass(frozen=True)
class ClassView:
    """A dataclass: an object definition, a union variant or a state."""

    class_name: str
    base: str
    """``_Model`` or ``_State``."""
    doc: str
    attributes: tuple[AttributeView, ...]
    """Every attribute with its docstring, a blank line before each."""
    init: InitView


@dataclass(frozen=True)
class AliasView:
    name: str
    value: str
    doc: str
    new_type: bool
    """A named string type: ``NAME = NewType("NAME", value)``, not an alias."""
    name_literal: str
    """The name as a string literal (``NewType``'s first argument)."""


@dataclass(frozen=True)
class ModelsView:
    header: str
    uses_const: bool
    """``Literal`` is imported."""
    has_states: bool
    """``State`` is imported."""
    uses_new_type: bool
    """``NewType`` is imported."""
    exports: tuple[str, ...]
    """``__all__`` as string literals."""
    enums: tuple[EnumView, ...]
    classes: tuple[ClassView, ...]
    """The objects' and the variants' classes in definition order, then the states."""
    aliases: tuple[AliasView, ...]
    """Each after the names its value uses."""


def build_models_view(inputs: ViewInputs) -> ModelsView:
    package, names, defs = inputs.package, inputs.names, inputs.defs
    annotate = text.Annotations(defs, names.annotation_ref, names.builtin, _private)
    # A type alias's value is evaluated at import (after the classes it
    # names): the schema's names as they are.
    alias_value = text.Annotations(defs, names.ref, names.builtin, _private)
    # Built in the order the module prints them: a class body changes how
    # the builtins its attributes shadow are named.
    enums = tuple(_enum(d, names.builtin) for d in package.definitions if isinstance(d, ir.EnumDef))
    classes: list[ClassView] = []
    for d in package.definitions:
        if isinstance(d, ir.ObjectDef):
            classes.append(_object(d, inputs, annotate))
        elif isinstance(d, ir.UnionDef):
            classes.extend(_variant(d, v, inputs, annotate) for v in d.variants if not v.reuses_ref)
    classes.extend(_state(u, inputs, annotate) for u in package.upserts)
    names.enter_class([])
    aliases = tuple(_alias(defs[name], alias_value) for name in package.alias_order)
    return ModelsView(
        header=header(package, inputs.generator_version, SUMMARY),
        uses_const=package.uses_const,
        has_states=bool(package.upserts),
        uses_new_type=any(a.new_type for a in aliases),
        exports=tuple(literal(n) for n in inputs.exports["models"]),
        enums=enums,
        classes=tuple(classes),
        aliases=aliases,
    )


def _enum(d: ir.EnumDef, builtin: Namer) -> EnumView:
    members = tuple(EnumMemberView(m.name, literal(m.value), doc(m.description or m.title, 4)) for m in d.members)
    return EnumView(d.class_name, builtin(d.value_kind), doc(text.enum_doc(d), 4), members)


def _fields(fields: tuple[ir.Field, ...], inputs: ViewInputs, annotate: text.Annotations) -> list[AttributeView]:
    return [AttributeView(field_line(f, annotate, inputs.names.ref), doc(text.field_doc(f), 4)) for f in fields]


def _init(params: tuple[ir.InitParam, ...], inputs: ViewInputs) -> InitView:
    signature, body = init_signature(params, inputs.names.ref)
    return InitView(signature, body)


def _object(d: ir.ObjectDef, inputs: ViewInputs, annotate: text.Annotations) -> ClassView:
    names = inputs.names
    names.enter_class([*(f.name for f in d.fields), "METHOD"])
    attributes: list[AttributeView] = []
    if d.method:
        attributes.append(
            AttributeView(
                f"METHOD: _ClassVar[{names.builtin('str')}] = {literal(d.method.name)}",
                f'"""The JSON-RPC method ({d.method.side} side)."""',
            )
        )
    attributes.extend(_fields(d.fields, inputs, annotate))
    return ClassView(
        d.class_name, "_Model", doc(d.description or d.name, 4), tuple(attributes), _init(d.init_params, inputs)
    )


def _variant(d: ir.UnionDef, v: ir.Variant, inputs: ViewInputs, annotate: text.Annotations) -> ClassView:
    names = inputs.names
    names.enter_class([*(f.name for f in v.fields), d.tag_name, "extra", "value", "METHOD"])
    attributes: list[AttributeView] = []
    if v.role == ir.TAGGED:
        attributes.append(AttributeView(f"{d.tag_name}: _ClassVar[{names.builtin('str')}] = {literal(v.tag)}", ""))
    elif v.role == ir.UNTAGGED and d.tag:
        attributes.append(AttributeView(f"{d.tag_name}: _ClassVar[None] = None", ""))
    if v.role == ir.CATCH_ALL:
        attributes.append(AttributeView(f"{d.tag_name}: {names.builtin('str')}", f'"""The `{d.tag}` value."""'))
    if v.wraps:
        attributes.append(
            AttributeView(
                f"value: {names.annotation_ref(inputs.defs[v.wraps].class_name)}",
                '"""The payload, which shares the JSON object with the tag."""',
            )
        )
    attributes.extend(_fields(v.fields, inputs, annotate))
    if v.role == ir.CATCH_ALL:
        attributes.append(
            AttributeView(
                f"extra: {names.builtin('dict')}[{names.builtin('str')}, _Any] = _field(default_factory=lambda: {{}})",
                '"""The other members of the JSON object, as they were."""',
            )
        )
    return ClassView(
        v.class_name,
        "_Model",
        doc(text.variant_doc(inputs.defs, d, v), 4),
        tuple(attributes),
        _init(d.init_params(v), inputs),
    )


def _state(u: ir.Upsert, inputs: ViewInputs, annotate: text.Annotations) -> ClassView:
    inputs.names.enter_class(f.name for f in u.fields)
    attributes: list[AttributeView] = []
    for f in u.fields:
        declared = f"{f.name}: {annotate(f.type)}"
        if f.rule == "key" or f.initial is None:
            line = declared
        elif f.initial.mutable:
            line = f"{declared} = _field(default_factory=lambda: {value_of(f.initial, inputs)})"
        else:
            line = f"{declared} = {value_of(f.initial, inputs)}"
        attributes.append(AttributeView(line, f'"""{text.rule_doc(f)}"""'))
    return ClassView(
        u.state_class, "_State", doc(text.state_doc(u), 4), tuple(attributes), _init(u.init_params, inputs)
    )


def value_of(v: ir.Value, inputs: ViewInputs) -> str:
    return value(v, inputs.names.ref)


def _alias(d: ir.Definition, alias_value: text.Annotations) -> AliasView:
    if isinstance(d, ir.UnionDef):
        target = " | ".join(v.class_name for v in d.variants)
    else:
        assert isinstance(d, ir.AliasDef)
        target = alias_value(d.target)
    new_type = isinstance(d, ir.AliasDef) and d.named_string
    return AliasView(d.class_name, target, doc(d.description or d.name), new_type, literal(d.class_name))
