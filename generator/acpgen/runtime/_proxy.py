"""Proxy chains (ACP's unstable ``proxy/initialize`` and ``proxy/successor``).

A *proxy* sits between a client and an agent; a *conductor* (``_conductor``)
starts the chain's components and routes every message between them. A
proxy talks to its conductor alone, over one transport: what the client
(or the proxy before it) sends arrives as plain ACP messages, and what
travels to or from its successor is wrapped in ``proxy/successor``
envelopes, a request or a notification whose params are the wrapped
message's ``method`` and ``params``; a wrapped request's result or error
comes back unchanged as the envelope's.

:class:`Hop` is one JSON-RPC connection whose messages stay JSON values,
passed on as they came; the conductor and :class:`ProxyConnection` are
made of hops. Request ids and cancellation are per hop: a request passed
on is a new request of the next hop, with that hop's next id, and a
``$/cancel_request`` for it is never passed on as it is: the hop that
receives it cancels its own requests sent on the request's behalf (each
with its own id, on its own hop) and still answers with what comes back
(the agent's answer to a cancelled prompt, say), or, when none is
outstanding, cancels the work and answers ``-32800``.

Ordering is the connection's (``_connection``): incoming notifications are
handled one at a time, in order; a request's handler starts, in its own
task, once the messages before it have been handled, and runs up to its
first wait before the next message is handled (so a request passed on
goes out before a notification that followed it); a response reaches
the code awaiting it once the notifications that arrived before it have
been handled, except in a notification handler, which must not wait for
itself.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from ._jsonrpc import (
    CANCEL_REQUEST,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSONRPC_VERSION,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    MessageCodec,
    Notification,
    Request,
    RequestError,
    Response,
    dump_message,
    load_message,
)
from ._runtime import UNSET, ValidationError
from ._trace import Tracer, Tracing, carry, without_trace
from ._transport import DEFAULT_MAX_BUFFERED, MessageTooLarge, Transport

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._mcp import McpProvider

__all__ = [
    "INITIALIZE",
    "PROXY_INITIALIZE",
    "SUCCESSOR",
    "Hop",
    "NotificationHandler",
    "ProxyConnection",
    "ProxyHooks",
    "RequestHandler",
    "unwrap",
    "wrap",
]

log = logging.getLogger(__name__.rpartition(".")[0] + ".proxy")

INITIALIZE = "initialize"
PROXY_INITIALIZE = "proxy/initialize"
"""Sent by a conductor, instead of ``initialize``, to a component with a successor."""
SUCCESSOR = "proxy/successor"
"""The envelope of a message to or from a proxy's successor."""

RequestHandler = Callable[[str, Any], Awaitable[Any]]
"""Answers a request (method, params as JSON) with a result as JSON, or
raises :class:`RequestError` to answer with that error."""
NotificationHandler = Callable[[str, Any], Awaitable[None]]

_in_notification: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "in_proxy_notification", default=False
)
_on_behalf: contextvars.ContextVar[_Work | None] = contextvars.ContextVar(
    "proxy_on_behalf", default=None
)


class _Work:
    """A request being answered: its task and the requests it has sent
    meanwhile and not yet had answered (hop, id), which a cancel of it
    cancels."""

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.sent: dict[tuple[Hop, int], None] = {}
        self.cancelled = False
        self.failure: str | None = None
        """Why the request is answered with an error without its answer."""


def unwrap(params: Any) -> tuple[str, Any]:
    """The wrapped message's method and params of a ``proxy/successor``
    envelope's params (``params`` absent or null: none); raises a -32602
    :class:`RequestError` for an envelope without a method."""
    fields = cast("dict[str, Any]", params) if isinstance(params, dict) else {}
    method = fields.get("method")
    if not isinstance(method, str):
        raise RequestError(
            INVALID_PARAMS,
            "Invalid params",
            "a proxy/successor envelope needs a method",
        )
    return method, fields.get("params")


