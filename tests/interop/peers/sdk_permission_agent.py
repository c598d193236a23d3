"""Permission agent built on the official Python SDK (PyPI ``agent-client-protocol``):
announces a tool call, then at once asks permission for it.

It answers initialize and session/new; on each session/prompt it sends a
``tool_call`` session update (toolCallId ``read-1``, status pending) and,
without waiting, a ``session/request_permission`` for that tool call (options
``allow`` and ``reject``), then reports the outcome as one
``agent_message_chunk`` (``selected <optionId>`` or ``cancelled``) and ends the
turn with ``end_turn``. A failed permission request ends the turn with the
error. ACP v1 (the only version the Python SDK speaks).

    python sdk_permission_agent.py
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import uuid4

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    run_agent,
    start_tool_call,
    text_block,
    update_agent_message,
)
from acp.interfaces import Client
from acp.schema import AllowedOutcome, Implementation, PermissionOption, ToolCallUpdate

TOOL_CALL_ID = "read-1"


class PermissionAgent(Agent):
    _conn: Client

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_info=Implementation(name="python-sdk-permission-agent", version="1"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=uuid4().hex)

    async def prompt(self, session_id: str, prompt: list, **kwargs: Any) -> PromptResponse:
        call = start_tool_call(TOOL_CALL_ID, "Read README.md", kind="read", status="pending")
        await self._conn.session_update(session_id, call)
        answer = await self._conn.request_permission(
            session_id,
            ToolCallUpdate(tool_call_id=TOOL_CALL_ID),
            [
                PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
                PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        outcome = answer.outcome
        text = f"selected {outcome.option_id}" if isinstance(outcome, AllowedOutcome) else "cancelled"
        await self._conn.session_update(session_id, update_agent_message(text_block(text)))
        return PromptResponse(stop_reason="end_turn")


def main() -> None:
    asyncio.run(run_agent(PermissionAgent()))


if __name__ == "__main__":
    main()
