"""An MCP server over stdio on the official MCP Python SDK (PyPI ``mcp``, its
``MCPServer``, formerly FastMCP): the real MCP server that an acpgen client
offers an agent over ``mcp/message`` in ``test_mcp.py``.

One tool, ``add``, which reports its progress (``notifications/progress``,
when the request asked for it with a ``progressToken``) and logs a line
(``notifications/message``) before it answers."""

from __future__ import annotations

import warnings

from mcp.server.mcpserver import Context, MCPServer

# Logging is deprecated from MCP 2026-07-28 on; this server speaks 2025-06-18.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")

server = MCPServer("interop-tools")


@server.tool(description="Adds a and b, reporting its progress.")
async def add(a: int, b: int, ctx: Context) -> str:
    await ctx.report_progress(1, 2, "adding")
    await ctx.info(f"adding {a} and {b}")
    return str(a + b)


if __name__ == "__main__":
    server.run("stdio")
