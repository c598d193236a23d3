"""``python -m acpgen.conformance --package ...``: the conformance check
without loading the generator (the same command as ``acpgen conformance``)."""

from ..cli.conformance import conformance

conformance(prog_name="python -m acpgen.conformance")
