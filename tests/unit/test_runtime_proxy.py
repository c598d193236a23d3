"""Proxy chains in the runtime (``_proxy``, ``_conductor``), over the memory
transport: a conductor in front of proxies and an agent of the generated
``acp_v1_unstable`` package, driven by its client (or by a bare hop, to send
``$/cancel_request`` by hand)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import acp_v1_unstable as acp
import pytest
from acp_v1_unstable._transport import MemoryTransport, memory_pair
from acpgen.runtime._conductor import ChainEnded, Conductor
from acpgen.runtime._jsonrpc import RequestError
from acpgen.runtime._proxy import Hop

from tests.patience import HANG


class Recording:
    """A transport that records the messages it sends (JSON values)."""

    def __init__(self, inner: Any, log: list[dict[str, Any]]) -> None:
        self.inner, self.log = inner, log

    async def receive(self) -> bytes | None:
        return await self.inner.receive()

    async def send(self, data: bytes) -> None:
        self.log.append(json.loads(data))
        await self.inner.send(data)

    def is_closing(self) -> bool:
        return bool(self.inner.is_closing())

    async def close(self) -> None:
        await self.inner.close()


class EchoAgent(acp.Agent):
    """Echoes a prompt's text as one message chunk; ``hold`` keeps prompts
    waiting (cancelled prompts end ``cancelled`` by the package's rule)."""

    def __init__(self, conn: acp.AgentSideConnection[EchoAgent]) -> None:
        self.conn = conn
        self.prompts: list[str] = []
        self.initialized: list[acp.InitializeRequest] = []
        self.hold: asyncio.Event | None = None
        self.started = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        self.initialized.append(params)
        return acp.InitializeResponse(
            protocol_version=params.protocol_version,
            agent_info=acp.Implementation(name="echo", version="1"),
        )

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id=acp.SessionId("s1"))

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        text = "".join(b.text for b in params.prompt if isinstance(b, acp.TextContentBlock))
        self.prompts.append(text)
        if self.hold is not None:
            self.started.set()
            try:
                await self.hold.wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        await self.conn.session(params.session_id).message(text)
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)


class Collector(acp.Client):
    def __init__(self, conn: acp.ClientSideConnection[Collector]) -> None:
        self.conn = conn
        self.updates: list[Any] = []

    async def session_update(self, params: acp.SessionNotification) -> None:
        self.updates.append(params.update)

    async def ext_method(self, method: str, params: Any) -> Any:
        return {"asked": method}


class Prefix(acp.Proxy):
    """Prefixes prompt text, adds a _meta note to the capabilities, and tries
    (in vain) to change the protocol version."""

    seen: list[str]

    def __init__(self, connection: Any) -> None:
        super().__init__(connection)
        self.seen = []

    async def on_initialize(self, params: acp.InitializeRequest, result: acp.InitializeResponse) -> Any:
        return dataclasses.replace(result, protocol_version=acp.ProtocolVersion(99), meta={"prefixed": True})

    async def on_client_request(self, method: str, params: Any) -> Any:
        self.seen.append(method)
        if method == "_prefix/hello":
            return {"answeredBy": "prefix"}  # answered here, never forwarded
        if isinstance(params, acp.PromptRequest):
            blocks = [
                dataclasses.replace(b, text="> " + b.text) if isinstance(b, acp.TextContentBlock) else b
                for b in params.prompt
            ]
            params = dataclasses.replace(params, prompt=blocks)
            await self.connection.notify_client(
                "session/update",
                acp.SessionNotification(
                    session_id=params.session_id,
                    update=acp.AgentThoughtChunkSessionUpdate(content=acp.TextContentBlock(text="injected")),
                ),
            )
        return await self.connection.request_successor(method, params)

    async def on_successor_notification(self, method: str, params: Any) -> None:
        update = getattr(params, "update", None)
        text = getattr(getattr(update, "content", None), "text", "")
        if isinstance(update, acp.AgentMessageChunkSessionUpdate) and "drop" in text:
            return  # dropped
        if "ask" in text:
            # A request from a notification hook, answered while the hook waits.
            self.seen.append(str(await self.connection.request_client("_prefix/ask", {})))
        await self.connection.notify_client(method, params)


