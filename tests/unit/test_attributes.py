"""Reading a class of acpgen's runtime modules (:mod:`acpgen.compile.passes.attributes`):
only the class's own lines are parsed, and the result is the body the whole
module's syntax tree gives the class."""

from __future__ import annotations

import ast

import pytest
from acpgen.compile.passes import attributes
from acpgen.compile.passes.attributes import class_body
from acpgen.runtime import SOURCES


def _whole(source: str, name: str) -> str | None:
    """The body of class ``name`` as the whole module's syntax tree has it."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return _dump(node.body)
    return None


def _dump(body: list[ast.stmt] | None) -> str | None:
    return None if body is None else ast.dump(ast.Module(body=body, type_ignores=[]))


RUNTIME_CLASSES = [
    ("_connection.py", attributes.CONNECTION_BASE),
    *(("_mcp.py", mixin) for mixin in attributes.CONNECTION_MIXINS),
    *(("_models.py", base) for base in attributes.MODEL_BASES),
    ("_senders.py", attributes.SENDER_BASE),
]


@pytest.mark.parametrize(("module", "name"), RUNTIME_CLASSES)
def test_each_runtime_class_read_is_the_one_the_whole_module_defines(module, name):
    source = SOURCES[module].read_text(encoding="utf-8")
    whole = _whole(source, name)
    assert whole is not None
    assert _dump(class_body(source, name)) == whole


def _parses_of(monkeypatch) -> list[int]:
    """The length in lines of each text ``ast.parse`` is given from now on."""
    seen: list[int] = []
    parse = ast.parse

    def spy(source, *args, **kwargs):
        seen.append(source.count("\n") + 1)
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", spy)
    return seen


def test_only_the_class_is_parsed_when_its_lines_are_a_class(monkeypatch):
    source = (
        '"""A module."""\n\nimport os\n\n\n@decorated\nclass Wanted(\n    Base,\n):\n'
        '    """Doc."""\n\n    x = (\n        1\n)\n\n    def method(self):\n        self.y = [\n]\n\n'
        "# ---- a comment after it\n\n"
        "other = 1\n\n\nclass Other:\n    z = 2\n" + "PAD = 0\n" * 200
    )
    seen = _parses_of(monkeypatch)
    found = class_body(source, "Wanted")
    parsed = list(seen)
    assert _dump(found) == _whole(source, "Wanted")
    assert parsed == [16]  # the class's lines, not the module's 227


@pytest.mark.parametrize(
    "inside",
    [
        # A line of a string in column 0: the cut there leaves an unclosed string.
        '    text = """\nnot code\n"""\n    after = 1\n',
        '    text = """\nx = 1\n"""\n    after = 1\n',
        "    text = '''\n'''\n    after = 1\n",
        # A line in column 0 inside brackets, or after a backslash.
        "    total = (\n1\n)\n    after = 1\n",
        "    total = 1 + \\\n2\n    after = 1\n",
    ],
)
def test_a_cut_inside_the_class_falls_back_to_the_whole_module(inside):
    source = (
        "import os\n\nclass Wanted:\n    first = 0\n" + inside + "    def last(self):\n        self.z = 1\n\nEND = 1\n"
    )
    found = class_body(source, "Wanted")
    whole = _whole(source, "Wanted")
    assert _dump(found) == whole
    assert {"first", "after", "last", "z"} <= attributes._class_attributes(found)


def test_a_missing_or_nested_class_is_none():
    assert class_body("class Other:\n    pass\n", "Wanted") is None
    # Only a top-level class counts, as when the whole module is read.
    assert class_body("if True:\n    class Wanted:\n        pass\n", "Wanted") is None
    assert class_body("class WantedMore:\n    pass\n", "Wanted") is None
