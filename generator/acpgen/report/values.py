"""How the values of a transcript become what the page shows: text cut
to a length, content blocks as [type, text], a tool call's content (a diff
as a line diff), one-line summaries of params and results. None of these
raises on what a transcript holds."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

from .diff import line_diff

MAX_TEXT = 1 << 20
"""The longest text a row keeps of one value (1 MiB), the rest said to be cut."""
MAX_SUMMARY = 240
"""The length of an ``rpc`` row's one-line summary of params or result."""


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def objects(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def key(value: Any) -> str:
    return dump(value)


def cut(text: str, limit: int = MAX_TEXT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\u2026 [{len(text) - limit} more characters not shown]"


def as_text(value: Any) -> str:
    """A value shown as text: a string as it is (cut at :data:`MAX_TEXT`),
    anything else as JSON; None as ``""``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return cut(value)
    return cut(dump(value))


def scalar(value: Any) -> Any:
    """A number or string kept as it is for the page (a float that is not
    finite, which JSON cannot hold, as text)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value if not isinstance(value, str) else cut(value, MAX_SUMMARY)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return cut(dump(value), MAX_SUMMARY)


def dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        return repr(value)


def summary(value: Any, session: bool = False) -> str:
    """One line of JSON, cut at :data:`MAX_SUMMARY`; without the session id
    (which the row shows) unless ``session``."""
    if isinstance(value, dict) and not session:
        value = {k: v for k, v in value.items() if k != "sessionId"}
    if value in ({}, None):
        return ""
    return cut(dump(value), MAX_SUMMARY)


def pairs(value: dict[str, Any]) -> list[list[Any]]:
    return [[as_text(k), scalar(v)] for k, v in value.items() if k != "_meta"]


def error_text(error: Any) -> str:
    if isinstance(error, dict):
        code = error.get("code")
        text = f"{scalar(code)} {as_text(error.get('message'))}".strip()
        if "data" in error:
            text += " " + cut(dump(error["data"]), MAX_SUMMARY)
        return text
    return as_text(error)


def outcome(result: Any, error: Any) -> dict[str, Any]:
    if error is not None:
        return {"error": error_text(error)}
    return {"result": summary(result, session=True)}


def as_block(block: Any) -> list[str]:
    """A content block as [type, text]: the text of a text block; for the
    others, what stands for them (no image or audio is embedded)."""
    if not isinstance(block, dict):
        return ["text", as_text(block)]
    kind = as_text(block.get("type"))
    if kind == "text":
        return ["text", as_text(block.get("text"))]
    if kind in ("image", "audio"):
        data = block.get("data")
        size = f", {len(data) * 3 // 4} bytes" if isinstance(data, str) else ""
        return [kind, f"{kind} ({as_text(block.get('mimeType'))}{size})"]
    if kind == "resource_link":
        return [kind, f"{as_text(block.get('name'))} {as_text(block.get('uri'))}".strip()]
    if kind == "resource":
        resource = as_object(block.get("resource"))
        body = resource.get("text")
        head = as_text(resource.get("uri"))
        return [kind, head + ("\n" + as_text(body) if isinstance(body, str) else " (binary)")]
    return [kind or "?", cut(dump(block), MAX_SUMMARY)]


def exit_status(status: dict[str, Any]) -> str:
    if status.get("signal") is not None:
        return f"killed by {as_text(status['signal'])}"
    if status.get("exitCode") is not None:
        return f"exit code {scalar(status['exitCode'])}"
    return ""


def blocks(value: Any) -> list[list[str]]:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return [] if value is None else [as_block(value)]
    return [as_block(block) for block in value]


def tool_content(items: Iterable[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "diff" and isinstance(item.get("newText"), str):
            old = item.get("oldText")
            out.append(
                {
                    "t": "diff",
                    "path": as_text(item.get("path")),
                    "new": not isinstance(old, str),
                    "lines": line_diff(old if isinstance(old, str) else None, item["newText"]),
                }
            )
        elif kind == "diff":  # v2: the changes, and the patch text when there is one
            changes = [
                f"{as_text(c.get('operation') or c.get('kind') or c.get('type'))} {as_text(c.get('path'))}".strip()
                for c in objects(item.get("changes"))
            ]
            patch = as_object(item.get("patch")).get("text")
            out.append({"t": "patch", "changes": changes, "text": as_text(patch) if isinstance(patch, str) else ""})
        elif kind == "terminal":
            out.append({"t": "terminal", "id": as_text(item.get("terminalId"))})
        elif kind == "content":
            out.append({"t": "content", "content": blocks(item.get("content"))})
        else:
            out.append({"t": "content", "content": [as_block(item)]})
    return out


def event_text(tag: str, update: dict[str, Any]) -> str:
    if tag == "available_commands_update":
        return " ".join("/" + as_text(c.get("name")) for c in objects(update.get("availableCommands")))
    if tag == "current_mode_update":
        return as_text(update.get("currentModeId") or update.get("modeId"))
    if tag == "state_update":
        return as_text(update.get("state"))
    if tag == "terminal_output_chunk":
        return as_text(update.get("data"))
    rest = {k: v for k, v in update.items() if k not in ("sessionUpdate", "_meta")}
    return cut(dump(rest), MAX_SUMMARY) if rest else ""
