"""The fixed machinery of the session fold that ``session.py`` builds on: the
copy-on-write store (``SessionStore``), the undo records, the base of
``Session`` (``SessionBase``: filling a store, reading a field, rebuilding
what an older Session saw, and the one routine that folds an update into a
Session), the folds' common steps, the base of the history entries, the
``UpdateRule`` record and the JSON snapshot. ``session.py`` prints what
varies with the schema: the store's fields and tables, the fold of each
update kind, the typed classes.

The newest Session of a line of folds shares its store with the Sessions it
was folded from; each of those keeps the undo record of the fold after it, to
rebuild what it saw when it is read again."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, TypeVar, cast

from ._runtime import UNSET, ValidationError

__all__ = [
    "ABSENT",
    "CUT",
    "OWNED_AT_MOST",
    "PATCH",
    "POP",
    "PUT",
    "SET",
    "Fold",
    "HistoryEntryBase",
    "Link",
    "SessionBase",
    "SessionStore",
    "SnapshotField",
    "Undo",
    "UpdateRuleBase",
    "append",
    "copy_container",
    "cut",
    "enter",
    "extend_message",
    "fold_message_chunk",
    "own",
    "put",
    "session_from_json",
    "session_to_json",
    "share",
    "start_message",
    "without",
]

_S = TypeVar("_S", bound="SessionBase")
_T = TypeVar("_T", bound="SessionStore")
_V = TypeVar("_V")
_new = object.__new__
_type_of: Callable[[object], type[Any]] = type
"""``type``, typed for an argument of type ``Any``."""

ABSENT: Any = object()
"""An undo's old value for a key that was not there."""

Undo = tuple[int, str, Any, Any, int]
"""What a fold changed, to undo it: (operation, field, key, old value, the
history's length before, or -1 when the fold added no entry)."""
Link = tuple[int, str, Any, Any, int, "SessionBase"]
"""What an older Session keeps: the undo record of the fold after it, and
the Session that fold returned (one tuple: the fold's hot path builds one
object besides the new Session)."""
Fold = Callable[[Any, Any], Undo]
"""The fold of one update class: changes the store (of the generated
``SessionStore`` subclass) in place and returns the undo record."""
PUT = 0
"""The entry ``key`` of the dict ``field`` was ``old`` (``ABSENT``: none)."""
SET = 1
"""The attribute ``field`` was ``old``."""
CUT = 2
"""The list of the entry ``key`` of ``field`` was ``old`` items long."""
POP = 3
"""The list ``field`` was ``old`` items long."""
OWNED_AT_MOST = 32
"""How many entities of a field the store owns at most: the fold owns the
entities it put lately (their updates follow closely), and forgets the
older ones rather than hold a set that grows with the session."""
PATCH = 4
"""The entity ``key`` of the dict ``field``, which the store owns, was
patched in place: ``old`` lists the fields set and their old values (name,
value, name, value ...)."""


class _Message(Protocol):
    """A message streamed as chunks (the generated message class)."""

    @property
    def message_id(self) -> str | None: ...

    @property
    def content(self) -> list[Any]: ...


@dataclass(slots=True, frozen=True)
class HistoryEntryBase:
    """The base of ``HistoryEntry``: a place in the session's history: ``key`` is the key of the entity in
    the Session attribute (a dict) that ``field`` names. Each field with a
    history has its subclass (``HistoryItem`` is their union), whose
    ``value(session)`` is the entity, typed."""

    field: ClassVar[str] = ""
    key: str

    def value(self, session: Any) -> object:
        """The entity at this entry in ``session``."""
        return getattr(session, self.field)[self.key]


@dataclass(slots=True, frozen=True)
class UpdateRuleBase:
    """The fields of ``UpdateRule``: what one session/update kind does (see
    ``UPDATE_RULES``)."""

    tag: str | None
    """The ``sessionUpdate`` value; None for the catch-all variant."""
    action: str
    """``upsert``, ``chunk``, ``message-chunk``, ``set``, ``keyed-set``,
    ``remove`` or ``append``."""
    field: str
    """The Session attribute it changes."""
    key: str
    """The variant's attribute holding the entity's key, or ``""``."""
    started_by: tuple[str, ...]
    """The kinds that must have started the entity (a protocol error
    otherwise)."""


_set_attribute = object.__setattr__
"""Sets a slot of a frozen entry. Not ``HistoryEntryBase``'s ``key`` slot
descriptor: on Python 3.10 ``dataclass(slots=True)`` gives each subclass a
``key`` slot of its own, which that descriptor does not reach."""


