"""Find the generated package a transcript is checked against: by import
name, by directory, or generated from a schema into a temporary directory."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from pathlib import Path
from types import ModuleType

from ..errors import AcpgenError


def load_package(name_or_path: str) -> ModuleType:
    """A generated package: a directory holding one, an importable name, or a
    name under ``generated/`` of the current directory."""
    path = Path(name_or_path)
    if not path.is_dir() and "/" not in name_or_path and (Path("generated") / name_or_path).is_dir():
        path = Path("generated") / name_or_path
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
    try:
        return _checked(importlib.import_module(name_or_path), name_or_path)
    except ImportError:
        raise AcpgenError("no such generated package (give its directory or import name)", file=name_or_path) from None


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
