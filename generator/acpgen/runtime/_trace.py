"""W3C Trace Context across ACP connections (``tracer=`` of a connection).

ACP carries trace context as MCP does: ``traceparent``, ``tracestate`` and
``baggage`` are top-level keys of the ``_meta`` object of a request's or a
notification's params (the meta-propagation RFD of the protocol; the
values are those of the W3C Trace Context and Baggage headers).

A connection given a :class:`Tracer` (``tracer=``; off by default, and
then nothing here runs):

* puts the trace context in ``_meta`` of every request and notification it
  sends whose params is an object, merging into a ``_meta`` there and never
  replacing a key the caller set (a caller's own ``traceparent`` goes out as
  it is, without this end's ``tracestate``);
* gives each request it sends a client span, a child of the current context
  (:func:`current_trace`), or the root of a new trace; the ``traceparent``
  sent names that span;
* gives each request it receives a server span, a child of the
  ``traceparent`` received, or the root of a new trace when there is none or
  it is invalid (never an error); the handler, and the tasks it starts, run
  with that span as the current context, so what they send (a prompt's
  ``session/update`` notifications, a permission request) is part of it;
* runs each notification handler with the context the notification carried
  (a new trace without one);
* tells the tracer of every request and notification sent or received
  (:class:`TraceMessage`) and of every span as it starts and ends
  (:class:`TraceSpan`). A notification sent carries the current context
  itself: its parent id is the span it was sent from.

A proxy, which receives on one connection and sends on another, continues
the trace without doing anything while it forwards from within a handler:
the handler runs in the received request's span. Forwarding from elsewhere
(a queue, a task started outside a handler), it keeps the context with
:func:`current_trace` and sends within :func:`use_trace` of it; a context
received on a connection of another package (another protocol version) is
handed over as its ``traceparent`` (:meth:`TraceContext.parse`). Params
forwarded as they came keep the sender's ``traceparent``, which wins over
this end's: :func:`without_trace` drops it, so that the hop shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import logging
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeVar, cast
from urllib.parse import quote, unquote

from ._jsonrpc import (
    INTERNAL_ERROR,
    REQUEST_CANCELLED,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestError,
)

__all__ = [
    "BAGGAGE",
    "TRACEPARENT",
    "TRACESTATE",
    "TRACE_KEYS",
    "RecordingTracer",
    "TraceContext",
    "TraceMessage",
    "TraceSpan",
    "Tracer",
    "Tracing",
    "carry",
    "current_trace",
    "format_baggage",
    "parse_baggage",
    "parse_traceparent",
    "trace_of",
    "use_trace",
    "without_trace",
]

T = TypeVar("T")

log = logging.getLogger(__name__.rpartition(".")[0] + ".connection")

TRACEPARENT: Final = "traceparent"
TRACESTATE: Final = "tracestate"
BAGGAGE: Final = "baggage"
TRACE_KEYS: Final = (TRACEPARENT, TRACESTATE, BAGGAGE)
"""The keys of ``_meta`` the trace context travels in."""

SAMPLED: Final = 0x01
"""The one trace flag of version 00 (Level 1); the others go out as zero."""

_ZERO_TRACE: Final = "0" * 32
_ZERO_SPAN: Final = "0" * 16
_VERSION_00 = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})\Z")
_LATER_VERSION = re.compile(
    r"(?!ff)[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-|\Z)"
)
_TRACESTATE_MEMBER = re.compile(
    r"(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})"
    r"=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]\Z"
)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_BAGGAGE_VALUE = re.compile(r"[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*\Z")
_OWS = " \t"
MAX_TRACESTATE_MEMBERS: Final = 32
MAX_BAGGAGE_MEMBERS: Final = 64
MAX_BAGGAGE_BYTES: Final = 8192


# ---------------------------------------------------------------- the values


def parse_traceparent(value: object) -> tuple[str, str, int] | None:
    """``(trace id, parent id, flags)`` of a ``traceparent`` value, or None
    when it is not one: version 00 is exactly ``00-`` 32 lowercase hex
    digits ``-`` 16 ``-`` 2; a later version (not ``ff``) is read by the
    same first fields, followed by the end or a ``-``; ids of zeros only,
    uppercase hex, spaces and anything else are invalid. Never raises."""
    if not isinstance(value, str) or len(value) < 55:
        return None
    if value.startswith("00"):
        match = _VERSION_00.match(value)
    else:
        match = _LATER_VERSION.match(value)
    if match is None:
        return None
    trace_id, parent_id, flags = match.groups()
    if trace_id == _ZERO_TRACE or parent_id == _ZERO_SPAN:
        return None
    return trace_id, parent_id, int(flags, 16)


def valid_tracestate(value: object) -> str | None:
    """``value`` when it is a ``tracestate`` list (at most 32 members, each
    ``key=value`` as the W3C grammar says, keys not repeated; empty members
    allowed), else None."""
    if not isinstance(value, str) or len(value) > 8192:
        return None
    keys: set[str] = set()
    for member in value.split(","):
        member = member.strip(_OWS)
        if not member:
            continue
        if _TRACESTATE_MEMBER.match(member) is None:
            return None
        key = member.partition("=")[0]
        if key in keys:
            return None
        keys.add(key)
    if len(keys) > MAX_TRACESTATE_MEMBERS:
        return None
    return value


def parse_baggage(value: object) -> dict[str, str] | None:
    """The entries of a W3C ``baggage`` value (keys as they are, values
    percent-decoded, properties dropped), or None when it is not one: over
    64 members or 8192 bytes, a key that is no token, a value with a
    character the grammar leaves out. Never raises."""
    if not isinstance(value, str) or len(value.encode("utf-8")) > MAX_BAGGAGE_BYTES:
        return None
    entries: dict[str, str] = {}
    members = value.split(",")
    if len(members) > MAX_BAGGAGE_MEMBERS:
        return None
    for member in members:
        pair, *properties = member.split(";")
        key, equals, raw = pair.partition("=")
        key = key.strip(_OWS)
        raw = raw.strip(_OWS)
        if not equals or _TOKEN.match(key) is None:
            return None
        if _BAGGAGE_VALUE.match(raw) is None:
            return None
        for item in properties:
            name, _, item_value = item.partition("=")
            if _TOKEN.match(name.strip(_OWS)) is None:
                return None
            if _BAGGAGE_VALUE.match(item_value.strip(_OWS)) is None:
                return None
        if "%" in raw:
            try:
                raw = unquote(raw, errors="strict")
            except UnicodeDecodeError:  # escapes the grammar allows, no UTF-8
                return None
        entries[key] = raw
    return entries


def format_baggage(entries: Mapping[str, str]) -> str:
    """A ``baggage`` value of ``entries`` (values percent-encoded); raises
    ``ValueError`` for a key that is no token."""
    for key in entries:
        if _TOKEN.match(key) is None:
            raise ValueError(f"not a baggage key: {key!r}")
    return ",".join(f"{key}={quote(value, safe='')}" for key, value in entries.items())


def _new_id(size: int) -> str:
    """``size`` random bytes as lowercase hex, not all zero (``os.urandom``:
    ``secrets`` would cost the import of ``hmac``)."""
    while True:
        value = os.urandom(size).hex()
        if value.strip("0"):
            return value


@dataclass(frozen=True, slots=True)
class TraceContext:
    """A position in a trace: the trace, the span (on the wire: the
    ``traceparent``'s parent id), the flags (only ``sampled`` is kept), and
    the ``tracestate`` and ``baggage`` values that travel with it."""

    trace_id: str
    """32 lowercase hex digits, not all zero."""
    span_id: str
    """16 lowercase hex digits, not all zero."""
    flags: int = SAMPLED
    tracestate: str | None = None
    baggage: str | None = None

    @classmethod
    def new(cls, baggage: str | None = None) -> TraceContext:
        """The root of a new trace (sampled), with fresh random ids."""
        return cls(_new_id(16), _new_id(8), SAMPLED, None, baggage)

    @classmethod
    def parse(
        cls,
        traceparent: object,
        tracestate: object = None,
        baggage: object = None,
    ) -> TraceContext | None:
        """The context of a received ``traceparent`` (None when it is
        invalid: see :func:`parse_traceparent`), with its ``tracestate`` and
        ``baggage`` when they are valid."""
        parsed = parse_traceparent(traceparent)
        if parsed is None:
            return None
        trace_id, span_id, flags = parsed
        kept: str | None = None
        if isinstance(baggage, str) and parse_baggage(baggage) is not None:
            kept = baggage
        state = valid_tracestate(tracestate)
        return cls(trace_id, span_id, flags & SAMPLED, state, kept)

    @property
    def traceparent(self) -> str:
        """The ``traceparent`` value (version 00) naming this span."""
        return f"00-{self.trace_id}-{self.span_id}-{self.flags & SAMPLED:02x}"

    @property
    def sampled(self) -> bool:
        return bool(self.flags & SAMPLED)

    @property
    def baggage_items(self) -> dict[str, str]:
        """The ``baggage`` entries (none when there is no baggage)."""
        return parse_baggage(self.baggage) or {}

    def child(self) -> TraceContext:
        """A new span of the same trace (flags, state and baggage kept)."""
        return TraceContext(
            self.trace_id, _new_id(8), self.flags, self.tracestate, self.baggage
        )

    def with_baggage(self, entries: Mapping[str, str] | None) -> TraceContext:
        """This context with ``entries`` as its baggage (None: none)."""
        baggage = format_baggage(entries) if entries else None
        return TraceContext(
            self.trace_id, self.span_id, self.flags, self.tracestate, baggage
        )

    def meta(self) -> dict[str, str]:
        """The ``_meta`` keys that carry this context."""
        keys = {TRACEPARENT: self.traceparent}
        if self.tracestate:
            keys[TRACESTATE] = self.tracestate
        if self.baggage:
            keys[BAGGAGE] = self.baggage
        return keys


# ---------------------------------------------------------------- the current context

_current: contextvars.ContextVar[TraceContext | None] = contextvars.ContextVar(
    "acp_trace_context", default=None
)
"""The context code runs in: a received request's span while its handler
runs, a received notification's context while its handler runs, or what
:func:`use_trace` set."""


def current_trace() -> TraceContext | None:
    """The trace context the calling code runs in (None outside any): in a
    request handler of a traced connection (and the tasks it starts), its
    server span; in a notification handler, what the notification carried."""
    return _current.get()


@contextlib.contextmanager
def use_trace(
    context: TraceContext | None,
) -> Generator[TraceContext | None, None, None]:
    """Run the block with ``context`` as the current one (None: outside any
    trace, so what is sent starts new traces): what a traced connection
    sends meanwhile is part of it. For a proxy forwarding outside the
    handler of what it forwards."""
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


def _meta_of(params: object) -> Mapping[str, Any] | None:
    """The ``_meta`` object of params given as JSON or decoded."""
    if isinstance(params, dict):
        meta: object = cast("dict[str, Any]", params).get("_meta")
    else:
        meta = getattr(params, "meta", None)
        if meta is None:
            inner: object = getattr(params, "params", None)  # an older initialize
            if isinstance(inner, dict):
                meta = cast("dict[str, Any]", inner).get("_meta")
    return cast("dict[str, Any]", meta) if isinstance(meta, dict) else None


def _carried(params: object) -> tuple[TraceContext | None, str | None]:
    """The context received in params' ``_meta`` (None when there is none
    or it is invalid) and the valid ``baggage`` there (kept even without
    a trace)."""
    meta = _meta_of(params)
    if meta is None:
        return None, None
    baggage: object = meta.get(BAGGAGE)
    valid_baggage = baggage if isinstance(baggage, str) else None
    if valid_baggage is not None and parse_baggage(valid_baggage) is None:
        valid_baggage = None
    return (
        TraceContext.parse(meta.get(TRACEPARENT), meta.get(TRACESTATE), valid_baggage),
        valid_baggage,
    )


def trace_of(params: object) -> TraceContext | None:
    """The trace context a message's params carry in ``_meta`` (JSON or a
    decoded model), or None when they carry none or an invalid one."""
    return _carried(params)[0]


def without_trace(params: T) -> T:
    """A copy of ``params`` (JSON or a decoded model) without the trace keys
    in its ``_meta`` (``_meta`` dropped when nothing else is left): what a
    proxy forwards so that the connection it sends on puts its own context
    there. Params without them are returned as they are."""
    meta = _meta_of(params)
    if meta is None or not any(key in meta for key in TRACE_KEYS):
        return params
    kept = {key: value for key, value in meta.items() if key not in TRACE_KEYS}
    if isinstance(params, dict):
        copied = dict(cast("dict[str, Any]", params))
        if kept:
            copied["_meta"] = kept
        else:
            del copied["_meta"]
        return cast("T", copied)
    clone = copy.copy(params)
    setattr(clone, "meta", kept or None)  # noqa: B010
    return clone


def carry(wire: dict[str, Any], context: TraceContext) -> dict[str, Any]:
    """``wire`` (a request's or notification's wire form) with ``context``
    in its params' ``_meta``: only when the params are an object, never
    replacing a key there (nor a ``_meta`` that is not an object; a null
    one is replaced), the ``tracestate`` only with its own ``traceparent``.
    A copy when anything was added; what the caller gave is not changed."""
    params: object = wire.get("params")
    if not isinstance(params, dict):
        return wire
    fields = cast("dict[str, Any]", params)
    meta: object = fields.get("_meta")
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        return wire
    present = cast("dict[str, Any]", meta)
    added = {
        key: value
        for key, value in context.meta().items()
        if key not in present and not (key == TRACESTATE and TRACEPARENT in present)
    }
    if not added:
        return wire
    return {**wire, "params": {**fields, "_meta": {**present, **added}}}


# ---------------------------------------------------------------- what the tracer sees


@dataclass(frozen=True, slots=True)
class TraceMessage:
    """A request or notification a traced connection sent or received."""

    direction: Literal["sent", "received"]
    kind: Literal["request", "notification"]
    method: str
    id: int | str | None
    """The request's id (None for a notification)."""
    context: TraceContext | None
    """The context the message carries: sent, this end's (a request's: its
    client span; a notification's: the current context; a ``traceparent``
    the caller put in ``_meta`` itself goes out instead); received, the
    valid one it carried (None: none, or an invalid one)."""
    side: str
    """The connection's side (``"agent"`` or ``"client"``)."""


