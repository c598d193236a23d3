"""Python modules copied into every generated package as they are (with the
generated header in front): ordinary source, linted, type-checked and
unit-tested here like the rest of acpgen."""

from pathlib import Path

_HERE = Path(__file__).parent

SOURCES = {
    name: _HERE / name
    for name in (
        "_runtime.py",
        "_validator.py",
        "_codec.py",
        "_models.py",
        "_jsonrpc.py",
        "_transport.py",
        "_connection.py",
        "_session.py",
        "_links.py",
        "_asgi.py",
        "_remote.py",
        "_capabilities.py",
        "_folding.py",
        "_permissions.py",
        "_trace.py",
        "_otel.py",
        "_handshake.py",
        "_versions.py",
        "_resume.py",
        "_sides.py",
        "_patch.py",
        "_senders.py",
        "_exports.py",
        "_mcp.py",
        "_proxy.py",
        "_conductor.py",
    )
}
"""Generated file name -> the source copied into the package (``_proxy.py``
and ``_conductor.py`` only into a package whose schema has a proxy chain:
``acpgen.views.names.PROXY_SOURCES``)."""

MCP_ONLY = frozenset({"_mcp.py"})
"""The sources copied only into a package with MCP over ACP
(``views.names.has_mcp``) or a proxy chain (a proxy provides MCP servers to
its successor through ``_mcp``)."""
