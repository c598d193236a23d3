"""The state of one connection the ASGI app (``_asgi``) serves: the agent's
connection over an in-memory pair, the SSE streams its messages wait in,
and the routes of requests and answers between the streams.

Messages cross the pair parsed (:class:`~._transport.Loaded`): the app
parsed a ``POST``'s body to route it, and hands it on so; the connection
hands over each message it sends with its text, and it is routed by the
message, never parsed again."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from ._connection import Connection
from ._jsonrpc import load_message, session_of
from ._transport import (
    Loaded,
    LoadedMemoryTransport,
    Transport,
    held,
    loaded_pair,
    text_of,
)

__all__ = ["Key", "Limits", "Link", "Stream", "message_key"]

log = logging.getLogger(__name__.rpartition(".")[0] + ".asgi")

AsgiSend = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Key = tuple[str, int | str]


@dataclass(frozen=True)
class Limits:
    """What bounds a connection: the size of a message, the bytes its SSE
    streams hold (what their messages really hold, counted by
    :func:`~._transport.held`; the agent's outgoing queue holds as much
    again), the seconds its peer may leave it unread or unopened."""

    max_message: int
    max_buffered: int
    idle_timeout: float


def message_key(id: object) -> Key | None:
    """A JSON-RPC id as a dict key (1 and "1" apart; no key for others)."""
    if isinstance(id, bool):
        return None
    if isinstance(id, int):
        return ("n", id)
    if isinstance(id, str):
        return ("s", id)
    return None


class Stream:
    """One SSE stream's messages, waiting for its reader."""

    def __init__(self) -> None:
        self.items: collections.deque[bytes] = collections.deque()
        self.ready = asyncio.Event()
        self.attached = False
        self.ended = False


