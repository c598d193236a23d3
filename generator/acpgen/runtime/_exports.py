"""The names a package exports from modules it imports on first use.

Importing a package loads what decoding and encoding need (the models and
the codec); the modules of the rest (the session fold, the patch functions,
the JSON-RPC messages, the senders, the connection and asyncio with it)
load when one of their names is first read from the package
(``package.Session``, ``from package import Session``), through the
package's module ``__getattr__`` (PEP 562), which this module makes.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package ``package`` (being
    imported) whose names in ``names`` (name -> the module of the package
    that defines it) load on first use. A module of ``names`` is an
    attribute of the package too (``package.session``), as it would be once
    imported. A name read once is then the package's own attribute: reading
    it again costs what any attribute does."""
    namespace = sys.modules[package].__dict__
    modules = frozenset(names.values())

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is not None:
            value = getattr(importlib.import_module(f"{package}.{module}"), name)
            namespace[name] = value
            return value
        if name in modules:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__
