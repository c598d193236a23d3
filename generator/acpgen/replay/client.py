"""``replay --as client``: the client side of a recording, driving a live
agent, and where the agent's answers diverge.

The recorded client messages are sent in order. Before each, every agent
message the recording has before it must have come from the live agent:
each live message is matched with a recorded agent message not yet matched
(a response by the id of the request it answers; a request or notification
by method, and for ``session/update`` by its kind, the first equal up to ids
and volatile fields, else the first of its kind, whose differences, each
with its JSON path, become a ``differs`` finding). The live agent's ids
(session, tool call, message, terminal ids, and the ids of its requests)
take the place of the recorded ones in what is sent after.

Updates racing a cancel: from the client's ``session/cancel`` until the
turn ends (the answer to the session's prompt; in v2 its idle
``state_update``), the spec lets an agent send updates it had under way,
as many as its timing makes: those of the live agent and of the recording
are matched when they can be, are never ``unexpected`` nor ``missing``
(said as one ``tolerated`` finding), and both folds leave them out.

A recorded message still not seen after ``patience`` seconds without a
message from the agent is ``missing``; so is everything expected when the
agent's output ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .agent import _id, _kind
from .fold import package_for
from .match import Id, IdMap, Normalizer, compare, rewrite
from .script import Finding, ReplayResult, compare_folds
from .transcript import AGENT, CLIENT, Record, Transcript, load_transcript

PATIENCE = 30.0
"""The default wait for a recorded message that has not come."""
UPDATE = "session/update"


def _update_kind(message: dict[str, Any]) -> Any:
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return update.get("sessionUpdate") if isinstance(update, dict) else None


def _session(message: dict[str, Any]) -> Any:
    params = message.get("params")
    return params.get("sessionId") if isinstance(params, dict) else None


def _ends_turn(message: dict[str, Any]) -> bool:
    params = message.get("params")
    update = params.get("update") if isinstance(params, dict) else None
    return isinstance(update, dict) and update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"


class ClientReplayer:
    """The client side of ``transcript``, without I/O."""

    def __init__(self, transcript: Transcript, package: ModuleType | None) -> None:
        self.transcript = transcript
        self.records = transcript.records
        self.normalize = Normalizer(package)
        self.ids = IdMap()
        self.agent_request_ids: dict[Id, Any] = {}
        """recorded id of an agent request -> its live id"""
        self.our_requests: dict[Id, tuple[Record, dict[str, Any]]] = {}
        """our requests (sent with their recorded ids) not yet answered, as
        recorded and as sent"""
        self.matched: set[int] = set()
        self.racing_recorded: set[int] = set()
        """Recorded updates inside a cancel's window."""
        self.racing_live = 0
        self.findings: list[Finding] = []
        self.live: list[tuple[str, dict[str, Any]]] = []
        self.live_racing: list[bool] = []
        self._windows_recorded()
        self.cancelling: set[Any] = set()
        """Live session ids whose cancel's window is open."""

    def _windows_recorded(self) -> None:
        open_sessions: set[Any] = set()
        prompts: dict[Id, Any] = {}
        for record in self.records:
            message = record.message
            if record.direction == CLIENT:
                if record.method == "session/prompt":
                    prompts[_id(message.get("id"))] = _session(message)
                elif record.method == "session/cancel":
                    open_sessions.add(_session(message))
                continue
            if record.is_response:
                session = prompts.pop(_id(message.get("id")), None)
                open_sessions.discard(session)
            elif record.method == UPDATE and _session(message) in open_sessions:
                if _ends_turn(message):
                    open_sessions.discard(_session(message))
                else:
                    self.racing_recorded.add(record.index)

    # ------------------------------------------------------------ sending

    def outgoing(self, record: Record) -> dict[str, Any]:
        """The recorded client message as the live agent must get it."""
        message: dict[str, Any] = rewrite(record.message, self.ids, to_live=True)
        if record.is_response:
            live_id = self.agent_request_ids.get(_id(record.message.get("id")), record.message.get("id"))
            message = {**message, "id": live_id}
        elif record.is_request:
            self.our_requests[_id(record.message["id"])] = (record, message)
        if record.method == "session/cancel":
            self.cancelling.add(_session(message))
        self.live.append((CLIENT, message))
        self.live_racing.append(False)
        return message

    def expected_before(self, index: int) -> list[Record]:
        """Recorded agent messages before ``index`` not yet matched (updates
        racing a cancel excepted)."""
        return [
            r
            for r in self.records[:index]
            if r.direction == AGENT and r.index not in self.matched and r.index not in self.racing_recorded
        ]

    # ------------------------------------------------------------ receiving

    def take(self, message: dict[str, Any], before: int) -> None:
        """Match a live agent message; ``before``: the index of the next
        recorded client message (the window it is looked for in)."""
        kind = _kind(message)
        racing = False
        answers: str | None = None
        if kind == "response":
            sent = self.our_requests.pop(_id(message.get("id")), None)
            answers = sent[0].method if sent is not None else None
            candidates = [
                r
                for r in self.records
                if r.direction == AGENT
                and r.index not in self.matched
                and r.is_response
                and _id(r.message.get("id")) == _id(message.get("id"))
            ]
            if sent is not None and answers == "session/prompt":
                self.cancelling.discard(_session(sent[1]))
        else:
            window = self.records[:before]
            candidates = [
                r
                for r in window
                if r.direction == AGENT
                and r.index not in self.matched
                and r.method == message.get("method")
                and _kind(r.message) == kind
                and (r.method != UPDATE or _update_kind(r.message) == _update_kind(message))
            ]
            if message.get("method") == UPDATE and _session(message) in self.cancelling:
                if _ends_turn(message):
                    self.cancelling.discard(_session(message))
                else:
                    racing = True
                    candidates = [r for r in candidates if r.index in self.racing_recorded]
        self.live.append((AGENT, message))
        self.live_racing.append(racing)
        if racing:
            self.racing_live += 1
        if not candidates:
            if not racing:
                what = message.get("method") or f"a response to {message.get('id')!r}"
                self.findings.append(
                    Finding("unexpected", f"the agent sent {kind} {what}, which the recording has not")
                )
            return
        live = self.normalize(message, answers)
        chosen = None
        for record in candidates:
            trial = self.ids.copy()
            if not compare(self.normalize(record.message, answers), live, trial):
                self.ids, chosen = trial, record
                break
        if chosen is None:
            if racing:
                return  # an update the spec allows, not the recorded one
            chosen = candidates[0]
            differences = compare(self.normalize(chosen.message, answers), live, self.ids)
            what = chosen.method or f"answer to {answers or 'a request'}"
            self.findings.append(
                Finding("differs", f"the agent's {what} differs from the recorded one", chosen.line, differences)
            )
        self.matched.add(chosen.index)
        if kind == "request":
            self.agent_request_ids[_id(chosen.message["id"])] = message["id"]

    def finish(self) -> None:
        for record in self.records:
            if (
                record.direction == AGENT
                and record.index not in self.matched
                and record.index not in self.racing_recorded
            ):
                what = record.method or "answer"
                self.findings.append(Finding("missing", f"the agent never sent the recorded {what}", record.line))
        if self.racing_live or self.racing_recorded:
            self.findings.append(
                Finding(
                    "tolerated",
                    f"{self.racing_live} live and {len(self.racing_recorded)} recorded updates raced a cancel "
                    "(allowed by the spec; left out of both folds)",
                )
            )

    def folds(self) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, dict[str, Any]]]]:
        """The recorded and the live traffic to fold, updates racing a
        cancel left out of both."""
        recorded = [(r.direction, r.message) for r in self.records if r.index not in self.racing_recorded]
        live = [entry for entry, racing in zip(self.live, self.live_racing, strict=True) if not racing]
        return recorded, live


