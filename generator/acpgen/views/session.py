"""The view of ``session.py``: the session fold of one package.

Everything ``session.py.jinja`` prints is decided here: the Session's
fields with their annotations and docstrings, the store's tables, which
update kinds' folds are printed how, whether a message chunk extends the
store's tail message without its fold (the runtime's fast path), the
snapshot table and the module's names. The fixed machinery is the runtime's
``_session`` module.
"""

from __future__ import annotations

from ..compile import ir
from ..records import dataclass
from . import source, text
from .inputs import ViewInputs
from .patch import PatchedField, key_check, key_test, patched

__all__ = [
    "EntryView",
    "FieldView",
    "FoldView",
    "PropertyView",
    "RuleView",
    "SessionView",
    "TailView",
    "session_view",
]

SUMMARY = (
    "Session state: every session/update of the schema folded into one Session, as an editor renders it.\n\n"
    "apply_session_update(session, notification) returns a new Session and changes neither argument;"
    " session_to_json and session_from_json turn a Session into its JSON snapshot and back."
    " What each update kind does comes from the rules in acpgen's rules/session.toml.\n\n"
    "A fold costs the same whatever the session's size: the newest Session of a line of folds shares its"
    " state with the Session it was folded from, which keeps only what the update changed (and the newer"
    " Session) to rebuild what it saw when it is read again. A Session and what it returns never change."
)

PROTOCOL_VERSION_DOC = "The ``protocolVersion`` an agent speaking this schema answers ``initialize`` with."

SESSION_SOURCES_DOC = (
    '(method, ``"result"`` or ``"params"``): the messages whose ``sessionId``\n'
    "opens a session the client may then get updates for."
)

HISTORY_ENTRY_DOC = (
    "A place in the session's history: ``key`` is the key of the entity in\n"
    "the Session attribute (a dict) that ``field`` names. Each field with a\n"
    "history has its subclass (``HistoryItem`` is their union), whose\n"
    "``value(session)`` is the entity, typed."
)

HISTORY_ITEM_DOC = (
    "Any entry of ``Session.history``: narrow it with ``isinstance`` (or\n"
    "``match``) to get its entity typed with ``entry.value(session)``."
)

VALUE_DOC = "The entity at this entry in ``session``."

MESSAGE_DOC = (
    "A message streamed as chunks: the chunks' content in order, and the\n`messageId` the chunks carried, if any."
)

STORE_DOC = (
    "The state of the newest Session of a line of folds (``SessionStore``):\n"
    "the fields of the schema's Session, and for each its sharing flags."
)

SESSION_DOC = """The state of one session, folded from its session/update notifications.

``history`` lists messages, tool calls and the other entities an editor
renders, in the order they first appeared; each entry is of the class of
its field (``HistoryItem``), and ``entry.value(session)`` is its entity.

A Session never changes: ``apply_session_update`` returns a new one.
Reading a field of the newest Session of a line of folds costs nothing;
the fold copies a field that was read the next time it changes it (once).
An older Session rebuilds a field the first time it is read, from the
newest state and the changes since (a cost in their number). Treat what a
Session returns as read-only: the containers are the Session's own."""

INIT_DOC = "A session in the given state (copied: the arguments stay the\ncaller's); every field starts empty."

UPDATE_RULE_DOC = "What one session/update kind does (see ``UPDATE_RULES``)."

UPDATE_RULES_DOC = "What each SessionUpdate variant class does to a Session."

TO_JSON_DOC = (
    "The JSON snapshot of ``session`` (``json.dumps`` takes it as it is):\n"
    "every state in its full wire form, history entries by the snapshot's key."
)

FROM_JSON_DOC = "The Session a ``session_to_json`` snapshot holds. Raises\n``ValidationError`` (with the path) when ``data`` is not one."

TAIL_KEY = "message_id"
"""The message chunk attribute the runtime's fast path reads the message id
from (``SessionStore.TAIL_CLASSES``)."""

MESSAGE_CONTENT_DEF = "ContentBlock"
"""The ``$defs`` name of a chunked message's content blocks."""


@dataclass(frozen=True)
class EntryView:
    """A history entry class: the entries of one Session field."""

    name: str
    field: str
    """The Session attribute (a Python name)."""
    field_literal: str
    doc: str
    value_annotation: str
    """The annotation of the entity at an entry."""


