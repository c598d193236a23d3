"""The ``[tool.acpgen]`` table of ``pyproject.toml``: which schemas to
generate into which packages, when ``acpgen generate`` runs without
arguments."""

from __future__ import annotations

import keyword
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .errors import AcpgenError

SITE_HOOKS = frozenset({"sitecustomize", "usercustomize"})
"""Modules Python's ``site`` imports at every start, wherever on the path."""


def package_name_problem(name: str) -> str | None:
    """What is wrong with ``name`` as a generated package's import name, or
    None: it must be an ASCII identifier, not a keyword, not a module of the
    standard library (``sys.stdlib_module_names``, built-in ones included),
    not a name Python gives a meaning of its own (``__main__``, ``__init__``,
    ``__pycache__``: any ``__name__``) and not a module ``site`` runs at every
    start (``sitecustomize``, ``usercustomize``)."""
    if not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name):
        return "is not a usable Python identifier"
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return "is a standard-library module: importing it would shadow or be shadowed by it"
    if len(name) > 4 and name.startswith("__") and name.endswith("__"):
        return (
            "has the form __name__, which Python keeps for names of its own (__main__ is the script "
            "being run, __init__ a package's module, __pycache__ its bytecode)"
        )
    if name in SITE_HOOKS:
        return "is a module Python's site imports at every start: it would run in every interpreter on that path"
    return None


@dataclass(frozen=True)
class Target:
    schema: str
    """The schema file, as written in the configuration (relative to the root)."""
    package: str
    rules: str | None = None
    """The patch rule set (``rules/patch.toml``) for the package, if any."""


@dataclass(frozen=True)
class Config:
    root: Path
    out: str
    targets: tuple[Target, ...]

    @property
    def out_dir(self) -> Path:
        return self.root / self.out


def find_pyproject(start: Path | None = None) -> Path:
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    raise AcpgenError("no pyproject.toml here or in any parent directory", file=str(here))


def _table(path: Path) -> object:
    """The ``[tool.acpgen]`` table of ``path`` (None when there is none)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AcpgenError("no such file", file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise AcpgenError(f"invalid TOML: {exc}", file=str(path)) from None
    tool = data.get("tool")
    return tool.get("acpgen") if isinstance(tool, dict) else None


def _out(table: dict[str, object], name: str) -> str:
    out = table.get("out", "generated")
    if not isinstance(out, str):
        raise AcpgenError("[tool.acpgen] 'out' must be a string", file=name)
    return out


@dataclass(frozen=True)
class Packages:
    """Where the generated packages of a project are: the ``out`` directory
    of the ``[tool.acpgen]`` table of its ``pyproject.toml``."""

    directory: Path
    pyproject: Path
    out: str
    """As written in the table (``generated`` when it says nothing)."""

    def describe(self) -> str:
        return f"[tool.acpgen] out = {self.out!r} of {self.pyproject}"


def configured_packages(start: Path | None = None) -> Packages | None:
    """The output directory ``acpgen generate`` writes to, read from the
    nearest ``pyproject.toml`` around ``start`` (the working directory), as
    generate and check find it; None when there is no ``pyproject.toml`` or
    it has no ``[tool.acpgen]`` table. Only ``out`` is read: a table that
    lists no packages still says where they are."""
    try:
        path = find_pyproject(start)
    except AcpgenError:
        return None
    table = _table(path)
    if not isinstance(table, dict):
        return None
    out = _out(table, str(path))
    return Packages(directory=path.parent / out, pyproject=path, out=out)


def load_config(pyproject: Path | None = None) -> Config:
    path = pyproject or find_pyproject()
    name = str(path)
    table = _table(path)
    if not isinstance(table, dict):
        raise AcpgenError("no [tool.acpgen] table", file=name)
    targets = []
    for index, entry in enumerate(table.get("packages", ())):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("schema"), str)
            or not isinstance(entry.get("package"), str)
        ):
            raise AcpgenError(
                f"[[tool.acpgen.packages]] entry {index + 1} needs the strings 'schema' and 'package'",
                file=name,
            )
        rules = entry.get("rules")
        if rules is not None and not isinstance(rules, str):
            raise AcpgenError(f"[[tool.acpgen.packages]] entry {index + 1}: 'rules' must be a string", file=name)
        problem = package_name_problem(entry["package"])
        if problem is not None:
            raise AcpgenError(
                f"[[tool.acpgen.packages]] entry {index + 1}: the package name {entry['package']!r} {problem}",
                file=name,
            )
        targets.append(Target(schema=entry["schema"], package=entry["package"], rules=rules))
    if not targets:
        raise AcpgenError("[tool.acpgen] lists no packages", file=name)
    out = _out(table, name)
    return Config(root=path.parent, out=out, targets=tuple(targets))