class Chain:
    """client <-> conductor <-> proxies... <-> agent, in memory; every hop's
    messages recorded as sent (``sent[name]``)."""

    def __init__(
        self, proxies: list[Callable[[Any], acp.Proxy]], tracers: dict[str, Any] | None = None, agent: Any = None
    ) -> None:
        """``tracers``: by "proxy N", "agent" and "client", each one's tracer."""
        self.tracers = tracers or {}
        self.sent: dict[str, list[dict[str, Any]]] = {}
        client_end, conductor_client = memory_pair()
        ends = []
        self.proxies: list[Any] = []
        for n, make in enumerate(proxies):
            conductor_end, proxy_end = memory_pair()
            ends.append(self._recorded(f"to proxy {n}", conductor_end))
            self.proxies.append(
                acp.ProxySideConnection(
                    make, self._recorded(f"from proxy {n}", proxy_end), tracer=self.tracers.get(f"proxy {n}")
                )
            )
        conductor_end, agent_end = memory_pair()
        ends.append(self._recorded("to agent", conductor_end))
        self.agent_transport = agent_end
        self.agent = acp.AgentSideConnection(
            agent or EchoAgent, self._recorded("from agent", agent_end), tracer=self.tracers.get("agent")
        )
        self.conductor = Conductor(self._recorded("to client", conductor_client), ends, grace=HANG)
        self.client_transport = client_end

    def _recorded(self, name: str, transport: Any) -> Any:
        return Recording(transport, self.sent.setdefault(name, []))

    def start(self) -> asyncio.Task[None]:
        for proxy in self.proxies:
            proxy.start()
        self.agent.start()
        return asyncio.get_running_loop().create_task(self.conductor.run())

    def client(self) -> acp.ClientSideConnection[Collector]:
        conn = acp.ClientSideConnection(Collector, self.client_transport, tracer=self.tracers.get("client"))
        conn.start()
        return conn


def run(test: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        await asyncio.wait_for(test(), HANG)

    asyncio.run(bounded())


def test_a_chain_rewrites_the_prompt_and_passes_everything_else_on() -> None:
    async def main() -> None:
        chain = Chain([Prefix, acp.Proxy])
        conductor = chain.start()
        client = chain.client()
        answer = await client.initialize(acp.InitializeRequest(protocol_version=acp.ProtocolVersion(1)))
        # The proxy's capabilities reach the client; the version is the agent's.
        assert answer.protocol_version == 1
        assert answer.meta == {"prefixed": True}
        assert answer.agent_info is not None and answer.agent_info.name == "echo"
        # Each proxy got proxy/initialize and forwarded initialize; the agent got initialize.
        for n in (0, 1):
            assert next(m["method"] for m in chain.sent[f"to proxy {n}"] if "method" in m) == "proxy/initialize"
            wrapped = chain.sent[f"from proxy {n}"][0]
            assert wrapped["method"] == "proxy/successor" and wrapped["params"]["method"] == "initialize"
        agent: EchoAgent = chain.agent.handler
        assert len(agent.initialized) == 1
        session = await client.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="hi")])
        response = await client.prompt(prompt)
        assert response.stop_reason == acp.StopReason.END_TURN
        assert agent.prompts == ["> hi"]
        texts = [(type(u).__name__, u.content.text) for u in client.handler.updates]
        # The injected thought came first, then the agent's echo, before the answer.
        assert texts == [("AgentThoughtChunkSessionUpdate", "injected"), ("AgentMessageChunkSessionUpdate", "> hi")]
        # A notification the hook drops never reaches the client.
        dropping = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="drop")])
        await client.prompt(dropping)
        assert [u.content.text for u in client.handler.updates][-1] == "injected"
        # A notification hook may wait for an answer from the client's side.
        asking = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="ask")])
        await client.prompt(asking)
        assert chain.proxies[0].handler.seen[-1] == "{'asked': '_prefix/ask'}"
        assert [u.content.text for u in client.handler.updates][-1] == "> ask"
        # A request the proxy answers itself never reaches the agent.
        assert await client.request("_prefix/hello", {}) == {"answeredBy": "prefix"}
        assert not any(m.get("method") == "_prefix/hello" for m in chain.sent["to agent"])
        # Unchanged pass-through: the second proxy's envelope holds exactly what the first sent on.
        seen = chain.proxies[0].handler.seen
        assert seen == ["session/new", "session/prompt", "session/prompt", "session/prompt", seen[4], "_prefix/hello"]
        await client.close()
        await asyncio.wait_for(conductor, HANG)

    run(main)


