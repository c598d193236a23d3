"""The transcript checker: one pass over the lines, constant memory apart
from the ids it must remember (requests in flight, sessions, started tool
calls)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable, Iterator

KINDS = {
    "bad-line": "the line is not JSON, or not a message in the transcript format",
    "invalid": "the message breaks the schema even for lenient decoding",
    "repaired": "strict validation fails; lenient decoding drops or repairs what the pointer names",
    "unknown-response": "a response to an id no request in flight has",
    "duplicate-id": "a request reuses the id of a request still in flight (same direction)",
    "unknown-session": "a message names a session no session/new, load or resume opened",
    "not-started": "an update for an entity its kind must have started first (v1 tool_call)",
    "protocol-version": "initialize answered a protocol version the client did not ask for or this schema does not speak",
    "unanswered": "a request never answered by the end of the transcript",
}
"""Every finding kind and what it means."""

WARNINGS = frozenset({"repaired", "unanswered"})
"""Kinds that are not errors unless ``strict``."""

DIRECTIONS = {
    "client_to_agent": "client_to_agent",
    "client->agent": "client_to_agent",
    "agent_to_client": "agent_to_client",
    "agent->client": "agent_to_client",
}
OPPOSITE = {"client_to_agent": "agent_to_client", "agent_to_client": "client_to_agent"}


@dataclass(frozen=True)
class Finding:
    line: int
    kind: str
    """One of :data:`KINDS`."""
    message: str
    pointer: str = ""
    """RFC 6901 pointer into the line's JSON-RPC message, or ``""``."""
    error: bool = True
    """False for a warning (``repaired``, ``unanswered`` without ``strict``)."""

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "kind": self.kind, "message": self.message, "pointer": self.pointer, "error": self.error}

    def __str__(self) -> str:
        where = f" at {self.pointer}" if self.pointer else ""
        label = "error" if self.error else "warning"
        return f"line {self.line}: {label}: {self.kind}{where}: {self.message}"


def pointer(segments: Iterable[str | int]) -> str:
    return "".join("/" + str(s).replace("~", "~0").replace("/", "~1") for s in segments)


def validate_file(path: str | Path, package: ModuleType, *, strict: bool = False) -> Iterator[Finding]:
    """The findings of a transcript file, read line by line."""
    with open(path, encoding="utf-8") as lines:
        yield from validate_lines(lines, package, strict=strict)


def validate_lines(lines: Iterable[str], package: ModuleType, *, strict: bool = False) -> Iterator[Finding]:
    """The findings of a transcript: one JSON value per line, either a bare
    JSON-RPC message or ``{"direction": "client_to_agent" | "agent_to_client",
    "message": {...}}`` (``client->agent`` and ``agent->client`` also read).
    Blank lines are skipped. ``strict`` makes warnings errors."""
    checker = _Checker(package, strict)
    number = 0
    for number, line in enumerate(lines, 1):
        if line.strip():
            yield from checker.line(number, line)
    yield from checker.end(number)


