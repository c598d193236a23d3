"""The base classes and dataclass stand-in copied into every generated
package (``_models.py``), tested as the ordinary module it is in the
generator: a class built as ``models.py`` builds one."""

from __future__ import annotations

import copy
import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar

import pytest
from acpgen.runtime import _models
from acpgen.runtime._runtime import UNSET, Unset

if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from acpgen.runtime._models import dataclass


@dataclass(slots=True, kw_only=True)
class Thing(_models.Model):
    name: str
    tags: list[str] = dataclasses.field(default_factory=lambda: [])
    note: str | Unset = UNSET

    if not TYPE_CHECKING:

        def __init__(self, *, name, tags=_models.FACTORY, note=UNSET):
            self.name = name
            self.tags = [] if tags is _models.FACTORY else tags
            self.note = note


def test_the_stand_in_builds_a_slotted_dataclass():
    thing = Thing(name="a")
    assert dataclasses.is_dataclass(thing) and Thing.__slots__ == ("name", "tags", "note")
    assert [f.name for f in dataclasses.fields(Thing)] == ["name", "tags", "note"]
    assert all(f.kw_only for f in dataclasses.fields(Thing))
    assert not hasattr(thing, "__dict__")
    assert Thing.__dataclass_params__.frozen is False and Thing.__hash__ is None
    assert thing.tags == [] and thing.tags is not Thing(name="b").tags
    assert dataclasses.replace(thing, note="n") == Thing(name="a", note="n")
    assert copy.deepcopy(thing) == thing


def test_class_variables_are_not_fields_under_either_spelling():
    # The generated models import ClassVar as _ClassVar (a schema may define
    # a type named ClassVar).
    from typing import ClassVar as _ClassVar

    @dataclass(slots=True, kw_only=True)
    class Request(_models.Model):
        METHOD: _ClassVar[str] = "x/y"
        kind: ClassVar[str] = "k"
        n: int

        if not TYPE_CHECKING:

            def __init__(self, *, n):
                self.n = n

    assert [f.name for f in dataclasses.fields(Request)] == ["n"] and Request.__slots__ == ("n",)
    assert Request(n=1).METHOD == "x/y" and Request.kind == "k"


def test_repr_and_eq_are_shared():
    thing = Thing(name="a", tags=["x"])
    assert repr(thing) == "Thing(name='a', tags=['x'], note=UNSET)"
    assert thing == Thing(name="a", tags=["x"]) and thing != Thing(name="b")
    assert thing.__eq__(object()) is NotImplemented
    loop = Thing(name="loop")
    loop.tags = [loop]
    assert repr(loop) == "Thing(name='loop', tags=[...], note=UNSET)"


def test_from_wire_and_to_wire_use_the_bound_codec(monkeypatch):
    calls: list[Any] = []

    def decode_class(cls, data, *, strict=False):
        calls.append((cls, data, strict))
        return cls(name=data["n"])

    def encode(value, *, validate=False):
        return {"n": value.name}

    monkeypatch.setattr(_models, "_decode_class", None)
    monkeypatch.setattr(_models, "_encode", None)
    with pytest.raises(RuntimeError, match="codec module is not loaded"):
        Thing(name="a").to_wire()
    _models.bind(decode_class, encode)
    assert Thing.from_wire({"n": "z"}, strict=True) == Thing(name="z")
    assert calls == [(Thing, {"n": "z"}, True)]
    assert Thing(name="q").to_wire() == {"n": "q"}
