"""A client's transports to a remote agent (ACP's "Streamable HTTP &
WebSocket" RFD): :func:`open_websocket` over the ``websockets`` package,
:func:`open_http` over ``httpx``; each is imported only when used, and its
absence is an ``ImportError`` naming what to ``pip install``.

Both take ``cookies``, a dict the server's cookies are kept in: pass the
same dict again when reconnecting, so that a load balancer's affinity cookie
comes back (the RFD asks clients to keep them). :func:`connected` opens a
transport and runs a connection over it; calling it again reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, TypeVar, cast

from ._connection import Connection
from ._transport import (
    DEFAULT_MAX_MESSAGE,
    MessageTooLarge,
    Transport,
    head_hint,
    put_end,
)

__all__ = [
    "HttpTransport",
    "TransportRefused",
    "WebSocketTransport",
    "connected",
    "open_http",
    "open_websocket",
]

log = logging.getLogger(__name__.rpartition(".")[0] + ".connection")

CONNECTION_ID_HEADER = "Acp-Connection-Id"
SESSION_ID_HEADER = "Acp-Session-Id"
_CLOSE_TIMEOUT = 1.0

C = TypeVar("C", bound="Connection[Any]")
_Item = bytes | MessageTooLarge | None


class TransportRefused(ConnectionError):
    """The server refused to open the connection: ``status`` is its HTTP
    status (401: authentication, 403: origin, 503: too many connections ...),
    ``body`` what it said."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"the server refused the connection: HTTP {status}: {body}")
        self.status = status
        self.body = body


