"""The probe's end of a connection: an agent process spoken to in raw JSON-RPC.

The probe does not use a generated connection: it must send what a
connection would refuse to send (a string protocol version, malformed
params, a request before ``initialize``) and read whatever comes back
without repairing it. Every message the agent sends is recorded in the
transcript and checked against the package of the negotiated version
(strict decoding, the JSON Schema); what is wrong goes to the check that is
running, or to the check named for the method (see :data:`OWNERS`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

MAX_LINE = 64 * 1024 * 1024
"""A longer line from the agent is a finding, skipped without being held."""

STDERR_TAIL = 20
"""Lines of the agent's stderr kept, for the report of a failure."""

KEPT_LINES = 2000
"""Messages of one check's transcript kept (the latest); the rest are counted."""

KEPT_PROBLEMS = 100
"""Problems kept per check; the rest are counted."""

KEPT_METHODS = 100
"""Methods of the agent's requests counted (an agent may make up any number)."""

KEPT_NOTIFICATIONS = 10000
"""Notifications kept for the checks to look through: an agent that streams
without end holds at most about this many (the oldest half goes first)."""

OWNERS: dict[str, str] = {
    "session/request_permission": "permission",
}
"""Methods the agent calls whose findings belong to one check, whichever
check is running (so that a fault in them fails that check alone)."""

NOTIFICATION_REPLY = "notification-reply"
"""The check a response to one of the probe's notifications belongs to."""

UNADVERTISED_PREFIXES = ("fs/", "terminal/")
"""Agent requests the probe's client never advertises: their calls belong
to the ``client-capabilities`` check."""


@dataclass
class Line:
    """One message of the transcript, as sent or as read."""

    direction: str
    """``client_to_agent`` or ``agent_to_client``."""
    message: Any
    """The parsed message, or the text of a line that is not JSON."""

    def to_json(self) -> dict[str, Any]:
        return {"direction": self.direction, "message": self.message}

    def __str__(self) -> str:
        arrow = "->" if self.direction == "client_to_agent" else "<-"
        text = self.message if isinstance(self.message, str) else json.dumps(self.message)
        return f"{arrow} {text if len(text) <= 400 else text[:400] + '...'}"


@dataclass
class Reply:
    """The agent's response to one request."""

    message: dict[str, Any]
    order: int = 0
    """The how-manyth message of the agent's this was (see :meth:`Peer.order_of`)."""

    @property
    def result(self) -> Any:
        return self.message.get("result")

    @property
    def error(self) -> dict[str, Any] | None:
        error = self.message.get("error")
        return error if isinstance(error, dict) else None

    @property
    def code(self) -> Any:
        return self.error.get("code") if self.error is not None else None


@dataclass
class Record:
    """What one check saw: its transcript (the latest :data:`KEPT_LINES`
    messages) and the problems found in it (the first :data:`KEPT_PROBLEMS`)."""

    lines: collections.deque[Line] = field(default_factory=lambda: collections.deque(maxlen=KEPT_LINES))
    problems: list[str] = field(default_factory=list)
    dropped_lines: int = 0
    dropped_problems: int = 0

    def add(self, line: Line) -> None:
        if len(self.lines) == self.lines.maxlen:
            self.dropped_lines += 1
        self.lines.append(line)

    def problem(self, text: str) -> None:
        if len(self.problems) < KEPT_PROBLEMS:
            self.problems.append(text)
        else:
            self.dropped_problems += 1


class AgentGone(Exception):
    """The agent exited, or closed its stdout."""


class NotJsonRpc(Exception):
    """The agent wrote a line that is not a JSON-RPC message: what the
    running check waits for is not coming in a form it can read, so the wait
    ends at once (the problem itself is recorded with the line)."""


