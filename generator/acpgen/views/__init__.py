"""Stage 3b, views: one typed view per generated module, built in Python
from the analysed IR.

A view holds every decision about what a module prints: the names it
binds, the annotations and literals as source text, which branches exist.
The templates receive only their module's view (``{{ view.... }}``) and
contain loops, boolean ``if``\\ s and substitutions, so a type checker sees
the whole contract between the compiler and the templates.

:data:`VIEWS` maps a generated module's stem (``"codec"``, ``"session"``
...) to the function that builds its view from :class:`ViewInputs`; a
module in it is rendered with ``{"view": ...}`` as its only context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..compile import ir
from ..emit.names import ModuleNames


@dataclass(frozen=True)
class ViewInputs:
    """What a view is built from: the package's IR and how the module being
    built names things (recording, as it is asked, what it must import)."""

    package: ir.Package
    defs: Mapping[str, ir.Definition]
    """The package's definitions by schema name."""
    names: ModuleNames
    """How this module refers to schema names and builtins."""
    exports: Mapping[str, tuple[str, ...]]
    """Every module's public names (:func:`acpgen.emit.names.exports`)."""
    generator_version: str


ViewBuilder = Callable[[ViewInputs], object]

VIEWS: dict[str, ViewBuilder] = {}
"""Generated module stem -> the builder of its view."""


def _register() -> None:
    """The views of the modules with one (imported here, after
    :class:`ViewInputs`, which they import)."""
    from .codec import build_codec_view
    from .models import build_models_view
    from .package import build_package_view, build_schema_view
    from .patch import build_patch_view

    VIEWS["models"] = build_models_view
    VIEWS["__init__"] = build_package_view
    VIEWS["_schema"] = build_schema_view
    VIEWS["patch"] = build_patch_view
    VIEWS["codec"] = build_codec_view


_register()
