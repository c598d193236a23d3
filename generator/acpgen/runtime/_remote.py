"""A client's transports to a remote agent (ACP's "Streamable HTTP &
WebSocket" RFD): :func:`open_websocket` over the ``websockets`` package,
:func:`open_http` over ``httpx``; each is imported only when used, and its
absence is an ``ImportError`` naming what to ``pip install``.

Both take ``cookies``, a dict the server's cookies are kept in: pass the
same dict again when reconnecting, so that a load balancer's affinity cookie
comes back (the RFD asks clients to keep them). :func:`connected` opens a
transport and runs a connection over it; calling it again reconnects.

Memory is bounded whatever the server sends: a message over ``max_message``
bytes is refused unread (a ``POST``'s answer included), what waits for the
connection to read holds at most ``max_buffered`` bytes (one message always
fits), and a redirect to another host is refused unless allowed (the
WebSocket transport would send it every header; the HTTP one follows no
redirect).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import urllib.parse
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

from ._connection import Connection
from ._jsonrpc import dump_message, load_message, session_of
from ._transport import (
    DEFAULT_MAX_BUFFERED,
    DEFAULT_MAX_MESSAGE,
    Loaded,
    MessageQueue,
    MessageTooLarge,
    Transport,
    head_hint,
    text_of,
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
_REFUSAL_BODY = 4096
"""How much of a refusal's body is read (and kept in the error)."""

C = TypeVar("C", bound="Connection[Any]")
_Item = bytes | Loaded | MessageTooLarge


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


def _close_cause(error: Any, max_message: int | None) -> str:
    """What a ``websockets`` ``ConnectionClosed`` means, in words: the code
    this end closed with (1009: a message too large, 1007: not UTF-8, 1002:
    not the protocol) or the one the server sent."""
    sent: Any = getattr(error, "sent", None)
    received: Any = getattr(error, "rcvd", None)
    code: int | None = getattr(sent, "code", None)
    if code == 1009:
        limit = f" ({max_message} bytes)" if max_message is not None else ""
        return (
            f"the server sent a message over max_message{limit}: the client "
            "closed the connection (WebSocket code 1009, message too big)"
        )
    if code == 1007:
        return (
            "the server sent a text frame that is not UTF-8: the client closed "
            "the connection (WebSocket code 1007, invalid data)"
        )
    if code == 1002:
        return (
            "the server broke the WebSocket protocol: the client closed the "
            f"connection (WebSocket code 1002): {error}"
        )
    if received is not None:
        reason = f": {received.reason}" if received.reason else ""
        return (
            f"the server closed the connection (WebSocket code {received.code}{reason})"
        )
    return f"the WebSocket connection broke: {error}"


class WebSocketTransport:
    """Messages as WebSocket text frames (binary frames are ignored). A
    message over ``max_message`` bytes closes the socket (code 1009): the
    ``websockets`` package refuses it before reading it, and the error
    (``ConnectionError``, which fails the requests waiting) says so; so does
    a frame that is not UTF-8 (1007)."""

    def __init__(self, socket: Any, max_message: int | None = None) -> None:
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
        self.max_message = max_message

    async def receive(self) -> bytes | None:
        while True:
            try:
                frame: object = await self.socket.recv()
            except self._closed_ok:
                return None
            except self._closed as error:
                raise ConnectionError(_close_cause(error, self.max_message)) from error
            if isinstance(frame, str):
                return frame.encode()

    async def send(self, data: bytes) -> None:
        if self._closing:
            raise ConnectionError("the connection is closed")
        try:
            await self.socket.send(data.decode())
        except self._closed as error:
            raise ConnectionError(_close_cause(error, self.max_message)) from error

    def is_closing(self) -> bool:
        return self._closing or self.socket.state is not self._open

    async def close(self) -> None:
        self._closing = True
        try:
            await asyncio.wait_for(self.socket.close(), _CLOSE_TIMEOUT)
        except (asyncio.TimeoutError, Exception):
            with contextlib.suppress(Exception):
                self.socket.transport.abort()


def _other_host(old: str, new: str) -> bool:
    """Whether ``new`` names another origin than ``old`` (scheme, host or
    port differ)."""
    defaults = {"ws": 80, "http": 80, "wss": 443, "https": 443}
    before, after = urllib.parse.urlsplit(old), urllib.parse.urlsplit(new)
    return (
        before.scheme,
        before.hostname,
        before.port or defaults.get(before.scheme),
    ) != (
        after.scheme,
        after.hostname,
        after.port or defaults.get(after.scheme),
    )


