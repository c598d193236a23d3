"""The notes agent of examples/notes_agent.py, on the official Python SDK
(PyPI ``agent-client-protocol`` 0.12.1), written as that SDK's examples
write an agent, for the same behaviour: each prompt names a file; the agent
reports a plan and a read tool call, asks permission, reads the file through
the client (``fs/read_text_file``), completes the tool call with the text and
streams a word count; a rejected permission fails the tool call; a cancelled
turn ends ``cancelled``. The line count is compared in
tests/interop/test_notes.py.

    python sdk_notes_agent.py [DELAY_SECONDS]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any
from uuid import uuid4

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    plan_entry,
    run_agent,
    start_read_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_plan,
    update_tool_call,
)
from acp.interfaces import Client
from acp.schema import AllowedOutcome, PermissionOption, TextContentBlock, ToolCallUpdate

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0


class NotesAgent(Agent):
    _conn: Client

    def __init__(self) -> None:
        self._cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=uuid4().hex)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancelled.setdefault(session_id, asyncio.Event()).set()

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        cancelled = self._cancelled[session_id] = asyncio.Event()
        path = next((block.text for block in prompt if isinstance(block, TextContentBlock)), "")
        name = Path(path).name
        steps = [plan_entry(f"Read {name}"), plan_entry("Count its words")]
        await self._conn.session_update(session_id, update_plan(steps))
        tool_id = uuid4().hex
        await self._conn.session_update(session_id, start_read_tool_call(tool_id, f"Read {name}", path))
        options = [
            PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
            PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        ]
        answer = await self._conn.request_permission(session_id, ToolCallUpdate(tool_call_id=tool_id), options)
        if cancelled.is_set() or answer.outcome.outcome == "cancelled":
            return PromptResponse(stop_reason="cancelled")
        try:
            if not (isinstance(answer.outcome, AllowedOutcome) and answer.outcome.option_id == "allow"):
                raise PermissionError(f"Not allowed to read {name}.")
            await self._conn.session_update(session_id, update_tool_call(tool_id, status="in_progress"))
            text = (await self._conn.read_text_file(session_id, path)).content
            done = update_tool_call(tool_id, status="completed", content=[tool_content(text_block(text))])
            await self._conn.session_update(session_id, done)
            said = f"{name} has {len(text.split())} words."
        except (PermissionError, RequestError) as error:
            await self._conn.session_update(session_id, update_tool_call(tool_id, status="failed"))
            said = str(error) if isinstance(error, PermissionError) else f"Cannot read {name}."
        for word in said.split():
            if cancelled.is_set():
                return PromptResponse(stop_reason="cancelled")
            await self._conn.session_update(session_id, update_agent_message_text(word + " "))
            await asyncio.sleep(DELAY)
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(NotesAgent()))
