"""How a connection's messages travel: a :class:`Transport` moves whole
messages (the JSON text of one each) in and out; framing is its business.
A transport that parses messages itself, to route them, hands them over
parsed (:class:`Loaded`, :class:`CarriesLoaded`): each is parsed once.

:class:`StreamTransport` frames them as lines over asyncio streams (stdio,
pipes to a subprocess, sockets); :func:`memory_pair` joins two connections
in one process, for tests.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import re
import selectors
import signal
import stat
import sys
import threading
from collections.abc import AsyncGenerator, Sequence
from queue import SimpleQueue
from typing import Any, Generic, Protocol, TypeVar

__all__ = [
    "DEFAULT_CLOSE_GRACE",
    "DEFAULT_MAX_BUFFERED",
    "DEFAULT_MAX_MESSAGE",
    "CarriesLoaded",
    "FileReading",
    "FileWriting",
    "Loaded",
    "LoadedMemoryTransport",
    "MemoryTransport",
    "MessageQueue",
    "MessageTooLarge",
    "SendsAtOnce",
    "StreamTransport",
    "Transport",
    "loaded_pair",
    "memory_pair",
    "spawn_process",
    "streamable",
    "text_of",
]

DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
"""The largest message a connection reads unless told otherwise (64 MiB)."""

DEFAULT_MAX_BUFFERED = 16 * 1024 * 1024
"""The bytes of received messages a transport's queue holds for its reader
unless told otherwise (16 MiB; one message always fits, whatever its
size)."""

READ_BUFFER = 1024 * 1024
"""The stream buffer: longer messages are read in pieces of this size."""

_CLOSE_TIMEOUT = 1.0
"""Seconds :meth:`StreamTransport.close` waits for the peer to take what is
still buffered before it drops the connection, unless told otherwise."""

DEFAULT_CLOSE_GRACE = 5.0
"""Seconds a spawned process has to exit once its stdin is closed before it
is killed (:func:`spawn_process`), unless told otherwise."""

STDERR_TAIL = 4096
"""How many of the last bytes of a spawned process's stderr are kept, to
name in the error when the connection to it fails."""

_TAIL_LINES = 5
"""How many of those last lines the error quotes."""

_HEAD = 4096
"""How much of an oversized message is scanned for its id."""

_BLANK = frozenset(b" \t\n\r\x0b\x0c")
"""The bytes ``bytes.strip`` strips: a line starting with none is not blank."""

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


class Loaded:
    """One message already parsed: ``message``, what ``load_message`` made
    of its JSON text, and ``data``, that text. A transport that parses what
    it receives to route it hands this on instead of the text alone, and a
    connection over it sends its messages so (the text dumped once, with
    the message it was dumped from, which the transport routes by): no
    message is parsed twice on one hop. Its length is the text's bytes.

    The bounded queues count it by ``weight``: its text plus a bound on
    what the parsed message holds, read off the text (see
    :func:`parsed_bound`), so a peer's messages held parsed never take more
    memory than the queues' byte bounds say, whatever their shape."""

    __slots__ = ("data", "message", "weight")

    def __init__(self, message: Any, data: bytes) -> None:
        self.message = message
        self.data = data
        self.weight = sys.getsizeof(data) + 8 + parsed_bound(data)

    def __len__(self) -> int:
        return len(self.data)


def text_of(item: bytes | Loaded) -> bytes:
    """A message's text, whether it travels parsed or not."""
    return item.data if isinstance(item, Loaded) else item


_PER_TOKEN = 128
"""The most one JSON value or member of a parsed message holds beyond its
string or number payload: a dict's entry and share of its table, a list's
slot and share of its growth, a key's or a small value's object header."""


