"""The view of ``codec.py``: a decoder and an encoder per type, and the
tables the runtime's ``decode``, ``decode_class`` and ``encode`` are built over.

The expressions that decode or encode one value are composed here
(:class:`Expressions`): which runtime check a scalar gets and with which
bounds, which alias is decoded in place, when a field of a tagged union
looks the variant up itself, the JSON-kind map of a scalar union. The
statements around them are the template's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..compile import ir
from ..records import dataclass
from ..vocabulary import JSON_TYPES
from . import text
from .inputs import ViewInputs
from .names import ModuleNames
from .source import absent, field_type, header, literal

SUMMARY = (
    "The wire codec: one decode and one encode function per type, generated straight from the schema.\n\n"
    "Decoding is lenient by default, with the reference semantics (the x-deserialize-* keywords, defaults,"
    " open enums, catch-all variants); strict=True first validates against the schema itself, as a JSON"
    " Schema 2020-12 validator does, and salvages nothing."
)

PLAIN_KINDS = frozenset({"any", "str", "int", "num", "bool", "null", "const", "raw"})
"""Type expressions whose decoded Python value is its own wire form."""

INLINE_KINDS = frozenset({"any", "str", "int", "num", "bool", "const"})
"""Type expressions an alias of which is decoded in place, not by a call."""

JSON_KINDS: Mapping[str, str] = JSON_TYPES
"""The JSON type of each scalar-union member's kind (what ``_scalar_union`` dispatches on)."""


def _private(name: str) -> str:
    """What the module imports ``name`` from ``typing`` as."""
    return "_" + name


def pointer(p: str) -> str:
    """A schema pointer as the string literal the codec's tables hold."""
    return literal("#" + p)


