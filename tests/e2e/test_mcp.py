"""MCP over ACP in the generated unstable packages (``conn.mcp_provider``,
``conn.mcp``), over ``connect_in_memory`` with strict decoding on both ends,
so every ``mcp/message`` the runtime's ``_mcp`` sends is checked against the
schema where it arrives; and that only the packages with ``mcp/message``
have any of it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ..conftest import load_generated
from ..patience import HANG

UNSTABLE = ["acp_v1_unstable", "acp_v2_unstable"]


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG))


@pytest.mark.parametrize("name", UNSTABLE)
def test_an_agent_calls_a_server_its_client_provides_strictly_decoded(name: str) -> None:
    p = load_generated(name)
    tools = p.McpTools("calc", "1")

    @tools.tool("add", "Adds a and b")
    async def add(arguments: dict[str, Any], context: Any) -> str:
        await context.notify("notifications/progress", {"progressToken": context.request_id, "progress": 1})
        return str(arguments["a"] + arguments["b"])

    class Agent(p.Agent):
        def __init__(self, conn: Any) -> None:
            self.notes: list[Any] = []

        async def mcp_message(self, params: Any) -> None:
            self.notes.append(params)

    class Client(p.Client):
        def __init__(self, conn: Any) -> None:
            pass

    async def main() -> None:
        agent, client = p.connect_in_memory(
            Agent, Client, strict=True, validate_outgoing=True, require_initialize=False
        )
        try:
            registration = client.mcp_provider.add("calc", tools)
            declared = registration.declaration(p.AcpMcpServer)
            assert p.encode(declared) == registration.wire
            assert p.acp_server_ids([declared]) == {registration.server_id: "calc"}
            seen: list[tuple[str, Any]] = []
            session = agent.mcp(registration.server_id)
            result = await session.call_tool("add", {"a": 1, "b": 2}, on_notification=lambda m, q: seen.append((m, q)))
            assert result["content"] == [{"type": "text", "text": "3"}]
            assert [m for m, _ in seen] == ["notifications/progress"]
            # The agent's handler got the envelope decoded, strictly.
            [note] = agent.handler.notes
            assert isinstance(note, p.MessageMcpNotification)
            assert note.server_id == registration.server_id and note.method == "notifications/progress"
            # The provider's answers decode as the schema's MessageMcpResponse.
            ok = await agent.mcp_message(
                p.MessageMcpRequest(server_id=registration.server_id, request_id="r1", method="ping")
            )
            assert isinstance(ok, p.ResultMessageMcpResponse) and ok.result == {}
            inner = await agent.mcp_message(
                p.MessageMcpRequest(server_id=registration.server_id, request_id="r2", method="nope")
            )
            assert isinstance(inner, p.ErrorMessageMcpResponse)
            assert (inner.error.code, inner.error.message) == (-32601, "Method not found")
            with pytest.raises(p.RequestError) as outer:
                await agent.mcp_message(p.MessageMcpRequest(server_id="unknown", request_id="r3", method="ping"))
            assert outer.value.code == -33001
        finally:
            await agent.close()
            await client.close()

    run(main())


@pytest.mark.parametrize("name", ["acp_v1", "acp_v2"])
def test_the_stable_packages_have_none_of_it(name: str) -> None:
    p = load_generated(name)
    assert not hasattr(p, "McpProvider") and not hasattr(p, "McpSession")
    assert not hasattr(p.AgentSideConnection, "mcp") and not hasattr(p.ClientSideConnection, "mcp_provider")
    assert not any(Path(d, "_mcp.py").exists() for d in p.__path__)
