"""The attributes the runtime's base classes give every generated class,
read from the runtime modules' source (never listed by hand): a generated
field or handler method must not replace one. Module-level names need no
such list: see :mod:`acpgen.views.names`."""

from __future__ import annotations

import ast
import functools

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
def _runtime_module(module: str) -> ast.Module:
    """The syntax tree of the runtime module ``module``, parsed once (two
    classes of ``_mcp.py`` and of ``_models.py`` are read)."""
    return ast.parse(SOURCES[module].read_text(encoding="utf-8"))


def _runtime_class(module: str, name: str) -> ast.ClassDef:
    """The definition of class ``name`` in the runtime module ``module``."""
    for node in _runtime_module(module).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise AssertionError(f"{SOURCES[module]} defines no {name} class")


@functools.cache
def runtime_attributes() -> frozenset[str]:
    """The attributes of the runtime's connection class: its methods, class
    attributes and what its methods set on ``self``. A generated connection
    adds one method per call of the peer, which must not replace any."""
    return frozenset(
        _class_attributes(_runtime_class("_connection.py", CONNECTION_BASE)).union(
            *(_class_attributes(_runtime_class("_mcp.py", mixin)) for mixin in CONNECTION_MIXINS)
        )
    )


@functools.cache
def model_attributes() -> frozenset[str]:
    """The public attributes the runtime's model base classes give every
    generated class (``from_wire``, ``to_wire``, ...): no field may take one."""
    return frozenset(
        name
        for base in MODEL_BASES
        for name in _class_attributes(_runtime_class("_models.py", base))
        if not name.startswith("_")
    )


@functools.cache
def sender_attributes() -> frozenset[str]:
    """The public attributes of the runtime's session sender class
    (``connection``, ``session_id``, ``send``): the generated ``SessionSender``
    adds a method per kind of session update, which must not replace one."""
    return frozenset(
        name for name in _class_attributes(_runtime_class("_senders.py", SENDER_BASE)) if not name.startswith("_")
    )


def _class_attributes(node: ast.ClassDef) -> set[str]:
    """The methods, nested classes and class attributes ``node`` defines in
    its body, and every ``self.NAME`` assigned anywhere in it."""
    names: set[str] = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(item.name)
        elif isinstance(item, (ast.Assign, ast.AnnAssign)):
            names.update(target.id for target in _targets(item) if isinstance(target, ast.Name))
    # An assignment is a statement, so only the blocks of statements are
    # walked, not the expressions in them (most of the tree).
    stack: list[ast.AST] = list(node.body)
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
