"""Capability checks at the sender with the generated packages, both sides:
a call of a method the peer did not advertise at initialize raises
CapabilityError and sends nothing; advertising a capability without its
handler is a HandlerError when that side's part of initialize goes out."""

from __future__ import annotations

import asyncio

import pytest

from ..conftest import load_generated
from ..patience import HANG

acp = load_generated("acp_v1")
acp2 = load_generated("acp_v2")
TIMEOUT = HANG


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


class Agent(acp.Agent):
    capabilities = acp.AgentCapabilities()

    def __init__(self, conn):
        self.conn = conn
        self.loaded = []

    async def initialize(self, params):
        self.client_capabilities = params.client_capabilities
        return acp.InitializeResponse(protocol_version=1, agent_capabilities=self.capabilities)

    async def new_session(self, params):
        return acp.NewSessionResponse(session_id="s1")


class LoadingAgent(Agent):
    capabilities = acp.AgentCapabilities(load_session=True)

    async def load_session(self, params):
        self.loaded.append(params.session_id)
        return acp.LoadSessionResponse()


class FileClient(acp.Client):
    def __init__(self, conn):
        self.conn = conn
        self.reads = []
        self.terminals = []

    async def read_text_file(self, params):
        self.reads.append(params.path)
        return acp.ReadTextFileResponse(content="hello")

    async def create_terminal(self, params):
        self.terminals.append(params.command)
        return acp.CreateTerminalResponse(terminal_id="t1")


def read(path="/notes.txt"):
    return acp.ReadTextFileRequest(session_id="s1", path=path)


def init(**capabilities):
    return acp.InitializeRequest(protocol_version=1, client_capabilities=acp.ClientCapabilities(**capabilities))


def test_the_agent_cannot_read_a_file_from_a_client_that_did_not_advertise_it():
    async def main():
        agent, client = acp.connect_in_memory(Agent, FileClient, validate_outgoing=True)
        await client.initialize(init())
        with pytest.raises(acp.CapabilityError) as caught:
            await agent.read_text_file(read())
        assert caught.value.method == "fs/read_text_file"
        assert caught.value.capability == "clientCapabilities.fs.readTextFile"
        with pytest.raises(acp.CapabilityError, match=r"terminal/create needs clientCapabilities\.terminal"):
            await agent.create_terminal(acp.CreateTerminalRequest(session_id="s1", command="ls"))
        await asyncio.sleep(0.01)
        assert client.handler.reads == [] and client.handler.terminals == []
        await agent.close()
        await client.close()

    run(main())


def test_the_agent_reads_a_file_from_a_client_that_advertised_it():
    async def main():
        agent, client = acp.connect_in_memory(Agent, FileClient, validate_outgoing=True)
        fs = acp.FileSystemCapabilities(read_text_file=True)
        await client.initialize(init(fs=fs))
        assert (await agent.read_text_file(read())).content == "hello"
        # write_text_file was not advertised: still refused
        with pytest.raises(acp.CapabilityError, match=r"clientCapabilities\.fs\.writeTextFile"):
            await agent.write_text_file(acp.WriteTextFileRequest(session_id="s1", path="/x", content=""))
        await agent.close()
        await client.close()

    run(main())


def test_a_client_advertising_files_it_does_not_serve_is_told_before_initialize_goes_out():
    class Bare(acp.Client):
        def __init__(self, conn):
            self.conn = conn

    async def main():
        agent, client = acp.connect_in_memory(Agent, Bare)
        fs = acp.FileSystemCapabilities(read_text_file=True, write_text_file=True)
        with pytest.raises(acp.HandlerError) as caught:
            await client.initialize(init(fs=fs))
        message = str(caught.value)
        assert "clientCapabilities.fs.readTextFile (fs/read_text_file: read_text_file)" in message
        assert "clientCapabilities.fs.writeTextFile (fs/write_text_file: write_text_file)" in message
        with pytest.raises(acp.HandlerError) as caught:
            await client.initialize(init(terminal=True))  # all five terminal/* handlers, in one place
        assert "clientCapabilities.terminal (terminal/create: create_terminal, terminal/output: terminal_output" in str(
            caught.value
        )
        await asyncio.sleep(0.01)
        assert not hasattr(agent.handler, "client_capabilities")  # never sent
        await agent.close()
        await client.close()

    run(main())


def test_the_client_cannot_load_a_session_the_agent_did_not_advertise():
    class Quiet(LoadingAgent):
        capabilities = acp.AgentCapabilities()

    async def main():
        agent, client = acp.connect_in_memory(Quiet, FileClient, validate_outgoing=True)
        await client.initialize(init())
        load = acp.LoadSessionRequest(session_id="s1", cwd="/", mcp_servers=[])
        with pytest.raises(acp.CapabilityError, match=r"session/load needs agentCapabilities\.loadSession"):
            await client.load_session(load)
        assert agent.handler.loaded == []
        await agent.close()
        await client.close()
        agent, client = acp.connect_in_memory(LoadingAgent, FileClient, validate_outgoing=True)
        await client.initialize(init())
        await client.load_session(load)
        assert agent.handler.loaded == ["s1"]
        await agent.close()
        await client.close()

    run(main())


def test_an_agent_advertising_load_session_without_the_handler_fails_its_initialize():
    class Boasting(Agent):
        capabilities = acp.AgentCapabilities(load_session=True)

    async def main():
        agent, client = acp.connect_in_memory(Boasting, FileClient)
        with pytest.raises(acp.RequestError) as caught:
            await client.initialize(init())
        assert caught.value.code == -32603
        assert "Boasting advertises what it does not handle: agentCapabilities.loadSession" in str(caught.value)
        await agent.close()
        await client.close()
        agent, client = acp.connect_in_memory(Boasting, FileClient, check_capabilities=False)
        assert (await client.initialize(init())).agent_capabilities.load_session is True
        await agent.close()
        await client.close()

    run(main())


def test_v2_auth_needs_auth_methods():
    class Agent2(acp2.Agent):
        def __init__(self, conn):
            self.conn = conn

        async def initialize(self, params):
            return acp2.InitializeResponse(protocol_version=2, info=acp2.Implementation(name="a", version="1"))

    class Client2(acp2.Client):
        def __init__(self, conn):
            self.conn = conn

    async def main():
        agent, client = acp2.connect_in_memory(Agent2, Client2, validate_outgoing=True)
        await client.initialize(
            acp2.InitializeRequest(protocol_version=2, info=acp2.Implementation(name="c", version="1"))
        )
        with pytest.raises(acp2.CapabilityError, match=r"auth/login needs authMethods"):
            await client.login(acp2.LoginAuthRequest(method_id="m"))
        await agent.close()
        await client.close()

    run(main())
