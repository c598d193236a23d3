"""The ``[tool.acpgen]`` table of ``pyproject.toml``: which schemas to
generate into which packages, when ``acpgen generate`` runs without
arguments."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .errors import AcpgenError


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


def load_config(pyproject: Path | None = None) -> Config:
    path = pyproject or find_pyproject()
    name = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AcpgenError("no such file", file=name) from None
    except tomllib.TOMLDecodeError as exc:
        raise AcpgenError(f"invalid TOML: {exc}", file=name) from None
    table = data.get("tool", {}).get("acpgen")
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
        targets.append(Target(schema=entry["schema"], package=entry["package"], rules=rules))
    if not targets:
        raise AcpgenError("[tool.acpgen] lists no packages", file=name)
    out = table.get("out", "generated")
    if not isinstance(out, str):
        raise AcpgenError("[tool.acpgen] 'out' must be a string", file=name)
    return Config(root=path.parent, out=out, targets=tuple(targets))
