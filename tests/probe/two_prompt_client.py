"""An ACP v1 client that sends two prompts on one session, for the
probe-agent test: probe-agent plays one check per prompt.

    python two_prompt_client.py AGENT COMMAND...
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "generated"))
import acp_v1 as acp


class QuietClient(acp.Client):
    def __init__(self, conn: acp.ClientSideConnection[QuietClient]) -> None:
        self.conn = conn


async def main(command: list[str]) -> None:
    async with acp.spawn_agent(QuietClient, *command) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=1))
        session = await conn.new_session(acp.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
        for text in ("first", "second"):
            prompt: list[acp.ContentBlock] = [acp.TextContentBlock(text=text)]
            await conn.prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