def _library(module: str, package: str, transport: str) -> Any:
    """An optional library's module, imported now. Typed ``Any``: a package
    vendored without the library stays clean under mypy and pyright."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"the {transport} transport needs the {package!r} package: pip install {package}"
        ) from None


def _cookie_header(cookies: Mapping[str, str] | None) -> str | None:
    if not cookies:
        return None
    return "; ".join(f"{name}={value}" for name, value in cookies.items())


# ---------------------------------------------------------------- WebSocket


class WebSocketTransport:
    """Messages as WebSocket text frames (binary frames are ignored). A
    message over ``max_message`` bytes closes the socket (code 1009): the
    ``websockets`` package refuses it before reading it."""

    def __init__(self, socket: Any) -> None:
        self.socket: Any = socket
        """The ``websockets`` client connection."""
        response: Any = socket.response
        self.connection_id: str | None = (
            response.headers.get(CONNECTION_ID_HEADER) if response is not None else None
        )
        """The ``Acp-Connection-Id`` the server gave."""
        exceptions = _library("websockets.exceptions", "websockets", "WebSocket")
        self._closed_ok: type[Exception] = exceptions.ConnectionClosedOK
        self._closed: type[Exception] = exceptions.ConnectionClosed
        self._open: object = _library(
            "websockets.protocol", "websockets", "WebSocket"
        ).State.OPEN
        self._closing = False

    async def receive(self) -> bytes | None:
        while True:
            try:
                frame: object = await self.socket.recv()
            except self._closed_ok:
                return None
            except self._closed as error:
                raise ConnectionError(str(error)) from error
            if isinstance(frame, str):
                return frame.encode()

    async def send(self, data: bytes) -> None:
        if self._closing:
            raise ConnectionError("the connection is closed")
        try:
            await self.socket.send(data.decode())
        except self._closed as error:
            raise ConnectionError(str(error)) from error

    def is_closing(self) -> bool:
        return self._closing or self.socket.state is not self._open

    async def close(self) -> None:
        self._closing = True
        try:
            await asyncio.wait_for(self.socket.close(), _CLOSE_TIMEOUT)
        except (asyncio.TimeoutError, Exception):
            with contextlib.suppress(Exception):
                self.socket.transport.abort()


async def open_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: dict[str, str] | None = None,
    max_message: int = DEFAULT_MAX_MESSAGE,
    open_timeout: float = 10.0,
) -> WebSocketTransport:
    """Connect to ``url`` (``ws://`` or ``wss://``, the agent's ``/acp``
    endpoint). Raises :class:`TransportRefused` when the server answers the
    upgrade with an HTTP error, ``ConnectionError`` when it cannot be
    reached."""
    client = _library("websockets.asyncio.client", "websockets", "WebSocket")
    exceptions = _library("websockets.exceptions", "websockets", "WebSocket")
    invalid_status: type[Exception] = exceptions.InvalidStatus
    invalid_handshake: type[Exception] = exceptions.InvalidHandshake
    sent = dict(headers or {})
    cookie = _cookie_header(cookies)
    if cookie is not None:
        sent.setdefault("Cookie", cookie)
    try:
        socket: Any = await client.connect(
            url,
            additional_headers=sent,
            max_size=max_message,
            open_timeout=open_timeout,
            compression=None,
        )
    except invalid_status as error:
        response: Any = getattr(error, "response")  # noqa: B009
        raise TransportRefused(
            response.status_code,
            response.body.decode("utf-8", "replace") if response.body else "",
        ) from None
    except (OSError, invalid_handshake, asyncio.TimeoutError) as error:
        raise ConnectionError(f"cannot open a WebSocket to {url}: {error}") from error
    if cookies is not None and socket.response is not None:
        values: list[str] = socket.response.headers.get_all("Set-Cookie")
        for value in values:
            name, _, rest = value.split(";", 1)[0].strip().partition("=")
            if name:
                cookies[name] = rest
    return WebSocketTransport(socket)


# ---------------------------------------------------------------- HTTP


class _SseDecoder:
    """``data:`` events out of an SSE byte stream, in bounded memory: an
    event over ``limit`` bytes is skipped and reported as
    :class:`MessageTooLarge`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buffer = b""
        self.data: list[bytes] = []
        self.size = 0
        self.skipping = False
        self.head = b""

    def feed(self, chunk: bytes) -> list[bytes | MessageTooLarge]:
        out: list[bytes | MessageTooLarge] = []
        self.buffer += chunk
        while True:
            end = self.buffer.find(b"\n")
            if end < 0:
                if len(self.buffer) > self.limit + 16:
                    line = self.buffer
                    if line.startswith(b"data:"):
                        line = line[6:] if line[5:6] == b" " else line[5:]
                        self._overflow(out, line)
                    self.skipping = True  # the rest of this line is dropped
                    self.buffer = b""
                return out
            line = self.buffer[:end].rstrip(b"\r")
            self.buffer = self.buffer[end + 1 :]
            if not line:
                if self.skipping:
                    self.skipping = False
                elif self.data:
                    out.append(b"\n".join(self.data))
                self.data, self.size, self.head = [], 0, b""
            elif line.startswith(b"data:") and not self.skipping:
                value = line[6:] if line[5:6] == b" " else line[5:]
                self.size += len(value)
                if self.size > self.limit:
                    self._overflow(out, value)
                else:
                    self.data.append(value)

    def _overflow(self, out: list[bytes | MessageTooLarge], tail: bytes) -> None:
        if self.skipping:
            return
        head = (b"\n".join(self.data) + tail)[:4096]
        out.append(MessageTooLarge(self.limit, *head_hint(head)))
        self.skipping = True
        self.data, self.size = [], 0


def _session_of(message: Mapping[str, Any], field: str) -> str | None:
    holder: object = message.get(field)
    if isinstance(holder, dict):
        value = cast("dict[str, object]", holder).get("sessionId")
        if isinstance(value, str):
            return value
    return None