class SessionStore:
    """The state of the newest Session of a line of folds, which the fold
    changes in place. A value a Session handed out is shared
    (``<field>_shared``): the fold copies it before changing it. The keys in
    ``<field>_owned`` are entities no Session handed out yet, which the fold may
    extend in place (a message field has none: the fold extends only the tail
    message in place). A subclass adds the slots of the schema's fields and sets
    the tables."""

    __slots__ = (
        "history",
        "history_shared",
        "session_id",
        "tail_class",
        "tail_field",
        "tail_id",
        "tail_items",
        "tail_key",
        "tail_run",
    )
    FIELDS: ClassVar[tuple[str, ...]] = ()
    """The Session fields besides ``history``, in order."""
    SHARED: ClassVar[frozenset[str]] = frozenset({"history"})
    """The fields whose container the fold changes in place unless it was
    handed out."""
    OWNED: ClassVar[frozenset[str]] = frozenset()
    """The entity fields whose entries the fold may extend in place."""
    CUT_ATTRS: ClassVar[Mapping[str, str]] = {}
    """The list each in-place extended entry keeps its chunks in, by field."""
    TAIL_CLASSES: ClassVar[Mapping[str, type]] = {}
    """The update class whose chunks extend a message of the field, by
    message field (``tail_class``): the fold extends the store's tail
    message with such a chunk without calling the field's fold. The class
    has the ``message_id`` and ``content`` of a message chunk."""
    MAPS: ClassVar[frozenset[str]] = frozenset()
    """The fields held as a dict (a new store copies the one it is given)."""
    LISTS: ClassVar[frozenset[str]] = frozenset()
    """The fields held as a list (a new store copies the items it is given)."""

    session_id: str
    history: list[Any]
    history_shared: bool
    tail_field: str
    """The message field of the last history entry while the store owns that
    message (a chunk of its kind may extend it in place), else ``""`` ..."""
    tail_class: type | None
    """... the update class of those chunks (None while ``tail_field`` is
    ``""``), ..."""
    tail_key: str
    tail_id: str | None
    tail_items: list[Any]
    """... its key, message id and content ..."""
    tail_run: tuple[str, str]
    """... and its field and key together (what an older Session keeps of
    a chunk that extended it)."""

    @classmethod
    def fill(
        cls: type[_T],
        session_id: str,
        history: Iterable[Any],
        values: Sequence[Any],
    ) -> _T:
        """A store of a Session in this state: ``values`` are those of
        :attr:`FIELDS`, in order (copied: they stay the caller's; None for a
        dict field is an empty one); nothing is shared or owned yet."""
        store = cls()
        store.session_id = session_id
        store.history = list(history)
        store.tail_field = ""
        store.tail_class = None
        maps, lists = cls.MAPS, cls.LISTS
        for name, value in zip(cls.FIELDS, values, strict=True):
            if name in maps:
                value = {} if value is None else dict(value)
            elif name in lists:
                value = list(value)
            setattr(store, name, value)
        for name in cls.SHARED:
            setattr(store, name + "_shared", False)
        for name in cls.OWNED:
            setattr(store, name + "_owned", set())
        return store


def share(store: SessionStore, name: str) -> Any:
    """The value of ``name`` in ``store``, handed out: from now on the fold
    copies it (and its entries) before changing it."""
    if name in store.SHARED:
        setattr(store, name + "_shared", True)
    if name in store.OWNED:
        getattr(store, name + "_owned").clear()
    if store.tail_field == name:
        store.tail_field = ""
        store.tail_class = None
    return getattr(store, name)


class _Suffixed(dict[str, str]):
    """Each field's name with ``suffix``, made once."""

    def __init__(self, suffix: str) -> None:
        super().__init__()
        self.suffix = suffix

    def __missing__(self, name: str) -> str:
        value = self[name] = name + self.suffix
        return value


_SHARED_FLAGS = _Suffixed("_shared")
"""``<field>_shared`` by field."""


def own(store: SessionStore, name: str) -> Any:
    """The container of ``name`` in ``store``, to change in place: a copy
    when it was handed out."""
    value = getattr(store, name)
    flag = _SHARED_FLAGS[name]
    if getattr(store, flag):
        value = copy_container(value)
        setattr(store, name, value)
        setattr(store, flag, False)
    return value


def copy_container(value: Any) -> Any:
    """A shallow copy of a dict or list; any other value as it is."""
    if type(value) in (dict, list):
        return value.copy()
    return value


