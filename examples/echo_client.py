"""An ACP client: starts an agent, opens a session, sends one prompt and
prints the streamed answer.

python examples/echo_client.py [TEXT] [-- AGENT COMMAND...]   (default agent: echo_agent.py)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1 as acp  # noqa: E402


class PrintingClient(acp.Client):
    def __init__(self, conn: acp.ClientSideConnection[PrintingClient]) -> None:
        self.conn = conn

    async def session_update(self, params: acp.SessionNotification) -> None:
        update = params.update
        if isinstance(update, acp.AgentMessageChunkSessionUpdate) and isinstance(update.content, acp.TextContentBlock):
            print(update.content.text, end="", flush=True)


async def main(text: str, command: list[str]) -> None:
    async with acp.spawn_agent(PrintingClient, *command, validate_outgoing=True) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=1))
        session = await conn.new_session(acp.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
        prompt: list[acp.ContentBlock] = [acp.TextContentBlock(text=text)]
        response = await conn.prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
        print(f"\n[{response.stop_reason.value}]")


if __name__ == "__main__":
    args = sys.argv[1:]
    command = args[args.index("--") + 1 :] if "--" in args else [sys.executable, str(Path(__file__).with_name("echo_agent.py"))]
    text = " ".join(args[: args.index("--")] if "--" in args else args) or "Hello from the echo client"
    asyncio.run(main(text, command))
