"""The traces of a transcript: the messages that carry a W3C ``traceparent``
in their params' ``_meta`` (the meta-propagation convention of ACP and
MCP), grouped by trace id, in order.

A ``traceparent``'s parent id is the span the message was sent from (for an
acpgen connection's request: the request's own client span). Each span is
shown with the messages it sent; a span first seen after a request of the
other side in the same trace is taken to serve that request (the wire shows
no more: the span that handles a request is named only by what it sends),
which is its parent link, ``within``: that request's line.
"""

from __future__ import annotations

import re
from typing import Any

from . import values as v
from .values import MAX_SUMMARY

_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}(?:-|\Z)")
MAX_TRACES = 1000
"""The most traces kept (the first ones); the rest are counted."""
MAX_HOPS = 2000
"""The most messages kept of one trace; the rest are counted."""


def trace_ids(traceparent: Any) -> tuple[str, str] | None:
    """``(trace id, parent id)`` of a valid ``traceparent``, else None."""
    if not isinstance(traceparent, str) or len(traceparent) < 55:
        return None
    match = _TRACEPARENT.match(traceparent)
    if match is None or match.group(1) == "ff" or (match.group(1) == "00" and len(traceparent) != 55):
        return None
    trace_id, parent_id = match.group(2), match.group(3)
    if not trace_id.strip("0") or not parent_id.strip("0"):
        return None
    return trace_id, parent_id


class Traces:
    """Feed it each message in order (:meth:`see`); :meth:`to_json` is what
    the page shows."""

    def __init__(self) -> None:
        self.traces: dict[str, list[list[Any]]] = {}
        """trace id -> its messages: ``[line, direction, kind (q or n),
        method, span id, within]``"""
        self.cut: dict[str, int] = {}
        """trace id -> the messages not kept"""
        self.dropped = 0
        """messages of traces over :data:`MAX_TRACES`"""
        self.requests: dict[str, list[tuple[int, str]]] = {}
        """trace id -> (line, direction) of its requests, in order"""
        self.within: dict[tuple[str, str], int] = {}
        """(trace id, span id) -> the line of the request it serves (0: none)"""

    def see(self, n: int, direction: str, message: dict[str, Any]) -> None:
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        ids = trace_ids(meta.get("traceparent")) if isinstance(meta, dict) else None
        if ids is None:
            return
        trace_id, span_id = ids
        hops = self.traces.get(trace_id)
        if hops is None:
            if len(self.traces) >= MAX_TRACES:
                self.dropped += 1
                return
            hops = self.traces[trace_id] = []
        key = (trace_id, span_id)
        within = self.within.get(key)
        if within is None:
            within = next(
                (line for line, side in reversed(self.requests.get(trace_id, [])) if side != direction and direction),
                0,
            )
            self.within[key] = within
        request = "id" in message
        if request:
            self.requests.setdefault(trace_id, []).append((n, direction))
        if len(hops) >= MAX_HOPS:
            self.cut[trace_id] = self.cut.get(trace_id, 0) + 1
            return
        method = v.cut(v.as_text(message.get("method")), MAX_SUMMARY)
        hops.append([n, direction, "q" if request else "n", method, span_id, within])

    def to_json(self) -> dict[str, Any]:
        """``list``: ``[trace id, messages, not kept]`` per trace, in the
        order they began; ``dropped``: messages of traces not kept."""
        return {
            "list": [[trace_id, hops, self.cut.get(trace_id, 0)] for trace_id, hops in self.traces.items()],
            "dropped": self.dropped,
        }
