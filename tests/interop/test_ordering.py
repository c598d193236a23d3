"""Ordered dispatch against real SDK agents: the generated acp_v1 client,
whose session/update handler is slow (50 ms, as a UI's may be), must not see
an agent's ``session/request_permission`` for a tool call before the handler
of the ``tool_call`` notification that announced it has finished.

The agents (``peers/sdk_permission_agent.py`` on the official Python SDK,
``ts/permission_agent.mjs`` on the TypeScript SDK) send the ``tool_call``
update and the permission request back to back, then report the outcome they
received as an agent message and end the turn. A client that handled the
request first raises KeyError in its permission handler (answered -32603),
and the agent's turn fails with that error: the official Python SDK's client
(0.12.1) does, against both agents, which shows that these agents produce the
race the ordered client must survive."""

from __future__ import annotations

import asyncio
import sys

import pytest

from ..conftest import load_generated
from .harness import PEERS, TIMEOUT, TS, require_python_sdk, require_ts_sdk

acp = load_generated("acp_v1")


class SlowClient:
    """Records each announced tool call after a 50 ms pause; a permission
    request looks its tool call up and selects the first option."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self.tool_calls: dict[str, str] = {}
        self.messages: list[str] = []
        self.permissions: list[tuple[str, str]] = []

    async def session_update(self, params) -> None:
        await asyncio.sleep(0.05)
        update = params.update
        if isinstance(update, acp.ToolCallSessionUpdate):
            self.tool_calls[update.tool_call_id] = update.title
        elif isinstance(update, acp.AgentMessageChunkSessionUpdate):
            self.messages.append(update.content.text)

    async def request_permission(self, params):
        tool_call_id = params.tool_call.tool_call_id
        title = self.tool_calls[tool_call_id]  # KeyError: the request overtook the notification
        option = params.options[0]
        self.permissions.append((tool_call_id, title))
        return acp.RequestPermissionResponse(outcome=acp.SelectedRequestPermissionOutcome(option_id=option.option_id))


async def prompt_once(agent: list[str]) -> tuple[SlowClient, object]:
    clients: list[SlowClient] = []

    def make(conn):
        clients.append(SlowClient(conn))
        return clients[-1]

    async with acp.spawn_agent(make, *agent, validate_outgoing=True) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=1))
        session = await conn.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        request = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="read it")])
        response = await conn.prompt(request)
    return clients[0], response


def python_sdk_permission_agent() -> list[str]:
    require_python_sdk()
    return [sys.executable, str(PEERS / "sdk_permission_agent.py")]


def ts_sdk_permission_agent() -> list[str]:
    require_ts_sdk()
    return ["node", str(TS / "permission_agent.mjs")]


AGENTS = pytest.mark.parametrize(
    "agent", [python_sdk_permission_agent, ts_sdk_permission_agent], ids=["python-sdk", "ts-sdk"]
)


@AGENTS
def test_a_permission_request_waits_for_the_slow_tool_call_update(agent):
    client, response = asyncio.run(asyncio.wait_for(prompt_once(agent()), TIMEOUT))
    assert response.stop_reason is acp.StopReason.END_TURN
    assert client.permissions == [("read-1", "Read README.md")]
    assert client.messages == ["selected allow"], "the agent did not receive the selected option"


async def sdk_client_prompt_once(agent: list[str]) -> tuple[dict, list[str], object]:
    """The official Python SDK's client with the same slow handlers: the
    tool calls it recorded, the agent messages, and the prompt's response or
    the RequestError it failed with."""
    from acp import Client, RequestError, text_block
    from acp.schema import AllowedOutcome, ClientCapabilities, RequestPermissionResponse
    from acp.stdio import spawn_agent_process

    class SlowSdkClient(Client):
        def __init__(self) -> None:
            self.tool_calls: dict[str, str] = {}
            self.messages: list[str] = []

        async def session_update(self, session_id, update, **kwargs):
            # Longer than our client's pause: the agent's request follows its
            # notification within milliseconds, so even on a loaded machine
            # it arrives while this handler still sleeps.
            await asyncio.sleep(0.5)
            if update.session_update == "tool_call":
                self.tool_calls[update.tool_call_id] = update.title
            elif update.session_update == "agent_message_chunk":
                self.messages.append(update.content.text)

        async def request_permission(self, session_id, tool_call, options, **kwargs):
            self.tool_calls[tool_call.tool_call_id]  # KeyError: the request overtook the notification
            return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=options[0].option_id))

    client = SlowSdkClient()
    async with spawn_agent_process(lambda _agent: client, *agent) as (conn, _process):
        await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
        session = await conn.new_session(cwd="/", mcp_servers=[])
        try:
            outcome: object = await conn.prompt(session_id=session.session_id, prompt=[text_block("read it")])
        except RequestError as error:
            outcome = error
    return client.tool_calls, client.messages, outcome


@AGENTS
def test_the_python_sdk_client_answers_the_permission_request_before_the_tool_call_update(agent):
    """The unordered direction: the SDK client runs the permission handler
    while the tool_call handler still sleeps, so the agent gets -32603 and
    its turn fails without reporting an outcome."""
    from acp import RequestError

    _, messages, outcome = asyncio.run(asyncio.wait_for(sdk_client_prompt_once(agent()), TIMEOUT))
    assert isinstance(outcome, RequestError), f"the SDK client answered in order this time: {outcome}"
    assert outcome.code == -32603 and "read-1" in str(outcome.data), outcome.data
    assert messages == [], "the agent reported an outcome of a failed permission request"


class StoppingClient:
    """The user presses Stop while the permission dialog is open: the
    handler waits for an answer that never comes, and the client sends
    ``session/cancel``; it writes no code to answer the pending request."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self.asked = asyncio.Event()
        self.messages: list[str] = []

    async def session_update(self, params) -> None:
        update = params.update
        if isinstance(update, acp.AgentMessageChunkSessionUpdate):
            self.messages.append(update.content.text)

    async def request_permission(self, params):
        self.asked.set()
        await asyncio.Event().wait()  # the user never answers


async def stop_while_asked(agent: list[str]) -> tuple[StoppingClient, object, list]:
    clients: list[StoppingClient] = []

    def make(conn):
        clients.append(StoppingClient(conn))
        return clients[-1]

    async with acp.spawn_agent(make, *agent, validate_outgoing=True) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=1))
        session = await conn.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        request = acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text="read it")])
        prompt = asyncio.create_task(conn.prompt(request))
        await clients[0].asked.wait()
        await conn.cancel(acp.CancelNotification(session_id=session.session_id))
        response = await prompt
        decisions = conn.permission_decisions[session.session_id]
    return clients[0], response, decisions


@AGENTS
def test_session_cancel_answers_the_sdk_agents_pending_permission_request_cancelled(agent):
    """ACP: a client that sends session/cancel "MUST respond to all pending
    session/request_permission requests with [the] cancelled outcome". The
    SDK agents report the outcome they got as their message: ``cancelled``."""
    client, response, decisions = asyncio.run(asyncio.wait_for(stop_while_asked(agent()), TIMEOUT))
    assert client.messages == ["cancelled"], client.messages
    assert response.stop_reason is acp.StopReason.END_TURN  # these agents ignore session/cancel itself
    assert [(d.tool_call_id, d.outcome) for d in decisions] == [("read-1", "cancelled")]
