"""An agent on acpgen's ``acp_v1_unstable`` that calls the MCP servers its
client provides over ACP (``mcp/message``): the agent of ``test_mcp.py``.

It advertises ``mcpCapabilities.acp``; ``session/new`` keeps the ``acp``
entries of ``mcpServers``; each prompt, for every such server, runs
``initialize``, ``tools/list``, ``tools/call`` of ``add`` (2 + 3, with the
notifications the call brings), an inner request of a method the server does
not have (an inner MCP error) and a request to a server nobody declared (an
outer ACP error), and ends the turn with what it saw in the response's
``_meta.mcp``: ``{serverId: report}``.

    python acpgen_mcp_agent.py [--mcp-protocol 2026-07-28]

With ``--mcp-protocol 2026-07-28`` (the stateless MCP revision the
TypeScript SDK's binding speaks) every inner request carries that version
and empty client capabilities in ``params._meta``, and ``server/discover``
takes the place of ``initialize``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))

import acp_v1_unstable as acp


class McpAgent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection[McpAgent], mcp_protocol: str | None = None) -> None:
        self.conn = conn
        self.mcp_protocol = mcp_protocol
        self.servers: dict[str, dict[str, str]] = {}

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(
            protocol_version=1,
            agent_info=acp.Implementation(name="acpgen-mcp-agent", version="1"),
            agent_capabilities=acp.AgentCapabilities(mcp_capabilities=acp.McpCapabilities(acp=True)),
        )

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        session_id = uuid.uuid4().hex
        self.servers[session_id] = acp.acp_server_ids(params.mcp_servers)
        return acp.NewSessionResponse(session_id=session_id)

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        report: dict[str, Any] = {}
        for server_id, name in self.servers[params.session_id].items():
            report[server_id] = await self._use(server_id, name)
        return acp.PromptResponse(stop_reason="end_turn", meta={"mcp": report})

    async def _use(self, server_id: str, name: str) -> dict[str, Any]:
        if self.mcp_protocol is None:
            mcp = self.conn.mcp(server_id)
            info = await mcp.initialize(client_info={"name": "acpgen-mcp-agent", "version": "1"})
        else:
            meta = {
                "io.modelcontextprotocol/protocolVersion": self.mcp_protocol,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
            mcp = self.conn.mcp(server_id, meta=meta)
            info = await mcp.request("server/discover")
        tools = await mcp.list_tools()
        notifications: list[dict[str, Any]] = []
        result = await mcp.call_tool(
            "add",
            {"a": 2, "b": 3},
            on_notification=lambda method, params: notifications.append({"method": method, "params": params}),
        )
        try:
            await mcp.request("interop/no-such-method")
            inner: Any = None
        except acp.McpCallError as error:
            inner = error.error
        try:
            await self.conn.mcp("no-such-server").request("tools/list")
            outer: Any = None
        except acp.RequestError as error:
            outer = {"code": error.code, "data": error.data}
        return {
            "name": name,
            "serverInfo": info.get("serverInfo"),
            "tools": [tool["name"] for tool in tools],
            "result": result,
            "notifications": notifications,
            "innerError": inner,
            "outerError": outer,
        }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mcp-protocol", help="the inner requests' MCP revision, in their _meta")
    args = parser.parse_args()
    asyncio.run(acp.run_agent_stdio(lambda conn: McpAgent(conn, args.mcp_protocol), validate_outgoing=True))