def test_traced_proxies_put_their_spans_between_the_client_and_the_agent() -> None:
    async def main() -> None:
        tracers = {name: acp.RecordingTracer() for name in ("client", "proxy 0", "proxy 1", "agent")}
        chain = Chain([Prefix, acp.Proxy], tracers)
        conductor = chain.start()
        client = chain.client()
        await client.initialize(acp.InitializeRequest(protocol_version=acp.ProtocolVersion(1)))
        session = await client.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="hi")])
        await client.prompt(prompt)

        def span(name: str, kind: str) -> Any:
            return next(s for s in tracers[name].spans if s.method == "session/prompt" and s.kind == kind)

        # A hook's request (the Prefix proxy's) and a pass-through forward (the
        # plain proxy's) each run in a client span under the proxy's server span.
        hops = [
            span("client", "client"),
            span("proxy 0", "server"),
            span("proxy 0", "client"),
            span("proxy 1", "server"),
            span("proxy 1", "client"),
            span("agent", "server"),
        ]
        assert len({s.trace_id for s in hops}) == 1
        assert [s.parent_id for s in hops] == [None, *(s.span_id for s in hops[:-1])]
        assert all(s.error_code is None for s in hops)
        # What the agent read names the second proxy's client span.
        [read] = [m for m in chain.sent["to agent"] if m.get("method") == "session/prompt"]
        assert read["params"]["_meta"]["traceparent"] == hops[4].context.traceparent
        # The thought the Prefix proxy injects carries its server span.
        injected = [
            m
            for m in chain.sent["from proxy 0"]
            if m.get("method") == "session/update"
            and m["params"]["update"].get("sessionUpdate") == "agent_thought_chunk"
        ]
        assert [m["params"]["_meta"]["traceparent"] for m in injected] == [hops[1].context.traceparent]
        # The tracer is told of the wrapped message, not of its envelope.
        notified = {
            m.method for m in tracers["proxy 1"].messages if m.direction == "received" and m.kind == "notification"
        }
        assert "session/update" in notified and "proxy/successor" not in notified
        await client.close()
        await asyncio.wait_for(conductor, HANG)

    run(main)


def test_an_untraced_proxy_forwards_the_trace_keys_as_they_came() -> None:
    async def main() -> None:
        tracers = {name: acp.RecordingTracer() for name in ("client", "agent")}
        chain = Chain([acp.Proxy], tracers)
        conductor = chain.start()
        client = chain.client()
        await client.initialize(acp.InitializeRequest(protocol_version=acp.ProtocolVersion(1)))
        session = await client.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        await client.prompt(acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="x")]))
        sent = next(s for s in tracers["client"].spans if s.method == "session/prompt")
        served = next(s for s in tracers["agent"].spans if s.method == "session/prompt")
        assert served.parent_id == sent.span_id and served.trace_id == sent.trace_id
        await client.close()
        await asyncio.wait_for(conductor, HANG)

    run(main)


class McpAgent(EchoAgent):
    """Calls the ``add`` tool of each MCP server declared to its session
    over ``mcp/message`` and answers with the results."""

    servers: dict[str, str]

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        self.servers = acp.acp_server_ids(params.mcp_servers)
        return await super().new_session(params)

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        for server_id in self.servers:
            seen: list[str] = []
            result = await self.conn.mcp(server_id).call_tool(
                "add", {"a": 2, "b": 3}, on_notification=lambda method, _, seen=seen: seen.append(method)
            )
            text = result["content"][0]["text"]
            await self.conn.session(params.session_id).message(f"{text} after {seen}")
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)