def enter(store: SessionStore, entry_class: type[HistoryEntryBase], key: str) -> int:
    """Add an entry of ``entry_class`` for ``key`` to the history (built
    without its ``__init__``); returns the history's length before."""
    entry = _new(entry_class)
    _set_attribute(entry, "key", key)
    history = store.history
    if store.history_shared:
        history = store.history = history.copy()
        store.history_shared = False
    size = len(history)
    history.append(entry)
    store.tail_field = ""
    store.tail_class = None
    return size


def extend_message(
    store: SessionStore, field: str, key: str, current: _Message, message: _Message
) -> Undo:
    """Replace the message ``key`` (``current``: handed out, or taking an id)
    with ``message``, ``current`` extended, which the store owns."""
    messages: dict[str, _Message] = own(store, field)
    messages[key] = message
    _set_tail(store, field, key, message)
    return (PUT, field, key, current, -1)


def start_message(
    store: SessionStore,
    field: str,
    entry_class: type[HistoryEntryBase],
    message: _Message,
) -> Undo:
    """Start ``message``, the message of a new history entry of
    ``entry_class`` (keyed ``#`` and its place in the history)."""
    key = f"#{len(store.history)}"
    messages: dict[str, _Message] = own(store, field)
    messages[key] = message
    size = enter(store, entry_class, key)
    _set_tail(store, field, key, message)
    return (PUT, field, key, ABSENT, size)


def _set_tail(store: SessionStore, field: str, key: str, message: _Message) -> None:
    store.tail_field = field
    store.tail_class = store.TAIL_CLASSES.get(field)
    store.tail_key = key
    store.tail_run = (field, key)
    store.tail_id = message.message_id
    store.tail_items = message.content


def put(
    store: SessionStore,
    field: str,
    key: str,
    old: Any,
    new: Any,
    entry_class: type[HistoryEntryBase] | None,
    owned: bool,
) -> Undo:
    """Put ``new`` at ``key`` of the dict ``field`` (where ``old`` was, or
    ``ABSENT``): the store owns it when ``owned`` (the field's chunks may
    extend it in place); a new key of a field with a history (its
    ``entry_class``) takes a place in the history."""
    states: dict[str, Any] = own(store, field)
    states[key] = new
    if owned:
        keys: set[str] = getattr(store, field + "_owned")
        if len(keys) >= OWNED_AT_MOST:
            keys.clear()
        keys.add(key)
    if old is ABSENT and entry_class is not None:
        return (PUT, field, key, old, enter(store, entry_class, key))
    return (PUT, field, key, old, -1)


def cut(items: list[Any], item: object, field: str, key: str) -> Undo:
    """Append ``item`` in place to ``items``, the list of the entry ``key``
    of ``field`` that the store owns."""
    size = len(items)
    items.append(item)
    return (CUT, field, key, size, -1)


def append(store: SessionStore, field: str, item: object) -> Undo:
    """Append ``item`` to the list ``field``."""
    items: list[Any] = own(store, field)
    size = len(items)
    items.append(item)
    return (POP, field, None, size, -1)


def without(values: Mapping[str, _V], key: object) -> dict[str, _V]:
    """A copy of ``values`` without ``key`` (there or not)."""
    out = dict(values)
    out.pop(key, None)  # type: ignore[call-overload]
    return out


def fold_message_chunk(
    store: SessionStore,
    field: str,
    entry_class: type[HistoryEntryBase],
    message_class: type[Any],
    message_id: object,
    content: object,
) -> Undo:
    """Fold a chunk of a message of ``field`` (its id ``message_id``: a
    string, None or ``UNSET``) with ``content``: it extends the message of the
    last history entry when that is one of ``field``'s (``entry_class``) and
    the ids do not differ, else it starts a message (of ``message_class``)."""
    if store.tail_field == field and (
        message_id is UNSET or message_id is None or message_id == store.tail_id
    ):
        # The message of the last entry, which the store owns: extend it in place.
        return cut(store.tail_items, content, field, store.tail_key)
    wire_id = message_id if isinstance(message_id, str) else None
    history = store.history
    if history:
        last = history[-1]
        if type(last) is entry_class:
            key = last.key
            current: _Message = getattr(store, field)[key]
            known = current.message_id
            if wire_id is None or known is None or known == wire_id:
                message = message_class(
                    message_id=known if wire_id is None else wire_id,
                    content=[*current.content, content],
                )
                return extend_message(store, field, key, current, message)
    # start_message(store, field, entry_class, message_class(message_id=wire_id,
    # content=[content])) inline, the message and its entry built without
    # their __init__: a message starts several times a turn.
    items = [content]
    started: Any = _new(message_class)
    started.message_id = wire_id
    started.content = items
    size = len(history)
    key = f"#{size}"
    messages: dict[str, _Message] = getattr(store, field)
    if getattr(store, _SHARED_FLAGS[field]):
        messages = own(store, field)
    messages[key] = started
    entry = _new(entry_class)
    _set_attribute(entry, "key", key)
    if store.history_shared:
        history = store.history = history.copy()
        store.history_shared = False
    history.append(entry)
    store.tail_field = field
    store.tail_class = store.TAIL_CLASSES.get(field)
    store.tail_key = key
    store.tail_run = (field, key)
    store.tail_id = wire_id
    store.tail_items = items
    return (PUT, field, key, ABSENT, size)


