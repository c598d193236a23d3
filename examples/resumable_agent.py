"""An ACP agent whose sessions survive a dropped connection: it echoes prompts word by word,
logging each update to SESSIONS_DIR first; session/load replays a session to a client that
reconnects, to a new process; session/cancel ends a turn early.
Run by a client: python examples/resumable_agent.py SESSIONS_DIR [DELAY]"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1 as acp  # noqa: E402

SESSIONS = Path(sys.argv[1] if len(sys.argv) > 1 else ".acp-sessions")
DELAY = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0  # between streamed words


class ResumableAgent(acp.Agent):
    def __init__(self, conn: acp.AgentSideConnection[ResumableAgent]) -> None:
        self.conn = conn
        self.cancelled: set[str] = set()

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:
        # The version it speaks, whatever the client asks for: echoing it would promise v2 to a v2 client
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION, agent_capabilities=acp.AgentCapabilities(load_session=True))

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        SESSIONS.mkdir(parents=True, exist_ok=True)
        (SESSIONS / f"{(session_id := uuid.uuid4().hex)}.jsonl").touch()
        return acp.NewSessionResponse(session_id=session_id)

    def _log(self, session_id: str) -> Path:
        if not session_id.isalnum() or not (path := SESSIONS / f"{session_id}.jsonl").is_file():
            raise acp.RequestError(-32602, "Invalid params", {"sessionId": "no such session"})
        return path

    async def _send(self, session_id: str, update: acp.SessionUpdate, live: bool = True) -> None:
        with self._log(session_id).open("a") as log:  # kept first: it outlives the connection
            log.write(json.dumps(acp.encode(update)) + "\n")
        with contextlib.suppress(ConnectionError):  # the client is gone: session/load gives it this
            if live:
                await self.conn.session_update(acp.SessionNotification(session_id=session_id, update=update))

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        self.cancelled.discard(params.session_id)
        for block in params.prompt:  # the client folds its own prompt: kept for session/load
            await self._send(params.session_id, acp.UserMessageChunkSessionUpdate(content=block), live=False)
        for word in [w for b in params.prompt if isinstance(b, acp.TextContentBlock) for w in b.text.split()]:
            if params.session_id in self.cancelled:
                return acp.PromptResponse(stop_reason=acp.StopReason.CANCELLED)
            await self._send(params.session_id, acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=word + " ")))
            await asyncio.sleep(DELAY)
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    async def cancel(self, params: acp.CancelNotification) -> None:
        self.cancelled.add(params.session_id)

    async def load_session(self, params: acp.LoadSessionRequest) -> acp.LoadSessionResponse:
        for line in self._log(params.session_id).read_text().splitlines():
            await self.conn.session_update(acp.decode_class(acp.SessionNotification, {"sessionId": params.session_id, "update": json.loads(line)}))
        return acp.LoadSessionResponse()


if __name__ == "__main__":
    asyncio.run(acp.run_agent_stdio(ResumableAgent))
