"""What a run of the passes is asked for (:class:`Options`): every pass reads
the IR and these, nothing else."""

from __future__ import annotations

from ...records import dataclass

__all__ = ["Options"]


@dataclass(frozen=True)
class Options:
    """The generated package's name, the patch rule set asked for (``None``:
    told from the schema, ``"none"``: no rules) and whether to build the
    JSON-RPC method table and its gates."""

    package_name: str
    rules: str | None = None
    methods: bool = True
