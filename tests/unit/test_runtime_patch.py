"""The patch-merge helpers every generated ``patch.py`` calls (``_patch``),
on stand-in classes: metadata merging, key checks, base64 appending, and the
``apply`` and ``supports`` built over a package's tables."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import pytest
from acpgen.runtime._patch import NO_RULES, append_base64, applying, check_key, merge_meta, supporting
from acpgen.runtime._runtime import UNSET


def test_merge_meta_replaces_by_top_level_key_and_null_removes() -> None:
    stored = {"a": 1, "b": {"x": 1}, "c": 3}
    merged = merge_meta(stored, {"b": {"y": 2}, "c": None, "d": 4})
    assert merged == {"a": 1, "b": {"y": 2}, "d": 4}
    assert stored == {"a": 1, "b": {"x": 1}, "c": 3}


@dataclass
class Entity:
    id: str
    other: str = ""


def test_check_key_accepts_the_same_entity_and_names_the_mismatch() -> None:
    check_key(Entity("a"), Entity("a", "x"), (("id", "id"),))
    with pytest.raises(ValueError, match=r"Entity\.other is 'b', but the state is for 'a'"):
        check_key(Entity("a"), Entity("a", "b"), (("id", "id"), ("id", "other")))


@dataclass
class Blob:
    data: str
    mime: str = "application/octet-stream"


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


@pytest.mark.parametrize("first", [b"", b"a", b"ab", b"abc", b"abcd"])
def test_append_base64_appends_the_bytes_whatever_the_padding(first: bytes) -> None:
    stored = Blob(_b64(first), mime="text/plain")
    out = append_base64(stored, _b64(b"xyz!"), Blob)
    assert base64.b64decode(out.data) == first + b"xyz!"
    assert out.mime == "text/plain"
    assert stored.data == _b64(first)


def test_append_base64_starts_a_payload_and_refuses_what_is_not_base64() -> None:
    assert append_base64(None, _b64(b"hi"), Blob) == Blob(_b64(b"hi"))
    with pytest.raises(ValueError):
        append_base64(None, "not base64!", Blob)


@dataclass
class Update:
    value: int


@dataclass
class Other:
    pass


def test_apply_folds_by_the_update_class_and_refuses_others() -> None:
    apply = applying({Update: lambda state, update: (state or 0) + update.value}, True)
    assert apply(None, Update(2)) == 2
    assert apply(5, Update(2)) == 7
    with pytest.raises(TypeError, match="Other is not an upsert of this schema"):
        apply(None, Other())


def test_apply_without_rules_says_so() -> None:
    apply = applying({}, False)
    with pytest.raises(TypeError) as raised:
        apply(None, Update(1))
    assert str(raised.value) == NO_RULES


@dataclass
class Caps:
    load_session: bool = False
    files: object = UNSET
    extra: dict[str, object] = field(default_factory=dict)


TABLE = {
    Caps: {
        "load_session": ("load_session", "flag"),
        "loadSession": ("load_session", "flag"),
        "files": ("files", "presence"),
    }
}


def test_supports_reads_flags_and_presence_by_python_or_wire_name() -> None:
    supports = supporting(TABLE)
    assert supports(Caps(load_session=True), "loadSession")
    assert supports(Caps(load_session=True), "load_session")
    assert not supports(Caps(), "load_session")
    assert supports(Caps(files={}), "files")
    assert not supports(Caps(files=None), "files")
    assert not supports(Caps(), "files")


def test_supports_refuses_an_unknown_capability_listing_the_known_ones() -> None:
    supports = supporting(TABLE)
    with pytest.raises(
        KeyError, match=r"Caps has no capability 'fs' \(known: \['files', 'loadSession', 'load_session'\]\)"
    ):
        supports(Caps(), "fs")
    with pytest.raises(KeyError, match=r"Other has no capability 'files' \(known: \[\]\)"):
        supports(Other(), "files")