class Tools(acp.Proxy):
    """Provides an MCP server (``calc``) to its successor and declares it in
    the ``session/new`` it forwards."""

    def __init__(self, connection: Any) -> None:
        super().__init__(connection)
        tools = acp.McpTools("calc")

        @tools.tool("add")
        async def add(arguments: dict[str, Any], context: Any) -> str:
            await context.notify("notifications/progress", {"progress": 1})
            return str(arguments["a"] + arguments["b"])

        self.registration = connection.mcp_provider.add("calc", tools)

    async def on_client_request(self, method: str, params: Any) -> Any:
        if isinstance(params, acp.NewSessionRequest):
            declared = self.registration.declaration(acp.AcpMcpServer)
            params = dataclasses.replace(params, mcp_servers=[*params.mcp_servers, declared])
        return await self.connection.request_successor(method, params)


def test_a_proxy_provides_an_mcp_server_its_agent_calls_over_mcp_message() -> None:
    async def main() -> None:
        chain = Chain([Tools, acp.Proxy], agent=McpAgent)
        conductor = chain.start()
        client = chain.client()
        await client.initialize(acp.InitializeRequest(protocol_version=acp.ProtocolVersion(1)))
        session = await client.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        await client.prompt(acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="x")]))
        # The request and the tool's notification, both answered by the proxy.
        assert [u.content.text for u in client.handler.updates] == ["5 after ['notifications/progress']"]
        # Neither reached the client: the proxy answered the agent itself.
        assert not any(m.get("method") == "mcp/message" for m in chain.sent["to client"])
        # The notification went to the successor in an envelope.
        sent = [m["params"] for m in chain.sent["from proxy 0"] if m.get("method") == "proxy/successor"]
        assert any(p["method"] == "mcp/message" and "id" not in p for p in sent)
        await client.close()
        await asyncio.wait_for(conductor, HANG)

    run(main)


def test_a_proxy_refuses_a_plain_initialize() -> None:
    async def main() -> None:
        here, there = memory_pair()
        proxy = acp.ProxySideConnection(acp.Proxy, there)
        proxy.start()
        hop = Hop(here, _no_request, _no_notification)
        hop.start()
        with pytest.raises(RequestError) as raised:
            await hop.request("initialize", {"protocolVersion": 1})
        assert raised.value.code == -32600
        await hop.close()

    run(main)


async def _no_request(method: str, params: Any) -> Any:
    raise RequestError(-32601, "Method not found")


async def _no_notification(method: str, params: Any) -> None:
    return None


def test_a_component_exiting_mid_request_fails_the_request_and_ends_the_chain() -> None:
    async def main() -> None:
        chain = Chain([acp.Proxy])
        conductor = chain.start()
        client = chain.client()
        await client.initialize(acp.InitializeRequest(protocol_version=acp.ProtocolVersion(1)))
        agent: EchoAgent = chain.agent.handler
        agent.hold = asyncio.Event()
        session = await client.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        prompt = asyncio.ensure_future(
            client.prompt(acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="x")]))
        )
        await agent.started.wait()
        await chain.agent_transport.close()  # the agent goes away mid-prompt
        with pytest.raises(acp.RequestError) as raised:
            await prompt
        assert raised.value.code == -32603
        assert "agent" in str(raised.value.data) or "component 1" in str(raised.value.data)
        with pytest.raises(ChainEnded):
            await conductor
        # The client's connection was closed by the conductor: it ends.
        await asyncio.wait_for(client.run(), HANG)
        # ... after an error response of id null told it why.
        told = [m for m in chain.sent["to client"] if "error" in m and m.get("id") is None]
        assert told and "exited" in told[0]["error"]["data"]

    run(main)


