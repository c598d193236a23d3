"""The write stage's modules import one another without a cycle, counting
the imports made for type checking only: each can be read, and loaded,
on its own."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import acpgen

PACKAGE = "acpgen.output"
SOURCE = Path(acpgen.__file__).parent / "output"


def _imports(path: Path) -> set[str]:
    """The modules of ``acpgen.output`` that ``path`` imports, anywhere in it
    (``if TYPE_CHECKING:`` blocks and function bodies included)."""
    modules = {p.stem for p in SOURCE.glob("*.py") if p.stem != "__init__"}
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = node.module
            elif node.level == 0 and node.module and node.module.startswith(f"{PACKAGE}."):
                base = node.module[len(PACKAGE) + 1 :]
            elif node.level == 0 and node.module == PACKAGE:
                base = None
            else:
                continue
            if base is None:
                found.update(alias.name for alias in node.names if alias.name in modules)
            elif base.split(".")[0] in modules:
                found.add(base.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(f"{PACKAGE}.") and alias.name.split(".")[2] in modules:
                    found.add(alias.name.split(".")[2])
    return found - {path.stem}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, as the modules along it, or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        path.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return [*path[path.index(imported) :], imported]
            if imported not in state:
                found = visit(imported)
                if found:
                    return found
        state[module] = "done"
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_the_cycle_finder_sees_a_cycle_through_type_checking_imports():
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_output_modules_import_one_another_without_a_cycle():
    graph = {p.stem: _imports(p) for p in SOURCE.glob("*.py") if p.stem != "__init__"}
    assert "recovery" in graph["write"] and "journal" in graph["recovery"]  # the parser sees the imports
    assert _cycle(graph) is None


def test_each_output_module_loads_first_on_its_own():
    for path in sorted(SOURCE.glob("*.py")):
        module = f"{PACKAGE}.{path.stem}" if path.stem != "__init__" else PACKAGE
        result = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
        assert result.returncode == 0, (module, result.stderr)
