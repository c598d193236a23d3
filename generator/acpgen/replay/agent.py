"""``replay --as agent``: the agent side of a recording, served to a live
client.

Each message the client sends is matched with a recorded client message not
yet played: same method and kind (request, notification, response), and the
first whose params are equal up to ids and volatile fields (see
:mod:`.match`), else the first of that method (its differences become a
``differs`` finding). Its reaction, the agent messages the recording has
after it up to the next client message, is then sent, with the client's ids
in place of the recorded ones (the request ids it answers, and any session,
tool call or message id the client chose); the agent's own ids are the
recorded ones. A response waits until the request it answers has arrived.
A request with nothing recorded for it is answered with an error
(-32603) and is an ``unexpected`` finding; so is any other message not in
the recording. With recorded timing each message is sent as long after the
one before it as in the recording (a transcript without times plays
compressed).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

from .match import Id, IdMap, Normalizer, compare, rewrite
from .script import Finding, RunLog
from .transcript import AGENT, CLIENT, Record, Transcript

TIMINGS = ("compressed", "recorded")

REPLAY_ERROR = -32603
"""The code a request the recording has no answer for is answered with."""


def _id(value: Any) -> Id:
    return (type(value).__name__, value)


def _kind(message: dict[str, Any]) -> str:
    if isinstance(message.get("method"), str):
        return "request" if "id" in message else "notification"
    return "response"


class AgentReplayer:
    """The agent side of ``transcript``, without I/O: :meth:`opening` and
    :meth:`receive` return the messages to send, each with the seconds to
    wait before it."""

    def __init__(self, transcript: Transcript, timing: str = "compressed", package: Any = None) -> None:
        if timing not in TIMINGS:
            raise ValueError(f"timing must be one of {TIMINGS}, not {timing!r}")
        self.transcript = transcript
        self.timing = timing
        records = transcript.records
        self.ids = IdMap()
        self.normalize = Normalizer(package)
        self.agent_methods: dict[Id, str] = {
            _id(r.message["id"]): str(r.method) for r in records if r.direction == AGENT and r.is_request
        }
        """recorded id of an agent request -> its method (what a client's response answers)"""
        self.request_ids: dict[Id, Any] = {}
        """recorded id of a client request -> the live id it arrived with"""
        self.findings: list[Finding] = []
        records = transcript.records
        self.client = [r for r in records if r.direction == CLIENT]
        self.played: set[int] = set()
        """Indexes of the recorded client messages matched."""
        self.reactions: dict[int, list[Record]] = {}
        self.opening_records: list[Record] = []
        current: list[Record] = self.opening_records
        for record in records:
            if record.direction == CLIENT:
                current = self.reactions.setdefault(record.index, [])
            else:
                current.append(record)
        self.waiting: list[tuple[Record, Record]] = []
        """(agent message, the record before it): responses held until their
        request arrives."""
        self.sent_records: list[Record] = []
        """The recorded agent messages sent so far, in the order sent."""

    # ------------------------------------------------------------ playing

    def opening(self) -> list[tuple[float, dict[str, Any]]]:
        """What the agent sends before the client says anything."""
        return self._send(self.opening_records, None)

    def receive(self, message: dict[str, Any]) -> list[tuple[float, dict[str, Any]]]:
        """What to send now that the client sent ``message``."""
        record = self._match(message)
        if record is None:
            if _kind(message) == "request":
                error = {
                    "code": REPLAY_ERROR,
                    "message": f"acpgen replay: the recording has no answer for {message['method']}",
                }
                return [(0.0, {"jsonrpc": "2.0", "id": message["id"], "error": error})]
            return []
        self.played.add(record.index)
        out = self._send(self.reactions.get(record.index, []), record)
        waiting, self.waiting = self.waiting, []
        for held, before in waiting:
            out += self._send([held], before)
        return out

    def unplayed(self) -> list[Record]:
        return [r for r in self.client if r.index not in self.played]

    def _send(self, records: list[Record], before: Record | None) -> list[tuple[float, dict[str, Any]]]:
        out: list[tuple[float, dict[str, Any]]] = []
        for record in records:
            message = record.message
            if _kind(message) == "response":
                live_id = self.request_ids.get(_id(message.get("id")))
                if live_id is None:
                    self.waiting.append((record, before or record))
                    continue
                message = {**rewrite(message, self.ids, to_live=True), "id": live_id}
            else:
                message = rewrite(message, self.ids, to_live=True)
            out.append((self._delay(record, before), message))
            self.sent_records.append(record)
            before = record
        return out

    def _delay(self, record: Record, before: Record | None) -> float:
        if self.timing != "recorded" or record.time is None:
            return 0.0
        start = before.time if before is not None and before.time is not None else record.time
        return max(0.0, record.time - start)

    # ------------------------------------------------------------ matching

    def _match(self, message: dict[str, Any]) -> Record | None:
        kind = _kind(message)
        if kind == "response":
            candidates = [
                r
                for r in self.client
                if r.index not in self.played and r.is_response and _id(r.message.get("id")) == _id(message.get("id"))
            ]
        else:
            candidates = [
                r
                for r in self.client
                if r.index not in self.played and r.method == message.get("method") and _kind(r.message) == kind
            ]
        if not candidates:
            what = message.get("method") or f"a response to {message.get('id')!r}"
            self.findings.append(Finding("unexpected", f"the client sent {kind} {what}, which the recording has not"))
            return None
        chosen = None
        answers = self.agent_methods.get(_id(message.get("id"))) if kind == "response" else None
        live = self.normalize(message, answers)
        for record in candidates:
            trial = self.ids.copy()
            if not compare(self.normalize(record.message, answers), live, trial):
                self.ids = trial
                chosen = record
                break
        if chosen is None:
            chosen = candidates[0]
            differences = compare(self.normalize(chosen.message, answers), live, self.ids)
            what = chosen.method or "the response"
            self.findings.append(
                Finding("differs", f"the client's {what} differs from the recorded one", chosen.line, differences)
            )
        if kind == "request":
            self.request_ids[_id(chosen.message["id"])] = message["id"]
        return chosen


async def serve(
    replayer: AgentReplayer,
    receive: Callable[[], Awaitable[bytes | None]],
    send: Callable[[bytes], Awaitable[None]],
    log: RunLog,
) -> None:
    """Play ``replayer`` against a client: ``receive`` gives each line the
    client sends (None at its end), ``send`` writes one. Returns when the
    client's side ends."""

    async def emit(batch: list[tuple[float, dict[str, Any]]]) -> None:
        for delay, message in batch:
            if delay > 0:
                await asyncio.sleep(delay)
            log.message(AGENT, message)
            await send(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")

    seen = 0
    await emit(replayer.opening())
    while True:
        line = await receive()
        if line is None:
            break
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            replayer.findings.append(Finding("unexpected", f"the client sent a line that is not JSON: {line[:80]!r}"))
            continue
        if not isinstance(message, dict):
            replayer.findings.append(Finding("unexpected", "the client sent JSON that is not a message"))
            continue
        log.message(CLIENT, message)
        await emit(replayer.receive(message))
        for finding in replayer.findings[seen:]:
            log.finding(finding)
        seen = len(replayer.findings)
    for record in replayer.unplayed():
        finding = Finding("missing", f"the client never sent the recorded {record.method or 'response'}", record.line)
        replayer.findings.append(finding)
        log.finding(finding)
    log.end(replayer.ids, [r.line for r in replayer.unplayed()])


async def serve_stdio(transcript: Transcript, timing: str, log_path: str | None, package: Any = None) -> AgentReplayer:
    """Serve the agent side of ``transcript`` on this process's stdin and
    stdout (``acpgen replay --as agent`` with no client command, or the
    agent a client under test starts)."""
    import sys

    loop = asyncio.get_running_loop()
    stdin = sys.stdin.buffer

    async def receive() -> bytes | None:
        # a thread's blocking read: stdin may be a pipe, a file or a terminal
        line = await loop.run_in_executor(None, stdin.readline)
        return line or None

    async def send(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]

    replayer = AgentReplayer(transcript, timing, package)
    log = RunLog(log_path)
    try:
        await serve(replayer, receive, send, log)
    except (ConnectionError, BrokenPipeError):
        log.end(replayer.ids, [r.line for r in replayer.unplayed()])
    return replayer
