"""W3C trace context across a connection of each of the four packages, in
memory (``tracer=``): one trace from a prompt through its
``session/update`` notifications, a request the agent sends while handling
it, and the answers; the ids as they went over the wire."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from typing import Any

import pytest

from ..conftest import ROOT, load_generated
from ..patience import HANG

PACKAGES = ("acp_v1", "acp_v1_unstable", "acp_v2", "acp_v2_unstable")

OWN_TRACE = "0af7651916cd43dd8448eb211c80319c"
OWN_PARENT = "b7ad6b7169203331"


def _peer_agent():
    spec = importlib.util.spec_from_file_location("trace_echo_agent", ROOT / "tests/interop/peers/acpgen_echo_agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PEER = _peer_agent()


class Wire:
    """A transport wrapper keeping every message sent, as JSON."""

    def __init__(self, inner: Any, sent: list[dict]) -> None:
        self.inner, self.sent = inner, sent

    def keep(self, data: Any) -> None:
        self.sent.append(json.loads(data if isinstance(data, bytes) else data.data))

    async def send(self, data: Any) -> None:
        self.keep(data)
        await self.inner.send(data)

    def send_nowait(self, data: Any) -> bool:
        taken = self.inner.send_nowait(data)
        if taken:
            self.keep(data)
        return taken

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def traced_agent(acp):
    base = PEER.EchoAgentV1 if acp.PROTOCOL_VERSION == 1 else PEER.EchoAgentV2

    class Agent(base):
        """The peers' echo agent, asking the client something first."""

        def __init__(self, conn) -> None:
            super().__init__(acp, conn, 0)
            self.seen: list[Any] = []

        async def prompt(self, params):
            self.seen.append((params.meta, acp.current_trace()))
            await self.conn.request("_trace/probe", {"sessionId": params.session_id})
            return await super().prompt(params)

    return Agent


def recording_client(acp):
    class Client(acp.Client):
        def __init__(self, conn) -> None:
            self.conn = conn
            self.updates: list[Any] = []
            self.probes: list[Any] = []
            self.idle = asyncio.Event()

        async def session_update(self, params) -> None:
            self.updates.append((params.meta, acp.current_trace()))
            state = getattr(params.update, "value", None)
            if isinstance(state, getattr(acp, "StateUpdateIdle", ())):
                self.idle.set()

        async def ext_method(self, method: str, params: Any) -> Any:
            self.probes.append((params, acp.current_trace()))
            return {}

    return Client


async def _session(acp, client, tmp_path) -> str:
    if acp.PROTOCOL_VERSION == 1:
        await client.initialize(acp.InitializeRequest(protocol_version=1))
        new = acp.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])
    else:
        info = acp.Implementation(name="test", version="1")
        await client.initialize(acp.InitializeRequest(protocol_version=2, info=info))
        new = acp.NewSessionRequest(cwd=str(tmp_path))
    return (await client.new_session(new)).session_id


def _turn_done(acp, client) -> Any:
    """What to wait for once ``prompt`` has returned: a v2 turn ends with
    its idle state update."""
    if acp.PROTOCOL_VERSION == 1:
        return asyncio.sleep(0)
    return client.handler.idle.wait()


class Side:
    def __init__(self, spans: list[Any], messages: list[Any]) -> None:
        self.spans, self.messages = spans, messages


def side_of(tracer: Any, side: str) -> Side:
    """What ``tracer`` was told by the end of ``side``."""
    return Side([s for s in tracer.spans if s.side == side], [m for m in tracer.messages if m.side == side])


def _parent_of(traceparent: str) -> tuple[str, str]:
    _, trace_id, parent_id, _ = traceparent.split("-")
    return trace_id, parent_id


