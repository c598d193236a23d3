"""Payloads for ``tests/bench.py``: a realistic mix of ACP v1 messages.

Every payload is written against ``schema/v1/schema.json`` and uses only
fields that both the generated ``acp_v1`` package and the official Python SDK
(PyPI ``agent-client-protocol``, pydantic models in ``acp.schema``) know, so
that both libraries do the same work on the same input (a field one side does
not know would be silently dropped by it, which is less work, not a fair
comparison). ``bench.py`` checks that both libraries accept every payload and
that their wire forms agree.

Not a test module: pytest does not collect it (no ``test_`` prefix).
"""

from __future__ import annotations

import base64
import struct
import zlib

SESSION_ID = "sess_01J9ZK6Q3R8W4T2V5X7Y9B1C3D"

# ---------------------------------------------------------------- mapping
#
# Which pydantic model of ``acp.schema`` (SDK 0.12.x, generated from
# schema-v1.19.0) stands for which ``$defs`` name of schema/v1/schema.json.
# The SDK flattens each tagged-union variant into a subclass that carries the
# tag field, so several $defs types have a different name (or several names)
# on the SDK side; unions themselves are plain ``Union[...]`` annotations there,
# not models.

SDK_MODEL_FOR_DEF: dict[str, str] = {
    # top-level payloads benchmarked (decoded with Model.model_validate)
    "SessionNotification": "SessionNotification",
    "PromptRequest": "PromptRequest",
    "InitializeRequest": "InitializeRequest",
    "InitializeResponse": "InitializeResponse",
    # plain objects: same name on both sides
    "ToolCallLocation": "ToolCallLocation",
    "Diff": "Diff",
    "Content": "Content",
    "Terminal": "Terminal",
    "PlanEntry": "PlanEntry",
    "Annotations": "Annotations",
    "TextResourceContents": "TextResourceContents",
    "BlobResourceContents": "BlobResourceContents",
    "ClientCapabilities": "ClientCapabilities",
    "FileSystemCapabilities": "FileSystemCapabilities",
    "AuthCapabilities": "AuthCapabilities",
    "ElicitationCapabilities": "ElicitationCapabilities",
    "AgentCapabilities": "AgentCapabilities",
    "PromptCapabilities": "PromptCapabilities",
    "McpCapabilities": "McpCapabilities",
    "SessionCapabilities": "SessionCapabilities",
    "Implementation": "Implementation",
    "AuthMethodAgent": "AuthMethodAgent",
    "AuthMethodTerminal": "AuthMethodTerminal",
    # the payload types of union variants (base classes on the SDK side)
    "ToolCall": "ToolCall",
    "ToolCallUpdate": "ToolCallUpdate",
    "ContentChunk": "ContentChunk",
    "Plan": "Plan",
    "TextContent": "TextContent",
    "ImageContent": "ImageContent",
    "ResourceLink": "ResourceLink",
    "EmbeddedResource": "EmbeddedResource",
}
"""$defs name -> ``acp.schema`` model with the same fields."""

SDK_MODEL_FOR_VARIANT: dict[str, str] = {
    # SessionUpdate (tag "sessionUpdate"): the SDK has no SessionUpdate model,
    # SessionNotification.update is a discriminated Union of these.
    "SessionUpdate/user_message_chunk": "UserMessageChunk",
    "SessionUpdate/agent_message_chunk": "AgentMessageChunk",
    "SessionUpdate/agent_thought_chunk": "AgentThoughtChunk",
    "SessionUpdate/tool_call": "ToolCallStart",  # subclass of ToolCall
    "SessionUpdate/tool_call_update": "ToolCallProgress",  # subclass of ToolCallUpdate
    "SessionUpdate/plan": "AgentPlanUpdate",  # subclass of Plan
    "SessionUpdate/available_commands_update": "AvailableCommandsUpdate",
    "SessionUpdate/current_mode_update": "CurrentModeUpdate",
    "SessionUpdate/config_option_update": "ConfigOptionUpdate",
    "SessionUpdate/session_info_update": "SessionInfoUpdate",
    "SessionUpdate/usage_update": "UsageUpdate",
    # ContentBlock (tag "type")
    "ContentBlock/text": "TextContentBlock",
    "ContentBlock/image": "ImageContentBlock",
    "ContentBlock/audio": "AudioContentBlock",
    "ContentBlock/resource_link": "ResourceContentBlock",
    "ContentBlock/resource": "EmbeddedResourceContentBlock",
    # ToolCallContent (tag "type")
    "ToolCallContent/content": "ContentToolCallContent",
    "ToolCallContent/diff": "FileEditToolCallContent",
    "ToolCallContent/terminal": "TerminalToolCallContent",
    # AuthMethod (tag "type" or untagged)
    "AuthMethod/terminal": "TerminalAuthMethod",
    "AuthMethod/<untagged>": "AuthMethodAgent",
    # EmbeddedResourceResource (untagged): Union[TextResourceContents, BlobResourceContents]
}
"""``<union $defs name>/<tag>`` -> the ``acp.schema`` model of that variant."""


