"""Find the generated package a transcript is checked against: by import
name, by directory, or generated from a schema into a temporary directory."""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from ..errors import AcpgenError


def package_places(packages_dir: str | None = None, option: str = "--packages") -> list[tuple[Path, str]]:
    """The directories a package named by import name is looked for in,
    each with how it was found: ``packages_dir`` alone when given (an
    option such as ``--packages``); else the output directory of the
    ``[tool.acpgen]`` table of the nearest ``pyproject.toml``, where
    ``acpgen generate`` writes (see :mod:`acpgen.config`); else
    ``generated/`` of the working directory. After them the name is
    imported."""
    from ..config import configured_packages

    if packages_dir is not None:
        return [(Path(packages_dir), option)]
    configured = configured_packages()
    if configured is not None:
        return [(configured.directory, configured.describe())]
    return [(Path("generated"), "the working directory's; no pyproject.toml here or above has a [tool.acpgen] table")]


def load_package(
    name_or_path: str,
    *,
    packages_dir: str | None = None,
    option: str = "--package",
    hint: str = "give its directory or import name with --package",
    importable: bool = True,
) -> ModuleType:
    """A generated package: a directory holding one, or an import name,
    looked for in the :func:`package_places` and then imported (unless not
    ``importable``). A package not found is an :class:`AcpgenError` saying
    where it was looked for, and ``hint``: the option that gives it;
    ``option`` is the option ``packages_dir`` came from."""
    path = Path(name_or_path)
    places: list[tuple[Path, str]] = []
    if not path.is_dir() and "/" not in name_or_path and os.sep not in name_or_path:
        places = package_places(packages_dir, option)
        for directory, _how in places:
            if (directory / name_or_path).is_dir():
                path = directory / name_or_path
                break
    if path.is_dir():
        init = path / "__init__.py"
        if not init.is_file():
            raise AcpgenError("not a generated package (no __init__.py)", file=str(path))
        name = path.resolve().name
        if name in sys.modules and Path(getattr(sys.modules[name], "__file__", "")).resolve() == init.resolve():
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(path)])
        if spec is None or spec.loader is None:
            raise AcpgenError("cannot import the package", file=str(path))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return _checked(module, str(path))
    if not places:
        raise AcpgenError(f"no such directory; {hint}", file=name_or_path)
    if importable:
        try:
            return _checked(importlib.import_module(name_or_path), name_or_path)
        except ImportError:
            pass
    looked = "; ".join(f"{os.path.normpath(directory / name_or_path)} ({how})" for directory, how in places)
    also = " nor importable" if importable else ""
    raise AcpgenError(
        f"no such generated package: not in {looked}{also}; {hint}",
        file=name_or_path,
    )


def package_from_schema(schema: str, rules: str | None = None) -> ModuleType:
    """Generate a package from ``schema`` (with the patch and session rule
    set ``rules``) into a temporary directory, import it whole (its lazily
    imported modules too) and remove the directory: nothing is left behind,
    whether this returns, fails or is interrupted (KeyboardInterrupt)."""
    from ..output.write import write_packages
    from ..pipeline import build_package
    from ..scratch import scratch

    files = build_package(schema, PACKAGE_NAME, rules=rules)
    # scratch: no Ctrl-C between creating the directory and knowing its
    # name, nor one that cuts its removal short.
    with scratch("acpgen-validate-") as temp:
        out = Path(temp)
        write_packages(out, {PACKAGE_NAME: files})
        for name in [name for name in sys.modules if name == PACKAGE_NAME or name.startswith(PACKAGE_NAME + ".")]:
            del sys.modules[name]
        module = load_package(str(out / PACKAGE_NAME))
        for info in pkgutil.iter_modules([str(out / PACKAGE_NAME)]):
            importlib.import_module(f"{module.__name__}.{info.name}")
        return module


PACKAGE_NAME = "acp_validated"
"""The import name of a package :func:`package_from_schema` generates."""


def _checked(module: ModuleType, where: str) -> ModuleType:
    if not hasattr(module, "decode_message") or not hasattr(module, "METHODS"):
        raise AcpgenError("the package has no protocol layer (decode_message, METHODS): regenerate it", file=where)
    return module
