"""MCP over ACP (``_mcp``): a client's end providing MCP servers over
``mcp/message`` and an agent's end calling them, joined in memory, with a
method table of ``mcp/message`` alone (the schema's: a request the client
handles, a notification the agent handles)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest
from acpgen.runtime import _connection as connection
from acpgen.runtime import _jsonrpc as rpc
from acpgen.runtime import _mcp as mcp
from acpgen.runtime._sides import in_memory

from ..patience import HANG


def _decode(name: str, value: Any, strict: bool = False) -> Any:
    return value


def _encode(value: Any, validate: bool = False) -> Any:
    return value


METHODS = {
    "mcp/message": rpc.MethodInfo(
        "mcp/message",
        request=rpc.RequestInfo("client", dict, dict, "mcp_message", "MessageMcpRequest", "MessageMcpResponse"),
        notification=rpc.NotificationInfo("agent", dict, "mcp_message", "MessageMcpNotification"),
    )
}
CODEC = rpc.MessageCodec(METHODS, _decode, _encode, null_request_id=False)


class AgentInterface:
    async def mcp_message(self, params: Any) -> None:
        return None


class ClientInterface:
    def __init__(self, conn: Any = None) -> None:
        pass

    async def mcp_message(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("mcp/message")


class AgentEnd(connection.Connection[Any], mcp.CallsMcp):
    side = "agent"
    codec = CODEC
    interface = AgentInterface


class ClientEnd(connection.Connection[Any], mcp.ProvidesMcp):
    side = "client"
    codec = CODEC
    interface = ClientInterface


class Agent(AgentInterface):
    def __init__(self, conn: Any) -> None:
        self.notes: list[Any] = []

    async def mcp_message(self, params: Any) -> None:
        self.notes.append(params)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG))


def pair(make_client: Any = ClientInterface) -> tuple[AgentEnd, ClientEnd]:
    return in_memory(
        lambda t: AgentEnd(Agent, t, require_initialize=False),
        lambda t: ClientEnd(make_client, t, require_initialize=False),
    )


def calculator() -> mcp.McpTools:
    tools = mcp.McpTools("calc", "1.0")

    @tools.tool("add", "Adds a and b", {"type": "object", "properties": {"a": {}, "b": {}}})
    async def add(arguments: dict[str, Any], context: mcp.McpContext) -> str:
        await context.notify("notifications/progress", {"progress": 1, "total": 2})
        await context.notify("notifications/message", {"level": "info", "data": "adding"})
        return str(arguments["a"] + arguments["b"])

    @tools.tool("fail")
    async def fail(arguments: dict[str, Any], context: mcp.McpContext) -> str:
        raise RuntimeError("the backend broke")

    return tools


def test_an_agent_calls_a_tool_of_a_server_the_client_provides_and_gets_its_notifications() -> None:
    async def main() -> None:
        agent, client = pair()
        provider = client.mcp_provider
        registration = provider.add("calc", calculator())
        assert client.mcp_provider is provider is mcp.mcp_provider(client)
        assert registration.wire == {"type": "acp", "name": "calc", "serverId": registration.server_id}
        assert mcp.acp_server_ids([registration.wire]) == {registration.server_id: "calc"}
        session = agent.mcp(registration.server_id)
        info = await session.initialize()
        assert info["serverInfo"] == {"name": "calc", "version": "1.0"}
        assert [t["name"] for t in await session.list_tools()] == ["add", "fail"]
        seen: list[tuple[str, Any]] = []
        result = await session.call_tool("add", {"a": 2, "b": 3}, on_notification=lambda m, p: seen.append((m, p)))
        assert result == {"content": [{"type": "text", "text": "5"}], "isError": False}
        # Both arrived before the answer, with the request's own id.
        assert [m for m, _ in seen] == ["notifications/progress", "notifications/message"]
        assert seen[0][1] == {"progress": 1, "total": 2}
        # The handler's own mcp_message saw them too, as the envelope.
        handler: Agent = agent.handler
        assert [n["method"] for n in handler.notes] == ["notifications/progress", "notifications/message"]
        assert {n["serverId"] for n in handler.notes} == {registration.server_id}
        assert len({n["requestId"] for n in handler.notes}) == 1
        await agent.close()
        await client.close()

    run(main())


def test_an_unknown_server_is_an_outer_error_and_an_inner_error_is_the_error_carrier() -> None:
    async def main() -> None:
        agent, client = pair()
        registration = mcp.mcp_provider(client).add("calc", calculator())
        with pytest.raises(rpc.RequestError) as outer:
            await mcp.McpSession(agent, "no-such-server").list_tools()
        assert outer.value.code == mcp.SERVER_UNAVAILABLE
        assert outer.value.data == {"serverId": "no-such-server"}
        session = mcp.McpSession(agent, registration.server_id)
        with pytest.raises(mcp.McpCallError) as inner:
            await session.request("resources/list")
        assert inner.value.code == rpc.METHOD_NOT_FOUND
        assert not isinstance(inner.value, rpc.RequestError)
        # On the wire: a successful outer answer carrying the inner error.
        raw = await agent.request(
            "mcp/message", {"serverId": registration.server_id, "requestId": "r1", "method": "resources/list"}
        )
        assert raw == {"error": {"code": -32601, "message": "Method not found", "data": {"method": "resources/list"}}}
        with pytest.raises(mcp.McpCallError) as unknown:
            await session.call_tool("nope")
        assert unknown.value.code == rpc.INVALID_PARAMS
        # A handler that fails without an MCP outcome: an outer error.
        with pytest.raises(rpc.RequestError) as broke:
            await session.call_tool("fail")
        assert broke.value.code == mcp.BACKEND_FAILED
        assert "the backend broke" in str(broke.value.data)
        await agent.close()
        await client.close()

    run(main())


def test_a_result_of_null_is_a_result_and_a_removed_server_is_unavailable() -> None:
    async def null(context: mcp.McpContext) -> Any:
        return None

    async def main() -> None:
        agent, client = pair()
        provider = mcp.mcp_provider(client)
        registration = provider.add("null", null)
        session = agent_session = mcp.McpSession(agent, registration.server_id)
        assert await session.request("anything") is None
        provider.remove(registration.server_id)
        with pytest.raises(rpc.RequestError) as outer:
            await agent_session.request("anything")
        assert outer.value.code == mcp.SERVER_UNAVAILABLE
        with pytest.raises(ValueError, match="used already"):
            provider.add("again", null, server_id=registration.server_id)
        ids = {provider.add("x", null).server_id for _ in range(50)}
        assert len(ids) == 50 and registration.server_id not in ids
        await agent.close()
        await client.close()

    run(main())


def test_a_request_id_active_on_a_server_is_refused_and_no_notification_follows_the_answer() -> None:
    async def main() -> None:
        agent, client = pair()
        started = asyncio.Event()
        release = asyncio.Event()
        contexts: list[mcp.McpContext] = []

        async def held(context: mcp.McpContext) -> Any:
            contexts.append(context)
            started.set()
            await release.wait()
            return {"ok": True}

        registration = mcp.mcp_provider(client).add("held", held)
        wire = {"serverId": registration.server_id, "requestId": "same", "method": "x"}
        first = asyncio.ensure_future(agent.request("mcp/message", wire))
        await started.wait()
        with pytest.raises(rpc.RequestError) as duplicate:
            await agent.request("mcp/message", wire)
        assert duplicate.value.code == rpc.INVALID_PARAMS
        release.set()
        assert await first == {"result": {"ok": True}}
        handler: Agent = agent.handler
        await contexts[0].notify("notifications/progress", {"progress": 2})
        # A request after it: its answer comes after anything sent before.
        assert await agent.request("mcp/message", {**wire, "requestId": "next"}) == {"result": {"ok": True}}
        assert handler.notes == []
        await agent.close()
        await client.close()

    run(main())


def test_a_handler_with_its_own_mcp_message_answers_itself() -> None:
    class Own(ClientInterface):
        def __init__(self, conn: Any) -> None:
            pass

        async def mcp_message(self, params: Any) -> Any:
            return {"result": "own"}

    async def main() -> None:
        agent, client = pair(Own)
        registration = mcp.mcp_provider(client).add("calc", calculator())
        assert await mcp.McpSession(agent, registration.server_id).request("ping") == "own"
        await agent.close()
        await client.close()

    run(main())


def test_meta_and_progress_token_go_into_the_inner_params() -> None:
    async def main() -> None:
        agent, client = pair()
        seen: list[Any] = []

        async def record(context: mcp.McpContext) -> Any:
            seen.append(context.params)
            return {}

        registration = mcp.mcp_provider(client).add("rec", record)
        session = mcp.McpSession(agent, registration.server_id, meta={"io.example/v": "1"})
        await session.request("a", {"x": 1, "_meta": {"io.example/v": "mine"}})

        async def ignore(method: str, params: Any) -> None:
            return None

        await session.request("b", None, on_notification=ignore, request_id="rid")
        assert seen == [
            {"x": 1, "_meta": {"io.example/v": "mine"}},
            {"_meta": {"io.example/v": "1", "progressToken": "rid"}},
        ]
        await agent.close()
        await client.close()

    run(main())


SERVER = r"""
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    method, id = m.get("method"), m.get("id")
    def send(o):
        sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": m["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "line", "version": "9"}}})
    elif method == "notifications/initialized":
        pass
    elif method == "tools/call":
        token = m["params"].get("_meta", {}).get("progressToken")
        send({"jsonrpc": "2.0", "id": 99, "method": "roots/list"})
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": 1}})
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}})
        send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "done"}]}})
    elif "id" in m and method is not None:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no " + method}})
    else:
        sys.stderr.write("answer: " + json.dumps(m) + "\n")
