"""An ACP v2 client: starts an agent, opens a session, sends one prompt and
prints the streamed answer until the agent reports the turn over.

python examples/echo_client_v2.py [TEXT] [-- AGENT COMMAND...]   (default agent: echo_agent_v2.py)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v2 as acp  # noqa: E402


class PrintingClient(acp.Client):
    def __init__(self, conn: acp.ClientSideConnection[PrintingClient]) -> None:
        self.conn = conn
        self.idle: asyncio.Future[acp.IdleStateUpdate] = asyncio.get_running_loop().create_future()

    async def session_update(self, params: acp.UpdateSessionNotification) -> None:
        update = params.update
        if isinstance(update, acp.AgentMessageChunkSessionUpdate) and isinstance(update.content, acp.TextContentBlock):
            print(update.content.text, end="", flush=True)
        elif isinstance(update, acp.StateUpdateSessionUpdate) and isinstance(update.value, acp.StateUpdateIdle):
            self.idle.set_result(update.value.value)


async def main(text: str, command: list[str]) -> None:
    async with acp.spawn_agent(PrintingClient, *command, validate_outgoing=True) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=2, info=acp.Implementation(name="echo-client", version="1")))
        session = await conn.new_session(acp.NewSessionRequest(cwd=acp.AbsolutePath(os.getcwd())))
        await conn.prompt(acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text=text)]))
        # The turn ends with an idle state_update, unless the agent goes away first.
        assert conn.process is not None
        exited = asyncio.ensure_future(conn.process.wait())
        either: list[asyncio.Future[Any]] = [conn.handler.idle, exited]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if not conn.handler.idle.done():
            sys.exit(f"\nthe agent exited (status {conn.process.returncode}) before the turn ended")
        exited.cancel()
        print(f"\n[{conn.handler.idle.result().stop_reason}]")


if __name__ == "__main__":
    args = sys.argv[1:]
    command = args[args.index("--") + 1 :] if "--" in args else [sys.executable, str(Path(__file__).with_name("echo_agent_v2.py"))]
    text = " ".join(args[: args.index("--")] if "--" in args else args) or "Hello from the echo client"
    asyncio.run(main(text, command))
