"""Version negotiation between the generated packages, in one process (the
SDK peers are in tests/interop): v1 client x v2 agent, v2 client x v1
agent, a string version, an unsupported version, requests before
``initialize``, and one endpoint serving both versions."""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import shutil
import sys
from pathlib import Path

import pytest

from ..conftest import load_generated
from ..patience import HANG

v1 = load_generated("acp_v1")
v2 = load_generated("acp_v2")
memory_pair = load_generated("acp_v1._transport").memory_pair
TIMEOUT = HANG


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


class AgentV1(v1.Agent):
    def __init__(self, conn) -> None:
        self.conn = conn
        self.requested: list[int] = []
        self.notes: list[str] = []

    async def initialize(self, params):
        self.requested.append(params.protocol_version)
        info = v1.Implementation(name="agent-v1", version="1")
        return v1.InitializeResponse(protocol_version=v1.PROTOCOL_VERSION, agent_info=info)

    async def new_session(self, params):
        return v1.NewSessionResponse(session_id="s-v1")

    async def cancel(self, params) -> None:
        self.notes.append(params.session_id)


class AgentV2(v2.Agent):
    def __init__(self, conn) -> None:
        self.conn = conn
        self.requested: list[int] = []

    async def initialize(self, params):
        self.requested.append(params.protocol_version)
        return v2.InitializeResponse(protocol_version=2, info=v2.Implementation(name="agent-v2", version="1"))

    async def new_session(self, params):
        return v2.NewSessionResponse(session_id="s-v2")


class ClientV1(v1.Client):
    def __init__(self, conn) -> None:
        self.conn = conn


class ClientV2(v2.Client):
    def __init__(self, conn) -> None:
        self.conn = conn


INIT_V1 = v1.InitializeRequest(protocol_version=1, client_info=v1.Implementation(name="client-v1", version="1"))
INIT_V2 = v2.InitializeRequest(protocol_version=2, info=v2.Implementation(name="client-v2", version="1"))
CLIENTS = {
    2: (v2.ClientSideConnection, ClientV2, INIT_V2),
    1: (v1.ClientSideConnection, ClientV1, INIT_V1),
}
AGENTS = {1: (v1.AgentSideConnection, AgentV1), 2: (v2.AgentSideConnection, AgentV2)}


def pair(agent_class, make_agent, client_class, make_client):
    agent_end, client_end = memory_pair()
    agent = agent_class(make_agent, agent_end)
    client = client_class(make_client, client_end)
    agent.start()
    client.start()
    return agent, client


async def raw(agent_class, make_agent, *messages):
    """The agent's answers to ``messages`` sent as they are."""
    agent_end, peer = memory_pair()
    agent = agent_class(make_agent, agent_end)
    agent.start()
    answers = []
    for message in messages:
        await peer.send(json.dumps(message).encode())
        if "id" in message:
            answers.append(json.loads(await peer.receive()))
    await agent.close()
    await peer.close()
    return agent, answers


def test_a_v1_client_gets_minus_32022_from_a_v2_agent_with_requested_and_supported():
    async def main():
        agent, client = pair(v2.AgentSideConnection, AgentV2, v1.ClientSideConnection, ClientV1)
        with pytest.raises(v1.UnsupportedProtocolVersion) as caught:
            await client.initialize(INIT_V1)
        await client.close()
        await agent.close()
        return agent, caught.value

    agent, error = run(main())
    assert (error.code, error.requested, error.supported) == (-32022, 1, [2])
    assert error.data == {"requested": 1, "supported": [2]}
    assert "asked for version 1, the agent supports 2" in str(error)
    assert agent.handler.requested == []  # the v1-shaped request does not decode as v2's


def test_a_v2_agent_can_answer_an_older_client_itself():
    class Answering(AgentV2):
        async def unsupported_version(self, requested, params):
            self.requested.append(requested)
            raise v2.UnsupportedProtocolVersion(requested, [2], "only v2 here")

    async def main():
        return await raw(
            v2.AgentSideConnection,
            Answering,
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientInfo": {}}},
        )

    agent, (answer,) = run(main())
    assert agent.handler.requested == [1]
    assert answer["error"] == {"code": -32022, "message": "only v2 here", "data": {"requested": 1, "supported": [2]}}


