"""The fold of a transcript into what an editor shows: one pass over the
lines, in Python, so that the page only draws.

Each line of the transcript lands in exactly one :class:`Row` (its ``lines``),
which is what the page pins a finding of that line to:

==============  ==========================================================
row kind        made of
==============  ==========================================================
``user``        a ``session/prompt`` request (and, in v2, the agent's echo
                of it), or ``user_message_chunk`` updates joined
``agent``       consecutive ``agent_message_chunk`` updates joined (v2: of one
                ``messageId``), or a whole ``agent_message``
``thought``     the same for ``agent_thought_chunk`` / ``agent_thought``
``tool``        a tool call and every update of it: title, kind, the status
                each update set, content (text, a diff as a line diff, a
                terminal, with its command, output and exit status as far as
                the transcript tells), locations, raw input and output
``plan``        a plan update: its entries
``permission``  a ``session/request_permission`` request and its answer
``usage``       a ``usage_update``
``turn``        the end of a turn: the prompt's response (v2: an idle
                ``state_update``), with its stop reason
``rpc``         any other message, with its response (or error) when it is a
                request
``event``       any other session update (commands, mode, session info ...)
``bad``         a line that is not a message (not JSON, too long ...)
==============  ==========================================================

The fold reads the JSON as it is, v1 and v2 alike; it needs no package
and never raises on what a line holds.

Times come from the records' ``timestamp`` (``acpgen tap`` writes them; a
transcript without them has none of what follows): each row has ``t``, the
milliseconds from the first time in the transcript to its first line; a
request answered has ``ms``, its round trip (a permission request: the
wait for its answer); a turn's end has ``ms`` (the prompt's round trip) and
``first`` (from the prompt to the agent's first message or thought chunk);
a tool call has ``ms`` (from its first update to the one that completed or
failed it) and a ``history`` of every update, in order, each with its
time. :attr:`Fold.latency` holds every round trip by method.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from . import values as v
from .traces import Traces
from .values import MAX_SUMMARY, MAX_TEXT

MAX_BLOCKS = 1000
"""The most content blocks a message joined from chunks keeps."""
MAX_RAW = 64 << 10
"""The longest raw line the page keeps (64 KiB), the rest said to be cut."""
MAX_PAYLOAD = 4096
"""The most of a line a row shows as its raw payload (a line that is no
message, a prompt with no content)."""

CHUNKS = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
WHOLE_MESSAGES = {"user_message": "user", "agent_message": "agent", "agent_thought": "thought"}
DIRECTIONS = {
    "client_to_agent": "c",
    "client->agent": "c",
    "agent_to_client": "a",
    "agent->client": "a",
}


@dataclass
class Row:
    kind: str
    line: int
    """The line the row starts at (1-based)."""
    session: int = -1
    """Index into :attr:`Fold.sessions`, -1 for none."""
    direction: str = ""
    """``c`` (client to agent), ``a`` (agent to client) or ``""`` (not said)."""
    lines: list[int] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    pieces: list[str] = field(default_factory=list)
    """Chunks of text that join the last block of ``data["content"]``, kept
    apart until read (joining them one by one would be quadratic)."""
    size: int = 0
    """The length of that last block, pieces included."""

    def join(self, blocks: list[list[str]]) -> None:
        """Join a chunk's blocks to the message: text to its last text
        block, up to :data:`MAX_TEXT` characters (the rest counted in
        ``cut``), other blocks after it, up to :data:`MAX_BLOCKS`."""
        content: list[list[str]] = self.data["content"]
        for kind, text in blocks:
            if kind == "text" and content and content[-1][0] == "text":
                if self.size + len(text) > MAX_TEXT:
                    keep = max(0, MAX_TEXT - self.size)
                    self.data["cut"] = self.data.get("cut", 0) + len(text) - keep
                    text = text[:keep]
                self.pieces.append(text)
                self.size += len(text)
            elif len(content) < MAX_BLOCKS:
                self.flush()
                content.append([kind, text])
                self.size = len(text)
            else:
                self.data["cut"] = self.data.get("cut", 0) + len(text)

    def flush(self) -> None:
        if self.pieces:
            last = self.data["content"][-1]
            last[1] = "".join([last[1], *self.pieces])
            self.pieces = []

    def to_json(self) -> dict[str, Any]:
        self.flush()
        return {"k": self.kind, "n": self.line, "s": self.session, "d": self.direction, "l": self.lines, **self.data}


@dataclass
class Session:
    id: str
    line: int
    cwd: str = ""
    title: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "line": self.line, "cwd": self.cwd, "title": self.title}


class Fold:
    """Feed it the parsed lines in order (:meth:`add`, :meth:`bad`); read
    :attr:`rows` and :attr:`sessions`."""

    def __init__(self) -> None:
        self.rows: list[Row] = []
        self.sessions: list[Session] = []
        self.session_index: dict[str, int] = {}
        self.pending: dict[tuple[str, str], int] = {}
        """(direction of the request, its id as JSON) -> its row"""
        self.methods: dict[int, str] = {}
        """row of a request -> its method"""
        self.open: dict[int, tuple[str, str, int]] = {}
        """session -> (row kind, message id, row) of the message chunks may join"""
        self.echo: dict[int, int] = {}
        """session -> the user row of a prompt the agent has not echoed yet (v2)"""
        self.tools: dict[tuple[int, str], int] = {}
        """(session, tool call id) -> its row"""
        self.last: dict[int, int] = {}
        """session -> its newest row"""
        self.terminals: dict[str, dict[str, str]] = {}
        """terminal id -> its command, output and exit status, as far as
        the transcript tells (a tool call's terminal content shows them)"""
        self.asked: dict[int, dict[str, Any]] = {}
        """row of a terminal/* request -> its params"""
        self.origin: float | None = None
        """The first time in the transcript (seconds since the epoch)."""
        self.now: float | None = None
        """The time of the line being folded, in milliseconds from :attr:`origin`."""
        self.sent: dict[int, float] = {}
        """row of a request in flight -> when it was sent"""
        self.latency: dict[str, list[float]] = {}
        """method -> the round trip of each of its requests answered, in ms"""
        self.turns: dict[int, list[Any]] = {}
        """session -> [when its prompt was sent, ms to the first chunk or None]"""
        self.permissions: dict[tuple[int, str], list[int]] = {}
        """(session, tool call id) -> the permission requests for it (rows)"""
        self.tool_start: dict[int, float] = {}
        """row of a tool call -> when its first update came"""
        self.messages: dict[int, tuple[str, str, float | None]] = {}
        """line -> (``q`` request, ``n`` notification, ``r`` response, ``e``
        error response; its method, a response's that of its request; its
        time) of every line that is a message (the sequence view)"""
        self.pairs: dict[int, int] = {}
        """line of a request -> line of its response, and back"""
        self.traces = Traces()
        """the messages carrying a ``traceparent``, by trace (see ``traces``)"""

    # -- lines -------------------------------------------------------------

    def bad(self, n: int, why: str, direction: str = "", raw: str | None = None) -> None:
        """Line ``n`` is no message: why, and the line (``raw``) as far as
        :data:`MAX_PAYLOAD` when it is at hand."""
        data: dict[str, Any] = {"why": why}
        if raw is not None:
            data["raw"] = [[n, v.cut(raw, MAX_PAYLOAD)]]
        self._row("bad", n, -1, direction, **data)

    def add(self, n: int, value: Any) -> None:
        """Line ``n``, parsed."""
        direction = ""
        message = value
        self.now = None
        if _recorder_record(value):  # acpgen tap's start and end records: no traffic
            if self.origin is None and isinstance(value.get("start"), str):
                self.origin = _seconds(value["start"])
            return
        if isinstance(value, dict) and "jsonrpc" not in value and ("direction" in value or "message" in value):
            direction = DIRECTIONS.get(str(value.get("direction")), "")
            when = _seconds(value.get("timestamp"))
            if when is not None:
                if self.origin is None:
                    self.origin = when
                self.now = round((when - self.origin) * 1000, 3)
            if "message" not in value:  # tap's record of a line that was no JSON value
                self._unrecorded(n, direction, value)
                return
            message = value["message"]
        if not isinstance(message, dict):
            self.bad(n, "not a JSON-RPC message (an object)", direction, v.dump(message))
            return
        method = message.get("method")
        if isinstance(method, str):
            self.traces.see(n, direction, message)
            if "id" in message:
                self.messages[n] = ("q", v.cut(method, MAX_SUMMARY), self.now)
                self._request(n, direction, message, method)
            else:
                self.messages[n] = ("n", _labelled(method, message), self.now)
                self._notification(n, direction, message, method)
        elif "id" in message and ("result" in message or "error" in message):
            self._response(n, direction, message)
        else:
            self.bad(n, "neither a request, a notification nor a response", direction, v.dump(message))

    def _unrecorded(self, n: int, direction: str, record: dict[str, Any]) -> None:
        text, omitted = record.get("line"), record.get("omitted")
        if isinstance(text, str):
            self.bad(n, "not JSON (acpgen tap recorded the line as text)", direction, v.as_text(text))
        elif isinstance(omitted, int) and not isinstance(omitted, bool):
            self.bad(n, f"a line of {omitted} bytes, over the recorder's limit: not recorded", direction)
        else:
            self.bad(n, "a record with neither a message nor a line", direction, v.dump(record))

    # -- what each message becomes ------------------------------------------

    def _request(self, n: int, direction: str, message: dict[str, Any], method: str) -> None:
        params = v.as_object(message.get("params"))
        session = self._session_of(params, n, opens=method in ("session/load", "session/resume"))
        if method == "session/prompt":
            content = v.blocks(params.get("prompt"))
            row = self._row("user", n, session, direction, content=content)
            if not content or not isinstance(params.get("prompt"), list):  # nothing to show but the line
                self.rows[row].data["raw"] = [[n, v.cut(v.dump(message), MAX_PAYLOAD)]]
            if session >= 0:
                self.echo[session] = row
                if self.now is not None:
                    self.turns[session] = [self.now, None]
        elif method == "session/request_permission":
            tool = v.as_object(params.get("toolCall"))
            tool_id = v.as_text(tool.get("toolCallId"))
            title = v.as_text(tool.get("title"))
            known = self.tools.get((session, tool_id))
            if not title and known is not None:
                title = self.rows[known].data.get("title", "")
            options = [
                [v.as_text(o.get("optionId")), v.as_text(o.get("name")), v.as_text(o.get("kind"))]
                for o in v.objects(params.get("options"))
            ]
            row = self._row("permission", n, session, direction, title=title, tool=tool_id, options=options)
            self.permissions.setdefault((session, tool_id), []).append(row)
            if known is not None:
                self.rows[row].data["toolRow"] = known
                self.rows[known].data["history"].append({"n": n, "t": self.now, "permission": row})
        else:
            cwd = v.as_text(params.get("cwd")) if method == "session/new" and session < 0 else ""
            row = self._row("rpc", n, session, direction, method=method, params=v.summary(params), cwd=cwd)
        self.methods[row] = method
        if self.now is not None:
            self.sent[row] = self.now
        if method.startswith("terminal/"):
            self.asked[row] = params
        self.pending[(direction, v.key(message.get("id")))] = row

    def _response(self, n: int, direction: str, message: dict[str, Any]) -> None:
        key = v.key(message.get("id"))
        opposite = {"c": "a", "a": "c"}.get(direction, "")
        index = self.pending.pop((opposite, key), None)
        if index is None and direction:
            index = self.pending.pop(("", key), None)
        error = message.get("error")
        result = message.get("result")
        answer = "e" if "error" in message else "r"
        if index is None:
            self.messages[n] = (answer, "", self.now)
            self._row("rpc", n, -1, direction, method="", response=True, **v.outcome(result, error))
            return
        row = self.rows[index]
        method = self.methods.pop(index, "")
        self.messages[n] = (answer, v.cut(method, MAX_SUMMARY), self.now)
        self.pairs[row.line] = n
        self.pairs[n] = row.line
        row.lines.append(n)
        sent = self.sent.pop(index, None)
        took = round(self.now - sent, 3) if sent is not None and self.now is not None else None
        if took is not None:
            self.latency.setdefault(method, []).append(took)
        if row.session < 0 and isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            row.session = self._open(result["sessionId"], n, v.as_text(row.data.get("cwd")))
            self.last[row.session] = index
        if row.kind == "permission":
            outcome = v.as_object(v.as_object(result).get("outcome"))
            if error is not None:
                row.data["answer"] = "error: " + v.error_text(error)
            elif outcome.get("outcome") == "selected":
                row.data["answer"] = v.as_text(outcome.get("optionId"))
            else:
                row.data["answer"] = v.as_text(outcome.get("outcome")) or "?"
            row.data["answerLine"] = n
            if took is not None:
                row.data["ms"] = took
        elif method == "session/prompt":
            row.lines.pop()
            stop = v.as_object(result).get("stopReason")
            if error is None and stop is None:  # v2: the turn ends with an idle state_update
                row.lines.append(n)
                return
            usage = v.as_object(result).get("usage")
            end = self._row(
                "turn",
                n,
                row.session,
                direction,
                stop=v.as_text(stop) if error is None else "",
                error=v.error_text(error) if error is not None else "",
                usage=v.pairs(usage) if isinstance(usage, dict) else [],
            )
            self._timed_turn(end, took)
        else:
            row.data.update(v.outcome(result, error))
            if took is not None:
                row.data["ms"] = took
            asked = self.asked.pop(index, None)
            if asked is not None and error is None:
                self._terminal(method, asked, v.as_object(result))

    def _terminal(self, method: str, params: dict[str, Any], result: dict[str, Any]) -> None:
        """What a v1 terminal/* response tells of its terminal."""
        if method == "terminal/create":
            terminal = self._terminal_of(result.get("terminalId"))
            if terminal is not None:
                args = params.get("args")
                words = [params.get("command"), *(args if isinstance(args, list) else [])]
                terminal["command"] = v.cut(" ".join(v.as_text(word) for word in words), MAX_SUMMARY)
            return
        terminal = self._terminal_of(params.get("terminalId"))
        if terminal is None:
            return
        if method == "terminal/output":
            if isinstance(result.get("output"), str):
                terminal["output"] = v.as_text(result["output"])
            if isinstance(result.get("exitStatus"), dict):
                terminal["exit"] = v.exit_status(result["exitStatus"])
        elif method == "terminal/wait_for_exit":
            terminal["exit"] = v.exit_status(result)

    def _terminal_of(self, terminal_id: Any) -> dict[str, str] | None:
        if not isinstance(terminal_id, str):
            return None
        return self.terminals.setdefault(v.cut(terminal_id, MAX_SUMMARY), {"command": "", "output": "", "exit": ""})

    def _notification(self, n: int, direction: str, message: dict[str, Any], method: str) -> None:
        params = v.as_object(message.get("params"))
        session = self._session_of(params, n)
        if method != "session/update" or not isinstance(params.get("update"), dict):
            self._row("rpc", n, session, direction, method=method, params=v.summary(params), notification=True)
            return
        self._update(n, direction, session, params["update"])

    def _update(self, n: int, direction: str, session: int, update: dict[str, Any]) -> None:
        tag = v.as_text(update.get("sessionUpdate"))
        if tag in CHUNKS:
            self._chunk(n, direction, session, CHUNKS[tag], v.as_text(update.get("messageId")), update.get("content"))
        elif tag in WHOLE_MESSAGES:
            kind = WHOLE_MESSAGES[tag]
            content = v.blocks(update.get("content"))
            echoed = self.echo.pop(session, None)
            if kind == "user" and echoed is not None and self.last.get(session) == echoed:
                self.rows[echoed].data["content"] = content
                self.rows[echoed].lines.append(n)
                return
            self._row(kind, n, session, direction, content=content)
        elif tag in ("tool_call", "tool_call_update"):
            self._tool(n, direction, session, update, tag == "tool_call")
        elif tag == "tool_call_content_chunk":
            row = self._tool_row(n, direction, session, v.as_text(update.get("toolCallId")))
            row.data["content"].extend(v.tool_content([update.get("content")]))
        elif tag in ("plan", "plan_update"):
            entries = update.get("entries")
            if entries is None and isinstance(update.get("plan"), dict):
                entries = update["plan"].get("entries", update["plan"].get("items"))
            plan = [
                [v.as_text(e.get("content")), v.as_text(e.get("priority")), v.as_text(e.get("status"))]
                for e in v.objects(entries)
            ]
            self._row("plan", n, session, direction, entries=plan)
        elif tag == "plan_removed":
            self._row("plan", n, session, direction, entries=[], removed=True)
        elif tag == "usage_update":
            self._row(
                "usage", n, session, direction, used=v.scalar(update.get("used")), size=v.scalar(update.get("size"))
            )
            cost = update.get("cost")
            if isinstance(cost, dict):
                self.rows[-1].data["cost"] = f"{v.scalar(cost.get('amount'))} {v.as_text(cost.get('currency'))}".strip()
        elif tag in ("terminal_update", "terminal_output_chunk"):
            terminal = self._terminal_of(update.get("terminalId"))
            if terminal is not None:
                if isinstance(update.get("command"), str):
                    terminal["command"] = v.cut(update["command"], MAX_SUMMARY)
                if isinstance(update.get("output"), str):
                    terminal["output"] = v.as_text(update["output"])
                if isinstance(update.get("data"), str):
                    terminal["output"] = v.cut(terminal["output"] + update["data"])
                if isinstance(update.get("exitStatus"), dict):
                    terminal["exit"] = v.exit_status(update["exitStatus"])
            self._row("event", n, session, direction, label=tag, text=v.event_text(tag, update))
        elif tag == "state_update" and v.as_text(update.get("state")) == "idle":
            end = self._row("turn", n, session, direction, stop=v.as_text(update.get("stopReason")), error="", usage=[])
            turn = self.turns.get(session)
            took = round(self.now - turn[0], 3) if turn is not None and self.now is not None else None
            self._timed_turn(end, took)
        elif tag == "session_info_update" and session >= 0 and isinstance(update.get("title"), str):
            self.sessions[session].title = v.as_text(update["title"])
            self._row("event", n, session, direction, label=tag, text=v.as_text(update["title"]))
        else:
            self._row("event", n, session, direction, label=tag, text=v.event_text(tag, update))

    def _timed_turn(self, end: int, took: float | None) -> None:
        """The times of the turn ``end`` ends: its round trip and its first
        chunk's."""
        turn = self.turns.pop(self.rows[end].session, None)
        if took is not None:
            self.rows[end].data["ms"] = took
        if turn is not None and turn[1] is not None:
            self.rows[end].data["first"] = turn[1]

    def _chunk(self, n: int, direction: str, session: int, kind: str, message_id: str, content: Any) -> None:
        turn = self.turns.get(session)
        if turn is not None and turn[1] is None and kind != "user" and self.now is not None:
            turn[1] = round(self.now - turn[0], 3)
        blocks = v.blocks([content])
        opened = self.open.get(session)
        if opened is not None and opened[0] == kind and opened[1] == message_id and self.last.get(session) == opened[2]:
            row = self.rows[opened[2]]
            row.lines.append(n)
            row.join(blocks)
            return
        index = self._row(kind, n, session, direction, content=[])
        self.rows[index].join(blocks)
        self.open[session] = (kind, message_id, index)

    def _tool(self, n: int, direction: str, session: int, update: dict[str, Any], starts: bool) -> None:
        tool_id = v.as_text(update.get("toolCallId"))
        row = self._tool_row(n, direction, session, tool_id, starts)
        data = row.data
        step: dict[str, Any] = {"n": n, "t": self.now}
        for name in ("title", "kind"):
            if isinstance(update.get(name), str):
                data[name] = v.as_text(update[name])
                step[name] = v.cut(data[name], MAX_SUMMARY)
        status = update.get("status")
        if isinstance(status, str):
            data["status"] = v.as_text(status)
            data["statuses"].append([n, v.as_text(status)])
            step["status"] = data["status"]
        elif starts and not data["statuses"]:
            data["status"] = "pending"
            data["statuses"].append([n, "pending"])
            step["status"] = "pending"
        changed = [name for name in ("content", "locations", "rawInput", "rawOutput") if name in update]
        if changed:
            step["set"] = changed
        data["history"].append(step)
        first = self.tool_start.get(self.tools[(session, tool_id)])
        if step.get("status") in ("completed", "failed") and first is not None and self.now is not None:
            data["ms"] = round(self.now - first, 3)
        if isinstance(update.get("content"), list):
            data["content"] = v.tool_content(update["content"])
        if isinstance(update.get("locations"), list):
            data["locations"] = [
                v.as_text(loc.get("path")) + (f":{v.scalar(loc['line'])}" if loc.get("line") is not None else "")
                for loc in v.objects(update["locations"])
            ]
        for wire, name in (("rawInput", "input"), ("rawOutput", "output")):
            if wire in update:
                data[name] = v.dump(update[wire])

    def _tool_row(self, n: int, direction: str, session: int, tool_id: str, starts: bool = False) -> Row:
        index = self.tools.get((session, tool_id))
        if index is None:
            index = self._row(
                "tool",
                n,
                session,
                direction,
                id=tool_id,
                title="",
                toolKind="",
                status="",
                statuses=[],
                content=[],
                locations=[],
                started=starts,
                history=[],
            )
            self.tools[(session, tool_id)] = index
            if self.now is not None:
                self.tool_start[index] = self.now
            for asked in self.permissions.get((session, tool_id), []):  # asked before the call started
                self.rows[asked].data["toolRow"] = index
                permission = self.rows[asked]
                step = {"n": permission.line, "t": permission.data.get("t"), "permission": asked}
                self.rows[index].data["history"].append(step)
        else:
            self.rows[index].lines.append(n)
            if session >= 0:
                self.open.pop(session, None)
        row = self.rows[index]
        if starts:
            row.data["started"] = True
        return row

    # -- the sequence view ------------------------------------------------------

    def sequence(self, count: int) -> dict[str, Any]:
        """What the sequence view draws of lines 1 to ``count``, one entry a
        line: ``k``, a character each (``q`` request, ``n`` notification,
        ``r`` response, ``e`` error response, ``-`` no message); ``m``, the
        index of its method in ``methods`` (-1: none); ``p``, the line of a
        request's response or a response's request (0: none); ``t``, its
        time in ms (only when the transcript has times; None: not said)."""
        kinds: list[str] = []
        names: dict[str, int] = {}
        method: list[int] = []
        pair: list[int] = []
        times: list[float | None] = []
        for n in range(1, count + 1):
            entry = self.messages.get(n)
            if entry is None:
                kinds.append("-")
                method.append(-1)
                pair.append(0)
                times.append(None)
                continue
            kinds.append(entry[0])
            method.append(names.setdefault(entry[1], len(names)) if entry[1] else -1)
            pair.append(self.pairs.get(n, 0))
            times.append(entry[2])
        out: dict[str, Any] = {"k": "".join(kinds), "methods": list(names), "m": method, "p": pair}
        if self.origin is not None:
            out["t"] = times
        return out

    # -- sessions and rows ----------------------------------------------------

    def _session_of(self, params: dict[str, Any], n: int, opens: bool = False) -> int:
        session = params.get("sessionId")
        if not isinstance(session, str):
            return -1
        if session in self.session_index:
            return self.session_index[session]
        return self._open(session, n, v.as_text(params.get("cwd")) if opens else "")

    def _open(self, session: str, n: int, cwd: str) -> int:
        if session in self.session_index:
            return self.session_index[session]
        self.session_index[session] = len(self.sessions)
        self.sessions.append(Session(v.as_text(session), n, cwd))
        return len(self.sessions) - 1

    def _row(self, kind: str, n: int, session: int, direction: str, **data: Any) -> int:
        if kind == "tool":
            data["kind"] = data.pop("toolKind")
        if self.now is not None:
            data["t"] = self.now
        self.rows.append(Row(kind, n, session, direction, [n], data))
        index = len(self.rows) - 1
        if session >= 0:
            self.last[session] = index
            if kind not in CHUNKS.values():
                self.open.pop(session, None)
        return index


def _labelled(method: str, message: dict[str, Any]) -> str:
    """A notification's method as the sequence view names it: a session
    update with its kind (``session/update agent_message_chunk``)."""
    update = v.as_object(v.as_object(message.get("params")).get("update")).get("sessionUpdate")
    if method == "session/update" and isinstance(update, str):
        return v.cut(f"{method} {update}", MAX_SUMMARY)
    return v.cut(method, MAX_SUMMARY)


def _recorder_record(value: Any) -> bool:
    """Whether ``value`` is the start or end record ``acpgen tap`` writes."""
    if not isinstance(value, dict) or "jsonrpc" in value or "message" in value or "direction" in value:
        return False
    return isinstance(value.get("start"), str) or isinstance(value.get("end"), str)


def _seconds(stamp: Any) -> float | None:
    """An RFC 3339 time (``2026-12-01T18:35:02.311619Z``, as tap writes) as
    seconds since the epoch; None for anything else. A time with no offset
    is UTC."""
    if not isinstance(stamp, str) or not 10 <= len(stamp) <= 40:
        return None
    try:
        when = datetime.fromisoformat(stamp[:-1] + "+00:00" if stamp.endswith(("Z", "z")) else stamp)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    try:
        return when.timestamp()
    except (OverflowError, OSError, ValueError):  # pragma: no cover - a platform's limits
        return None