def wrap(method: str, params: Any) -> dict[str, Any]:
    """A ``proxy/successor`` envelope's params for the message ``method``."""
    envelope: dict[str, Any] = {"method": method}
    if params is not None:
        envelope["params"] = params
    return envelope


class Hop:
    """One JSON-RPC connection over ``transport`` whose messages stay JSON
    values. ``on_request(method, params)`` answers each request (in a task
    of its own), ``on_notification(method, params)`` handles each
    notification (in order); ``on_close(why)`` is called once, when the
    peer has closed (``why`` None) or the connection broke. Requests sent
    and still waiting then fail with ``ConnectionError`` naming ``name``.
    Reading pauses while ``max_queued`` messages, or ``max_buffered`` bytes
    of them, wait to be handled (requests waiting for one of the
    ``max_running`` handler slots included); while a notification handler
    waits for an answer from the peer, which only reading brings, it pauses
    at ``AWAITING_FACTOR`` times those bounds."""

    AWAITING_FACTOR: ClassVar[int] = 4

    def __init__(
        self,
        transport: Transport,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        *,
        name: str = "peer",
        on_close: Callable[[str | None], object] | None = None,
        max_queued: int = 1024,
        max_buffered: int = DEFAULT_MAX_BUFFERED,
        max_running: int = 256,
    ) -> None:
        self.transport = transport
        self.name = name
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_close = on_close
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[tuple[int, dict[str, Any]]]] = {}
        self._cancelled: set[int] = set()
        """The requests of ``_pending`` a ``$/cancel_request`` was sent for."""
        self._answering: dict[Any, list[_Work]] = {}
        self._inbox: asyncio.Queue[_Item | None] = asyncio.Queue()
        self._max_queued = max(1, max_queued)
        self._max_buffered = max(1, max_buffered)
        self._queued_bytes = 0
        """The bytes of text of the messages in ``_inbox`` and ``_waiting``."""
        self._max_running = max(1, max_running)
        self._running = 0
        self._waiting: collections.deque[_Item] = collections.deque()
        """Requests dispatched while ``max_running`` handlers run: they start
        as those finish."""
        self._space = asyncio.Event()
        self._awaiting = 0
        """Notification handlers waiting for an answer from the peer: reading
        never pauses while one does (it waits for what reading brings)."""
        self._arrived = 0
        self._handled = 0
        self._progress = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._reader: asyncio.Task[None] | None = None
        self._dispatcher: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()
        """Set once the hop no longer reads (the peer closed, or :meth:`close`)."""
        self.why: str | None = None
        """What ended the hop, when something broke it."""
        self._write_lock = asyncio.Lock()

    # ---------------------------------------------------------------- serving

    def start(self) -> None:
        """Start reading and dispatching in the background."""
        if self._reader is None:
            loop = asyncio.get_running_loop()
            self._dispatcher = loop.create_task(self._dispatch())
            self._reader = loop.create_task(self._read())

    async def wait_closed(self) -> None:
        await self.closed.wait()

    async def close(self, why: str | None = None) -> None:
        """Stop: requests still waiting fail, the transport is closed."""
        self._end(why)
        with contextlib.suppress(Exception):
            await self.transport.close()
        for task in (self._reader, self._dispatcher, *self._tasks):
            if task is not None and task is not asyncio.current_task():
                task.cancel()

    def _end(self, why: str | None) -> None:
        if self.closed.is_set():
            return
        self.why = why
        self.closed.set()
        said = f"the {self.name} closed the connection" + (f" ({why})" if why else "")
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError(said))
        self._pending.clear()
        self._progress.set()
        self._space.set()
        self._inbox.put_nowait(None)
        if self._on_close is not None:
            self._on_close(why)

    async def _read(self) -> None:
        why: str | None = None
        try:
            while True:
                try:
                    data = await self.transport.receive()
                except MessageTooLarge as error:
                    log.warning("dropped a message from the %s: %s", self.name, error)
                    continue
                if data is None:
                    break
                await self._received(data)
                while self._full() and not self.closed.is_set():
                    # Back-pressure: the peer waits while its messages do.
                    self._space.clear()
                    await self._space.wait()
        except ConnectionError as error:
            why = str(error) or type(error).__name__
        self._end(why)

    def _full(self) -> bool:
        factor = self.AWAITING_FACTOR if self._awaiting else 1
        return (
            self._inbox.qsize() + len(self._waiting) >= self._max_queued * factor
            or self._queued_bytes >= self._max_buffered * factor
        )

    async def _received(self, data: bytes) -> None:
        try:
            message: Any = load_message(data)
        except ValueError:
            await self._send_error(None, PARSE_ERROR, "Parse error")
            return
        if not isinstance(message, dict):
            await self._send_error(None, INVALID_REQUEST, "Invalid request")
            return
        fields = cast("dict[str, Any]", message)
        method = fields.get("method")
        answer = "method" not in fields and ("result" in fields or "error" in fields)
        if "id" in fields and not _an_id(fields["id"]):
            if answer:
                log.warning(
                    "dropped an answer from the %s with an invalid id", self.name
                )
            else:
                await self._send_error(None, INVALID_REQUEST, "Invalid request")
            return
        if fields.get("jsonrpc") != JSONRPC_VERSION or not (
            answer or isinstance(method, str)
        ):
            # Not a JSON-RPC 2.0 message: an answer fails the request it
            # names, anything else is refused (as a connection does).
            id: Any = fields.get("id")
            if not answer:
                await self._send_error(id, INVALID_REQUEST, "Invalid request")
                return
            future = self._pending.pop(id, None) if "id" in fields else None
            if future is None:
                log.warning("dropped an invalid answer from the %s", self.name)
            elif not future.done():
                future.set_exception(
                    RequestError(
                        INVALID_REQUEST, 'invalid response: no "jsonrpc": "2.0"'
                    )
                )
            return
        if isinstance(method, str):
            if "id" in fields:
                work = _Work()
                self._answering.setdefault(fields["id"], []).append(work)
                self._queue(method, fields.get("params"), fields["id"], work, len(data))
            elif method == CANCEL_REQUEST:
                self._cancel(fields.get("params"))
            else:
                self._queue(method, fields.get("params"), None, None, len(data))
            return
        future = self._pending.pop(fields["id"], None) if "id" in fields else None
        if future is None:
            log.warning("dropped an answer from the %s to no request of its", self.name)
        elif not future.done():
            future.set_result((self._arrived, fields))

    def _queue(
        self, method: str, params: Any, id: Any, work: _Work | None, size: int
    ) -> None:
        self._arrived += 1
        self._queued_bytes += size
        self._inbox.put_nowait((method, params, id, work, size))

    async def _dispatch(self) -> None:
        _in_notification.set(True)
        while True:
            item = await self._inbox.get()
            self._space.set()
            if item is None:
                return
            method, params, id, work, size = item
            try:
                if work is None:
                    self._queued_bytes -= size
                    await self._on_notification(method, params)
                elif self._running >= self._max_running:
                    self._waiting.append(item)  # its bytes still count
                else:
                    self._queued_bytes -= size
                    self._start_answer(method, params, id, work)
                    await asyncio.sleep(0)  # it runs up to its first wait
            except ConnectionError as error:
                log.warning(
                    "the %s notification from the %s went nowhere: %s",
                    method,
                    self.name,
                    error,
                )
            except Exception:
                log.exception(
                    "the %s notification from the %s failed", method, self.name
                )
            finally:
                self._handled += 1
                self._progress.set()

    def _start_answer(self, method: str, params: Any, id: Any, work: _Work) -> None:
        context = contextvars.copy_context()
        context.run(_in_notification.set, False)
        context.run(_on_behalf.set, work)
        task = context.run(
            asyncio.get_running_loop().create_task,
            self._answer(method, params, id, work),
        )
        work.task = task
        self._running += 1
        self._tasks.add(task)
        task.add_done_callback(self._answered)

    def _answered(self, task: asyncio.Task[Any]) -> None:
        """A request's handler ended: the next request waiting for a slot
        starts."""
        self._tasks.discard(task)
        self._running -= 1
        if self._waiting and not self.closed.is_set():
            method, params, id, work, size = self._waiting.popleft()
            self._queued_bytes -= size
            if work is not None:  # always: only requests wait
                self._start_answer(method, params, id, work)
        self._space.set()

    async def _answer(self, method: str, params: Any, id: Any, work: _Work) -> None:
        cancelled = False
        try:
            if work.cancelled:
                raise asyncio.CancelledError
            result = await self._on_request(method, params)
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "result": result}
        except asyncio.CancelledError:
            if self.closed.is_set():
                return
            if work.failure is not None:
                reply = _error_reply(id, INTERNAL_ERROR, "Internal error", work.failure)
            else:
                reply = _error_reply(id, REQUEST_CANCELLED, "Request cancelled")
            # Sent soon, never awaited: a cancelled task must end even when
            # the peer does not read (shutdown cancels every task).
            cancelled = True
        except RequestError as error:
            reply = _error_reply(id, error.code, error.message, error.data)
        except ConnectionError as error:
            reply = _error_reply(id, INTERNAL_ERROR, "Internal error", str(error))
        except Exception as error:
            log.exception("the %s request from the %s failed", method, self.name)
            reply = _error_reply(id, INTERNAL_ERROR, "Internal error", str(error))
        finally:
            works = self._answering.get(id, [])
            if work in works:
                works.remove(work)
                if not works:
                    del self._answering[id]
        try:
            data = dump_message(reply)
        except ValueError:
            # A result with no JSON text (NaN ...).
            log.warning("the answer to the %s request is no JSON", method)
            data = dump_message(_error_reply(id, INTERNAL_ERROR, "Internal error"))
        if cancelled:
            self._send_soon(data)
            return
        with contextlib.suppress(ConnectionError):
            await self._write_data(data)

    def _cancel(self, params: Any) -> None:
        fields = cast("dict[str, Any]", params) if isinstance(params, dict) else {}
        request_id = fields.get("requestId")
        if not _an_id(request_id):
            return
        for work in self._answering.get(request_id, []):
            if work.sent:
                # Cancelled per hop: each request sent on its behalf is
                # cancelled on its own hop, and its answer still comes.
                for hop, sent_id in list(work.sent):
                    hop.cancel_soon(sent_id)
            elif work.task is not None:
                work.task.cancel()
            else:
                work.cancelled = True

    def _in_flight(self) -> list[asyncio.Task[None]]:
        return [
            work.task
            for works in self._answering.values()
            for work in works
            if work.task is not None and not work.task.done()
        ]

    async def settle(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the requests being answered."""
        tasks = self._in_flight()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def abandon(self, why: str) -> None:
        """Answer every request still being answered with a ``-32603`` error
        whose data is ``why``, without waiting for its answer."""
        while self._waiting:
            # Never started: answered now.
            _, _, id, work, size = self._waiting.popleft()
            self._queued_bytes -= size
            works = self._answering.get(id, [])
            if work in works:
                works.remove(work)
                if not works:
                    del self._answering[id]
            reply = _error_reply(id, INTERNAL_ERROR, "Internal error", why)
            self._send_soon(dump_message(reply))
        self._space.set()
        for works in self._answering.values():
            for work in works:
                work.failure = why
                if work.task is not None:
                    work.task.cancel()
                else:
                    work.cancelled = True
        tasks = self._in_flight()
        if tasks:
            await asyncio.wait(tasks)

    def cancel_soon(self, id: int) -> None:
        """Send ``$/cancel_request`` for this hop's request ``id`` (once: a
        request already cancelled, answered or unknown costs nothing)."""
        if (
            id in self._pending
            and id not in self._cancelled
            and not self.closed.is_set()
        ):
            self._cancelled.add(id)
            message = {
                "jsonrpc": "2.0",
                "method": CANCEL_REQUEST,
                "params": {"requestId": id},
            }
            self._send_soon(dump_message(message))

    def _send_soon(self, data: bytes) -> None:
        """Send ``data`` without waiting: at once when the transport takes it
        (no other write under way), else by a task, behind the writes under
        way."""
        if self.closed.is_set():
            return
        send_nowait = getattr(self.transport, "send_nowait", None)
        if send_nowait is not None and not self._write_lock.locked():
            try:
                if send_nowait(data):
                    return
            except ConnectionError:
                return

        async def write() -> None:
            with contextlib.suppress(ConnectionError):
                await self._write_data(data)

        task = asyncio.get_running_loop().create_task(write())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ---------------------------------------------------------------- sending

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and return its result as JSON; an error answer
        raises :class:`RequestError` with its code, message and data as they
        came. Cancelling it sends ``$/cancel_request`` with its id."""
        if self.closed.is_set():
            raise ConnectionError(f"the {self.name} closed the connection")
        self.start()
        id = self._next_id
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        future: asyncio.Future[tuple[int, dict[str, Any]]] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[id] = future
        work = _on_behalf.get()
        if work is not None:
            work.sent[(self, id)] = None
        in_notification = _in_notification.get()
        if in_notification:
            self._awaiting += 1
            self._space.set()
        try:
            await self._write(message)
            arrived, answer = await future
        except asyncio.CancelledError:
            self.cancel_soon(id)
            raise
        finally:
            self._pending.pop(id, None)
            self._cancelled.discard(id)
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: it may have come unawaited (close)
            if work is not None:
                work.sent.pop((self, id), None)
            if in_notification:
                self._awaiting -= 1
        if not in_notification:
            # The notifications that came before the answer are handled first.
            while self._handled < arrived and not self.closed.is_set():
                self._progress.clear()
                await self._progress.wait()
        error = answer.get("error")
        if "result" not in answer:
            fields = cast("dict[str, Any]", error) if isinstance(error, dict) else {}
            code = fields.get("code")
            raise RequestError(
                code if isinstance(code, int) else INTERNAL_ERROR,
                str(fields.get("message", "")),
                fields.get("data", UNSET),
            )
        return answer["result"]

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        if self.closed.is_set():
            raise ConnectionError(f"the {self.name} closed the connection")
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message)

    async def _send_error(self, id: Any, code: int, message: str) -> None:
        with contextlib.suppress(ConnectionError):
            await self._write(_error_reply(id, code, message))

    async def _write(self, message: dict[str, Any]) -> None:
        await self._write_data(dump_message(message))

    async def _write_data(self, data: bytes) -> None:
        async with self._write_lock:
            await self.transport.send(data)