def test_a_v2_agent_sees_a_v2_shaped_request_for_an_older_version():
    """When the params decode, the handler decides (here: it answers 2)."""

    async def main():
        params = {"protocolVersion": 1, "info": {"name": "c", "version": "1"}}
        return await raw(
            v2.AgentSideConnection, AgentV2, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        )

    agent, (answer,) = run(main())
    assert agent.handler.requested == [1]
    assert answer["result"]["protocolVersion"] == 2


@pytest.mark.parametrize("version", ["1", "1.0.0", ""])
def test_a_string_version_reads_as_0_and_the_v1_agent_answers_with_its_own(version):
    async def main():
        params = {"protocolVersion": version}
        return await raw(
            v1.AgentSideConnection, AgentV1, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        )

    agent, (answer,) = run(main())
    assert agent.handler.requested == [0]
    assert answer["result"]["protocolVersion"] == 1


def test_a_string_version_is_refused_in_strict_mode():
    async def main():
        agent_end, peer = memory_pair()
        agent = v1.AgentSideConnection(AgentV1, agent_end, strict=True)
        agent.start()
        message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1"}}
        await peer.send(json.dumps(message).encode())
        answer = json.loads(await peer.receive())
        await agent.close()
        return answer

    assert run(main())["error"]["code"] == -32602


def test_a_v2_client_gets_version_mismatch_with_the_v1_answer_decoded_by_acp_v1():
    async def main():
        agent, client = pair(v1.AgentSideConnection, AgentV1, v2.ClientSideConnection, ClientV2)
        with pytest.raises(v2.VersionMismatch) as caught:
            await client.initialize(INIT_V2)
        await client.close()
        await agent.close()
        return caught.value

    mismatch = run(main())
    assert (mismatch.requested, mismatch.chosen, mismatch.package) == (2, 1, "acp_v1")
    assert isinstance(mismatch.answer, v1.InitializeResponse)
    assert mismatch.answer.agent_info.name == "agent-v1"
    assert mismatch.result["protocolVersion"] == 1
    assert str(mismatch) == "the agent chose protocol version 1, not 2; its answer decoded by acp_v1"


def test_requests_before_initialize_are_refused_minus_32600_and_notifications_dropped(caplog):
    caplog.set_level(logging.WARNING)

    async def main():
        return await raw(
            v1.AgentSideConnection,
            AgentV1,
            {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "early"}},
            {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": 1}},
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "late"}},
            {"jsonrpc": "2.0", "id": 3, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
        )

    agent, (refused, initialized, created) = run(main())
    assert refused["error"] == {
        "code": -32600,
        "message": "Invalid request: ACP connection must be initialized before 'session/new'",
    }
    assert "result" in initialized and created["result"]["sessionId"] == "s-v1"
    assert agent.handler.notes == ["late"]
    assert "dropped a session/cancel notification sent before initialize" in caplog.text


def test_a_request_right_behind_initialize_waits_for_its_answer():
    class Slow(AgentV1):
        async def initialize(self, params):
            await asyncio.sleep(0.02)
            return await super().initialize(params)

    async def main():
        agent_end, peer = memory_pair()
        agent = v1.AgentSideConnection(Slow, agent_end)
        agent.start()
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
        ):
            await peer.send(json.dumps(message).encode())
        answers = [json.loads(await peer.receive()) for _ in range(2)]
        await agent.close()
        return answers

    first, second = run(main())
    assert first["id"] == 1 and "result" in first
    assert second["id"] == 2 and second["result"]["sessionId"] == "s-v1"


def test_a_failed_initialize_leaves_the_connection_uninitialized():
    class Failing(AgentV1):
        async def initialize(self, params):
            raise v1.RequestError(-32000, "Authentication required")

    async def main():
        return await raw(
            v1.AgentSideConnection,
            Failing,
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
        )

    _, (failed, refused) = run(main())
    assert failed["error"]["code"] == -32000
    assert refused["error"]["code"] == -32600


def test_require_initialize_false_serves_requests_before_initialize():
    async def main():
        agent_end, peer = memory_pair()
        agent = v1.AgentSideConnection(AgentV1, agent_end, require_initialize=False)
        agent.start()
        message = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
        await peer.send(json.dumps(message).encode())
        answer = json.loads(await peer.receive())
        await agent.close()
        return answer

    assert run(main())["result"]["sessionId"] == "s-v1"