"""


def test_a_stdio_server_process_is_bridged() -> None:
    async def main() -> None:
        agent, client = pair()
        server = mcp.McpStdioServer(sys.executable, "-c", SERVER)
        provider = mcp.mcp_provider(client)
        registration = provider.add("line", server)
        session = mcp.McpSession(agent, registration.server_id)
        try:
            info = await session.initialize()
            assert info["serverInfo"] == {"name": "line", "version": "9"}
            seen: list[tuple[str, Any]] = []
            result = await session.call_tool("t", {}, on_notification=lambda m, p: seen.append((m, p)))
            assert result == {"content": [{"type": "text", "text": "done"}]}
            assert seen == [
                ("notifications/progress", {"progressToken": seen[0][1]["progressToken"], "progress": 1}),
                ("notifications/message", {"level": "info", "data": "hi"}),
            ]
            with pytest.raises(mcp.McpCallError) as inner:
                await session.request("prompts/list")
            assert inner.value.error == {"code": -32601, "message": "no prompts/list"}
        finally:
            await provider.aclose()
            await agent.close()
            await client.close()
        assert server.process is not None and server.process.returncode is not None
        assert provider.servers == {}

    run(main())


def test_call_error_keeps_the_inner_error_object() -> None:
    error = mcp.McpCallError.of({"code": 5, "message": "m", "data": None, "extra": [1]})
    assert (error.code, error.message, error.data) == (5, "m", None)
    assert json.dumps(error.error) == '{"code": 5, "message": "m", "data": null, "extra": [1]}'
    assert str(error) == "m (5)"


ODD_SERVER = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "f", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": result}), flush=True)
    elif m.get("method") == "tools/list":
        print("[" * 100000, flush=True)  # nested past any parser's depth
        print(json.dumps({"jsonrpc": "2.0", "id": [1], "result": {}}), flush=True)  # an id no call has
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": []}}), flush=True)
    elif m.get("method") == "tools/call":
        break  # exits: the calls after this one fail at once
"""


def test_a_stdio_server_outlives_odd_lines_and_later_calls_fail_once_it_exited(tmp_path) -> None:
    script = tmp_path / "odd_server.py"
    script.write_text(ODD_SERVER, encoding="utf-8")

    async def main() -> None:
        server = mcp.McpStdioServer(sys.executable, str(script))
        try:
            # The nested line and the odd id are skipped; the answer after them arrives.
            assert await server(mcp.McpContext("s", "r1", "tools/list", None)) == {"tools": []}
            with pytest.raises(ConnectionError):
                await server(mcp.McpContext("s", "r2", "tools/call", {"name": "x"}))
            await asyncio.wait_for(server._reader, HANG)  # the process is gone
            with pytest.raises(ConnectionError):
                await server(mcp.McpContext("s", "r3", "tools/list", None))
        finally:
            await server.aclose()

    run(main())