_Item = tuple[str, Any, Any, "_Work | None", int]
"""A message to dispatch: method, params, id, its work (a request) and its size."""


def _an_id(value: Any) -> bool:
    """Whether ``value`` can be a request's id (a string, a number that JSON
    can write, null)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or (
        isinstance(value, (str, int)) and not isinstance(value, bool)
    )


def _error_reply(id: Any, code: int, message: str, data: Any = UNSET) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not UNSET:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": error}


# -------------------------------------------------------------------- the proxy

P = TypeVar("P")


class ProxyHooks:
    """What a proxy does with each message, by direction. Every hook passes
    its message on unchanged by default (a request's answer comes back
    unchanged too); override the ones you need. A hook may change the
    message (forward another), drop it (a notification: return without
    forwarding), answer a request itself (return a result without
    forwarding, or raise :class:`RequestError`), or send new messages
    toward either side through :attr:`connection` at any time.

    ``params`` are the package's classes for the methods of the schema (a
    ``session/prompt`` request's are a ``PromptRequest``), JSON otherwise;
    a result may be either. A hook that is not overridden passes the JSON
    on as it came, without decoding it."""

    def __init__(self, connection: ProxyConnection[Any]) -> None:
        self.connection = connection
        """The proxy's end of its conductor connection."""

    async def on_initialize(self, params: Any, result: Any) -> Any:
        """The successor answered the ``initialize`` this proxy forwarded for
        ``proxy/initialize`` (``params``) with ``result``: return the
        answer, the capabilities of the chain from this proxy on. Its
        ``protocolVersion`` is always the successor's."""
        return result

    async def on_client_request(self, method: str, params: Any) -> Any:
        """A request from the client's side: by default sent on to the
        successor, and its answer returned."""
        return await self.connection.request_successor(method, params)

    async def on_client_notification(self, method: str, params: Any) -> None:
        """A notification from the client's side: by default sent on."""
        await self.connection.notify_successor(method, params)

    async def on_successor_request(self, method: str, params: Any) -> Any:
        """A request from the successor (``session/request_permission`` ...):
        by default sent on to the client, and its answer returned."""
        return await self.connection.request_client(method, params)

    async def on_successor_notification(self, method: str, params: Any) -> None:
        """A notification from the successor (``session/update`` ...): by
        default sent on to the client."""
        await self.connection.notify_client(method, params)


