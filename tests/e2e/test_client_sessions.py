"""The client connection folds the sessions it opens (``conn.sessions``):
from the agent's session/update notifications, before the client's handler
sees them, and in v1 from its own session/prompt, so the agent's messages of
different turns stay apart."""

from __future__ import annotations

import asyncio

from ..conftest import load_generated
from ..patience import HANG

acp = load_generated("acp_v1")
acp2 = load_generated("acp_v2")
TIMEOUT = HANG


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


def text(message):
    return "".join(b.text for b in message.content if isinstance(b, acp.TextContentBlock))


class Agent(acp.Agent):
    """Answers each prompt with two chunks, and sends one update for a
    session nobody opened."""

    def __init__(self, conn):
        self.conn = conn

    async def initialize(self, params):
        return acp.InitializeResponse(protocol_version=1)

    async def new_session(self, params):
        return acp.NewSessionResponse(session_id="s1")

    async def prompt(self, params):
        asked = "".join(b.text for b in params.prompt if isinstance(b, acp.TextContentBlock))
        for piece in ("re: ", asked):
            chunk = acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=piece))
            await self.conn.session_update(acp.SessionNotification(session_id=params.session_id, update=chunk))
        stray = acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text="?"))
        await self.conn.session_update(acp.SessionNotification(session_id="not-opened", update=stray))
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)


class Client(acp.Client):
    """Records, for every update, how many messages the folded session had
    when the handler saw it."""

    def __init__(self, conn):
        self.conn = conn
        self.seen = []

    async def session_update(self, params):
        session = self.conn.sessions.get(params.session_id)
        self.seen.append(None if session is None else len(session.agent_messages))


async def conversation(**options):
    agent, client = acp.connect_in_memory(Agent, Client, validate_outgoing=True, **options)
    await client.initialize(acp.InitializeRequest(protocol_version=1))
    new = await client.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
    assert list(client.sessions) == ([] if options else ["s1"])  # opened by session/new's result
    for question in ("one", "two", "three"):
        prompt = [acp.TextContentBlock(text=question)]
        await client.prompt(acp.PromptRequest(session_id=new.session_id, prompt=prompt))
    await agent.close()
    await client.close()
    return client


def test_a_three_turn_conversation_folds_to_six_messages():
    client = run(conversation())
    session = client.sessions["s1"]
    kinds = [type(entry).__name__ for entry in session.history]
    assert kinds == ["UserMessageEntry", "AgentMessageEntry"] * 3
    said = [text(entry.value(session)) for entry in session.history]
    assert said == ["one", "re: one", "two", "re: two", "three", "re: three"]


def test_the_handler_sees_each_update_folded_and_sessions_not_opened_are_not_kept():
    client = run(conversation())
    # per turn: the first chunk starts a message, the second extends it; the
    # stray update (for a session nobody opened) finds no session
    assert client.handler.seen == [1, 1, None, 2, 2, None, 3, 3, None]
    assert set(client.sessions) == {"s1"}


def test_folding_is_off_with_fold_sessions_false():
    client = run(conversation(fold_sessions=False))
    assert client.sessions == {}
    assert client.handler.seen == [None] * 9


def test_a_raw_prompt_request_is_folded_too():
    async def main():
        agent, client = acp.connect_in_memory(Agent, Client)
        await client.initialize(acp.InitializeRequest(protocol_version=1))
        await client.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        for question in ("a", "b"):
            await client.request("session/prompt", {"sessionId": "s1", "prompt": [{"type": "text", "text": question}]})
        await agent.close()
        await client.close()
        return client.sessions["s1"]

    session = run(main())
    assert [text(m) for m in session.user_messages.values()] == ["a", "b"]
    assert [text(m) for m in session.agent_messages.values()] == ["re: a", "re: b"]


def test_v2_folds_the_agents_user_message_updates():
    """v2 has no apply_prompt: the agent sends the prompt back as a
    user_message, and messages are keyed by their ids."""

    class Agent2(acp2.Agent):
        def __init__(self, conn):
            self.conn = conn
            self.turn = 0

        async def initialize(self, params):
            return acp2.InitializeResponse(protocol_version=2, info=acp2.Implementation(name="a", version="1"))

        async def new_session(self, params):
            return acp2.NewSessionResponse(session_id="s2")

        async def prompt(self, params):
            self.turn += 1
            user, reply = f"u{self.turn}", f"a{self.turn}"
            for update in (
                acp2.UserMessageSessionUpdate(message_id=user, content=params.prompt),
                acp2.AgentMessageChunkSessionUpdate(message_id=reply, content=acp2.TextContentBlock(text="ok")),
            ):
                await self.conn.session_update(
                    acp2.UpdateSessionNotification(session_id=params.session_id, update=update)
                )
            return acp2.PromptResponse(message_id=user)

    class Client2(acp2.Client):
        def __init__(self, conn):
            self.conn = conn

    async def main():
        agent, client = acp2.connect_in_memory(Agent2, Client2, validate_outgoing=True)
        await client.initialize(
            acp2.InitializeRequest(protocol_version=2, info=acp2.Implementation(name="c", version="1"))
        )
        new = await client.new_session(acp2.NewSessionRequest(cwd="/"))
        for question in ("one", "two"):
            await client.prompt(
                acp2.PromptRequest(session_id=new.session_id, prompt=[acp2.TextContentBlock(text=question)])
            )
        await agent.close()
        await client.close()
        return client.sessions["s2"]

    session = run(main())
    assert [type(e).__name__ for e in session.history] == ["UserMessageEntry", "AgentMessageEntry"] * 2
    assert [e.key for e in session.history] == ["u1", "a1", "u2", "a2"]
