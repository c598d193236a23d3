"""Each of the four committed packages on the Python running the test: a
message decoded and encoded back, a patch, a strict refusal, and a whole
prompt turn over a connection (in memory and over a socket pair) that the
client folds into its session.

`make test` runs this file on every Python the packages claim (3.10 to 3.13,
with the generator's unit tests), so it keeps to the standard library and the
committed packages: no generation, nothing from the test extra.
"""

from __future__ import annotations

import asyncio
import socket
import typing
from types import ModuleType
from typing import Any

import pytest

from ..conftest import SCHEMAS, load_generated
from ..patience import HANG

PACKAGES = sorted(SCHEMAS)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG))


def is_v2(p: ModuleType) -> bool:
    return p.PROTOCOL_VERSION == 2


def notification(session_id: str, update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": session_id, "update": update}


def chunk(p: ModuleType, text: str) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    if is_v2(p):
        update["messageId"] = "m-agent"
    return update


NOTIFICATION_CLASS = {1: "SessionNotification", 2: "UpdateSessionNotification"}


@pytest.mark.parametrize("name", PACKAGES)
def test_a_message_decodes_and_encodes_back_in_both_modes(name):
    p = load_generated(name)
    wire = notification("s-1", chunk(p, "hello"))
    for strict in (False, True):
        value = p.decode(NOTIFICATION_CLASS[p.PROTOCOL_VERSION], wire, strict=strict)
        assert isinstance(value.update, p.AgentMessageChunkSessionUpdate)
        assert value.update.content == p.TextContentBlock(text="hello")
        assert p.encode(value) == wire
    # A text block without its text: strict and lenient both refuse it, with the path.
    bad = notification("s-1", {**chunk(p, "x"), "content": {"type": "text"}})
    for strict in (False, True):
        with pytest.raises(p.ValidationError, match=r"update\.content"):
            p.decode(NOTIFICATION_CLASS[p.PROTOCOL_VERSION], bad, strict=strict)


IDS = (
    "SessionId",
    "ToolCallId",
    "TerminalId",
    "PermissionOptionId",
    "ElicitationId",
    "AuthMethodId",
    "SessionConfigId",
    "SessionConfigValueId",
    "SessionConfigGroupId",
    "MessageId",
    "CompactionId",
)
"""Named string types of every package's schema."""
IDS_BY_VERSION = {1: ("SessionModeId",), 2: ("MediaType", "AbsolutePath", "SessionListCursor", "PlanId")}


@pytest.mark.parametrize("name", PACKAGES)
def test_named_string_types_are_new_types_over_plain_strings(name):
    """A named string type is a NewType (a type checker tells a SessionId
    from a ToolCallId); at run time its values are the plain strings, so
    constructors take a str and decoding and encoding are as they were."""
    p = load_generated(name)
    new_types = {n for n in p.__all__ if isinstance(getattr(p, n), typing.NewType)}
    assert {*IDS, *IDS_BY_VERSION[p.PROTOCOL_VERSION]} <= new_types
    assert all(getattr(p, n).__supertype__ is str for n in new_types)
    assert "RequestId" not in new_types and "ToolKind" not in new_types  # a union and an enum
    made = p.SessionId("s-1")
    assert made == "s-1" and type(made) is str
    # A constructor takes a plain str, and encodes it as it is.
    request = p.PromptRequest(session_id="s-1", prompt=[p.TextContentBlock(text="hi")])
    assert p.encode(request) == {"sessionId": "s-1", "prompt": [{"type": "text", "text": "hi"}]}
    wire = notification("s-1", chunk(p, "hello"))
    call = {"toolCallId": "t1", "title": "Read"}
    for strict in (False, True):
        value = p.decode(NOTIFICATION_CLASS[p.PROTOCOL_VERSION], wire, strict=strict)
        assert type(value.session_id) is str and value.session_id == "s-1"
        assert p.encode(value) == wire
        assert p.decode("SessionId", "s-2", strict=strict) == "s-2"
        assert p.encode(p.decode("ToolCallUpdate", call, strict=strict)) == call
        with pytest.raises(p.ValidationError, match="expected a string"):
            p.decode("SessionId", 1, strict=strict)
        with pytest.raises(p.ValidationError, match="toolCallId"):
            p.decode("ToolCallUpdate", {"toolCallId": 1}, strict=strict)


@pytest.mark.parametrize("name", PACKAGES)
def test_a_tool_call_update_patches_omitted_null_and_value(name):
    """Omitted leaves a field, a value replaces it; null leaves it in v1 and
    resets it in v2 (a kind to ``other``)."""
    p = load_generated(name)
    call = p.decode("ToolCallUpdate", {"toolCallId": "t1", "title": "Read", "status": "pending", "kind": "read"})
    state = p.apply_tool_call_update(None, call)
    patch = p.decode("ToolCallUpdate", {"toolCallId": "t1", "kind": None, "status": "completed"})
    assert patch.title is p.UNSET and patch.kind is None
    after = p.apply_tool_call_update(state, patch)
    assert (after.title, after.status) == ("Read", p.ToolCallStatus.COMPLETED)
    assert after.kind == (p.ToolKind.OTHER if is_v2(p) else p.ToolKind.READ)
    assert (state.status, state.kind) == (p.ToolCallStatus.PENDING, p.ToolKind.READ)  # the older state stays


class Agent:
    """A prompt turn of either protocol: v1 streams its updates and answers
    the prompt; v2 answers at once and ends the turn with an idle state."""

    def __init__(self, conn: Any, p: ModuleType) -> None:
        self.conn = conn
        self.p = p
        self.sessions = 0

    async def initialize(self, params: Any) -> Any:
        p = self.p
        wire: dict[str, Any] = {"protocolVersion": p.PROTOCOL_VERSION}
        if is_v2(p):
            wire["info"] = {"name": "basics", "version": "1"}
        return p.decode("InitializeResponse", wire)

    async def new_session(self, params: Any) -> Any:
        self.sessions += 1
        return self.p.decode("NewSessionResponse", {"sessionId": f"s-{self.sessions}"})

    async def prompt(self, params: Any) -> Any:
        p = self.p
        words = [w for block in params.prompt for w in block.text.split()]
        updates = [chunk(p, w + " ") for w in words]
        # v2 has no tool_call: a tool_call_update is the upsert that starts one.
        start = "tool_call_update" if is_v2(p) else "tool_call"
        updates.append({"sessionUpdate": start, "toolCallId": "t1", "title": "Look", "status": "pending"})
        updates.append({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})
        if is_v2(p):
            response = p.decode("PromptResponse", {"messageId": "m-user"})
            asyncio.get_running_loop().create_task(self.stream(params.session_id, updates, idle=True))
            return response
        await self.stream(params.session_id, updates, idle=False)
        return p.decode("PromptResponse", {"stopReason": "end_turn"})

    async def stream(self, session_id: str, updates: list[dict[str, Any]], idle: bool) -> None:
        p = self.p
        if idle:
            updates = [*updates, {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}]
        for update in updates:
            await self.conn.session_update(
                p.decode(NOTIFICATION_CLASS[p.PROTOCOL_VERSION], notification(session_id, update))
            )


class Client:
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.updates = 0
        self.turn_over = asyncio.Event()

    async def session_update(self, params: Any) -> None:
        self.updates += 1
        if params.update.session_update in ("state_update",):
            self.turn_over.set()


async def turn(p: ModuleType, agent: Any, client: Any) -> tuple[Any, Any]:
    """initialize, session/new and one prompt turn; the folded session and
    the prompt's answer."""
    wire: dict[str, Any] = {"protocolVersion": p.PROTOCOL_VERSION}
    if is_v2(p):
        wire["info"] = {"name": "basics-client", "version": "1"}
    answer = await client.initialize(p.decode("InitializeRequest", wire))
    assert answer.protocol_version == p.PROTOCOL_VERSION
    new_wire: dict[str, Any] = {"cwd": "/tmp"}
    if not is_v2(p):
        new_wire["mcpServers"] = []
    session = await client.new_session(p.decode("NewSessionRequest", new_wire))
    prompt = p.decode(
        "PromptRequest", {"sessionId": session.session_id, "prompt": [{"type": "text", "text": "one two"}]}
    )
    response = await client.prompt(prompt)
    if is_v2(p):
        await client.handler.turn_over.wait()
    return client.sessions[session.session_id], response


def check_fold(p: ModuleType, folded: Any, response: Any) -> None:
    agent_text = [
        "".join(block.text for block in entry.value(folded).content)
        for entry in folded.history
        if isinstance(entry, p.AgentMessageEntry)
    ]
    assert agent_text == ["one two "]
    calls = [entry.value(folded) for entry in folded.history if isinstance(entry, p.ToolCallEntry)]
    assert [(c.title, c.status) for c in calls] == [("Look", p.ToolCallStatus.COMPLETED)]
    if not is_v2(p):
        assert response.stop_reason == p.StopReason.END_TURN


async def joined(p: ModuleType, transport: str) -> tuple[Any, Any]:
    """An agent and a client of package ``p``, started: in memory, or over a
    socket pair (the stream transport, as over stdio)."""
    if transport == "memory":
        return p.connect_in_memory(lambda conn: Agent(conn, p), Client, validate_outgoing=True)
    left, right = socket.socketpair()
    agent_streams = await asyncio.open_connection(sock=left)
    client_streams = await asyncio.open_connection(sock=right)
    agent = p.AgentSideConnection(lambda conn: Agent(conn, p), *agent_streams, validate_outgoing=True)
    client = p.ClientSideConnection(Client, *client_streams, validate_outgoing=True)
    agent.start()
    client.start()
    return agent, client


@pytest.mark.parametrize("transport", ["memory", "socket pair"])
@pytest.mark.parametrize("name", PACKAGES)
def test_a_prompt_turn_is_folded_by_the_client(name, transport):
    p = load_generated(name)

    async def main() -> None:
        agent, client = await joined(p, transport)
        try:
            folded, response = await turn(p, agent, client)
            check_fold(p, folded, response)
        finally:
            await client.close()
            await agent.close()

    run(main())