@pytest.mark.parametrize(
    ("requested", "version"),
    [(1, 1), (2, 2), ("1", 1), (0, 1), (7, 2)],
)
def test_serve_versions_picks_the_package_by_the_requested_version(requested, version):
    async def main():
        agent_end, client_end = memory_pair()
        serving = asyncio.ensure_future(v2.serve_versions(AGENTS, agent_end))
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": requested, "info": {"name": "c", "version": "1"}},
        }
        await client_end.send(json.dumps(message).encode())
        answer = json.loads(await client_end.receive())
        await client_end.close()
        await asyncio.wait_for(serving, TIMEOUT)
        return answer

    assert run(main())["result"]["protocolVersion"] == version


def test_connect_versions_offers_v2_and_goes_on_in_the_package_the_agent_chose():
    async def session(agents):
        agent_end, client_end = memory_pair()
        serving = asyncio.ensure_future(v2.serve_versions(agents, agent_end))
        conn, answer = await v2.connect_versions(CLIENTS, client_end)
        package = v2 if isinstance(conn, v2.ClientSideConnection) else v1
        if package is v2:
            created = await conn.new_session(v2.NewSessionRequest(cwd="/"))
        else:
            created = await conn.new_session(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
        await conn.close()
        await asyncio.wait_for(serving, TIMEOUT)
        return package, answer, created.session_id

    package, answer, session_id = run(session(AGENTS))
    assert package is v2 and isinstance(answer, v2.InitializeResponse) and session_id == "s-v2"
    package, answer, session_id = run(session({1: AGENTS[1]}))
    assert package is v1 and isinstance(answer, v1.InitializeResponse) and session_id == "s-v1"
    assert answer.agent_info.name == "agent-v1"


def test_connect_versions_retries_with_a_version_a_minus_32022_lists():
    class OnlyOld(AgentV1):
        async def initialize(self, params):
            if params.protocol_version != 1:
                self.requested.append(params.protocol_version)
                raise v1.UnsupportedProtocolVersion(params.protocol_version, [1])
            return await super().initialize(params)

    async def main():
        agent_end, client_end = memory_pair()
        agent = v1.AgentSideConnection(OnlyOld, agent_end)
        agent.start()
        conn, answer = await v2.connect_versions(CLIENTS, client_end)
        await conn.close()
        await agent.close()
        return conn, answer, agent.handler.requested

    conn, answer, requested = run(main())
    assert isinstance(conn, v1.ClientSideConnection) and answer.protocol_version == 1
    assert requested == [2, 1]


def test_connect_versions_raises_version_mismatch_for_a_version_it_lacks():
    async def main():
        agent_end, client_end = memory_pair()
        agent = v1.AgentSideConnection(AgentV1, agent_end)
        agent.start()
        try:
            with pytest.raises(v2.VersionMismatch) as caught:
                await v2.connect_versions({2: CLIENTS[2]}, client_end)
        finally:
            await agent.close()
            await client_end.close()
        return caught.value

    mismatch = run(main())
    assert (mismatch.requested, mismatch.chosen) == (2, 1)


@pytest.mark.parametrize("name", ["acp_v1", "acp_v1_unstable", "acp_v2", "acp_v2_unstable"])
def test_the_codec_refuses_a_string_version_as_the_reference_does(name):
    """A string ``protocolVersion`` is refused by decode, lenient or strict:
    today's Rust crate refuses it (its ProtocolVersion tests have
    ``test_deserialize_string_errors`` since its string visitor was removed
    in schema 1.17.0) and so does zod's ``z.int()``. Only the connection's
    ``initialize`` handling reads it as version 0 (the tests above), so that
    an early peer gets an answer naming the agent's own version."""
    p = load_generated(name)
    params: dict = {"protocolVersion": "1"}
    if p.PROTOCOL_VERSION == 2:
        params["info"] = {"name": "c", "version": "1"}
    for strict in (False, True):
        with pytest.raises(p.ValidationError, match="protocolVersion"):
            p.decode("InitializeRequest", params, strict=strict)
    params["protocolVersion"] = 0
    assert p.decode("InitializeRequest", params).protocol_version == 0


# ------------------------------------------------------------ a renamed copy


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    """``acp_v1`` vendored under another name (``legacy_acp``: no version in
    it), imported as that package."""
    root = tmp_path_factory.mktemp("vendored")
    shutil.copytree(Path(v1.__file__).parent, root / "legacy_acp", ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(root))
    try:
        package = importlib.import_module("legacy_acp")
    finally:
        sys.path.remove(str(root))
    assert package.AgentSideConnection is not v1.AgentSideConnection
    return package


def legacy_peers(legacy):
    class LegacyAgent(legacy.Agent):
        def __init__(self, conn) -> None:
            self.conn = conn

        async def initialize(self, params):
            info = legacy.Implementation(name="legacy-agent", version="1")
            return legacy.InitializeResponse(protocol_version=1, agent_info=info)

        async def new_session(self, params):
            return legacy.NewSessionResponse(session_id="s-legacy")

    class LegacyClient(legacy.Client):
        def __init__(self, conn) -> None:
            self.conn = conn

    init = legacy.InitializeRequest(protocol_version=1, client_info=legacy.Implementation(name="c", version="1"))
    return LegacyAgent, LegacyClient, init


def test_a_renamed_package_and_acp_v2_are_served_from_one_endpoint(legacy):
    LegacyAgent, LegacyClient, legacy_init = legacy_peers(legacy)
    agents = {1: (legacy.AgentSideConnection, LegacyAgent), 2: (v2.AgentSideConnection, AgentV2)}
    clients = {
        2: (v2.ClientSideConnection, ClientV2, INIT_V2),
        1: (legacy.ClientSideConnection, LegacyClient, legacy_init),
    }

    async def session(offered):
        agent_end, client_end = memory_pair()
        serving = asyncio.ensure_future(legacy.serve_versions(agents, agent_end))
        conn, answer = await legacy.connect_versions(offered, client_end)
        if isinstance(conn, legacy.ClientSideConnection):
            created = await conn.new_session(legacy.NewSessionRequest(cwd="/", mcp_servers=[]))
        else:
            created = await conn.new_session(v2.NewSessionRequest(cwd="/"))
        await conn.close()
        await asyncio.wait_for(serving, TIMEOUT)
        return type(conn), type(answer), created.session_id

    assert run(session(clients)) == (v2.ClientSideConnection, v2.InitializeResponse, "s-v2")
    assert run(session({1: clients[1]})) == (
        legacy.ClientSideConnection,
        legacy.InitializeResponse,
        "s-legacy",
    )


def test_a_renamed_package_finds_its_sibling_only_when_told(legacy):
    _, LegacyClient, legacy_init = legacy_peers(legacy)

    class AnswersWithV2(AgentV2):
        async def unsupported_version(self, requested, params):
            return v2.InitializeResponse(protocol_version=2, info=v2.Implementation(name="agent-v2", version="1"))

    async def mismatch(**options):
        agent_end, client_end = memory_pair()
        agent = v2.AgentSideConnection(AnswersWithV2, agent_end)
        client = legacy.ClientSideConnection(LegacyClient, client_end, **options)
        agent.start()
        client.start()
        try:
            with pytest.raises(legacy.VersionMismatch) as caught:
                await client.initialize(legacy_init)
        finally:
            await client.close()
            await agent.close()
        return caught.value

    # Its name shows no version: no package is guessed for version 2.
    guessed = run(mismatch())
    assert (guessed.chosen, guessed.package, guessed.answer) == (2, None, None)
    told = run(mismatch(siblings={2: "acp_v2"}))
    assert told.package == "acp_v2" and isinstance(told.answer, v2.InitializeResponse)


def test_a_client_subclass_defined_elsewhere_still_finds_its_packages_sibling():
    """The sibling is named after the package the connection runs in, not
    after the module a subclass of its connection class is defined in."""

    class Mine(v2.ClientSideConnection):
        pass

    Mine.__module__ = "app_v7.client"

    async def main():
        agent, client = pair(v1.AgentSideConnection, AgentV1, Mine, ClientV2)
        try:
            with pytest.raises(v2.VersionMismatch) as caught:
                await client.initialize(INIT_V2)
        finally:
            await client.close()
            await agent.close()
        return caught.value

    mismatch = run(main())
    assert mismatch.package == "acp_v1" and isinstance(mismatch.answer, v1.InitializeResponse)