@dataclass(frozen=True)
class PropertyView:
    """A read-only attribute of ``Session`` (``history`` and each field)."""

    name: str
    name_literal: str
    annotation: str
    annotation_literal: str
    """The annotation as a string literal (for ``cast``)."""
    doc: str


@dataclass(frozen=True)
class FieldView:
    """One field of the Session and its store."""

    name: str
    name_literal: str
    annotation: str
    """The stored value's annotation."""
    parameter: str
    """``Session.__init__``'s parameter for it, with its default."""
    shared: bool
    """The store has a ``<name>_shared`` flag ..."""
    owned: bool
    """... and a ``<name>_owned`` set (an entity field)."""
    snapshot: str
    """Its ``SnapshotField(...)`` (source text)."""


@dataclass(frozen=True)
class TailView:
    """A message field whose chunks the runtime extends the store's tail
    message with, without calling their fold."""

    field_literal: str
    update_class: str


@dataclass(frozen=True)
class FoldView:
    """The fold function of one update kind. Exactly one of the kind flags
    is set."""

    function: str
    update_class: str
    """The update's class (a ``_FOLDS`` key) ..."""
    update_annotation: str
    """... and its annotation."""
    doc: str
    field: str
    field_literal: str
    key: str
    """The update's attribute holding the entity's key (entity folds, remove)."""
    entity_upsert: bool
    """Upsert (or a chunk not appended in place) into a dict of states."""
    entity_chunk: bool
    """A chunk appended in place to an entity the store owns."""
    state_upsert: bool
    """Upsert (or chunk) into the one state of the field."""
    message_chunk: bool
    set: bool
    keyed_set: bool
    remove: bool
    append: bool
    patch_function: str
    """The patch function (imported as ``_NAME``) ..."""
    replaces: bool
    """... started from no state (the update is a full snapshot)."""
    owns: bool
    """The store owns what an entity upsert puts (the field has in-place
    chunks, or upserts folded in place)."""
    in_place: str
    """The patch module's in-place fold of this entity upsert, which the
    fold calls on a state the store owns (``""``: none, the new state is
    always built)."""
    entry_class: str
    """The field's history entry class, or ``None`` ..."""
    enters: bool
    """... and whether it has one (a new entity takes a place in the history)."""
    chunk_attr: str
    chunk_source: str
    value: str
    """For ``set`` and ``keyed-set``: the stored value (source text) ..."""
    value_key: str
    """... and, for ``keyed-set``, its attribute holding the key."""
    message_class: str


@dataclass(frozen=True)
class InPlaceView:
    """The in-place fold of one upsert: what its patch function does to a
    stored state, done to the state itself (the store owns it)."""

    function: str
    params: str
    """The parameters' source, after ``(``."""
    key_test: str
    """The condition under which the state's keys differ from the update's
    (empty: no keys) ..."""
    key_check: str
    """... and the statement raising the error then."""
    fields: tuple[PatchedField, ...]


@dataclass(frozen=True)
class RuleView:
    """One ``UPDATE_RULES`` entry."""

    update_class: str
    tag: str
    action: str
    field: str
    key: str
    started_by: tuple[str, ...]
    """Literals."""


