"""A resumable echo agent built on the official Python SDK (PyPI
``agent-client-protocol``): it streams each prompt's text back word by word
and logs every update of a session (the prompt as ``user_message_chunk``,
which it does not send) to ``DIR/<session id>.jsonl`` before sending it, so a
new process answers ``session/load`` by replaying the log. It advertises
``loadSession`` and ``sessionCapabilities.resume``. ACP v1.

    python sdk_resumable_agent.py DIR [--delay SECONDS]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
from pathlib import Path
from typing import Any
from uuid import uuid4

from acp import (
    PROTOCOL_VERSION,
    Agent,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
    text_block,
    update_agent_message,
    update_user_message,
)
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    Implementation,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionNotification,
    SessionResumeCapabilities,
)


class ResumableAgent(Agent):
    _conn: Client

    def __init__(self, directory: Path, delay: float) -> None:
        self._directory = directory
        self._delay = delay

    def on_connect(self, conn: Client) -> None:
        self._conn = conn

    def _log(self, session_id: str) -> Path:
        path = self._directory / f"{session_id}.jsonl"
        if not session_id.isalnum() or not path.is_file():
            raise RequestError.invalid_params({"sessionId": session_id})
        return path

    async def _send(self, session_id: str, update: Any, live: bool = True) -> None:
        with self._log(session_id).open("a") as log:
            log.write(json.dumps(update.model_dump(mode="json", by_alias=True, exclude_none=True)) + "\n")
        if live:
            with contextlib.suppress(Exception):  # the client is gone: session/load gives it this
                await self._conn.session_update(session_id, update)

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        capabilities = AgentCapabilities(
            load_session=True, session_capabilities=SessionCapabilities(resume=SessionResumeCapabilities())
        )
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=capabilities,
            agent_info=Implementation(name="python-sdk-resumable-agent", version="1"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = uuid4().hex
        self._directory.mkdir(parents=True, exist_ok=True)
        (self._directory / f"{session_id}.jsonl").touch()
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: list, **kwargs: Any) -> PromptResponse:
        for block in prompt:
            await self._send(session_id, update_user_message(block), live=False)
        text = "".join(getattr(block, "text", "") for block in prompt)
        for word in re.findall(r"\S+\s*", text):
            await self._send(session_id, update_agent_message(text_block(word)))
            await asyncio.sleep(self._delay)
        return PromptResponse(stop_reason="end_turn")

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        for line in self._log(session_id).read_text().splitlines():
            note = SessionNotification.model_validate({"sessionId": session_id, "update": json.loads(line)})
            await self._conn.session_update(session_id, note.update)
        return LoadSessionResponse()

    async def resume_session(self, session_id: str, cwd: str, **kwargs: Any) -> ResumeSessionResponse:
        self._log(session_id)
        return ResumeSessionResponse()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    asyncio.run(run_agent(ResumableAgent(args.directory, args.delay)))


if __name__ == "__main__":
    main()
