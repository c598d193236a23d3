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

``encode`` is the same for the other way, from the decoded message back to
its wire form (JSON values), as ``encode`` and the SDK's JSON-mode
``model_dump`` give it: one attribute read per field, the ``UNSET`` test
of each optional one, ``None`` as null, an enum member's value, one dict per
object, a list per list, and the ``_meta`` maps copied (``rawInput`` and
``rawOutput`` are JSON the object holds, shared as ``encode`` shares them).
Cut: the entry point and its lookup by class, every union dispatched inline
by class, no call per object, no check for reference cycles in the JSON the
object holds (``encode`` raises ``ValueError`` for one; here a dumper would
find it later), no plain string taken for an enum, and a class it does not
handle a bare raise. tests/bench.py checks that it gives what acpgen's
``encode`` gives, and prints its time against the JSON-mode dump: the floor
of the encode target.
"""

from __future__ import annotations

from typing import Any, cast

from acp_v1._runtime import MISSING, UNSET, ValidationError
from acp_v1.models import (
    Annotations,
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


def _dict_meta(v: Any) -> Any:
    return None if v is None else dict(v)


def encode(o: SessionNotification) -> dict[str, Any]:
    u = o.update
    if type(u) is not ToolCallUpdateSessionUpdate:
        raise _bad()
    d: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": u.tool_call_id}
    v = u.kind
    if v is not UNSET:
        d["kind"] = None if v is None else v._value_
    v = u.status
    if v is not UNSET:
        d["status"] = None if v is None else v._value_
    v = u.title
    if v is not UNSET:
        d["title"] = v
    v = u.name
    if v is not UNSET:
        d["name"] = v
    v = u.content
    if v is not UNSET:
        if v is None:
            d["content"] = None
        else:
            content: list[Any] = []
            for x in v:
                kind = type(x)
                if kind is ContentToolCallContent:
                    block = x.content
                    if type(block) is TextContentBlock:
                        b: dict[str, Any] = {"type": "text", "text": block.text}
                    elif type(block) is ResourceLinkContentBlock:
                        b = {"type": "resource_link", "name": block.name, "uri": block.uri}
                        w = block.description
                        if w is not UNSET:
                            b["description"] = w
                        w = block.mime_type
                        if w is not UNSET:
                            b["mimeType"] = w
                        w = block.size
                        if w is not UNSET:
                            b["size"] = w
                        w = block.title
                        if w is not UNSET:
                            b["title"] = w
                    else:
                        raise _bad()
                    w = block.annotations
                    if w is not UNSET:
                        b["annotations"] = None if w is None else _annotations(w)
                    w = block.meta
                    if w is not UNSET:
                        b["_meta"] = _dict_meta(w)
                    item: dict[str, Any] = {"type": "content", "content": b}
                elif kind is TerminalToolCallContent:
                    item = {"type": "terminal", "terminalId": x.terminal_id}
                else:
                    raise _bad()
                w = x.meta
                if w is not UNSET:
                    item["_meta"] = _dict_meta(w)
                content.append(item)
            d["content"] = content
    v = u.locations
    if v is not UNSET:
        if v is None:
            d["locations"] = None
        else:
            locations: list[Any] = []
            for x in v:
                item = {"path": x.path}
                w = x.line
                if w is not UNSET:
                    item["line"] = w
                w = x.meta
                if w is not UNSET:
                    item["_meta"] = _dict_meta(w)
                locations.append(item)
            d["locations"] = locations
    v = u.raw_input
    if v is not UNSET:
        d["rawInput"] = v
    v = u.raw_output
    if v is not UNSET:
        d["rawOutput"] = v
    v = u.meta
    if v is not UNSET:
        d["_meta"] = _dict_meta(v)
    out: dict[str, Any] = {"sessionId": o.session_id, "update": d}
    v = o.meta
    if v is not UNSET:
        out["_meta"] = _dict_meta(v)
    return out


def _annotations(o: Annotations) -> dict[str, Any]:
    d: dict[str, Any] = {}
    v = o.audience
    if v is not UNSET:
        d["audience"] = None if v is None else [role._value_ for role in v]
    v = o.last_modified
    if v is not UNSET:
        d["lastModified"] = v
    v = o.priority
    if v is not UNSET:
        d["priority"] = v
    v = o.meta
    if v is not UNSET:
        d["_meta"] = _dict_meta(v)
    return d
