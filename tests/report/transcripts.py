"""Transcripts for the report's tests: a small session with everything the
page shows, two sessions, and a long one made of the echo pattern plus tool
calls (valid v1, as the official SDKs' echo agent and client speak)."""

from __future__ import annotations

import json
import time
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


TIMED_START = 1_798_761_600.0
"""2027-01-01T00:00:00Z: the start record of :func:`timed`."""


def stamp(seconds: float) -> str:
    """An RFC 3339 time ``seconds`` after :data:`TIMED_START`, as tap writes it."""
    whole = int(TIMED_START + seconds)
    micros = round((TIMED_START + seconds - whole) * 1e6)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{micros:06d}Z"


def timed(path: Path) -> Path:
    """A recording as ``acpgen tap`` writes it (start record, each line with
    its direction and timestamp, end record), with times chosen so that
    each figure the report shows is known: initialize answered in 10 ms and
    session/new in 30 ms; a first turn of 3.5 s whose first chunk comes
    250 ms after the prompt, with a tool call that takes 3 s, 2 s of it
    waiting for the permission it asks; a second turn of 500 ms (first chunk
    at 100 ms). session/prompt: p50 500 ms, p99 3.5 s."""
    lines = [json.dumps({"start": stamp(0), "recorder": "acpgen tap"})]

    def at(seconds: float, direction: str, **message: Any) -> None:
        lines.append(
            json.dumps({"direction": direction, "timestamp": stamp(seconds), "message": {"jsonrpc": "2.0", **message}})
        )

    def update(seconds: float, **update: Any) -> None:
        at(seconds, "agent_to_client", method="session/update", params={"sessionId": SESSION_A, "update": update})

    c, a = "client_to_agent", "agent_to_client"
    at(0.0, c, id=0, method="initialize", params={"protocolVersion": 1})
    at(0.010, a, id=0, result={"protocolVersion": 1})
    at(0.020, c, id=1, method="session/new", params={"cwd": "/work", "mcpServers": []})
    at(0.050, a, id=1, result={"sessionId": SESSION_A})
    at(
        1.0,
        c,
        id=2,
        method="session/prompt",
        params={"sessionId": SESSION_A, "prompt": [{"type": "text", "text": "Fix the bug"}]},
    )
    update(1.25, sessionUpdate="agent_thought_chunk", content={"type": "text", "text": "Looking."})
    update(1.3, sessionUpdate="tool_call", toolCallId="call_1", title="Edit a.py", kind="edit", status="pending")
    options = [{"optionId": "allow", "name": "Allow once", "kind": "allow_once"}]
    at(
        1.4,
        a,
        id=0,
        method="session/request_permission",
        params={"sessionId": SESSION_A, "toolCall": {"toolCallId": "call_1"}, "options": options},
    )
    at(3.4, c, id=0, result={"outcome": {"outcome": "selected", "optionId": "allow"}})
    update(3.5, sessionUpdate="tool_call_update", toolCallId="call_1", status="in_progress")
    diff = {"type": "diff", "path": "/work/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}
    update(4.3, sessionUpdate="tool_call_update", toolCallId="call_1", status="completed", content=[diff])
    update(4.4, sessionUpdate="agent_message_chunk", content={"type": "text", "text": "Fixed."})
    at(4.5, a, id=2, result={"stopReason": "end_turn"})
    at(
        6.0,
        c,
        id=3,
        method="session/prompt",
        params={"sessionId": SESSION_A, "prompt": [{"type": "text", "text": "Thanks"}]},
    )
    update(6.1, sessionUpdate="agent_message_chunk", content={"type": "text", "text": "You are welcome."})
    at(6.5, a, id=3, result={"stopReason": "end_turn"})
    lines.append(json.dumps({"end": stamp(7.0), "status": 0}))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


TRACE_A = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACE_B = "0af7651916cd43dd8448eb211c80319c"
SPAN_C = "00f067aa0ba902b7"  # the client's span of the first prompt
SPAN_S = "b7ad6b7169203331"  # the agent's span serving it
SPAN_Z = "53995c3f42cd8ad8"  # the agent's span of its permission request


def traced(path: Path) -> Path:
    """A v1 session whose messages carry W3C trace context in ``_meta``, as
    two traced acpgen ends send them: a first prompt (trace A, the client's
    span C) whose updates come from the agent's span S and whose permission
    request from the agent's span Z; the client's cancel, sent in the
    context an update brought (span S); a second prompt in a trace of its
    own (B); and an update with an invalid traceparent (in no trace)."""
    w = Writer()

    def meta(trace: str, span: str) -> dict[str, Any]:
        return {"_meta": {"traceparent": f"00-{trace}-{span}-01"}}

    handshake(w, [SESSION_A])
    text = {"type": "text", "text": "Fix the bug"}
    w.client(id=2, method="session/prompt", params={"sessionId": SESSION_A, "prompt": [text], **meta(TRACE_A, SPAN_C)})
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Looking."}}
    w.agent(method="session/update", params={"sessionId": SESSION_A, "update": chunk, **meta(TRACE_A, SPAN_S)})
    options = [{"optionId": "allow", "name": "Allow once", "kind": "allow_once"}]
    params = {"sessionId": SESSION_A, "toolCall": {"toolCallId": "call_1"}, "options": options}
    w.agent(id=0, method="session/request_permission", params={**params, **meta(TRACE_A, SPAN_Z)})
    w.client(id=0, result={"outcome": {"outcome": "selected", "optionId": "allow"}})
    w.client(method="session/cancel", params={"sessionId": SESSION_A, **meta(TRACE_A, SPAN_S)})
    w.agent(id=2, result={"stopReason": "cancelled"})
    w.client(id=3, method="session/prompt", params={"sessionId": SESSION_A, "prompt": [text], **meta(TRACE_B, SPAN_C)})
    bad = {"_meta": {"traceparent": f"00-{'0' * 32}-{SPAN_S}-01"}}
    w.agent(method="session/update", params={"sessionId": SESSION_A, "update": chunk, **bad})
    w.agent(id=3, result={"stopReason": "end_turn"})
    return w.write(path)
