"""acpgen: generate typed Python packages from the Agent Client Protocol JSON Schema.

The stages and how data flows through them are described in
:mod:`acpgen.pipeline`; :mod:`acpgen.cli` is the command line.
"""

__version__ = "0.2.0"
