"""The smallest client on the official Python SDK (PyPI ``agent-client-protocol``):
starts an agent, initializes, opens a session, sends one prompt, prints the
agent's text, and exits 0 when the turn ends. It handles no permission, file
system or terminal request (the SDK's example client refuses them too).

    python sdk_prompt_client.py AGENT_PROGRAM [ARGS...]
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError, text_block
from acp.schema import AgentMessageChunk, ClientCapabilities, Implementation, TextContentBlock
from acp.stdio import spawn_agent_process


class PrintingClient(Client):
    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentMessageChunk) and isinstance(update.content, TextContentBlock):
            print(update.content.text, end="", flush=True)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("session/request_permission")


async def main(program: str, *args: str) -> int:
    client = PrintingClient()
    async with spawn_agent_process(lambda _agent: client, program, *args) as (conn, _process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(),
            client_info=Implementation(name="sdk-prompt-client", version="1"),
        )
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("hello")])
        print(f"\n[{response.stop_reason}]")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:])))