class _Carrier:
    """An update and the session it is for, as a notification holds them."""

    __slots__ = ("session_id", "update")

    def __init__(self, session_id: str, update: object) -> None:
        self.session_id = session_id
        self.update = update


class SessionBase:
    """The fields of a Session are read through its store: the newest Session
    of a line of folds hands out the store's values, an older one rebuilds
    them from the store and the undo records since.

    The subclass (``Session``) declares the fields, its store class, and is
    given its folds as class arguments: ``folds`` (update class -> fold) makes
    its ``apply_session_update`` and ``fold_session_update``, and ``prompt``
    (the fold of the client's session/prompt request) its ``apply_prompt``."""

    __slots__ = ("_cache", "_cut", "_run", "_store", "_undo")
    _store: SessionStore
    _undo: Link | SessionBase | None
    """None for the newest Session of its store; else what the fold after
    it changed and the Session that fold returned (a :data:`Link`), or,
    after a chunk that extended the store's tail message in place (the
    usual case, which builds no record), just that Session, with ..."""
    _run: tuple[str, str]
    """... the field and key of that message (the store's ``tail_run``) ..."""
    _cut: int
    """... and how many chunks it had before (set with such an ``_undo``)."""
    _cache: dict[str, Any]
    """The fields read (set on the first read)."""

    def __init_subclass__(
        cls,
        folds: Mapping[type, Fold] | None = None,
        prompt: Fold | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        made: dict[str, Callable[[Any, Any], Any]] = {}
        if folds is not None:
            apply = cls._folder(folds.get, "notification")
            made["apply_session_update"] = apply
            made["fold_session_update"] = _folding_updates(apply)
        if prompt is not None:
            fold = prompt
            made["apply_prompt"] = _folding_prompts(
                cls._folder(lambda _: fold, "request")
            )
        for name, function in made.items():
            # The subclass declares them, typed by its schema.
            setattr(cls, name, staticmethod(function))

    def _start(
        self,
        store_class: type[SessionStore],
        session_id: str,
        history: Iterable[Any],
        values: Sequence[Any],
    ) -> None:
        """Make this the newest Session of a new store (``store_class.fill``)."""
        self._store = store_class.fill(session_id, history, values)
        self._undo = None

    @classmethod
    def _folder(
        cls, fold_of: Callable[[type], Fold | None], subject: str
    ) -> Callable[[Any, Any], Any]:
        """The fold of ``cls``'s Sessions, ``fold_of`` giving the fold of an
        update's class (None: not an update it folds): a function of a
        Session (None: a session not seen before) and of a ``subject`` (a
        notification, a request) with the ``session_id`` it is for and the
        ``update`` to fold.

        The one routine that folds an update into a Session: the newest
        Session of a store folds into it in place (a chunk of the store's
        tail message without calling the fold) and returns the store's new
        newest Session, linking itself to it; a new session starts from an
        empty Session and an older one from a copy of what it saw."""
        new_session: Any = cls

        def apply(session: Any, notification: Any) -> Any:
            """Fold a session/update notification into ``session`` (None: a
            session not seen before); returns a new Session and changes
            neither argument. Raises ``ValueError`` when the notification is
            for another session."""
            if session is not None and session._undo is None:
                # The newest Session of its store (the usual case): the fold
                # changes the store in place and returns the store's new
                # newest Session; this one keeps what to undo.
                store = session._store
                if notification.session_id == store.session_id:
                    update = notification.update
                    kind = _type_of(update)
                    if kind is store.tail_class:
                        message_id = update.message_id
                        if (
                            message_id is UNSET
                            or message_id is None
                            or message_id == store.tail_id
                        ):
                            # A chunk of the message the store owns (its
                            # fold's first case), without a call: the older
                            # Session keeps what to cut, without a record.
                            new = _new(new_session)
                            new._store = store
                            new._undo = None
                            items = store.tail_items
                            session._undo = new
                            session._run = store.tail_run
                            session._cut = len(items)
                            items.append(update.content)
                            return new
                    fold = fold_of(kind)
                    if fold is None:
                        raise TypeError(
                            f"{kind.__name__} is not a SessionUpdate of this schema"
                        )
                    new = _new(new_session)
                    new._store = store
                    new._undo = None
                    # A concatenation builds one tuple; (*undo, new) a list first.
                    session._undo = fold(store, update) + (new,)  # noqa: RUF005
                    return new
            if session is None:
                return apply(new_session(notification.session_id), notification)
            if notification.session_id != session.session_id:
                raise ValueError(
                    f"the {subject} is for session {notification.session_id!r}, "
                    f"not {session.session_id!r}"
                )
            # An older Session: the fold goes into a copy of what it saw.
            return apply(session._copy(), notification)

        if subject != "notification":
            apply.__doc__ = None
        return apply

    def _links(self) -> list[Link]:
        """The undo records from this Session to the newest of its line,
        oldest first, a chunk's in the same form as the others'."""
        links: list[Link] = []
        session = self
        link = session._undo
        while link is not None:
            if isinstance(link, SessionBase):
                field, key = session._run
                links.append((CUT, field, key, session._cut, -1, link))
                session = link
            else:
                links.append(link)
                session = link[5]
            link = session._undo
        return links

    @property
    def session_id(self) -> str:
        """The ``sessionId`` of the session."""
        return self._store.session_id

    def __repr__(self) -> str:
        names = ("history", *self._store.FIELDS)
        fields = ", ".join(f"{name}={self._read(name)!r}" for name in names)
        return f"Session(session_id={self._store.session_id!r}, {fields})"

    def _read(self, name: str) -> Any:
        try:
            cache = self._cache
        except AttributeError:
            cache = self._cache = {}
        if name in cache:
            return cache[name]
        store = self._store
        value = share(store, name) if self._undo is None else self._rebuild(name)
        cache[name] = value
        return value

    def _rebuild(self, name: str) -> Any:
        """The value of ``name`` this (older) Session saw: the newest value,
        copied, with the changes since undone, newest first."""
        undos = self._links()
        value = copy_container(share(self._store, name))
        cut_attrs = self._store.CUT_ATTRS
        copied: set[Any] = set()
        for op, field, key, old, size, _ in reversed(undos):
            if name == "history":
                if size >= 0:
                    del value[size:]
            elif field != name:
                continue
            elif op == SET:
                value = old
            elif op == POP:
                del value[old:]
            elif op == PUT:
                copied.discard(key)
                if old is ABSENT:
                    del value[key]
                else:
                    value[key] = old
            elif op == PATCH:
                entry = value[key] if key in copied else copy.copy(value[key])
                for index in range(0, len(old), 2):
                    setattr(entry, old[index], old[index + 1])
                attr = cut_attrs.get(field)
                if attr is not None:
                    # Its own list of chunks, which an older cut may shorten.
                    setattr(entry, attr, list(getattr(entry, attr)))
                value[key] = entry
                copied.add(key)
            elif key in copied:
                del getattr(value[key], cut_attrs[field])[old:]
            else:
                entry = copy.copy(value[key])
                attr = cut_attrs[field]
                setattr(entry, attr, getattr(entry, attr)[:old])
                value[key] = entry
                copied.add(key)
        return value

    def changed_fields(self) -> frozenset[str]:
        """The fields the folds from this Session to the newest of its line
        changed (none for the newest): read from the undo records."""
        return frozenset(link[1] for link in self._links())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionBase):
            return NotImplemented
        if self._store.session_id != other._store.session_id:
            return False
        return all(
            self._read(name) == other._read(name)
            for name in ("history", *self._store.FIELDS)
        )

    def _copy(self: _S) -> _S:
        """A Session with a store of its own in the state this one saw."""
        store = self._store
        copy = _new(type(self))
        copy._start(
            type(store),
            store.session_id,
            self._read("history"),
            [self._read(name) for name in store.FIELDS],
        )
        return copy