@dataclass(slots=True)
class TraceSpan:
    """A request as one end saw it: ``"client"`` from sending it to its
    answer, ``"server"`` for its handler. Times are ``time.perf_counter()``
    (``start``, ``end``) and, for exporters, ``time.time_ns()`` at the start
    (``start_ns``)."""

    kind: Literal["client", "server"]
    method: str
    request_id: int | str | None
    context: TraceContext
    parent_id: str | None
    """The parent span's id: the span this request was sent from (client),
    the ``traceparent`` received (server); None for a new trace's root."""
    side: str
    start: float
    start_ns: int
    end: float | None = None
    error_code: int | None = None
    """The JSON-RPC error code it ended with (``-32800`` when cancelled,
    ``-32603`` for a handler's exception); None for a result."""
    error: str | None = None
    """What failed, when it did (the error's message, or the exception)."""

    @property
    def trace_id(self) -> str:
        return self.context.trace_id

    @property
    def span_id(self) -> str:
        return self.context.span_id

    @property
    def duration(self) -> float | None:
        """Seconds from start to end (None while it runs)."""
        return None if self.end is None else self.end - self.start

    @property
    def end_ns(self) -> int | None:
        """``time.time_ns()`` at the end, as measured by ``perf_counter``."""
        duration = self.duration
        return None if duration is None else self.start_ns + int(duration * 1e9)


