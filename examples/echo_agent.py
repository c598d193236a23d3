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

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id=acp.SessionId(f"echo-{uuid.uuid4().hex}"))

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session = self.conn.session(params.session_id)
        for word in [w for b in params.prompt if isinstance(b, acp.TextContentBlock) for w in b.text.split()]:
            await session.message(word + " ")  # session/cancel cancels this task: the turn ends "cancelled"
            await asyncio.sleep(DELAY)
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)


if __name__ == "__main__":
    asyncio.run(acp.run_agent_stdio(EchoAgent, validate_outgoing=True))
