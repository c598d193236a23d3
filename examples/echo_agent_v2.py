"""An ACP v2 agent that streams each prompt's text back, word by word.

v2 answers session/prompt at once with the user message's id, echoes the message
(user_message), reports the turn running, and ends it with an idle state_update
carrying the stop reason. Run by a client: python examples/echo_agent_v2.py [DELAY]
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v2 as acp  # noqa: E402

DELAY = float(sys.argv[1]) if __name__ == "__main__" and len(sys.argv) > 1 else 0.0


class EchoAgent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection[EchoAgent]) -> None:
        self.conn = conn

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION, info=acp.Implementation(name="echo", version="1")
        )

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id=acp.SessionId(f"echo-{uuid.uuid4().hex}"))

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        message_id = acp.MessageId(uuid.uuid4().hex)
        self.conn.start_session_work(params.session_id, self._answer(params, message_id))  # session/cancel cancels it
        return acp.PromptResponse(message_id=message_id)

    async def _answer(self, params: acp.PromptRequest, message_id: acp.MessageId) -> None:
        session, reply_id = self.conn.session(params.session_id), acp.MessageId(uuid.uuid4().hex)
        await session.user_message(message_id, content=params.prompt)
        idle: acp.IdleStateUpdate = acp.EndTurnIdleStateUpdate()
        try:
            await session.state_update(acp.StateUpdateRunning())
            for word in [w for b in params.prompt if isinstance(b, acp.TextContentBlock) for w in b.text.split()]:
                await session.message_chunk(reply_id, word + " ")
                await asyncio.sleep(DELAY)
        except asyncio.CancelledError:
            idle = acp.CancelledIdleStateUpdate()
        await session.state_update(acp.StateUpdateIdle(value=idle))


if __name__ == "__main__":
    asyncio.run(acp.run_agent_stdio(EchoAgent, validate_outgoing=True))