def _status_line(head: bytes) -> tuple[int, str] | None:
    """The status and reason of an HTTP status line, if ``head`` starts with
    one."""
    line = head.split(b"\n", 1)[0].rstrip(b"\r").decode("iso-8859-1")
    parts = line.split(" ", 2)
    if len(parts) >= 2 and parts[0].startswith("HTTP/") and parts[1].isdigit():
        return int(parts[1]), parts[2] if len(parts) > 2 else ""
    return None


async def open_websocket(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    cookies: dict[str, str] | None = None,
    max_message: int = DEFAULT_MAX_MESSAGE,
    max_buffered: int = DEFAULT_MAX_BUFFERED,
    open_timeout: float = 10.0,
    cross_host_redirects: bool = False,
) -> WebSocketTransport:
    """Connect to ``url`` (``ws://`` or ``wss://``, the agent's ``/acp``
    endpoint). Raises :class:`TransportRefused` when the server answers the
    upgrade with an HTTP error (its status kept, even when its body is too
    large to read) or with a redirect to another host (every header would
    go there: ``cross_host_redirects=True`` follows it, with the
    ``websockets`` package's own rules, which drop ``Authorization`` and
    ``Cookie`` only), ``ConnectionError`` when it cannot be reached.
    Received frames wait for the connection in at most about
    ``max_buffered`` bytes (at least one message of ``max_message``)."""
    client = _library("websockets.asyncio.client", "websockets", "WebSocket")
    exceptions = _library("websockets.exceptions", "websockets", "WebSocket")
    invalid_status: type[Exception] = exceptions.InvalidStatus
    invalid_handshake: type[Exception] = exceptions.InvalidHandshake
    sent = dict(headers or {})
    cookie = _cookie_header(cookies)
    if cookie is not None:
        sent.setdefault("Cookie", cookie)
    heads: list[bytearray] = []
    """The first bytes each attempt received: the status of an answer
    ``websockets`` could not parse (a body over its limit)."""

    def sniffing(*args: Any, **kwargs: Any) -> Any:
        socket: Any = client.ClientConnection(*args, **kwargs)
        head = bytearray()
        heads.append(head)
        aborting: list[asyncio.TimerHandle] = []
        received = socket.data_received

        def data_received(data: bytes) -> None:
            if len(head) < 512 and b"\n" not in head:
                head.extend(data[:512])
            received(data)
            # A frame refused (too large, not UTF-8) starts the closing
            # handshake: ``websockets`` enforces its deadline only when this
            # end next writes, so a client only reading would wait for its
            # keepalive ping. The socket is dropped at the deadline instead.
            deadline: float | None = getattr(socket, "close_deadline", None)
            if deadline is not None and not aborting:
                loop = asyncio.get_running_loop()
                aborting.append(loop.call_at(deadline, socket.transport.abort))

        socket.data_received = data_received
        return socket

    def refuse_other_hosts(error: Exception) -> Exception | str:
        target: Exception | str = follow(error)
        if (
            isinstance(target, str)
            and not cross_host_redirects
            and _other_host(opening.uri, target)
        ):
            status: int = getattr(error, "response").status_code  # noqa: B009
            return TransportRefused(
                status,
                f"a redirect to another host, {target}, not followed "
                "(cross_host_redirects=True follows it)",
            )
        return target

    opening: Any = client.connect(
        url,
        additional_headers=sent,
        max_size=max_message,
        max_queue=max(1, max_buffered // max(1, max_message)),
        open_timeout=open_timeout,
        close_timeout=_CLOSE_TIMEOUT,
        compression=None,
        create_connection=sniffing,
    )
    follow: Callable[[Exception], Exception | str] = opening.process_redirect
    opening.process_redirect = refuse_other_hosts
    try:
        socket: Any = await opening
    except TransportRefused:
        raise
    except invalid_status as error:
        response: Any = getattr(error, "response")  # noqa: B009
        body = response.body[:_REFUSAL_BODY] if response.body else b""
        raise TransportRefused(
            response.status_code, body.decode("utf-8", "replace")
        ) from None
    except (OSError, invalid_handshake, asyncio.TimeoutError) as error:
        status = _status_line(bytes(heads[-1])) if heads else None
        if status is not None and status[0] != 101:
            raise TransportRefused(
                status[0], f"{status[1]} (the answer could not be read: {error})"
            ) from error
        raise ConnectionError(f"cannot open a WebSocket to {url}: {error}") from error
    if cookies is not None and socket.response is not None:
        values: list[str] = socket.response.headers.get_all("Set-Cookie")
        for value in values:
            name, _, rest = value.split(";", 1)[0].strip().partition("=")
            if name:
                cookies[name] = rest
    return WebSocketTransport(socket, max_message)


# ---------------------------------------------------------------- HTTP


class _SseDecoder:
    """``data:`` events out of an SSE byte stream, in bounded memory and in
    time linear in the stream: each chunk is searched once for line ends,
    and a line still open keeps its pieces (joined once it ends). An event
    over ``limit`` bytes is skipped and reported as
    :class:`MessageTooLarge`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        """The pieces of the line still open."""
        self.pending = 0
        """Their bytes."""
        self.data: list[bytes] = []
        self.size = 0
        self.skipping = False
        """The event being read is over the limit: it is dropped."""
        self.dropping = False
        """The line still open is over the limit: its rest is dropped."""

    def feed(self, chunk: bytes) -> list[bytes | MessageTooLarge]:
        out: list[bytes | MessageTooLarge] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                if start < len(chunk) and not self.dropping:
                    self.parts.append(chunk[start:])
                    self.pending += len(chunk) - start
                    if self.size + self.pending > self.limit + 16:
                        self._drop_line(out)
                return out
            piece = chunk[start:end]
            start = end + 1
            if self.dropping:
                self.dropping = False
                continue
            if self.parts:
                self.parts.append(piece)
                piece = b"".join(self.parts)
                self.parts, self.pending = [], 0
            self._line(piece.rstrip(b"\r"), out)

    def _line(self, line: bytes, out: list[bytes | MessageTooLarge]) -> None:
        if not line:
            if self.skipping:
                self.skipping = False
            elif self.data:
                out.append(b"\n".join(self.data))
            self.data, self.size = [], 0
        elif line.startswith(b"data:") and not self.skipping:
            value = line[6:] if line[5:6] == b" " else line[5:]
            self.size += len(value)
            if self.size > self.limit:
                self._overflow(out, value)
            else:
                self.data.append(value)

    def _drop_line(self, out: list[bytes | MessageTooLarge]) -> None:
        """The open line is over the limit: a ``data:`` line fails its event,
        and the rest of the line is dropped as it comes."""
        head: list[bytes] = []
        size = 0
        for part in self.parts:
            if size >= 4096:
                break
            head.append(part[: 4096 - size])
            size += len(head[-1])
        line = b"".join(head)
        if line.startswith(b"data:"):
            self._overflow(out, line[6:] if line[5:6] == b" " else line[5:])
        self.parts, self.pending = [], 0
        self.dropping = True

    def _overflow(self, out: list[bytes | MessageTooLarge], tail: bytes) -> None:
        if self.skipping:
            return
        head = (b"\n".join(self.data) + tail)[:4096]
        out.append(MessageTooLarge(self.limit, *head_hint(head)))
        self.skipping = True
        self.data, self.size = [], 0


class HttpTransport:
    """ACP's Streamable HTTP, client side: each message is a ``POST``
    (``initialize`` answered in its ``200`` body, the rest ``202``); what the
    agent sends comes on ``GET`` SSE streams, the connection's one opened
    after ``initialize`` and a session's one before the first message naming
    that session. A ``POST`` the server refuses fails the request it carried
    (a JSON-RPC error -32603 whose data holds the status and the start of
    its body); the connection's stream ending ends the connection, once what
    it brought has been read. Bodies are read as they come: an answer or an
    event over ``max_message`` bytes is refused without being read whole
    (the request waiting for it fails), and what waits for the connection
    holds at most ``max_queued`` messages and ``max_buffered`` bytes (one
    message always fits).

    It carries messages parsed (:class:`~._transport.CarriesLoaded`): an
    event is parsed once, to route what follows it, and handed on so
    (``receive_loaded``); a message sent as a :class:`~._transport.Loaded`
    is routed by its message, never parsed."""

    def __init__(
        self,
        url: str,
        client: Any,
        *,
        cookies: dict[str, str] | None = None,
        max_message: int = DEFAULT_MAX_MESSAGE,
        max_queued: int = 256,
        max_buffered: int = DEFAULT_MAX_BUFFERED,
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
        self._inbox: MessageQueue[_Item] = MessageQueue(max_queued, max_buffered)
        self._streams: dict[str | None, asyncio.Task[None]] = {}
        self._opened: dict[str | None, asyncio.Future[None]] = {}
        self._about: dict[object, str | None] = {}
        """The agent's requests: the session whose stream brought them."""
        self._closing = False

    async def receive_loaded(self) -> bytes | Loaded | None:
        item = await self._inbox.get()
        if item is None:
            self._closing = True
            self._inbox.end()
            return None
        if isinstance(item, MessageTooLarge):
            raise item
        return item

    async def receive(self) -> bytes | None:
        item = await self.receive_loaded()
        return None if item is None else text_of(item)

    def is_closing(self) -> bool:
        return self._closing

    async def send(self, data: bytes | Loaded) -> None:
        if self._closing:
            raise ConnectionError("the connection is closed")
        # The connection's own message (a JSON object), or its text alone.
        message: dict[str, Any]
        if isinstance(data, Loaded):
            message, data = data.message, data.data
        else:
            message = load_message(data)
        headers = {"Content-Type": "application/json"}
        session: str | None = None
        if self.connection_id is None:
            if message.get("method") != "initialize":
                raise ConnectionError("the first message over HTTP must be initialize")
        else:
            headers[CONNECTION_ID_HEADER] = self.connection_id
            if "method" in message:
                session = session_of(message, "params")
            else:
                session = self._about.pop(_id_key(message.get("id")), None)
            if session is not None:
                headers[SESSION_ID_HEADER] = session
                problem = await self._open_stream(session)
                if problem is not None:
                    await self._refused(message, problem)
                    return
        answer: bytes | MessageTooLarge | None = None
        refusal: TransportRefused | None = None
        try:
            request: Any = self.client.build_request(
                "POST", self.url, content=data, headers=headers
            )
            response: Any = await self.client.send(request, stream=True)
            try:
                status: int = response.status_code
                given: str | None = response.headers.get(CONNECTION_ID_HEADER)
                if self.connection_id is None and status == 200 and given:
                    answer = await self._answer(response, message.get("id"))
                elif self.connection_id is None or status not in (200, 202):
                    body = await _body(response, _REFUSAL_BODY)
                    refusal = TransportRefused(status, body)
            finally:
                await response.aclose()
        except Exception as error:
            raise ConnectionError(f"POST {self.url} failed: {error}") from error
        if refusal is not None:
            await self._refused(message, refusal)
        elif answer is not None and given:
            await self._initialized(message, given, answer)

    async def _answer(self, response: Any, id: object) -> bytes | MessageTooLarge:
        """The body of ``initialize``'s answer, read as it comes and given up
        (its connection dropped) once it is over ``max_message`` bytes."""
        limit = self.max_message
        key = id if isinstance(id, (int, str)) and not isinstance(id, bool) else None
        length: str | None = response.headers.get("Content-Length")
        if length is not None and length.strip().isdigit() and int(length) > limit:
            return MessageTooLarge(limit, key)
        parts: list[bytes] = []
        size = 0
        chunk: bytes
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                return MessageTooLarge(limit, key)
            parts.append(chunk)
        return b"".join(parts)

    async def _initialized(
        self, message: Mapping[str, Any], id: str, answer: bytes | MessageTooLarge
    ) -> None:
        if isinstance(answer, MessageTooLarge):
            log.warning("the answer to initialize was not read: %s", answer)
            with contextlib.suppress(Exception):  # the server's end goes too
                await asyncio.wait_for(
                    self.client.delete(self.url, headers={CONNECTION_ID_HEADER: id}),
                    _CLOSE_TIMEOUT,
                )
            await self._inbox.put(answer)  # fails the request
            return
        self.connection_id = id
        problem = await self._open_stream(None)
        if problem is not None:
            await self._refused(message, problem)
            return
        await self._inbox.put(answer)

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
        await self._inbox.put(Loaded(wire, dump_message(wire)))

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
                    body = await _body(response, _REFUSAL_BODY)
                    opened.set_exception(TransportRefused(response.status_code, body))
                    return
                opened.set_result(None)
                chunk: bytes
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        item: _Item = (
                            self._seen(event, session)
                            if isinstance(event, bytes)
                            else event
                        )
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
                self._inbox.end()

    def _seen(self, data: bytes, session: str | None) -> bytes | Loaded:
        """Note the agent's requests (their answers go to the same session's
        stream) and open the stream of a session an answer names; the event
        parsed (a :class:`~._transport.Loaded`), or its text when it is not
        JSON (the connection answers that -32700, as any text it reads)."""
        try:
            message = load_message(data)  # as the connection reads it
        except ValueError:
            return data
        loaded = Loaded(message, data)
        if not isinstance(message, dict):
            return loaded
        wire: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
        if "method" in wire:
            if "id" in wire:
                self._about[_id_key(wire["id"])] = session
            return loaded
        created = session_of(wire, "result")
        if created is not None and created not in self._opened:
            self._opened[created] = opened = _future()
            self._streams[created] = asyncio.get_running_loop().create_task(
                self._read(created, opened)
            )
        return loaded

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
        self._inbox.end()


async def _body(response: Any, limit: int) -> str:
    """The start of a refusal's body: at most ``limit`` bytes are read."""
    parts: list[bytes] = []
    size = 0
    chunk: bytes
    async for chunk in response.aiter_bytes():
        parts.append(chunk[: limit - size])
        size += len(parts[-1])
        if size >= limit:
            break
    return b"".join(parts).decode("utf-8", "replace")


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
    max_buffered: int = DEFAULT_MAX_BUFFERED,
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
    return HttpTransport(
        url, client, cookies=cookies, max_message=max_message, max_buffered=max_buffered
    )


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
