"""Echo agent built on the official Python SDK (PyPI ``agent-client-protocol``),
in the pattern of the SDK's own ``examples/echo_agent.py``.

It answers initialize and session/new, streams each prompt's text back word by
word as ``agent_message_chunk`` session updates (``--delay`` seconds apart) and
ends the turn with ``end_turn``, or with ``cancelled`` once session/cancel has
arrived for the session. ACP v1 (the only version the Python SDK speaks).

    python sdk_echo_agent.py [--delay SECONDS]
"""

from __future__ import annotations

import argparse
import asyncio
import re
from typing import Any
from uuid import uuid4

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
    text_block,
    update_agent_message,
)
from acp.interfaces import Client
from acp.schema import Implementation


class EchoAgent(Agent):
    _conn: Client

    def __init__(self, delay: float) -> None:
        self._delay = delay
        self._cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_info=Implementation(name="python-sdk-echo-agent", version="1"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = uuid4().hex
        self._cancelled[session_id] = asyncio.Event()
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list, **kwargs: Any) -> PromptResponse:
        cancelled = self._cancelled[session_id]
        cancelled.clear()
        text = "".join(getattr(block, "text", "") for block in prompt)
        for word in re.findall(r"\S+\s*", text):
            if cancelled.is_set():
                return PromptResponse(stop_reason="cancelled")
            await self._conn.session_update(session_id, update_agent_message(text_block(word)))
            await asyncio.sleep(self._delay)
        return PromptResponse(stop_reason="cancelled" if cancelled.is_set() else "end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancelled[session_id].set()

    async def ext_method(self, method: str, params: dict) -> dict:
        # the inherited stub would answer an unknown extension with a null result
        raise RequestError.method_not_found(method)


async def listen(delay: float) -> None:
    """Serve the SDK's ASGI app (Streamable HTTP and WebSocket on /acp) with
    uvicorn on a free loopback port, printed as ``LISTENING <port>``."""
    import uvicorn
    from acp.http.asgi import create_asgi_app

    app = create_asgi_app(lambda _conn: EchoAgent(delay))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    print("LISTENING", server.servers[0].sockets[0].getsockname()[1], flush=True)
    await task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=0.005)
    parser.add_argument("--listen", action="store_true", help="serve over HTTP and WebSocket")
    args = parser.parse_args()
    asyncio.run(listen(args.delay) if args.listen else run_agent(EchoAgent(args.delay)))


if __name__ == "__main__":
    main()
