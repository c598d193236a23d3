"""One end of an ACP connection: JSON-RPC 2.0 over a :class:`Transport`.

The generated ``connection`` module subclasses :class:`Connection` once per
side, with the package's method table and typed methods to call the peer;
everything here is the same in every package.

Ordering (the contract):

* Incoming notifications and requests are dispatched one at a time, in the
  order they arrived. A notification's handler is awaited before the next
  message is dispatched; a request's handler is started in its own task
  (so a long ``session/prompt`` does not hold back the ``session/cancel``
  that follows it) once everything before it has been dispatched: a request
  never overtakes the notifications that came before it. On Python 3.12
  and later that task starts eagerly: the handler runs at once up to its
  first ``await`` of something not yet done.
* A response is returned to the code awaiting it only once the messages
  that arrived before it have been dispatched: when ``prompt`` returns, the
  updates streamed before its response have been handled.
* A request sent from a notification handler (or a task it started) is
  exempt from that wait, which would otherwise wait for itself; responses
  are read while handlers run, so such a handler never stalls the
  connection. Other code awaiting a response waits for the handlers, so a
  notification handler must not wait for such code to finish.
* ``$/cancel_request`` is acted on as it arrives: it cancels the handler of
  that id (all of them, if the peer reused an id), or, when the request is
  still queued, answers it ``-32800`` without running its handler.

Cancellation by default (the package's ``CANCELLATION``, a
:class:`~._jsonrpc.Cancellation`): a ``session/cancel`` cancels the work of
its session on the end it passes through, in order with the rest. Received
by an agent's end, as it is dispatched (after every request before it has
started), it cancels the asyncio tasks of the ``session/prompt`` handlers of
that session still running, then the ``cancel`` handler (if any) is
awaited; sent by a client's end, before it goes out, it cancels the
``session/request_permission`` handlers of that session still running. A
handler so cancelled gets ``CancelledError`` where it waits; unless it
catches it and returns a result of its own, its request is answered with
the rule's result (a v1 prompt ``{"stopReason": "cancelled"}``, a permission
request the ``cancelled`` outcome), as it is when ``$/cancel_request``
cancels it. Such a request still waiting for a handler slot is answered so
without running. ``cancel_session_work=False`` turns the cancelling off (the
answers of handlers cancelled otherwise stay).

This is the rule of the Rust SDK (agentclientprotocol/rust-sdk, the
``concepts/ordering`` chapter): its dispatch loop waits for each handler to
complete before it processes the next message. Two departures: a request's
handler runs in its own task once dispatched (the loop waits for it to
start, not to finish), and the deadlock that chapter warns of, a handler
awaiting the peer's response while the loop that would deliver it waits
for that handler, cannot happen here, because responses are read and
delivered while handlers run.

Capabilities: once the ``initialize`` exchange has shown what the peer
advertises, calling a method the peer did not advertise (the package's
``REQUIRES``) raises :class:`CapabilityError` before anything is sent; this
end advertising a capability without the handler behind it raises
:class:`HandlerError` as its part of ``initialize`` is sent (the client's
``initialize`` call; the agent's answer, which goes out as a -32603 instead).
``check_capabilities=False`` turns both off. A client connection folds the
sessions it opens (``fold_sessions``, see ``_folding``).

Before ``initialize`` (see :mod:`._handshake` for the versions): requests
other than ``initialize`` are answered ``-32600`` and notifications other
than ``$/cancel_request`` dropped on an agent's end until an ``initialize``
has been answered with a result, as the TypeScript SDK's agents refuse
requests (``agentInitializationGate`` in its ``dist/v1/acp.js``,
``agentInitializationGuard`` in ``dist/v2/acp.js``, which drops the
notifications too) and the Rust SDK's ``ProtocolCompat`` does
(``ensure_initialized``). A request behind an ``initialize`` still being
handled waits for its answer. ``require_initialize=False`` turns that off.

Every request is answered, with its own id: a result, or a JSON-RPC error
when the handler failed, the request was refused or the reply has no JSON
text. An id or method holding a lone surrogate (JSON text may escape one,
``"\\ud800"``; UTF-8 has none) is no exception: the id goes back escaped
as it came, the method is quoted escaped; only an id that cannot be read
is answered with a null id.

Memory is bounded: at most ``max_queued`` messages wait for dispatch, and
at most ``max_buffered`` bytes of their text (reading pauses while the queue
is full, except while a handler awaits an answer from the peer, since
pausing then could never end; one message always fits), at most ``max_running``
request handlers run at once, and a message over ``max_message`` bytes is
discarded whole.

One cohesive thing, longer than the other modules: the one connection
class, with the two helpers that start one over stdio or a subprocess.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import difflib
import enum
import functools
import inspect
import logging
import sys
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Coroutine,
    Mapping,
    Sequence,
)
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Final,
    Generic,
    TypedDict,
    TypeVar,
    cast,
)

from ._capabilities import Capabilities
from ._folding import PROMPT, UPDATE, SessionFolds
from ._handshake import (
    INITIALIZE,
    OlderInitialize,
    answer_older,
    initialize,
    lenient_initialize,
    not_initialized,
    older_initialize,
)
from ._jsonrpc import (
    CANCEL_REQUEST,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    Cancellation,
    ErrorResponse,
    Message,
    MessageCodec,
    Notification,
    ParamsError,
    Request,
    RequestError,
    RequestId,
    Response,
    RpcError,
    Side,
    dump_message,
    load_message,
    new_notification,
    new_request,
    new_response,
    printable,
)
from ._permissions import (
    PERMISSION,
    PermissionDecision,
    PermissionPolicy,
    decision_of,
)
from ._runtime import UNSET, ValidationError
from ._trace import TraceContext, Tracer, Tracing, carry
from ._transport import (
    DEFAULT_CLOSE_GRACE,
    DEFAULT_MAX_BUFFERED,
    DEFAULT_MAX_MESSAGE,
    READ_BUFFER,
    FileReading,
    FileWriting,
    Loaded,
    MessageTooLarge,
    StreamTransport,
    Transport,
    spawn_process,
    streamable,
    text_of,
)

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "TRANSITIONS",
    "Connection",
    "ConnectionOptions",
    "ConnectionState",
    "HandlerError",
    "open_stdio",
    "spawn_connection",
]

H = TypeVar("H")
T = TypeVar("T")

log = logging.getLogger(__name__.rpartition(".")[0] + ".connection")

_in_notification_handler: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "in_notification_handler", default=False
)
"""True in a notification handler and in the tasks it starts."""

_Answer = tuple[int, Response[Any] | ErrorResponse]
_Item = tuple[
    Callable[..., Awaitable[Any]] | None,
    str,
    tuple[Any, ...],
    Request[Any] | None,
]
"""A message waiting for dispatch: its handler, method, arguments and, for a
request, the request (whose handler runs in its own task)."""

_JSON_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})
"""The types of params and results given as JSON (never validated)."""

_EXTENSION_HANDLERS = frozenset(
    {"ext_method", "ext_notification", "unsupported_version"}
)


class ConnectionState(enum.Enum):
    """Where a :class:`Connection` is in its life (:attr:`Connection.state`);
    :data:`TRANSITIONS` says where each state may go.

    * ``OPEN``: reading what the peer sends and dispatching it (before and
      after ``initialize``: that is the handshake's, not the life's).
    * ``DRAINING``: the peer closed its side, or reading it failed: nothing
      more is read and the requests waiting for the peer's answers have
      failed; what was read is still handled (the queued messages all, in
      order; the requests' handlers for at most :attr:`Connection.grace`
      seconds), and replies still go out.
    * ``BROKEN``: a write failed while open: the peer takes nothing any
      more, so reading stops (the read loop is cancelled) and the
      connection closes as that loop ends.
    * ``CLOSED``: the end: the queue dropped, the handlers cancelled, the
      transport closed (or being closed). Nothing is sent or handled.
    """

    OPEN = "open"
    DRAINING = "draining"
    BROKEN = "broken"
    CLOSED = "closed"


_OPEN: Final = ConnectionState.OPEN
_DRAINING: Final = ConnectionState.DRAINING
_BROKEN: Final = ConnectionState.BROKEN
_CLOSED: Final = ConnectionState.CLOSED

TRANSITIONS: Final[Mapping[ConnectionState, frozenset[ConnectionState]]] = {
    _OPEN: frozenset({_DRAINING, _BROKEN, _CLOSED}),
    _DRAINING: frozenset({_CLOSED}),
    _BROKEN: frozenset({_CLOSED}),
    _CLOSED: frozenset(),
}
"""The states each state may go to: the peer closing its side drains an
open connection; a failed write breaks it; :meth:`Connection.close`, or the
end of draining or of the read loop, closes it, from any state but closed.
A write failing while draining changes nothing (the draining goes on)."""


class ConnectionOptions(TypedDict, total=False):
    """The keyword options of :class:`Connection` that the helpers starting
    one (``run_agent_stdio``, ``spawn_agent``, ``connect_in_memory``) pass on."""

    strict: bool
    max_queued: int
    max_buffered: int
    max_running: int
    error_detail: bool
    validate_outgoing: bool
    check_handler: bool
    check_capabilities: bool
    fold_sessions: bool
    require_initialize: bool
    cancel_session_work: bool
    permission_policy: PermissionPolicy
    siblings: Mapping[int, str]
    tracer: Tracer


class HandlerError(TypeError):
    """The handler object has a public method the interface does not have
    (a misspelled handler would otherwise answer -32601 at run time), or
    this end advertises a capability whose handler it does not implement."""


class Connection(Generic[H]):
    """One end of a JSON-RPC connection.

    ``make_handler(conn)`` returns the object whose methods handle what the
    peer sends. ``reader``/``writer`` are asyncio streams (messages as
    lines), or pass a :class:`Transport` as ``reader`` alone.

    Unknown methods answer -32601, params that do not decode -32602, a
    handler's exception -32603 (or the :class:`RequestError` it raised; with
    ``error_detail`` the exception's text is the error's data), and a reply
    that has no JSON text (NaN, a lone surrogate, a cycle) -32603 too.
    A line that is not JSON is answered -32700, whatever it holds, and
    reading goes on. With ``validate_outgoing`` every message whose params
    or result is of a generated class is checked against the schema before
    it is sent, and against the type its method takes there (a handler of
    ``session/new`` returning a ``PromptResponse`` is refused), raising
    ``ValidationError`` at the sender: a request or notification is not
    sent; a handler's result is logged and answered -32603 (the error's
    text its data, with ``error_detail``). JSON goes out as it is.
    ``check_capabilities`` and ``fold_sessions``: see the module's
    documentation. ``tracer`` carries W3C trace context in ``_meta`` and
    tells it spans and messages (see ``_trace``; off by default). When the
    peer closes, requests still waiting fail with
    ``ConnectionError`` (saying what broke the connection, when something
    did) and what was already read is still handled: the queued messages
    all, in order, the requests' handlers for at most :attr:`grace`
    seconds; :meth:`close` drops it.
    """

    side: ClassVar[Side]
    """The side this end handles: ``"agent"`` or ``"client"``."""
    codec: ClassVar[MessageCodec]
    """The package's method table and message codec."""
    interface: ClassVar[type]
    """The handler interface of this side (``Agent`` or ``Client``)."""
    process: asyncio.subprocess.Process | None = None
    """The peer's process, when this end started it."""
    protocol_version: ClassVar[int | None]
    """The ``protocolVersion`` the package speaks (``None``: not known)."""
    requires: ClassVar[Mapping[str, tuple[str, ...]]]
    """The package's ``REQUIRES``: the capability each gated method needs
    (none, when a subclass does not say)."""
    session_class: ClassVar[Any]
    """The package's ``Session``, on the side that folds sessions (none
    folded, when a subclass does not say)."""
    session_sources: ClassVar[tuple[tuple[str, str], ...]]
    """The package's ``SESSION_SOURCES``."""
    cancellation: ClassVar[Cancellation | None] = None
    """The package's ``CANCELLATION`` (none, when a subclass does not say):
    see the module's documentation."""

    def __init__(
        self,
        make_handler: Callable[[Self], H],
        reader: asyncio.StreamReader | Transport,
        writer: asyncio.StreamWriter | None = None,
        *,
        strict: bool = False,
        max_message: int = DEFAULT_MAX_MESSAGE,
        max_queued: int = 1024,
        max_buffered: int = DEFAULT_MAX_BUFFERED,
        max_running: int = 256,
        error_detail: bool = True,
        validate_outgoing: bool = False,
        check_handler: bool = True,
        check_capabilities: bool = True,
        fold_sessions: bool = True,
        require_initialize: bool = True,
        cancel_session_work: bool = True,
        permission_policy: PermissionPolicy | None = None,
        siblings: Mapping[int, str] | None = None,
        tracer: Tracer | None = None,
    ) -> None:
        if isinstance(reader, asyncio.StreamReader):
            if writer is None:
                raise TypeError("a StreamReader needs its StreamWriter")
            self.transport = StreamTransport(reader, writer, max_message=max_message)
        else:
            self.transport = reader
        self._strict = strict
        self._siblings = siblings
        """Protocol version -> import name of the package of that version,
        for the answer of an agent that chose another (see
        :func:`._handshake.sibling_package`)."""
        self._state = _OPEN
        """The connection's life: see :class:`ConnectionState`. Everything
        else here is bookkeeping (what is queued, running, pending), or the
        handshake's: ``_initialized``, whether an agent's end serves more
        than ``initialize`` (it is open and may close either way)."""
        self._initialized = (
            not require_initialize
            or self.side != "agent"
            or INITIALIZE not in self.codec.methods
        )
        self._initializing: asyncio.Task[Any] | None = None
        """The handler of the ``initialize`` in progress, if any."""
        self._error_detail = error_detail
        self._validate_outgoing = validate_outgoing
        self._max_queued = max(1, max_queued)
        self._max_buffered = max(1, max_buffered)
        self._queued_bytes = 0
        """The bytes of text of the messages in ``_inbox``."""
        self._sizes: collections.deque[int] = collections.deque()
        """The size of each, in order."""
        self._reading = 0
        """The size of the message being read."""
        self._max_running = max(1, max_running)
        self._running = 0
        self._waiting: collections.deque[Request[Any]] = collections.deque()
        """Requests dispatched while ``max_running`` handlers run: they start
        as those finish, and count towards ``max_queued``."""
        self._next_id = 0
        self._pending: dict[RequestId, tuple[str, asyncio.Future[_Answer]]] = {}
        self._inbox: collections.deque[_Item] = collections.deque()
        self._wake_worker = asyncio.Event()
        self._space = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._dispatching = False
        """True while the dispatcher works through the queue (a handler of
        it may be running): what arrives meanwhile waits its turn (the
        dispatcher's, not the connection's life)."""
        self._queued = 0
        """How many messages have been queued for dispatch."""
        self._handled = 0
        """How many of those have been dispatched (in order)."""
        self._barriers: list[tuple[int, asyncio.Future[None]]] = []
        self._awaiting_peer = 0
        """Notification handlers waiting for an answer from the peer."""
        self._answering: dict[RequestId, list[asyncio.Task[None]]] = {}
        self._cancelled_queued: set[RequestId] = set()
        cancellation = getattr(type(self), "cancellation", None)
        self._cancelled_answers: Mapping[str, Any] = (
            cancellation.answers if cancellation is not None else {}
        )
        """Method -> the result its handler's request is answered with when
        the handler is cancelled."""
        self._cancellation: Cancellation | None = (
            cancellation if cancel_session_work else None
        )
        """What cancels a session's work, when this end does it."""
        self._session_work: dict[str, dict[asyncio.Task[Any], RequestId]] = {}
        """Session -> the running handlers (and their request ids) of the
        requests a ``session/cancel`` of that session cancels, and the tasks
        of :meth:`start_session_work` (id None)."""
        self.permission_policy = (
            PermissionPolicy() if permission_policy is None else permission_policy
        )
        """How a client's end answers ``session/request_permission`` when its
        handler has no ``request_permission`` of its own (see
        ``_permissions``): by default it denies."""
        self.answerers: dict[str, Callable[[Any], Awaitable[Any]]] = {}
        """Method -> what answers its requests when the handler does not
        (has no such method, or the interface's default): ``_mcp``'s
        provider for ``mcp/message``."""
        self.listeners: dict[str, Callable[[Any], Awaitable[None]]] = {}
        """Method -> what sees its notifications' params before the
        handler does (in order with the other notifications): ``_mcp``'s
        consumer for ``mcp/message``."""
        self._tracing = None if tracer is None else Tracing(tracer, self.side)
        """W3C trace context in ``_meta``, told to ``tracer`` (see ``_trace``)."""
        self._background: set[asyncio.Task[None]] = set()
        self._write_lock = asyncio.Lock()
        self._loop_task: asyncio.Task[None] | None = None
        self.grace = 5.0
        """Seconds the request handlers still running when the peer closes
        its side get to finish and answer before they are cancelled (the
        queued notifications are handled whatever it is)."""
        cls = type(self)
        self._capabilities = (
            Capabilities(getattr(cls, "requires", {}), self.codec.methods, self.side)
            if check_capabilities
            else None
        )
        session_class: Any = getattr(cls, "session_class", None)
        self._folds: SessionFolds[Any] | None = (
            SessionFolds(
                session_class, getattr(cls, "session_sources", ()), self._decode_params
            )
            if fold_sessions and session_class is not None
            else None
        )
        self.handler = make_handler(self)
        if check_handler:
            self._check_handler()

    # ------------------------------------------------------------ the handler

    def _handler_names(self) -> frozenset[str]:
        names = set(_EXTENSION_HANDLERS)
        for info in self.codec.methods.values():
            for call in (info.request, info.notification):
                if call is not None and call.side == self.side:
                    names.add(call.handler)
        return frozenset(names)

    def _check_handler(self) -> None:
        """A public method of a subclass of the interface that is no handler
        of it is a mistake (``new_sesion``): refuse it, saying which handler
        was meant."""
        handler = self.handler
        interface = getattr(type(self), "interface", None)
        if interface is None or interface not in type(handler).__mro__:
            return
        known = self._handler_names()
        wrong: list[str] = []
        for cls in type(handler).__mro__:
            if cls is interface or cls is object or issubclass(interface, cls):
                continue
            for name, value in vars(cls).items():
                if (
                    name.startswith("_")
                    or name in known
                    or not inspect.iscoroutinefunction(value)
                ):
                    continue
                close = difflib.get_close_matches(name, sorted(known), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                wrong.append(f"{cls.__name__}.{name}{hint}")
        if wrong:
            raise HandlerError(
                f"not a handler of {interface.__name__}: {', '.join(sorted(set(wrong)))}; "
                "name helper coroutines with a leading underscore, or pass check_handler=False"
            )

    @property
    def transport(self) -> Transport:
        """What the messages travel over. Replacing it (a wrapper around the
        old one, say) takes effect from the next message read and written."""
        return self._transport

    @transport.setter
    def transport(self, transport: Transport) -> None:
        # A read or a write under way when a transport carrying messages
        # parsed is replaced may still bring or send a Loaded: from then on
        # one is taken as it is, and sent as its text (see _sending_text).
        carried = getattr(self, "_load", None) is _load_item
        self._transport = transport
        loaded: Callable[[], Awaitable[bytes | Loaded | None]] | None = getattr(
            transport, "receive_loaded", None
        )
        # A transport that carries messages parsed (CarriesLoaded) is read
        # through receive_loaded and given a Loaded to send; any other one
        # reads and writes text alone, through the same calls as ever.
        self._receive_next: Callable[[], Awaitable[bytes | Loaded | None]] = (
            transport.receive if loaded is None else loaded
        )
        """The transport's ``receive``, or its ``receive_loaded``."""
        self._load: Callable[[bytes | Loaded], Any] = (
            cast("Callable[[bytes | Loaded], Any]", load_message)
            if loaded is None and not carried
            else _load_item
        )
        """How a received message is parsed: a :class:`Loaded` already is
        (given one only by a transport that carries them)."""
        self._dump_wire: Callable[[dict[str, Any]], bytes | Loaded] = (
            dump_message if loaded is None else _dump_loaded
        )
        """How a message's wire form is written: its text, or its text
        with the wire form, for a transport that routes by it."""
        self._send: Callable[[bytes | Loaded], Awaitable[None]] = cast(
            "Callable[[bytes | Loaded], Awaitable[None]]", transport.send
        )
        """The transport's ``send`` (given a :class:`Loaded` only when it
        carries them)."""
        self._send_nowait: Callable[[bytes | Loaded], bool] | None = getattr(
            transport, "send_nowait", None
        )
        """The transport's ``send_nowait`` (see :class:`SendsAtOnce`), if any."""
        if loaded is None and carried:
            self._send, self._send_nowait = _sending_text(
                transport.send, self._send_nowait
            )

    @property
    def strict(self) -> bool:
        """Whether what the peer sends is decoded strictly (the schema)."""
        return self._strict

    def mark_initialized(self, next_id: int | None = None, result: Any = None) -> None:
        """Take the connection as initialized (``initialize`` was exchanged
        over the transport before this end took it over, as
        :func:`connect_versions` does); ``next_id`` is the first id left for
        requests, ``result`` the agent's answer (JSON), whose capabilities
        calls are checked against from now on."""
        self._initialized = True
        if next_id is not None:
            self._next_id = max(self._next_id, next_id)
        if result is not None and self._capabilities is not None:
            self._capabilities.observe(result)

    # ------------------------------------------------------------ initialize

    def _wire_params(self, method: str, params: Any) -> Any:
        return self.codec.encode_message(Request(0, method, params)).get("params")

    def _advertise(self, part: Any) -> None:
        """This end's part of ``initialize`` (JSON) is about to go out: refuse
        a capability it advertises without the handler behind it."""
        assert self._capabilities is not None
        unbacked = self._capabilities.unbacked(
            part, self.handler, getattr(type(self), "interface", None)
        )
        if unbacked:
            raise HandlerError(
                f"{type(self.handler).__name__} advertises what it does not handle: "
                f"{', '.join(unbacked)}; implement the handler or do not advertise "
                "it (check_capabilities=False skips this check)"
            )

    def _answering_initialize(self, params: Any, result: Any) -> None:
        """The agent answers ``initialize``: the client's capabilities are
        known from now on, and the agent's own are checked."""
        assert self._capabilities is not None
        self._capabilities.observe(self._wire_params(INITIALIZE, params))
        wire = self.codec.encode_message(Response(0, result)).get("result")
        self._advertise(wire)

    def _decode_params(self, method: str, params: Any) -> Any:
        """The params of a ``session/prompt`` request (or ``session/update``
        notification) given as JSON, decoded (for the fold)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if method == PROMPT:
            message["id"] = 0
        decoded = self.codec.decode_message(message)
        return cast("Request[Any] | Notification[Any]", decoded).params

    # ------------------------------------------------------------ serving

    def start(self) -> None:
        """Start reading in the background (``run`` and the first request do)."""
        if self._loop_task is None:
            self._loop_task = asyncio.get_running_loop().create_task(self._read_loop())

    async def run(self) -> None:
        """Serve until the peer closes the connection or :meth:`close` is
        called; cancelling ``run`` stops serving."""
        self.start()
        loop_task = self._loop_task
        assert loop_task is not None
        try:
            # Not awaited itself: the read loop cancelled by close() or by
            # a failed write ends the serving, not the caller.
            await asyncio.wait((loop_task,))
        except asyncio.CancelledError:
            loop_task.cancel()
            await asyncio.wait((loop_task,))  # shut down before it raises
            raise
        if not loop_task.cancelled():
            loop_task.result()

    @property
    def state(self) -> ConnectionState:
        """Where the connection is in its life (see :class:`ConnectionState`)."""
        return self._state

    def _enter(self, state: ConnectionState) -> None:
        """Go to ``state``; ``RuntimeError`` for a transition
        :data:`TRANSITIONS` does not allow (a bug here, never the peer's)."""
        if state not in TRANSITIONS[self._state]:
            raise RuntimeError(
                f"a connection cannot go from {self._state.value} to {state.value}"
            )
        self._state = state

    @property
    def ended(self) -> bool:
        """True once nothing more is read from the peer: it closed the
        connection, a write failed, or :meth:`close` was called (the state
        is no longer ``OPEN``). What was already read may still be handled:
        :meth:`run` returns when it was (the requests' handlers get at most
        :attr:`grace` seconds)."""
        return self._state is not _OPEN

    @property
    def busy(self) -> bool:
        """True while something is in flight: a request of the peer being
        handled or waiting its turn, a request of ours waiting for the peer's
        answer, a message read but not yet dispatched. A served connection
        that is not busy and exchanges nothing is idle."""
        return bool(
            self._pending
            or self._answering
            or self._running
            or self._waiting
            or self._inbox
            or self._dispatching
            or self._awaiting_peer
        )

    async def close(self) -> None:
        """Close the connection: waiting requests fail, handlers are
        cancelled. Returns promptly even when the peer does not read."""
        if (
            self._loop_task is not None
            and self._loop_task is not asyncio.current_task()
        ):
            self._loop_task.cancel()
        await self._shut_down(
            ConnectionError("the connection was closed"),
            why="the connection was closed",
        )

    async def _read_loop(self) -> None:
        ended = False
        reason = ConnectionError("the peer closed the connection")
        try:
            while self._state is not _CLOSED:
                try:
                    data = await self._receive_next()
                except MessageTooLarge as error:
                    self._too_large(error)
                    continue
                except (ConnectionError, OSError) as error:
                    # What broke it (a message too large, a frame that is not
                    # UTF-8 ...) is what the waiting requests fail with.
                    if str(error):
                        reason = ConnectionError(f"the connection broke: {error}")
                    break
                if data is None:
                    break
                try:
                    pending = self._receive(data)
                    if pending is not None:
                        await pending
                except asyncio.CancelledError:
                    raise
                except (
                    Exception
                ):  # pragma: no cover - a bug here must not end the connection
                    log.exception("failed to handle a message; going on")
            ended = True
        finally:
            await self._shut_down(reason, drain=ended)

    def _too_large(self, error: MessageTooLarge) -> None:
        """A message too large to read: an answer fails the request waiting
        for it, a request is answered -32700 with its id (when its first
        bytes show them), anything else -32700 with a null id."""
        entry = (
            self._pending.pop(error.id, None)
            if error.id is not None and not error.request
            else None
        )
        if entry is not None and not entry[1].done():
            log.warning("discarded the answer to %s: %s", entry[0], error)
            entry[1].set_exception(
                RequestError(PARSE_ERROR, "Parse error", {"reason": str(error)})
            )
            return
        log.warning("%s", error)
        self._send_soon(
            error.id if error.request else None,
            RpcError(PARSE_ERROR, "Parse error", "message too large"),
        )

    async def _shut_down(
        self,
        reason: ConnectionError,
        drain: bool = False,
        why: str = "the peer closed the connection",
    ) -> None:
        """Fail what waits for the peer's answers, then close. With ``drain``
        (the peer closed its side, as a client piping requests in does), the
        queued messages are all handled first, in order (so the updates read
        before an answer are handled before it is returned), and the
        requests already read are still answered for at most :attr:`grace`
        seconds (``DRAINING``); otherwise (or when :meth:`close` comes
        meanwhile) the handlers are cancelled and the queue dropped (``why``
        says why, in the log). The connection ends ``CLOSED``."""
        if self._state is _CLOSED:
            return
        gentle = drain and self._state is _OPEN
        if gentle:
            self._enter(_DRAINING)
        self._wake_worker.set()  # an idle dispatcher ends: nothing more is queued
        for _, future in self._pending.values():
            if not future.done():
                future.set_exception(reason)
        self._pending.clear()
        try:
            if gentle:
                loop = asyncio.get_running_loop()
                deadline = loop.time() + self.grace
                while True:
                    left = deadline - loop.time()
                    running = (
                        [task for tasks in self._answering.values() for task in tasks]
                        if left > 0
                        else []
                    )
                    if self._worker is not None:
                        # The queue is handled whatever the grace: what was
                        # read is not dropped.
                        running.append(self._worker)
                    running = [
                        task
                        for task in running
                        if task is not asyncio.current_task() and not task.done()
                    ]
                    if not running:
                        break
                    await asyncio.wait(running, timeout=left if left > 0 else None)
        finally:
            # self.state, not self._state: it changes while this waits.
            if self.state is not _CLOSED:  # else close() came meanwhile
                await self._close_now(why)

    async def _close_now(self, why: str) -> None:
        """Enter ``CLOSED``: drop the queue, cancel the handlers and the
        background writes, close the transport."""
        self._enter(_CLOSED)
        self._drop_queued(why)
        for tasks in list(self._answering.values()):
            for task in tasks:
                task.cancel()
        for task in list(self._background):
            task.cancel()
        for work in list(self._session_work.values()):
            for task, request_id in list(work.items()):
                if request_id is None:  # started with start_session_work
                    task.cancel()
        with contextlib.suppress(Exception):
            await self.transport.close()

    # ------------------------------------------------------------ receiving

    def _receive(self, line: bytes | Loaded) -> Awaitable[None] | None:
        """Take in a message read; returns what is still to be awaited for
        it (an error to write, space in the queue to wait for), if anything.
        No coroutine of its own: most messages need no wait."""
        self._reading = len(line)  # a Loaded's length is its text's
        try:
            data = self._load(line)
        except ValueError:
            return self._send_error(None, RpcError(PARSE_ERROR, "Parse error"))
        if not self._strict and self.side == "agent":
            # lenient_initialize() leaves any message but an initialize as
            # it is: called only for what may be one.
            if type(data) is not dict:
                data = lenient_initialize(data)
            else:
                # Typed by annotation, not cast(): a call for every message.
                d: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
                if d.get("method") == INITIALIZE:
                    data = lenient_initialize(data)
        try:
            message = self.codec.decode_message(data, strict=self._strict)
        except ParamsError as error:
            older = (
                older_initialize(
                    data,
                    error.id,
                    getattr(self, "protocol_version", None),
                    self._strict,
                )
                if error.request and error.method == INITIALIZE and self.side == "agent"
                else None
            )
            if older is not None:
                self._enqueue(None, older.method, (), older)
            elif not error.request:
                log.warning(
                    "dropped a %s notification: %s at %s",
                    error.method,
                    error.message,
                    error.path,
                )
            elif self._call_of(error.method, "request") is None:
                return self._send_error(
                    error.id, RequestError.method_not_found(error.method).error
                )
            else:
                details = {"path": error.path, "message": error.message}
                return self._send_error(
                    error.id, RequestError.invalid_params(details).error
                )
            return None
        except ValidationError as error:
            return self._invalid(data, error)
        except RecursionError:
            return self._send_error(
                None, RpcError(PARSE_ERROR, "Parse error", "nested too deeply")
            )
        if self._tracing is not None:
            self._tracing.received(message)
        if isinstance(message, (Response, ErrorResponse)):
            self._resolve(message)
        elif isinstance(message, Request):
            self._enqueue(None, message.method, (), message)
        elif message.method == CANCEL_REQUEST:
            self._cancel(message)
        else:
            self._notified(message)
        # _full(), inlined: asked for every message read.
        if len(self._inbox) + len(self._waiting) >= self._max_queued or (
            self._queued_bytes >= self._max_buffered
        ):
            return self._wait_for_space()
        return None

    def _backlog(self) -> int:
        return len(self._inbox) + len(self._waiting)

    def _full(self) -> bool:
        # _backlog(), inlined: asked for every message read.
        return len(self._inbox) + len(self._waiting) >= self._max_queued or (
            self._queued_bytes >= self._max_buffered
        )

    async def _wait_for_space(self) -> None:
        """Back-pressure: stop reading while the queue is full, unless a
        notification handler waits for an answer only further reading can
        bring."""
        while self._full() and self._state is not _CLOSED and not self._awaiting_peer:
            self._space.clear()
            await self._space.wait()

    async def _invalid(self, data: Any, error: ValidationError) -> None:
        """A message with a bad envelope: a response-like one fails the
        request it names, if any; anything else is answered -32600."""
        fields = cast("dict[str, Any]", data) if isinstance(data, dict) else {}
        raw_id = fields.get("id")
        id = (
            raw_id
            if isinstance(raw_id, (int, str)) and not isinstance(raw_id, bool)
            else None
        )
        if "method" not in fields and ("result" in fields or "error" in fields):
            entry = self._pending.pop(id, None) if id is not None else None
            if entry is not None and not entry[1].done():
                text = f"invalid response: {error.message} at {error.path}"
                entry[1].set_exception(RequestError(INVALID_REQUEST, text))
            else:
                log.warning(
                    "dropped an invalid response: %s at %s", error.message, error.path
                )
            return
        details = {"path": error.path, "message": error.message}
        await self._send_error(
            id, RpcError(INVALID_REQUEST, "Invalid request", details)
        )

    def _cancel(self, message: Notification[Any]) -> None:
        # The params decoded as the package's CancelRequestNotification.
        request_id: Any = getattr(message.params, "request_id", None)
        params: Any = message.params
        if request_id is None and isinstance(params, dict):
            request_id = cast("dict[str, Any]", params).get("requestId")
        tasks = self._answering.get(request_id)
        if tasks:
            # On the next turn of the loop: a handler's task started lazily
            # (before Python 3.12) may not have taken its first step yet,
            # and a task cancelled then never runs, so neither answers nor
            # frees its slot. Its first step is already scheduled, so it
            # runs first; a task that has answered meanwhile is left alone.
            loop = asyncio.get_running_loop()
            for task in tasks:
                loop.call_soon(self._cancel_answer, request_id, task)
        elif any(
            item[3] is not None and item[3].id == request_id for item in self._inbox
        ) or any(waiting.id == request_id for waiting in self._waiting):
            self._cancelled_queued.add(request_id)

    def _cancel_answer(self, request_id: Any, task: asyncio.Task[None]) -> None:
        """Cancel ``task``, the handler of ``request_id``, unless it has
        answered since (then its reply must go out)."""
        if task in self._answering.get(request_id, ()):
            task.cancel()

    def _notified(self, message: Notification[Any]) -> None:
        if not self._initialized:
            log.warning(
                "dropped a %s notification sent before initialize", message.method
            )
            return
        call = self._call_of(message.method, "notification")
        if call is not None:
            handler = getattr(self.handler, call, None)
            arguments: tuple[Any, ...] = (message.params,)
        else:
            handler = (
                getattr(self.handler, "ext_notification", None)
                if message.method.startswith("_")
                else None
            )
            arguments = (message.method, message.params)
        listener = self.listeners.get(message.method)
        if listener is not None:
            handler = functools.partial(self._listen_then, listener, handler)
        if self._folds is not None and message.method == UPDATE:
            handler = functools.partial(self._folds.update_then, handler)
        cancellation = self._cancellation
        if cancellation is not None and message.method == cancellation.notification:
            session = cancellation.session_of(message.params)
            if session is not None:
                handler = functools.partial(self._cancel_then, session, handler)
        if self._tracing is not None and handler is not None:
            handler = functools.partial(self._tracing.notified, message.params, handler)
        if handler is not None:
            self._enqueue(handler, message.method, arguments, None)

    async def _listen_then(
        self,
        listener: Callable[[Any], Awaitable[None]],
        handler: Callable[..., Awaitable[Any]] | None,
        *arguments: Any,
    ) -> None:
        """Give the notification's params to ``listener``, then run its own
        handler, if any."""
        await listener(arguments[-1])
        if handler is not None:
            await handler(*arguments)

    async def _cancel_then(
        self,
        session: str,
        handler: Callable[..., Awaitable[Any]] | None,
        *arguments: Any,
    ) -> None:
        """Cancel the work of ``session``, then run the notification's own
        handler, if any."""
        self._cancel_session_work(session)
        if handler is not None:
            await handler(*arguments)

    def _cancel_session_work(self, session: str) -> None:
        """Cancel the running handlers of ``session``'s cancellable requests,
        and answer those still waiting for a slot (see the module's
        documentation)."""
        cancellation = self._cancellation
        if cancellation is None:
            return
        work = self._session_work.get(session)
        if work:
            # On the next turn of the loop, as $/cancel_request does (a
            # lazily started task may not have taken its first step yet).
            loop = asyncio.get_running_loop()
            for task, request_id in list(work.items()):
                if request_id is None:
                    loop.call_soon(task.cancel)
                else:
                    loop.call_soon(self._cancel_answer, request_id, task)
        answers = self._cancelled_answers
        if any(
            w.method in answers and cancellation.session_of(w.params) == session
            for w in self._waiting
        ):
            # Waiting for a handler slot: answered now, never run.
            kept: collections.deque[Request[Any]] = collections.deque()
            for waiting in self._waiting:
                if (
                    waiting.method in answers
                    and cancellation.session_of(waiting.params) == session
                ):
                    self._send_soon_message(
                        Response(waiting.id, answers[waiting.method])
                    )
                else:
                    kept.append(waiting)
            self._waiting = kept
            if not self._full():
                self._space.set()

    def start_session_work(
        self, session_id: str, work: Coroutine[Any, Any, T]
    ) -> asyncio.Task[T]:
        """Run ``work`` in a task of its own that a ``session/cancel`` of
        ``session_id`` cancels, as it cancels that session's prompt handlers
        (see the module's documentation), and that closing the connection
        cancels: the work of a v2 turn, which goes on after its
        ``session/prompt`` has been answered. The task is returned; the
        connection keeps it until it ends."""
        task: asyncio.Task[T] = asyncio.get_running_loop().create_task(work)
        self._session_work.setdefault(session_id, {})[task] = None
        task.add_done_callback(functools.partial(self._session_work_done, session_id))
        return task

    def _session_work_done(self, session: str, task: asyncio.Task[Any]) -> None:
        work = self._session_work.get(session)
        if work is not None:
            work.pop(task, None)
            if not work:
                del self._session_work[session]

    def _enqueue(
        self,
        handler: Callable[..., Awaitable[Any]] | None,
        method: str,
        arguments: tuple[Any, ...],
        request: Request[Any] | None,
    ) -> None:
        if self._state is _CLOSED:
            return
        if request is not None and not self._dispatching and not self._inbox:
            # Nothing is queued before it nor being dispatched: dispatch it
            # here, as the dispatcher would at once (its handler starts in
            # its own task), without waking the dispatcher for it.
            self._queued += 1
            try:
                self._start_answer(request)
            finally:
                self._handled += 1
                if self._barriers:
                    self._release_barriers()
            return
        self._inbox.append((handler, method, arguments, request))
        self._sizes.append(self._reading)
        self._queued_bytes += self._reading
        self._queued += 1
        if self._worker is None:
            self._worker = asyncio.get_running_loop().create_task(self._dispatch())
        else:
            self._wake_worker.set()

    async def _dispatch(self) -> None:
        """Dispatch the queued messages one at a time, in order."""
        _in_notification_handler.set(True)
        inbox = self._inbox
        try:
            while True:
                self._dispatching = True
                while inbox:
                    handler, method, arguments, request = inbox.popleft()
                    self._queued_bytes -= self._sizes.popleft()
                    if not self._full():
                        self._space.set()
                    try:
                        if request is not None:
                            self._start_answer(request)
                        elif handler is not None:
                            await handler(*arguments)
                    except asyncio.CancelledError:
                        if self._state is _CLOSED:
                            raise
                        log.warning("the %s notification handler was cancelled", method)
                    except Exception:
                        log.exception("the %s notification handler failed", method)
                    finally:
                        self._handled += 1
                        if self._barriers:
                            self._release_barriers()
                self._dispatching = False
                if self._state is not _OPEN:
                    return  # nothing more comes once nothing more is read
                self._wake_worker.clear()
                await self._wake_worker.wait()
        finally:
            self._dispatching = False
            self._worker = None

    def _start_answer(self, request: Request[Any], eager: bool = True) -> None:
        """Start the task answering ``request``. On Python 3.12 and later the
        task starts eagerly (``eager``): its handler runs at once, up to its
        first wait, and a handler that never waits answers without a turn of
        the event loop; it is still a task of its own (``current_task()``)."""
        if request.id in self._cancelled_queued:
            self._cancelled_queued.discard(request.id)
            answer = self._cancelled_answers.get(request.method, UNSET)
            if answer is UNSET:
                self._send_soon(
                    request.id, RpcError(REQUEST_CANCELLED, "Request cancelled")
                )
            else:
                self._send_soon_message(Response(request.id, answer))
            return
        if self._running >= self._max_running:
            self._waiting.append(request)
            return
        self._running += 1
        # The handler is ordinary code, not a notification handler: its task
        # runs in a copy of this context, with the mark off (a copy of its
        # own only when the dispatcher, which has it on, starts it; else the
        # task copies this context as it does).
        context: contextvars.Context | None = None
        if _in_notification_handler.get():
            context = contextvars.copy_context()
            context.run(_in_notification_handler.set, False)
        loop = asyncio.get_running_loop()
        task: asyncio.Task[None]
        if eager and sys.version_info >= (3, 12):
            replied: list[bool] = []
            task = asyncio.Task(
                self._answer(request, replied),
                loop=loop,
                context=context,
                eager_start=True,
            )
            if task.done() or replied:
                # Answered already: nothing to cancel (the reply may still
                # be on its way out) or to forget.
                return
        elif context is None:
            task = loop.create_task(self._answer(request))
        else:
            task = context.run(loop.create_task, self._answer(request))
        self._answering.setdefault(request.id, []).append(task)
        task.add_done_callback(functools.partial(self._forget, request.id))
        cancellation = self._cancellation
        if cancellation is not None and request.method in self._cancelled_answers:
            session = cancellation.session_of(request.params)
            if session is not None:
                self._session_work.setdefault(session, {})[task] = request.id
                task.add_done_callback(
                    functools.partial(self._session_work_done, session)
                )

    def _release_barriers(self) -> None:
        waiting: list[tuple[int, asyncio.Future[None]]] = []
        for queued, barrier in self._barriers:
            if queued > self._handled:
                waiting.append((queued, barrier))
            elif not barrier.done():
                barrier.set_result(None)
        self._barriers = waiting

    def _drop_queued(self, why: str) -> None:
        """Drop the queued messages (saying how many), stop the handler
        running (unless the caller is that handler) and let the responses
        waiting for them go."""
        if self._backlog():
            log.warning(
                "%s: dropped %d queued message(s) unhandled", why, self._backlog()
            )
        self._inbox.clear()
        self._sizes.clear()
        self._queued_bytes = 0
        self._waiting.clear()
        self._space.set()
        self._wake_worker.set()
        if self._worker is not None and self._worker is not asyncio.current_task():
            self._worker.cancel()
        for _, barrier in self._barriers:
            if not barrier.done():
                barrier.set_result(None)
        self._barriers.clear()

    async def _after_notifications(self, queued: int) -> None:
        """Wait until the first ``queued`` messages have been dispatched."""
        barrier: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (queued, barrier)
        self._barriers.append(entry)
        try:
            await barrier
        finally:
            if entry in self._barriers:
                self._barriers.remove(entry)

    def _call_of(self, method: str, kind: str) -> str | None:
        """The handler name of ``method`` used as ``kind`` on this side."""
        info = self.codec.methods.get(method)
        if info is None:
            return None
        call = info.request if kind == "request" else info.notification
        return call.handler if call is not None and call.side == self.side else None

    def _resolve(self, message: Response[Any] | ErrorResponse) -> None:
        entry = self._pending.pop(message.id, None) if message.id is not None else None
        if entry is None:
            if isinstance(message, ErrorResponse):
                log.warning(
                    "the peer reported an error: %s (%s)",
                    message.error.message,
                    message.error.code,
                )
            return
        _, future = entry
        if not future.done():
            future.set_result((self._queued, message))

    # ------------------------------------------------------------ answering

    def _forget(self, id: RequestId, task: asyncio.Task[None]) -> None:
        tasks = self._answering.get(id)
        if tasks is not None and task in tasks:
            tasks.remove(task)
            if not tasks:
                del self._answering[id]

    async def _answer(
        self, message: Request[Any], replied: list[bool] | None = None
    ) -> None:
        """Handle ``message`` and write the reply; ``replied`` (for an eager
        start, whose task is not registered yet) is set once the reply is
        made, when it must no longer be cancelled."""
        try:
            reply = await self._reply(message)
            # Answered: a $/cancel_request arriving from now on must not
            # cancel the reply on its way out.
            if replied is not None:
                replied.append(True)
            task = asyncio.current_task()
            if task is not None:
                self._forget(message.id, task)
            # Not contextlib.suppress: a context manager's three calls, for
            # every reply.
            try:  # noqa: SIM105
                await self._write(reply)
            except ConnectionError:
                pass
        finally:
            # The slot is held until the reply is written, so replies a
            # peer does not read hold back new handlers, and then reading.
            self._running -= 1
            if self._waiting and self._state is not _CLOSED:
                # Not eagerly: this runs as an answer ends, and an eager
                # answer that ends at once would start the next one here.
                self._start_answer(self._waiting.popleft(), eager=False)
                if not self._full():
                    self._space.set()

    async def _reply(self, message: Request[Any]) -> bytes | Loaded:
        """The reply's text: the handler's result, or the error it comes to.
        Encoding is part of answering: a result with no JSON text is a
        -32603, never a reply left unsent."""
        try:
            result = await (
                self._handle(message)
                if self._tracing is None
                else self._tracing.handle(self._handle, message)
            )
            if message.method == INITIALIZE and self._capabilities is not None:
                params = message.params
                if isinstance(params, OlderInitialize):
                    params = params.params  # as JSON
                self._answering_initialize(params, result)
        except asyncio.CancelledError:
            if self._state is _CLOSED:
                raise
            answer = self._cancelled_answers.get(message.method, UNSET)
            if answer is not UNSET:
                return self._dump(Response(message.id, answer))
            error = RpcError(REQUEST_CANCELLED, "Request cancelled")
        except RequestError as failure:
            error = failure.error
        except Exception as failure:
            if not isinstance(failure, ConnectionError) or self._state is _OPEN:
                log.exception("the %s handler failed", message.method)
            # else the handler sent on a connection that broke or closed,
            # said once in the log: no traceback per handler running then.
            error = RpcError(
                INTERNAL_ERROR,
                "Internal error",
                str(failure) if self._error_detail else UNSET,
            )
        else:
            try:
                reply = (
                    self._dump_checked(message, result)
                    if self._validate_outgoing
                    # _dump(), inlined: what it does when not validating.
                    else self._dump_wire(
                        self.codec.encode_message(new_response(message.id, result))
                    )
                )
                if message.method == INITIALIZE:
                    # Before the answer goes out: the client's next request
                    # must find the connection initialized.
                    self._initialized = True
                return reply
            except ValueError as failure:
                # The handler did its work; its answer (or the peer's id)
                # cannot go out as it is: one line, no traceback.
                log.warning(
                    "the reply to %s cannot be sent: %s", message.method, failure
                )
                error = RpcError(
                    INTERNAL_ERROR,
                    "Internal error",
                    str(failure) if self._error_detail else UNSET,
                )
        return self._dump_error(message.id, error)

    def _handle(self, message: Request[Any], waited: bool = False) -> Awaitable[Any]:
        """What answering ``message`` awaits: what its handler returns (no
        coroutine of this method's own for every request), or, before
        ``initialize`` has been answered (unless ``waited``), a coroutine
        that waits for it first."""
        if not waited and not self._initialized:
            return self._handle_once_initialized(message)
        if isinstance(message.params, OlderInitialize):
            return answer_older(
                self.handler, message.params, getattr(self, "protocol_version", None)
            )
        call = self._call_of(message.method, "request")
        if call is not None:
            handler: Callable[[Any], Awaitable[Any]] | None = getattr(
                self.handler, call, None
            )
            if message.method == PERMISSION and self.side == "client":
                return self._answer_permission(message.params, call, handler)
            answerer = self.answerers.get(message.method)
            if answerer is not None and (
                handler is None
                or getattr(handler, "__func__", None)
                is getattr(getattr(self, "interface", None), call, None)
            ):
                return answerer(message.params)
            if handler is not None:
                return handler(message.params)
        elif message.method.startswith("_"):
            extension: Callable[[str, Any], Awaitable[Any]] | None = getattr(
                self.handler, "ext_method", None
            )
            if extension is not None:
                return extension(message.method, message.params)
        raise RequestError.method_not_found(message.method)

    async def _handle_once_initialized(self, message: Request[Any]) -> Any:
        await self._until_initialized(message)
        return await self._handle(message, True)

    @property
    def permission_decisions(self) -> dict[str, list[PermissionDecision]]:
        """Session -> how each ``session/request_permission`` of that session
        was answered, in order (the sessions a client's end folds; see
        ``_permissions``)."""
        return self._folds.permissions if self._folds is not None else {}

    async def _answer_permission(
        self, params: Any, call: str, handler: Callable[[Any], Awaitable[Any]] | None
    ) -> Any:
        """Answer a permission request: the handler's own ``request_permission``
        if it has one, else :attr:`permission_policy`; the decision is
        recorded in the session's fold either way."""
        wire = self._wire_params(PERMISSION, params)
        wire = cast("dict[str, Any]", wire) if isinstance(wire, dict) else {}
        folds = self._folds
        session = wire.get("sessionId")
        default = getattr(getattr(self, "interface", None), call, None)
        if handler is None or (
            default is not None and getattr(handler, "__func__", None) is default
        ):
            decision = await self.permission_policy.decide(
                params, wire, self._known_tool
            )
            if folds is not None and isinstance(session, str):
                folds.decided(session, decision)
            return decision.result()
        try:
            result = await handler(params)
        except asyncio.CancelledError:
            if folds is not None and isinstance(session, str):
                folds.decided(session, decision_of(wire, {}, "cancelled"))
            raise
        if folds is not None and isinstance(session, str):
            answer = self.codec.encode_message(Response(0, result)).get("result")
            answer = cast("dict[str, Any]", answer) if isinstance(answer, dict) else {}
            folds.decided(session, decision_of(wire, answer, "answered by the handler"))
        return result

    def _known_tool(
        self, session_id: str, tool_call_id: str
    ) -> tuple[str | None, tuple[str, ...]]:
        """The kind and paths of a tool call as the session fold knows them."""
        state = (
            self._folds.tool_call(session_id, tool_call_id)
            if self._folds is not None
            else None
        )
        kind: object = getattr(state, "kind", None)
        kind = getattr(kind, "value", kind)
        locations: object = getattr(state, "locations", None)
        paths = tuple(
            path
            for path in (
                getattr(place, "path", None)
                for place in (
                    cast("list[object]", locations)
                    if isinstance(locations, list)
                    else []
                )
            )
            if isinstance(path, str)
        )
        return (kind if isinstance(kind, str) else None), paths

    async def _until_initialized(self, message: Request[Any]) -> None:
        """Before ``initialize`` has been answered: ``initialize`` goes on; a
        request that came after an ``initialize`` still in progress waits
        for its answer; otherwise (or when that failed) it is refused."""
        if message.method == INITIALIZE:
            self._initializing = asyncio.current_task()
            return
        initializing = self._initializing
        if initializing is not None and not initializing.done():
            await asyncio.wait([initializing])
        if not self._initialized:
            error = not_initialized(
                message.method, getattr(self, "protocol_version", None)
            )
            raise RequestError(error.code, error.message, error.data)

    # ------------------------------------------------------------ sending

    async def request(self, method: str, params: Any = None) -> Any:
        """Send a request and wait for its result, as JSON. Raises
        :class:`RequestError` if the peer answers with an error."""
        if self._state is not _OPEN:
            raise ConnectionError("the connection is closed")
        if self._capabilities is not None:
            self._capabilities.check(method)
        if self._loop_task is None:
            self.start()
        id = self._next_id
        self._next_id += 1
        tracing = self._tracing
        span = None if tracing is None else tracing.client_span(method, id)
        request = new_request(id, method, params)
        data = (
            # _dump(), inlined: what it does with no validation nor trace.
            self._dump_wire(self.codec.encode_message(request))
            if span is None and not self._validate_outgoing
            else self._dump(
                request,
                self._validate_outgoing,
                trace=None if span is None else span.context,
            )
        )
        if tracing is not None and span is not None:
            tracing.started(span)
        if method == INITIALIZE and self._capabilities is not None:
            self._advertise(self._wire_params(method, params))
        if self._folds is not None:
            self._folds.sending(method, params)
        future: asyncio.Future[_Answer] = asyncio.get_running_loop().create_future()
        self._pending[id] = (method, future)
        in_handler = _in_notification_handler.get()
        if in_handler:
            self._awaiting_peer += 1
            self._space.set()
        try:
            await self._write(data)
            queued, answer = await future
        except asyncio.CancelledError:
            if id in self._pending and self.state is not _CLOSED:
                # Never awaited here: the write could wait for a peer that
                # does not read, and cancelling must end now.
                self._send_soon_message(Notification(CANCEL_REQUEST, {"requestId": id}))
            raise
        finally:
            self._pending.pop(id, None)
            if in_handler:
                self._awaiting_peer -= 1
            if tracing is not None and span is not None:
                tracing.answered(span, future)
        if queued > self._handled and self.state is not _CLOSED and not in_handler:
            await self._after_notifications(queued)
        if isinstance(answer, ErrorResponse):
            raise RequestError(
                answer.error.code, answer.error.message, answer.error.data
            )
        if method == INITIALIZE and self._capabilities is not None:
            self._capabilities.observe(answer.result)
        if self._folds is not None:
            self._folds.answered(method, answer.result)
        return answer.result

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        if self._state is _CLOSED:
            raise ConnectionError("the connection is closed")
        if self._capabilities is not None:
            self._capabilities.check(method)
        tracing = self._tracing
        notification = new_notification(method, params)
        data = (
            # _dump(), inlined: what it does with no validation nor trace.
            self._dump_wire(self.codec.encode_message(notification))
            if tracing is None and not self._validate_outgoing
            else self._dump(
                notification,
                self._validate_outgoing,
                trace=None if tracing is None else tracing.notifying(method),
            )
        )
        cancellation = self._cancellation
        if cancellation is not None and method == cancellation.notification:
            session = cancellation.session_of(params)
            if session is not None:
                self._cancel_session_work(session)
        await self._write(data)

    async def _call(self, method: str, params: Any) -> Any:
        if method == INITIALIZE and self.side == "client":
            return await initialize(self, params, self._siblings)
        return self.codec.decode_result(
            method, await self.request(method, params), strict=self._strict
        )

    def _dump(
        self,
        message: Message,
        validate: bool = False,
        method: str | None = None,
        trace: TraceContext | None = None,
    ) -> bytes | Loaded:
        """A message's text (with its wire form, a :class:`Loaded`, for a
        transport that carries them: see :class:`CarriesLoaded`). Raises
        ``ValueError`` (a ``ValidationError`` with ``validate``) for a
        message that cannot go out as it is.
        ``validate`` checks params and results of the generated classes
        against the schema and against the type of their method (a
        response's: ``method``, the method of the request it answers);
        JSON (an extension's, or what ``request`` and ``notify`` were given
        as JSON) goes out as it is. ``trace`` goes in the params' ``_meta``."""
        if validate:
            value = (
                message.result
                if isinstance(message, Response)
                else getattr(message, "params", None)
            )
            if type(value) not in _JSON_TYPES:
                wire = self.codec.encode_message(message, validate=True, method=method)
                return self._dump_wire(wire if trace is None else carry(wire, trace))
        wire = self.codec.encode_message(message)
        return self._dump_wire(wire if trace is None else carry(wire, trace))

    def _dump_checked(self, request: Request[Any], result: Any) -> bytes | Loaded:
        """The text of the reply to ``request`` with ``validate``: the
        result checked as the result of the request's method (an answer
        to an older version's ``initialize`` as its own class)."""
        older = isinstance(request.params, OlderInitialize)
        method = None if older else request.method
        return self._dump(Response(request.id, result), True, method)

    def _dump_error(self, id: RequestId, error: RpcError) -> bytes | Loaded:
        """An error reply's text; without the error's data, then with its
        message's lone surrogates escaped, and then without the id, when
        those have no JSON text (an id with a lone surrogate goes back
        escaped, as the peer sent it: see :func:`dump_message`). Always a
        JSON-RPC error: a refusal is never left unsent."""
        # str(): a handler's RequestError may carry any message.
        bare = RpcError(error.code, printable(str(error.message)))
        for attempt in (
            ErrorResponse(id, error),
            ErrorResponse(id, RpcError(error.code, error.message)),
            ErrorResponse(id, bare),
            ErrorResponse(None, bare),
        ):
            try:
                return self._dump(attempt)
            except (ValueError, TypeError):
                continue
        # A code with no JSON text (a handler's RequestError(nan, ...)).
        return self._dump(
            ErrorResponse(None, RpcError(INTERNAL_ERROR, "Internal error"))
        )

    async def _send_error(self, id: RequestId, error: RpcError) -> None:
        with contextlib.suppress(ConnectionError):
            await self._write(self._dump_error(id, error))

    def _send_soon(self, id: RequestId, error: RpcError) -> None:
        self._background_write(self._dump_error(id, error))

    def _send_soon_message(self, message: Message) -> None:
        try:
            data = self._dump(message)
        except ValueError:
            return
        self._background_write(data)

    def _background_write(self, data: bytes | Loaded) -> None:
        # Written at once when the transport takes it (so it goes out before
        # any answer decided after it); else by a task, behind the writes
        # under way.
        try:
            if self._write_now(data):
                return
        except ConnectionError:
            return

        async def write() -> None:
            with contextlib.suppress(ConnectionError):
                await self._write(data)

        task = asyncio.get_running_loop().create_task(write())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _write_now(self, data: bytes | Loaded) -> bool:
        """Write ``data`` at once if no other write is under way and the
        transport takes it without waiting (a stream whose peer keeps up):
        no lock to take, nothing to await. Raises ``ConnectionError`` (and
        stops serving) when the connection broke."""
        if (
            self._send_nowait is None
            or self._write_lock.locked()
            or self._state is _CLOSED
        ):
            return False
        try:
            return self._send_nowait(data)
        except ConnectionError:
            self._write_broke()
            raise

    async def _write(self, data: bytes | Loaded) -> None:
        # _write_now(data), inlined: every message sent comes here.
        send_nowait = self._send_nowait
        if (
            send_nowait is not None
            and not self._write_lock.locked()
            and self._state is not _CLOSED
        ):
            try:
                if send_nowait(data):
                    return
            except ConnectionError:
                self._write_broke()
                raise
        async with self._write_lock:
            if self._state is _CLOSED:
                raise ConnectionError("the connection is closed")
            try:
                if self._transport.is_closing():
                    # Not closed here: the peer or the system closed it (a
                    # pipe whose reader is gone closes itself).
                    raise ConnectionError("the connection is closed")
                await self._send(data)
            except ConnectionError:
                self._write_broke()
                raise

    def _write_broke(self) -> None:
        """A write failed: nobody reads what this end writes, so stop serving."""
        if self._state is _OPEN:  # draining, it goes on: nothing to stop
            self._enter(_BROKEN)
            log.warning("the connection broke while writing: stopping")
            if self._loop_task is not None:
                self._loop_task.cancel()


def _load_item(item: bytes | Loaded) -> Any:
    """A received message parsed: a :class:`Loaded`'s own, or its text's."""
    if isinstance(item, Loaded):
        return item.message
    return load_message(item)


def _dump_loaded(wire: dict[str, Any]) -> Loaded:
    """A message's text with its wire form, for a transport routing by it."""
    return Loaded(wire, dump_message(wire))


def _sending_text(
    send: Callable[[bytes], Awaitable[None]],
    send_nowait: Callable[[bytes | Loaded], bool] | None,
) -> tuple[
    Callable[[bytes | Loaded], Awaitable[None]],
    Callable[[bytes | Loaded], bool] | None,
]:
    """``send`` and ``send_nowait`` of a transport carrying text alone that
    replaced one carrying messages parsed: a :class:`Loaded` dumped for the
    one replaced goes out as its text."""

    async def sent(data: bytes | Loaded) -> None:
        await send(text_of(data))

    if send_nowait is None:
        return sent, None
    nowait = send_nowait

    def sent_nowait(data: bytes | Loaded) -> bool:
        return nowait(text_of(data))

    return sent, sent_nowait


# ---------------------------------------------------------------- processes


async def open_stdio(max_message: int = DEFAULT_MAX_MESSAGE) -> StreamTransport:
    """This process's stdin and stdout as a transport: pipes, sockets and
    terminals as asyncio streams them; a regular file or ``/dev/null``,
    which asyncio cannot stream, read or written in place (``agent <
    requests.jsonl > replies.jsonl``: see :class:`FileReading` and
    :class:`FileWriting`)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_BUFFER)
    reading: FileReading | None = None
    if streamable(sys.stdin.fileno()):
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin
        )
    else:
        reading = FileReading(sys.stdin.fileno(), reader)
        reader.set_transport(reading)
    transport: asyncio.WriteTransport
    protocol: asyncio.streams.FlowControlMixin
    if streamable(sys.stdout.fileno(), writing=True):
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, sys.stdout
        )
    else:
        protocol = asyncio.streams.FlowControlMixin()
        transport = FileWriting(sys.stdout.fileno(), protocol, loop)
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return StreamTransport(reader, writer, max_message=max_message, reading=reading)


C = TypeVar("C", bound=Connection[Any])


@contextlib.asynccontextmanager
async def spawn_connection(
    connect: Callable[[StreamTransport], C],
    program: str,
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    max_message: int = DEFAULT_MAX_MESSAGE,
    close_grace: float = DEFAULT_CLOSE_GRACE,
) -> AsyncGenerator[C, None]:
    """Start ``program`` with ``args``, speaking ACP on its stdin/stdout, and
    yield ``connect(transport)`` started (the process is ``conn.process``).
    On exit the connection is closed, then the process has ``close_grace``
    seconds to exit before it is killed, and is awaited in every case (see
    :func:`spawn_process`, which also says how a ``ConnectionError`` names
    the process's exit status and the end of its stderr)."""
    async with spawn_process(
        program,
        args,
        env=env,
        cwd=cwd,
        max_message=max_message,
        close_grace=close_grace,
    ) as (process, transport):
        conn = connect(transport)
        conn.process = process
        conn.start()
        try:
            yield conn
        finally:
            await conn.close()
            await stopped_reading(conn)


async def stopped_reading(conn: Connection[Any]) -> None:
    """Wait until ``conn``, closed, no longer reads its transport (its read
    loop, which :meth:`Connection.close` cancels, has ended): then the
    process's stdout can be drained. Returns at once for a connection
    that never read."""
    task = conn._loop_task  # pyright: ignore[reportPrivateUsage]
    if task is not None and task is not asyncio.current_task():
        await asyncio.wait((task,))
