"""An ACP client whose session survives its agent: it prompts resumable_agent.py, kills
the agent process (a dropped connection), reconnects to a new one with a SessionKeeper
(session/load replays the session, folded afresh), prompts again and prints the history.

python examples/resumable_client.py [SESSIONS_DIR]
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1 as acp  # noqa: E402


class Keeping(acp.Client):
    def __init__(self, conn: acp.ClientSideConnection[Keeping]) -> None:
        self.conn = conn

    async def session_update(self, params: acp.SessionNotification) -> None:
        pass  # conn.sessions folds the session; the keeper carries it to the next connection


async def main(sessions: str) -> None:
    agent = [sys.executable, str(Path(__file__).with_name("resumable_agent.py")), sessions]
    async with contextlib.AsyncExitStack() as stack:

        async def connect() -> acp.ClientSideConnection[Keeping]:
            return await stack.enter_async_context(acp.spawn_agent(Keeping, *agent))

        initialize, conn = acp.InitializeRequest(protocol_version=1), await connect()
        await conn.initialize(initialize)
        session_id = (await conn.new_session(acp.NewSessionRequest(cwd=sessions, mcp_servers=[]))).session_id
        keeper = acp.SessionKeeper(connect, session_id, initialize=initialize, cwd=sessions, connection=conn)
        for number, text in enumerate(("hello there", "and again")):
            request = acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text=text)])
            assert keeper.connection is not None
            await keeper.connection.prompt(request)
            if number == 0 and conn.process is not None:
                conn.process.kill()  # the connection drops
                await conn.process.wait()
                await keeper.reconnect()
        session = keeper.session
        for entry in session.history:
            if isinstance(entry, (acp.UserMessageEntry, acp.AgentMessageEntry)):
                text = "".join(b.text for b in entry.value(session).content if isinstance(b, acp.TextContentBlock))
                print(entry.field, text)

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else scratch))
