"""The view of ``patch.py``: the patch rules' apply functions, their
dispatch table and the capability fields."""

from __future__ import annotations

from ..compile import ir
from ..records import dataclass
from . import text
from .inputs import ViewInputs
from .source import Namer, doc, header, literal, value

SUMMARY = (
    "Patch-merge: fold upserts into stored state, as the schema's prose says, and capability predicates.\n\n"
    "Every function is pure: it returns a new state and changes neither argument."
    " encode(state) gives the full snapshot in wire form."
)


@dataclass(frozen=True)
class UpdatedField:
    """What an update does to one field of the state: ``var`` is set to
    ``read`` (the update's value), then ``new.<name>`` to ``fresh`` (an
    entity not seen before) or ``known`` (a stored one)."""

    var: str
    read: str
    """The expression ``var`` is set to."""
    name: str
    fresh: str
    """The field's value in the state of an entity not seen before: the
    update's value, or the field's initial value where it has none ..."""
    known: str
    """... and in the new state of a stored entity."""


@dataclass(frozen=True)
class FoldFunction:
    """An apply function: of an upsert, or of a chunk."""

    function: str
    params: str
    """The parameters' source, after ``(``."""
    state: str
    """The state class as the module names it."""
    doc: str
    """The docstring, indented for the body."""
    new_state: str
    """The state of an entity not seen before, built from its keys (a
    chunk's: an upsert builds its new state field by field)."""
    key_test: str
    """The condition under which the keys of a known entity differ from the
    update's (empty: no keys) ..."""
    key_check: str
    """... and the statement raising the error then."""
    keys: tuple[str, ...]
    """An upsert's key fields (the same name in the state and the update)."""
    fields: tuple[UpdatedField, ...]
    """The fields an upsert updates (none for a chunk)."""
    assignments: tuple[str, ...]
    """A chunk's new state's fields, as ``new.<name> = ...`` statements."""
    creates: bool
    """A snapshot class replaces the state outright (``_create_<State>``)."""
    create_function: str
    create_params: str


@dataclass(frozen=True)
class ApplyEntry:
    cls: str
    function: str


@dataclass(frozen=True)
class Overload:
    state: str
    update: str


@dataclass(frozen=True)
class CapabilityEntry:
    key: str
    """The Python or wire name as a literal."""
    target: str
    """``(attribute, kind)`` as source."""


@dataclass(frozen=True)
class CapabilityClass:
    cls: str
    entries: tuple[CapabilityEntry, ...]


@dataclass(frozen=True)
class Constant:
    """A module-level name bound once to an enum member: on CPython 3.11 the
    enum metaclass's ``__getattr__`` puts every attribute read of an enum
    class through a slot wrapper (about five times a global's cost), and a
    new state reads its defaults each time."""

    name: str
    expression: str


class _Members:
    """The enum members the apply functions read, each as a module constant
    (:class:`Constant`) named ``_<Class>_<MEMBER>``."""

    def __init__(self, ref: Namer) -> None:
        self.ref = ref
        self.constants: dict[str, Constant] = {}

    def value(self, v: ir.Value) -> str:
        """``v`` as an expression: an enum member as its constant."""
        if not isinstance(v, ir.EnumValue):
            return value(v, self.ref)
        name = f"_{v.class_name}_{v.member}"
        self.constants.setdefault(name, Constant(name, value(v, self.ref)))
        return name


@dataclass(frozen=True)
class PatchView:
    header: str
    uses_unset: bool
    """Some upsert updates a field (which the update may leave UNSET)."""
    checks_keys: bool
    appends_base64: bool
    exports: tuple[str, ...]
    """``__all__`` as string literals."""
    upserts: tuple[FoldFunction, ...]
    chunks: tuple[FoldFunction, ...]
    apply_table: tuple[ApplyEntry, ...]
    overloads: tuple[Overload, ...]
    """The typed signatures of ``apply``, one per class it takes."""
    constants: tuple[Constant, ...]
    """The enum members the functions read, bound once."""
    rules: str
    """``True`` when the package has patch rules, as source."""
    capabilities: tuple[CapabilityClass, ...]
    """By class name."""
    supports_param: str
    """The ``capabilities`` parameter of ``supports``."""


