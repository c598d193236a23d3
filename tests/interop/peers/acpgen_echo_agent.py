"""Echo agent built on acpgen's generated protocol layer (``acp_v1`` or
``acp_v2``, served with ``run_agent_stdio``): the same behaviour as the SDK
echo agents of tests/interop.

It answers initialize and session/new, streams each prompt's text back word by
word as ``agent_message_chunk`` session updates (``--delay`` seconds apart) and
ends the turn with ``end_turn``, or with ``cancelled`` once session/cancel has
arrived. v1 ends a turn with the session/prompt response; v2 answers
session/prompt at once with the user message id, echoes the prompt as
``user_message``, and ends the turn with an idle ``state_update``.

    python acpgen_echo_agent.py [--protocol v1|v2] [--delay SECONDS] [--listen] [--trace FILE]

With ``--trace FILE`` the connection carries W3C trace context in ``_meta``
and writes its messages and request spans to FILE (JSON Lines).

With ``--listen`` it serves ``serve_agent`` (HTTP and WebSocket on ``/acp``) on
a free loopback port, printed as ``LISTENING <port>``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import re
import sys
import typing
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))

INFO = {"name": "acpgen-echo-agent", "version": "1"}


def words(blocks) -> list[str]:
    return re.findall(r"\S+\s*", "".join(getattr(block, "text", "") for block in blocks))


class EchoAgent:
    """What v1 and v2 share: sessions, cancellation, streaming the words."""

    def __init__(self, acp, conn, delay: float) -> None:
        self.acp, self.conn, self.delay = acp, conn, delay
        self.cancelled: dict[str, asyncio.Event] = {}

    async def new_session(self, params):
        session_id = uuid.uuid4().hex
        self.cancelled[session_id] = asyncio.Event()
        return self.acp.NewSessionResponse(session_id=session_id)

    async def cancel(self, params) -> None:
        self.cancelled[params.session_id].set()

    async def stream(self, params, chunk) -> str:
        """Sends ``chunk(word)`` per word; returns the stop reason."""
        cancelled = self.cancelled[params.session_id]
        cancelled.clear()
        for word in words(params.prompt):
            if cancelled.is_set():
                break
            await self.update(params.session_id, chunk(word))
            await asyncio.sleep(self.delay)
        return "cancelled" if cancelled.is_set() else "end_turn"


class EchoAgentV1(EchoAgent):
    async def update(self, session_id: str, update) -> None:
        await self.conn.session_update(self.acp.SessionNotification(session_id=session_id, update=update))

    async def initialize(self, params):
        return self.acp.InitializeResponse(protocol_version=1, agent_info=self.acp.Implementation(**INFO))

    async def prompt(self, params):
        acp = self.acp
        stop_reason = await self.stream(
            params,
            lambda word: acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=word)),
        )
        return acp.PromptResponse(stop_reason=stop_reason)


class EchoAgentV2(EchoAgent):
    IDLE: typing.ClassVar[dict[str, str]] = {
        "end_turn": "EndTurnIdleStateUpdate",
        "cancelled": "CancelledIdleStateUpdate",
    }

    async def update(self, session_id: str, update) -> None:
        await self.conn.session_update(self.acp.UpdateSessionNotification(session_id=session_id, update=update))

    async def initialize(self, params):
        return self.acp.InitializeResponse(protocol_version=2, info=self.acp.Implementation(**INFO))

    async def prompt(self, params):
        user_message_id = uuid.uuid4().hex
        turn = asyncio.ensure_future(self.turn(params, user_message_id))
        turn.add_done_callback(lambda task: task.cancelled() or task.exception())
        return self.acp.PromptResponse(message_id=user_message_id)

    async def turn(self, params, user_message_id: str) -> None:
        acp, agent_message_id, session_id = self.acp, uuid.uuid4().hex, params.session_id
        await self.update(session_id, acp.UserMessageSessionUpdate(message_id=user_message_id, content=params.prompt))
        await self.update(session_id, acp.StateUpdateSessionUpdate(value=acp.StateUpdateRunning()))
        stop_reason = await self.stream(
            params,
            lambda word: acp.AgentMessageChunkSessionUpdate(
                message_id=agent_message_id, content=acp.TextContentBlock(text=word)
            ),
        )
        idle = getattr(acp, self.IDLE[stop_reason])()
        await self.update(session_id, acp.StateUpdateSessionUpdate(value=acp.StateUpdateIdle(value=idle)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=("v1", "v2"), default="v1")
    parser.add_argument("--delay", type=float, default=0.005)
    parser.add_argument("--listen", action="store_true", help="serve over HTTP and WebSocket")
    parser.add_argument("--trace", metavar="FILE", help="carry trace context; write messages and spans to FILE")
    args = parser.parse_args()
    options: dict = {"validate_outgoing": True}
    if args.trace:
        from trace_log import JsonLinesTracer

        options["tracer"] = JsonLinesTracer(args.trace)
    acp = importlib.import_module(f"acp_{args.protocol}")
    agent = EchoAgentV1 if args.protocol == "v1" else EchoAgentV2
    make_agent = lambda conn: agent(acp, conn, args.delay)  # noqa: E731
    if args.listen:  # a free loopback port, printed as LISTENING <port>
        ready = lambda port: print("LISTENING", port, flush=True)  # noqa: E731
        asyncio.run(acp.serve_agent(make_agent, port=0, ready=ready, connection=options))
    else:
        asyncio.run(acp.run_agent_stdio(make_agent, **options))


if __name__ == "__main__":
    main()
