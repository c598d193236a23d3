"""An echo agent whose sessions, logged to SESSIONS_DIR, survive a dropped connection: resumable_agent.py SESSIONS_DIR [DELAY]"""
import asyncio
import contextlib
import json
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1 as acp  # noqa: E402
ARGS = sys.argv[1:] if __name__ == "__main__" else []  # SESSIONS_DIR [DELAY between words], read only when run
SESSIONS, DELAY = Path((ARGS or [".acp-sessions"])[0]), float((ARGS[1:] or ["0"])[0])


class ResumableAgent(acp.Agent):
    def __init__(self, conn: "acp.AgentSideConnection[ResumableAgent]") -> None:
        self.conn, self.cancelled = conn, set[acp.SessionId]()  # the sessions whose turn session/cancel ends

    async def initialize(self, params: acp.InitializeRequest) -> acp.InitializeResponse:  # its version, not the client's
        return acp.InitializeResponse(protocol_version=acp.PROTOCOL_VERSION, agent_capabilities=acp.AgentCapabilities(load_session=True))

    async def new_session(self, params: acp.NewSessionRequest) -> acp.NewSessionResponse:
        (SESSIONS / f"{(session_id := acp.SessionId(uuid.uuid4().hex))}.jsonl").touch()
        return acp.NewSessionResponse(session_id=session_id)

    def _log(self, session_id: str) -> Path:
        if not session_id.isalnum() or not (path := SESSIONS / f"{session_id}.jsonl").is_file():
            raise acp.RequestError(-32602, "Invalid params", {"sessionId": "no such session"})
        return path

    async def _send(self, session_id: acp.SessionId, update: acp.SessionUpdate) -> None:
        with self._log(session_id).open("a") as log:  # kept first: it outlives the connection
            log.write(json.dumps(acp.encode(update)) + "\n")
        with contextlib.suppress(ConnectionError):  # the client is gone: session/load gives it this
            await self.conn.session_update(acp.SessionNotification(session_id=session_id, update=update))

    async def prompt(self, params: acp.PromptRequest) -> acp.PromptResponse:
        self.cancelled.discard(params.session_id)
        with self._log(params.session_id).open("a") as log:  # the client folds its own prompt: logged for session/load
            log.writelines(json.dumps(acp.encode(acp.UserMessageChunkSessionUpdate(content=b))) + "\n" for b in params.prompt)
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
    SESSIONS.mkdir(parents=True, exist_ok=True)
    asyncio.run(acp.run_agent_stdio(ResumableAgent))
