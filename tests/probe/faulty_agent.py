"""An ACP v1 agent with one seeded fault, for the probe's tests.

Without ``--fault`` it does everything the probe checks, right: it refuses
requests before initialize, advertises loadSession, session/list, resume,
close and delete, additional directories, HTTP and SSE MCP servers, the
image, audio and embedded-context prompt capabilities (and logout, which it
does not implement and no check exercises),
asks for permission during the probe's first prompt ("hello ..."), streams
each prompt back word by word,
honours session/cancel and $/cancel_request, replays a loaded session,
loads and resumes a session with no turn yet, and lists sessions two to a
page. ``--fault NAME`` (one of FAULTS, named after the check it breaks)
gets one thing wrong. Raw JSON-RPC with threads and the few modules Python
starts with, so that it starts fast (run it with ``python -S``).

    python -S faulty_agent.py [--fault NAME] [--delay SECONDS] [--unstable] [--auth] [--sleep SECONDS] [--fast]
                              [--use-client]

``--unstable`` adds an update only the unstable v1 schema has
(``plan_removed``) to the first prompt, and advertises and serves
session/fork. ``--auth`` advertises the auth
method ``probe-login`` and answers session/new -32000 until the client has
authenticated with it. ``--sleep`` waits that long before reading stdin (an
agent slow to start). ``--fast`` writes the whole turn of a long prompt (the
probe's cancel checks') before it reads another message, as a fast model
would: a cancel lands after the turn has ended. ``--use-client`` uses the
file system and terminal the client advertises, in the first prompt: it
writes a file in the session's working directory and reads it back (by
absolute and relative path), expects a read outside it refused, runs a
command there and reads its output, expects a command elsewhere refused;
anything else ends the prompt with an error saying what.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

FAULTS = {
    "initialize": "asked for version 2, answers version 2 with a v1 initialize result (and speaks v1)",
    "initialize-unsupported-version": "asked for version 999, answers 999",
    "initialize-string-version": "refuses a string protocolVersion with -32602",
    "before-initialize": "answers session/new before initialize",
    "authenticate": "refuses authenticate with -32603 (run with --auth)",
    "session-new": "an invalid session/new result (modes not an object)",
    "prompt": "an invalid agent_message_chunk (no text) in the first prompt",
    "prompt-resource-link": "refuses resource_link blocks",
    "cancel": "ignores session/cancel: ends the turn end_turn once it has answered a request sent after the cancel",
    "cancel-request": "never answers a request cancelled by $/cancel_request",
    "prompt-image": "advertises image prompts, refuses them",
    "prompt-audio": "advertises audio prompts, refuses them",
    "prompt-embeddedContext": "advertises embedded context, refuses it",
    "load-session": "loads a session without replaying it",
    "load-fresh-session": "answers session/load of a session with no turn yet -32002",
    "session-list": "lists no session",
    "session-list-paging": "refuses the nextCursor it gave with -32602",
    "session-resume": "refuses to resume a session that has had a turn with -32603",
    "resume-fresh-session": "answers session/resume of a session with no turn yet -32002",
    "session-close": "refuses to close a session with -32603",
    "session-delete": "answers session/delete but keeps listing the session",
    "session-fork": "answers session/fork with the id of the session forked (run with --unstable)",
    "additional-directories": "refuses additionalDirectories with -32602",
    "mcp-http": "advertises HTTP MCP servers, refuses a session/new with one with -32602",
    "mcp-sse": "advertises SSE MCP servers, refuses a session/new with one with -32602",
    "unknown-method": "answers unknown methods with a null result",
    "malformed-params": "opens a session whatever the params",
    "extension-method": "answers extension methods -32603",
    "notification-reply": "answers every notification with an error response of id null",
    "permission": "asks for permission without options",
    "client-capabilities": "reads a file the client did not advertise it can read",
}


class Agent:
    def __init__(
        self, fault: str | None, delay: float, unstable: bool = False, auth: bool = False, fast: bool = False
    ) -> None:
        self.fault = fault
        self.fast = fast
        self.use_client = False
        self.client: dict[str, Any] = {}
        """The clientCapabilities of initialize."""
        self.cwds: dict[str, str] = {}
        self.unstable = unstable
        self.auth = auth
        self.authenticated = False
        self.cancel_seen = False
        """A session/cancel arrived (the ``cancel`` fault waits for what follows it)."""
        self.answered_after_cancel = False
        self.delay = delay
        self.initialized = False
        self.sessions: dict[str, list[dict[str, Any]]] = {}
        """session id -> the updates of its history"""
        self.opened = 0
        """Sessions opened so far (each gets a new id: s1, s2 ...)."""
        self.cancelled: set[Any] = set()
        """Session ids cancelled by session/cancel, request ids by $/cancel_request."""
        self.turns: set[Any] = set()
        self.answers: dict[Any, Any] = {}
        self.arrived = threading.Condition()
        self.lock = threading.Lock()
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        with self.lock:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
            sys.stdout.flush()

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.send({"id": request_id, "error": {"code": code, "message": message}})

    def ask(self, method: str, params: dict[str, Any]) -> Any:
        with self.arrived:
            self.next_id += 1
            request_id = self.next_id
        self.send({"id": request_id, "method": method, "params": params})
        with self.arrived:
            self.arrived.wait_for(lambda: request_id in self.answers)
            return self.answers.pop(request_id)

    def update(self, session_id: str, update: dict[str, Any], keep: bool = True) -> None:
        if keep:
            self.sessions.setdefault(session_id, []).append(update)
        self.send({"method": "session/update", "params": {"sessionId": session_id, "update": update}})

    def handle(self, message: dict[str, Any]) -> None:
        method, request_id, params = message.get("method"), message.get("id"), message.get("params")
        if method is None:
            with self.arrived:
                self.answers[request_id] = message
                self.arrived.notify_all()
            return
        params = params if isinstance(params, dict) else {}
        if "id" not in message:
            if self.fault == "notification-reply":
                self.error(None, -32601, "Method not found")
            with self.arrived:
                if method == "session/cancel":
                    self.cancel_seen = True
                    if self.fault != "cancel":
                        self.cancelled.add(params.get("sessionId"))
                elif method == "$/cancel_request" and params.get("requestId") in self.turns:
                    self.cancelled.add(("request", params["requestId"]))
                self.arrived.notify_all()
            return
        self.request(method, request_id, params)
        with self.arrived:
            if self.cancel_seen:
                self.answered_after_cancel = True
                self.arrived.notify_all()

    def request(self, method: Any, request_id: Any, params: dict[str, Any]) -> None:
        if method == "initialize":
            self.initialize(request_id, params)
        elif not self.initialized and self.fault != "before-initialize":
            self.error(request_id, -32600, f"initialize first, before {method}")
        elif method == "session/new":
            self.new_session(request_id, params)
        elif method == "session/prompt":
            self.turns.add(request_id)
            if self.fast and len(str(params.get("prompt"))) > 1000:  # a long prompt: no permission asked
                self.prompt(request_id, params)
            else:
                threading.Thread(target=self.prompt, args=(request_id, params), daemon=True).start()
        elif method == "authenticate":
            if self.fault == "authenticate":
                self.error(request_id, -32603, "Internal error")
            elif params.get("methodId") != "probe-login":
                self.error(request_id, -32602, "Invalid params: no such auth method")
            else:
                self.authenticated = True
                self.send({"id": request_id, "result": {}})
        elif method == "session/load":
            session_id = params.get("sessionId")
            if session_id not in self.sessions or (
                self.fault == "load-fresh-session" and not self.sessions[session_id]
            ):
                self.error(request_id, -32002, "Resource not found")
                return
            if self.fault != "load-session":
                for update in self.sessions[session_id]:
                    self.update(session_id, update, keep=False)
            self.send({"id": request_id, "result": {}})
        elif method == "session/list":
            listed = [] if self.fault == "session-list" else list(self.sessions)
            cursor = params.get("cursor")
            if cursor is not None and (self.fault == "session-list-paging" or not str(cursor).isdigit()):
                self.error(request_id, -32602, "Invalid params: cursor")
                return
            start = int(cursor) if cursor is not None else 0
            sessions = [{"sessionId": session_id, "cwd": "/"} for session_id in listed[start : start + 2]]
            result: dict[str, Any] = {"sessions": sessions}
            if start + 2 < len(listed):
                result["nextCursor"] = str(start + 2)
            self.send({"id": request_id, "result": result})
        elif method == "session/resume":
            session_id = params.get("sessionId")
            if self.fault == "resume-fresh-session" and not self.sessions.get(session_id, [None]):
                self.error(request_id, -32002, "Resource not found")
            elif (self.fault == "session-resume" and self.sessions.get(session_id)) or session_id not in self.sessions:
                self.error(request_id, -32603, "Internal error")
            else:
                self.send({"id": request_id, "result": {}})
        elif method == "session/close":
            if self.fault == "session-close":
                self.error(request_id, -32603, "Internal error")
            else:
                self.sessions.pop(params.get("sessionId"), None)
                self.send({"id": request_id, "result": {}})
        elif method == "session/delete":
            if params.get("sessionId") not in self.sessions:
                self.error(request_id, -32002, "Resource not found")
                return
            if self.fault != "session-delete":
                self.sessions.pop(params["sessionId"])
            self.send({"id": request_id, "result": {}})
        elif method == "session/fork" and self.unstable:
            forked = params.get("sessionId")
            if forked not in self.sessions or not isinstance(params.get("cwd"), str):
                self.error(request_id, -32602, "Invalid params")
                return
            if self.fault == "session-fork":
                self.send({"id": request_id, "result": {"sessionId": forked}})
                return
            session_id = self.open_session(params["cwd"])
            self.sessions[session_id] = list(self.sessions[forked])
            self.send({"id": request_id, "result": {"sessionId": session_id}})
        elif isinstance(method, str) and method.startswith("_"):
            if self.fault == "extension-method":
                self.error(request_id, -32603, "Internal error")
            else:
                self.error(request_id, -32601, "Method not found")
        elif self.fault == "unknown-method":
            self.send({"id": request_id, "result": None})
        else:
            self.error(request_id, -32601, "Method not found")

    def initialize(self, request_id: Any, params: dict[str, Any]) -> None:
        version = params.get("protocolVersion")
        if isinstance(version, str):
            if self.fault == "initialize-string-version":
                self.error(request_id, -32602, "Invalid params: protocolVersion")
                return
            version = 0
        if not isinstance(version, int):
            self.error(request_id, -32602, "Invalid params: protocolVersion")
            return
        answer = 999 if version == 999 and self.fault == "initialize-unsupported-version" else 1
        if version == 2 and self.fault == "initialize":
            answer = 2
        capabilities = {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}, "additionalDirectories": {}},
            "auth": {"logout": {}},
        }
        if self.unstable:
            capabilities["sessionCapabilities"]["fork"] = {}
        result: dict[str, Any] = {
            "protocolVersion": answer,
            "agentCapabilities": capabilities,
            "agentInfo": {"name": "faulty-agent", "version": "1"},
        }
        client = params.get("clientCapabilities")
        self.client = client if isinstance(client, dict) else {}
        if self.auth:
            result["authMethods"] = [{"id": "probe-login", "name": "Probe login"}]
        self.initialized = True
        self.send({"id": request_id, "result": result})

    def new_session(self, request_id: Any, params: dict[str, Any]) -> None:
        valid = isinstance(params.get("cwd"), str) and isinstance(params.get("mcpServers"), list)
        if self.auth and not self.authenticated:  # before the params, as an agent gated by auth may
            self.error(request_id, -32000, "Authentication required")
            return
        if not valid and self.fault != "malformed-params":
            self.error(request_id, -32602, "Invalid params")
            return
        servers = params.get("mcpServers") if isinstance(params.get("mcpServers"), list) else []
        kinds = {server.get("type") for server in servers if isinstance(server, dict)}
        if {"mcp-http": "http", "mcp-sse": "sse"}.get(self.fault or "") in kinds:
            self.error(request_id, -32602, "Invalid params: unsupported MCP server")
            return
        extra = params.get("additionalDirectories") or []
        if extra and (
            self.fault == "additional-directories"
            or not isinstance(extra, list)
            or not all(isinstance(d, str) and d.startswith("/") and os.path.isdir(d) for d in extra)
        ):
            self.error(request_id, -32602, "Invalid params: additionalDirectories")
            return
        session_id = self.open_session(params["cwd"] if isinstance(params.get("cwd"), str) else "/")
        result: dict[str, Any] = {"sessionId": session_id}
        if self.fault == "session-new":
            result["modes"] = 5
        self.send({"id": request_id, "result": result})

    def open_session(self, cwd: str) -> str:
        self.opened += 1
        session_id = f"s{self.opened}"
        self.sessions[session_id] = []
        self.cwds[session_id] = cwd
        return session_id

    def prompt(self, request_id: Any, params: dict[str, Any]) -> None:
        session_id = params.get("sessionId")
        blocks = params.get("prompt") if isinstance(params.get("prompt"), list) else []
        if session_id not in self.sessions:
            self.error(request_id, -32002, "Resource not found")
            return
        kinds = {block.get("type") for block in blocks if isinstance(block, dict)}
        refused = {"prompt-resource-link": "resource_link", "prompt-image": "image", "prompt-audio": "audio"}
        if refused.get(self.fault or "") in kinds or (self.fault == "prompt-embeddedContext" and "resource" in kinds):
            self.error(request_id, -32602, "Invalid params: unsupported content")
            return
        self.cancelled.discard(session_id)
        words = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text").split()
        first = bool(words) and words[0] == "hello"
        if first:
            self.side_requests(session_id)
            wrong = self.client_round_trip(session_id) if self.use_client else None
            if wrong is not None:
                self.error(request_id, -32603, f"Internal error: the client's {wrong}")
                return
        for number, word in enumerate(words):
            if number == 1 and self.fault == "cancel" and len(words) > 100:
                with self.arrived:  # the cancel must land, and be ignored
                    self.arrived.wait_for(
                        lambda: self.answered_after_cancel or ("request", request_id) in self.cancelled
                    )
            if ("request", request_id) in self.cancelled:
                self.turns.discard(request_id)
                if self.fault != "cancel-request":
                    self.error(request_id, -32800, "Request cancelled")
                return
            if session_id in self.cancelled:
                break
            chunk: dict[str, Any] = {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": word + " "},
            }
            if first and number == 1 and self.fault == "prompt":  # the history keeps the valid chunk
                self.sessions[session_id].append(chunk)
                chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}}
                self.update(session_id, chunk, keep=False)
            else:
                self.update(session_id, chunk)
            if not self.fast:
                time.sleep(self.delay)
        self.turns.discard(request_id)
        stop = "cancelled" if session_id in self.cancelled else "end_turn"
        self.send({"id": request_id, "result": {"stopReason": stop}})

    def client_round_trip(self, session_id: str) -> str | None:
        """Use what the client advertised; what went wrong, or None."""
        cwd = self.cwds[session_id]
        fs = self.client.get("fs") if isinstance(self.client.get("fs"), dict) else {}
        if fs.get("readTextFile") and fs.get("writeTextFile"):
            path = cwd.rstrip("/") + "/probe-fs.txt"
            wrote = self.ask("fs/write_text_file", {"sessionId": session_id, "path": path, "content": "one\ntwo\n"})
            if "error" in wrote:
                return f"fs/write_text_file failed: {wrote['error']}"
            for asked in (path, "probe-fs.txt"):
                read = self.ask("fs/read_text_file", {"sessionId": session_id, "path": asked, "line": 2})
                if read.get("result") != {"content": "two\n"}:
                    return f"fs/read_text_file of {asked} answered {read}"
            outside = self.ask("fs/read_text_file", {"sessionId": session_id, "path": "/etc/hostname"})
            if "error" not in outside:
                return f"fs/read_text_file read /etc/hostname, outside the session's directory: {outside}"
        if self.client.get("terminal") is True:
            script = "import os; print(os.getcwd())"
            create = {"sessionId": session_id, "command": sys.executable, "args": ["-S", "-c", script]}
            made = self.ask("terminal/create", create)
            terminal = made.get("result", {}).get("terminalId")
            if terminal is None:
                return f"terminal/create answered {made}"
            ids = {"sessionId": session_id, "terminalId": terminal}
            exited = self.ask("terminal/wait_for_exit", ids)
            output = self.ask("terminal/output", ids)
            self.ask("terminal/release", ids)
            if exited.get("result", {}).get("exitCode") != 0:
                return f"terminal/wait_for_exit answered {exited}"
            if output.get("result", {}).get("output", "").strip() != cwd:
                return f"terminal ran in {output} , not in {cwd}"
            elsewhere = self.ask("terminal/create", {**create, "cwd": "/"})
            if "error" not in elsewhere:
                return f"terminal/create ran a command in /, outside the session's directory: {elsewhere}"
        return None

    def side_requests(self, session_id: str) -> None:
        tool_call = {"toolCallId": "t1", "title": "Write probe.txt", "kind": "edit", "status": "pending"}
        self.update(session_id, {"sessionUpdate": "tool_call", **tool_call})
        options = [
            {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
            {"optionId": "no", "name": "Reject", "kind": "reject_once"},
        ]
        permission: dict[str, Any] = {"sessionId": session_id, "toolCall": {"toolCallId": "t1"}}
        if self.fault != "permission":
            permission["options"] = options
        self.ask("session/request_permission", permission)
        if self.fault == "client-capabilities":
            self.ask("fs/read_text_file", {"sessionId": session_id, "path": "/etc/hostname"})
        done = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}
        self.update(session_id, done)
        if self.unstable:
            self.update(session_id, {"sessionUpdate": "plan_removed", "planId": "p1"})


def main() -> None:
    args = sys.argv[1:]
    fault = args[args.index("--fault") + 1] if "--fault" in args else None
    delay = float(args[args.index("--delay") + 1]) if "--delay" in args else 0.002
    if fault is not None and fault not in FAULTS:
        sys.exit(f"unknown fault {fault!r}: one of {', '.join(FAULTS)}")
    if "--sleep" in args:
        time.sleep(float(args[args.index("--sleep") + 1]))
    agent = Agent(fault, delay, "--unstable" in args, "--auth" in args, "--fast" in args)
    agent.use_client = "--use-client" in args
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            agent.error(None, -32700, "Parse error")
            continue
        if isinstance(message, dict):
            agent.handle(message)


if __name__ == "__main__":
    main()
