"""Client built on the official Python SDK (PyPI ``agent-client-protocol``).

Spawns an agent command, then runs initialize, session/new, a prompt whose
streamed session/update notifications it collects, and a second, long prompt
that it cancels (session/cancel) as soon as the first chunk of the answer
arrives. Prints a JSON report of what it saw on stdout (see
tests/interop/README.md for its fields), or only the error ``initialize``
was answered with (``initializeError``). ACP v1.

    python sdk_client.py AGENT_PROGRAM [ARGS...]
    python sdk_client.py ws://HOST:PORT/acp | http://HOST:PORT/acp
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from importlib import metadata
from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError, text_block
from acp.schema import ClientCapabilities, Implementation
from acp.stdio import spawn_agent_process

PATIENCE = 180 * float(os.environ.get("ACPGEN_TEST_PATIENCE") or 1)
"""The bound on the whole run, which only a hang exceeds (tests/patience.py)."""

PROMPT = "Hello agent, please echo this back"
LONG_PROMPT = " ".join(f"word{i}" for i in range(300))


class RecordingClient(Client):
    """Collects the session updates of the current turn; cancels on request."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.updates: list[dict] = []
        self.cancel_on_first_chunk = False

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))
        if self.cancel_on_first_chunk and update.session_update == "agent_message_chunk":
            self.cancel_on_first_chunk = False
            await self.conn.cancel(session_id=session_id)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("session/request_permission")


def turn_report(sent: str, stop_reason: str, updates: list[dict]) -> dict:
    chunks = [u for u in updates if u.get("sessionUpdate") == "agent_message_chunk"]
    return {
        "sent": sent,
        "stopReason": stop_reason,
        "updates": [u.get("sessionUpdate") for u in updates],
        "text": "".join(c["content"].get("text", "") for c in chunks),
    }


@contextlib.asynccontextmanager
async def connected(client: RecordingClient, program: str, *args: str):
    """The connection to the agent: a subprocess, or a URL (the SDK's
    WebSocket or Streamable HTTP client)."""
    if program.startswith(("ws://", "http://")):
        from acp import connect_to_agent

        if program.startswith("ws://"):
            from acp.ws import create_websocket_stream

            transport = await create_websocket_stream(program)
        else:
            from acp.http import create_http_stream

            transport = create_http_stream(program)
        conn = connect_to_agent(client, transport)
        try:
            yield conn
        finally:
            await conn.close()
        return
    async with spawn_agent_process(lambda _agent: client, program, *args) as (conn, _process):
        yield conn


async def run(program: str, *args: str) -> dict:
    client = RecordingClient()
    async with connected(client, program, *args) as conn:
        client.conn = conn
        try:
            init = await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="python-sdk-client", version="1"),
            )
        except RequestError as error:  # e.g. -32022 from a v2 agent
            return {"client": "python-sdk", "initializeError": {"code": error.code, "data": error.data}}
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        turns = {}
        for name, text in (("prompt", PROMPT), ("cancel", LONG_PROMPT)):
            client.updates = []
            client.cancel_on_first_chunk = name == "cancel"
            response = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
            turns[name] = turn_report(text, response.stop_reason, client.updates)
        try:
            await conn.ext_method("interop/unknown", {})  # sent as `_interop/unknown`
            unknown = {"result": "answered"}
        except RequestError as error:
            unknown = {"code": error.code}
    return {
        "client": f"python-sdk {metadata.version('agent-client-protocol')}",
        "protocolVersion": init.protocol_version,
        "agentInfo": init.agent_info.model_dump(mode="json", exclude_none=True) if init.agent_info else None,
        "agentCapabilities": init.agent_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
        if init.agent_capabilities
        else None,
        "sessionId": session.session_id,
        **turns,
        "unknownMethod": unknown,
    }


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    report = asyncio.run(asyncio.wait_for(run(*argv[1:]), timeout=PATIENCE))
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
