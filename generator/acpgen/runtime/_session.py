"""The fixed machinery of the session fold that ``session.py`` builds on: the
copy-on-write store (``SessionStore``), the undo records, the base of
``Session`` (``SessionBase``: reading a field, rebuilding what an older
Session saw, folding into the newest one or into a copy), the base of the
history entries and the ``UpdateRule`` record. ``session.py`` prints what
varies with the schema: the store's fields and tables, the fold of each
update kind, the typed classes.

The newest Session of a line of folds shares its store with the Sessions it
was folded from; each of those keeps the undo record of the fold after it, to
rebuild what it saw when it is read again."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

__all__ = [
    "ABSENT",
    "CUT",
    "POP",
    "PUT",
    "SET",
    "Fold",
    "HistoryEntryBase",
    "Link",
    "SessionBase",
    "SessionStore",
    "Undo",
    "UpdateRuleBase",
    "copy_container",
    "enter",
    "extend_message",
    "own",
    "share",
    "start_message",
]

_S = TypeVar("_S", bound="SessionBase")
_new = object.__new__

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
    ``<field>_owned`` are entries no Session handed out yet, which the fold may
    extend in place. A subclass adds the slots of the schema's fields and sets
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
    """The fields whose entries the fold may extend in place."""
    CUT_ATTRS: ClassVar[Mapping[str, str]] = {}
    """The list each in-place extended entry keeps its chunks in, by field."""
    TAIL_CLASSES: ClassVar[Mapping[str, type]] = {}
    """The update class whose chunks extend a message of the field, by
    message field (``tail_class``)."""

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


def own(store: SessionStore, name: str) -> Any:
    """The container of ``name`` in ``store``, to change in place: a copy
    when it was handed out."""
    value = getattr(store, name)
    if getattr(store, name + "_shared"):
        value = copy_container(value)
        setattr(store, name, value)
        setattr(store, name + "_shared", False)
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
    getattr(store, field + "_owned").add(key)
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
    owned: set[str] = getattr(store, field + "_owned")
    owned.clear()  # a message of a kind ends when the next one starts
    owned.add(key)
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


def _fold_of(folds: Mapping[type, Fold], update: object) -> Fold:
    try:
        return folds[type(update)]
    except KeyError:
        raise TypeError(
            f"{type(update).__name__} is not a SessionUpdate of this schema"
        ) from None


class SessionBase:
    """The fields of a Session are read through its store: the newest Session
    of a line of folds hands out the store's values, an older one rebuilds
    them from the store and the undo records since. The subclass defines the
    fields and ``_copy``."""

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

    def _copy(self: _S) -> _S:
        """A Session with a store of its own in the state this one saw."""
        raise NotImplementedError

    @staticmethod
    def _apply_update(
        new_session: Callable[[str], _S],
        folds: Mapping[type, Fold],
        session: _S | None,
        notification: Any,
    ) -> _S:
        """Fold the session/update ``notification`` into ``session`` (None: a
        new one, made by ``new_session`` from the session id) with the fold of
        its update's class in ``folds``."""
        if session is None:
            session = new_session(notification.session_id)
        store = session._store
        if notification.session_id != store.session_id:
            raise ValueError(
                f"the notification is for session {notification.session_id!r}, "
                f"not {store.session_id!r}"
            )
        update = notification.update
        try:
            fold = folds[type(update)]
        except KeyError:
            raise TypeError(
                f"{type(update).__name__} is not a SessionUpdate of this schema"
            ) from None
        if session._undo is not None:
            return session._apply(fold, update)
        # SessionBase._apply, inlined for the newest Session (the usual case).
        undo = fold(store, update)
        new = _new(type(session))
        new._store = store
        new._undo = None
        session._undo = (*undo, new)
        return new

    def _fold(
        self: _S,
        folds: Mapping[type, Fold],
        update: object,
    ) -> _S:
        """The Session with ``update`` folded in by the fold of its class in
        ``folds``."""
        return self._apply(_fold_of(folds, update), update)

    def _apply(self: _S, fold: Fold, update: object) -> _S:
        """The Session with ``update`` folded in by ``fold``: in place into the
        store when this is its newest Session, else into a copy."""
        store = self._store
        if self._undo is not None:
            store = self._copy()._store
        undo = fold(store, update)
        new = _new(type(self))
        new._store = store
        new._undo = None
        if store is self._store:
            self._undo = (*undo, new)
        return new
