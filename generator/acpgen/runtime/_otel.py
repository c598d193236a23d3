"""OpenTelemetry spans of a traced connection (optional: ``opentelemetry``
is imported when an :class:`OpenTelemetryTracer` is made, never before, and
is no dependency of the package).

``tracer=OpenTelemetryTracer()`` turns each request span of the connection
(see ``_trace``) into an OpenTelemetry span of kind ``CLIENT`` or
``SERVER``, named by the method, with the JSON-RPC attributes of the
semantic conventions (``rpc.system``, ``rpc.method``,
``rpc.jsonrpc.request_id``, ``rpc.jsonrpc.error_code``,
``rpc.jsonrpc.error_message``) and an event per message sent in it.

For the OpenTelemetry spans to have the ids that went over the wire (so
that the spans of both ends join in one trace), the SDK's tracer provider
takes its ids from :class:`AcpIdGenerator`::

    provider = TracerProvider(id_generator=AcpIdGenerator())
    conn = ClientSideConnection(..., tracer=OpenTelemetryTracer(provider))

With another id generator the spans still join their local parents and
carry the wire's ids as ``acp.trace_id``, ``acp.span_id`` and
``acp.parent_span_id``.
"""

from __future__ import annotations

import contextvars
import importlib
import os
from typing import Any

from ._trace import TraceContext, TraceMessage, TraceSpan

__all__ = ["AcpIdGenerator", "OpenTelemetryTracer", "opentelemetry_context"]

_next_ids: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar(
    "acp_otel_next_ids", default=None
)
"""The trace and span ids the span being started is to have."""


class AcpIdGenerator:
    """An id generator for the OpenTelemetry SDK's ``TracerProvider``
    (``id_generator=``): the ids of the ACP span being turned into an
    OpenTelemetry span, random ones otherwise."""

    def generate_span_id(self) -> int:
        ids = _next_ids.get()
        return ids[1] if ids is not None else _random(64)

    def generate_trace_id(self) -> int:
        ids = _next_ids.get()
        return ids[0] if ids is not None else _random(128)

    def is_trace_id_random(self) -> bool:
        return True


def _random(bits: int) -> int:
    while True:
        value = int.from_bytes(os.urandom(bits // 8), "big")
        if value:
            return value


class OpenTelemetryTracer:
    """A :class:`~._trace.Tracer` making OpenTelemetry spans (see the
    module's documentation). ``tracer_provider``: the provider to get the
    tracer from (the global one by default)."""

    def __init__(self, tracer_provider: Any = None, name: str = "acp") -> None:
        self._api: Any = importlib.import_module("opentelemetry.trace")
        self._context: Any = importlib.import_module("opentelemetry.context")
        self._tracer: Any = self._api.get_tracer(name, tracer_provider=tracer_provider)
        self._open: dict[str, Any] = {}
        """ACP span id -> the OpenTelemetry span, while it runs."""

    def _parent(self, span: TraceSpan) -> Any:
        """The OpenTelemetry context the span starts in: its parent's span
        when it is open here, else the remote parent the ids name, else
        none (a root, whatever the ambient context)."""
        api = self._api
        empty = self._context.Context()
        if span.parent_id is None:
            return empty
        local = self._open.get(span.parent_id)
        if local is not None:
            return api.set_span_in_context(local, empty)
        remote = api.SpanContext(
            trace_id=int(span.trace_id, 16),
            span_id=int(span.parent_id, 16),
            is_remote=True,
            trace_flags=api.TraceFlags(span.context.flags),
        )
        return api.set_span_in_context(api.NonRecordingSpan(remote), empty)

    def on_span_start(self, span: TraceSpan) -> None:
        api = self._api
        attributes: dict[str, Any] = {
            "rpc.system": "jsonrpc",
            "rpc.method": span.method,
            "acp.side": span.side,
            "acp.trace_id": span.trace_id,
            "acp.span_id": span.span_id,
        }
        if span.request_id is not None:
            attributes["rpc.jsonrpc.request_id"] = str(span.request_id)
        if span.parent_id is not None:
            attributes["acp.parent_span_id"] = span.parent_id
        token = _next_ids.set((int(span.trace_id, 16), int(span.span_id, 16)))
        try:
            kind = api.SpanKind.CLIENT if span.kind == "client" else api.SpanKind.SERVER
            self._open[span.span_id] = self._tracer.start_span(
                span.method,
                context=self._parent(span),
                kind=kind,
                attributes=attributes,
                start_time=span.start_ns,
            )
        finally:
            _next_ids.reset(token)

    def on_span_end(self, span: TraceSpan) -> None:
        opened = self._open.pop(span.span_id, None)
        if opened is None:
            return
        if span.error_code is not None:
            opened.set_attribute("rpc.jsonrpc.error_code", span.error_code)
        if span.error is not None:
            opened.set_attribute("rpc.jsonrpc.error_message", span.error)
            status = importlib.import_module("opentelemetry.trace.status")
            opened.set_status(status.Status(status.StatusCode.ERROR, span.error))
        opened.end(end_time=span.end_ns)

    def on_message(self, message: TraceMessage) -> None:
        context = message.context
        if message.direction != "sent" or context is None:
            return
        opened = self._open.get(context.span_id)
        if opened is not None:
            opened.add_event(
                "acp.message",
                {"acp.method": message.method, "acp.kind": message.kind},
            )


def opentelemetry_context() -> TraceContext | None:
    """The current OpenTelemetry span as a trace context (None when there
    is no valid one), for :func:`~._trace.use_trace`: what a traced
    connection sends within it joins the application's trace."""
    api: Any = importlib.import_module("opentelemetry.trace")
    current: Any = api.get_current_span().get_span_context()
    if not current.is_valid:
        return None
    state: Any = current.trace_state
    return TraceContext(
        f"{current.trace_id:032x}",
        f"{current.span_id:016x}",
        int(current.trace_flags) & 0x01,
        state.to_header() if state else None,
    )