class HttpTransport:
    """ACP's Streamable HTTP, client side: each message is a ``POST``
    (``initialize`` answered in its ``200`` body, the rest ``202``); what the
    agent sends comes on ``GET`` SSE streams, the connection's one opened
    after ``initialize`` and a session's one before the first message naming
    that session. A ``POST`` the server refuses fails the request it carried
    (a JSON-RPC error -32603 whose data holds the status and body); the
    connection's stream ending ends the connection."""

    def __init__(
        self,
        url: str,
        client: Any,
        *,
        cookies: dict[str, str] | None = None,
        max_message: int = DEFAULT_MAX_MESSAGE,
        max_queued: int = 256,
    ) -> None:
        self.url = url
        self.client: Any = client
        """The ``httpx.AsyncClient``."""
        self._http_error: type[Exception] = _library(
            "httpx", "httpx", "Streamable HTTP"
        ).HTTPError
        self.cookies = cookies
        self.max_message = max_message
        self.connection_id: str | None = None
        """The ``Acp-Connection-Id`` the server gave ``initialize``."""
        self._inbox: asyncio.Queue[_Item] = asyncio.Queue(max_queued)
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        self._opened: dict[str | None, asyncio.Future[None]] = {}
        self._about: dict[object, str | None] = {}
        """The agent's requests: the session whose stream brought them."""
        self._closing = False

    async def receive(self) -> bytes | None:
        item = await self._inbox.get()
        if item is None:
            self._closing = True
            put_end(self._inbox)
            return None
        if isinstance(item, MessageTooLarge):
            raise item
        return item

    def is_closing(self) -> bool:
        return self._closing

    async def send(self, data: bytes) -> None:
        if self._closing:
            raise ConnectionError("the connection is closed")
        message: dict[str, Any] = json.loads(data)
        headers = {"Content-Type": "application/json"}
        session: str | None = None
        if self.connection_id is None:
            if message.get("method") != "initialize":
                raise ConnectionError("the first message over HTTP must be initialize")
        else:
            headers[CONNECTION_ID_HEADER] = self.connection_id
            if "method" in message:
                session = _session_of(message, "params")
            else:
                session = self._about.pop(_id_key(message.get("id")), None)
            if session is not None:
                headers[SESSION_ID_HEADER] = session
                problem = await self._open_stream(session)
                if problem is not None:
                    await self._refused(message, problem)
                    return
        try:
            response = await self.client.post(self.url, content=data, headers=headers)
        except Exception as error:
            raise ConnectionError(f"POST {self.url} failed: {error}") from error
        if self.connection_id is None:
            await self._initialized(message, response)
        elif response.status_code not in (200, 202):
            await self._refused(
                message, TransportRefused(response.status_code, response.text)
            )

    async def _initialized(self, message: Mapping[str, Any], response: Any) -> None:
        id = response.headers.get(CONNECTION_ID_HEADER)
        if response.status_code != 200 or not id:
            await self._refused(
                message, TransportRefused(response.status_code, response.text)
            )
            return
        self.connection_id = id
        problem = await self._open_stream(None)
        if problem is not None:
            await self._refused(message, problem)
            return
        await self._inbox.put(response.content)

    async def _refused(
        self, message: Mapping[str, Any], problem: TransportRefused
    ) -> None:
        """Fail the request ``message`` carried (a notification or an answer
        is only logged)."""
        if "method" not in message or "id" not in message:
            log.warning("the server refused a message: %s", problem)
            return
        error = {
            "code": -32603,
            "message": f"HTTP {problem.status}: {problem.body[:200]}",
            "data": {"status": problem.status, "body": problem.body[:1000]},
        }
        wire = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        await self._inbox.put(json.dumps(wire).encode())

    async def _open_stream(self, session: str | None) -> TransportRefused | None:
        opened = self._opened.get(session)
        if opened is None:
            opened = self._opened[session] = _future()
            task = asyncio.get_running_loop().create_task(self._read(session, opened))
            self._streams[session] = task
        try:
            await asyncio.shield(opened)
        except TransportRefused as error:
            del self._opened[session]
            return error
        return None

    async def _read(self, session: str | None, opened: asyncio.Future[None]) -> None:
        assert self.connection_id is not None
        headers = {
            "Accept": "text/event-stream",
            CONNECTION_ID_HEADER: self.connection_id,
        }
        if session is not None:
            headers[SESSION_ID_HEADER] = session
        decoder = _SseDecoder(self.max_message)
        try:
            stream: Any = self.client.stream("GET", self.url, headers=headers)
            async with stream as response:
                if response.status_code != 200:
                    body = (await response.aread()).decode("utf-8", "replace")
                    opened.set_exception(TransportRefused(response.status_code, body))
                    return
                opened.set_result(None)
                chunk: bytes
                async for chunk in response.aiter_bytes():
                    for item in decoder.feed(chunk):
                        if isinstance(item, bytes):
                            self._seen(item, session)
                        await self._inbox.put(item)
        except (self._http_error, OSError) as error:
            if not opened.done():
                opened.set_exception(TransportRefused(0, str(error)))
            elif not self._closing:
                log.warning("the %s stream broke: %s", session or "connection", error)
        finally:
            if not opened.done():
                opened.set_exception(TransportRefused(0, "the stream closed"))
            if session is None and not self._closing:
                put_end(self._inbox)

    def _seen(self, data: bytes, session: str | None) -> None:
        """Note the agent's requests (their answers go to the same session's
        stream) and open the stream of a session an answer names."""
        try:
            message = json.loads(data)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        wire: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
        if "method" in wire:
            if "id" in wire:
                self._about[_id_key(wire["id"])] = session
            return
        created = _session_of(wire, "result")
        if created is not None and created not in self._opened:
            self._opened[created] = opened = _future()
            self._streams[created] = asyncio.get_running_loop().create_task(
                self._read(created, opened)
            )

    async def close(self) -> None:
        if self._closing and not self._streams:
            return
        self._closing = True
        for task in self._streams.values():
            task.cancel()
        for task in self._streams.values():
            with contextlib.suppress(BaseException):
                await task
        self._streams.clear()
        if self.connection_id is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(
                    self.client.delete(
                        self.url, headers={CONNECTION_ID_HEADER: self.connection_id}
                    ),
                    _CLOSE_TIMEOUT,
                )
        if self.cookies is not None:
            for cookie in self.client.cookies.jar:
                if cookie.value is not None:
                    self.cookies[cookie.name] = cookie.value
        with contextlib.suppress(Exception):
            await self.client.aclose()
        put_end(self._inbox)