class Peer:
    """One agent process and the probe's side of the conversation.

    ``record`` is where the messages go (the running check's); the
    package that checks them is set once ``initialize`` has told the
    version. ``on_request(message)`` answers the agent's requests (returns
    the response's ``result`` or raises :class:`Refusal`)."""

    def __init__(self, command: list[str], packages: dict[int, ModuleType]) -> None:
        self.command = command
        self.packages = packages
        self.package: ModuleType | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.records: dict[str, Record] = {}
        self.current = "setup"
        self.next_id = 0
        self.waiting: dict[Any, asyncio.Future[Reply]] = {}
        self.methods: dict[Any, str] = {}
        self.notifications: list[dict[str, Any]] = []
        self.orders: list[int] = []
        """Beside each kept notification, its place in the agent's stream."""
        self.received = 0
        """Messages read from the agent so far."""
        self.last_notification: str | None = None
        """The method of the latest notification the probe sent."""
        self.base = 0
        """The index (counting from the first notification) of notifications[0]."""
        self.arrived = asyncio.Event()
        self.on_request: Callable[[dict[str, Any]], Any] | None = None
        self.served: set[str] = set()
        """The client methods the probe advertised (the others of :data:`UNADVERTISED_PREFIXES`
        belong to the ``client-capabilities`` check)."""
        self.requested: dict[str, int] = {}
        """How many requests of each method the agent sent (at most
        :data:`KEPT_METHODS` methods counted)."""
        self.sessions: set[str] = set()
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self.gone: str | None = None
        self.tasks: set[asyncio.Future[None]] = set()

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=MAX_LINE,
        )
        self._spawn(self._read())
        self._spawn(self._read_stderr())

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def close(self) -> None:
        """Close the agent's stdin, give it a moment to exit, then kill it."""
        process = self.process
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(Exception):
                process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 0.5)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), 5.0)
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def record(self, check: str) -> Record:
        return self.records.setdefault(check, Record())

    def problem(self, text: str, check: str | None = None) -> None:
        self.record(check or self.current).problem(text)

    # ------------------------------------------------------------ sending

    async def send(self, message: Any, check: str | None = None) -> None:
        """Write one message (a JSON value, or a raw line of text), recorded
        in the transcript of ``check`` (the running check's by default)."""
        if self.gone is not None:
            raise AgentGone(self.gone)
        process = self.process
        assert process is not None and process.stdin is not None
        self.record(check or self.current).add(Line("client_to_agent", message))
        text = message if isinstance(message, str) else json.dumps(message)
        try:
            process.stdin.write(text.encode("utf-8") + b"\n")
            await process.stdin.drain()
        except (ConnectionError, RuntimeError) as exc:  # RuntimeError: the transport closed
            raise AgentGone(f"the agent is gone: writing to it failed ({exc})") from None

    async def request(self, method: str, params: Any, *, omit_params: bool = False) -> Reply:
        """Send a request and wait for its response (the caller bounds the wait)."""
        self.next_id += 1
        request_id = self.next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if not omit_params:
            message["params"] = params
        future = self._future(request_id, method)
        try:
            await self.send(message)
            return await future
        finally:
            self.waiting.pop(request_id, None)

    def start_request(self, method: str, params: Any) -> tuple[int, asyncio.Future[Reply]]:
        """Send a request in the background: its id and its future reply."""
        self.next_id += 1
        request_id = self.next_id
        future = self._future(request_id, method)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}

        async def write() -> None:
            try:
                await self.send(message)
            except AgentGone as exc:
                if not future.done():
                    future.set_exception(exc)

        self._spawn(write())
        return request_id, future

    def _future(self, request_id: int, method: str) -> asyncio.Future[Reply]:
        """The future reply to a request; its exception (the agent gone) is
        taken as read, since the check that waited for it may have ended."""
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda done: done.cancelled() or done.exception())
        self.waiting[request_id] = future
        self.methods[request_id] = method
        return future

    async def notify(self, method: str, params: Any) -> None:
        self.last_notification = method
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def order_of(self, note: dict[str, Any]) -> int:
        """The place in the agent's stream of a kept notification (0 if no longer kept)."""
        for index in range(len(self.notifications) - 1, -1, -1):
            if self.notifications[index] is note:
                return self.orders[index]
        return 0

    @property
    def seen(self) -> int:
        """How many notifications arrived so far (an index for :meth:`since`)."""
        return self.base + len(self.notifications)

    def since(self, start: int) -> list[dict[str, Any]]:
        """The notifications from index ``start`` on (those still kept)."""
        return self.notifications[max(0, start - self.base) :]

    async def wait_for(self, test: Callable[[dict[str, Any]], bool], start: int = 0) -> dict[str, Any]:
        """The first notification from index ``start`` on that passes ``test``."""
        index = start
        while True:
            while index < self.seen:
                index = max(index, self.base)
                note = self.notifications[index - self.base]
                index += 1
                if test(note):
                    return note
            if self.gone is not None:
                raise AgentGone(self.gone)
            self.arrived.clear()
            await self.arrived.wait()

    # ------------------------------------------------------------ reading

    async def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        stream = self.process.stderr
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line over the limit: skip it
                continue
            if not line:
                return
            self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))

    async def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stream = self.process.stdout
        try:
            while True:
                try:
                    raw = await stream.readuntil(b"\n")
                except asyncio.IncompleteReadError as exc:
                    if exc.partial.strip():
                        self._line(exc.partial)
                    break
                except asyncio.LimitOverrunError as exc:
                    self.problem(f"the agent sent a line over {MAX_LINE} bytes (skipped)")
                    await self._skip(stream, exc.consumed)
                    continue
                if raw.strip():
                    self._line(raw)
        finally:
            status = await self._status()
            self.gone = f"the agent closed its output ({status})"
            for future in self.waiting.values():
                if not future.done():
                    future.set_exception(AgentGone(self.gone))
            self.arrived.set()

    async def _status(self) -> str:
        assert self.process is not None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), 0.5)
        code = self.process.returncode
        return "still running" if code is None else f"exit status {code}"

    @staticmethod
    async def _skip(stream: asyncio.StreamReader, consumed: int) -> None:
        await stream.readexactly(consumed)
        while True:
            try:
                await stream.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await stream.readexactly(exc.consumed)

    def _stop_waiting(self) -> None:
        """End the waits for replies: the output is not JSON-RPC."""
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(NotJsonRpc("the agent's output is not JSON-RPC, so its answer cannot be read"))

    def _line(self, raw: bytes) -> None:
        self.received += 1
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            text = raw.decode("utf-8", "replace").rstrip("\n")
            self.record(self.current).add(Line("agent_to_client", text))
            self.problem(f"the agent wrote a line that is not JSON: {text[:200]!r}")
            self._stop_waiting()
            return
        if not isinstance(data, dict):
            self.record(self.current).add(Line("agent_to_client", data))
            self.problem("the agent wrote a JSON value that is not a JSON-RPC message")
            self._stop_waiting()
            return
        method = data.get("method")
        owner = self.current
        if method is None and self._replies_to_notification(data):
            self.record(NOTIFICATION_REPLY).add(Line("agent_to_client", data))
            self.problem(
                f"replied to the notification `{self.last_notification}` (a response with id "
                f"{json.dumps(data.get('id'))}): a notification gets no response",
                NOTIFICATION_REPLY,
            )
            return
        if isinstance(method, str) and "id" in data:
            owner = OWNERS.get(method, owner)
            if method.startswith(UNADVERTISED_PREFIXES) and method not in self.served:
                owner = "client-capabilities"
        self.record(owner).add(Line("agent_to_client", data))
        for text in self.check_message(data):
            self.problem(text, owner)
        if isinstance(method, str):
            if "id" in data:
                if method in self.requested or len(self.requested) < KEPT_METHODS:
                    self.requested[method] = self.requested.get(method, 0) + 1
                self._spawn(self._answer(data, owner))
            else:
                self.notifications.append(data)
                self.orders.append(self.received)
                if len(self.notifications) > KEPT_NOTIFICATIONS:
                    half = KEPT_NOTIFICATIONS // 2
                    del self.notifications[:half]
                    del self.orders[:half]
                    self.base += half
                self.arrived.set()
            return
        response_id = data.get("id")
        future = self.waiting.get(response_id) if _usable_id(response_id) else None
        if future is None:
            self.problem(f"a response to id {data.get('id')!r}, which the probe has not sent or was already answered")
        elif not future.done():
            future.set_result(Reply(data, self.received))

    def _replies_to_notification(self, data: dict[str, Any]) -> bool:
        """Whether a response is a reply to a notification: no usable id (absent
        or null), after the probe sent a notification, and not the error
        answering a line that could not be read (-32700, -32600: id null)."""
        if self.last_notification is None or _usable_id(data.get("id")):
            return False
        if "result" not in data and "error" not in data:
            return False
        error = data.get("error")
        return not (isinstance(error, dict) and error.get("code") in (-32700, -32600))

    async def _answer(self, request: dict[str, Any], owner: str) -> None:
        handler = self.on_request
        response: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        try:
            if handler is None:
                raise Refusal(-32601, "Method not found")
            result = handler(request)
            if inspect.isawaitable(result):
                result = await result
            response["result"] = result
        except Refusal as refusal:
            response["error"] = {"code": refusal.code, "message": refusal.message}
        with contextlib.suppress(AgentGone):
            await self.send(response, owner)

    # ------------------------------------------------------------ checking

    def check_message(self, data: dict[str, Any]) -> list[str]:
        """What is wrong with one message of the agent, by the package of the
        negotiated version (none before ``initialize`` is answered)."""
        package = self.package
        method = data.get("method")
        if "method" not in data and _usable_id(data.get("id")) and data.get("id") in self.methods and "result" in data:
            asked = self.methods[data["id"]]
            if asked == "initialize":
                version = data["result"].get("protocolVersion") if isinstance(data["result"], dict) else None
                package = self.packages.get(version) if type(version) is int else None
                if package is None:
                    return []  # the initialize checks say what is wrong with the version
            if package is None or asked not in package.METHODS:
                return []
            try:
                result = package.decode_result(asked, data["result"], strict=True)
            except package.ValidationError as exc:
                return [f"invalid {asked} result at /result{_pointer(exc)}: {exc.message}"]
            session_id = getattr(result, "session_id", None)
            if isinstance(session_id, str) and asked == "session/new":
                self.sessions.add(session_id)
            return []
        if package is None:
            return []
        try:
            package.decode_message(data, strict=True)
        except package.ValidationError as exc:
            what = f"{method}" if isinstance(method, str) else "response"
            return [f"invalid {what} at {_pointer(exc)}: {exc.message}"]
        params = data.get("params")
        if isinstance(method, str) and isinstance(params, dict):
            session_id = params.get("sessionId")
            if isinstance(session_id, str) and self.sessions and session_id not in self.sessions:
                return [f"{method} for session {session_id!r}, which no session/new opened"]
        return []


class Refusal(Exception):
    """An error answer to one of the agent's requests."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _usable_id(value: Any) -> bool:
    """Whether ``value`` can be the id of a request the probe sent."""
    return type(value) is int or type(value) is str


def _pointer(error: Any) -> str:
    inner = getattr(error, "error", None)
    segments = list(getattr(error, "segments", ()))
    if inner is not None:
        return "/params" + "".join(f"/{segment}" for segment in getattr(inner, "segments", ()))
    return "".join(f"/{segment}" for segment in segments)