class _Checker:
    def __init__(self, package: ModuleType, strict: bool) -> None:
        self.p = package
        self.strict = strict
        self.pending: dict[tuple[str | None, Any], tuple[str, int]] = {}
        self.sessions: set[str] = set()
        self.started: set[tuple[str, str, str]] = set()
        self.requested_version: Any = None
        self.rules = getattr(package, "UPDATE_RULES", {})
        self.starters = {tag for rule in self.rules.values() for tag in rule.started_by}
        self.sources: dict[tuple[str, str], bool] = {s: True for s in getattr(package, "SESSION_SOURCES", ())}
        self.version = getattr(package, "PROTOCOL_VERSION", None)
        self.track_sessions = bool(self.sources)

    def finding(self, line: int, kind: str, message: str, at: str = "") -> Finding:
        return Finding(line, kind, message, at, error=self.strict or kind not in WARNINGS)

    def line(self, n: int, text: str) -> Iterator[Finding]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            yield self.finding(n, "bad-line", f"not JSON: {exc}")
            return
        direction = None
        if isinstance(data, dict) and "message" in data and "jsonrpc" not in data:
            named = data.get("direction")
            direction = DIRECTIONS.get(named) if isinstance(named, str) else None
            if "direction" in data and direction is None:
                yield self.finding(n, "bad-line", f"unknown direction {data.get('direction')!r}", "")
                return
            data = data["message"]
        p = self.p
        try:
            message = self.fast(data)
            if message is None:
                message = p.decode_message(data, strict=True)
        except p.ValidationError as exc:
            try:
                message = p.decode_message(data, strict=False)
            except p.ValidationError as lenient:
                yield self.finding(n, "invalid", lenient.message, _pointer_of(lenient))
                return
            yield self.finding(n, "repaired", _repair_note(exc, message, data), _pointer_of(exc))
        if isinstance(message, p.Request):
            yield from self.request(n, direction, message)
        elif isinstance(message, p.Notification):
            yield from self.session_check(n, message.method, message.params)
            if message.method == "session/update" and self.rules:
                yield from self.update(n, message.params)
        else:
            yield from self.response(n, direction, message)

    def fast(self, data: Any) -> Any:
        """The message, when lenient decoding keeps every member of it as it
        is (its re-encoding holds the input unchanged): then no member was
        dropped or repaired, and the slow strict validation is skipped unless
        ``strict``. None: validate strictly."""
        if self.strict:
            return None
        try:
            message = self.p.decode_message(data)
        except self.p.ValidationError:
            return None
        if next(_differences(data, self.p.encode_message(message), ""), None) is None:
            return message
        return None

    def fast_result(self, method: str, data: Any) -> Any:
        if self.strict:
            return None
        try:
            result = self.p.decode_result(method, data)
        except self.p.ValidationError:
            return None
        if next(_differences(data, self.p.encode(result), ""), None) is None:
            return result
        return None

    def request(self, n: int, direction: str | None, message: Any) -> Iterator[Finding]:
        key = (direction, message.id)
        if key in self.pending:
            method, first = self.pending[key]
            yield self.finding(n, "duplicate-id", f"id {message.id!r} is still in flight ({method}, line {first})", "/id")
        self.pending[key] = (message.method, n)
        if message.method == "initialize":
            self.requested_version = getattr(message.params, "protocol_version", None)
        if (message.method, "params") in self.sources:
            session_id = getattr(message.params, "session_id", None)
            if isinstance(session_id, str):
                self.sessions.add(session_id)
        elif message.method != "session/new":
            yield from self.session_check(n, message.method, message.params)

    def session_check(self, n: int, method: str, params: Any) -> Iterator[Finding]:
        session_id = getattr(params, "session_id", None)
        if self.track_sessions and isinstance(session_id, str) and session_id not in self.sessions:
            if (method, "params") not in self.sources:
                yield self.finding(n, "unknown-session", f"{method} for session {session_id!r}, never opened", "/params/sessionId")

    def update(self, n: int, params: Any) -> Iterator[Finding]:
        update = params.update
        rule = self.rules.get(type(update))
        if rule is None or not rule.key:
            return
        key = getattr(update, rule.key)
        if not isinstance(key, str):
            return
        entity = (params.session_id, rule.field, key)
        if rule.tag in self.starters:
            self.started.add(entity)
        if rule.started_by and entity not in self.started:
            starters = " or ".join(rule.started_by)
            yield self.finding(n, "not-started", f"{rule.tag} for {key!r}, which no {starters} started", "/params/update")

    def response(self, n: int, direction: str | None, message: Any) -> Iterator[Finding]:
        candidates: list[tuple[str | None, Any]]
        if direction is not None:
            candidates = [(OPPOSITE[direction], message.id)]
        else:
            candidates = [(None, message.id)]
        found = next((k for k in candidates if k in self.pending), None)
        if found is None:
            if message.id is not None:
                yield self.finding(n, "unknown-response", f"no request with id {message.id!r} is in flight", "/id")
            return
        method, _ = self.pending.pop(found)
        if not isinstance(message, self.p.Response):
            return
        p = self.p
        try:
            result = self.fast_result(method, message.result)
            if result is None:
                result = p.decode_result(method, message.result, strict=True)
        except p.ValidationError as exc:
            try:
                result = p.decode_result(method, message.result, strict=False)
            except p.ValidationError as lenient:
                yield self.finding(n, "invalid", f"{method} result: {lenient.message}", "/result" + _pointer_of(lenient))
                return
            yield self.finding(n, "repaired", f"{method} result: {exc.message}", "/result" + _pointer_of(exc))
        if (method, "result") in self.sources:
            session_id = getattr(result, "session_id", None)
            if isinstance(session_id, str):
                self.sessions.add(session_id)
        if method == "initialize":
            yield from self.initialized(n, getattr(result, "protocol_version", None))

    def initialized(self, n: int, answered: Any) -> Iterator[Finding]:
        if not isinstance(answered, int):
            return
        if isinstance(self.requested_version, int) and answered > self.requested_version:
            yield self.finding(
                n, "protocol-version", f"the agent answered version {answered}, newer than the {self.requested_version} asked for", "/result/protocolVersion"
            )
        elif self.version is not None and answered != self.version:
            yield self.finding(
                n, "protocol-version", f"the agent answered version {answered}; this schema speaks {self.version}", "/result/protocolVersion"
            )

    def end(self, last: int) -> Iterator[Finding]:
        for (direction, request_id), (method, line) in self.pending.items():
            yield self.finding(line, "unanswered", f"{method} (id {request_id!r}) has no response by line {last}", "/id")


def _pointer_of(error: Any) -> str:
    inner = getattr(error, "error", None)
    if inner is not None:  # params that do not decode: the path is inside params
        return "/params" + pointer(inner.segments)
    return pointer(error.segments)


def _repair_note(error: Any, message: Any, data: Any) -> str:
    """What lenient decoding did, by comparing its re-encoding with the input."""
    params = getattr(message, "params", None)
    encode = getattr(message, "params", None) is not None and hasattr(params, "__dataclass_fields__")
    if not encode or not isinstance(data, dict):
        return f"{error.message} (lenient decoding accepts it)"
    changed = list(_differences(data.get("params"), _encode(params), "/params"))
    what = ", ".join(changed[:5]) or "nothing visible"
    return f"{error.message}; lenient decoding dropped or changed: {what}"


def _encode(value: Any) -> Any:
    from importlib import import_module

    return import_module(type(value).__module__.rsplit(".", 1)[0]).encode(value)


def _differences(original: Any, kept: Any, at: str) -> Iterator[str]:
    if isinstance(original, dict) and isinstance(kept, dict):
        for key, value in original.items():
            here = at + pointer([key])
            if key not in kept:
                yield here
            else:
                yield from _differences(value, kept[key], here)
    elif isinstance(original, list) and isinstance(kept, list):
        if len(original) != len(kept):
            yield at
        else:
            for index, (a, b) in enumerate(zip(original, kept)):
                yield from _differences(a, b, f"{at}/{index}")
    elif original != kept:
        yield at