# ---------------------------------------------------------------- helpers


def _source(lines: int, *, edited: bool = False) -> str:
    """A plausible Python source file of ``lines`` lines."""
    out = [
        '"""HTTP server for the example app."""',
        "",
        "from __future__ import annotations",
        "",
        "import asyncio",
        "import logging",
        "from dataclasses import dataclass",
        "",
        "log = logging.getLogger(__name__)",
        "",
    ]
    i = 0
    while len(out) < lines:
        i += 1
        timeout = 30 if not edited or i % 3 else 45
        out += [
            "",
            "@dataclass",
            f"class Handler{i}:",
            f'    """Serves /api/v1/resource{i}."""',
            "",
            f"    timeout: float = {timeout}.0",
            "",
            "    async def __call__(self, request):",
            "        log.info('handling %s', request.path)",
            "        async with asyncio.timeout(self.timeout):",
            f"            return await request.app.backend.fetch({i}, request.query)",
        ]
    return "\n".join(out[:lines]) + "\n"


def _png(width: int, height: int) -> str:
    """A real (uncompressible-ish) RGB PNG, base64, like a pasted screenshot."""
    rows = b"".join(
        b"\x00" + bytes(((x * 7 + y * 13) ^ (x * y)) & 0xFF for x in range(width * 3)) for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(png).decode("ascii")


def _notification(update: dict) -> dict:
    return {"sessionId": SESSION_ID, "update": update}


OLD_SERVER = _source(40)
NEW_SERVER = _source(40, edited=True)

# ---------------------------------------------------------------- payloads
#
# (label, $defs name, payload). Order = the order of the table.


def build() -> list[tuple[str, str, dict]]:
    """Fresh payload objects (decoding never changes them, but callers may)."""
    tool_call = _notification(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "call_7f3a9c2e51",
            "title": "Edit src/app/server.py",
            "kind": "edit",
            "status": "pending",
            "content": [
                {
                    "type": "diff",
                    "path": "/home/dev/project/src/app/server.py",
                    "oldText": OLD_SERVER,
                    "newText": NEW_SERVER,
                }
            ],
            "locations": [{"path": "/home/dev/project/src/app/server.py", "line": 27}],
            "rawInput": {
                "file_path": "/home/dev/project/src/app/server.py",
                "old_string": "timeout: float = 30.0",
                "new_string": "timeout: float = 45.0",
                "replace_all": True,
            },
        }
    )

    tool_call_update_output = _notification(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_1b2c3d4e5f",
            "status": "completed",
            "title": "Run pytest -q tests/unit",
            "kind": "execute",
            "content": [
                {
                    "type": "content",
                    "content": {
                        "type": "text",
                        "text": "........................................ [ 95%]\n"
                        "..                                       [100%]\n"
                        "42 passed in 3.14s\n",
                    },
                },
                {"type": "terminal", "terminalId": "term_a41f0c"},
                {
                    "type": "content",
                    "content": {
                        "type": "resource_link",
                        "name": "junit.xml",
                        "uri": "file:///home/dev/project/build/junit.xml",
                        "mimeType": "application/xml",
                        "size": 18234,
                    },
                },
            ],
            "rawOutput": {
                "exit_code": 0,
                "duration_ms": 3140,
                "stdout_truncated": False,
            },
        }
    )

    tool_call_update_diff = _notification(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call_7f3a9c2e51",
            "status": "completed",
            "content": [
                {
                    "type": "diff",
                    "path": "/home/dev/project/src/app/server.py",
                    "oldText": OLD_SERVER,
                    "newText": NEW_SERVER,
                },
                {
                    "type": "diff",
                    "path": "/home/dev/project/src/app/config.py",
                    "newText": "TIMEOUT = 45.0\nRETRIES = 3\n",
                },
            ],
            "locations": [
                {"path": "/home/dev/project/src/app/server.py", "line": 27},
                {"path": "/home/dev/project/src/app/server.py", "line": 38},
                {"path": "/home/dev/project/src/app/config.py"},
            ],
        }
    )

    agent_message_chunk = _notification(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "msg_0c4e7a",
            "content": {
                "type": "text",
                "text": "I updated the handler timeouts from 30s to 45s; the tests pass. ",
            },
        }
    )

    agent_message_chunk_link = _notification(
        {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "msg_0c4e7a",
            "content": {
                "type": "resource_link",
                "name": "server.py",
                "uri": "file:///home/dev/project/src/app/server.py",
                "mimeType": "text/x-python",
                "annotations": {
                    "audience": ["user", "assistant"],
                    "priority": 0.8,
                    "lastModified": "2025-06-14T09:21:37Z",
                },
            },
        }
    )

    plan = _notification(
        {
            "sessionUpdate": "plan",
            "entries": [
                {
                    "content": "Read the server module and its tests",
                    "priority": "high",
                    "status": "completed",
                },
                {
                    "content": "Find every hard-coded timeout",
                    "priority": "high",
                    "status": "completed",
                },
                {
                    "content": "Raise handler timeouts to 45s",
                    "priority": "high",
                    "status": "in_progress",
                },
                {
                    "content": "Move the timeout into config.py",
                    "priority": "medium",
                    "status": "pending",
                },
                {
                    "content": "Run the unit tests",
                    "priority": "medium",
                    "status": "pending",
                },
                {
                    "content": "Update the changelog",
                    "priority": "low",
                    "status": "pending",
                },
            ],
        }
    )

    prompt = {
        "sessionId": SESSION_ID,
        "prompt": [
            {
                "type": "text",
                "text": "The request handlers time out under load. Raise the timeouts "
                "to 45 seconds and move them into config.py; see the screenshot of "
                "the dashboard and the attached module.",
            },
            {
                "type": "resource_link",
                "name": "config.py",
                "uri": "file:///home/dev/project/src/app/config.py",
                "mimeType": "text/x-python",
                "size": 1289,
            },
            {
                "type": "resource",
                "resource": {
                    "uri": "file:///home/dev/project/src/app/server.py",
                    "mimeType": "text/x-python",
                    "text": OLD_SERVER,
                },
            },
            {
                "type": "image",
                "mimeType": "image/png",
                "data": _png(24, 16),
            },
            {
                "type": "resource",
                "resource": {
                    "uri": "file:///home/dev/project/docs/latency.pdf",
                    "mimeType": "application/pdf",
                    "blob": base64.b64encode(bytes(range(256)) * 2).decode("ascii"),
                },
                "annotations": {"audience": ["assistant"], "priority": 0.5},
            },
        ],
    }

    initialize_request = {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": True},
            "terminal": True,
            "auth": {"terminal": True},
            "elicitation": {"form": {}},
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
        "clientInfo": {"name": "zed", "version": "0.201.5"},
    }

    initialize_response = {
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {
                "image": True,
                "audio": False,
                "embeddedContext": True,
            },
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {"list": {}, "close": {}},
            "auth": {"logout": {}},
        },
        "authMethods": [
            {"id": "oauth-personal", "name": "Log in with Google"},
            {
                "type": "terminal",
                "id": "api-key",
                "name": "Use an API key",
                "args": ["--login", "--no-browser"],
                "env": {"EXAMPLE_AGENT_LOGIN": "1"},
            },
        ],
        "agentInfo": {"name": "example-agent", "version": "1.4.2"},
    }

    return [
        ("session/update tool_call (diff)", "SessionNotification", tool_call),
        (
            "session/update tool_call_update (output)",
            "SessionNotification",
            tool_call_update_output,
        ),
        (
            "session/update tool_call_update (diffs)",
            "SessionNotification",
            tool_call_update_diff,
        ),
        (
            "session/update agent_message_chunk text",
            "SessionNotification",
            agent_message_chunk,
        ),
        (
            "session/update agent_message_chunk link",
            "SessionNotification",
            agent_message_chunk_link,
        ),
        ("session/update plan", "SessionNotification", plan),
        ("session/prompt request", "PromptRequest", prompt),
        ("initialize request", "InitializeRequest", initialize_request),
        ("initialize response", "InitializeResponse", initialize_response),
    ]
