"""acpgen: generate typed Python packages from the Agent Client Protocol JSON Schema.

The generator is a one-way pipeline, one module per stage:

``load`` (read, metaschema check, ``$ref`` resolution) -> ``lower`` (schema to
the IR of :mod:`acpgen.compile.ir`) -> ``naming`` (Python identifiers) -> ``render``
(Jinja2 templates) -> ``fmt`` (ruff format) -> ``write`` (atomic output).
:mod:`acpgen.pipeline` strings the stages together and :mod:`acpgen.cli` is
the command line.
"""

__version__ = "0.1.0"
