"""Stage 3, the IR passes: each reads the lowered IR and returns it with what
it found. :data:`PASSES` is their one order, which
:func:`acpgen.pipeline.build_ir` runs (:func:`run_passes`).

A pass is a module with ``run(package, options)``; it reads the IR and the
:class:`~.options.Options`, and shares with other passes only the IR and the
helpers here that are no pass: :mod:`.identifiers` (the words of a name),
:mod:`.values` (schema JSON as typed values), :mod:`.rules` (the rules
files), :mod:`.attributes` (what the runtime's base classes define).
"""

from __future__ import annotations

from collections.abc import Callable

from ...records import dataclass
from .. import ir
from . import (
    analysis,
    cancellation,
    capabilities,
    defaults,
    gates,
    methods,
    naming,
    resumption,
    ruleselect,
    senders,
    session,
    upserts,
)
from .options import Options

__all__ = ["PASSES", "Options", "Pass", "run_passes"]


@dataclass(frozen=True)
class Pass:
    """One pass: its name and its ``run``."""

    name: str
    run: Callable[[ir.Package, Options], ir.Package]


PASSES: tuple[Pass, ...] = (
    # Python identifiers: every later pass and the templates use them.
    Pass("naming", naming.run),
    # Schema defaults as typed values.
    Pass("defaults", defaults.run),
    # Capabilities advertised by their presence.
    Pass("capabilities", capabilities.run),
    # The JSON-RPC method table, then the capability each method needs.
    Pass("methods", methods.run),
    Pass("gates", gates.run),
    # What a session's cancel does to the requests being handled.
    Pass("cancellation", cancellation.run),
    # The patch rule set (told from the schema's facts, or the one asked
    # for), then its upserts and chunks, then the session fold built on them.
    Pass("ruleselect", ruleselect.run),
    Pass("upserts", upserts.run),
    Pass("session", session.run),
    # How the generated SessionKeeper takes a session up again: needs the
    # session fold.
    Pass("resumption", resumption.run),
    # The agent's session senders: needs the method table and the upserts.
    Pass("senders", senders.run),
    # What the templates need of the whole package, last.
    Pass("analysis", analysis.run),
)
"""The passes, in the order they run."""


def run_passes(package: ir.Package, options: Options) -> ir.Package:
    """``package`` (lowered) through every pass of :data:`PASSES`, in order."""
    for step in PASSES:
        package = step.run(package, options)
    return package