async def drive(
    replayer: ClientReplayer,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    patience: float,
) -> None:
    """Run the recording's client side over an agent's stdout and stdin."""
    ended = False

    async def take_one(before: int) -> bool:
        nonlocal ended
        if ended:
            return False
        try:
            line = await asyncio.wait_for(reader.readline(), patience)
        except asyncio.TimeoutError:
            return False
        if not line:
            ended = True
            return False
        if not line.strip():
            return True
        try:
            message = json.loads(line)
        except ValueError:
            replayer.findings.append(Finding("unexpected", f"the agent wrote a line that is not JSON: {line[:80]!r}"))
            return True
        if isinstance(message, dict):
            replayer.take(message, before)
        return True

    for record in replayer.records:
        if record.direction != CLIENT:
            continue
        while replayer.expected_before(record.index):
            if not await take_one(record.index):
                break
        message = replayer.outgoing(record)
        with contextlib.suppress(ConnectionError):
            writer.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
            await writer.drain()
    end = len(replayer.records)
    while replayer.expected_before(end):
        if not await take_one(end):
            break
    with contextlib.suppress(ConnectionError, OSError):
        writer.close()
    while await take_one(end):
        pass
    replayer.finish()


def replay_to_agent(
    path: str | Path,
    command: Sequence[str],
    *,
    package: str | None = None,
    patience: float = PATIENCE,
    cwd: str | None = None,
) -> ReplayResult:
    """Drive the agent ``command`` with the client side of the transcript
    at ``path`` and compare its answers and the session fold with the
    recording."""
    transcript = load_transcript(path)
    fold_package = package_for(transcript.protocol_version, package)
    return asyncio.run(_replay_to_agent(transcript, list(command), fold_package, patience, cwd))


async def _replay_to_agent(
    transcript: Transcript, command: list[str], package: ModuleType, patience: float, cwd: str | None
) -> ReplayResult:
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=cwd,
        limit=1 << 26,
    )
    assert process.stdin is not None and process.stdout is not None
    replayer = ClientReplayer(transcript, package)
    try:
        await drive(replayer, process.stdout, process.stdin, patience)
    finally:
        try:
            await asyncio.wait_for(process.wait(), patience)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    recorded, live = replayer.folds()
    before, after, fold_finding = compare_folds(package, recorded, live, replayer.ids)
    findings = list(replayer.findings)
    if fold_finding is not None:
        findings.append(fold_finding)
    if process.returncode not in (0, None) and process.returncode != -15:
        findings.append(Finding("exit", f"the agent exited with status {process.returncode}"))
    return ReplayResult(findings, before, after, len(replayer.live))


__all__ = ["ClientReplayer", "drive", "replay_to_agent"]