def test_cancellation_is_per_hop_and_the_agents_answer_comes_back() -> None:
    async def main() -> None:
        chain = Chain([acp.Proxy, Prefix])
        conductor = chain.start()
        hop = Hop(chain.client_transport, _no_request, _no_notification, name="conductor")
        hop.start()
        await hop.request("initialize", {"protocolVersion": 1})
        session = await hop.request("session/new", {"cwd": "/", "mcpServers": []})
        agent: EchoAgent = chain.agent.handler
        agent.hold = asyncio.Event()
        params = {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "x"}]}
        prompt = asyncio.ensure_future(hop.request("session/prompt", params))
        await agent.started.wait()
        # Cancel the client's request on its hop only, by its own id.
        await hop.notify("$/cancel_request", {"requestId": 2})
        # The agent's own answer to the cancelled prompt comes back unchanged.
        assert await prompt == {"stopReason": "cancelled"}
        assert agent.cancelled.is_set()
        # Each hop cancelled its own request: the $/cancel_request each component
        # got names the id of the session/prompt (or envelope) on that hop.
        for name in ("to proxy 0", "to proxy 1", "to agent"):
            sent = chain.sent[name]
            cancel = [m for m in sent if m.get("method") == "$/cancel_request"]
            assert len(cancel) == 1, name
            cancelled = [m for m in sent if m.get("id") == cancel[0]["params"]["requestId"] and "method" in m]
            assert [m["method"] for m in cancelled] == ["session/prompt"], name
        for name in ("from proxy 0", "from proxy 1"):
            sent = chain.sent[name]
            cancel = [m for m in sent if m.get("method") == "$/cancel_request"]
            assert len(cancel) == 1, name
            envelope = [m for m in sent if m.get("id") == cancel[0]["params"]["requestId"] and "method" in m]
            assert envelope[0]["params"]["method"] == "session/prompt", name
        await hop.close()
        await asyncio.wait_for(conductor, HANG)

    run(main)


def test_a_message_with_a_bad_id_or_a_chain_method_from_the_client_is_refused_and_the_chain_goes_on() -> None:
    async def main() -> None:
        chain = Chain([acp.Proxy])
        conductor = chain.start()
        hop = Hop(chain.client_transport, _no_request, _no_notification, name="conductor")
        hop.start()
        # An id that is a list: answered -32600 with a null id, by the conductor
        # (and the same at the proxy's end, were it to get one).
        await chain.client_transport.send(b'{"jsonrpc": "2.0", "id": [1], "method": "session/new"}')
        await hop.notify("$/cancel_request", {"requestId": {"not": "an id"}})
        assert (await hop.request("initialize", {"protocolVersion": 1}))["protocolVersion"] == 1
        refused = [m for m in chain.sent["to client"] if "error" in m]
        assert refused == [{"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid request"}}]
        # The chain's own methods are not the client's to send.
        for method in ("proxy/successor", "proxy/initialize"):
            with pytest.raises(RequestError) as raised:
                await hop.request(method, {"method": "session/new", "params": {"cwd": "/", "mcpServers": []}})
            assert raised.value.code == -32601
        assert not any(m.get("method") == "session/new" for m in chain.sent["from proxy 0"])
        await hop.close()
        await asyncio.wait_for(conductor, HANG)

    run(main)


def test_a_chain_of_the_agent_alone_gets_initialize_and_passes_everything() -> None:
    async def main() -> None:
        chain = Chain([])
        conductor = chain.start()
        client = chain.client()
        answer = await client.initialize(acp.InitializeRequest(protocol_version=acp.ProtocolVersion(1)))
        assert answer.agent_info is not None and answer.agent_info.name == "echo"
        assert next(m["method"] for m in chain.sent["to agent"]) == "initialize"
        session = await client.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        prompt = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="hi")])
        assert (await client.prompt(prompt)).stop_reason == acp.StopReason.END_TURN
        assert [u.content.text for u in client.handler.updates] == ["hi"]
        await client.close()
        await asyncio.wait_for(conductor, HANG)

    run(main)


# ------------------------------------------------------------------ a conductor scripted by the test


