"""The echo client (echo_client.py) connecting to an agent over the network:
ws:// (needs pip install websockets) or http:// (pip install httpx).

ACP_TOKEN=TOKEN python examples/echo_client_remote.py URL [TEXT]
    e.g. URL = ws://127.0.0.1:8000/acp (echo_agent_remote.py serves it)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import acp_v1 as acp  # noqa: E402
from echo_client import PrintingClient  # noqa: E402


async def main(url: str, text: str) -> None:
    headers = {"Authorization": f"Bearer {os.environ['ACP_TOKEN']}"} if "ACP_TOKEN" in os.environ else {}
    connect = acp.connect_agent_ws if url.startswith(("ws://", "wss://")) else acp.connect_agent_http
    async with connect(PrintingClient, url, headers=headers) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=1))
        session = await conn.new_session(acp.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
        prompt: list[acp.ContentBlock] = [acp.TextContentBlock(text=text)]
        response = await conn.prompt(acp.PromptRequest(session_id=session.session_id, prompt=prompt))
        print(f"\n[{response.stop_reason.value}]")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], " ".join(sys.argv[2:]) or "Hello from the echo client"))
