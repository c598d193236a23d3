"""Transcripts for the report's tests: a small session with everything the
page shows, two sessions, and a long one made of the echo pattern plus tool
calls (valid v1, as the official SDKs' echo agent and client speak)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION_A = "sess_alpha_0001"
SESSION_B = "sess_beta_0002"
XSS = '<img src=x onerror="window.__xss=1"></script><script>window.__xss=2</script>\u2028<!--'

OLD = "def greet(name):\n    print('hi', name)\n\n\ndef main():\n    greet('world')\n"
NEW = "def greet(name: str) -> None:\n    print('hello', name)\n\n\ndef main():\n    greet('world')\n"


class Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def put(self, direction: str, message: dict[str, Any]) -> None:
        self.lines.append(json.dumps({"direction": direction, "message": {"jsonrpc": "2.0", **message}}))

    def client(self, **message: Any) -> None:
        self.put("client_to_agent", message)

    def agent(self, **message: Any) -> None:
        self.put("agent_to_client", message)

    def update(self, session: str, **update: Any) -> None:
        self.agent(method="session/update", params={"sessionId": session, "update": update})

    def write(self, path: Path) -> Path:
        path.write_text("".join(line + "\n" for line in self.lines), encoding="utf-8")
        return path


def handshake(w: Writer, sessions: list[str]) -> None:
    w.client(
        id=0, method="initialize", params={"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}
    )
    w.agent(id=0, result={"protocolVersion": 1, "agentCapabilities": {"loadSession": False}})
    for index, session in enumerate(sessions, 1):
        w.client(id=index, method="session/new", params={"cwd": f"/work/{session}", "mcpServers": []})
        w.agent(id=index, result={"sessionId": session})


def demo(path: Path) -> Path:
    """Two sessions; in the first, a prompt answered with thoughts, a plan, a
    tool call that edits a file (permission asked and granted, a diff), usage
    and streamed text; a plan entry of an unknown priority (a warning at
    /params/update/entries/2/priority) and an update of a tool call never
    started (an error); in the second, a prompt whose text
    is markup that must not run; then, in the first again, a tool call
    that runs the tests in a terminal (created and read through the
    client)."""
    w = Writer()
    handshake(w, [SESSION_A, SESSION_B])
    w.client(
        id=3,
        method="session/prompt",
        params={"sessionId": SESSION_A, "prompt": [{"type": "text", "text": "Add type hints to greet"}]},
    )
    for text in ("Let me look ", "at greet first."):
        w.update(SESSION_A, sessionUpdate="agent_thought_chunk", content={"type": "text", "text": text})
    w.update(
        SESSION_A,
        sessionUpdate="plan",
        entries=[
            {"content": "Read src/app.py", "priority": "high", "status": "completed"},
            {"content": "Annotate greet", "priority": "medium", "status": "in_progress"},
            {"content": "Run the tests", "priority": "urgent", "status": "pending"},
        ],
    )
    w.update(
        SESSION_A,
        sessionUpdate="tool_call",
        toolCallId="call_1",
        title="Edit src/app.py",
        kind="edit",
        status="pending",
        locations=[{"path": "/work/src/app.py", "line": 1}],
    )
    w.agent(
        id=0,
        method="session/request_permission",
        params={
            "sessionId": SESSION_A,
            "toolCall": {"toolCallId": "call_1", "title": "Edit src/app.py"},
            "options": [
                {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        },
    )
    w.client(id=0, result={"outcome": {"outcome": "selected", "optionId": "allow"}})
    w.update(SESSION_A, sessionUpdate="tool_call_update", toolCallId="call_1", status="in_progress")
    w.update(
        SESSION_A,
        sessionUpdate="tool_call_update",
        toolCallId="call_1",
        status="completed",
        content=[{"type": "diff", "path": "/work/src/app.py", "oldText": OLD, "newText": NEW}],
    )
    w.update(SESSION_A, sessionUpdate="usage_update", used=5230, size=200000)
    for text in ("Done: ", "greet now ", "has type hints."):
        w.update(SESSION_A, sessionUpdate="agent_message_chunk", content={"type": "text", "text": text})
    w.update(SESSION_A, sessionUpdate="tool_call_update", toolCallId="call_9", status="completed")
    w.agent(id=3, result={"stopReason": "end_turn"})
    w.client(id=4, method="session/prompt", params={"sessionId": SESSION_B, "prompt": [{"type": "text", "text": XSS}]})
    w.update(SESSION_B, sessionUpdate="agent_message_chunk", content={"type": "text", "text": "Echo: " + XSS})
    w.agent(id=4, result={"stopReason": "end_turn"})
    w.client(
        id=5,
        method="session/prompt",
        params={"sessionId": SESSION_A, "prompt": [{"type": "text", "text": "Run the tests"}]},
    )
    terminal = [{"type": "terminal", "terminalId": "term_1"}]
    w.update(
        SESSION_A, sessionUpdate="tool_call", toolCallId="call_2", title="pytest", kind="execute", content=terminal
    )
    w.agent(id=1, method="terminal/create", params={"sessionId": SESSION_A, "command": "pytest", "args": ["-q"]})
    w.client(id=1, result={"terminalId": "term_1"})
    w.agent(id=2, method="terminal/output", params={"sessionId": SESSION_A, "terminalId": "term_1"})
    w.client(id=2, result={"output": "...\n3 passed in 0.02s\n", "truncated": False, "exitStatus": {"exitCode": 0}})
    w.update(SESSION_A, sessionUpdate="tool_call_update", toolCallId="call_2", status="completed")
    w.agent(id=5, result={"stopReason": "end_turn"})
    return w.write(path)


def long_session(path: Path, lines: int) -> int:
    """About ``lines`` lines of one session: turns of the echo pattern (a
    prompt, its 40 words streamed back, end_turn), each with a plan and a
    tool call that edits a file (pending; a permission round trip; in
    progress; completed with a diff); returns the number written."""
    w = Writer()
    handshake(w, [SESSION_A])
    turn = 0
    while len(w.lines) < lines:
        turn += 1
        words = [f"word{turn}_{i}" for i in range(40)]
        prompt = [{"type": "text", "text": " ".join(words)}]
        w.client(id=turn + 10, method="session/prompt", params={"sessionId": SESSION_A, "prompt": prompt})
        entries = [{"content": f"turn {turn}: edit", "priority": "high", "status": "in_progress"}]
        w.update(SESSION_A, sessionUpdate="plan", entries=entries)
        call = f"call_{turn}"
        w.update(SESSION_A, sessionUpdate="tool_call", toolCallId=call, title=f"Edit file{turn}.py", kind="edit")
        options = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
        w.agent(
            id=turn,
            method="session/request_permission",
            params={"sessionId": SESSION_A, "toolCall": {"toolCallId": call}, "options": options},
        )
        w.client(id=turn, result={"outcome": {"outcome": "selected", "optionId": "allow"}})
        w.update(SESSION_A, sessionUpdate="tool_call_update", toolCallId=call, status="in_progress")
        diff = {
            "type": "diff",
            "path": f"/work/file{turn}.py",
            "oldText": f"x = {turn}\n",
            "newText": f"x = {turn + 1}\n",
        }
        w.update(SESSION_A, sessionUpdate="tool_call_update", toolCallId=call, status="completed", content=[diff])
        for word in words:
            w.update(SESSION_A, sessionUpdate="agent_message_chunk", content={"type": "text", "text": word + " "})
        w.agent(id=turn + 10, result={"stopReason": "end_turn"})
    w.write(path)
    return len(w.lines)
