"""An ACP agent that counts the words of the file its prompt names, read through the client:
a plan, a read tool call, a permission request, fs/read_text_file; session/cancel needs no code
here. Driven by examples/notes_client.py. Usage: python examples/notes_agent.py [DELAY]"""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1 as acp  # noqa: E402

DELAY = float(sys.argv[1]) if __name__ == "__main__" and len(sys.argv) > 1 else 0.0
Kind = acp.PermissionOptionKind
ALLOW = acp.PermissionOption(option_id=acp.PermissionOptionId("allow"), name="Allow", kind=Kind.ALLOW_ONCE)
REJECT = acp.PermissionOption(option_id=acp.PermissionOptionId("reject"), name="Reject", kind=Kind.REJECT_ONCE)


class NotesAgent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection[NotesAgent]) -> None:
        self.conn = conn

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        return acp.NewSessionResponse(session_id=acp.SessionId(uuid.uuid4().hex))

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        session = self.conn.session(params.session_id)  # typed senders for this session
        path = next((block.text for block in params.prompt if isinstance(block, acp.TextContentBlock)), "")
        name, medium, pending = Path(path).name, acp.PlanEntryPriority.MEDIUM, acp.PlanEntryStatus.PENDING
        steps = (f"Read {name}", "Count its words")
        await session.plan([acp.PlanEntry(content=step, priority=medium, status=pending) for step in steps])
        where, kind = [acp.ToolCallLocation(path=path)], acp.ToolKind.READ
        tool = await session.tool_call(f"Read {name}", kind=kind, status=acp.ToolCallStatus.PENDING, locations=where)
        answer = await session.request_permission(acp.ToolCallUpdate(tool_call_id=tool.tool_call_id), [ALLOW, REJECT])
        if isinstance(answer.outcome, acp.CancelledRequestPermissionOutcome):  # the turn was cancelled
            return acp.PromptResponse(stop_reason=acp.StopReason.CANCELLED)
        try:
            if answer.outcome != acp.SelectedRequestPermissionOutcome(option_id=ALLOW.option_id):
                raise PermissionError(f"Not allowed to read {name}.")
            await tool.update(status=acp.ToolCallStatus.IN_PROGRESS)
            text = (await session.read_text_file(path)).content
            await tool.complete(content=[text])
            said = f"{name} has {len(text.split())} words."
        except (PermissionError, acp.RequestError, acp.CapabilityError) as error:
            await tool.fail()
            said = str(error) if isinstance(error, PermissionError) else f"Cannot read {name}."
        for word in said.split():  # session/cancel: no code needed
            await session.message(word + " ")
            await asyncio.sleep(DELAY)
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)


if __name__ == "__main__":
    asyncio.run(acp.run_agent_stdio(NotesAgent, validate_outgoing=True))
