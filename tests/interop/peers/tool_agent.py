"""An agent built on the generated ``acp_v1`` or ``acp_v2`` that, on each
prompt, starts a read tool call, asks permission for it, finishes it
(completed when allowed, failed otherwise) and streams ``selected
<optionId>`` back word by word; a v2 turn ends with an idle state_update.

    python tool_agent.py [--protocol v1|v2]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))

TITLE = "Read notes.txt"


def options(acp):
    kind = acp.PermissionOptionKind
    return [
        acp.PermissionOption(option_id=acp.PermissionOptionId("allow"), name="Allow", kind=kind.ALLOW_ONCE),
        acp.PermissionOption(option_id=acp.PermissionOptionId("reject"), name="Reject", kind=kind.REJECT_ONCE),
    ]


def make_agent(acp):
    v2 = acp.PROTOCOL_VERSION == 2

    class ToolAgent(acp.Agent):
        def __init__(self, conn) -> None:
            self.conn = conn

        async def initialize(self, params):
            if v2:
                info = acp.Implementation(name="tool-agent", version="1")
                return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION, info=info)
            return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION)

        async def new_session(self, params):
            return acp.NewSessionResponse(session_id=acp.SessionId(f"tool-{uuid.uuid4().hex}"))

        async def prompt(self, params):
            if not v2:
                return acp.PromptResponse(stop_reason=await self._turn(params))
            message_id = acp.MessageId(uuid.uuid4().hex)
            self.conn.start_session_work(params.session_id, self._v2_turn(params, message_id))
            return acp.PromptResponse(message_id=message_id)

        async def _v2_turn(self, params, message_id) -> None:
            session = self.conn.session(params.session_id)
            await session.user_message(message_id, content=params.prompt)
            await session.state_update(acp.StateUpdateRunning())
            stop = await self._turn(params)
            idle = acp.EndTurnIdleStateUpdate() if stop == "end_turn" else acp.CancelledIdleStateUpdate()
            await session.state_update(acp.StateUpdateIdle(value=idle))

        async def _turn(self, params) -> str:
            session = self.conn.session(params.session_id)
            kind, pending = acp.ToolKind.READ, acp.ToolCallStatus.PENDING
            if v2:
                tool = await session.tool_call_update(
                    tool_call_id=acp.ToolCallId("read-1"), title=TITLE, kind=kind, status=pending
                )
                subject = acp.ToolCallRequestPermissionSubject(
                    tool_call=acp.ToolCallUpdate(tool_call_id=tool.tool_call_id)
                )
                answer = await session.request_permission(TITLE, options(acp), subject=subject)
            else:
                tool = await session.tool_call(TITLE, tool_call_id=acp.ToolCallId("read-1"), kind=kind, status=pending)
                answer = await session.request_permission(
                    acp.ToolCallUpdate(tool_call_id=tool.tool_call_id), options(acp)
                )
            outcome = answer.outcome
            if not isinstance(outcome, acp.SelectedRequestPermissionOutcome):
                return "cancelled"
            if outcome.option_id == "allow":
                await tool.complete()
            else:
                await tool.fail()
            words = f"selected {outcome.option_id}".split()
            for word in words:
                if v2:
                    await session.message_chunk(acp.MessageId("reply"), word + " ")
                else:
                    await session.message(word + " ")
            return "end_turn"

    return ToolAgent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=("v1", "v2"), default="v1")
    acp = importlib.import_module(f"acp_{parser.parse_args().protocol}")
    asyncio.run(acp.run_agent_stdio(make_agent(acp), validate_outgoing=True))


if __name__ == "__main__":
    main()
