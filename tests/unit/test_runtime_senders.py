"""The fixed part of every generated ``senders.py`` (``_senders``), on
stand-in classes: the sender wraps an update in its session's notification
and sends it through the connection, the tool call handle holds its call,
ids are made up, and ``str`` and content blocks become the content the
schema wants."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

import pytest
from acpgen.runtime._runtime import UNSET
from acpgen.runtime._senders import (
    SessionSenderBase,
    ToolCallHandleBase,
    as_block,
    as_blocks,
    as_tool_content,
    as_tool_item,
    new_tool_call_id,
)


@dataclass
class Text:
    text: str


@dataclass
class Image:
    data: str


@dataclass
class Wrapped:
    content: Any


@dataclass
class Diff:
    path: str


@dataclass
class Note:
    session_id: str
    update: Any


class Recorder:
    """A stand-in connection: what ``notify`` was given."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def notify(self, method: str, params: Any = None) -> None:
        self.sent.append((method, params))


class Sender(SessionSenderBase[Recorder, str, Any]):
    __slots__ = ()

    def _wrap(self, update: Any) -> Note:
        return Note(self.session_id, update)


def test_send_wraps_the_update_in_the_sessions_notification() -> None:
    connection = Recorder()
    sender = Sender(connection, "s1")
    asyncio.run(sender.send({"kind": "x"}))
    assert connection.sent == [("session/update", Note("s1", {"kind": "x"}))]
    assert sender.connection is connection and sender.session_id == "s1"
    assert repr(sender) == "Sender(session_id='s1')"


def test_the_base_sender_has_no_notification_of_its_own() -> None:
    with pytest.raises(NotImplementedError):
        asyncio.run(SessionSenderBase(Recorder(), "s").send(1))


def test_senders_and_handles_take_no_other_attributes() -> None:
    sender = Sender(Recorder(), "s")
    handle = ToolCallHandleBase(sender, "t1")
    with pytest.raises(AttributeError):
        sender.other = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        handle.other = 1  # type: ignore[attr-defined]
    assert handle.sender is sender and handle.tool_call_id == "t1"
    assert repr(handle) == "ToolCallHandleBase(tool_call_id='t1', session_id='s')"


def test_a_new_tool_call_id_is_32_hex_digits_and_new_each_time() -> None:
    ids = {new_tool_call_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)


def test_a_str_is_a_text_block_and_a_block_stays() -> None:
    image = Image("AAAA")
    assert as_block("hi", Text) == Text("hi")
    assert as_block(image, Text) is image
    assert as_block(None, Text) is None
    assert as_block(UNSET, Text) is UNSET


def test_a_list_of_blocks_takes_str_items_and_a_str_alone() -> None:
    image = Image("AAAA")
    assert as_blocks(["a", image], Text) == [Text("a"), image]
    assert as_blocks(("a",), Text) == [Text("a")]
    assert as_blocks("a", Text) == [Text("a")]
    assert as_blocks([], Text) == []
    assert as_blocks(None, Text) is None
    assert as_blocks(UNSET, Text) is UNSET


def test_tool_call_content_keeps_its_kinds_and_wraps_blocks_and_str() -> None:
    diff, wrapped, image = Diff("/a"), Wrapped(Text("x")), Image("AAAA")
    kinds = (Wrapped, Diff)
    got = as_tool_content([diff, wrapped, image, "hi"], kinds, Wrapped, Text)
    assert got == [diff, wrapped, Wrapped(image), Wrapped(Text("hi"))]
    assert got[0] is diff and got[1] is wrapped
    assert as_tool_content("hi", kinds, Wrapped, Text) == [Wrapped(Text("hi"))]
    assert as_tool_content(None, kinds, Wrapped, Text) is None
    assert as_tool_content(UNSET, kinds, Wrapped, Text) is UNSET
    # Without a text block, a str is a block like any other (the model refuses it).
    assert as_tool_content(["hi"], kinds, Wrapped, None) == [Wrapped("hi")]


def test_one_tool_call_content_item() -> None:
    diff = Diff("/a")
    assert as_tool_item(diff, (Wrapped, Diff), Wrapped, Text) is diff
    assert as_tool_item("hi", (Wrapped, Diff), Wrapped, Text) == Wrapped(Text("hi"))
    assert as_tool_item(Image("A"), (Wrapped, Diff), Wrapped, Text) == Wrapped(Image("A"))
    assert as_tool_item(None, (Wrapped,), Wrapped, Text) is None
    assert as_tool_item(UNSET, (Wrapped,), Wrapped, Text) is UNSET