class Link:
    """One ACP connection of the app: the agent's :class:`Connection` over an
    in-memory pair, and what routes its messages to the peer (``websocket``:
    the socket's ASGI ``send``, or ``None`` for the SSE streams)."""

    def __init__(
        self,
        make_connection: Callable[[Transport, int], Connection[Any]],
        limits: Limits,
        websocket: AsgiSend | None,
        closed: Callable[[Link], object],
        peer: str = "",
    ) -> None:
        self.limits = limits
        self.on_close = closed
        self.peer = peer
        """Who opened it (the app counts connections per peer)."""
        self.id = secrets.token_hex(16)
        here, there = loaded_pair(16, limits.max_buffered)
        self.here: LoadedMemoryTransport = here
        self.connection = make_connection(there, limits.max_message)
        self.websocket = websocket
        self.ws_lock = asyncio.Lock()
        self.streams: dict[str | None, Stream] = {None: Stream()}
        self.sessions: set[str] = set()
        self.routes: dict[Key, str | None] = {}
        """The client's requests: the stream their answer goes on."""
        self.agent_requests: dict[Key, str | None] = {}
        """The agent's requests: the session they are about."""
        self.closing: dict[Key, str] = {}
        """The client's ``session/close`` requests: the session each ends."""
        self.attaching: dict[Key, str] = {}
        """The client's ``session/load``/``session/resume`` requests that took
        a session slot: a refusal gives it back."""
        self.waiters: dict[Key, asyncio.Future[bytes]] = {}
        self.buffered = 0
        self.room = asyncio.Event()
        self.room.set()
        loop = asyncio.get_running_loop()
        self.last_active = loop.time()
        self.closed = False
        self.connection.start()
        self.pump = loop.create_task(self._pump())
        self.sending_since: float | None = None
        """Since when the message being sent to the peer waits for it."""
        self.reaper = loop.create_task(self._reap())
        self.handler: asyncio.Task[Any] | None = None
        """The task reading the WebSocket: close() stops it."""

    # ---------------------------------------------------------- to the agent

    async def deliver(self, data: bytes | Loaded) -> None:
        """Hand a message to the agent's connection: its text, or (when it
        was parsed to route it) the :class:`Loaded` message, not parsed
        again."""
        self.last_active = asyncio.get_running_loop().time()
        await self.here.send(data)

    async def ask(self, key: Key, data: bytes | Loaded, timeout: float) -> bytes:
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.waiters[key] = future
        await self.deliver(data)
        return await asyncio.wait_for(future, timeout)

    # ---------------------------------------------------------- to the peer

    async def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                data = await self.here.receive_loaded()
                if data is None:
                    break
                self.sending_since = loop.time()
                await self._route(data)
                self.sending_since = None
                self.last_active = loop.time()
        except (ConnectionError, OSError):
            pass
        finally:
            asyncio.get_running_loop().create_task(self.close())

    async def _route(self, item: bytes | Loaded) -> None:
        """Send a message of the agent's on: over the WebSocket, or to the
        SSE stream it belongs on, found from the message the connection
        dumped (text alone, from a connection over a wrapper of the pair,
        is parsed)."""
        data = text_of(item)
        if self.websocket is not None:  # one socket carries everything
            async with self.ws_lock:
                await self.websocket({"type": "websocket.send", "text": data.decode()})
            return
        if isinstance(item, Loaded):
            message = item.message
        else:
            try:
                message = load_message(data)
            except ValueError:  # pragma: no cover - the connection writes JSON
                message = None
        if not isinstance(message, dict):  # pragma: no cover
            message = {}
        wire: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
        key = message_key(wire.get("id"))
        finished: str | None = None
        if "method" not in wire and key is not None:
            waiter = self.waiters.pop(key, None)
            if waiter is not None:
                if not waiter.done():
                    waiter.set_result(data)
                return
            target = self.routes.pop(key, None)
            created = session_of(wire, "result")
            if created is not None:
                self.sessions.add(created)
            ended = self.closing.pop(key, None)
            refused = self.attaching.pop(key, None)
            if ended is not None and "result" in wire:
                finished = ended
            elif refused is not None and "error" in wire:
                finished = refused
        else:
            target = session_of(wire, "params")
            if target is not None:
                self.sessions.add(target)
            if key is not None:
                self.agent_requests[key] = target
        while self.buffered >= self.limits.max_buffered:
            self.room.clear()
            await self.room.wait()
        stream = self.streams.get(target)
        if stream is None:
            stream = self.streams[target] = Stream()
        stream.items.append(data)
        stream.ready.set()
        self.buffered += held(data)
        if finished is not None:
            self.forget(finished)

    def take(self, stream: Stream) -> bytes | None:
        if not stream.items:
            stream.ready.clear()
            return None
        data = stream.items.popleft()
        self.buffered -= held(data)
        if self.buffered < self.limits.max_buffered:
            self.room.set()
        return data

    def forget(self, session: str) -> None:
        """The session ended (``session/close`` answered, or its
        ``session/load`` refused): its slot is free, and its stream ends
        once its reader has taken what waits in it."""
        self.sessions.discard(session)
        stream = self.streams.get(session)
        if stream is not None:
            stream.ended = True
            stream.ready.set()
            if not stream.attached and not stream.items:
                del self.streams[session]

    def idle_for(self, now: float) -> float | None:
        """For how many seconds the connection has been idle at ``now``:
        nothing in flight (see ``Connection.busy``) and no message either
        way; ``None`` while it is busy."""
        if self.connection.busy or self.sending_since is not None:
            return None
        return now - self.last_active

    def expired(self, now: float) -> str | None:
        """Why the connection should close at ``now`` (``None``: it should
        not): its peer has not read what waits for it for ``idle_timeout``
        seconds, or (HTTP) no stream has been open for that long."""
        timeout = self.limits.idle_timeout
        since = self.sending_since
        if since is not None and now - since > timeout:
            return "its peer does not read"
        if self.websocket is not None:
            return None
        if any(stream.attached for stream in self.streams.values()):
            self.last_active = now
        elif now - self.last_active > timeout:
            return f"no stream open for over {timeout:g} s"
        return None

    async def _reap(self) -> None:
        """Close the connection once :meth:`expired` says so, looking four
        times per ``idle_timeout``."""
        loop = asyncio.get_running_loop()
        while not self.closed:
            await asyncio.sleep(self.limits.idle_timeout / 4)
            reason = self.expired(loop.time())
            if reason is not None:
                log.info("closing connection %s: %s", self.id, reason)
                await self.close()

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.on_close(self)
        current = asyncio.current_task()
        for task in (self.pump, self.reaper, self.handler):
            if task is not None and task is not current:
                task.cancel()
        for future in self.waiters.values():
            if not future.done():
                future.set_exception(ConnectionError("the connection closed"))
        for stream in self.streams.values():
            stream.ended = True
            stream.ready.set()
        with contextlib.suppress(Exception):
            await self.connection.close()
        with contextlib.suppress(Exception):
            await self.here.close()
