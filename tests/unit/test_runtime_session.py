"""The session fold's runtime module on its own: a store with one list field
and one dict field, folds written here, the undo records and the rebuild of
what an older Session saw."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from acpgen.runtime import _session as rt
from acpgen.runtime._runtime import UNSET as rt_unset
from acpgen.runtime._runtime import ValidationError


class Store(rt.SessionStore):
    __slots__ = ("items", "items_shared", "values", "values_shared")
    FIELDS = ("items", "values")
    SHARED = frozenset({"items", "values", "history"})
    MAPS = frozenset({"values"})
    LISTS = frozenset({"items"})
    items: list[int]
    items_shared: bool
    values: dict[str, int]
    values_shared: bool


class Entry(rt.HistoryEntryBase):
    __slots__ = ()
    field = "values"


def append(store: rt.SessionStore, update: int) -> rt.Undo:
    return rt.append(store, "items", update)


def put(store: rt.SessionStore, update: tuple[str, int]) -> rt.Undo:
    key, value = update
    values: dict[str, int] = store.values
    return rt.put(store, "values", key, values.get(key, rt.ABSENT), value, Entry, False)


def prompt(store: rt.SessionStore, request: Request) -> rt.Undo:
    return rt.append(store, "items", -request.number)


class Session(rt.SessionBase, folds={int: append, tuple: put}, prompt=prompt):
    __slots__ = ()
    apply_session_update: ClassVar[Callable[[Session | None, Any], Session]]
    fold_session_update: ClassVar[Callable[[Session, object], Session]]
    apply_prompt: ClassVar[Callable[[Session | None, Any], Session]]

    def __init__(self, session_id: str, history: Any = (), items: Any = (), values: Any = None) -> None:
        self._start(Store, session_id, history, (items, values))

    def read(self, name: str) -> Any:
        return self._read(name)


class Notification:
    def __init__(self, session_id: str, update: object) -> None:
        self.session_id = session_id
        self.update = update


class Request:
    def __init__(self, session_id: str, number: int) -> None:
        self.session_id = session_id
        self.number = number


def fold(session: Session | None, *updates: object, session_id: str = "s") -> Session:
    for update in updates:
        session = Session.apply_session_update(session, Notification(session_id, update))
    assert session is not None
    return session


def test_older_sessions_see_their_own_state() -> None:
    s0 = Session("s")
    s1 = fold(s0, 1)
    s2 = fold(s1, ("a", 1))
    s3 = fold(s2, ("a", 2))
    s4 = fold(s3, 2)
    assert s4.read("items") == [1, 2] and s4.read("values") == {"a": 2}
    assert s3.read("items") == [1] and s3.read("values") == {"a": 2}
    assert s2.read("values") == {"a": 1}
    assert s1.read("values") == {} and s1.read("items") == [1]
    assert s0.read("items") == [] and s0.read("history") == []
    assert [e.key for e in s4.read("history")] == ["a"]
    assert s1.read("history") == []


def test_a_value_handed_out_is_copied_before_the_fold_changes_it() -> None:
    s1 = fold(Session("s"), 1)
    seen = s1.read("items")
    s2 = fold(s1, 2)
    assert seen == [1] and s1.read("items") is seen
    assert s2.read("items") == [1, 2]


def test_folding_an_older_session_branches_off_a_copy() -> None:
    s1 = fold(Session("s"), 1)
    s2 = fold(s1, 2)
    branch = fold(s1, 3)
    assert branch._store is not s2._store
    assert branch.read("items") == [1, 3] and s2.read("items") == [1, 2]
    assert s1.read("items") == [1]


def test_apply_update_checks_the_session_and_the_update_class() -> None:
    s1 = Session.apply_session_update(None, Notification("s", 5))
    assert s1.read("items") == [5] and s1.session_id == "s"
    with pytest.raises(ValueError, match="the notification is for session 'other', not 's'"):
        Session.apply_session_update(s1, Notification("other", 6))
    with pytest.raises(TypeError, match="str is not a SessionUpdate"):
        Session.apply_session_update(s1, Notification("s", "x"))
    s2 = Session.apply_session_update(s1, Notification("s", 6))
    s1b = Session.apply_session_update(s1, Notification("s", 7))
    assert s2.read("items") == [5, 6] and s1b.read("items") == [5, 7]
    # An older Session checks the same, before copying what it saw.
    with pytest.raises(ValueError, match="for session 'other', not 's'"):
        Session.apply_session_update(s1, Notification("other", 8))
    with pytest.raises(TypeError, match="str is not a SessionUpdate"):
        Session.apply_session_update(s1, Notification("s", "x"))


def test_the_newest_session_links_to_the_next_and_an_older_one_does_not() -> None:
    s1 = fold(Session("s"), 1)
    s2 = fold(s1, 2)
    assert s1._undo is not None and s1._undo[-1] is s2 and s2._undo is None
    assert s2._store is s1._store
    branch = fold(s1, 3)
    assert branch._undo is None and branch._store is not s1._store
    assert s1._undo[-1] is s2  # the older Session keeps its line


def test_repr_lists_history_then_the_fields() -> None:
    s = fold(Session("s"), ("k", 3))
    assert repr(s) == "Session(session_id='s', history=[Entry(key='k')], items=[], values={'k': 3})"


def test_copy_container_copies_only_dicts_and_lists() -> None:
    d, lst, t = {"a": 1}, [1], (1,)
    assert rt.copy_container(d) == d and rt.copy_container(d) is not d
    assert rt.copy_container(lst) == lst and rt.copy_container(lst) is not lst
    assert rt.copy_container(t) is t


def test_fold_takes_the_fold_of_the_update_class() -> None:
    s1 = Session.fold_session_update(Session("s"), 4)
    assert s1.read("items") == [4]
    s2 = Session.fold_session_update(s1, ("a", 1))
    assert s2.read("values") == {"a": 1} and s1.read("values") == {}
    with pytest.raises(TypeError, match="float is not a SessionUpdate"):
        Session.fold_session_update(s1, 1.5)


def test_apply_prompt_folds_the_request_with_the_prompt_fold() -> None:
    s1 = Session.apply_prompt(None, Request("s", 3))
    assert s1.session_id == "s" and s1.read("items") == [-3]
    s2 = Session.apply_prompt(s1, Request("s", 4))
    assert s2.read("items") == [-3, -4] and s1.read("items") == [-3]
    with pytest.raises(ValueError, match="the request is for session 'x', not 's'"):
        Session.apply_prompt(s2, Request("x", 5))


def test_a_session_class_without_a_prompt_fold_has_no_apply_prompt() -> None:
    class Plain(rt.SessionBase, folds={int: append}):
        __slots__ = ()

    assert hasattr(Plain, "apply_session_update") and not hasattr(Plain, "apply_prompt")
    assert not hasattr(rt.SessionBase, "apply_session_update")


def test_a_new_store_copies_what_it_is_given() -> None:
    items, values = [1], {"a": 1}
    s = Session("s", (), items, values)
    store = s._store
    assert not store.items_shared and not store.values_shared and not store.history_shared
    assert store.tail_field == "" and store.tail_class is None
    assert s.read("items") == [1] and s.read("items") is not items
    assert s.read("values") == {"a": 1} and s.read("values") is not values
    assert Session("s").read("values") == {}


def test_sessions_are_equal_when_their_states_are() -> None:
    a = fold(Session("s"), 1, ("k", 2))
    b = fold(Session("s"), 1, ("k", 2))
    assert a == b and (a != b) is False
    assert fold(a, 3) != b
    assert Session("s") != Session("t")
    assert a != object() and a.__eq__(object()) is NotImplemented
    older = fold(Session("s"), 1)
    fold(older, 5)
    assert older == fold(Session("s"), 1)


def test_a_cut_undo_rebuilds_the_entry_with_fewer_chunks() -> None:
    class Box:
        def __init__(self, parts: list[int]) -> None:
            self.parts = parts

    class CutStore(Store):
        __slots__ = ()
        CUT_ATTRS: ClassVar[Mapping[str, str]] = {"values": "parts"}

    def extend(store: Store, part: int) -> rt.Undo:
        box: Any = store.values["b"]
        size = len(box.parts)
        box.parts.append(part)
        return (rt.CUT, "values", "b", size, -1)

    s0 = Session("s")
    store = CutStore()
    for name in ("session_id", "history", "history_shared", "tail_field", "tail_class", *Store.__slots__):
        setattr(store, name, getattr(s0._store, name))
    s0._store = store
    box = Box([1])
    store.values = {"b": box}
    s1 = s0._folder(lambda _: extend, "notification")(s0, Notification("s", 2))
    s2 = s1._folder(lambda _: extend, "notification")(s1, Notification("s", 3))
    assert s2.read("values")["b"].parts == [1, 2, 3]
    assert s1.read("values")["b"].parts == [1, 2]
    assert s0.read("values")["b"].parts == [1]


def test_session_id_is_the_store_s() -> None:
    s = Session("abc")
    assert s.session_id == "abc" and fold(s, 1, session_id="abc").session_id == "abc"


@dataclass(slots=True, frozen=True)
class GeneratedEntry(rt.HistoryEntryBase):
    """Declared as the session template declares the history classes."""


@dataclass(slots=True, frozen=True)
class GeneratedValuesEntry(GeneratedEntry):
    field: ClassVar[str] = "values"


def test_an_entry_declared_as_the_packages_declare_it_keeps_its_key() -> None:
    """On Python 3.10 ``dataclass(slots=True)`` gives each subclass a slot of
    its own for an inherited field: ``enter`` must set the slot the entry's
    class reads (an entry set through the base's slot had no ``key`` there)."""
    store = Session("s")._store
    assert rt.enter(store, GeneratedValuesEntry, "k") == 0
    (entry,) = store.history
    assert type(entry) is GeneratedValuesEntry and entry.key == "k"
    assert entry == GeneratedValuesEntry(key="k")
    with pytest.raises(AttributeError):
        entry.key = "other"  # type: ignore[misc]


# A store with a message field, as v1's: chunks of a kind form a message.


@dataclass(slots=True)
class Message:
    message_id: str | None = None
    content: list[str] = field(default_factory=lambda: [])


class Chunk:
    def __init__(self, content: str, message_id: object = rt_unset) -> None:
        self.content = content
        self.message_id = message_id


class Other(Chunk):
    """A chunk of another kind (its own field)."""


class MessageStore(rt.SessionStore):
    __slots__ = ("other", "other_owned", "other_shared", "said", "said_owned", "said_shared")
    FIELDS = ("said", "other")
    SHARED = frozenset({"said", "other", "history"})
    OWNED = frozenset({"said", "other"})
    MAPS = frozenset({"said", "other"})
    CUT_ATTRS: ClassVar[Mapping[str, str]] = {"said": "content", "other": "content"}
    TAIL_CLASSES: ClassVar[Mapping[str, type]] = {"said": Chunk, "other": Other}
    said: dict[str, Message]
    other: dict[str, Message]


class SaidEntry(rt.HistoryEntryBase):
    __slots__ = ()
    field = "said"


class OtherEntry(rt.HistoryEntryBase):
    __slots__ = ()
    field = "other"


FOLDED: list[str] = []


def fold_said(store: rt.SessionStore, update: Chunk) -> rt.Undo:
    FOLDED.append(update.content)
    return rt.fold_message_chunk(store, "said", SaidEntry, Message, update.message_id, update.content)


def fold_other(store: rt.SessionStore, update: Other) -> rt.Undo:
    FOLDED.append(update.content)
    return rt.fold_message_chunk(store, "other", OtherEntry, Message, update.message_id, update.content)


class Chat(rt.SessionBase, folds={Chunk: fold_said, Other: fold_other}):
    __slots__ = ()
    apply_session_update: ClassVar[Callable[[Chat | None, Any], Chat]]

    def __init__(self, session_id: str, history: Any = (), said: Any = None, other: Any = None) -> None:
        self._start(MessageStore, session_id, history, (said, other))

    def read(self, name: str) -> Any:
        return self._read(name)


def chat(session: Chat | None, *updates: Chunk) -> Chat:
    for update in updates:
        session = Chat.apply_session_update(session, Notification("s", update))
    assert session is not None
    return session


def test_the_chunks_of_the_tail_message_extend_it_without_their_fold() -> None:
    FOLDED.clear()
    s1 = chat(None, Chunk("a"))
    s2 = chat(s1, Chunk("b"))
    s3 = chat(s2, Chunk("c", None))
    # Only the first chunk went through the fold; the others extended the
    # message in place, each older Session keeping how many chunks it saw.
    assert FOLDED == ["a"]
    assert s2._undo is s3 and s2._cut == 2 and s2._run == ("said", "#0")
    assert s3.read("said") == {"#0": Message(None, ["a", "b", "c"])}
    assert s2.read("said") == {"#0": Message(None, ["a", "b"])}
    assert s1.read("said") == {"#0": Message(None, ["a"])}
    assert s1.changed_fields() == frozenset({"said"})


def test_a_chunk_of_another_message_goes_through_its_fold() -> None:
    FOLDED.clear()
    s1 = chat(None, Chunk("a", "m1"))
    s2 = chat(s1, Chunk("b", "m2"))  # another id: a new message
    s3 = chat(s2, Other("x"))  # another kind: a message of its field
    s4 = chat(s3, Chunk("c"))  # the tail is the other field's message now
    assert FOLDED == ["a", "b", "x", "c"]
    assert s4.read("said") == {"#0": Message("m1", ["a"]), "#1": Message("m2", ["b"]), "#3": Message(None, ["c"])}
    assert [(type(e), e.key) for e in s4.read("history")] == [
        (SaidEntry, "#0"),
        (SaidEntry, "#1"),
        (OtherEntry, "#2"),
        (SaidEntry, "#3"),
    ]
    assert s2.read("history") == [SaidEntry(key="#0"), SaidEntry(key="#1")]


def test_a_message_handed_out_is_extended_as_a_copy() -> None:
    s1 = chat(None, Chunk("a", "m"))
    seen = s1.read("said")["#0"]
    s2 = chat(s1, Chunk("b"))
    assert seen == Message("m", ["a"])
    assert s2.read("said")["#0"] == Message("m", ["a", "b"])
    # Reading it handed it out: the next chunk replaces it with an extended
    # copy, which is the store's own again, for the chunks after it.
    s3 = chat(s2, Chunk("c", "m"))
    assert isinstance(s2._undo, tuple) and s2._undo[:2] == (rt.PUT, "said")
    s4 = chat(s3, Chunk("d"))
    assert s3._undo is s4 and s4.read("said")["#0"] == Message("m", ["a", "b", "c", "d"])
    assert s1.read("said")["#0"] is seen


def test_put_enters_a_new_key_in_the_history_and_owns_it_when_asked() -> None:
    store = Store.fill("s", (), ((), {"a": 1}))
    assert rt.put(store, "values", "b", rt.ABSENT, 2, Entry, False) == (rt.PUT, "values", "b", rt.ABSENT, 0)
    assert store.history == [Entry(key="b")]
    assert rt.put(store, "values", "b", 2, 3, Entry, False) == (rt.PUT, "values", "b", 2, -1)
    assert rt.put(store, "values", "c", rt.ABSENT, 4, None, False)[4] == -1
    assert store.values == {"a": 1, "b": 3, "c": 4} and len(store.history) == 1
    owned = MessageStore.fill("s", (), (None, None))
    rt.put(owned, "said", "k", rt.ABSENT, Message(), None, True)
    assert owned.said_owned == {"k"}


def test_cut_append_and_without() -> None:
    items = [1, 2]
    assert rt.cut(items, 3, "f", "k") == (rt.CUT, "f", "k", 2, -1) and items == [1, 2, 3]
    store = Store.fill("s", (), ((7,), None))
    assert rt.append(store, "items", 8) == (rt.POP, "items", None, 1, -1) and store.items == [7, 8]
    values = {"a": 1, "b": 2}
    assert rt.without(values, "a") == {"b": 2} and values == {"a": 1, "b": 2}
    assert rt.without(values, "z") == values


def test_a_snapshot_round_trips_and_a_broken_one_is_a_validation_error() -> None:
    def encode(value: Any) -> Any:
        return {"v": value}

    def decode(name: str, value: Any) -> Any:
        return (name, value["v"])

    fields = (
        rt.SnapshotField("said", "saidWire", "messages", "Block", message_class=Message, entry_class=SaidEntry),
        rt.SnapshotField("other", "otherWire", "map", "Thing", restore=lambda _, v: ("restored", v)),
    )

    class Snap(rt.SessionBase):
        __slots__ = ()

        def __init__(self, session_id: str, history: Any = (), said: Any = None, other: Any = None) -> None:
            self._start(MessageStore, session_id, history, (said, other))

        @property
        def history(self) -> Any:
            return self._read("history")

        @property
        def said(self) -> Any:
            return self._read("said")

        @property
        def other(self) -> Any:
            return self._read("other")

    s = Snap("s", [SaidEntry(key="#0")], {"#0": Message("m", [1])}, {"k": 5})
    data = rt.session_to_json(s, fields, encode)
    assert data == {
        "sessionId": "s",
        "history": [{"field": "saidWire", "key": "#0"}],
        "saidWire": {"#0": {"messageId": "m", "content": [{"v": 1}]}},
        "otherWire": {"k": {"v": 5}},
    }
    back = rt.session_from_json(Snap, fields, decode, data)
    assert back.history == [SaidEntry(key="#0")]
    assert back.said == {"#0": Message("m", [("Block", 1)])}
    assert back.other == {"k": ("restored", ("Thing", 5))}
    with pytest.raises(ValidationError, match="not a session snapshot: KeyError 'otherWire'"):
        rt.session_from_json(Snap, fields, decode, {k: v for k, v in data.items() if k != "otherWire"})
    with pytest.raises(ValidationError, match="not a session snapshot: KeyError 'nope'"):
        rt.session_from_json(Snap, fields, decode, {**data, "history": [{"field": "nope", "key": "#0"}]})


# A store whose entities the folds patch in place while it owns them.


@dataclass
class Call:
    status: str = "new"
    parts: list[int] = field(default_factory=lambda: [])


class CallStore(rt.SessionStore):
    __slots__ = ("calls", "calls_owned", "calls_shared")
    FIELDS = ("calls",)
    SHARED = frozenset({"calls", "history"})
    OWNED = frozenset({"calls"})
    MAPS = frozenset({"calls"})
    CUT_ATTRS: ClassVar[Mapping[str, str]] = {"calls": "parts"}
    calls: dict[str, Call]
    calls_owned: set[str]


@dataclass
class Start:
    key: str


@dataclass
class Status:
    key: str
    status: str


@dataclass
class Parts:
    key: str
    parts: list[int]


@dataclass
class Part:
    key: str
    part: int


def start_call(store: Any, update: Start) -> rt.Undo:
    return rt.put(store, "calls", update.key, store.calls.get(update.key, rt.ABSENT), Call(), None, True)


def set_status(store: Any, update: Status) -> rt.Undo:
    call = store.calls[update.key]
    old = ["status", call.status]
    call.status = update.status
    return (rt.PATCH, "calls", update.key, old, -1)


def set_parts(store: Any, update: Parts) -> rt.Undo:
    call = store.calls[update.key]
    old = ["parts", call.parts]
    call.parts = list(update.parts)
    return (rt.PATCH, "calls", update.key, old, -1)


def add_part(store: Any, update: Part) -> rt.Undo:
    return rt.cut(store.calls[update.key].parts, update.part, "calls", update.key)


class Calls(rt.SessionBase, folds={Start: start_call, Status: set_status, Parts: set_parts, Part: add_part}):
    __slots__ = ()
    apply_session_update: ClassVar[Callable[[Calls | None, Any], Calls]]

    def __init__(self, session_id: str, history: Any = (), calls: Any = None) -> None:
        self._start(CallStore, session_id, history, (calls,))

    def read(self, name: str) -> Any:
        return self._read(name)


def test_an_older_session_undoes_the_fields_patched_in_place() -> None:
    """A PATCH record keeps the fields a fold set in place on an entity the
    store owns: an older Session sees the entity with their old values, also
    after chunks cut from a list a later patch replaced (which stays as the
    record keeps it, for the other older Sessions)."""
    updates = [Start("a"), Part("a", 1), Part("a", 2), Parts("a", [9]), Part("a", 3), Status("a", "done")]
    sessions = [Calls("s")]
    for update in updates:
        sessions.append(Calls.apply_session_update(sessions[-1], Notification("s", update)))
    expected = [{}, {"a": Call()}, {"a": Call("new", [1])}, {"a": Call("new", [1, 2])}]
    expected += [{"a": Call("new", [9])}, {"a": Call("new", [9, 3])}, {"a": Call("done", [9, 3])}]
    assert sessions[3]._undo[:4] == (rt.PATCH, "calls", "a", ["parts", [1, 2]])
    assert sessions[5]._undo[:4] == (rt.PATCH, "calls", "a", ["status", "new"])
    # Oldest first: each rebuild cuts the chunks of the list a record keeps.
    assert [s.read("calls") for s in sessions[:-1]] == expected[:-1]
    assert [s.read("calls") for s in sessions] == expected
    assert [s.read("calls") for s in reversed(sessions)] == expected[::-1]
    assert sessions[3].changed_fields() == {"calls"}