@pytest.mark.parametrize("package", PACKAGES)
def test_one_trace_from_the_prompt_through_its_updates_and_requests(package, tmp_path):
    acp = load_generated(package)
    tracer = acp.RecordingTracer()  # both ends': told apart by their side
    agent_sent: list[dict] = []
    client_sent: list[dict] = []

    async def main():
        agent, client = acp.connect_in_memory(
            traced_agent(acp),
            recording_client(acp),
            validate_outgoing=True,
            tracer=tracer,
        )
        agent.transport = Wire(agent.transport, agent_sent)
        client.transport = Wire(client.transport, client_sent)
        session_id = await _session(acp, client, tmp_path)
        prompt = acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text="one two three")])
        client.handler.idle.clear()
        await client.prompt(prompt)
        await _turn_done(acp, client)
        await client.close()
        await agent.close()
        return agent.handler, client.handler

    agent_handler, client_handler = asyncio.run(asyncio.wait_for(main(), HANG))
    client_tracer = side_of(tracer, "client")
    agent_tracer = side_of(tracer, "agent")

    [prompt_span] = [s for s in client_tracer.spans if s.method == "session/prompt"]
    [served] = [s for s in agent_tracer.spans if s.method == "session/prompt"]
    trace_id = prompt_span.trace_id
    # On the wire: the prompt names the client's span.
    [prompt_line] = [m for m in client_sent if m.get("method") == "session/prompt"]
    assert prompt_line["params"]["_meta"]["traceparent"] == f"00-{trace_id}-{prompt_span.span_id}-01"
    # The agent continues it: its span is the client span's child, and its
    # handler runs in it.
    assert (prompt_span.kind, prompt_span.parent_id) == ("client", None)
    assert (served.kind, served.trace_id, served.parent_id) == ("server", trace_id, prompt_span.span_id)
    [(meta, inside)] = agent_handler.seen
    assert meta["traceparent"] == prompt_line["params"]["_meta"]["traceparent"]
    assert inside.trace_id == trace_id and inside.span_id == served.span_id
    # Every session/update of the turn carries the agent's span (v2: also
    # those sent after the prompt was answered, from the turn's task).
    updates = [m for m in agent_sent if m.get("method") == "session/update"]
    assert updates and {_parent_of(m["params"]["_meta"]["traceparent"]) for m in updates} == {
        (trace_id, served.span_id)
    }
    assert [context.span_id for _, context in client_handler.updates] == [served.span_id] * len(updates)
    # The request the agent sent while handling the prompt: a client span of
    # the agent's, child of its prompt span; the client serves it in a span
    # of that trace.
    [probe] = [s for s in agent_tracer.spans if s.method == "_trace/probe"]
    [probe_served] = [s for s in client_tracer.spans if s.method == "_trace/probe"]
    assert (probe.kind, probe.trace_id, probe.parent_id) == ("client", trace_id, served.span_id)
    assert (probe_served.trace_id, probe_served.parent_id) == (trace_id, probe.span_id)
    [(probe_params, probe_context)] = client_handler.probes
    assert probe_params["_meta"]["traceparent"] == f"00-{trace_id}-{probe.span_id}-01"
    assert probe_context.span_id == probe_served.span_id
    # The response: the client span ends with it, without an error.
    assert prompt_span.error_code is None and prompt_span.end is not None
    [answer] = [m for m in agent_sent if m.get("id") == prompt_line["id"] and "result" in m]
    assert "_meta" not in answer["result"] or "traceparent" not in answer["result"]["_meta"]
    # Each request before the prompt started a trace of its own.
    others = {s.trace_id for s in client_tracer.spans if s.method in ("initialize", "session/new")}
    assert len(others) == 2 and trace_id not in others
    # The messages the tracers were told of are those on the wire.
    sent = [m for m in client_tracer.messages if m.direction == "sent"]
    assert [m.method for m in sent] == [m["method"] for m in client_sent if "method" in m]
    received = [m for m in agent_tracer.messages if m.direction == "received"]
    assert [m.method for m in received] == [m.method for m in sent]


@pytest.mark.parametrize("package", ["acp_v1", "acp_v2"])
def test_meta_the_client_sets_is_kept(package, tmp_path):
    acp = load_generated(package)
    tracer = acp.RecordingTracer()
    own = f"00-{OWN_TRACE}-{OWN_PARENT}-01"

    async def main():
        agent, client = acp.connect_in_memory(traced_agent(acp), recording_client(acp), tracer=tracer)
        session_id = await _session(acp, client, tmp_path)
        for meta in ({"custom": {"k": 1}}, {"traceparent": own, "custom": "x", "baggage": "user=alice"}):
            prompt = acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text="hi")], meta=meta)
            client.handler.idle.clear()
            await client.prompt(prompt)
            await _turn_done(acp, client)
        await client.close()
        await agent.close()
        return agent.handler, client.handler

    agent_handler, client_handler = asyncio.run(asyncio.wait_for(main(), HANG))
    (first, _), (second, inside) = agent_handler.seen
    # Merged into the caller's _meta, which is otherwise as it was.
    assert first["custom"] == {"k": 1} and first["traceparent"].startswith("00-")
    # A traceparent of the caller's own goes out as it is, and the agent
    # continues that trace; the baggage goes on too.
    assert second == {"traceparent": own, "custom": "x", "baggage": "user=alice"}
    served = [s for s in side_of(tracer, "agent").spans if s.method == "session/prompt"][-1]
    assert (served.trace_id, served.parent_id) == (OWN_TRACE, OWN_PARENT)
    assert inside.baggage_items == {"user": "alice"}
    last = client_handler.updates[-1][0]
    assert last["traceparent"] == f"00-{OWN_TRACE}-{served.span_id}-01" and last["baggage"] == "user=alice"


def test_an_invalid_traceparent_starts_a_new_trace_never_an_error(tmp_path):
    acp = load_generated("acp_v1")
    tracer = acp.RecordingTracer()

    async def main():
        agent, client = acp.connect_in_memory(traced_agent(acp), recording_client(acp), tracer=tracer)
        session_id = await _session(acp, client, tmp_path)
        bad = "00-" + "0" * 32 + "-" + OWN_PARENT + "-01"
        prompt = acp.PromptRequest(
            session_id=session_id, prompt=[acp.TextContentBlock(text="hi")], meta={"traceparent": bad}
        )
        response = await client.prompt(prompt)
        await client.close()
        await agent.close()
        return response

    assert asyncio.run(asyncio.wait_for(main(), HANG)).stop_reason == acp.StopReason.END_TURN
    served = [s for s in side_of(tracer, "agent").spans if s.method == "session/prompt"][-1]
    assert served.parent_id is None and served.trace_id != "0" * 32 and served.error_code is None


