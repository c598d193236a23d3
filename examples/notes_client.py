"""An ACP client that lets its agent read files and runs three turns on one.

The user allows the read, rejects it, then presses Stop while asked (the
connection answers the pending permission request "cancelled"); each turn's
outcome is read from the session the connection folds.
Usage: python examples/notes_client.py NOTES_FILE AGENT_PROGRAM [ARGS...]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1 as acp  # noqa: E402


class NotesClient(acp.Client):
    def __init__(self, conn: acp.ClientSideConnection[NotesClient]) -> None:
        self.answers = iter(["allow", "reject", None])  # the user's answers; None: presses Stop
        self.asked = asyncio.Event()

    async def read_text_file(self, params: acp.ReadTextFileRequest) -> acp.ReadTextFileResponse:
        return acp.ReadTextFileResponse(content=Path(params.path).read_text())

    async def request_permission(self, params: acp.RequestPermissionRequest) -> acp.RequestPermissionResponse:
        answer = next(self.answers)
        self.asked.set()
        while answer is None:  # the user never answers: Stop (session/cancel) answers it "cancelled"
            await asyncio.Event().wait()
        return acp.RequestPermissionResponse(
            outcome=acp.SelectedRequestPermissionOutcome(option_id=acp.PermissionOptionId(answer))
        )


async def main(notes: str, *agent: str) -> None:
    async with acp.spawn_agent(NotesClient, *agent, validate_outgoing=True) as conn:
        fs = acp.ClientCapabilities(fs=acp.FileSystemCapabilities(read_text_file=True))
        await conn.initialize(acp.InitializeRequest(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=fs))
        sid = (await conn.new_session(acp.NewSessionRequest(cwd=str(Path.cwd()), mcp_servers=[]))).session_id
        for turn in (1, 2, 3):
            conn.handler.asked.clear()
            prompt = asyncio.create_task(conn.prompt(acp.PromptRequest(session_id=sid, prompt=[acp.text(notes)])))
            if turn == 3:
                await conn.handler.asked.wait()
                await conn.cancel(acp.CancelNotification(session_id=sid))
            stop, session = (await prompt).stop_reason.value, conn.sessions[sid]
            tool = list(session.tool_calls.values())[-1].status
            last = session.history[-1]
            said = last.value(session).content if isinstance(last, acp.AgentMessageEntry) else []
            text = "".join(b.text for b in said if isinstance(b, acp.TextContentBlock)).strip()
            print(f"turn {turn}: {stop}; tool {tool.value if tool else ''}; {text}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
