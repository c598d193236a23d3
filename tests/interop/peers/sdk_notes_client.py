"""The notes client of examples/notes_client.py, on the official Python SDK
(PyPI ``agent-client-protocol`` 0.12.1), written as that SDK's examples
write a client, for the same behaviour: it starts the agent, lets it read
files (``fs/read_text_file``), and runs three turns on one file, the user
allowing the read, then rejecting it, then pressing Stop while asked (the
client sends ``session/cancel`` and answers the pending permission request
``cancelled``, as ACP requires). It prints each turn's stop reason, tool
call status and message. The line count is compared in
tests/interop/test_notes.py.

    python sdk_notes_client.py NOTES_FILE AGENT_PROGRAM [ARGS...]
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, Client, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
)
from acp.stdio import spawn_agent_process


class NotesClient(Client):
    def __init__(self) -> None:
        self.answers = iter(["allow_once", "reject_once", None])  # None: the user presses Stop
        self.asked = asyncio.Event()
        self.pending: dict[str, list[asyncio.Future[RequestPermissionResponse]]] = {}
        self.status, self.text = "", ""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update in ("tool_call", "tool_call_update") and update.status:
            self.status = update.status
        elif update.session_update == "agent_message_chunk":
            self.text += update.content.text

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=Path(path).read_text())

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        answer = next(self.answers)
        self.asked.set()
        if answer is None:  # answered when the user presses Stop
            future = asyncio.get_running_loop().create_future()
            self.pending.setdefault(session_id, []).append(future)
            return await future
        option = next(o for o in options if o.kind == answer)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option.option_id))

    async def stop(self, conn: Any, session_id: str) -> None:
        await conn.cancel(session_id=session_id)
        for future in self.pending.pop(session_id, []):
            future.set_result(RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled")))


async def main(notes: str, *agent: str) -> None:
    client = NotesClient()
    async with spawn_agent_process(client, *agent) as (conn, _process):
        fs = FileSystemCapabilities(read_text_file=True)
        await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities(fs=fs))
        session = await conn.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        for turn in (1, 2, 3):
            client.asked.clear()
            client.status, client.text = "", ""
            prompt = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[text_block(notes)]))
            if turn == 3:
                await client.asked.wait()
                await client.stop(conn, session.session_id)
            response = await prompt
            print(f"turn {turn}: {response.stop_reason}; tool {client.status}; {client.text.strip()}")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