def parsed_bound(data: bytes) -> int:
    """An upper bound on the bytes the objects parsed from the JSON text
    ``data`` hold: every value and member starts at a ``,``, ``:``, ``{``
    or ``[`` (or is the text's one top value), so their number is bounded
    by those bytes' count, each at most :data:`_PER_TOKEN` bytes, and the
    strings' and numbers' payloads by four bytes (a UCS-4 character) per
    byte of text. Counting costs four passes of ``bytes.count``."""
    tokens = (
        data.count(b",") + data.count(b":") + data.count(b"{") + data.count(b"[") + 1
    )
    return tokens * _PER_TOKEN + 4 * len(data)


class CarriesLoaded(Protocol):
    """A :class:`Transport` that carries messages parsed (optional): its
    ``receive_loaded`` gives the next message as a :class:`Loaded` when the
    transport parsed it (its text otherwise), and its ``send`` and
    ``send_nowait`` (if any) take a :class:`Loaded` too. A connection over
    one receives and sends through these; ``receive`` still gives the text
    alone, for any other reader."""

    async def receive_loaded(self) -> bytes | Loaded | None:
        """As :meth:`Transport.receive`, the message parsed when it was."""
        ...

    async def send(self, data: bytes | Loaded) -> None:
        """As :meth:`Transport.send`; a :class:`Loaded` goes out as its text."""
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
    is ever taken for a message.

    :meth:`close` gives the peer ``close_timeout`` seconds to take what is
    still buffered, then drops it."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_message: int = DEFAULT_MAX_MESSAGE,
        close_timeout: float = _CLOSE_TIMEOUT,
        reading: asyncio.BaseTransport | None = None,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.max_message = max_message
        self.close_timeout = close_timeout
        self._reading = reading
        """The transport feeding ``reader``, when it is this one's to close
        (:func:`open_stdio`'s :class:`FileReading`)."""
        self._closing: asyncio.Task[None] | None = None
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
                if not parts and len(chunk) <= limit + 1 and chunk[0] not in _BLANK:
                    # The usual line: whole, within the limit, not blank.
                    return chunk
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
        """Close the writing side: the peer has ``close_timeout`` seconds to
        take what is still buffered, which is then dropped (at once when
        ``close`` is cancelled). Closing again, or from another task, waits
        for the same close."""
        if self._reading is not None:
            self._reading.close()
        writer = self.writer
        with contextlib.suppress(Exception):
            writer.close()
        closing = self._closing
        if closing is None:
            # wait_closed() awaits a future the stream's protocol hands to
            # every caller (a subprocess's stdin has one for all): a timeout
            # or a cancellation must not cancel it, or the next close()
            # raises CancelledError and the protocol's own set_result fails.
            # So it is awaited only in a task of its own, never cancelled.
            closing = self._closing = asyncio.ensure_future(_closed(writer))
        try:
            done, _ = await asyncio.wait((closing,), timeout=self.close_timeout)
        except BaseException:
            self._abort()
            raise
        if not done:
            self._abort()  # the peer does not take what is buffered: drop it

    def _abort(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.transport.abort()


def streamable(fd: int, writing: bool = False) -> bool:
    """Whether asyncio streams ``fd`` (``connect_read_pipe``, or with
    ``writing`` ``connect_write_pipe``): a pipe, a socket or a character
    device the event loop's selector can watch, as a terminal. Not a
    regular file nor ``/dev/null``, which no selector watches: see
    :class:`FileReading` and :class:`FileWriting`."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)):
        return False
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(
                fd, selectors.EVENT_WRITE if writing else selectors.EVENT_READ
            )
        except (OSError, ValueError):
            return False
    return True


FILE_CHUNK = 64 * 1024
"""The bytes :class:`FileReading` reads at a time."""


_PUMPING: set[asyncio.Task[None]] = set()
"""The running tasks of :class:`FileReading` (the event loop keeps only
weak references to its tasks)."""


class FileReading(asyncio.ReadTransport):
    """A file asyncio cannot stream (a regular file, ``/dev/null``: see
    :func:`streamable`) read into a stream reader a chunk
    (:data:`FILE_CHUNK`) at a time, the event loop turning between chunks,
    and only while the reader is not paused (it pauses past twice its
    limit): the reader holds a bounded part of the file however large it
    is. At the file's end the reader gets its end, as it does when this is
    closed; a read that fails gives it a ``ConnectionError``. The file is
    not closed: it is the caller's (stdin)."""

    def __init__(self, fd: int, reader: asyncio.StreamReader) -> None:
        super().__init__()
        self._fd = fd
        self._reader = reader
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._closing = False
        self._task = asyncio.ensure_future(self._pump())
        _PUMPING.add(self._task)
        self._task.add_done_callback(_PUMPING.discard)

    async def _pump(self) -> None:
        reader = self._reader
        while True:
            await self._resumed.wait()
            if self._closing:
                return
            try:
                chunk = os.read(self._fd, FILE_CHUNK)
            except OSError as error:
                reader.set_exception(ConnectionError(str(error)))
                return
            if not chunk:
                reader.feed_eof()
                return
            reader.feed_data(chunk)
            await asyncio.sleep(0)

    def pause_reading(self) -> None:
        self._resumed.clear()

    def resume_reading(self) -> None:
        self._resumed.set()

    def is_reading(self) -> bool:
        return self._resumed.is_set() and not self._closing and not self._task.done()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._resumed.set()  # the pump sees it and ends
        if not self._task.done():
            # What waits to read gets the end, as from a pipe closed.
            self._reader.feed_eof()


class FileWriting(asyncio.WriteTransport):
    """A regular file written in place: ``write`` writes all of ``data``
    before it returns (a failure, a full disk say, is its ``OSError``), so
    nothing is ever buffered and ``drain`` never waits. The file is not
    closed: it is the caller's (stdout)."""

    def __init__(
        self,
        fd: int,
        protocol: asyncio.BaseProtocol,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        super().__init__()
        self._fd = fd
        self._protocol = protocol
        self._loop = loop
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._closing:
            raise ConnectionError("the connection is closed")
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def get_write_buffer_size(self) -> int:
        return 0

    def can_write_eof(self) -> bool:
        return False

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._loop.call_soon(self._protocol.connection_lost, None)

    def abort(self) -> None:
        self.close()


async def _closed(writer: asyncio.StreamWriter) -> None:
    """``writer`` closed (its buffer taken by the peer or dropped)."""
    with contextlib.suppress(Exception):
        await writer.wait_closed()


T = TypeVar("T")


def held(item: object) -> int:
    """The bytes a queued message holds: its object's size (``bytes`` exact
    since :func:`dump_message` copies orjson's small outputs, which keep a
    4 KiB buffer) plus the queue's slot; a marker or an error counts as a
    small message."""
    if item is None:
        return 0
    if isinstance(item, (bytes, str)):
        return sys.getsizeof(item) + 8
    if type(item) is Loaded:  # its text and a bound on its parsed form
        return item.weight
    return 256


class MessageQueue(Generic[T]):
    """Messages waiting for their reader, bounded both in number
    (``max_items``) and in the bytes they hold (``max_bytes``, counted by
    :func:`held`): a writer waits while either bound is reached, and one
    message always fits in an empty queue whatever its size. The end
    (:meth:`end`) always fits too and drops nothing: what was queued before
    it is still read."""

    def __init__(self, max_items: int, max_bytes: int) -> None:
        self.max_items = max(1, max_items)
        self.max_bytes = max(1, max_bytes)
        self.held = 0
        """The bytes the queued messages hold."""
        self._items: collections.deque[T | None] = collections.deque()
        self._readable = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    def full(self) -> bool:
        return bool(self._items) and (
            len(self._items) >= self.max_items or self.held >= self.max_bytes
        )

    def empty(self) -> bool:
        return not self._items

    def __len__(self) -> int:
        return len(self._items)

    def put_nowait(self, item: T) -> bool:
        """Queue ``item`` unless the queue is full (then False)."""
        if self.full():
            self._room.clear()
            return False
        self._append(item)
        return True

    async def put(self, item: T) -> None:
        while self.full():
            self._room.clear()
            await self._room.wait()
        self._append(item)

    def end(self) -> None:
        """Queue the end (``None``) behind what is queued, without waiting."""
        self._append(None)

    def _append(self, item: T | None) -> None:
        self._items.append(item)
        self.held += held(item)
        self._readable.set()

    async def get(self) -> T | None:
        while not self._items:
            self._readable.clear()
            await self._readable.wait()
        item = self._items.popleft()
        self.held -= held(item)
        if not self.full():
            self._room.set()
        return item


M = TypeVar("M")


class _MemoryEnd(Generic[M]):
    """One end of an in-process pair: what it sends goes through a bounded
    queue per direction (see :class:`MessageQueue`), so a sender waits while
    its peer does not read; closing one end closes the other."""

    def __init__(self, incoming: MessageQueue[M], outgoing: MessageQueue[M]) -> None:
        self._incoming = incoming
        self._outgoing = outgoing
        self._closed = False
        self.peer: _MemoryEnd[M] | None = None

    async def _take(self) -> M | None:
        if self._closed and self._incoming.empty():
            return None
        item = await self._incoming.get()
        if item is None:
            self._closed = True
            if self.peer is not None:
                self.peer._closed = True
        return item

    def _open(self) -> None:
        if self._closed:
            raise ConnectionError("the connection is closed")

    def is_closing(self) -> bool:
        return self._closed

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for queue in (self._outgoing, self._incoming):
            queue.end()


class MemoryTransport(_MemoryEnd[bytes]):
    """One end of an in-process pair (see :func:`memory_pair`): messages are
    handed over as bytes, through a bounded queue per direction (see
    :class:`MessageQueue`), so a sender waits while its peer does not
    read."""

    async def receive(self) -> bytes | None:
        return await self._take()

    async def send(self, data: bytes) -> None:
        self._open()
        await self._outgoing.put(bytes(data))

    def send_nowait(self, data: bytes) -> bool:
        self._open()
        return self._outgoing.put_nowait(bytes(data))


def memory_pair(
    max_queued: int = 256, max_buffered: int = DEFAULT_MAX_BUFFERED
) -> tuple[MemoryTransport, MemoryTransport]:
    """Two joined transports: what one sends, the other receives. Each
    direction holds at most ``max_queued`` messages and ``max_buffered``
    bytes of them (one message always fits) before its sender waits."""
    left_to_right: MessageQueue[bytes] = MessageQueue(max_queued, max_buffered)
    right_to_left: MessageQueue[bytes] = MessageQueue(max_queued, max_buffered)
    left = MemoryTransport(right_to_left, left_to_right)
    right = MemoryTransport(left_to_right, right_to_left)
    left.peer, right.peer = right, left
    return left, right


class LoadedMemoryTransport(_MemoryEnd[bytes | Loaded]):
    """One end of an in-process pair whose messages may travel parsed (see
    :func:`loaded_pair` and :class:`CarriesLoaded`), otherwise as
    :class:`MemoryTransport`: a :class:`Loaded` sent by one end is what
    ``receive_loaded`` of the other gives (``receive`` gives its text)."""

    async def receive_loaded(self) -> bytes | Loaded | None:
        return await self._take()

    async def receive(self) -> bytes | None:
        item = await self._take()
        return None if item is None else text_of(item)

    async def send(self, data: bytes | Loaded) -> None:
        self._open()
        await self._outgoing.put(data if isinstance(data, Loaded) else bytes(data))

    def send_nowait(self, data: bytes | Loaded) -> bool:
        self._open()
        return self._outgoing.put_nowait(
            data if isinstance(data, Loaded) else bytes(data)
        )


def loaded_pair(
    max_queued: int = 256, max_buffered: int = DEFAULT_MAX_BUFFERED
) -> tuple[LoadedMemoryTransport, LoadedMemoryTransport]:
    """As :func:`memory_pair`, two joined ends whose messages may travel
    parsed (:class:`LoadedMemoryTransport`); the bytes a direction holds
    are those of the messages' text, parsed or not."""
    left_to_right: MessageQueue[bytes | Loaded] = MessageQueue(max_queued, max_buffered)
    right_to_left: MessageQueue[bytes | Loaded] = MessageQueue(max_queued, max_buffered)
    left = LoadedMemoryTransport(right_to_left, left_to_right)
    right = LoadedMemoryTransport(left_to_right, right_to_left)
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
    close_grace: float = DEFAULT_CLOSE_GRACE,
) -> AsyncGenerator[tuple[asyncio.subprocess.Process, StreamTransport], None]:
    """Start ``program`` with ``args`` and yield it with a transport over its
    stdin/stdout. What it writes to stderr goes on to this process's stderr
    (file descriptor 2), and its last :data:`STDERR_TAIL` bytes are kept.

    On exit the transport is closed: the process has ``min(1, close_grace)``
    seconds to take what is still unsent, which is then dropped. From then on
    what it writes to stdout is read and discarded (it never blocks on a
    pipe nobody reads), and it has ``close_grace`` seconds to exit; then it
    is killed (SIGKILL). It is awaited in every case, and once killed that
    wait cannot block (its pipes are closed even while a process it started
    holds them): leaving the block takes at most about
    ``min(1, close_grace) + close_grace`` seconds. A cancellation while
    leaving kills the process at once and propagates once it is reaped.

    A ``ConnectionError`` leaving the block is raised again (``from`` it) with
    the process's exit status and the last lines of its stderr added: what
    ended the connection, when the process died."""
    process = await asyncio.create_subprocess_exec(
        program,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
        limit=READ_BUFFER,
    )
    assert process.stdout is not None and process.stdin is not None
    assert process.stderr is not None
    tail = bytearray()
    stderr = asyncio.ensure_future(_pass_stderr(process.stderr, tail))
    transport = StreamTransport(
        process.stdout,
        process.stdin,
        max_message=max_message,
        close_timeout=min(_CLOSE_TIMEOUT, close_grace),
    )
    try:
        yield process, transport
    except ConnectionError as error:
        killed = await _end_process(process, transport, stderr, close_grace)
        report = _exit_report(program, process, killed, close_grace, tail)
        raise ConnectionError(f"{error}; {report}") from error
    except BaseException:
        await _end_process(process, transport, stderr, close_grace)
        raise
    await _end_process(process, transport, stderr, close_grace)


async def _end_process(
    process: asyncio.subprocess.Process,
    transport: StreamTransport,
    stderr: asyncio.Future[None],
    grace: float,
) -> bool:
    """Close ``process``'s stdin, discard what it still writes to stdout,
    give it ``grace`` seconds to exit, kill it if it has not, and reap it:
    returns whether it was killed. Interrupted (cancelled), it kills the
    process at once, reaps it and raises the interruption again."""
    loop = asyncio.get_running_loop()
    assert process.stdout is not None and process.stdin is not None
    waiting: set[asyncio.Future[Any]] = {stderr}
    exited: asyncio.Future[int] | None = None
    interrupted: BaseException | None = None
    try:
        await transport.close()
        waiting.add(loop.create_task(_discard(process.stdout)))
        exited = loop.create_task(process.wait())
        waiting.add(exited)
        # The process exits and its stdout and stderr end, or grace runs out.
        await asyncio.wait(waiting, timeout=grace)
    except BaseException as error:
        interrupted = error
    killed = False
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
            killed = True
    # Ended here: the process's stdin, and its stdout and stderr even while
    # something else (a process it started) still holds them open, for
    # asyncio waits for its pipes to end before it reports the exit.
    with contextlib.suppress(Exception):
        process.stdin.transport.abort()
    pipes: Any = getattr(process, "_transport", None)
    for fd in (1, 2):
        with contextlib.suppress(Exception):
            pipe = pipes.get_pipe_transport(fd)
            if pipe is not None:
                pipe.close()
    if exited is None:
        exited = loop.create_task(process.wait())
        waiting.add(exited)
    # Cannot block now; only the copy of its stderr can, when this process's
    # stderr is not read: it is left to its thread.
    waiting.discard(stderr)
    while True:
        try:
            await asyncio.wait(waiting)
            break
        except BaseException as error:  # interrupted again: reap all the same
            interrupted = error
    stderr.cancel()
    if interrupted is not None:
        raise interrupted
    return killed


async def _discard(reader: asyncio.StreamReader) -> None:
    """Read ``reader`` (a process's stdout nobody reads any more) to its end,
    dropping what comes, so that the process does not block writing."""
    # RuntimeError: something else still reads it; then the pipe is closed
    # when the process's grace runs out.
    with contextlib.suppress(Exception):
        while await reader.read(READ_BUFFER):
            pass


async def _pass_stderr(reader: asyncio.StreamReader, tail: bytearray) -> None:
    """Copy ``reader`` (a process's stderr) to this process's stderr until
    it ends, keeping its last :data:`STDERR_TAIL` bytes in ``tail``.

    A thread of its own writes the copy: a stderr nobody reads blocks that
    thread, and through it the process (which blocked itself when it wrote
    there directly), never this event loop."""
    loop = asyncio.get_running_loop()
    chunks: SimpleQueue[tuple[bytes, asyncio.Future[None]] | None] = SimpleQueue()
    threading.Thread(
        target=_copy_stderr, args=(loop, chunks), name="stderr copy", daemon=True
    ).start()
    try:
        while True:
            try:
                chunk = await reader.read(READ_BUFFER)
            except Exception:
                return
            if not chunk:
                return
            tail += chunk
            del tail[:-STDERR_TAIL]
            written: asyncio.Future[None] = loop.create_future()
            chunks.put((chunk, written))
            await written  # read on once it is written: as fast as it goes
    finally:
        chunks.put(None)


def _copy_stderr(
    loop: asyncio.AbstractEventLoop,
    chunks: SimpleQueue[tuple[bytes, asyncio.Future[None]] | None],
) -> None:
    """Write the chunks to file descriptor 2 until ``None`` comes, telling
    each one's future in ``loop`` when it is written."""
    while True:
        item = chunks.get()
        if item is None:
            return
        data, written = item
        _write_stderr(data)
        with contextlib.suppress(RuntimeError):  # the loop is closed
            loop.call_soon_threadsafe(_set_done, written)


def _set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _write_stderr(data: bytes) -> None:
    """``data`` to file descriptor 2, where a process that shares this one's
    stderr writes (given up if it fails)."""
    view = memoryview(data)
    while view:
        try:
            written = os.write(2, view)
        except InterruptedError:
            continue
        except OSError:
            return
        view = view[written:]


def _exit_report(
    program: str,
    process: asyncio.subprocess.Process,
    killed: bool,
    grace: float,
    tail: bytearray,
) -> str:
    """How ``process`` ended, and the last lines of its stderr."""
    name = f"{os.path.basename(program)} (pid {process.pid})"
    code = process.returncode
    if killed:
        report = (
            f"{name} did not exit within {grace:g} s of its stdin closing "
            "and was killed"
        )
    elif code is not None and code < 0:
        try:
            report = f"{name} was ended by {signal.Signals(-code).name}"
        except ValueError:
            report = f"{name} was ended by signal {-code}"
    else:
        report = f"{name} exited with status {code}"
    text = bytes(tail).decode("utf-8", "replace")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if not lines:
        return f"{report}, writing nothing to stderr"
    last = "\n".join(f"    {line}" for line in lines[-_TAIL_LINES:])
    return f"{report}; the end of its stderr:\n{last}"
