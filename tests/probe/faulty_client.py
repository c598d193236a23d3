"""An ACP v1 client with one seeded fault, for the client probe's tests.

Without ``--fault`` it does everything the client checks ask, right: it
starts the agent, initializes advertising a file system and a terminal,
opens a session in its working directory, sends one prompt and exits 0 when
the turn ends (1 when the agent fails it or goes away). It answers a
permission request with the first option offered; when the tool call's
title names ``permission-cancel`` it cancels the turn instead and answers
the request ``cancelled``, and when it names ``cancel-request`` it holds
the request until the agent cancels it ($/cancel_request), then answers
-32800 (a client waiting for its user), or -32603 when that cancel was not
the next message after the request (the probe sends it right behind). It serves fs/* and terminal/* for
real. ``--fault NAME`` (one of FAULTS, named after the check it breaks)
gets one thing wrong. Raw JSON-RPC with threads and the few modules Python
starts with, so that it starts fast (run it with ``python -S``).

    python -S faulty_client.py [--fault NAME] -- AGENT COMMAND...
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

FAULTS = {
    "client-initialize": 'offers protocolVersion "1" (a string)',
    "session-new": "opens its session with a relative cwd",
    "prompt": "prompts a session no session/new opened",
    "updates-before-session-new": "exits on an update for a session it has not been told of yet",
    "update-kinds": "exits on a plan update",
    "update-unknown-kind": "exits on an update of a kind it does not know",
    "updates-after-turn": "stays after its turn, and exits 1 on an update that comes after it",
    "tool-call-patches": "exits on a tool_call_update with a null member",
    "permission-answer": "grants permission with an option that was not offered",
    "permission-cancel": "cancels the turn, then grants the pending permission request",
    "cancel-request": "never answers a permission request the agent cancelled",
    "fs": "answers fs/read_text_file with an empty text",
    "terminal": "advertises terminal, answers terminal/create -32601",
    "error-mid-turn": "stops reading when the agent fails the prompt (the connection stays open)",
    "slow-turn": "cancels the turn when the agent says the turn is slow",
    "disconnect-mid-turn": "waits forever when its agent goes away",
}

KNOWN_KINDS = {
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
    "notice",
    "compaction_update",
    "compaction_summary_chunk",
}


class Client:
    def __init__(self, fault: str | None, command: list[str]) -> None:
        self.fault = fault
        self.agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.lock = threading.Lock()
        self.next_id = 0
        self.answers: dict[int, dict[str, Any]] = {}
        self.methods: dict[int, str] = {}
        self.answered = threading.Condition()
        self.sessions: set[str] = set()
        self.session: str | None = None
        self.turn_over = False
        self.held: dict[Any, dict[str, Any]] = {}
        self.cancelled: set[Any] = set()
        """Ids the agent cancelled before a thread held their request (the
        cancel right behind its request is read before that thread runs)."""
        self.holding = threading.Lock()
        self.awaiting_cancel: Any = None
        """The id of the permission request just read that the agent is to
        cancel right behind it, until the next message is read ..."""
        self.cancel_late: set[Any] = set()
        """... and the ids of those whose cancel was not that next message."""
        self.terminals: dict[str, subprocess.Popen[bytes]] = {}

    # ---------------------------------------------------------------- wire

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        assert self.agent.stdin is not None
        with self.lock:
            try:
                self.agent.stdin.write(data)
                self.agent.stdin.flush()
            except (BrokenPipeError, ValueError):
                pass

    def request(self, method: str, params: Any) -> dict[str, Any]:
        with self.lock:
            request_id = self.next_id
            self.next_id += 1
            self.methods[request_id] = method
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        with self.answered:
            while request_id not in self.answers:
                self.answered.wait()
            return self.answers.pop(request_id)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def result(self, request_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def read(self) -> None:
        assert self.agent.stdout is not None
        for line in self.agent.stdout:
            if line.strip():
                self.dispatch(json.loads(line))
        # The agent went away.
        if self.fault == "disconnect-mid-turn":
            while True:
                time.sleep(3600)
        os._exit(1)

    def dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params") or {}
        if self.awaiting_cancel is not None:
            cancel = method == "$/cancel_request" and params.get("requestId") == self.awaiting_cancel
            if not cancel:
                self.cancel_late.add(self.awaiting_cancel)
            self.awaiting_cancel = None
        if method == "session/request_permission" and "cancel-request" in str(
            (params.get("toolCall") or {}).get("title")
        ):
            self.awaiting_cancel = message.get("id")
        if method is None:
            if self.methods.get(message.get("id")) == "session/prompt":
                # The turn is over: what is read from now on comes after it.
                self.turn_over = True
                if "error" in message and self.fault == "error-mid-turn":
                    while True:  # stop reading; the connection stays open
                        time.sleep(3600)
            with self.answered:
                self.answers[message["id"]] = message
                self.answered.notify_all()
            return
        if "id" not in message:
            if method == "session/update":
                self.updated(params)
            elif method == "$/cancel_request":
                with self.holding:
                    held = self.held.pop(params.get("requestId"), None)
                    if held is None:
                        self.cancelled.add(params.get("requestId"))
                if held is not None:
                    self.answer_cancelled(held["id"])
            return
        threading.Thread(target=self.serve, args=(message,), daemon=True).start()

    # ---------------------------------------------------------------- the agent's notifications

    def updated(self, params: dict[str, Any]) -> None:
        update = params.get("update") or {}
        kind = update.get("sessionUpdate")
        fault = self.fault
        if fault == "updates-before-session-new" and params.get("sessionId") not in self.sessions:
            os._exit(1)
        if fault == "update-kinds" and kind == "plan":
            os._exit(1)
        if fault == "update-unknown-kind" and kind not in KNOWN_KINDS:
            os._exit(1)
        if fault == "updates-after-turn" and self.turn_over:
            os._exit(1)
        if fault == "tool-call-patches" and kind == "tool_call_update" and None in update.values():
            os._exit(1)
        content = update.get("content")
        text = content.get("text", "") if isinstance(content, dict) else ""
        if fault == "slow-turn" and "slow turn" in text:
            self.notify("session/cancel", {"sessionId": params.get("sessionId")})

    # ---------------------------------------------------------------- the agent's requests

    def serve(self, message: dict[str, Any]) -> None:
        method, params, request_id = message["method"], message.get("params") or {}, message["id"]
        try:
            handler = getattr(self, "do_" + method.replace("/", "_").replace("$", ""), None)
            if handler is None:
                self.error(request_id, -32601, "Method not found")
                return
            answer = handler(message, params)
            if answer is not None:
                self.result(request_id, answer)
        except OSError as exc:
            self.error(request_id, -32603, str(exc))

    def do_session_request_permission(self, message: dict[str, Any], params: dict[str, Any]) -> Any:
        title = str((params.get("toolCall") or {}).get("title", ""))
        options = params.get("options") or []
        first = {"outcome": {"outcome": "selected", "optionId": options[0]["optionId"]}}
        if "permission-cancel" in title:
            self.notify("session/cancel", {"sessionId": params.get("sessionId")})
            # Round trips behind the cancel: an agent that ends the turn on the
            # cancel without waiting for this answer has answered the prompt by
            # the time they are answered, and like many clients this one closes
            # when its turn has ended. An agent waiting for it is not hurried.
            for _ in range(3):
                self.request("_faulty/ping", {})
                if self.turn_over:
                    return None
            return first if self.fault == "permission-cancel" else {"outcome": {"outcome": "cancelled"}}
        if "cancel-request" in title:
            with self.holding:
                if message["id"] not in self.cancelled:
                    self.held[message["id"]] = message
                    return None
            self.answer_cancelled(message["id"])
            return None
        if self.fault == "permission-answer":
            return {"outcome": {"outcome": "selected", "optionId": "always"}}
        return first

    def answer_cancelled(self, request_id: Any) -> None:
        """Answer the permission request ``request_id`` the agent cancelled."""
        if self.fault == "cancel-request":
            return
        if request_id in self.cancel_late:
            self.error(request_id, -32603, "the $/cancel_request did not come right behind its request")
        else:
            self.error(request_id, -32800, "Request cancelled")

    def do_fs_write_text_file(self, message: dict[str, Any], params: dict[str, Any]) -> Any:
        with open(params["path"], "w", encoding="utf-8") as file:
            file.write(params["content"])
        return {}

    def do_fs_read_text_file(self, message: dict[str, Any], params: dict[str, Any]) -> Any:
        with open(params["path"], encoding="utf-8") as file:
            content = file.read()
        return {"content": "" if self.fault == "fs" else content}

    def do_terminal_create(self, message: dict[str, Any], params: dict[str, Any]) -> Any:
        if self.fault == "terminal":
            self.error(message["id"], -32601, "Method not found")
            return None
        process = subprocess.Popen(
            [params["command"], *params.get("args", [])], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        terminal_id = f"t{len(self.terminals)}"
        self.terminals[terminal_id] = process
        return {"terminalId": terminal_id}

    def do_terminal_wait_for_exit(self, message: dict[str, Any], params: dict[str, Any]) -> Any:
        return {"exitCode": self.terminals[params["terminalId"]].wait(), "signal": None}

    def do_terminal_output(self, message: dict[str, Any], params: dict[str, Any]) -> Any:
        process = self.terminals[params["terminalId"]]
        assert process.stdout is not None
        output = process.stdout.read().decode("utf-8", "replace") if process.poll() is not None else ""
        status = {"exitCode": process.returncode, "signal": None} if process.returncode is not None else None
        return {"output": output, "truncated": False, "exitStatus": status}

    def do_terminal_release(self, message: dict[str, Any], params: dict[str, Any]) -> Any:
        self.terminals.pop(params["terminalId"], None)
        return {}

    # ---------------------------------------------------------------- the session

    def run(self) -> int:
        threading.Thread(target=self.read, daemon=True).start()
        version: Any = "1" if self.fault == "client-initialize" else 1
        capabilities = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
        init = {
            "protocolVersion": version,
            "clientCapabilities": capabilities,
            "clientInfo": {"name": "faulty", "version": "1"},
        }
        self.request("initialize", init)
        cwd = "." if self.fault == "session-new" else os.getcwd()
        opened = self.request("session/new", {"cwd": cwd, "mcpServers": []})
        session_id = opened.get("result", {}).get("sessionId")
        self.sessions.add(session_id)
        prompted = "not-a-session" if self.fault == "prompt" else session_id
        answer = self.request("session/prompt", {"sessionId": prompted, "prompt": [{"type": "text", "text": "hello"}]})
        if "error" in answer:
            return 1
        if self.fault == "updates-after-turn":
            while True:
                time.sleep(3600)
        return 0


def main() -> None:
    args = sys.argv[1:]
    fault = None
    if args[:1] == ["--fault"]:
        fault, args = args[1], args[2:]
        if fault not in FAULTS:
            sys.exit(f"unknown fault {fault!r}")
    if args[:1] == ["--"]:
        args = args[1:]
    client = Client(fault, args)
    status = client.run()
    assert client.agent.stdin is not None
    client.agent.stdin.close()
    os._exit(status)


if __name__ == "__main__":
    main()