@dataclass(frozen=True)
class SessionView:
    """What ``session.py`` prints."""

    header: str
    """The generated-file comment and the module docstring."""
    present: bool
    """The package has a session fold (else the module exports nothing)."""
    imports: tuple[str, ...] = ()
    """The import lines of the standard library and the runtime's names
    (``""`` between groups); the schema's names are imported at the
    imports marker."""
    exports: tuple[str, ...] = ()
    """``__all__``, as literals."""
    patch_imports: tuple[str, ...] = ()
    in_place: tuple[InPlaceView, ...] = ()
    in_place_doc: str = ""
    """The patch functions the folds and the snapshot call."""
    message_class: str = ""
    """The class of a message streamed as chunks (v1), or ``""``."""
    message_doc: str = ""
    message_content: str = ""
    """The annotation of its ``content``."""
    protocol_version: str = ""
    protocol_version_doc: str = ""
    sources: tuple[tuple[str, str], ...] = ()
    """``SESSION_SOURCES`` (method and part literals)."""
    sources_doc: str = ""
    history_entry_doc: str = ""
    entries: tuple[EntryView, ...] = ()
    history_item: str = ""
    """``HistoryItem``'s value (source text)."""
    history_item_doc: str = ""
    value_doc: str = ""
    store_doc: str = ""
    slots: tuple[str, ...] = ()
    """The store's slots (literals)."""
    fields: tuple[FieldView, ...] = ()
    field_names: tuple[str, ...] = ()
    """``FIELDS`` (literals)."""
    shared: tuple[str, ...] = ()
    """``SHARED`` (literals, ``history`` last)."""
    owned: tuple[str, ...] = ()
    maps: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()
    cut_attrs: tuple[tuple[str, str], ...] = ()
    """``CUT_ATTRS`` (field and attribute literals)."""
    tails: tuple[TailView, ...] = ()
    """``TAIL_CLASSES``: empty when the chunks are not extended without their fold."""
    folds: tuple[FoldView, ...] = ()
    prompt_class: str = ""
    """(v1) The session/prompt request's class, for ``apply_prompt`` ..."""
    prompt_field: str = ""
    """... the message field it adds the prompt to ..."""
    prompt_entry_class: str = ""
    """... and that field's entry class."""
    update_class: str = ""
    """The annotation of a SessionUpdate."""
    notification_class: str = ""
    """The annotation of a session/update notification."""
    session_doc: str = ""
    init_doc: str = ""
    properties: tuple[PropertyView, ...] = ()
    update_rule_doc: str = ""
    rules: tuple[RuleView, ...] = ()
    rules_doc: str = ""
    to_json_doc: str = ""
    from_json_doc: str = ""


IN_PLACE_DOC = (
    "Fold ``update`` into the stored ``state`` in place, to the state its patch\n"
    "    function returns: the fold's way with a state no Session handed out.\n"
    "    Returns the fields it set and their old values (name, value, ...)."
)


def _doc(prose: str) -> str:
    """A docstring of acpgen's own prose, its closing quotes on its last
    line (the schema's text goes through :func:`acpgen.views.text.docstring`)."""
    if "\\" in prose or '"""' in prose or prose.endswith('"'):
        return text.docstring(prose)
    return f'"""{prose}"""'


def _header(inputs: ViewInputs) -> str:
    return source.header(inputs.package, inputs.generator_version, SUMMARY)


def _tail_actions(s: ir.SessionRules) -> tuple[ir.SessionAction, ...]:
    """The message-chunk kinds whose chunks the runtime extends the store's
    tail message with, without their fold: all of them when each has a
    field of its own and they read their id from the attribute the runtime
    reads (:data:`TAIL_KEY`), else none."""
    tail = tuple(a for a in s.actions if a.action == "message-chunk")
    if any(a.key != TAIL_KEY for a in tail) or len({a.field.name for a in tail}) < len(tail):
        return ()
    return tail


def _in_place_function(function: str) -> str:
    """The name of the in-place fold of the upsert function ``function``."""
    return f"_{function}_in_place"


def _imports(
    folds: tuple[FoldView, ...], history: bool, message: bool, prompt: bool, in_place: tuple[InPlaceView, ...] = ()
) -> tuple[str, ...]:
    """The module's imports from the standard library and the runtime:
    what its code uses (a strict checker reports an unused one)."""
    patch = [
        *(["check_key"] if any(f.key_test for f in in_place) else []),
        *(["merge_meta"] if any("_merge_meta(" in u.changed for f in in_place for u in f.fields) else []),
    ]
    unset = any(f.fields for f in in_place)
    typing = ["Any", "Callable", "ClassVar", "Iterable", "Mapping", *(["Union"] if history else []), "cast"]
    entity = any(a.entity_upsert or a.entity_chunk for a in folds)
    upserts = any(a.entity_upsert for a in folds)
    runtime = [
        *(["ABSENT"] if entity else []),
        *(["OWNED_AT_MOST"] if any(a.entity_upsert and a.owns for a in folds) else []),
        *(["PATCH"] if any(a.in_place for a in folds) else []),
        *(["PUT"] if upserts else []),
        *(["SET"] if any(a.state_upsert or a.set or a.keyed_set or a.remove for a in folds) else []),
        "Fold",
        "HistoryEntryBase",
        "SessionBase",
        "SessionStore",
        "SnapshotField",
        "Undo",
        "UpdateRuleBase",
        *(["append"] if any(a.append for a in folds) else []),
        *(["cut"] if any(a.entity_chunk for a in folds) else []),
        *(["enter"] if any(a.entity_upsert and a.enters for a in folds) else []),
        *(["fold_message_chunk"] if any(a.message_chunk for a in folds) else []),
        *(["own"] if upserts else []),
        *(["put"] if any(a.entity_chunk for a in folds) else []),
        "session_from_json",
        "session_to_json",
        *(["start_message"] if prompt else []),
        *(["without"] if any(a.remove for a in folds) else []),
    ]
    return (
        "from dataclasses import dataclass as _dataclass",
        *(["from dataclasses import field as _field"] if message else []),
        *(f"from typing import {name} as _{name}" for name in typing),
        "",
        *(f"from ._patch import {name} as _{name}" for name in patch),
        *(["from ._runtime import UNSET as _UNSET"] if unset else []),
        *(f"from ._session import {name} as _{'MISSING' if name == 'ABSENT' else name}" for name in runtime),
        "from .codec import decode as _decode",
        "from .codec import encode as _encode",
    )


