"""A tracer for the acpgen peers (``--trace FILE``): every message and every
request span of the connection, one JSON object a line, appended to FILE."""

from __future__ import annotations

import json


class JsonLinesTracer:
    """Writes ``{"event": "message" | "span", ...}`` lines (ids as on the wire)."""

    def __init__(self, path: str) -> None:
        self.file = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115

    def write(self, record: dict) -> None:
        self.file.write(json.dumps(record) + "\n")

    def on_message(self, message) -> None:
        context = message.context
        self.write(
            {
                "event": "message",
                "side": message.side,
                "direction": message.direction,
                "kind": message.kind,
                "method": message.method,
                "id": message.id,
                "traceparent": context.traceparent if context is not None else None,
            }
        )

    def on_span_start(self, span) -> None:
        pass

    def on_span_end(self, span) -> None:
        self.write(
            {
                "event": "span",
                "side": span.side,
                "kind": span.kind,
                "method": span.method,
                "id": span.request_id,
                "traceId": span.trace_id,
                "spanId": span.span_id,
                "parentId": span.parent_id,
                "seconds": span.duration,
                "errorCode": span.error_code,
            }
        )