async def _send(transport: MemoryTransport, message: Any) -> None:
    await transport.send(message if isinstance(message, bytes) else json.dumps(message).encode())


async def _receive(transport: MemoryTransport) -> dict[str, Any]:
    data = await transport.receive()
    assert data is not None, "the connection closed"
    return json.loads(data)


@contextlib.asynccontextmanager
async def scripted_chain(count: int) -> AsyncIterator[tuple[Conductor, MemoryTransport, list[MemoryTransport]]]:
    """A conductor between a client end and ``count`` component ends, all written and read by the test."""
    client, conductor_end = memory_pair()
    ours: list[MemoryTransport] = []
    theirs: list[MemoryTransport] = []
    for _ in range(count):
        a, b = memory_pair()
        theirs.append(a)
        ours.append(b)
    conductor = Conductor(conductor_end, theirs, [f"component {i}" for i in range(count)])
    task = asyncio.get_running_loop().create_task(conductor.run())
    try:
        yield conductor, client, ours
    finally:
        for hop in (conductor.client, *conductor.components):
            await hop.close()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def yield_until(flood: Awaitable[None], turns: int = 100000) -> None:
    """Run ``flood`` (a peer writing) for at most ``turns`` turns of the loop:
    it ends early only when the other end reads everything it sends."""
    task = asyncio.ensure_future(flood)
    for _ in range(turns):
        if task.done():
            break
        await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def test_a_request_whose_method_is_no_string_is_refused_with_its_id() -> None:
    async def main() -> None:
        async with scripted_chain(1) as (_conductor, client, (agent,)):
            # Pending: the conductor's request 0 to the agent, which a
            # "request" of id 0 must not answer.
            await _send(client, {"jsonrpc": "2.0", "id": 1, "method": "_first"})
            forwarded = await _receive(agent)
            await _send(agent, {"jsonrpc": "2.0", "id": forwarded["id"], "method": None})
            assert await _receive(agent) == {
                "jsonrpc": "2.0",
                "id": forwarded["id"],
                "error": {"code": -32600, "message": "Invalid request"},
            }
            await _send(client, {"jsonrpc": "2.0", "id": 3, "method": 5})
            assert (await _receive(client)) == {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {"code": -32600, "message": "Invalid request"},
            }
            await _send(agent, {"jsonrpc": "2.0", "id": forwarded["id"], "result": {"ok": 1}})
            assert await _receive(client) == {"jsonrpc": "2.0", "id": 1, "result": {"ok": 1}}

    run(main)


def test_an_id_json_cannot_write_or_a_message_without_jsonrpc_2_is_refused_and_not_executed() -> None:
    async def main() -> None:
        async with scripted_chain(1) as (_conductor, client, (agent,)):
            invalid = {"code": -32600, "message": "Invalid request"}
            await _send(client, b'{"jsonrpc":"2.0","id":NaN,"method":"_x"}')
            assert await _receive(client) == {"jsonrpc": "2.0", "id": None, "error": invalid}
            await _send(client, b'{"jsonrpc":"2.0","id":Infinity,"method":"_x"}')
            assert await _receive(client) == {"jsonrpc": "2.0", "id": None, "error": invalid}
            await _send(client, {"id": 7, "method": "_x"})
            assert await _receive(client) == {"jsonrpc": "2.0", "id": 7, "error": invalid}
            await _send(client, {"jsonrpc": "1.0", "id": 8, "method": "_x"})
            assert await _receive(client) == {"jsonrpc": "2.0", "id": 8, "error": invalid}
            # An answer without "jsonrpc": "2.0" fails the request it names.
            await _send(client, {"jsonrpc": "2.0", "id": 4, "method": "_barrier"})
            forwarded = await _receive(agent)
            assert forwarded["method"] == "_barrier"  # nothing refused reached the agent
            await _send(agent, {"id": forwarded["id"], "result": {}})
            answer = await _receive(client)
            assert answer["id"] == 4 and answer["error"]["code"] == -32600

    run(main)