def _folding_updates(apply: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``fold_session_update`` by the fold routine ``apply`` (an update for
    the session it is folded into)."""

    def fold_session_update(session: Any, update: object) -> Any:
        """Fold one decoded SessionUpdate into ``session``; returns a new Session."""
        return apply(session, _Carrier(session.session_id, update))

    return fold_session_update


def _folding_prompts(apply: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``apply_prompt`` by the fold routine ``apply`` of the prompt fold (a
    request names its session as a notification does)."""

    def apply_prompt(session: Any, request: Any) -> Any:
        """Fold the client's own session/prompt request into ``session`` (None:
        a session not seen before): the prompt becomes a new message of the
        user, whatever the last history entry is. The agent's answer then
        starts a message of its own instead of extending the last one of the
        turn before, as in the reference client (Zed adds the prompt to its
        thread when it sends it). Call it when the request is sent, before the
        updates of its turn arrive; returns a new Session and changes neither
        argument. Raises ``ValueError`` when the request is for another
        session."""
        return apply(session, _Carrier(request.session_id, request))

    return apply_prompt


@dataclass(frozen=True, slots=True)
class SnapshotField:
    """How a Session field is written in its JSON snapshot and read back."""

    name: str
    """The Session attribute."""
    wire_name: str
    """Its key in the snapshot."""
    form: Literal["map", "messages", "optional", "list"]
    """A dict of values by key, a dict of messages by key, one value or
    None, or a list of values."""
    decode_as: str
    """The ``$defs`` name a value (a list item, a message's content block)
    decodes as ..."""
    restore: Callable[[None, Any], Any] | None = None
    """... and the patch function that makes a new state of the decoded
    value, if the field holds states ..."""
    message_class: Callable[..., Any] | None = None
    """... or the message class, if it holds messages."""
    entry_class: type[HistoryEntryBase] | None = None
    """The class of the field's history entries, if it has a history."""


def session_to_json(
    session: Any, fields: Sequence[SnapshotField], encode: Callable[[Any], Any]
) -> dict[str, Any]:
    """The JSON snapshot of ``session``: every value in its wire form
    (``encode``), history entries by the snapshot's key of their field."""
    wire_names = {f.name: f.wire_name for f in fields}
    out: dict[str, Any] = {
        "sessionId": session.session_id,
        "history": [
            {"field": wire_names[e.field], "key": e.key} for e in session.history
        ],
    }
    for f in fields:
        value = getattr(session, f.name)
        if f.form == "map":
            out[f.wire_name] = {key: encode(item) for key, item in value.items()}
        elif f.form == "messages":
            out[f.wire_name] = {
                key: {
                    "messageId": item.message_id,
                    "content": [encode(block) for block in item.content],
                }
                for key, item in value.items()
            }
        elif f.form == "optional":
            out[f.wire_name] = None if value is None else encode(value)
        else:
            out[f.wire_name] = [encode(item) for item in value]
    return out


def session_from_json(
    session_class: Callable[..., _S],
    fields: Sequence[SnapshotField],
    decode: Callable[[str, Any], Any],
    data: Any,
) -> _S:
    """The Session (of ``session_class``) a :func:`session_to_json` snapshot
    holds. Raises ``ValidationError`` when ``data`` is not one."""
    names = {f.wire_name: f.name for f in fields}
    entry_classes = {f.name: f.entry_class for f in fields if f.entry_class is not None}
    try:
        session_id = str(data["sessionId"])
        history = [
            entry_classes[names[e["field"]]](key=str(e["key"])) for e in data["history"]
        ]
        values: dict[str, Any] = {}
        for f in fields:
            value = data[f.wire_name]
            if f.form == "messages":
                message_class = cast("Callable[..., Any]", f.message_class)
                values[f.name] = {
                    str(key): message_class(
                        message_id=item["messageId"],
                        content=[
                            decode(f.decode_as, block) for block in item["content"]
                        ],
                    )
                    for key, item in value.items()
                }
            elif f.form == "map":
                values[f.name] = {
                    str(key): _restored(f, decode, item) for key, item in value.items()
                }
            elif f.form == "optional":
                values[f.name] = None if value is None else _restored(f, decode, value)
            else:
                values[f.name] = [decode(f.decode_as, item) for item in value]
        return session_class(session_id=session_id, history=history, **values)
    except ValidationError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        # ValueError: str() of an integer over 4,300 digits, say.
        raise ValidationError(
            f"not a session snapshot: {type(exc).__name__} {exc}"
        ) from None


def _restored(f: SnapshotField, decode: Callable[[str, Any], Any], value: Any) -> Any:
    decoded = decode(f.decode_as, value)
    return decoded if f.restore is None else f.restore(None, decoded)