class Tracer(Protocol):
    """What a traced connection tells (``tracer=``). Called in the event
    loop, synchronously; an exception it raises is logged and ignored."""

    def on_message(self, message: TraceMessage) -> None: ...

    def on_span_start(self, span: TraceSpan) -> None: ...

    def on_span_end(self, span: TraceSpan) -> None: ...


class RecordingTracer:
    """A :class:`Tracer` that keeps what it is told, in order (for tests,
    and to look at a connection's traffic)."""

    def __init__(self) -> None:
        self.messages: list[TraceMessage] = []
        self.spans: list[TraceSpan] = []
        """The spans ended, in the order they ended."""
        self.started: list[TraceSpan] = []

    def on_message(self, message: TraceMessage) -> None:
        self.messages.append(message)

    def on_span_start(self, span: TraceSpan) -> None:
        self.started.append(span)

    def on_span_end(self, span: TraceSpan) -> None:
        self.spans.append(span)


# ---------------------------------------------------------------- the connection's part


class Tracing:
    """A connection's tracing: made only when it has a tracer."""

    __slots__ = ("side", "tracer")

    def __init__(self, tracer: Tracer, side: str) -> None:
        self.tracer = tracer
        self.side = side

    def _tell(self, call: Callable[[Any], None], value: Any) -> None:
        try:
            call(value)
        except Exception:
            log.exception("the tracer failed; going on")

    def _message(
        self,
        direction: Literal["sent", "received"],
        kind: Literal["request", "notification"],
        method: str,
        id: int | str | None,
        context: TraceContext | None,
    ) -> None:
        self._tell(
            self.tracer.on_message,
            TraceMessage(direction, kind, method, id, context, self.side),
        )

    def _span(
        self,
        kind: Literal["client", "server"],
        method: str,
        id: int | str | None,
        parent: TraceContext | None,
        baggage: str | None = None,
    ) -> TraceSpan:
        context = parent.child() if parent is not None else TraceContext.new(baggage)
        return TraceSpan(
            kind,
            method,
            id,
            context,
            None if parent is None else parent.span_id,
            self.side,
            time.perf_counter(),
            time.time_ns(),
        )

    # sending

    def client_span(self, method: str, id: int | str | None) -> TraceSpan:
        """The span of a request about to be sent (a child of the current
        context): its context goes in the request's ``_meta``."""
        return self._span("client", method, id, _current.get())

    def started(self, span: TraceSpan) -> None:
        """The request of ``span`` is going out."""
        self._tell(self.tracer.on_span_start, span)
        self._message("sent", "request", span.method, span.request_id, span.context)

    def answered(
        self, span: TraceSpan, answer: asyncio.Future[tuple[int, Any]]
    ) -> None:
        """The request of ``span`` was answered (``answer`` done) or given up
        (not done: the exception being raised says why)."""
        span.end = time.perf_counter()
        if answer.done() and not answer.cancelled():
            failure = answer.exception()
            if failure is None:
                reply = answer.result()[1]
                if isinstance(reply, ErrorResponse):
                    span.error_code = reply.error.code
                    span.error = str(reply.error.message)
            else:
                _failed(span, failure, server=False)
        else:
            _failed(span, sys.exc_info()[1], server=False)
        self._tell(self.tracer.on_span_end, span)

    def ended(self, span: TraceSpan, failure: BaseException | None) -> None:
        """The request of ``span`` was answered (``failure`` None), refused
        (a ``RequestError``) or given up (another exception)."""
        span.end = time.perf_counter()
        _failed(span, failure, server=False)
        self._tell(self.tracer.on_span_end, span)

    def notifying(self, method: str) -> TraceContext:
        """The context a notification about to be sent carries: the current
        one, or a new trace's root."""
        context = _current.get()
        if context is None:
            context = TraceContext.new()
        self._message("sent", "notification", method, None, context)
        return context

    # receiving

    def received(self, message: Message) -> None:
        """A message was read (responses are the ends of client spans)."""
        if isinstance(message, Request):
            self._message(
                "received",
                "request",
                message.method,
                message.id,
                trace_of(message.params),
            )
        elif isinstance(message, Notification):
            self._message(
                "received",
                "notification",
                message.method,
                None,
                trace_of(message.params),
            )

    def seen(
        self,
        kind: Literal["request", "notification"],
        method: str,
        params: object,
    ) -> None:
        """A request or notification given as JSON was read (a proxy's)."""
        self._message("received", kind, method, None, trace_of(params))

    async def handle(
        self, handle: Callable[[Request[Any]], Awaitable[T]], request: Request[Any]
    ) -> T:
        """Run ``handle(request)`` in the request's server span."""
        return await self.serve(
            request.method, request.id, request.params, handle, request
        )

    async def serve(
        self,
        method: str,
        id: int | str | None,
        params: object,
        run: Callable[..., Awaitable[T]],
        *arguments: Any,
    ) -> T:
        """Run ``run(*arguments)`` in the server span of the request of
        ``method``, ``id`` and ``params`` (a child of the context they carry,
        or a new trace's root)."""
        parent, baggage = _carried(params)
        span = self._span("server", method, id, parent, baggage)
        self._tell(self.tracer.on_span_start, span)
        token = _current.set(span.context)
        try:
            return await run(*arguments)
        except BaseException as failure:
            _failed(span, failure, server=True)
            raise
        finally:
            _current.reset(token)
            span.end = time.perf_counter()
            self._tell(self.tracer.on_span_end, span)

    async def notified(
        self,
        params: object,
        handler: Callable[..., Awaitable[Any]],
        *arguments: Any,
    ) -> None:
        """Run a notification's handler in the context it carried (a new
        trace's root without one)."""
        context, baggage = _carried(params)
        token = _current.set(
            context if context is not None else TraceContext.new(baggage)
        )
        try:
            await handler(*arguments)
        finally:
            _current.reset(token)


def _failed(span: TraceSpan, failure: BaseException | None, server: bool) -> None:
    """Record on ``span`` how it failed: a handler's exception (``server``)
    is answered -32603; a request of ours that failed otherwise than by the
    peer's error (the connection closed) has no code."""
    if failure is None:
        return
    if isinstance(failure, asyncio.CancelledError):
        span.error_code, span.error = REQUEST_CANCELLED, "cancelled"
    elif isinstance(failure, RequestError):
        span.error_code, span.error = failure.error.code, str(failure.error.message)
    else:
        if server and isinstance(failure, Exception):
            span.error_code = INTERNAL_ERROR
        span.error = f"{type(failure).__name__}: {failure}"
