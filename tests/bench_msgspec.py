"""Hand-written msgspec Structs for a few benchmark messages: the baseline
that tests/bench.py times acpgen's lenient decode against (both decode the
same JSON-loaded dicts, msgspec through ``msgspec.convert``)."""

from __future__ import annotations

from typing import Any

import msgspec


class _Base(msgspec.Struct, rename="camel", omit_defaults=True, tag_field="type"):
    pass


class Annotations(msgspec.Struct, rename="camel", omit_defaults=True):
    audience: list[str] | None = None
    priority: float | None = None
    last_modified: str | None = None


class TextContent(_Base, tag="text"):
    text: str
    annotations: Annotations | None = None


class ImageContent(_Base, tag="image"):
    data: str
    mime_type: str
    uri: str | None = None
    annotations: Annotations | None = None


class ResourceLink(_Base, tag="resource_link"):
    name: str
    uri: str
    mime_type: str | None = None
    size: int | None = None
    title: str | None = None
    description: str | None = None
    annotations: Annotations | None = None


class ResourceContents(msgspec.Struct, rename="camel", omit_defaults=True):
    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None


class EmbeddedResource(_Base, tag="resource"):
    resource: ResourceContents
    annotations: Annotations | None = None


ContentBlock = TextContent | ImageContent | ResourceLink | EmbeddedResource


class ContentItem(_Base, tag="content"):
    content: ContentBlock


class Diff(_Base, tag="diff"):
    path: str
    new_text: str
    old_text: str | None = None


class Terminal(_Base, tag="terminal"):
    terminal_id: str


class Location(msgspec.Struct, rename="camel", omit_defaults=True):
    path: str
    line: int | None = None


class _Update(msgspec.Struct, rename="camel", omit_defaults=True, tag_field="sessionUpdate"):
    pass


class ToolCallUpdate(_Update, tag="tool_call_update"):
    tool_call_id: str
    title: str | None = None
    kind: str | None = None
    status: str | None = None
    content: list[ContentItem | Diff | Terminal] | None = None
    locations: list[Location] | None = None
    raw_input: Any = None
    raw_output: Any = None


class AgentMessageChunk(_Update, tag="agent_message_chunk"):
    content: ContentBlock
    message_id: str | None = None


class SessionNotification(msgspec.Struct, rename="camel"):
    session_id: str
    update: ToolCallUpdate | AgentMessageChunk


class PromptRequest(msgspec.Struct, rename="camel"):
    session_id: str
    prompt: list[ContentBlock]


# The labels of tests/bench_payloads.build() this baseline covers.
TYPES: dict[str, type[Any]] = {
    "session/update tool_call_update (output)": SessionNotification,
    "session/update tool_call_update (diffs)": SessionNotification,
    "session/update agent_message_chunk text": SessionNotification,
    "session/prompt request": PromptRequest,
}


def decoder(label: str):
    """The msgspec decode of the message labelled ``label``."""
    cls = TYPES[label]
    return lambda data: msgspec.convert(data, cls)
