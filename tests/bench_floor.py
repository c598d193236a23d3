"""A hand-written pure-Python decoder of one benchmark message, the
``session/update`` tool_call_update with output of tests/bench_payloads.py:
what the fastest Python a person could write for it costs, next to acpgen's
generated decode and msgspec's C decoder (tests/bench.py prints the three).

It does no more than any lenient decoder of that message must: one lookup
per field the types declare, a type check per value present, the enum
members looked up, a shallow copy of ``rawOutput`` (the package promises
that the input is never shared), one object per JSON object. Everything else
is cut: no decode entry point or retry, every union dispatched inline, lists
decoded in the caller's loop, and error paths reduced to a bare raise that
names nothing (so it is no decoder to use: wrong input gets no useful error).
Its time is a floor for generated code in CPython, not a goal.

tests/bench.py checks that it gives the same value as acpgen's decode.
"""

from __future__ import annotations

from typing import Any, cast

from acp_v1._runtime import MISSING, UNSET, ValidationError
from acp_v1.models import (
    ContentToolCallContent,
    ResourceLinkContentBlock,
    SessionNotification,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallStatus,
    ToolCallUpdateSessionUpdate,
    ToolKind,
)

LABEL = "session/update tool_call_update (output)"

_new = object.__new__
_KINDS = cast("dict[str, ToolKind]", ToolKind._value2member_map_)
_STATUSES = cast("dict[str, ToolCallStatus]", ToolCallStatus._value2member_map_)


def _bad() -> ValidationError:
    return ValidationError("invalid")


def _meta(v: Any) -> Any:
    if v is MISSING:
        return UNSET
    if v is None:
        return None
    if type(v) is dict:
        return dict(v)
    return UNSET


def decode(d: Any) -> SessionNotification:
    if type(d) is not dict:
        raise _bad()
    v = d.get("sessionId", MISSING)
    if type(v) is not str:
        raise _bad()
    session_id = v
    u = d.get("update", MISSING)
    if type(u) is not dict or u.get("sessionUpdate") != "tool_call_update":
        raise _bad()
    update = _tool_call_update(u)
    o = _new(SessionNotification)
    o.session_id = session_id
    o.update = update
    o.meta = _meta(d.get("_meta", MISSING))
    return o


def _tool_call_update(d: dict[str, Any]) -> ToolCallUpdateSessionUpdate:
    v = d.get("toolCallId", MISSING)
    if type(v) is not str:
        raise _bad()
    tool_call_id = v
    v = d.get("kind", MISSING)
    kind = UNSET if v is MISSING else None if v is None else _KINDS.get(v, UNSET)
    v = d.get("status", MISSING)
    status = UNSET if v is MISSING else None if v is None else _STATUSES.get(v, UNSET)
    v = d.get("title", MISSING)
    title = UNSET if v is MISSING else v if v is None or type(v) is str else UNSET
    v = d.get("name", MISSING)
    name = UNSET if v is MISSING else v if v is None or type(v) is str else UNSET
    v = d.get("content", MISSING)
    if v is MISSING:
        content: Any = UNSET
    elif type(v) is list:
        content = []
        for x in v:
            if type(x) is not dict:
                continue
            tag = x.get("type")
            try:
                if tag == "content":
                    content.append(_content(x))
                elif tag == "terminal":
                    content.append(_terminal(x))
            except ValidationError:
                continue
    else:
        content = None if v is None else UNSET
    v = d.get("locations", MISSING)
    locations = UNSET if v is MISSING else None if v is None else list(v)
    v = d.get("rawInput", MISSING)
    raw_input = UNSET if v is MISSING else dict(v) if type(v) is dict else v
    v = d.get("rawOutput", MISSING)
    raw_output = UNSET if v is MISSING else dict(v) if type(v) is dict else v
    o = _new(ToolCallUpdateSessionUpdate)
    o.tool_call_id = tool_call_id
    o.kind = kind
    o.status = status
    o.title = title
    o.name = name
    o.content = content
    o.locations = locations
    o.raw_input = raw_input
    o.raw_output = raw_output
    o.meta = _meta(d.get("_meta", MISSING))
    return o


def _content(d: dict[str, Any]) -> ContentToolCallContent:
    v = d.get("content", MISSING)
    if type(v) is not dict:
        raise _bad()
    tag = v.get("type")
    if tag == "text":
        block: Any = _text(v)
    elif tag == "resource_link":
        block = _resource_link(v)
    else:
        raise _bad()
    o = _new(ContentToolCallContent)
    o.content = block
    o.meta = _meta(d.get("_meta", MISSING))
    return o


def _terminal(d: dict[str, Any]) -> TerminalToolCallContent:
    v = d.get("terminalId", MISSING)
    if type(v) is not str:
        raise _bad()
    o = _new(TerminalToolCallContent)
    o.terminal_id = v
    o.meta = _meta(d.get("_meta", MISSING))
    return o


def _text(d: dict[str, Any]) -> TextContentBlock:
    v = d.get("text", MISSING)
    if type(v) is not str:
        raise _bad()
    o = _new(TextContentBlock)
    o.text = v
    o.annotations = UNSET if d.get("annotations", MISSING) is MISSING else None
    o.meta = _meta(d.get("_meta", MISSING))
    return o


def _resource_link(d: dict[str, Any]) -> ResourceLinkContentBlock:
    name = d.get("name", MISSING)
    uri = d.get("uri", MISSING)
    if type(name) is not str or type(uri) is not str:
        raise _bad()
    v = d.get("size", MISSING)
    size = UNSET if v is MISSING else v if v is None or type(v) is int else UNSET
    v = d.get("mimeType", MISSING)
    mime_type = UNSET if v is MISSING else v if v is None or type(v) is str else UNSET
    v = d.get("title", MISSING)
    title = UNSET if v is MISSING else v if v is None or type(v) is str else UNSET
    v = d.get("description", MISSING)
    description = UNSET if v is MISSING else v if v is None or type(v) is str else UNSET
    o = _new(ResourceLinkContentBlock)
    o.name = name
    o.uri = uri
    o.size = size
    o.mime_type = mime_type
    o.title = title
    o.description = description
    o.annotations = UNSET if d.get("annotations", MISSING) is MISSING else None
    o.meta = _meta(d.get("_meta", MISSING))
    return o
