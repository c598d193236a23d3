"""Capability checks at the sender (``_capabilities`` and the connection's
use of it), with a tiny method table and a codec that keeps JSON as it is:
what counts as advertised, a gated call refused before anything is sent on
both sides, and a capability advertised without its handler."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

import pytest
from acpgen.runtime import _capabilities as capabilities
from acpgen.runtime import _connection as connection
from acpgen.runtime import _jsonrpc as rpc
from acpgen.runtime import _transport as transport

from ..patience import HANG

TIMEOUT = HANG


def _decode(name: str, value: Any, strict: bool = False) -> Any:
    return value


def _encode(value: Any, validate: bool = False) -> Any:
    return value


def _request(side: rpc.Side, name: str, handler: str) -> rpc.MethodInfo:
    return rpc.MethodInfo(name, request=rpc.RequestInfo(side, dict, dict, handler, "P", "R"))


METHODS = {
    info.name: info
    for info in (
        _request("agent", "initialize", "initialize"),
        _request("agent", "session/load", "load_session"),
        _request("client", "fs/read", "read"),
        rpc.MethodInfo("bell", notification=rpc.NotificationInfo("client", dict, "bell", "P")),
    )
}
REQUIRES = {
    "session/load": ("agentCapabilities", "loadSession"),
    "fs/read": ("clientCapabilities", "fs", "read"),
    "bell": ("clientCapabilities", "bell"),
}
CODEC = rpc.MessageCodec(METHODS, _decode, _encode, null_request_id=False)


class AgentInterface:
    async def initialize(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("initialize")

    async def load_session(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("session/load")


class ClientInterface:
    async def read(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("fs/read")

    async def bell(self, params: Any) -> None:
        pass


class AgentEnd(connection.Connection[Any]):
    side = "agent"
    codec = CODEC
    interface = AgentInterface
    requires = REQUIRES


class ClientEnd(connection.Connection[Any]):
    side = "client"
    codec = CODEC
    interface = ClientInterface
    requires = REQUIRES


class Agent(AgentInterface):
    """Answers ``initialize`` with ``advertise`` as its capabilities."""

    advertise: ClassVar[dict[str, Any]] = {}

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.loaded: list[Any] = []

    async def initialize(self, params: Any) -> Any:
        return {"protocolVersion": 1, "agentCapabilities": self.advertise}


class LoadingAgent(Agent):
    async def load_session(self, params: Any) -> Any:
        self.loaded.append(params)
        return {}


class Client(ClientInterface):
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.reads: list[Any] = []
        self.bells: list[Any] = []

    async def read(self, params: Any) -> Any:
        self.reads.append(params)
        return {"content": "text"}

    async def bell(self, params: Any) -> None:
        self.bells.append(params)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


async def pair(agent: Any = Agent, client: Any = Client, **options: Any) -> tuple[AgentEnd, ClientEnd]:
    agent_end, client_end = transport.memory_pair()
    agent_conn, client_conn = AgentEnd(agent, agent_end, **options), ClientEnd(client, client_end, **options)
    agent_conn.start()
    client_conn.start()
    return agent_conn, client_conn


async def close(*conns: connection.Connection[Any]) -> None:
    for conn in conns:
        await conn.close()


# ---------------------------------------------------------------- what counts


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        ({}, True),
        ({"x": 1}, True),
        ([{"id": "a"}], True),
        (False, False),
        (None, False),
        ([], False),
        ("yes", False),
        (1, False),
    ],
)
def test_a_capability_is_advertised_by_true_an_object_or_a_non_empty_list(value: Any, expected: bool) -> None:
    assert capabilities.advertised({"caps": {"it": value}}, ("caps", "it")) is expected


def test_a_capability_under_a_missing_or_non_object_parent_is_not_advertised() -> None:
    assert not capabilities.advertised({}, ("caps", "it"))
    assert not capabilities.advertised({"caps": None}, ("caps", "it"))
    assert not capabilities.advertised({"caps": [1]}, ("caps", "it"))
    assert not capabilities.advertised(None, ("caps",))


def test_nothing_is_checked_before_the_peer_advertised() -> None:
    gates = capabilities.Capabilities(REQUIRES, METHODS, "agent")
    gates.check("fs/read")  # no initialize seen yet: the peer refuses on its own
    gates.observe({"clientCapabilities": {"fs": {"read": False}}})
    with pytest.raises(capabilities.CapabilityError) as caught:
        gates.check("fs/read")
    assert (caught.value.method, caught.value.capability) == ("fs/read", "clientCapabilities.fs.read")
    assert "fs/read needs clientCapabilities.fs.read" in str(caught.value)
    assert "the client's initialize request did not advertise" in str(caught.value)
    gates.check("initialize")  # not gated
    gates.check("session/load")  # handled by this side: never checked as a call


# ---------------------------------------------------------------- the agent side


def test_an_agent_calling_what_the_client_did_not_advertise_raises_before_sending() -> None:
    async def main() -> None:
        agent, client = await pair()
        await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": {"read": False}}})
        with pytest.raises(capabilities.CapabilityError, match=r"fs/read needs clientCapabilities\.fs\.read"):
            await agent.request("fs/read", {"path": "/x"})
        with pytest.raises(capabilities.CapabilityError, match=r"bell needs clientCapabilities\.bell"):
            await agent.notify("bell", {})
        await asyncio.sleep(0.01)
        assert client.handler.reads == [] and client.handler.bells == []  # nothing was sent
        await close(agent, client)

    run(main())


def test_an_agent_calls_what_the_client_advertised() -> None:
    async def main() -> None:
        agent, client = await pair()
        caps = {"fs": {"read": True}, "bell": {}}
        await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": caps})
        assert await agent.request("fs/read", {"path": "/x"}) == {"content": "text"}
        await agent.notify("bell", {"n": 1})
        await asyncio.sleep(0.01)
        assert client.handler.reads == [{"path": "/x"}] and client.handler.bells == [{"n": 1}]
        await close(agent, client)

    run(main())


def test_the_agent_opts_out_of_the_capability_checks() -> None:
    async def main() -> None:
        agent, client = await pair(check_capabilities=False)
        await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert await agent.request("fs/read", {"path": "/x"}) == {"content": "text"}
        await close(agent, client)

    run(main())


def test_an_agent_advertising_what_it_does_not_handle_answers_initialize_with_the_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Boasting(Agent):
        advertise: ClassVar[dict[str, Any]] = {"loadSession": True}

    async def main() -> None:
        agent, client = await pair(Boasting)
        with pytest.raises(rpc.RequestError) as caught:
            await client.request("initialize", {"protocolVersion": 1})
        assert caught.value.code == rpc.INTERNAL_ERROR
        assert "agentCapabilities.loadSession (session/load: load_session)" in str(caught.value.data)
        await close(agent, client)

    with caplog.at_level(logging.ERROR):
        run(main())
    assert any(r.exc_info and isinstance(r.exc_info[1], connection.HandlerError) for r in caplog.records), (
        "the agent's log shows the HandlerError"
    )


def test_an_agent_advertising_what_it_handles_or_opting_out_answers_initialize() -> None:
    class Loading(LoadingAgent):
        advertise: ClassVar[dict[str, Any]] = {"loadSession": True}

    class Boasting(Agent):
        advertise: ClassVar[dict[str, Any]] = {"loadSession": True}

    async def main() -> None:
        agent, client = await pair(Loading)
        assert (await client.request("initialize", {"protocolVersion": 1}))["agentCapabilities"] == {
            "loadSession": True
        }
        await client.request("session/load", {"sessionId": "s1"})
        assert agent.handler.loaded == [{"sessionId": "s1"}]
        await close(agent, client)
        agent, client = await pair(Boasting, check_capabilities=False)
        assert (await client.request("initialize", {"protocolVersion": 1}))["protocolVersion"] == 1
        await close(agent, client)

    run(main())


# ---------------------------------------------------------------- the client side


def test_a_client_calling_what_the_agent_did_not_advertise_raises_before_sending() -> None:
    async def main() -> None:
        agent, client = await pair(LoadingAgent)
        await client.request("initialize", {"protocolVersion": 1})
        with pytest.raises(capabilities.CapabilityError) as caught:
            await client.request("session/load", {"sessionId": "s1"})
        assert caught.value.capability == "agentCapabilities.loadSession"
        assert "the agent's initialize response did not advertise" in str(caught.value)
        await asyncio.sleep(0.01)
        assert agent.handler.loaded == []
        await close(agent, client)

    run(main())


def test_a_client_advertising_what_it_does_not_handle_is_refused_before_initialize_is_sent() -> None:
    class Partial(ClientInterface):
        def __init__(self, conn: Any) -> None:
            self.conn = conn

    class Seen(Agent):
        def __init__(self, conn: Any) -> None:
            super().__init__(conn)
            self.initialized = False

        async def initialize(self, params: Any) -> Any:
            self.initialized = True
            return await super().initialize(params)

    async def main() -> None:
        agent, client = await pair(Seen, Partial)
        with pytest.raises(connection.HandlerError) as caught:
            await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": {"read": True}}})
        assert "Partial advertises what it does not handle: clientCapabilities.fs.read (fs/read: read)" in str(
            caught.value
        )
        await asyncio.sleep(0.01)
        assert not agent.handler.initialized
        # A notification left unhandled is no mistake: its default ignores it.
        await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {"bell": {}}})
        assert agent.handler.initialized
        await close(agent, client)
        agent, client = await pair(Seen, Partial, check_capabilities=False)
        await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {"fs": {"read": True}}})
        await close(agent, client)

    run(main())


def test_a_handler_that_is_no_subclass_of_the_interface_counts_by_its_methods() -> None:
    class Duck:
        def __init__(self, conn: Any) -> None:
            self.conn = conn

        async def read(self, params: Any) -> Any:
            return {}

    gates = capabilities.Capabilities(REQUIRES, METHODS, "client")
    part = {"clientCapabilities": {"fs": {"read": True}}}
    assert gates.unbacked(part, Duck(None), ClientInterface) == []
    assert gates.unbacked(part, object(), ClientInterface) == ["clientCapabilities.fs.read (fs/read: read)"]
    assert gates.unbacked(part, ClientInterface(), ClientInterface) == ["clientCapabilities.fs.read (fs/read: read)"]
