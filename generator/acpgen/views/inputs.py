"""What every view is built from (:class:`ViewInputs`), apart from the
registry of builders so that the builders import it without a cycle."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..compile import ir
from ..records import dataclass
from .names import ModuleNames


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
    """Every module's public names (:func:`acpgen.views.names.exports`)."""
    generator_version: str


ViewBuilder = Callable[[ViewInputs], object]
