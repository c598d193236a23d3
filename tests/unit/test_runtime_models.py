"""The base classes and dataclass stand-in copied into every generated
package (``_models.py``), tested as the ordinary module it is in the
generator: a class built as ``models.py`` builds one."""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys
import typing
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


@dataclass(slots=True, kw_only=True)
class Held(_models.Model):
    # As models.py spells a factory default: the stand-in ``field``.
    items: list[int] = _models.field(default_factory=lambda: [])
    size: int = 0
    label: str | None = _models.field(default=None, repr=False)

    if not TYPE_CHECKING:

        def __init__(self, *, items=_models.FACTORY, size=0, label=None):
            self.items = [] if items is _models.FACTORY else items
            self.size = size
            self.label = label


def test_the_fields_table_is_made_on_its_first_read():
    # Not made by the decorator: made, and then the class's own, when read.
    assert type(Held.__dict__["__dataclass_fields__"]) is not dict
    fields = dataclasses.fields(Held(size=2))
    assert type(Held.__dict__["__dataclass_fields__"]) is dict
    assert Held.__dataclass_fields__ is Held.__dict__["__dataclass_fields__"]
    assert [(f.name, f.type, f.kw_only) for f in fields] == [
        ("items", "list[int]", True),
        ("size", "int", True),
        ("label", "str | None", True),
    ]
    items, size, label = fields
    assert items.default is dataclasses.MISSING and items.default_factory() == []
    assert size.default == 0 and size.default_factory is dataclasses.MISSING
    assert label.default is None and label.repr is False
    assert dataclasses.asdict(Held(items=[1], size=3)) == {"items": [1], "size": 3, "label": None}
    assert dataclasses.replace(Held(items=[1]), size=5) == Held(items=[1], size=5)
    # A required field: no default recorded.
    assert dataclasses.fields(Thing)[0].default is dataclasses.MISSING
    assert Held.__dataclass_params__ is Thing.__dataclass_params__
    # The annotations of the class and its bases evaluate.
    assert typing.get_type_hints(Held) == {
        "__dataclass_fields__": ClassVar[dict[str, Any]],
        "_FIELD_NAMES": ClassVar[tuple[str, ...]],
        "items": list[int],
        "size": int,
        "label": str | None,
    }
    assert type(Held.__dict__["__dataclass_params__"]).__name__ == "_DataclassParams"


def test_a_subclass_reads_the_table_of_its_dataclass():
    class Sub(Held):
        pass

    assert dataclasses.is_dataclass(Sub(size=1))
    assert [f.name for f in dataclasses.fields(Sub)] == ["items", "size", "label"]
    assert "__dataclass_fields__" not in Sub.__dict__
    assert repr(Sub(size=1)).endswith(".Sub(items=[], size=1, label=None)")


def test_copy_replace_on_python_3_13():
    thing = Thing(name="a")
    if sys.version_info >= (3, 13):
        assert copy.replace(thing, note="n") == Thing(name="a", note="n")  # type: ignore[attr-defined]
    else:
        assert not hasattr(Thing, "__replace__")


def test_the_stand_ins_import_no_dataclasses():
    code = (
        "from __future__ import annotations\n"
        "import sys\n"
        "from acpgen.runtime import _models\n"
        "@_models.dataclass(slots=True, kw_only=True)\n"
        "class A(_models.Model):\n"
        "    x: list[int] = _models.field(default_factory=list)\n"
        "    def __init__(self, *, x=_models.FACTORY):\n"
        "        self.x = [] if x is _models.FACTORY else x\n"
        "assert repr(A()) == 'A(x=[])' and A() == A() and A(x=[1]) != A()\n"
        "assert 'dataclasses' not in sys.modules, 'imported'\n"
        "import dataclasses\n"
        "assert [f.name for f in dataclasses.fields(A)] == ['x']\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
