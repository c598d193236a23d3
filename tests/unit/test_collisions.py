"""The clash check over rendered modules: names bound twice are found, the
legitimate re-bindings of generated code are not."""

from __future__ import annotations

from acpgen.compile.reserved import runtime_attributes, runtime_class_settings, runtime_names
from acpgen.emit.collisions import find_clashes


def names(files: dict[str, str]) -> list[tuple[str, str]]:
    return [(c.name, c.scope) for c in find_clashes(files, "p")]


def test_a_name_bound_twice_at_module_level_is_a_clash_naming_both_places():
    [clash] = find_clashes({"a.py": "from ._runtime import salvage\n\nclass salvage:\n    pass\n"}, "p")
    assert (clash.name, clash.scope) == ("salvage", "module")
    assert clash.describe() == "'salvage' is bound twice: at p/a.py:1 and at p/a.py:3"


def test_star_imports_are_expanded_with_the_other_module_s_all():
    files = {
        "models.py": '__all__ = ["NotPlainJson"]\nclass NotPlainJson:\n    pass\n',
        "codec.py": "from ._runtime import NotPlainJson\nfrom .models import *\n",
    }
    assert names(files) == [("NotPlainJson", "module")]


def test_overloads_alternative_branches_and_repeated_imports_are_not_clashes():
    source = (
        "from typing import TYPE_CHECKING, overload\n"
        "from .x import a\nfrom .x import a\n"
        "if TYPE_CHECKING:\n    from .c import b\nelse:\n    def b(): ...\n"
        "@overload\ndef f(x: int) -> int: ...\n@overload\ndef f(x: str) -> str: ...\ndef f(x): return x\n"
    )
    assert names({"m.py": source}) == []


def test_a_connection_method_that_replaces_a_runtime_attribute_is_a_clash():
    source = "class ClientSideConnection(Connection[C]):\n    side = 'client'\n    async def start(self): ...\n"
    assert names({"connection.py": source}) == [("start", "attribute")]


def test_two_methods_of_one_name_in_a_class_are_a_clash():
    assert names({"p.py": "class A:\n    def x(self): ...\n    def x(self): ...\n"}) == [("x", "attribute")]


def test_the_reserved_names_are_read_from_the_runtime_source():
    assert {
        "salvage",
        "NotPlainJson",
        "ValidationError",
        "MessageCodec",
        "Connection",
        "RequestError",
    } <= runtime_names()
    assert {"start", "run", "close", "request", "notify", "grace", "handler", "transport"} <= runtime_attributes()
    assert {"side", "codec", "interface", "protocol_version", "requires", "session_class", "session_sources"} == (
        runtime_class_settings()
    )


def test_the_attributes_no_field_may_take_are_read_from_the_runtime_models():
    from acpgen.compile.reserved import model_attributes

    assert {"from_wire", "to_wire"} <= model_attributes()