def test_the_agent_cannot_send_proxy_successor_nor_a_component_proxy_initialize() -> None:
    async def main() -> None:
        async with scripted_chain(2) as (_conductor, client, (proxy, agent)):
            # Were it routed, the agent's proxy/successor would go through the
            # proxy before it and come back to the agent itself, unwrapped.
            inner = {"method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}
            await _send(agent, {"jsonrpc": "2.0", "method": "proxy/successor", "params": inner})
            await _send(agent, {"jsonrpc": "2.0", "id": 5, "method": "proxy/successor", "params": inner})
            answer = await _receive(agent)
            assert answer["id"] == 5 and answer["error"]["code"] == -32601, answer
            await _send(proxy, {"jsonrpc": "2.0", "method": "proxy/initialize", "params": {}})
            await _send(proxy, {"jsonrpc": "2.0", "id": 6, "method": "proxy/initialize", "params": {}})
            answer = await _receive(proxy)
            assert answer["id"] == 6 and answer["error"]["code"] == -32601, answer
            # Nothing reached the proxy, the agent or the client: the next
            # thing each gets is what follows.
            await _send(agent, {"jsonrpc": "2.0", "method": "_after"})
            assert await _receive(proxy) == {
                "jsonrpc": "2.0",
                "method": "proxy/successor",
                "params": {"method": "_after"},
            }
            await _send(proxy, {"jsonrpc": "2.0", "method": "_after"})
            assert await _receive(client) == {"jsonrpc": "2.0", "method": "_after"}

    run(main)


def test_a_single_component_cannot_send_the_chain_methods_to_the_client() -> None:
    async def main() -> None:
        async with scripted_chain(1) as (_conductor, client, (agent,)):
            for id, method in enumerate(("proxy/successor", "proxy/initialize")):
                await _send(agent, {"jsonrpc": "2.0", "method": method, "params": {"method": "_x"}})
                await _send(agent, {"jsonrpc": "2.0", "id": id, "method": method, "params": {"method": "_x"}})
                answer = await _receive(agent)
                assert answer["id"] == id and answer["error"]["code"] == -32601, answer
            await _send(agent, {"jsonrpc": "2.0", "method": "_after"})
            assert await _receive(client) == {"jsonrpc": "2.0", "method": "_after"}

    run(main)


def test_a_proxy_refuses_an_mcp_message_whose_server_id_is_no_string() -> None:
    async def main() -> None:
        conductor, proxy_end = memory_pair()
        proxy = acp.ProxySideConnection(acp.Proxy, proxy_end)
        proxy.mcp_provider.add("t", acp.McpTools("t", "1"))
        proxy.start()
        for id, server in enumerate((["x"], {"a": 1}, 5)):
            params = {"serverId": server, "requestId": "r", "method": "tools/list"}
            envelope = {"method": "mcp/message", "params": params}
            await _send(conductor, {"jsonrpc": "2.0", "id": id, "method": "proxy/successor", "params": envelope})
            answer = await _receive(conductor)
            assert answer["id"] == id and answer["error"]["code"] == -32602, answer
        await proxy.close()

    run(main)


def test_a_request_cancelled_while_the_peer_does_not_read_ends_at_once_and_close_leaves_no_unretrieved_error() -> None:
    async def main() -> None:
        problems: list[str] = []
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: problems.append(context["message"]))
        ours, theirs = memory_pair(max_queued=1)  # the test does not read `theirs`
        started = asyncio.Event()

        async def wait_forever(method: str, params: Any) -> Any:
            started.set()
            await asyncio.Event().wait()

        hop = Hop(ours, wait_forever, _no_notification, name="peer")
        hop.start()
        await _send(theirs, {"jsonrpc": "2.0", "id": 1, "method": "_wait"})
        await started.wait()
        task = hop._answering[1][0].task
        assert task is not None
        await hop.notify("_fill")  # the one message the peer's queue holds
        blocked = asyncio.ensure_future(hop.request("_blocked"))  # its write waits
        while not hop._write_lock.locked():
            await asyncio.sleep(0)
        await _send(theirs, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}})
        for _ in range(1000):
            if task.done():
                break
            await asyncio.sleep(0)
        assert task.done()  # its -32800 waits to be written, the task does not
        await hop.close()
        # The request whose write waits (a memory transport's send waits on
        # after close) is cancelled by its owner: its error, set by close, is
        # not left unretrieved.
        blocked.cancel()
        await asyncio.gather(blocked, return_exceptions=True)
        del blocked
        gc.collect()
        assert not problems, problems

    run(main)


