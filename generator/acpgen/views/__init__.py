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

from . import protocol as _protocol  # noqa: E402

VIEWS["protocol"] = _protocol.build

from . import connection as _connection  # noqa: E402

VIEWS["connection"] = _connection.build

from . import codec as _codec  # noqa: E402
from . import models as _models  # noqa: E402
from . import package as _package  # noqa: E402
from . import patch as _patch  # noqa: E402

VIEWS["models"] = _models.build_models_view
VIEWS["__init__"] = _package.build_package_view
VIEWS["_schema"] = _package.build_schema_view
VIEWS["patch"] = _patch.build_patch_view
VIEWS["codec"] = _codec.build_codec_view