def _carry(f: ir.PatchField) -> str:
    """The stored value of ``f`` as the new state keeps it: a list or dict
    is copied, so that the old and the new state share no container."""
    copy = text.state_copy(f)
    if copy and f.type.kind == "nullable":
        return f"(None if state.{f.name} is None else {copy}(state.{f.name}))"
    if copy:
        return f"{copy}(state.{f.name})"
    return f"state.{f.name}"


def _choice(var: str, on_unset: str, on_null: str, on_value: str) -> str:
    """One expression of the value ``var`` stands for: ``on_unset`` when the
    update omits it, ``on_null`` when it is null, else ``on_value``."""
    if on_unset == on_null:
        return f"{on_unset} if {var} is _UNSET or {var} is None else {on_value}"
    # The inner choice in parentheses: black and ruff format a bare nested
    # conditional expression differently.
    return f"{on_unset} if {var} is _UNSET else ({on_null} if {var} is None else {on_value})"


def _updated(f: ir.PatchField, ref: Namer, members: _Members) -> UpdatedField:
    var = "v_" + f.name
    read = f"update.{f.name}" if f.everywhere else f"getattr(update, {literal(f.name)}, _UNSET)"
    null = f.null_value
    copy = text.value_copy(f)
    if f.initial is None:
        raise ValueError(f"the patch field {f.name} has no initial value")
    initial = members.value(f.initial)
    if f.merges:
        on_value, fresh_value = f"merge_meta(state.{f.name}, {var})", f"merge_meta({initial}, {var})"
    elif copy:
        on_value = fresh_value = f"{copy}({var})"
    else:
        on_value = fresh_value = var
    return UpdatedField(
        var=var,
        read=read,
        name=f.name,
        fresh=_choice(var, initial, initial if null is None else members.value(null), fresh_value),
        known=_choice(var, _carry(f), _carry(f) if null is None else members.value(null), on_value),
    )


@dataclass(frozen=True)
class PatchedField:
    """What an update does to one field of a stored state, in place: ``var``
    is set to ``read``; when ``changes`` holds, the field is set to
    ``changed`` (what ``known`` is then, read before the field is set)."""

    var: str
    read: str
    name: str
    name_literal: str
    changes: str
    changed: str


def patched(f: ir.PatchField, ref: Namer, merge: str) -> PatchedField:
    """What an update does to ``f`` of a stored state, in a module that names
    ``merge_meta`` ``merge``."""
    var = "v_" + f.name
    copy = text.value_copy(f)
    if f.merges:
        on_value = f"{merge}(state.{f.name}, {var})"
    elif copy:
        on_value = f"{copy}({var})"
    else:
        on_value = var
    if f.null_value is None:
        changes, changed = f"{var} is not _UNSET and {var} is not None", on_value
    else:
        changes, changed = f"{var} is not _UNSET", f"({value(f.null_value, ref)} if {var} is None else {on_value})"
    return PatchedField(
        var=var,
        read=f"update.{f.name}" if f.everywhere else f"getattr(update, {literal(f.name)}, _UNSET)",
        name=f.name,
        name_literal=literal(f.name),
        changes=changes,
        changed=changed,
    )


def key_check(argument: str, pairs: list[tuple[str, str]]) -> str:
    if not pairs:
        return ""
    listed = "".join(f"({literal(a)}, {literal(b)}), " for a, b in pairs)
    return f"_check_key(state, {argument}, ({listed}))"


def key_test(argument: str, pairs: list[tuple[str, str]]) -> str:
    return " or ".join(f"state.{a} != {argument}.{b}" for a, b in pairs)