def test_a_flood_of_cancel_requests_sends_one_cancel_and_holds_no_task() -> None:
    async def main() -> None:
        async with scripted_chain(1) as (conductor, client, (agent,)):
            await _send(client, {"jsonrpc": "2.0", "id": 1, "method": "_x", "params": {}})
            forwarded = await _receive(agent)
            cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}}
            unknown = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 99}}

            async def flood() -> None:
                for i in range(5000):
                    await _send(client, unknown if i % 2 else cancel)

            await yield_until(flood())  # the agent does not read meanwhile
            assert len(conductor.components[0]._tasks) <= 1
            assert len(conductor.client._tasks) <= 1
            assert await _receive(agent) == {
                "jsonrpc": "2.0",
                "method": "$/cancel_request",
                "params": {"requestId": forwarded["id"]},
            }
            await _send(agent, {"jsonrpc": "2.0", "id": forwarded["id"], "result": {"done": True}})
            assert await _receive(client) == {"jsonrpc": "2.0", "id": 1, "result": {"done": True}}
            await _send(agent, {"jsonrpc": "2.0", "method": "_after"})
            # One cancel only: what comes next is the notification.
            await _send(client, {"jsonrpc": "2.0", "method": "_next"})
            assert await _receive(agent) == {"jsonrpc": "2.0", "method": "_next"}

    run(main)


def test_the_conductor_holds_a_bounded_number_of_client_requests() -> None:
    async def main() -> None:
        async with scripted_chain(1) as (conductor, client, _agent):

            async def flood() -> None:  # the agent does not read meanwhile
                for i in range(3000):
                    await _send(client, {"jsonrpc": "2.0", "id": i, "method": "_x", "params": {"pad": "x" * 100}})

            await yield_until(flood())
            hop = conductor.client
            taken = sum(len(works) for works in hop._answering.values())
            assert taken <= 1024 + 256  # max_queued + max_running
            assert hop._running <= 256 and len(hop._tasks) <= 256 + 1

    run(main)


async def _held(method: str, params: Any) -> None:
    await asyncio.Event().wait()


def test_a_hops_inbox_is_bounded_by_bytes_too() -> None:
    async def main() -> None:
        ours, theirs = memory_pair()
        hop = Hop(ours, _no_request, _held, name="peer", max_buffered=10_000)
        hop.start()
        note = json.dumps({"jsonrpc": "2.0", "method": "_note", "params": {"pad": "x" * 1000}}).encode()

        async def flood() -> None:
            for _ in range(2000):
                await theirs.send(note)

        await yield_until(flood())
        assert hop._inbox.qsize() <= 10_000 // len(note) + 1
        assert hop._queued_bytes < 10_000 + len(note)
        await hop.close()

    run(main)


def test_a_hops_inbox_stays_bounded_while_a_notification_handler_waits_for_an_answer() -> None:
    async def main() -> None:
        ours, theirs = memory_pair()

        async def ask(method: str, params: Any) -> None:
            await hop.request("_ask")  # never answered

        hop = Hop(ours, _no_request, ask, name="peer", max_queued=8)
        hop.start()
        note = json.dumps({"jsonrpc": "2.0", "method": "_note"}).encode()

        async def flood() -> None:
            for _ in range(5000):
                await theirs.send(note)

        await yield_until(flood())
        assert hop._awaiting == 1
        # Reading goes on while the handler waits (its answer may be behind
        # those notifications), up to a larger bound.
        assert 8 < hop._inbox.qsize() <= 8 * Hop.AWAITING_FACTOR
        await hop.close()

    run(main)
