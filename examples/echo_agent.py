"""An ACP agent that streams each prompt's text back, word by word.

Run by a client over stdin/stdout: python examples/echo_agent.py [DELAY_SECONDS]
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1 as acp  # noqa: E402

DELAY = float(sys.argv[1]) if __name__ == "__main__" and len(sys.argv) > 1 else 0.0


class EchoAgent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection[EchoAgent]) -> None:
        self.conn = conn
        self.cancelled: set[acp.SessionId] = set()

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id=acp.SessionId(f"echo-{uuid.uuid4().hex}"))

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        self.cancelled.discard(params.session_id)
        words = [w for b in params.prompt if isinstance(b, acp.TextContentBlock) for w in b.text.split()]
        for word in words:
            if params.session_id in self.cancelled:
                return acp.PromptResponse(stop_reason=acp.StopReason.CANCELLED)
            chunk = acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=word + " "))
            await self.conn.session_update(acp.SessionNotification(session_id=params.session_id, update=chunk))
            await asyncio.sleep(DELAY)
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    async def cancel(self, params: acp.CancelNotification) -> None:
        self.cancelled.add(params.session_id)


if __name__ == "__main__":
    asyncio.run(acp.run_agent_stdio(EchoAgent, validate_outgoing=True))