class Expressions:
    """The expressions decoding and encoding one value of a type, in a
    module that names things with ``names``."""

    def __init__(self, defs: Mapping[str, ir.Definition], names: ModuleNames) -> None:
        self.defs = defs
        self.names = names
        self.annotation = text.Annotations(defs, names.annotation_ref, names.builtin, _private)

    def tag_dispatched(self, t: ir.TypeExpr) -> ir.UnionDef | None:
        """The union ``t`` refers to when a decoder of ``t`` may look up the
        variant for the tag itself (:attr:`ir.UnionDef.dispatch_by_tag`)."""
        if not isinstance(t, ir.RefT):
            return None
        target = self.defs[t.name]
        return target if isinstance(target, ir.UnionDef) and target.dispatch_by_tag else None

    def class_name(self, name: str) -> str:
        return self.defs[name].class_name

    def decode(self, t: ir.TypeExpr, v: str, dispatch: bool = False) -> str:
        """An expression decoding the JSON value in variable ``v`` as ``t``; it
        raises ValidationError with the path below ``v``. With ``dispatch``,
        a tagged union's variant is looked up by the ``tag`` local."""
        if isinstance(t, ir.AnyT):
            return f"_any_value({v}, strict)"
        if isinstance(t, ir.StrT):
            return self._str(t, v)
        if isinstance(t, ir.BoolT):
            return f"({v} if type({v}) is bool else _check_bool({v}))"
        if isinstance(t, ir.IntT):
            return self._int(t, v)
        if isinstance(t, ir.NumT):
            low = "-_FLOAT_MAX" if t.minimum is None else literal(t.minimum)
            high = "_FLOAT_MAX" if t.maximum is None else literal(t.maximum)
            check = f"_check_num({v}, {literal(t.minimum)}, {literal(t.maximum)})"
            return f"({v} if type({v}) is float and {low} <= {v} <= {high} else {check})"
        if isinstance(t, ir.NullT):
            return f"(None if {v} is None else _not_null({v}))"
        if isinstance(t, ir.ConstT):
            return f"_check_const({v}, {literal(t.value)})"
        if isinstance(t, ir.ListT):
            least = "" if t.min_items is None else f", {t.min_items}"
            u = self.tag_dispatched(t.items)
            if u is not None:
                check = "_check_variants_skipping" if t.skip_invalid else "_check_variants"
                return (
                    f"{check}({v}, {literal(u.tag)}, _VARIANTS_{u.class_name}, _decode_{u.class_name}, strict{least})"
                )
            check = "_check_list_skipping" if t.skip_invalid else "_check_list"
            return f"{check}({v}, {self.item(t.items)}, strict{least})"
        if isinstance(t, ir.MapT):
            values = "None" if isinstance(t.values, ir.AnyT) else self.item(t.values)
            return f"_check_map({v}, {values}, strict)"
        if isinstance(t, ir.RefT):
            return self._ref(t, v, dispatch)
        if isinstance(t, ir.NullableT):
            return f"(None if {v} is None else {self.decode(t.inner, v, dispatch)})"
        if isinstance(t, ir.ScalarUnionT):
            by_kind = "".join(f"{literal(JSON_KINDS[m.kind])}: {self.item(m)}, " for m in t.members)
            expected = _either(JSON_KINDS[m.kind] for m in t.members)
            union = literal(self.annotation(t))
            return f"_cast({union}, _scalar_union({v}, strict, {{ {by_kind}}}, {literal(expected)}))"
        if isinstance(t, ir.FirstMatchT):
            members = "".join(f"{self.item(m)}, " for m in t.members)
            union = literal(self.annotation(t))
            if t.exclusive:
                several = literal("the value matches more than one of the shapes of a oneOf")
                return f"_cast({union}, _exactly_one({v}, strict, ({members}), {several}))"
            return f"_cast({union}, _first_match({v}, strict, ({members})))"
        if isinstance(t, ir.RawT):
            return f"_check_raw({v}, {pointer(t.pointer)}, strict)"
        raise ValueError(f"no decoding expression for {t.kind}")

    def _str(self, t: ir.StrT, v: str, named: str = "") -> str:
        """Decoding a string; with ``named``, a named string type's
        annotation, as a value of that type. Its check then compares with
        ``_any_str`` (``str`` typed Any, so the string keeps the type the
        local or the return is declared with) and the checks that return
        cast what they return: the cost is on the error path and in strict
        mode only, never a call for a valid string in lenient mode."""
        if named:
            same, typed = "_any_str", f"_cast({literal(named)}, {{}})"
        else:
            same, typed = "str", "{}"
        lenient = f"({v} if type({v}) is {same} else {typed.format(f'_check_str({v})')})"
        if t.pattern is not None:
            check = typed.format(f"_check_str({v}, {literal(t.min_length)}, {literal(t.pattern)})")
            return f"({check} if strict else {lenient})"
        if t.min_length is not None:
            check = typed.format(f"_check_str({v}, {t.min_length})")
            return f"({check} if strict else {lenient})"
        return lenient

    def _int(self, t: ir.IntT, v: str) -> str:
        low, high = t.lenient_min, t.lenient_max
        bounds = ""
        if low is not None or high is not None:
            bounds = " and " + (f"{literal(low)} <= " if low is not None else "") + v
            bounds += f" <= {literal(high)}" if high is not None else ""
        schema = f"_check_int({v}, {literal(t.minimum)}, {literal(t.maximum)})"
        if low == t.minimum and high == t.maximum:
            check = schema
        else:
            check = f"({schema} if strict else _check_int({v}, {literal(low)}, {literal(high)}))"
        return f"({v} if type({v}) is int{bounds} else {check})"

    def _ref(self, t: ir.RefT, v: str, dispatch: bool) -> str:
        d = self.defs[t.name]
        if isinstance(d, ir.AliasDef) and isinstance(d.target, ir.StrT) and d.named_string:
            return self._str(d.target, v, self.annotation(t))
        if isinstance(d, ir.AliasDef) and d.target.kind in INLINE_KINDS:
            return self.decode(d.target, v)
        if isinstance(d, ir.EnumDef):
            members = f"_MEMBERS_{d.class_name}"
            return (
                f"({members}[{v}] if type({v}) is {d.value_kind} and {v} in {members}"
                f" else _decode_{d.class_name}({v}, strict))"
            )
        u = self.tag_dispatched(t) if dispatch else None
        if u is not None:
            return (
                f"(_VARIANTS_{u.class_name}.get(tag, _decode_{u.class_name}) if type(tag) is str"
                f" else _decode_{u.class_name})({v}, strict)"
            )
        return f"_decode_{d.class_name}({v}, strict)"

    def item(self, t: ir.TypeExpr) -> str:
        """A callable ``(value, strict) -> decoded`` for list items and map values."""
        if isinstance(t, ir.RefT):
            return f"_decode_{self.class_name(t.name)}"
        if isinstance(t, ir.AnyT):
            return "_any_value"
        return f"lambda x, strict: {self.decode(t, 'x')}"

    def encode(self, t: ir.TypeExpr, v: str) -> str:
        """An expression giving the wire form of the Python value in ``v``."""
        if t.kind in ("any", "raw"):
            return f"_wire_json({v})"
        if t.kind in PLAIN_KINDS:
            return v
        if isinstance(t, ir.ListT):
            if t.items.kind in ("any", "raw"):
                return f"list(_wire_json({v}))"
            item = self.encode(t.items, "x")
            if t.items.kind in PLAIN_KINDS or item == "x":
                return f"list({v})"
            return f"[{item} for x in {v}]"
        if isinstance(t, ir.MapT):
            if t.values.kind in ("any", "raw"):
                return f"_wire_map({v})"
            value = self.encode(t.values, "x")
            if t.values.kind in PLAIN_KINDS or value == "x":
                return f"dict({v})"
            return f"{{k: {value} for k, x in {v}.items()}}"
        if isinstance(t, ir.RefT):
            d = self.defs[t.name]
            if isinstance(d, ir.AliasDef):
                return self.encode(d.target, v)
            if isinstance(d, ir.EnumDef):
                return f"({v}._value_ if type({v}) is {self.names.ref(d.class_name)} else {v})"
            if isinstance(d, ir.UnionDef):
                # The variant's encoder looked up in place (no call of the
                # union's encoder, which the lookup falls back to: it raises
                # the error for a class that has none).
                return f"(_CLASS_ENCODERS.get(type({v})) or _encode_{d.class_name})({v})"
            return f"_encode_{d.class_name}({v})"
        if isinstance(t, ir.NullableT):
            if t.inner.kind in ("any", "raw"):
                return f"_wire_json({v})"
            if t.inner.kind in PLAIN_KINDS:
                return v
            return f"(None if {v} is None else {self.encode(t.inner, v)})"
        if isinstance(t, (ir.ScalarUnionT, ir.FirstMatchT)):
            return f"encode({v})"
        return ""

    def looped(self, t: ir.TypeExpr, x: str) -> tuple[str, bool] | None:
        """For a list whose items each take an encoder (a field's value, built
        by a loop in the encoder's body: cheaper than a comprehension, which
        is a function call of its own before Python 3.12): the expression
        encoding item ``x``, and whether the list may be ``None``; else
        ``None``."""
        nullable = False
        while True:
            if isinstance(t, ir.NullableT) and not nullable:
                t, nullable = t.inner, True
            elif isinstance(t, ir.RefT):
                d = self.defs[t.name]
                if not isinstance(d, ir.AliasDef):
                    break
                t = d.target
            else:
                break
        if not isinstance(t, ir.ListT):
            return None
        item = self.encode(t.items, x)
        if t.items.kind in PLAIN_KINDS or item == x:
            return None  # list(...), a copy
        return item, nullable