_HOOKS = (
    "on_initialize",
    "on_client_request",
    "on_client_notification",
    "on_successor_request",
    "on_successor_notification",
)


class ProxyConnection(Generic[P]):
    """A proxy's end of its connection to the conductor, over ``transport``.

    ``make_proxy(conn)`` returns the hooks (a :class:`ProxyHooks`).
    ``proxy/initialize`` is answered by forwarding ``initialize`` to the
    successor first, as the protocol requires; a plain ``initialize`` is
    refused (``-32600``): a proxy runs under a conductor. With ``strict``
    the params a hook gets are decoded strictly (the schema).

    With a ``tracer`` (see ``_trace``) each request it receives runs in a
    server span, a child of the context the request carries in ``_meta``,
    and each request it sends on (forwarded or a hook's) in a client span, a
    child of that: its context replaces the trace keys of the forwarded
    params, so the next hop continues the proxy's span. Notifications are
    handled in the context they carry and pass on as they are (a hook's new
    one carries the current context). Without one, nothing is changed."""

    codec: ClassVar[MessageCodec]
    """The package's method table and message codec."""
    interface: ClassVar[type] = ProxyHooks
    """The package's ``Proxy``: a hook it defines is the default one."""

    def __init__(
        self,
        make_proxy: Callable[[Self], P],
        transport: Transport,
        *,
        strict: bool = False,
        tracer: Tracer | None = None,
    ) -> None:
        self._strict = strict
        self._tracing = None if tracer is None else Tracing(tracer, "proxy")
        self._mcp: McpProvider | None = None
        self.hop = Hop(transport, self._request, self._notification, name="conductor")
        """The connection to the conductor."""
        self.initialized: Any = None
        """The answer to ``proxy/initialize``, once given (JSON)."""
        self.handler = make_proxy(self)
        interface = type(self).interface
        self._overridden = frozenset(
            name
            for name in _HOOKS
            if getattr(type(self.handler), name, None)
            is not getattr(interface, name, None)
        )
        """The hooks the handler defines itself: the others pass JSON on."""

    def start(self) -> None:
        """Start serving in the background."""
        self.hop.start()

    async def run(self) -> None:
        """Serve until the conductor closes the connection."""
        self.hop.start()
        await self.hop.wait_closed()

    async def close(self) -> None:
        await self.hop.close()

    @property
    def mcp_provider(self) -> McpProvider:
        """The MCP servers this proxy provides to its successor over
        ``mcp/message`` (MCP over ACP): ``add(name, handler)`` serves an
        ``McpTools`` or an ``McpStdioServer`` under a new ``serverId``, whose
        ``declaration(McpServerAcp)`` the proxy adds to the ``mcp_servers``
        of the ``session/new`` it forwards. The successor's ``mcp/message``
        requests for those ids are answered here (their notifications go to
        the successor), before any hook; the others pass on as usual."""
        if self._mcp is None:
            from ._mcp import McpProvider

            self._mcp = McpProvider(_SuccessorEnd(self))
        return self._mcp

    # ------------------------------------------------------------ sending

    async def request_successor(self, method: str, params: Any) -> Any:
        """Send a request to the successor; its result, typed."""
        result = await self._send(method, self._params(method, params), True)
        return self.codec.decode_result(method, result, strict=self._strict)

    async def notify_successor(self, method: str, params: Any) -> None:
        """Send a notification to the successor."""
        await self.hop.notify(
            SUCCESSOR, wrap(method, self._carried(method, self._params(method, params)))
        )

    async def request_client(self, method: str, params: Any) -> Any:
        """Send a request toward the client; its result, typed."""
        result = await self._send(method, self._params(method, params), False)
        return self.codec.decode_result(method, result, strict=self._strict)

    async def notify_client(self, method: str, params: Any) -> None:
        """Send a notification toward the client."""
        await self.hop.notify(
            method, self._carried(method, self._params(method, params))
        )

    async def _send(self, method: str, params: Any, onward: bool) -> Any:
        """Send a request toward the successor (``onward``) or the client,
        in a client span when traced; its result as JSON."""
        tracing = self._tracing
        if tracing is None:
            return await self._send_as_is(method, params, onward)
        span = tracing.client_span(method, None)
        if isinstance(params, dict):
            fields = without_trace(cast("dict[str, Any]", params))
            params = carry({"params": fields}, span.context)["params"]
        tracing.started(span)
        try:
            result = await self._send_as_is(method, params, onward)
        except BaseException as failure:
            tracing.ended(span, failure)
            raise
        tracing.ended(span, None)
        return result

    async def _send_as_is(self, method: str, params: Any, onward: bool) -> Any:
        if onward:
            return await self.hop.request(SUCCESSOR, wrap(method, params))
        return await self.hop.request(method, params)

    def _carried(self, method: str, params: Any) -> Any:
        """A hook's notification's params with the current trace context
        (none replaced), when traced."""
        tracing = self._tracing
        if tracing is None or not isinstance(params, dict):
            return params
        return carry({"params": params}, tracing.notifying(method))["params"]

    def _params(self, method: str, params: Any) -> Any:
        return self.codec.encode_message(Request(0, method, params)).get("params")

    def _result(self, result: Any) -> Any:
        return self.codec.encode_message(Response(0, result))["result"]

    def _typed(self, method: str, params: Any, request: bool) -> Any:
        """``params`` decoded as the method's, for a hook: JSON for a
        method the schema does not have."""
        info = self.codec.methods.get(method)
        if info is None or (info.request if request else info.notification) is None:
            return params
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if request:
            message["id"] = 0
        if params is not None:
            message["params"] = params
        try:
            decoded = self.codec.decode_message(message, strict=self._strict)
        except ValidationError as error:
            raise RequestError(
                INVALID_PARAMS, "Invalid params", {"message": error.message}
            ) from None
        return cast("Request[Any] | Notification[Any]", decoded).params

    # ------------------------------------------------------------ receiving

    async def _request(self, method: str, params: Any) -> Any:
        tracing = self._tracing
        if tracing is None:
            return await self._serve(method, params)
        inner, inner_params = method, params
        if method == SUCCESSOR:
            with contextlib.suppress(RequestError):  # _serve refuses it
                inner, inner_params = unwrap(params)
        tracing.seen("request", inner, inner_params)
        return await tracing.serve(
            inner, None, inner_params, self._serve, method, params
        )

    async def _serve(self, method: str, params: Any) -> Any:
        if method == PROXY_INITIALIZE:
            return await self._initialize(params)
        if method == INITIALIZE:
            raise RequestError(
                INVALID_REQUEST,
                "Invalid request",
                "this component is a proxy: it takes proxy/initialize, from a conductor",
            )
        if method == SUCCESSOR:
            inner, inner_params = unwrap(params)
            provider = self._mcp
            if provider is not None and inner == MCP_MESSAGE:
                fields = (
                    cast("dict[str, Any]", inner_params)
                    if isinstance(inner_params, dict)
                    else {}
                )
                server = fields.get("serverId")
                # A serverId that is no string is the provider's to refuse
                # (-32602), as it refuses its other malformed params.
                bad = "serverId" in fields and not isinstance(server, str)
                if bad or server in provider.servers:
                    return await provider.answer(inner_params)
            if "on_successor_request" not in self._overridden:
                return await self._send(inner, inner_params, False)
            typed = self._typed(inner, inner_params, True)
            return self._result(await self._hooks.on_successor_request(inner, typed))
        if "on_client_request" not in self._overridden:
            return await self._send(method, params, True)
        typed = self._typed(method, params, True)
        return self._result(await self._hooks.on_client_request(method, typed))

    async def _notification(self, method: str, params: Any) -> None:
        tracing = self._tracing
        if tracing is None:
            await self._notified(method, params)
            return
        inner, inner_params = method, params
        if method == SUCCESSOR and isinstance(params, dict):
            envelope = cast("dict[str, Any]", params)
            wrapped: object = envelope.get("method")
            inner = wrapped if isinstance(wrapped, str) else method
            inner_params = envelope.get("params")
        tracing.seen("notification", inner, inner_params)
        await tracing.notified(inner_params, self._notified, method, params)

    async def _notified(self, method: str, params: Any) -> None:
        if method == SUCCESSOR:
            try:
                inner, inner_params = unwrap(params)
            except RequestError:
                log.warning("dropped a proxy/successor notification without a method")
                return
            if "on_successor_notification" not in self._overridden:
                await self.hop.notify(inner, inner_params)
                return
            typed = self._typed_notification(inner, inner_params)
            if typed is not _DROP:
                await self._hooks.on_successor_notification(inner, typed)
            return
        if "on_client_notification" not in self._overridden:
            await self.hop.notify(SUCCESSOR, wrap(method, params))
            return
        typed = self._typed_notification(method, params)
        if typed is not _DROP:
            await self._hooks.on_client_notification(method, typed)

    def _typed_notification(self, method: str, params: Any) -> Any:
        try:
            return self._typed(method, params, False)
        except RequestError as error:
            log.warning("dropped a %s notification: %s", method, error.data)
            return _DROP

    async def _initialize(self, params: Any) -> Any:
        result = await self._send(INITIALIZE, params, True)
        if "on_initialize" in self._overridden:
            answer = await self._hooks.on_initialize(
                self._typed(INITIALIZE, params, True),
                self.codec.decode_result(INITIALIZE, result, strict=self._strict),
            )
            answered = self._result(answer)
            if isinstance(result, dict) and isinstance(answered, dict):
                version = cast("Mapping[str, Any]", result).get("protocolVersion")
                answered = dict(cast("Mapping[str, Any]", answered))
                if answered.get("protocolVersion") != version:
                    log.warning(
                        "the proxy's answer to proxy/initialize changed protocolVersion: "
                        "the successor's is kept"
                    )
                    answered["protocolVersion"] = version
            result = answered
        self.initialized = result
        return result

    @property
    def _hooks(self) -> ProxyHooks:
        return cast("ProxyHooks", self.handler)


_DROP: Any = object()

MCP_MESSAGE = "mcp/message"


class _SuccessorEnd:
    """What an ``McpProvider`` of a proxy sends through: notifications to
    the successor (it answers requests itself, through the proxy)."""

    def __init__(self, proxy: ProxyConnection[Any]) -> None:
        self.proxy = proxy
        self.answerers: dict[str, Callable[[Any], Awaitable[Any]]] = {}
        self.listeners: dict[str, Callable[[Any], Awaitable[None]]] = {}

    async def request(self, method: str, params: Any = None) -> Any:
        return await self.proxy.hop.request(SUCCESSOR, wrap(method, params))

    async def notify(self, method: str, params: Any = None) -> None:
        await self.proxy.hop.notify(SUCCESSOR, wrap(method, params))
