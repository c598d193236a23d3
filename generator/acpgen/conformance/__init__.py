"""The conformance suite: fixtures derived from the schema, and a runner that
checks any generated package against them through its public API.

``model`` (the decoding rules over the raw schema) and ``fixturegen`` write
the fixtures; ``runner``, ``patch`` and ``coverage`` check a package;
``loader`` finds the package, its schema and its fixtures. The commands
(``acpgen conformance``, ``acpgen conformance-fixtures``) are in
:mod:`acpgen.cli.conformance`.
"""