def session_view(inputs: ViewInputs) -> SessionView:
    """The view of ``session.py``."""
    s = inputs.package.session
    if s is None:
        return SessionView(header=_header(inputs), present=False)
    return _Builder(inputs, s).view()


class _Builder:
    """Builds the view of one package's session rules, naming the schema's
    names as ``session.py`` does (recording what it imports)."""

    def __init__(self, inputs: ViewInputs, s: ir.SessionRules) -> None:
        self.inputs = inputs
        self.s = s
        names = inputs.names
        self.ref = names.ref
        self.aref = names.annotation_ref
        self.annotation = text.Annotations(inputs.defs, names.annotation_ref, names.builtin, lambda n: "_" + n)
        # The upserts folded in place into a state the store owns ...
        self.patched = frozenset(
            a.patch_function for a in s.actions if self.entity_upsert(a) and a.action == "upsert" and not a.replaces
        )
        # ... and the fields of those and of chunks extended in place: the
        # store owns what their upserts put.
        self.in_place = frozenset(
            a.field.name
            for a in s.actions
            if a.chunk_attr or (self.entity_upsert(a) and a.patch_function in self.patched)
        )

    @staticmethod
    def entity_upsert(a: ir.SessionAction) -> bool:
        """An upsert (or a chunk not appended in place) into a dict of states."""
        return a.action in ("upsert", "chunk") and a.field.container == "entities" and not a.chunk_attr

    def message(self) -> str:
        """The chunked message class (v1), or ``""``."""
        return self.s.message_class

    def value_annotation(self, f: ir.SessionField) -> str:
        """The annotation of one value of ``f`` (an entity, a list item)."""
        if f.container in ("entities", "state"):
            return self.aref(f.state_class)
        if f.container == "messages":
            return self.message()
        assert f.value_type is not None
        t = f.value_type
        return self.annotation(t.items if isinstance(t, ir.ListT) else t)

    def stored_annotation(self, f: ir.SessionField) -> str:
        """The annotation of the field's value in the store and the Session."""
        if f.container in ("entities", "messages"):
            return f"dict[str, {self.value_annotation(f)}]"
        if f.container == "state":
            return f"{self.value_annotation(f)} | None"
        assert f.value_type is not None
        value = self.annotation(f.value_type)
        if f.container == "values":
            return f"dict[str, {value}]"
        if f.container == "items":
            return f"list[{value}]"
        return value if f.empty else f"{value} | None"

    def parameter(self, f: ir.SessionField) -> str:
        if f.container in ("entities", "messages", "values"):
            return f"{f.name}: _Mapping[str, {self.value_annotation(f)}] | None = None"
        if f.container == "items" or (f.container == "value" and f.empty):
            return f"{f.name}: _Iterable[{self.value_annotation(f)}] = ()"
        return f"{f.name}: {self.stored_annotation(f)} = None"

    def property_doc(self, f: ir.SessionField) -> str:
        if f.container == "entities":
            doc = f"The {f.state_class} of each key."
        elif f.container == "messages":
            doc = "The messages by key (``#N``, N their place in ``history``)."
        elif f.container == "state":
            doc = f"The {f.state_class}; None until the first update."
        elif f.container == "values":
            doc = "The values by key."
        elif f.container == "items":
            doc = "The updates, in arrival order."
        else:
            doc = "The latest value" + ("" if f.empty else "; None until the first update") + "."
        return text.docstring(doc)

    def snapshot(self, f: ir.SessionField) -> str:
        lit = text.py_literal
        if f.container in ("entities", "values"):
            form = "map"
        elif f.container == "messages":
            form = "messages"
        elif f.container == "state" or (f.container == "value" and not f.empty):
            form = "optional"
        else:
            form = "list"
        if f.container in ("entities", "state"):
            decode_as = f.restore_from
        elif f.container == "messages":
            decode_as = MESSAGE_CONTENT_DEF
        else:
            decode_as = f.item_def
        args = [lit(f.name), lit(f.wire_name), lit(form), lit(decode_as)]
        if f.restore_function:
            args.append(f"restore=_{f.restore_function}")
        if f.container == "messages":
            args.append(f"message_class={self.message()}")
        if f.entry_class:
            args.append(f"entry_class={f.entry_class}")
        return f"_SnapshotField({', '.join(args)})"

    def field(self, f: ir.SessionField) -> FieldView:
        return FieldView(
            name=f.name,
            name_literal=text.py_literal(f.name),
            annotation=self.stored_annotation(f),
            parameter=self.parameter(f),
            shared=f.container in ("entities", "messages", "items"),
            owned=f.container == "entities",
            snapshot=self.snapshot(f),
        )

    def fold(self, a: ir.SessionAction) -> FoldView:
        f = a.field
        entity = a.action in ("upsert", "chunk") and f.container == "entities"
        value = f"update.{a.source}" if a.source else "update"
        if a.action == "set" and f.empty:
            value = f"list({value})"
        return FoldView(
            function=a.function,
            update_class=self.ref(a.variant_class),
            update_annotation=self.aref(a.variant_class),
            doc=text.docstring(text.action_doc(a)),
            field=f.name,
            field_literal=text.py_literal(f.name),
            key=a.key,
            entity_upsert=entity and not a.chunk_attr,
            entity_chunk=entity and bool(a.chunk_attr),
            state_upsert=a.action in ("upsert", "chunk") and not entity,
            message_chunk=a.action == "message-chunk",
            set=a.action == "set",
            keyed_set=a.action == "keyed-set",
            remove=a.action == "remove",
            append=a.action == "append",
            patch_function=a.patch_function,
            replaces=a.replaces,
            owns=f.name in self.in_place,
            in_place=_in_place_function(a.patch_function)
            if self.entity_upsert(a) and not a.replaces and a.patch_function in self.patched
            else "",
            entry_class=f.entry_class or "None",
            enters=bool(f.entry_class),
            chunk_attr=a.chunk_attr,
            chunk_source=a.chunk_source,
            value=value,
            value_key=a.key,
            message_class=self.message(),
        )

    def in_place_view(self, u: ir.Upsert) -> InPlaceView:
        takes = " | ".join(self.aref(n) for n in u.takes)
        pairs = [(f.name, f.name) for f in u.keys]
        return InPlaceView(
            function=_in_place_function(u.function),
            params=f"state: {self.aref(u.state_class)}, {text.parameter(takes, 'update')}",
            key_test=key_test("update", pairs),
            key_check=key_check("update", pairs),
            fields=tuple(patched(f, self.ref, "_merge_meta") for f in u.updated),
        )

    def rule(self, a: ir.SessionAction) -> RuleView:
        lit = text.py_literal
        return RuleView(
            update_class=self.ref(a.variant_class),
            tag=lit(a.tag),
            action=lit(a.action),
            field=lit(a.field.name),
            key=lit(a.key if a.action != "keyed-set" else ""),
            started_by=tuple(lit(t) for t in a.started_by),
        )

    def view(self) -> SessionView:
        s = self.s
        lit = text.py_literal
        history_fields = [f for f in s.fields if f.entry_class]
        entries = tuple(
            EntryView(
                name=f.entry_class,
                field=f.name,
                field_literal=lit(f.name),
                doc=text.docstring(f"An entry of ``Session.{f.name}`` in the session's history."),
                value_annotation=self.value_annotation(f),
            )
            for f in history_fields
        )
        if history_fields:
            history_item = "_Union[" + ", ".join(f.entry_class for f in history_fields) + ",]"
        else:
            history_item = "HistoryEntry"
        fields = tuple(self.field(f) for f in s.fields)
        slots: list[str] = []
        for fv in fields:
            slots.append(lit(fv.name))
            if fv.shared:
                slots.append(lit(fv.name + "_shared"))
            if fv.owned:
                slots.append(lit(fv.name + "_owned"))
        cut_attrs = [(lit(f.name), lit("content")) for f in s.fields if f.container == "messages"]
        cut_attrs += [(lit(a.field.name), lit(a.chunk_attr)) for a in s.actions if a.chunk_attr]
        properties = (
            PropertyView(
                name="history",
                name_literal=lit("history"),
                annotation="list[HistoryItem]",
                annotation_literal=lit("list[HistoryItem]"),
                doc=text.docstring("The messages, tool calls ... in the order they first appeared."),
            ),
            *(
                PropertyView(
                    name=f.name,
                    name_literal=lit(f.name),
                    annotation=self.stored_annotation(f),
                    annotation_literal=lit(self.stored_annotation(f)),
                    doc=self.property_doc(f),
                )
                for f in s.fields
            ),
        )
        in_place = tuple(self.in_place_view(u) for u in self.inputs.package.upserts if u.function in self.patched)
        patch_functions = {a.patch_function for a in s.actions if a.patch_function}
        patch_functions |= {f.restore_function for f in s.fields if f.restore_function}
        message = self.message()
        folds = tuple(self.fold(a) for a in s.actions)
        return SessionView(
            header=_header(self.inputs),
            present=True,
            imports=_imports(folds, bool(history_fields), bool(message), bool(s.prompt_field), in_place),
            exports=tuple(lit(n) for n in self.inputs.exports["session"]),
            patch_imports=tuple(sorted(patch_functions)),
            in_place=in_place,
            in_place_doc=_doc(IN_PLACE_DOC),
            message_class=message,
            message_doc=_doc(MESSAGE_DOC) if message else "",
            message_content=f"list[{self.aref(MESSAGE_CONTENT_DEF)}]" if message else "",
            protocol_version=lit(s.protocol_version),
            protocol_version_doc=_doc(PROTOCOL_VERSION_DOC),
            sources=tuple((lit(method), lit(part)) for method, part in s.sessions_from),
            sources_doc=_doc(SESSION_SOURCES_DOC),
            history_entry_doc=_doc(HISTORY_ENTRY_DOC),
            entries=entries,
            history_item=history_item,
            history_item_doc=_doc(HISTORY_ITEM_DOC),
            value_doc=_doc(VALUE_DOC),
            store_doc=_doc(STORE_DOC),
            slots=tuple(slots),
            fields=fields,
            field_names=tuple(lit(f.name) for f in s.fields),
            shared=(*(fv.name_literal for fv in fields if fv.shared), lit("history")),
            owned=tuple(fv.name_literal for fv in fields if fv.owned),
            maps=tuple(lit(f.name) for f in s.fields if f.container in ("entities", "messages", "values")),
            lists=tuple(
                lit(f.name) for f in s.fields if f.container == "items" or (f.container == "value" and f.empty)
            ),
            cut_attrs=tuple(cut_attrs),
            tails=tuple(
                TailView(field_literal=lit(a.field.name), update_class=self.ref(a.variant_class))
                for a in _tail_actions(s)
            ),
            folds=folds,
            prompt_class=self.aref(s.prompt_class) if s.prompt_field else "",
            prompt_field=lit(s.prompt_field) if s.prompt_field else "",
            prompt_entry_class=s.prompt_entry_class,
            update_class=self.aref("SessionUpdate"),
            notification_class=self.aref(s.notification_class),
            session_doc=_doc(SESSION_DOC),
            init_doc=_doc(INIT_DOC),
            properties=properties,
            update_rule_doc=_doc(UPDATE_RULE_DOC),
            rules=tuple(self.rule(a) for a in s.actions),
            rules_doc=_doc(UPDATE_RULES_DOC),
            to_json_doc=_doc(TO_JSON_DOC),
            from_json_doc=_doc(FROM_JSON_DOC),
        )
