"""MCP over ACP against real peers.

First, a real MCP server: the official MCP Python SDK's
``MCPServer`` over stdio (``peers/mcp_stdio_server.py``), which an acpgen
client (``acp_v1_unstable``) offers its agent (``peers/acpgen_mcp_agent.py``,
a process on the same package) over ``mcp/message``, bridged by
``McpStdioServer``. The agent's inner requests reach the server and their
results come back (the request path); the progress and log notifications the
tool sends while it runs reach the agent as ``mcp/message`` notifications of
that request (the notification path). An inner MCP error and an outer ACP
error stay apart.

Then the official TypeScript SDK's own binding (2.4.0), both ways: its
``McpOverAcpCaller`` as the agent (``ts/mcp_agent.mjs``) calling a server an
acpgen client provides with ``McpTools``, and its ``McpOverAcpProvider`` as
the client (``ts/mcp_client.mjs``) providing a server the acpgen agent calls
(in the stateless MCP revision 2026-07-28 that binding requires)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from ..conftest import load_generated
from ..patience import HANG
from .harness import MCP_SDK, PEERS, ROOT, TS, require_python_sdk, require_ts_sdk, run_session

acp = load_generated("acp_v1_unstable")


class Client(acp.Client):
    def __init__(self, conn: Any) -> None:
        self.conn = conn


async def session() -> tuple[str, Any, Any]:
    agent = [sys.executable, str(PEERS / "acpgen_mcp_agent.py")]
    async with acp.spawn_agent(Client, *agent, validate_outgoing=True) as conn:
        async with acp.McpStdioServer(sys.executable, str(PEERS / "mcp_stdio_server.py")) as server:
            registration = conn.mcp_provider.add("interop-tools", server)
            initialized = await conn.initialize(acp.InitializeRequest(protocol_version=1))
            new = await conn.new_session(
                acp.NewSessionRequest(cwd=str(ROOT), mcp_servers=[registration.declaration(acp.AcpMcpServer)])
            )
            answer = await conn.prompt(
                acp.PromptRequest(session_id=new.session_id, prompt=[acp.TextContentBlock(text="use the tools")])
            )
        assert server.process is not None and server.process.returncode is not None
        return registration.server_id, initialized, answer


def test_an_acpgen_agent_calls_a_tool_of_an_mcp_sdk_server_its_client_provides() -> None:
    require_python_sdk(MCP_SDK)
    server_id, initialized, answer = asyncio.run(asyncio.wait_for(session(), HANG))
    assert initialized.agent_capabilities.mcp_capabilities.acp is True
    assert answer.stop_reason == "end_turn"
    report = answer.meta["mcp"][server_id]
    assert report["name"] == "interop-tools"
    assert report["serverInfo"]["name"] == "interop-tools"
    assert report["tools"] == ["add"]
    # The request path: the tool's result, as the MCP SDK built it.
    assert report["result"]["isError"] is False
    assert report["result"]["content"] == [{"type": "text", "text": "5"}]
    # The notification path: what the tool sent while it ran, for this request.
    assert report["notifications"] == [
        {
            "method": "notifications/progress",
            "params": {
                "progressToken": report["notifications"][0]["params"]["progressToken"],
                "progress": 1,
                "total": 2,
                "message": "adding",
            },
        },
        {"method": "notifications/message", "params": {"level": "info", "data": "adding 2 and 3"}},
    ]
    # An inner MCP error (the server's own -32601) inside a successful
    # mcp/message answer; an undeclared server is an outer ACP error.
    assert report["innerError"]["code"] == -32601
    assert report["outerError"] == {"code": -33001, "data": {"serverId": "no-such-server"}}


def tools() -> Any:
    """The server the acpgen client provides the TypeScript agent: ``add``,
    which sends a progress notification for its request first."""
    served = acp.McpTools("acpgen-tools", "1")

    @served.tool("add", "Adds a and b", {"type": "object", "properties": {"a": {}, "b": {}}})
    async def add(arguments: dict[str, Any], context: acp.McpContext) -> str:
        await context.notify("notifications/progress", {"progressToken": context.request_id, "progress": 1})
        return str(arguments["a"] + arguments["b"])

    return served


async def ts_session() -> tuple[str, Any]:
    async with acp.spawn_agent(Client, "node", str(TS / "mcp_agent.mjs"), validate_outgoing=True) as conn:
        registration = conn.mcp_provider.add("acpgen-tools", tools())
        await conn.initialize(acp.InitializeRequest(protocol_version=1))
        new = await conn.new_session(
            acp.NewSessionRequest(cwd=str(ROOT), mcp_servers=[registration.declaration(acp.AcpMcpServer)])
        )
        answer = await conn.prompt(
            acp.PromptRequest(session_id=new.session_id, prompt=[acp.TextContentBlock(text="use the tools")])
        )
        return registration.server_id, answer


def test_the_typescript_sdks_mcp_caller_calls_a_server_an_acpgen_client_provides() -> None:
    require_ts_sdk()
    server_id, answer = asyncio.run(asyncio.wait_for(ts_session(), HANG))
    assert answer.stop_reason == "end_turn"
    report = answer.meta["mcp"][server_id]
    assert report["name"] == "acpgen-tools"
    assert report["listed"] == {
        "result": {
            "tools": [
                {
                    "name": "add",
                    "inputSchema": {"type": "object", "properties": {"a": {}, "b": {}}},
                    "description": "Adds a and b",
                }
            ]
        }
    }
    assert report["called"] == {"result": {"content": [{"type": "text", "text": "5"}], "isError": False}}
    # The notification of the call, for its request: the TypeScript SDK's
    # caller may settle the request before it routes a notification that came
    # just before the answer ("routed"; see ts/mcp_agent.mjs), so it is
    # checked as it arrived, and as routed when it was.
    note = {
        "serverId": server_id,
        "requestId": f"add-{server_id}",
        "method": "notifications/progress",
        "params": {"progressToken": f"add-{server_id}", "progress": 1},
    }
    assert report["received"] == [note]
    assert report["routed"] in ([], [{"method": note["method"], "params": note["params"]}])
    assert report["inner"] == {
        "error": {"code": -32601, "message": "Method not found", "data": {"method": "interop/no-such-method"}}
    }
    assert report["outer"] == {"code": -33001, "data": {"serverId": "no-such-server"}}


def test_an_acpgen_agent_calls_a_server_the_typescript_sdks_mcp_provider_offers() -> None:
    require_ts_sdk()
    report = run_session(
        ["node", str(TS / "mcp_client.mjs"), "--"],
        [sys.executable, str(PEERS / "acpgen_mcp_agent.py"), "--mcp-protocol", "2026-07-28"],
    )
    server_id = report["serverId"]
    assert report["answer"]["stopReason"] == "end_turn"
    seen = report["answer"]["_meta"]["mcp"][server_id]
    assert seen["name"] == "typescript-sdk-tools"
    assert seen["serverInfo"] == {"name": "typescript-sdk-tools", "version": "1"}
    assert seen["tools"] == ["add"]
    assert seen["result"] == {"content": [{"type": "text", "text": "5"}], "isError": False}
    # The provider's notification for the call, with the progressToken the
    # acpgen caller put in the request (its request id).
    [note] = seen["notifications"]
    assert note["method"] == "notifications/progress"
    assert note["params"]["progress"] == 1 and note["params"]["total"] == 2
    assert isinstance(note["params"]["progressToken"], str)
    # The provider's McpProtocolError is the inner error; an undeclared
    # server is the provider's outer -33001.
    assert seen["innerError"] == {
        "code": -32601,
        "message": "Method not found",
        "data": {"method": "interop/no-such-method"},
    }
    assert seen["outerError"] == {"code": -33001, "data": {"serverId": "no-such-server"}}
