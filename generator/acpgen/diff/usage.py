"""``acpgen diff --code DIR``: the lines of a project's own Python code that
use a name a schema bump removes or changes in the generated package.

A plain scan of the syntax tree, file by file, without importing or type
checking anything. For every change that breaks the Python API, the names
of the old package it concerns (:attr:`Change.python`) are looked for:

* a class (``AuthCapabilities``, a variant class, an enum) wherever the
  name appears: ``from acp_v2 import AuthCapabilities``, ``AuthCapabilities(...)``,
  ``acp.AuthCapabilities``;
* an attribute or enum member (``SessionMessageChunk.sender_session_id``,
  ``ToolKind.READ``) as an attribute access (``chunk.sender_session_id``) or
  a keyword argument (``SessionMessageChunk(sender_session_id=...)``). The
  object in front is not known, so these are matched by name, in files that
  name the class they belong to (``description`` is not listed for a
  removed ``OtherAuthMethod.description`` in a file that never names
  ``OtherAuthMethod``).

Directories with an ``.acpgen`` marker (the generated packages themselves),
virtual environments, ``__pycache__``, ``node_modules`` and hidden
directories are skipped. A file that does not parse is reported as a
warning and skipped.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import AcpgenError
from .model import SchemaDiff

SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages", "venv", ".venv"})
MARKER = ".acpgen"


@dataclass(frozen=True)
class Use:
    """One line of the user's code that uses a changed name."""

    file: str
    line: int
    name: str
    """The name as the code has it (a class, or an attribute)."""
    reasons: tuple[str, ...]
    """What changed, as the Python API reasons of the changes say."""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.name} — {'; '.join(self.reasons)}"

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "name": self.name, "reasons": list(self.reasons)}


def find_uses(diff: SchemaDiff, directory: str | Path, warnings: list[str] | None = None) -> list[Use]:
    """Every use under ``directory`` of a name the API-breaking changes of
    ``diff`` concern, by file and line."""
    root = Path(directory)
    if not root.is_dir():
        raise AcpgenError("--code names no directory", file=str(root))
    classes: dict[str, list[str]] = {}
    attributes: dict[str, list[tuple[str, str]]] = {}
    """attribute -> (the class it belongs to, what changed)"""
    for change in diff.changes:
        if not change.api.breaking:
            continue
        for name in change.python:
            owner, _, attribute = name.partition(".")
            if attribute:
                owned = attributes.setdefault(attribute, [])
                if (owner, change.api.reason) not in owned:
                    owned.append((owner, change.api.reason))
            else:
                reasons = classes.setdefault(owner, [])
                if change.api.reason not in reasons:
                    reasons.append(change.api.reason)
    uses: list[Use] = []
    if not classes and not attributes:
        return uses
    for path in _python_files(root):
        shown = os.path.normpath(path)
        try:
            tree = ast.parse(path.read_bytes(), filename=shown)
        except (SyntaxError, ValueError, OSError) as exc:
            if warnings is not None:
                warnings.append(f"{shown}: not scanned for uses of changed names ({type(exc).__name__}: {exc})")
            continue
        uses.extend(_scan(tree, shown, classes, attributes))
    return uses


def _python_files(root: Path) -> Iterator[Path]:
    for current, dirs, files in os.walk(root):
        base = Path(current)
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in SKIPPED_DIRS
            and not (base / d / MARKER).is_file()
            and not (base / d / "pyvenv.cfg").is_file()
        )
        for name in sorted(files):
            if name.endswith(".py"):
                yield base / name


def _scan(
    tree: ast.AST, file: str, classes: dict[str, list[str]], attributes: dict[str, list[tuple[str, str]]]
) -> list[Use]:
    class_hits: list[tuple[int, str]] = []
    attribute_hits: list[tuple[int, str]] = []
    named: set[str] = set()
    """Every name the file mentions (the classes it uses among them)."""
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
            if node.attr in attributes:
                attribute_hits.append((node.lineno, node.attr))
        elif isinstance(node, ast.keyword) and node.arg is not None and node.arg in attributes:
            attribute_hits.append((node.lineno, node.arg))
        for name in names:
            named.add(name)
            if name in classes:
                class_hits.append((getattr(node, "lineno", 0), name))
    hits = [(line, name, classes[name]) for line, name in class_hits]
    for line, name in attribute_hits:
        reasons = [reason for owner, reason in attributes[name] if owner in named]
        if reasons:
            hits.append((line, name, reasons))
    seen: set[tuple[int, str]] = set()
    out: list[Use] = []
    for line, name, reasons in sorted(hits, key=lambda hit: (hit[0], hit[1])):
        if (line, name) not in seen:
            seen.add((line, name))
            out.append(Use(file, line, name, tuple(reasons)))
    return out