def test_a_connection_without_a_tracer_sends_no_trace_context(tmp_path):
    acp = load_generated("acp_v1")
    sent: list[dict] = []

    async def main():
        agent, client = acp.connect_in_memory(traced_agent(acp), recording_client(acp))
        client.transport = Wire(client.transport, sent)
        session_id = await _session(acp, client, tmp_path)
        await client.prompt(acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text="hi")]))
        await client.close()
        await agent.close()
        return client.handler

    handler = asyncio.run(asyncio.wait_for(main(), HANG))
    assert all("_meta" not in (m.get("params") or {}) for m in sent)
    assert all(context is None for _, context in handler.updates)


def test_opentelemetry_spans_of_both_ends_make_one_trace(tmp_path):
    pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is in the test extras: make install")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    acp = load_generated("acp_v1")
    exporter = InMemorySpanExporter()
    provider = TracerProvider(id_generator=acp.AcpIdGenerator())
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    async def main():
        agent, client = acp.connect_in_memory(
            traced_agent(acp), recording_client(acp), tracer=acp.OpenTelemetryTracer(provider)
        )
        session_id = await _session(acp, client, tmp_path)
        await client.prompt(acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text="a b")]))
        await client.close()
        await agent.close()

    asyncio.run(asyncio.wait_for(main(), HANG))
    spans = {(s.name, s.attributes["acp.side"]): s for s in exporter.get_finished_spans()}
    sent, served = spans[("session/prompt", "client")], spans[("session/prompt", "agent")]
    probe, probed = spans[("_trace/probe", "agent")], spans[("_trace/probe", "client")]
    assert served.parent.span_id == sent.context.span_id
    assert probe.parent.span_id == served.context.span_id and probed.parent.span_id == probe.context.span_id
    assert len({s.context.trace_id for s in (sent, served, probe, probed)}) == 1
    assert sent.parent is None


@pytest.mark.parametrize("forward", ["in the handler", "from a queue"])
def test_a_proxy_continues_the_trace_on_what_it_forwards(forward, tmp_path):
    """client -> proxy -> agent, all traced: the proxy forwards the prompt
    (its trace keys dropped, so that its own span shows) from its handler,
    or from a worker task outside it that got the context with the prompt;
    the updates come back through it carrying the agent's span."""
    acp = load_generated("acp_v1")
    tracer = acp.RecordingTracer()
    ends: dict[str, Any] = {}  # the proxy's two ends: "up" (to the client), "down" (to the agent)

    class ProxyClient(acp.Client):
        def __init__(self, conn) -> None:
            self.conn = conn

        async def session_update(self, params) -> None:
            await ends["up"].session_update(params)  # as it came: its traceparent goes on

    class ProxyAgent(acp.Agent):
        def __init__(self, conn) -> None:
            ends["up"] = conn

        async def initialize(self, params):
            return await ends["down"].initialize(params)

        async def new_session(self, params):
            return await ends["down"].new_session(params)

        async def prompt(self, params):
            if forward == "in the handler":
                return await ends["down"].prompt(acp.without_trace(params))
            answer = asyncio.get_running_loop().create_future()
            await ends["queue"].put((acp.current_trace(), params, answer))
            return await answer

    async def worker() -> None:
        while True:
            context, params, answer = await ends["queue"].get()
            with acp.use_trace(context):
                try:
                    answer.set_result(await ends["down"].prompt(acp.without_trace(params)))
                except Exception as error:
                    answer.set_exception(error)

    async def main():
        ends["queue"] = asyncio.Queue()
        echo = lambda conn: PEER.EchoAgentV1(acp, conn, 0)  # noqa: E731
        agent, ends["down"] = acp.connect_in_memory(echo, ProxyClient, tracer=tracer)
        running = asyncio.get_running_loop().create_task(worker())  # outside any handler
        proxy, client = acp.connect_in_memory(ProxyAgent, recording_client(acp), tracer=tracer)
        session_id = await _session(acp, client, tmp_path)
        await client.prompt(acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text="a b")]))
        running.cancel()
        for conn in (client, proxy, ends["down"], agent):
            await conn.close()
        return client.handler

    handler = asyncio.run(asyncio.wait_for(main(), HANG))
    prompts = [s for s in tracer.spans if s.method == "session/prompt"]
    assert len(prompts) == 4
    [sent] = [s for s in prompts if s.parent_id is None]  # the client's
    [into_proxy] = [s for s in prompts if s.kind == "server" and s.parent_id == sent.span_id]
    [out_of_proxy] = [s for s in prompts if s.kind == "client" and s.parent_id == into_proxy.span_id]
    [served] = [s for s in prompts if s.kind == "server" and s.parent_id == out_of_proxy.span_id]
    assert len({s.trace_id for s in prompts}) == 1
    assert handler.updates and {context.span_id for _, context in handler.updates} == {served.span_id}
