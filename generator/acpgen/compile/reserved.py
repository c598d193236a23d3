"""The names a generated package's own code binds, read from the runtime
modules' source (never listed by hand): names made from the schema keep
clear of them. :mod:`acpgen.emit.collisions` checks the rendered modules for
whatever else clashes."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from ..runtime import SOURCES

__all__ = [
    "CONNECTION_BASE",
    "Binding",
    "bindings",
    "model_attributes",
    "runtime_attributes",
    "runtime_class_settings",
    "runtime_names",
]

MODEL_BASES = ("Model", "State")
"""The runtime classes the generated classes derive from (``_models.py``)."""

CONNECTION_BASE = "Connection"
"""The runtime class the generated connections subclass (``_connection.py``)."""


@dataclass(frozen=True)
class Binding:
    """A name bound in a module (or a class body), and where."""

    name: str
    file: str
    line: int
    origin: tuple[str, str] | None = None
    """For an import: the module and the name imported (two imports of one
    thing are one binding)."""
    branch: tuple[int, ...] = ()
    """The ``if``/``else`` arms it is bound in: bindings in the two arms of
    one ``if`` (``TYPE_CHECKING`` and the rest) are alternatives."""

    def where(self) -> str:
        return f"{self.file}:{self.line}"


@functools.cache
def runtime_names() -> frozenset[str]:
    """Every module-level name the runtime modules define, import or export."""
    names: set[str] = set()
    for module, path in SOURCES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=module)
        names.update(b.name for b in bindings(tree.body, module, {}))
        names.update(declared_all(tree))
    return frozenset(names)


@functools.cache
def _runtime_class(module: str, name: str) -> ast.ClassDef:
    """The definition of class ``name`` in the runtime module ``module``."""
    path = SOURCES[module]
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise AssertionError(f"{path} defines no {name} class")


@functools.cache
def runtime_attributes() -> frozenset[str]:
    """The attributes of the runtime's connection class: its methods, class
    attributes and what its methods set on ``self``. A generated connection
    adds one method per call of the peer, which must not replace any."""
    return frozenset(_class_attributes(_runtime_class("_connection.py", CONNECTION_BASE)))


@functools.cache
def runtime_class_settings() -> frozenset[str]:
    """The class attributes the runtime's connection class declares without
    a value (``side``, ``codec``, ...): a generated subclass sets them."""
    return frozenset(
        item.target.id
        for item in _runtime_class("_connection.py", CONNECTION_BASE).body
        if isinstance(item, ast.AnnAssign) and item.value is None and isinstance(item.target, ast.Name)
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


def _class_attributes(node: ast.ClassDef) -> set[str]:
    names = {b.name for b in bindings(node.body, "", {})}
    for item in ast.walk(node):
        if isinstance(item, (ast.Assign, ast.AnnAssign)):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    names.add(target.attr)
    return names


def declared_all(tree: ast.Module) -> list[str]:
    """A module's ``__all__``, when it is a literal list of strings."""
    for node in tree.body:
        value: ast.expr | None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and isinstance(
            value, (ast.List, ast.Tuple)
        ):
            return [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def bindings(
    body: list[ast.stmt],
    where: str,
    exports: Mapping[str, frozenset[str]],
    branch: tuple[int, ...] = (),
) -> Iterator[Binding]:
    """The names a block binds, in order; ``exports`` expands ``from .x
    import *`` with what module ``x`` exports."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not any(base_name(d) == "overload" for d in node.decorator_list):
                yield Binding(node.name, where, node.lineno, branch=branch)
        elif isinstance(node, ast.ClassDef):
            yield Binding(node.name, where, node.lineno, branch=branch)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.partition(".")[0]
                yield Binding(name, where, node.lineno, (alias.name, ""), branch)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    for name in sorted(exports.get(node.module or "", ()) if node.level == 1 else ()):
                        yield Binding(name, where, node.lineno, (module, name), branch)
                else:
                    yield Binding(alias.asname or alias.name, where, node.lineno, (module, alias.name), branch)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in _target_names(target):
                    if name != "__all__" and not isinstance(node, ast.AugAssign):
                        yield Binding(name, where, node.lineno, branch=branch)
        elif isinstance(node, ast.If):
            arm = 2 * node.lineno
            yield from bindings(node.body, where, exports, (*branch, arm))
            yield from bindings(node.orelse, where, exports, (*branch, arm + 1))
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from bindings(block, where, exports, branch)


def _target_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)
