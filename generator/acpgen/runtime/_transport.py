"""How a connection's messages travel: a :class:`Transport` moves whole
messages (the JSON text of one each) in and out; framing is its business.

:class:`StreamTransport` frames them as lines over asyncio streams (stdio,
pipes to a subprocess, sockets); :func:`memory_pair` joins two connections
in one process, for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Protocol

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "MemoryTransport",
    "MessageTooLarge",
    "StreamTransport",
    "Transport",
    "memory_pair",
]

DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
"""The largest message a connection reads unless told otherwise (64 MiB)."""

_CLOSE_TIMEOUT = 1.0
"""Seconds :meth:`StreamTransport.close` waits for the peer to take what is
still buffered before it drops the connection."""

_ID_HINT = re.compile(
    rb'^\s*\{(?:[^{}\[\]"]|"(?:[^"\\]|\\.)*")*?"id"\s*:\s*(-?[0-9]{1,18}|"(?:[^"\\]|\\.){0,256}")'
)


class MessageTooLarge(Exception):
    """A message over the connection's size limit: it was discarded whole
    (never read in part). ``id`` is the request id its first bytes name, when
    they name one, so that a request waiting for it can fail."""

    def __init__(self, limit: int, id: int | str | None = None) -> None:
        super().__init__(f"a message of more than {limit} bytes was discarded")
        self.limit = limit
        self.id = id


class Transport(Protocol):
    """Whole messages in and out."""

    async def receive(self) -> bytes | None:
        """The next message's JSON text; ``None`` once the peer has closed.
        Raises :class:`MessageTooLarge` for a message over the limit (the
        next call reads the one after it) and ``ConnectionError`` when the
        connection broke."""
        ...

    async def send(self, data: bytes) -> None:
        """Send one message's JSON text (without a line break). Raises
        ``ConnectionError`` when the connection is closed or broke. May wait
        while the peer is not reading: cancel it to give up."""
        ...

    def is_closing(self) -> bool:
        """True once no more can be sent."""
        ...

    async def close(self) -> None:
        """Close; returns within about a second even when the peer does not
        read."""
        ...


def id_hint(prefix: bytes) -> int | str | None:
    """The ``id`` of a message from the first bytes of its text, when they
    show it before any nested value: only used to fail a request whose answer
    was too large to read."""
    match = _ID_HINT.match(prefix)
    if match is None:
        return None
    token = match.group(1)
    if token.startswith(b'"'):
        try:
            return token[1:-1].decode("utf-8")
        except UnicodeDecodeError:
            return None
    return int(token)


class StreamTransport:
    """Messages as lines (newline-delimited JSON) over asyncio streams.

    A line longer than ``max_message`` bytes is discarded to its end, in
    bounded memory, and reported as :class:`MessageTooLarge`: no part of it
    is ever taken for a message."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_message: int = DEFAULT_MAX_MESSAGE,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.max_message = max_message

    async def receive(self) -> bytes | None:
        reader = self.reader
        limit = self.max_message
        parts: list[bytes] = []
        size = 0
        while True:
            end = False
            try:
                chunk = await reader.readuntil(b"\n")
                end = True
            except asyncio.IncompleteReadError as error:
                chunk = error.partial  # the last line has no line break
                if not chunk and not parts:
                    return None
                end = True
            except asyncio.LimitOverrunError as error:
                # The line goes on past the reader's buffer: take what is there.
                chunk = await reader.readexactly(error.consumed)
            except (ConnectionError, OSError) as error:
                raise ConnectionError(str(error)) from error
            size += len(chunk)
            if size > limit + 1:  # the line break does not count
                head = (parts[0] if parts else chunk)[:4096]
                if not end:
                    await self._skip_line()
                raise MessageTooLarge(limit, id_hint(head))
            if not end:
                parts.append(chunk)
                continue
            line = b"".join((*parts, chunk)) if parts else chunk
            parts.clear()
            size = 0
            if line.strip():
                return line

    async def _skip_line(self) -> None:
        """Drop what is left of the current line, its line break included,
        holding no more than the reader's buffer at a time."""
        reader = self.reader
        while True:
            try:
                await reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as error:
                await reader.readexactly(error.consumed)
            except asyncio.IncompleteReadError:
                return
            except (ConnectionError, OSError) as error:
                raise ConnectionError(str(error)) from error

    async def send(self, data: bytes) -> None:
        writer = self.writer
        if writer.is_closing():
            raise ConnectionError("the connection is closed")
        try:
            writer.write(data + b"\n")
            await writer.drain()
        except (OSError, RuntimeError) as error:
            raise ConnectionError(str(error) or type(error).__name__) from error

    def is_closing(self) -> bool:
        return self.writer.is_closing()

    async def close(self) -> None:
        writer = self.writer
        with contextlib.suppress(Exception):
            writer.close()
        try:
            await asyncio.wait_for(writer.wait_closed(), _CLOSE_TIMEOUT)
        except (asyncio.TimeoutError, Exception):
            # The peer does not take what is buffered: drop it.
            with contextlib.suppress(Exception):
                writer.transport.abort()


class MemoryTransport:
    """One end of an in-process pair (see :func:`memory_pair`): messages are
    handed over as bytes, through a bounded queue per direction, so a sender
    waits while its peer does not read."""

    def __init__(
        self,
        incoming: asyncio.Queue[bytes | None],
        outgoing: asyncio.Queue[bytes | None],
    ) -> None:
        self._incoming = incoming
        self._outgoing = outgoing
        self._closed = False
        self.peer: MemoryTransport | None = None

    async def receive(self) -> bytes | None:
        if self._closed and self._incoming.empty():
            return None
        data = await self._incoming.get()
        if data is None:
            self._closed = True
            if self.peer is not None:
                self.peer._closed = True
        return data

    async def send(self, data: bytes) -> None:
        if self._closed:
            raise ConnectionError("the connection is closed")
        await self._outgoing.put(bytes(data))

    def is_closing(self) -> bool:
        return self._closed

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for queue in (self._outgoing, self._incoming):
            _put_end(queue)


def _put_end(queue: asyncio.Queue[bytes | None]) -> None:
    """Tell a queue's reader that nothing more comes, making room if needed."""
    while True:
        try:
            queue.put_nowait(None)
            return
        except asyncio.QueueFull:
            with contextlib.suppress(asyncio.QueueEmpty):
                queue.get_nowait()


def memory_pair(max_queued: int = 256) -> tuple[MemoryTransport, MemoryTransport]:
    """Two joined transports: what one sends, the other receives."""
    left_to_right: asyncio.Queue[bytes | None] = asyncio.Queue(max_queued)
    right_to_left: asyncio.Queue[bytes | None] = asyncio.Queue(max_queued)
    left = MemoryTransport(right_to_left, left_to_right)
    right = MemoryTransport(left_to_right, right_to_left)
    left.peer, right.peer = right, left
    return left, right
