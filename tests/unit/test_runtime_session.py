"""The session fold's runtime module on its own: a store with one list field
and one dict field, folds written here, the undo records and the rebuild of
what an older Session saw."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from acpgen.runtime import _session as rt


class Store(rt.SessionStore):
    __slots__ = ("items", "items_shared", "values", "values_shared")
    FIELDS = ("items", "values")
    SHARED = frozenset({"items", "values", "history"})
    items: list[int]
    items_shared: bool
    values: dict[str, int]
    values_shared: bool


class Entry(rt.HistoryEntryBase):
    __slots__ = ()
    field = "values"


class Session(rt.SessionBase):
    __slots__ = ()

    def __init__(self, session_id: str, items: Any = (), values: Any = None) -> None:
        store = Store()
        store.session_id = session_id
        store.history = []
        store.history_shared = False
        store.tail_field = None
        store.items = list(items)
        store.items_shared = False
        store.values = dict(values or {})
        store.values_shared = False
        self._store = store
        self._undo = None

    def _copy(self) -> Session:
        return Session(self._store.session_id, self._read("items"), self._read("values"))

    def read(self, name: str) -> Any:
        return self._read(name)


def append(store: rt.SessionStore, update: int) -> rt.Undo:
    items: list[int] = rt.own(store, "items")
    size = len(items)
    items.append(update)
    return (rt.POP, "items", None, size, -1)


def put(store: rt.SessionStore, update: tuple[str, int]) -> rt.Undo:
    key, value = update
    values: dict[str, int] = rt.own(store, "values")
    old = values.get(key, rt.ABSENT)
    values[key] = value
    size = rt.enter(store, Entry, key) if old is rt.ABSENT else -1
    return (rt.PUT, "values", key, old, size)


class Notification:
    def __init__(self, session_id: str, update: object) -> None:
        self.session_id = session_id
        self.update = update


def test_older_sessions_see_their_own_state() -> None:
    s0 = Session("s")
    s1 = s0._apply(append, 1)
    s2 = s1._apply(put, ("a", 1))
    s3 = s2._apply(put, ("a", 2))
    s4 = s3._apply(append, 2)
    assert s4.read("items") == [1, 2] and s4.read("values") == {"a": 2}
    assert s3.read("items") == [1] and s3.read("values") == {"a": 2}
    assert s2.read("values") == {"a": 1}
    assert s1.read("values") == {} and s1.read("items") == [1]
    assert s0.read("items") == [] and s0.read("history") == []
    assert [e.key for e in s4.read("history")] == ["a"]
    assert s1.read("history") == []


def test_a_value_handed_out_is_copied_before_the_fold_changes_it() -> None:
    s1 = Session("s")._apply(append, 1)
    seen = s1.read("items")
    s2 = s1._apply(append, 2)
    assert seen == [1] and s1.read("items") is seen
    assert s2.read("items") == [1, 2]


def test_folding_an_older_session_branches_off_a_copy() -> None:
    s1 = Session("s")._apply(append, 1)
    s2 = s1._apply(append, 2)
    branch = s1._apply(append, 3)
    assert branch._store is not s2._store
    assert branch.read("items") == [1, 3] and s2.read("items") == [1, 2]
    assert s1.read("items") == [1]


def test_apply_update_checks_the_session_and_the_update_class() -> None:
    folds = {int: append}
    s1 = rt.SessionBase._apply_update(Session, folds, None, Notification("s", 5))
    assert s1.read("items") == [5]
    with pytest.raises(ValueError, match="for session 'other', not 's'"):
        rt.SessionBase._apply_update(Session, folds, s1, Notification("other", 6))
    with pytest.raises(TypeError, match="str is not a SessionUpdate"):
        rt.SessionBase._apply_update(Session, folds, s1, Notification("s", "x"))
    s2 = rt.SessionBase._apply_update(Session, folds, s1, Notification("s", 6))
    s1b = rt.SessionBase._apply_update(Session, folds, s1, Notification("s", 7))
    assert s2.read("items") == [5, 6] and s1b.read("items") == [5, 7]


def test_repr_lists_history_then_the_fields() -> None:
    s = Session("s")._apply(put, ("k", 3))
    assert repr(s) == "Session(session_id='s', history=[Entry(key='k')], items=[], values={'k': 3})"


def test_copy_container_copies_only_dicts_and_lists() -> None:
    d, lst, t = {"a": 1}, [1], (1,)
    assert rt.copy_container(d) == d and rt.copy_container(d) is not d
    assert rt.copy_container(lst) == lst and rt.copy_container(lst) is not lst
    assert rt.copy_container(t) is t


def test_fold_takes_the_fold_of_the_update_class() -> None:
    s1 = Session("s")._fold({int: append}, 4)
    assert s1.read("items") == [4]
    with pytest.raises(TypeError, match="tuple is not a SessionUpdate"):
        s1._fold({int: append}, ("a", 1))


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
    for name in ("session_id", "history", "history_shared", "tail_field", *Store.__slots__):
        setattr(store, name, getattr(s0._store, name))
    s0._store = store
    box = Box([1])
    store.values = {"b": box}
    s1 = s0._apply(extend, 2)
    s2 = s1._apply(extend, 3)
    assert s2.read("values")["b"].parts == [1, 2, 3]
    assert s1.read("values")["b"].parts == [1, 2]
    assert s0.read("values")["b"].parts == [1]


def test_session_id_is_the_store_s() -> None:
    s = Session("abc")
    assert s.session_id == "abc" and s._apply(append, 1).session_id == "abc"


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
