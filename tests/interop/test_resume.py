"""The generated SessionKeeper (acp_v1) against a resumable agent built on the
official Python SDK (``peers/sdk_resumable_agent.py``), as real processes:
the connection drops in the middle of a streamed prompt, the keeper starts a
new agent process and loads the session from the agent's log.

The SDK cancels a running prompt handler when its connection closes, so the
turn cut by the drop ends there: the agent's log, which a replay sends, has
the part of the turn it got to. The keeper's fold must be exactly that: what
a client that never dropped folds from a ``session/load`` of the finished
session, nothing twice, nothing lost."""

from __future__ import annotations

import sys

import pytest

from ..conftest import load_generated
from ..e2e.test_resume import Folder, run, stdio_conversation
from .harness import PEERS, require_python_sdk

acp = load_generated("acp_v1")
PROMPT = "one two three four five six"


async def loaded(agent: list[str], session_id: str) -> dict:
    """The session as a new client folds it from a session/load replay."""
    box: dict = {}
    async with acp.spawn_agent(lambda c: Folder(c, box), *agent) as conn:
        await conn.initialize(acp.InitializeRequest(protocol_version=1))
        await conn.load_session(acp.LoadSessionRequest(session_id=session_id, cwd="/", mcp_servers=[]))
    return acp.session_to_json(box["session"])


@pytest.mark.parametrize("drop", [0, 3])
def test_keeper_reloads_a_python_sdk_agent_session_after_a_drop_mid_prompt(tmp_path, drop):
    require_python_sdk()
    agent = [sys.executable, str(PEERS / "sdk_resumable_agent.py"), str(tmp_path)]
    snapshot, method, returncode = run(stdio_conversation(agent, drop))
    assert method == "session/load" and returncode == 0
    assert snapshot == run(loaded(agent, snapshot["sessionId"]))
    texts = ["".join(b["text"] for b in m["content"]) for m in snapshot["agentMessages"].values()]
    assert len(texts) == 2 and texts[1] == "seven eight"
    assert len(texts[0].split()) >= drop and PROMPT.startswith(texts[0])  # the words it got to, at least those sent
    users = ["".join(b["text"] for b in m["content"]) for m in snapshot["userMessages"].values()]
    assert users == [PROMPT, "seven eight"]
