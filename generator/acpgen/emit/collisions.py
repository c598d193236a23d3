"""The generated namespace, checked: no name a package binds shadows another.

Names made from the schema must keep clear of the names the package's own
code binds: the runtime modules' definitions, what the templates define and
import, the attributes of the runtime's base classes. Nothing lists those by
hand: :func:`runtime_names` and :func:`runtime_attributes` read them from the
runtime modules' source, and :func:`find_clashes` reads the rendered modules
themselves. The pipeline renders, looks for clashes and, when a schema name
takes part in one, names the package again with that name reserved (it gets
a trailing underscore) and renders again; a clash left after that is
between fixed names and is an error naming both definitions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..compile.reserved import (
    CONNECTION_BASE,
    Binding,
    base_name,
    runtime_attributes,
    runtime_class_settings,
)
from ..compile.reserved import (
    bindings as _bindings,
)
from ..compile.reserved import (
    declared_all as _declared_all,
)
from ..runtime import SOURCES

__all__ = ["Clash", "find_clashes"]


@dataclass(frozen=True)
class Clash:
    """Two bindings of one name: ``scope`` is ``"module"`` for module-level
    names or ``"attribute"`` for the attributes of a class."""

    name: str
    scope: str
    first: Binding
    second: Binding

    def describe(self) -> str:
        return f"{self.name!r} is bound twice: at {self.first.where()} and at {self.second.where()}"


# ---------------------------------------------------------------- the rendered modules


def find_clashes(files: Mapping[str, str], package: str) -> list[Clash]:
    """The clashes in a rendered package (``{file name: source}``): a name
    bound twice at module level (star imports expanded), twice in one class
    body, or a generated connection's method that replaces an attribute of
    the runtime's connection class."""
    trees = {
        name: ast.parse(text, filename=f"{package}/{name}") for name, text in files.items() if name.endswith(".py")
    }
    exports = {name[: -len(".py")]: _exports(tree) for name, tree in trees.items()}
    clashes: list[Clash] = []
    for name, tree in sorted(trees.items()):
        where = f"{package}/{name}"
        clashes.extend(_duplicates(_bindings(tree.body, where, exports), "module"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                clashes.extend(_duplicates(_bindings(node.body, where, {}), "attribute"))
                if any(base_name(base) == CONNECTION_BASE for base in node.bases):
                    clashes.extend(_shadowed(node, where))
    return clashes


def _shadowed(node: ast.ClassDef, where: str) -> Iterator[Clash]:
    base = runtime_attributes() - runtime_class_settings()
    source = f"{SOURCES['_connection.py'].name} ({CONNECTION_BASE})"
    for binding in _bindings(node.body, where, {}):
        if binding.name in base and not binding.name.startswith("__"):
            yield Clash(binding.name, "attribute", Binding(binding.name, source, 0), binding)


def _duplicates(bindings: Iterable[Binding], scope: str) -> Iterator[Clash]:
    seen: dict[str, list[Binding]] = {}
    for binding in bindings:
        for earlier in seen.get(binding.name, []):
            if binding.origin is not None and binding.origin == earlier.origin:
                continue
            if _alternatives(earlier.branch, binding.branch):
                continue
            yield Clash(binding.name, scope, earlier, binding)
            break
        seen.setdefault(binding.name, []).append(binding)


def _alternatives(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether two branch paths part at the two arms of one ``if``."""
    for x, y in zip(a, b, strict=False):
        if x != y:
            return x // 2 == y // 2
    return False


def _exports(tree: ast.Module) -> frozenset[str]:
    declared = _declared_all(tree)
    if declared:
        return frozenset(declared)
    return frozenset(b.name for b in _bindings(tree.body, "", {}) if not b.name.startswith("_"))
