"""Find the generated package a transcript is checked against: by import
name, by directory, or generated from a schema into a temporary directory."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import tempfile
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
    set ``rules``) into a temporary directory and import it."""
    from ..pipeline import build_package
    from ..output.write import write_packages

    files = build_package(schema, "acp_validated", rules=rules)
    out = Path(tempfile.mkdtemp(prefix="acpgen-validate-"))
    write_packages(out, {"acp_validated": files})
    sys.modules.pop("acp_validated", None)
    return load_package(str(out / "acp_validated"))


def _checked(module: ModuleType, where: str) -> ModuleType:
    if not hasattr(module, "decode_message") or not hasattr(module, "METHODS"):
        raise AcpgenError("the package has no protocol layer (decode_message, METHODS): regenerate it", file=where)
    return module
