"""Hypothesis strategies that build valid session/update payloads directly.

``update(tag, v2)`` draws the wire JSON of one SessionUpdate variant (the
``sessionUpdate`` tag included), valid for the schema generation (``v2`` or
not). Keys are drawn from small pools so that updates meet the same tool
calls, messages and plans. Tests decode what they draw with ``strict=True``:
a strategy that builds an invalid value fails there, it is never filtered.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

IDS = st.sampled_from(["a", "b", "c"])
TEXT = st.text(alphabet="xyz é\n", max_size=4)
META = st.one_of(
    st.none(), st.dictionaries(st.sampled_from(["k", "l"]), st.one_of(st.none(), st.integers(0, 3)), max_size=2)
)

BLOCK = st.builds(lambda text: {"type": "text", "text": text}, TEXT)


def _maybe(draw, out: dict, key: str, strategy) -> None:
    """Set ``key`` to a drawn value, or leave it out."""
    if draw(st.booleans()):
        out[key] = draw(strategy)


@st.composite
def tool_call_content(draw) -> dict:
    return {"type": "content", "content": draw(BLOCK)}


@st.composite
def update(draw, tag: str, v2: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"sessionUpdate": tag}
    if tag in ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk"):
        out["content"] = draw(BLOCK)
        if v2:
            out["messageId"] = draw(IDS)
        else:
            _maybe(draw, out, "messageId", st.one_of(st.none(), IDS))
    elif tag in ("user_message", "agent_message", "agent_thought", "session_message"):
        out["messageId"] = draw(IDS)
        _maybe(draw, out, "content", st.one_of(st.none(), st.lists(BLOCK, max_size=2)))
        _maybe(draw, out, "_meta", META)
    elif tag == "session_message_chunk":
        out["messageId"] = draw(IDS)
        out["content"] = draw(BLOCK)
    elif tag == "tool_call":
        out["toolCallId"] = draw(IDS)
        out["title"] = draw(TEXT)
        _maybe(draw, out, "status", st.sampled_from(["pending", "in_progress", "completed"]))
        _maybe(draw, out, "content", st.lists(tool_call_content(), max_size=2))
    elif tag == "tool_call_update":
        out["toolCallId"] = draw(IDS)
        _maybe(draw, out, "title", st.one_of(st.none(), TEXT) if v2 else TEXT)
        _maybe(draw, out, "status", st.sampled_from(["pending", "in_progress", "completed", "failed"]))
        _maybe(draw, out, "content", st.lists(tool_call_content(), max_size=2))
        _maybe(draw, out, "_meta", META)
    elif tag == "tool_call_content_chunk":
        out["toolCallId"] = draw(IDS)
        out["content"] = draw(tool_call_content())
    elif tag == "terminal_update":
        out["terminalId"] = draw(IDS)
        _maybe(draw, out, "command", st.one_of(st.none(), TEXT))
        _maybe(draw, out, "output", st.one_of(st.none(), st.builds(lambda b: {"data": _b64(b)}, st.binary(max_size=4))))
    elif tag == "terminal_output_chunk":
        out["terminalId"] = draw(IDS)
        out["data"] = _b64(draw(st.binary(max_size=5)))
    elif tag == "plan":
        out["entries"] = draw(st.lists(plan_entry(), max_size=2))
    elif tag == "plan_update":
        out["plan"] = {"type": "items", "planId": draw(IDS), "entries": draw(st.lists(plan_entry(), max_size=2))}
        if draw(st.booleans()):
            out["plan"] = {"type": "markdown", "planId": out["plan"]["planId"], "content": draw(TEXT)}
    elif tag == "plan_removed":
        out["planId"] = draw(IDS)
    elif tag == "available_commands_update":
        names = draw(st.lists(st.sampled_from(["web", "test", "plan"]), max_size=2, unique=True))
        commands = [{"name": n, "description": "run " + n} for n in names]
        out["availableCommands"] = [{"type": "command", **c} for c in commands] if v2 else commands
    elif tag == "current_mode_update":
        out["currentModeId"] = draw(st.sampled_from(["ask", "code"]))
    elif tag == "config_option_update":
        key = "configId" if v2 else "id"
        values = st.lists(st.booleans(), max_size=2)
        out["configOptions"] = [
            {key: f"o{i}", "name": "Option", "type": "boolean", "currentValue": value}
            for i, value in enumerate(draw(values))
        ]
    elif tag == "session_info_update":
        _maybe(draw, out, "title", st.one_of(st.none(), TEXT))
        _maybe(draw, out, "updatedAt", st.one_of(st.none(), st.just("2025-01-01T00:00:00Z")))
    elif tag == "usage_update":
        out["used"] = draw(st.integers(0, 1000))
        out["size"] = draw(st.integers(1000, 2000))
        _maybe(
            draw,
            out,
            "cost",
            st.one_of(st.none(), st.builds(lambda a: {"amount": a, "currency": "USD"}, st.integers(0, 9))),
        )
    elif tag == "notice":
        out["severity"] = draw(st.sampled_from(["info", "warning", "error"]))
        out["title"] = "t" + draw(TEXT)
    elif tag == "compaction_update":
        out["compactionId"] = draw(IDS)
        out["status"] = draw(st.sampled_from(["in_progress", "completed"]))
        _maybe(draw, out, "summary", st.one_of(st.none(), st.lists(BLOCK, max_size=2)))
    elif tag == "compaction_summary_chunk":
        out["compactionId"] = draw(IDS)
        out["content"] = draw(BLOCK)
    elif tag == "state_update":
        out["state"] = draw(st.sampled_from(["running", "idle", "requires_action", "unknown"]))
    elif tag == "subagent_update":
        out["sessionId"] = draw(IDS)
        _maybe(draw, out, "title", st.one_of(st.none(), TEXT))
    elif tag == "*":
        out["sessionUpdate"] = "_" + draw(st.sampled_from(["custom", "vendor"]))
        _maybe(draw, out, "payload", st.integers(0, 3))
    else:
        raise KeyError(f"no strategy for the session update {tag!r}")
    return out


@st.composite
def plan_entry(draw) -> dict:
    return {
        "content": draw(TEXT),
        "priority": draw(st.sampled_from(["high", "medium", "low"])),
        "status": draw(st.sampled_from(["pending", "in_progress", "completed"])),
    }


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
