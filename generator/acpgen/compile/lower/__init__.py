"""Stage 2, lower: a loaded schema as the typed IR of :mod:`acpgen.compile.ir`.

:mod:`.definitions` lowers each ``$defs`` entry, with :mod:`.types` (type
expressions and the reading helpers), :mod:`.objects` and :mod:`.unions`;
:mod:`.facts` reads, once, what the passes need of the whole document;
:mod:`.fallbacks` records every fallback to JSON or an alias with its reason;
:mod:`.validation` (with :mod:`.patterns`) prepares what strict mode checks.
"""

from __future__ import annotations

from .definitions import lower
from .validation import strip_annotations

__all__ = ["lower", "strip_annotations"]