def _either(kinds: Iterable[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    names = list(kinds)
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


# ---------------------------------------------------------------- statements


@dataclass(frozen=True)
class Candidate:
    """A member of a union told apart by its required keys."""

    condition: str
    """The test that the object has them (``True`` when there are none)."""
    decoder: str


@dataclass(frozen=True)
class KeyedDecoder:
    """A flattened field: the members whose keys the object has, tried."""

    name: str
    annotation: str
    union: str
    """The annotation as a string literal (what ``_cast`` takes)."""
    candidates: tuple[Candidate, ...]
    no_match: str
    exclusive: bool
    ambiguous: str


@dataclass(frozen=True)
class FieldDecoder:
    """The statements decoding one field of ``d`` into ``f_<name>``."""

    name: str
    keyed: KeyedDecoder | None
    """Set for a flattened field, which has nothing else."""
    annotation: str
    wire: str
    """The wire key as a literal."""
    required: bool
    absent: str
    """What an omitted optional field is."""
    default_on_null: bool
    on_null: str
    tag: str
    """The tag key as a literal, when the field's union variant is looked up
    by the tag here (``tag`` local); else empty."""
    decode: str
    raises: bool
    """An invalid value is an error in lenient mode too."""
    on_error: str
    """What lenient mode stores for an invalid value."""


@dataclass(frozen=True)
class Entry:
    """A wire member and the expression of its value; or, for a list whose
    items each take an encoder (``items`` set), the loop building it."""

    key: str
    source: str
    name: str = ""
    """The field's name, which the loop's locals ``l_<name>`` (the list)
    and ``x_<name>`` (an item) are named after."""
    items: str = ""
    """The expression encoding the item ``x_<name>``."""
    iterable: str = ""
    """What the loop runs over (nothing for ``None``)."""
    result: str = ""
    """The member's value after the loop (``None`` for ``None``)."""


@dataclass(frozen=True)
class Branch:
    keyword: str
    """``if`` or ``elif``."""
    cls: str
    encoder: str


@dataclass(frozen=True)
class KeyedEncoder:
    name: str
    branches: tuple[Branch, ...]
    members: str
    """The member names for the error, ``A or B``."""


@dataclass(frozen=True)
class OptionalEntry:
    name: str
    key: str
    source: str
    items: str = ""
    """As :class:`Entry`'s, over ``v_<name>``."""
    iterable: str = ""
    result: str = ""


@dataclass(frozen=True)
class FieldsEncoder:
    """The statements building and returning the wire dict ``d`` of object ``o``."""

    entries: tuple[Entry, ...]
    """The tag, the required fields and those with a default (never UNSET),
    in the dict literal: up to the first one built by a loop."""
    assigned: tuple[Entry, ...] = ()
    """The required fields from the first one built by a loop on, set in
    order after the literal (the wire form's order is the fields')."""
    keyed: tuple[KeyedEncoder, ...] = ()
    optional: tuple[OptionalEntry, ...] = ()
    """The optional fields, set only when they are not UNSET."""
    extra: bool = False
    """A catch-all variant: its ``extra`` members are added."""
    wraps: str = ""
    """The class name of a wrapped payload's definition, whose members are added."""


@dataclass(frozen=True)
class ObjectCodec:
    class_name: str
    ref: str
    undeclared: tuple[str, ...]
    """Required keys without a property, as literals."""
    closed: bool
    """Strict mode refuses undeclared keys (else checks that their values are JSON)."""
    declared: str
    """The declared keys as a list literal."""
    fields: tuple[FieldDecoder, ...]
    names: tuple[str, ...]
    """The fields' Python names."""
    encoder: FieldsEncoder


@dataclass(frozen=True)
class EnumCodec:
    class_name: str
    ref: str
    annotation: str
    value_kind: str
    decoder: str
    """The runtime's decoder of the enum, for what the codec does not find
    among its members in place (built over ``_MEMBERS_<class>``)."""


@dataclass(frozen=True)
class AliasCodec:
    class_name: str
    ref: str
    decode: str


@dataclass(frozen=True)
class VariantCodec:
    class_name: str
    ref: str
    tagged: bool
    catch_all: bool
    tag: str
    """The union's tag key as a literal."""
    value: str
    """The variant's tag value as a literal."""
    union: str
    """The union's class name."""
    tag_name: str
    reader_note: str
    """For a tagged or catch-all variant, which has a reader of an object
    whose tag was looked up: the comment saying by whom (else empty)."""
    fields: tuple[FieldDecoder, ...]
    names: tuple[str, ...]
    """The attributes the decoder sets from its ``f_<name>`` locals."""
    wraps: str
    """The class name of the wrapped payload's definition, or empty."""
    extra_known: str
    """A catch-all's known keys as a list literal."""
    known: str
    """The keys it reads as a list literal (empty: no ``_KNOWN_`` set)."""
    encoder: FieldsEncoder


@dataclass(frozen=True)
class TaggedDispatch:
    tag: str
    readers: tuple[Entry, ...]
    """Tag value literal -> ``_read_<Variant>``."""
    options: str
    """The keyword arguments of ``tagged_union`` after the table, each
    preceded by ``, ``: the error for an unknown tag, the tag's leniency,
    the fallback, catch-all and null-tag variants."""


@dataclass(frozen=True)
class UntaggedDispatch:
    variants: tuple[Entry, ...]
    """(the required keys as a tuple literal, the variant's decoder)."""
    no_match: str
    ambiguous: str
    """For a ``oneOf``: ``, `` and the error for an object several variants
    decode (else empty)."""


@dataclass(frozen=True)
class UnionCodec:
    class_name: str
    ref: str
    ref_literal: str
    """``ref`` as a string literal (what ``_cast`` takes)."""
    name: str
    variants: tuple[VariantCodec, ...]
    tagged: TaggedDispatch | None
    untagged: UntaggedDispatch | None


@dataclass(frozen=True)
class DefinitionCodec:
    """One definition's functions: exactly one of the four is set."""

    object: ObjectCodec | None = None
    enum: EnumCodec | None = None
    alias: AliasCodec | None = None
    union: UnionCodec | None = None


@dataclass(frozen=True)
class StateEncoder:
    state_class: str
    ref: str
    encoder: FieldsEncoder


@dataclass(frozen=True)
class UnionEncoder:
    """The encoder of a union another type names: its variant's."""

    class_name: str
    ref: str
    name: str
    """The union's ``$defs`` name as a literal."""


@dataclass(frozen=True)
class TableEntry:
    key: str
    """A ``$defs`` name literal, or a class as the module names it."""
    function: str
    pointer: str


@dataclass(frozen=True)
class Overload:
    name: str
    """The annotation of ``decode``'s ``name``: a literal type, or ``str``."""
    annotation: str


@dataclass(frozen=True)
class CodecView:
    header: str
    exports: str
    """``__all__`` as a list literal."""
    definitions: tuple[DefinitionCodec, ...]
    unions: tuple[UnionCodec, ...]
    """The unions, whose decoders the module builds after every definition's
    functions: they are built with the decoders of their variants, some of
    which (a variant that is another definition's class) come later."""
    states: tuple[StateEncoder, ...]
    union_encoders: tuple[UnionEncoder, ...]
    decoders: tuple[TableEntry, ...]
    class_decoders: tuple[TableEntry, ...]
    class_encoders: tuple[TableEntry, ...]
    enum_pointers: tuple[TableEntry, ...]
    enum_encoders: tuple[TableEntry, ...]
    overloads: tuple[Overload, ...]
    """``decode``'s signatures: one per definition, then any name."""


TAGGED_READER = (
    "# `d` is an object whose tag selects this variant: every caller (the\n"
    "    # union's decoder, or a field or list of the union) looked it up."
)
CATCH_ALL_READER = (
    "# `d` is an object whose tag is a string no other variant has: the\n"
    "    # union's decoder, its only caller, checked it."
)


class _Builder:
    def __init__(self, inputs: ViewInputs) -> None:
        self.inputs = inputs
        self.defs = inputs.defs
        self.names = inputs.names
        self.ref = inputs.names.ref
        self.x = Expressions(inputs.defs, inputs.names)

    def field(self, f: ir.Field) -> FieldDecoder:
        if isinstance(f.type, ir.KeyedT):
            return FieldDecoder(f.name, self.keyed(f.name, f.type), "", "", f.required, "", False, "", "", "", True, "")
        u = self.x.tag_dispatched(f.value_type)
        return FieldDecoder(
            name=f.name,
            keyed=None,
            annotation=field_type(f, self.x.annotation),
            wire=literal(f.wire_name),
            required=f.required,
            absent="" if f.required else absent(f, self.ref),
            default_on_null=f.default_on_null,
            on_null=text.empty(f.on_null or "map") if f.default_on_null else "",
            tag="" if u is None else literal(u.tag),
            decode=self.x.decode(f.type, "v", dispatch=True),
            raises=f.on_error == "raise",
            on_error="[]" if f.on_error == "empty" else "" if f.on_error == "raise" else absent(f, self.ref),
        )

    def keyed(self, name: str, t: ir.KeyedT) -> KeyedDecoder:
        annotation = self.x.annotation(t)
        return KeyedDecoder(
            name=name,
            annotation=annotation,
            union=literal(annotation),
            candidates=tuple(
                Candidate(_has_keys(keys), f"_decode_{self.x.class_name(ref)}")
                for ref, keys in zip(t.refs, t.keys, strict=True)
            ),
            no_match=literal(text.no_match_message(t)),
            exclusive=t.exclusive,
            ambiguous=literal(text.ambiguous_message(t)),
        )

    def encoder(
        self, fields: tuple[ir.Field, ...], first: tuple[Entry, ...] = (), extra: bool = False, wraps: str = ""
    ) -> FieldsEncoder:
        entries = list(first)
        assigned: list[Entry] = []
        for f in fields:
            if (f.required or f.default_value is not None) and not f.flatten:
                entry = self.entry(f, "o." + f.name)
                (assigned if entry.items or assigned else entries).append(entry)
        keyed: list[KeyedEncoder] = []
        for f in fields:
            if isinstance(f.type, ir.KeyedT) and f.flatten:
                refs = f.type.refs
                branches = tuple(
                    Branch(
                        "if" if i == 0 else "elif",
                        self.ref(self.x.class_name(name)),
                        f"_encode_{self.x.class_name(name)}",
                    )
                    for i, name in enumerate(refs)
                )
                keyed.append(KeyedEncoder(f.name, branches, " or ".join(refs)))
        optional: list[OptionalEntry] = []
        for f in fields:
            if not f.required and f.default_value is None:
                e = self.entry(f, "v_" + f.name)
                optional.append(OptionalEntry(f.name, e.key, e.source, e.items, e.iterable, e.result))
        return FieldsEncoder(tuple(entries), tuple(assigned), tuple(keyed), tuple(optional), extra, wraps)

    def entry(self, f: ir.Field, value: str) -> Entry:
        """The wire member of field ``f``, whose value is the expression ``value``."""
        key = literal(f.wire_name)
        looped = self.x.looped(f.type, "x_" + f.name)
        if looped is None:
            return Entry(key, self.x.encode(f.type, value))
        items, nullable = looped
        built = "l_" + f.name
        if nullable:
            return Entry(key, "", f.name, items, f"{value} or ()", f"{built} if {value} is not None else None")
        return Entry(key, "", f.name, items, value, built)

    def object(self, d: ir.ObjectDef) -> ObjectCodec:
        return ObjectCodec(
            class_name=d.class_name,
            ref=self.ref(d.class_name),
            undeclared=tuple(literal(k) for k in d.undeclared_required),
            closed=d.closed,
            declared=literal(list(d.declared_keys)),
            fields=tuple(self.field(f) for f in d.fields),
            names=tuple(f.name for f in d.fields),
            encoder=self.encoder(d.fields),
        )

    def enum(self, d: ir.EnumDef) -> EnumCodec:
        members = f"_MEMBERS_{d.class_name}"
        if not d.open:
            strings = d.value_kind == "str"
            decoder = f"_closed_enum({members}, {strings}, {literal(text.expected_message(d))})"
        elif d.value_kind == "str":
            decoder = f"_open_str_enum({members})"
        elif d.open_min is None and d.open_max is None:
            decoder = f"_open_int_enum({members})"
        else:
            decoder = f"_open_int_enum({members}, {literal(d.open_min)}, {literal(d.open_max)})"
        return EnumCodec(
            class_name=d.class_name,
            ref=self.ref(d.class_name),
            annotation=text.definition_annotation(d, self.names.annotation_ref, self.names.builtin),
            value_kind=d.value_kind,
            decoder=decoder,
        )

    def variant(self, d: ir.UnionDef, v: ir.Variant) -> VariantCodec:
        tag = literal(d.tag) if d.tag is not None else ""
        first: tuple[Entry, ...] = ()
        if v.role == ir.TAGGED:
            first = (Entry(tag, literal(v.tag)),)
        elif v.role == ir.CATCH_ALL:
            first = (Entry(tag, "o." + d.tag_name),)
        wraps = self.x.class_name(v.wraps) if v.wraps else ""
        has_known = not v.wraps and v.role != ir.CATCH_ALL
        names = tuple(f.name for f in v.fields)
        if wraps:
            names = ("value",)
        elif v.role == ir.CATCH_ALL:
            names = (d.tag_name, *names, "extra")
        note = {ir.TAGGED: TAGGED_READER, ir.CATCH_ALL: CATCH_ALL_READER}.get(v.role, "")
        return VariantCodec(
            class_name=v.class_name,
            ref=self.ref(v.class_name),
            tagged=v.role == ir.TAGGED,
            catch_all=v.role == ir.CATCH_ALL,
            tag=tag,
            value=literal(v.tag),
            union=d.class_name,
            tag_name=d.tag_name,
            reader_note=note,
            fields=tuple(self.field(f) for f in v.fields),
            names=names,
            wraps=wraps,
            extra_known=literal(list(d.catch_all_known_keys)),
            known=literal(([d.tag] if d.tag else []) + list(v.declared_keys)) if has_known else "",
            encoder=self.encoder(v.fields, first, v.role == ir.CATCH_ALL, wraps),
        )

    def union(self, d: ir.UnionDef) -> UnionCodec:
        ref = self.ref(d.class_name)
        variants = tuple(self.variant(d, v) for v in d.variants if not v.reuses_ref)
        tagged: TaggedDispatch | None = None
        untagged: UntaggedDispatch | None = None
        if d.tag is not None:
            tagged = TaggedDispatch(
                tag=literal(d.tag),
                readers=tuple(Entry(literal(v.tag), f"_read_{v.class_name}") for v in d.tagged),
                options=_tagged_options(d),
            )
        else:
            untagged = UntaggedDispatch(
                variants=tuple(Entry(_tuple_literal(v.required_keys), f"_decode_{v.class_name}") for v in d.variants),
                no_match=literal(text.no_match_message(d)),
                ambiguous=f", {literal(text.ambiguous_message(d))}" if d.exclusive else "",
            )
        return UnionCodec(
            class_name=d.class_name,
            ref=ref,
            ref_literal=literal(ref),
            name=d.name,
            variants=variants,
            tagged=tagged,
            untagged=untagged,
        )

    def definition(self, d: ir.Definition) -> DefinitionCodec:
        if isinstance(d, ir.ObjectDef):
            return DefinitionCodec(object=self.object(d))
        if isinstance(d, ir.EnumDef):
            return DefinitionCodec(enum=self.enum(d))
        if isinstance(d, ir.AliasDef):
            # A named string type is decoded as a value of its own type.
            target = ir.RefT(d.name) if d.named_string else d.target
            return DefinitionCodec(alias=AliasCodec(d.class_name, self.ref(d.class_name), self.x.decode(target, "v")))
        return DefinitionCodec(union=self.union(d))

    def state(self, u: ir.Upsert) -> StateEncoder:
        entries = tuple(Entry(literal(f.wire_name), self.x.encode(f.type, "o." + f.name)) for f in u.fields)
        return StateEncoder(u.state_class, self.ref(u.state_class), FieldsEncoder(entries))


def _has_keys(keys: tuple[str, ...]) -> str:
    return " and ".join(f"{literal(key)} in d" for key in keys) or "True"


def _tuple_literal(items: tuple[str, ...]) -> str:
    """A tuple of strings as a literal."""
    if len(items) == 1:
        return f"({literal(items[0])},)"
    return "(" + ", ".join(literal(item) for item in items) + ")"


def _tagged_options(d: ir.UnionDef) -> str:
    """The keyword arguments of the runtime's ``tagged_union`` for ``d``."""
    options: list[str] = []
    if d.catch_all is None and d.fallback is None:
        options.append(f"unknown={literal(text.unknown_tag_message(d))}")
    if d.tag_lenient:
        options.append("lenient_tag=True")
    if d.fallback is not None:
        options.append(f"fallback=_decode_{d.fallback.class_name}")
    if d.catch_all is not None:
        options.append(f"catch_all=_read_{d.catch_all.class_name}")
    if d.null_tag_variant is not None:
        options.append(f"null_tag=_decode_{d.null_tag_variant.class_name}")
    return "".join(", " + option for option in options)


def build_codec_view(inputs: ViewInputs) -> CodecView:
    package = inputs.package
    b = _Builder(inputs)
    ref = inputs.names.ref
    definitions = tuple(b.definition(d) for d in package.definitions)
    states = tuple(b.state(u) for u in package.upserts)
    union_encoders = tuple(
        UnionEncoder(d.class_name, ref(d.class_name), literal(d.name))
        for d in package.definitions
        if isinstance(d, ir.UnionDef) and d.name in package.referenced
    )
    variants = [
        (v, d) for d in package.definitions if isinstance(d, ir.UnionDef) for v in d.variants if not v.reuses_ref
    ]
    objects = [d for d in package.definitions if isinstance(d, ir.ObjectDef)]
    enums = [d for d in package.definitions if isinstance(d, ir.EnumDef)]
    class_encoders: list[TableEntry] = []
    for d in package.definitions:
        if isinstance(d, ir.ObjectDef):
            class_encoders.append(TableEntry(ref(d.class_name), f"_encode_{d.class_name}", ""))
        elif isinstance(d, ir.UnionDef):
            class_encoders.extend(
                TableEntry(ref(v.class_name), f"_encode_{v.class_name}", "") for v in d.variants if not v.reuses_ref
            )
    class_encoders.extend(TableEntry(ref(u.state_class), f"_encode_{u.state_class}", "") for u in package.upserts)
    return CodecView(
        header=header(package, inputs.generator_version, SUMMARY),
        exports=literal(list(inputs.exports["codec"])),
        definitions=definitions,
        unions=tuple(d.union for d in definitions if d.union is not None),
        states=states,
        union_encoders=union_encoders,
        decoders=tuple(
            TableEntry(literal(d.name), f"_decode_{d.class_name}", pointer(d.pointer)) for d in package.definitions
        ),
        class_decoders=(
            *(TableEntry(ref(d.class_name), f"_decode_{d.class_name}", pointer(d.pointer)) for d in objects),
            *(TableEntry(ref(v.class_name), f"_decode_{v.class_name}", pointer(v.pointer)) for v, _ in variants),
        ),
        class_encoders=tuple(class_encoders),
        enum_pointers=tuple(TableEntry(ref(d.class_name), "", pointer(d.pointer)) for d in enums),
        enum_encoders=tuple(TableEntry(ref(d.class_name), f"_encode_{d.class_name}", "") for d in enums),
        overloads=(
            *(
                Overload(
                    f"_Literal[{literal(d.name)}]",
                    text.definition_annotation(d, inputs.names.annotation_ref, inputs.names.builtin),
                )
                for d in package.definitions
            ),
            Overload("str", "object"),
        ),
    )