def _future() -> asyncio.Future[None]:
    """A future whose exception need not be awaited by anyone."""
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    future.add_done_callback(lambda done: done.cancelled() or done.exception())
    return future


def _id_key(id: object) -> object:
    return (type(id).__name__, id)


async def open_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: dict[str, str] | None = None,
    max_message: int = DEFAULT_MAX_MESSAGE,
    http2: bool = False,
) -> HttpTransport:
    """A Streamable HTTP transport to ``url`` (``http://`` or ``https://``,
    the agent's ``/acp`` endpoint); nothing is sent before ``initialize``.
    ``headers`` go with every request; ``http2`` needs ``pip install h2``
    (the RFD asks for HTTP/2; HTTP/1.1 works with a connection per
    stream)."""
    httpx = _library("httpx", "httpx", "Streamable HTTP")
    client: Any = httpx.AsyncClient(
        headers=dict(headers or {}),
        cookies=dict(cookies or {}),
        timeout=httpx.Timeout(30.0, read=None),
        http2=http2,
    )
    return HttpTransport(url, client, cookies=cookies, max_message=max_message)


@contextlib.asynccontextmanager
async def connected(
    make_connection: Callable[[Transport], C],
    opening: Awaitable[Transport],
) -> AsyncGenerator[C, None]:
    """Open a transport, start a connection over it (``make_connection``)
    and close it on exit."""
    transport = await opening
    try:
        connection = make_connection(transport)
    except BaseException:
        await transport.close()
        raise
    connection.start()
    try:
        yield connection
    finally:
        await connection.close()