def _upsert(u: ir.Upsert, ref: Namer, members: _Members) -> FoldFunction:
    state = ref(u.state_class)
    takes = " | ".join(ref(n) for n in u.takes)
    keys = "".join(f"{f.name}=update.{f.name}, " for f in u.keys)
    return FoldFunction(
        function=u.function,
        params=f"state: {state} | None, {text.parameter(takes, 'update')}",
        state=state,
        doc=doc(text.upsert_doc(u), 4),
        new_state=f"{state}({keys})",
        key_test=key_test("update", [(f.name, f.name) for f in u.keys]),
        key_check=key_check("update", [(f.name, f.name) for f in u.keys]),
        keys=tuple(f.name for f in u.keys),
        fields=tuple(_updated(f, ref, members) for f in u.updated),
        assignments=(),
        creates=bool(u.creates),
        create_function=f"_create_{u.state_class}",
        create_params=f"state: {state} | None, {text.parameter(takes, 'snapshot')}",
    )


def _chunk(c: ir.Chunk, ref: Namer) -> FoldFunction:
    state = ref(c.target.state_class)
    keys = "".join(f"{s}=chunk.{k}, " for s, k in c.keys)
    assignments: list[str] = []
    for f in c.target.fields:
        if f.name != c.field:
            assignments.append(f"new.{f.name} = {_carry(f)}")
        elif c.append == "item":
            assignments.append(f"new.{f.name} = [*state.{c.field}, chunk.{c.source}]")
        else:
            assignments.append(
                f"new.{f.name} = _append_base64(state.{c.field}, chunk.{c.source}, {ref(c.payload_class)})"
            )
    return FoldFunction(
        function=c.function,
        params=f"state: {state} | None, chunk: {' | '.join(ref(n) for n in c.accepts)}",
        state=state,
        doc=doc(text.chunk_doc(c), 4),
        new_state=f"{state}({keys})",
        key_test=key_test("chunk", list(c.keys)),
        key_check=key_check("chunk", list(c.keys)),
        keys=(),
        fields=(),
        assignments=tuple(assignments),
        creates=False,
        create_function="",
        create_params="",
    )


def build_patch_view(inputs: ViewInputs) -> PatchView:
    package, ref = inputs.package, inputs.names.ref
    members = _Members(ref)
    upserts = tuple(_upsert(u, ref, members) for u in package.upserts)
    chunks = tuple(_chunk(c, ref) for c in package.chunks)
    table: list[ApplyEntry] = []
    overloads: list[Overload] = []
    for u in package.upserts:
        table.extend(ApplyEntry(ref(cls), u.function) for cls in u.accepts)
        table.extend(ApplyEntry(ref(cls), f"_create_{u.state_class}") for cls in u.creates)
        overloads.extend(Overload(ref(u.state_class), ref(cls)) for cls in u.accepts + u.creates)
    for c in package.chunks:
        table.extend(ApplyEntry(ref(cls), c.function) for cls in c.accepts)
        overloads.extend(Overload(ref(c.target.state_class), ref(cls)) for cls in c.accepts)
    groups: dict[str, list[CapabilityEntry]] = {}
    for cap in package.capabilities:
        target = f"({literal(cap.field)}, {literal(cap.kind)})"
        entries = groups.setdefault(cap.class_name, [])
        entries.append(CapabilityEntry(literal(cap.field), target))
        if cap.wire_name != cap.field:
            entries.append(CapabilityEntry(literal(cap.wire_name), target))
    capability_classes = " | ".join(ref(n) for n in package.capability_classes) or "object"
    return PatchView(
        header=header(package, inputs.generator_version, SUMMARY),
        uses_unset=any(u.updated for u in package.upserts),
        checks_keys=any(u.keys for u in package.upserts) or any(c.keys for c in package.chunks),
        appends_base64=package.appends_base64,
        exports=tuple(literal(n) for n in inputs.exports["patch"]),
        upserts=upserts,
        chunks=chunks,
        apply_table=tuple(table),
        overloads=tuple(overloads),
        constants=tuple(members.constants.values()),
        rules=repr(package.applies),
        capabilities=tuple(CapabilityClass(ref(cls), tuple(entries)) for cls, entries in sorted(groups.items())),
        supports_param=text.parameter(capability_classes, "capabilities", indent=8),
    )
