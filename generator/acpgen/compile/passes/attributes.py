"""The attributes the runtime's base classes give every generated class,
read from the runtime modules' source (never listed by hand): a generated
field or handler method must not replace one. Module-level names need no
such list: see :mod:`acpgen.views.names`."""

from __future__ import annotations

import ast
import functools
import re

from ...runtime import SOURCES

__all__ = [
    "CONNECTION_BASE",
    "INTERFACE_METHODS",
    "SENDER_BASE",
    "model_attributes",
    "runtime_attributes",
    "sender_attributes",
]

MODEL_BASES = ("Model", "State")
"""The runtime classes the generated classes derive from (``_models.py``)."""

CONNECTION_BASE = "Connection"
"""The runtime class the generated connections subclass (``_connection.py``)."""

CONNECTION_MIXINS = ("CallsMcp", "ProvidesMcp")
"""The runtime classes (``_mcp.py``) the generated connections of a package
with MCP over ACP derive from too: their attributes are reserved in every
package."""

SENDER_BASE = "SessionSenderBase"
"""The runtime class the generated ``SessionSender`` subclasses (``_senders.py``)."""


INTERFACE_METHODS = frozenset({"ext_method", "ext_notification"})
"""What the generated Agent and Client interfaces define besides one
handler per method (``templates/protocol.py.jinja``): no handler may take
one."""


@functools.cache
def _runtime_source(module: str) -> str:
    """The text of the runtime module ``module``, read once (two classes of
    ``_mcp.py`` and of ``_models.py`` are read)."""
    return SOURCES[module].read_text(encoding="utf-8")


def _runtime_body(module: str, name: str) -> list[ast.stmt]:
    """The body of class ``name`` in the runtime module ``module``."""
    found = class_body(_runtime_source(module), name)
    if found is None:
        raise AssertionError(f"{SOURCES[module]} defines no {name} class")
    return found


def class_body(source: str, name: str) -> list[ast.stmt] | None:
    """The body of the top-level class ``name`` in the module ``source``
    (its decorators and bases are not read).

    Only the class's own lines are parsed, from its ``class`` line to the
    next line that starts in column 0 with neither a blank, a comment nor a
    closing bracket: a fraction of the module (parsing all of
    ``_connection.py`` would cost tens of milliseconds a run). The class's
    statement is the only one those lines can hold: any other starts in
    column 0. A cut in the wrong place, at a line in column 0 inside a string
    or brackets or after a backslash, leaves that string, bracket or line
    unclosed, text that does not parse: then the whole module is parsed.
    (A line ``class NAME`` in column 0 of a string before the class would be
    taken for it: for the runtime's modules, the test suite checks each
    class read against the one the whole module defines.)"""
    found = re.search(rf"^class {re.escape(name)}\b.*?(?=^[^\s#)\]}}]|\Z)", source, re.MULTILINE | re.DOTALL)
    if found is not None:
        piece = found.group(0)
        try:
            body = ast.parse(piece).body
        except SyntaxError:
            body = []
        if len(body) == 1 and isinstance(body[0], ast.ClassDef):
            return body[0].body
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node.body
    return None


@functools.cache
def runtime_attributes() -> frozenset[str]:
    """The attributes of the runtime's connection class: its methods, class
    attributes and what its methods set on ``self``. A generated connection
    adds one method per call of the peer, which must not replace any."""
    return frozenset(
        _class_attributes(_runtime_body("_connection.py", CONNECTION_BASE)).union(
            *(_class_attributes(_runtime_body("_mcp.py", mixin)) for mixin in CONNECTION_MIXINS)
        )
    )


@functools.cache
def model_attributes() -> frozenset[str]:
    """The public attributes the runtime's model base classes give every
    generated class (``from_wire``, ``to_wire``, ...): no field may take one."""
    return frozenset(
        name
        for base in MODEL_BASES
        for name in _class_attributes(_runtime_body("_models.py", base))
        if not name.startswith("_")
    )


@functools.cache
def sender_attributes() -> frozenset[str]:
    """The public attributes of the runtime's session sender class
    (``connection``, ``session_id``, ``send``): the generated ``SessionSender``
    adds a method per kind of session update, which must not replace one."""
    return frozenset(
        name for name in _class_attributes(_runtime_body("_senders.py", SENDER_BASE)) if not name.startswith("_")
    )


def _class_attributes(body: list[ast.stmt]) -> set[str]:
    """The methods, nested classes and class attributes a class's ``body``
    defines, and every ``self.NAME`` assigned anywhere in it."""
    names: set[str] = set()
    for item in body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(item.name)
        elif isinstance(item, (ast.Assign, ast.AnnAssign)):
            names.update(target.id for target in _targets(item) if isinstance(target, ast.Name))
    # An assignment is a statement, so only the blocks of statements are
    # walked, not the expressions in them (most of the tree).
    stack: list[ast.AST] = list(body)
    while stack:
        block_item = stack.pop()
        if isinstance(block_item, (ast.Assign, ast.AnnAssign)):
            names.update(
                target.attr
                for target in _targets(block_item)
                if isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            )
        for block in _BLOCKS:
            statements = getattr(block_item, block, None)
            if isinstance(statements, list):
                stack.extend(statements)
    return names


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
"""The fields of a statement (and of an ``except`` clause, a ``case``) that
hold statements."""


def _targets(item: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return item.targets if isinstance(item, ast.Assign) else [item.target]
