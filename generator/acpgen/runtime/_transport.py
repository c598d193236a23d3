"""How a connection's messages travel: a :class:`Transport` moves whole
messages (the JSON text of one each) in and out; framing is its business.

:class:`StreamTransport` frames them as lines over asyncio streams (stdio,
pipes to a subprocess, sockets); :func:`memory_pair` joins two connections
in one process, for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncGenerator, Sequence
from typing import Any, Protocol

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "MemoryTransport",
    "MessageTooLarge",
    "SendsAtOnce",
    "StreamTransport",
    "Transport",
    "memory_pair",
    "spawn_process",
]

DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
"""The largest message a connection reads unless told otherwise (64 MiB)."""

READ_BUFFER = 1024 * 1024
"""The stream buffer: longer messages are read in pieces of this size."""

_CLOSE_TIMEOUT = 1.0
"""Seconds :meth:`StreamTransport.close` waits for the peer to take what is
still buffered before it drops the connection."""

_HEAD = 4096
"""How much of an oversized message is scanned for its id."""

_OPEN = re.compile(rb"\s*\{")
_MEMBER = re.compile(
    rb'\s*("(?:[^"\\]|\\.)*")\s*:\s*(?:'
    rb'(-?[0-9]+|"(?:[^"\\]|\\.)*"|true|false|null)\s*(?:,|(?=\}))|([\[{]))'
)
"""One member of an object: its key, and its scalar value or the bracket
that opens a nested one."""


class MessageTooLarge(Exception):
    """A message over the connection's size limit: it was discarded whole
    (never read in part). ``id`` is the id its first bytes name, when they
    name one, and ``request`` whether they show a ``method`` (a request or a
    notification): an answer too large to read fails the request waiting for
    it, a request too large to read is answered."""

    def __init__(
        self, limit: int, id: int | str | None = None, request: bool = False
    ) -> None:
        super().__init__(f"a message of more than {limit} bytes was discarded")
        self.limit = limit
        self.id = id
        self.request = request


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


class SendsAtOnce(Protocol):
    """A transport that can also take a message without waiting, which the
    connection uses while no other write waits (optional: a transport
    without it is written to through :meth:`Transport.send` alone)."""

    def send_nowait(self, data: bytes) -> bool:
        """Send ``data`` at once when the transport can take it without
        waiting (what :meth:`Transport.send` would not wait for: a stream
        below its high-water mark, a queue with room), returning True; False
        (nothing sent) when the caller must await ``send`` instead. Raises
        ``ConnectionError`` as ``send`` does."""
        ...


def head_hint(prefix: bytes) -> tuple[int | str | None, bool]:
    """The ``id`` of a message from the first bytes of its text, when they
    show it before any nested value, and whether they show a ``method`` key
    there: only used for a message too large to read."""
    match = _OPEN.match(prefix)
    if match is None:
        return None, False
    id: int | str | None = None
    request = False
    position = match.end()
    while True:
        member = _MEMBER.match(prefix, position)
        if member is None:
            return id, request
        key, value = member.group(1), member.group(2)
        if key == b'"method"':
            request = True
        if value is None:  # a nested value: what follows is not scanned
            return id, request
        if key == b'"id"' and value[:1] in b'"-0123456789':
            try:
                found = json.loads(value)
            except ValueError:
                found = None
            if isinstance(found, (int, str)):
                id = found
        position = member.end()


def id_hint(prefix: bytes) -> int | str | None:
    """The ``id`` a message's first bytes show (see :func:`head_hint`)."""
    return head_hint(prefix)[0]


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
        # Whether drain() would wait: asyncio has no public way to ask.
        # drain() waits exactly while its stream protocol's ``_paused`` is
        # set (``FlowControlMixin``, which every asyncio stream protocol is),
        # so send_nowait reads that flag; for a writer without it, every
        # message goes through send() (get_write_buffer_size, the public
        # measure, sums the buffered pieces since Python 3.12: too slow to
        # ask for every message).
        protocol: Any = getattr(writer, "_protocol", None)
        self._flow: Any = (
            protocol if type(getattr(protocol, "_paused", None)) is bool else None
        )

    async def receive(self) -> bytes | None:
        reader = self.reader
        limit = self.max_message
        parts: list[bytes] = []
        size = 0
        head = b""
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
            if len(head) < _HEAD:
                head += chunk[: _HEAD - len(head)]
            if size > limit + 1:  # the line break does not count
                if not end:
                    await self._skip_line()
                raise MessageTooLarge(limit, *head_hint(head))
            if not end:
                parts.append(chunk)
                continue
            line = b"".join((*parts, chunk)) if parts else chunk
            parts.clear()
            size = 0
            head = b""
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

    def send_nowait(self, data: bytes) -> bool:
        writer = self.writer
        if writer.is_closing():
            raise ConnectionError("the connection is closed")
        flow = self._flow
        if flow is None or flow._paused:
            return False
        try:
            writer.write(data + b"\n")
        except (OSError, RuntimeError) as error:
            raise ConnectionError(str(error) or type(error).__name__) from error
        return True

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

    def send_nowait(self, data: bytes) -> bool:
        if self._closed:
            raise ConnectionError("the connection is closed")
        try:
            self._outgoing.put_nowait(bytes(data))
        except asyncio.QueueFull:
            return False
        return True

    def is_closing(self) -> bool:
        return self._closed

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for queue in (self._outgoing, self._incoming):
            put_end(queue)


def put_end(queue: asyncio.Queue[Any]) -> None:
    """Tell a queue's reader that nothing more comes (``None``), making room
    if needed: the memory pair's and the remote transports' inboxes."""
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


@contextlib.asynccontextmanager
async def spawn_process(
    program: str,
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    max_message: int = DEFAULT_MAX_MESSAGE,
) -> AsyncGenerator[tuple[asyncio.subprocess.Process, StreamTransport], None]:
    """Start ``program`` with ``args`` and yield it with a transport over its
    stdin/stdout. On exit the transport is closed and the process awaited
    (killed if it does not exit within five seconds)."""
    process = await asyncio.create_subprocess_exec(
        program,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
        limit=READ_BUFFER,
    )
    assert process.stdout is not None and process.stdin is not None
    transport = StreamTransport(process.stdout, process.stdin, max_message=max_message)
    try:
        yield process, transport
    finally:
        with contextlib.suppress(Exception):
            await transport.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
