"""The import graph of the generator (``generator/acpgen``), read with
``ast``: no module imports itself back through others, and the stages
import only earlier stages, so the data flows one way (see the docstring of
:mod:`acpgen.pipeline`).

Every import statement counts, wherever it stands: at module level, in a
function body and under ``if TYPE_CHECKING:``; relative and absolute. An
edge goes to the module an import names: ``from .x import y`` to ``x``, or to
``x.y`` when that is a module. The implicit import of a package's
``__init__`` when one of its modules is imported is not an edge (every
package that re-exports its modules would otherwise be a cycle).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path

import acpgen
from acpgen.compile import passes

ROOT = Path(acpgen.__file__).parent

STAGES = (
    "acpgen.compile.ir",
    "acpgen.compile.load",
    "acpgen.compile.lower",
    "acpgen.compile.passes",
    "acpgen.views",
    "acpgen.emit",
    "acpgen.output",
)
"""The stages in the order data flows through them (the IR first: every
later stage reads it, and it reads none). A module of one stage may import
its own and earlier stages, never a later one."""

ALLOWED_BACKWARD = {
    # A parameter too long for the formatter's line is wrapped as black
    # would: the views read the line length the formatter is run with.
    ("acpgen.views", "acpgen.emit.fmt"),
}
"""Imports of a later stage that are allowed, as (importing stage, imported
module)."""

KNOWN_CYCLES: list[list[str]] = []
"""The import cycles there are: no other may appear."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    if node.level == 0:
        return node.module
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """``name``, or the longest prefix of it that is a module of acpgen."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in modules:
            return ".".join(parts)
        parts.pop()
    return None


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """``{module: the acpgen modules it imports}`` over all of ``acpgen``
    (read once: the tests only read it)."""
    modules = _modules()
    graph: dict[str, frozenset[str]] = {}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, is_package, node)
                if base is None:
                    continue
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                known = _known(target, modules)
                if known is not None and known != module:
                    found.add(known)
        graph[module] = frozenset(found)
    return graph


def cycles(graph: Mapping[str, AbstractSet[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` with more than one
    module (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def stage(module: str) -> int | None:
    """The position of ``module``'s stage in :data:`STAGES`, None for a
    module of no stage."""
    for position, prefix in enumerate(STAGES):
        if module == prefix or module.startswith(prefix + "."):
            return position
    return None


def test_the_cycle_finder_sees_cycles():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"d"}, "d": {"b"}}) == [["b", "c", "d"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph()
    assert "acpgen.compile.ir" in graph["acpgen.emit.render"]  # from ..compile import ir
    assert "acpgen.compile.ir.defs" in graph["acpgen.compile.ir"]  # from .defs import ...
    assert "acpgen.compile.passes.naming" in graph["acpgen.validate.checker"]  # in a function body
    assert "acpgen.compile.load" in graph["acpgen.update.release"]


def test_the_generator_has_no_import_cycle_but_the_known_ones():
    assert sorted(cycles(import_graph())) == sorted(KNOWN_CYCLES)


def test_no_stage_imports_a_later_stage():
    wrong = []
    for module, imported in sorted(import_graph().items()):
        here = stage(module)
        if here is None:
            continue
        for target in sorted(imported):
            there = stage(target)
            if there is not None and there > here and (STAGES[here], target) not in ALLOWED_BACKWARD:
                wrong.append(f"{module} -> {target}")
    assert wrong == []


def test_no_pass_imports_another_pass():
    """The passes share the IR and the helpers of ``compile/passes`` (which
    are no pass), never one another's code; their one order is
    :data:`acpgen.compile.passes.PASSES`."""
    pass_modules = {step.run.__module__ for step in passes.PASSES}
    assert len(pass_modules) == len(passes.PASSES)  # each pass a module of its own
    graph = import_graph()
    wrong = [f"{m} -> {t}" for m in sorted(pass_modules) for t in sorted(graph[m]) if t in pass_modules]
    assert wrong == []
