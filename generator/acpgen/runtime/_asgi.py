"""An agent served over the network: an ASGI application speaking ACP's
remote transport (the "Streamable HTTP & WebSocket" RFD) on one endpoint.

* ``GET`` with ``Upgrade: websocket``: one ACP connection per socket, a
  JSON-RPC message per text frame (binary frames are ignored); the
  ``Acp-Connection-Id`` header comes with the ``101`` answer.
* ``POST`` ``initialize`` (no ``Acp-Connection-Id``): a new connection; its
  answer comes back as the ``200`` body, with the ``Acp-Connection-Id``
  header. Every other ``POST`` is answered ``202`` at once; what the agent
  sends comes on the SSE streams (``data: <json>`` events).
* ``GET`` (``Accept: text/event-stream``) with ``Acp-Connection-Id``: the
  connection-scoped stream (answers to ``session/new`` and ``session/load``,
  messages naming no session); with ``Acp-Session-Id`` too: that session's
  stream (its updates, the agent's requests about it, the answers to the
  requests naming it). Messages wait for their stream's reader.
* ``DELETE`` with ``Acp-Connection-Id``: the connection is closed.

One connection's state and routing is ``_links``. No dependency: the app
runs under any ASGI server (:func:`serve` uses
uvicorn when it is installed). Every request passes the same gate: the
endpoint's path (404), the ``Origin`` header (403), the authentication hook
(401), the number of connections (503); then the message's size (413 over
HTTP, a JSON-RPC -32700 answer over WebSocket), its form (400, 415, 501 for a
batch) and the connection and session ids (400, 404). Memory stays bounded:
what a connection's SSE streams hold waits below ``max_buffered`` bytes (the
agent's writes wait meanwhile), a stream nobody reads for ``idle_timeout``
seconds closes its connection, and so does an HTTP connection with no stream
open for that long.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import importlib
import inspect
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, TypedDict
from urllib.parse import urlsplit

from ._connection import Connection
from ._jsonrpc import PARSE_ERROR, RpcError, dump_message
from ._links import Key, Limits, Link, Stream, message_key, session_of
from ._transport import Transport, head_hint

__all__ = [
    "AcpAsgiApp",
    "RequestHead",
    "ServeOptions",
    "bearer_token",
    "serve",
]

log = logging.getLogger(__name__.rpartition(".")[0] + ".asgi")

CONNECTION_ID_HEADER = "acp-connection-id"
SESSION_ID_HEADER = "acp-session-id"
DEFAULT_PATH = "/acp"
DEFAULT_MAX_NETWORK_MESSAGE = 4 * 1024 * 1024
"""The largest message a served connection takes unless told otherwise."""

_SESSION_HEADER_METHODS = frozenset(
    {
        "session/prompt",
        "session/cancel",
        "session/set_mode",
        "session/set_config_option",
        "session/set_model",
        "session/close",
    }
)
"""Requests and notifications whose ``POST`` must carry ``Acp-Session-Id``."""

_ATTACHING_METHODS = frozenset({"session/load", "session/resume"})
"""Requests that may name a session this connection has not seen yet."""

_CONNECTION_ANSWERS = frozenset({"session/new", "session/load"})
"""Requests answered on the connection-scoped stream (the RFD's rule)."""

_CLOSE_TIMEOUT = 1.0
"""Seconds a close frame may wait for a peer that does not read."""

_KEEPALIVE = 15.0
"""Seconds of silence after which an SSE stream gets a comment line."""

AsgiScope = MutableMapping[str, Any]
AsgiEvent = MutableMapping[str, Any]
AsgiReceive = Callable[[], Awaitable[AsgiEvent]]
AsgiSend = Callable[[AsgiEvent], Awaitable[None]]


@dataclass(frozen=True)
class RequestHead:
    """What the authentication hook sees of a request or WebSocket upgrade:
    ``headers`` have lower-case names (repeated ones joined by ``", "``)."""

    kind: str
    """``"http"`` or ``"websocket"``."""
    method: str
    path: str
    headers: Mapping[str, str]
    client: tuple[str, int] | None
    scope: Mapping[str, Any]


Authenticate = Callable[[RequestHead], bool | Awaitable[bool]]


class ServeOptions(TypedDict, total=False):
    """The options of :class:`AcpAsgiApp` (and of the helpers serving it)."""

    path: str
    """The endpoint (``/acp``)."""
    allowed_origins: Collection[str] | None
    """Origins allowed besides none at all; ``None``: loopback origins only
    (``http://localhost:3000``, ``http://127.0.0.1``), ``"*"``: any."""
    authenticate: Authenticate | None
    """Called with each request's :class:`RequestHead`; false refuses it
    (401). ``None``: no authentication (bind to loopback then)."""
    max_message: int
    """Bytes of one message (4 MiB)."""
    max_connections: int
    """Connections served at once (64)."""
    max_sessions: int
    """Sessions per connection (64)."""
    max_buffered: int
    """Bytes a connection's SSE streams hold for their readers (8 MiB)."""
    idle_timeout: float
    """Seconds before a connection nobody reads is closed (60)."""
    initialize_timeout: float
    """Seconds the agent gets to answer an HTTP ``initialize`` (30)."""


def bearer_token(token: str) -> Callable[[RequestHead], bool]:
    """An authentication hook: the request must carry
    ``Authorization: Bearer <token>`` (compared in constant time)."""
    expected = f"Bearer {token}".encode()

    def check(head: RequestHead) -> bool:
        given = head.headers.get("authorization", "").encode("latin-1", "replace")
        return hmac.compare_digest(given, expected)

    return check


def is_loopback_origin(origin: str) -> bool:
    """Whether an ``Origin`` names this machine (``localhost``, ``127.0.0.1``
    ``[::1]``, with any scheme and port)."""
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Refusal(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


class AcpAsgiApp:
    """The ASGI application (ASGI 3): ``make_connection(transport,
    max_message)`` starts the agent's end of one connection (the generated
    ``asgi_agent_app`` passes one that builds an ``AgentSideConnection``).
    Options as in :class:`ServeOptions`."""

    def __init__(
        self,
        make_connection: Callable[[Transport, int], Connection[Any]],
        *,
        path: str = DEFAULT_PATH,
        allowed_origins: Collection[str] | None = None,
        authenticate: Authenticate | None = None,
        max_message: int = DEFAULT_MAX_NETWORK_MESSAGE,
        max_connections: int = 64,
        max_sessions: int = 64,
        max_buffered: int = 8 * 1024 * 1024,
        idle_timeout: float = 60.0,
        initialize_timeout: float = 30.0,
    ) -> None:
        self.make_connection = make_connection
        self.path = path
        self.allowed_origins = (
            None if allowed_origins is None else frozenset(allowed_origins)
        )
        self.authenticate = authenticate
        self.max_message = max_message
        self.max_connections = max_connections
        self.max_sessions = max_sessions
        self.max_buffered = max_buffered
        self.idle_timeout = idle_timeout
        self.initialize_timeout = initialize_timeout
        self.links: dict[str, Link] = {}

    async def close(self) -> None:
        """Close every connection."""
        for link in list(self.links.values()):
            await link.close()

    async def __call__(
        self, scope: AsgiScope, receive: AsgiReceive, send: AsgiSend
    ) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await self._websocket(scope, receive, send)
        elif kind == "http":
            try:
                await self._http(scope, receive, send)
            except _Refusal as refusal:
                await _respond(send, refusal.status, refusal.text.encode())

    async def _lifespan(self, receive: AsgiReceive, send: AsgiSend) -> None:
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # ---------------------------------------------------------- the gate

    async def _gate(self, scope: AsgiScope, kind: str) -> dict[str, str]:
        """The checks every request passes; its headers."""
        headers: dict[str, str] = {}
        for name, value in scope.get("headers", ()):
            key = bytes(name).decode("latin-1").lower()
            text = bytes(value).decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        if scope.get("path") != self.path:
            raise _Refusal(404, f"not found: ACP is served at {self.path}")
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            raise _Refusal(403, f"origin not allowed: {origin}")
        if self.authenticate is not None:
            client = scope.get("client")
            head = RequestHead(
                kind,
                str(scope.get("method", "GET")),
                str(scope.get("path")),
                headers,
                (str(client[0]), int(client[1])) if client else None,
                scope,
            )
            allowed = self.authenticate(head)
            if inspect.isawaitable(allowed):
                allowed = await allowed
            if not allowed:
                raise _Refusal(401, "authentication failed")
        return headers

    def _origin_allowed(self, origin: str) -> bool:
        if self.allowed_origins is None:
            return is_loopback_origin(origin)
        return "*" in self.allowed_origins or origin in self.allowed_origins

    def _new_link(self, websocket: AsgiSend | None) -> Link:
        if len(self.links) >= self.max_connections:
            raise _Refusal(
                503, f"too many connections (at most {self.max_connections})"
            )
        link = Link(
            self.make_connection,
            Limits(self.max_message, self.max_buffered, self.idle_timeout),
            websocket,
            lambda gone: self.links.pop(gone.id, None),
        )
        self.links[link.id] = link
        return link

    def _link(self, headers: Mapping[str, str]) -> Link:
        id = headers.get(CONNECTION_ID_HEADER)
        if not id:
            raise _Refusal(400, "missing Acp-Connection-Id")
        link = self.links.get(id)
        if link is None:
            raise _Refusal(404, "unknown Acp-Connection-Id")
        return link

    def _attach(self, link: Link, session: str) -> None:
        if session not in link.sessions:
            if len(link.sessions) >= self.max_sessions:
                raise _Refusal(429, f"too many sessions (at most {self.max_sessions})")
            link.sessions.add(session)

    # ---------------------------------------------------------- WebSocket

    async def _websocket(
        self, scope: AsgiScope, receive: AsgiReceive, send: AsgiSend
    ) -> None:
        event = await receive()
        if event["type"] != "websocket.connect":
            return
        try:
            await self._gate(scope, "websocket")
            link = self._new_link(send)
        except _Refusal as refusal:
            if "websocket.http.response" in scope.get("extensions", {}):
                await _respond(
                    send, refusal.status, refusal.text.encode(), "websocket.http."
                )
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        await send(
            {
                "type": "websocket.accept",
                "headers": [(CONNECTION_ID_HEADER.encode(), link.id.encode())],
            }
        )
        link.handler = asyncio.current_task()
        try:
            while not link.closed:
                event = await receive()
                if event["type"] == "websocket.disconnect":
                    break
                text = event.get("text")
                if not isinstance(text, str):
                    continue  # binary frames are ignored
                data = text.encode()
                if len(data) > self.max_message:
                    await self._too_large(link, data)
                    continue
                await link.deliver(data)
        except asyncio.CancelledError:
            if not link.closed:  # cancelled from outside, not by close()
                raise
        finally:
            await link.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(
                    send({"type": "websocket.close", "code": 1000}), _CLOSE_TIMEOUT
                )

    async def _too_large(self, link: Link, data: bytes) -> None:
        id, request = head_hint(data[:4096])
        error = RpcError(
            PARSE_ERROR, "Parse error", f"message over {self.max_message} bytes"
        )
        wire: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": id if request else None,
            "error": {"code": error.code, "message": error.message, "data": error.data},
        }
        assert link.websocket is not None
        async with link.ws_lock:
            await link.websocket(
                {"type": "websocket.send", "text": dump_message(wire).decode()}
            )

    # ---------------------------------------------------------- HTTP

    async def _http(
        self, scope: AsgiScope, receive: AsgiReceive, send: AsgiSend
    ) -> None:
        headers = await self._gate(scope, "http")
        method = scope.get("method")
        if method == "POST":
            await self._post(headers, receive, send)
        elif method == "GET":
            await self._get(headers, receive, send)
        elif method == "DELETE":
            link = self._link(headers)
            await link.close()
            await _respond(send, 202, b"")
        else:
            raise _Refusal(405, "method not allowed (POST, GET or DELETE)")

    async def _read_body(
        self, headers: Mapping[str, str], receive: AsgiReceive
    ) -> bytes:
        limit = self.max_message
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            raise _Refusal(413, f"message over {limit} bytes")
        parts: list[bytes] = []
        size = 0
        while True:
            event = await receive()
            if event["type"] != "http.request":
                raise _Refusal(400, "the request was cut short")
            body = bytes(event.get("body", b""))
            size += len(body)
            if size > limit:
                raise _Refusal(413, f"message over {limit} bytes")
            parts.append(body)
            if not event.get("more_body", False):
                return b"".join(parts)

    async def _post(
        self, headers: Mapping[str, str], receive: AsgiReceive, send: AsgiSend
    ) -> None:
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise _Refusal(415, "Content-Type must be application/json")
        data = await self._read_body(headers, receive)
        try:
            message = json.loads(data)
        except (ValueError, RecursionError):
            raise _Refusal(400, "the body is not JSON") from None
        if isinstance(message, list):
            raise _Refusal(501, "JSON-RPC batches are not supported")
        if not isinstance(message, dict):
            raise _Refusal(400, "the body is not a JSON-RPC message")
        wire: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
        method = wire.get("method")
        key = message_key(wire.get("id"))
        if method == "initialize" and key is not None:
            if CONNECTION_ID_HEADER in headers:
                raise _Refusal(400, "initialize on an existing connection")
            await self._initialize(key, data, send)
            return
        link = self._link(headers)
        given = headers.get(SESSION_ID_HEADER)
        if isinstance(method, str):
            named = session_of(wire, "params")
            if given is not None and named is not None and given != named:
                raise _Refusal(400, "Acp-Session-Id does not match params.sessionId")
            if method in _SESSION_HEADER_METHODS and given is None:
                raise _Refusal(400, f"missing Acp-Session-Id (needed by {method})")
            session = given or named
            if session is not None:
                if method in _ATTACHING_METHODS:
                    self._attach(link, session)
                elif session not in link.sessions:
                    raise _Refusal(404, "unknown Acp-Session-Id")
            if method == "session/new" and len(link.sessions) >= self.max_sessions:
                raise _Refusal(429, f"too many sessions (at most {self.max_sessions})")
            if key is not None:
                link.routes[key] = None if method in _CONNECTION_ANSWERS else session
        elif key is not None:  # an answer to the agent's request
            about = link.agent_requests.get(key)
            if given is not None and about is not None and given != about:
                raise _Refusal(
                    400, "Acp-Session-Id does not match the request answered"
                )
            link.agent_requests.pop(key, None)
        await link.deliver(data)
        await _respond(send, 202, b"")

    async def _initialize(self, key: Key, data: bytes, send: AsgiSend) -> None:
        link = self._new_link(None)
        try:
            answer = await link.ask(key, data, self.initialize_timeout)
        except asyncio.TimeoutError:
            await link.close()
            raise _Refusal(504, "the agent did not answer initialize in time") from None
        except ConnectionError:
            await link.close()
            raise _Refusal(500, "the agent closed the connection") from None
        await _respond(
            send,
            200,
            answer,
            headers=[
                (b"content-type", b"application/json"),
                (CONNECTION_ID_HEADER.encode(), link.id.encode()),
            ],
        )

    async def _get(
        self, headers: Mapping[str, str], receive: AsgiReceive, send: AsgiSend
    ) -> None:
        if "text/event-stream" not in headers.get("accept", "").lower():
            raise _Refusal(406, "Accept must include text/event-stream")
        link = self._link(headers)
        session = headers.get(SESSION_ID_HEADER)
        if session is not None:
            self._attach(link, session)
        stream = link.streams.get(session)
        if stream is None:
            stream = link.streams[session] = Stream()
        if stream.attached:
            raise _Refusal(409, "this stream already has a reader")
        stream.attached = True
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream"),
                        (b"cache-control", b"no-cache"),
                    ],
                }
            )
            gone = asyncio.get_running_loop().create_task(_disconnected(receive))
            try:
                await self._stream(link, stream, send, gone)
            finally:
                gone.cancel()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            stream.attached = False
            link.last_active = asyncio.get_running_loop().time()

    async def _stream(
        self, link: Link, stream: Stream, send: AsgiSend, gone: asyncio.Task[None]
    ) -> None:
        while not gone.done():
            data = link.take(stream)
            if data is not None:
                await send(
                    {
                        "type": "http.response.body",
                        "body": b"data: " + data + b"\n\n",
                        "more_body": True,
                    }
                )
                continue
            if stream.ended:
                return
            ready = asyncio.ensure_future(stream.ready.wait())
            done, _ = await asyncio.wait(
                {ready, gone}, timeout=_KEEPALIVE, return_when=asyncio.FIRST_COMPLETED
            )
            ready.cancel()
            if not done:
                await send(
                    {"type": "http.response.body", "body": b":\n\n", "more_body": True}
                )


async def _disconnected(receive: AsgiReceive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _respond(
    send: AsgiSend,
    status: int,
    body: bytes,
    prefix: str = "http.",
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    if headers is None:
        headers = [(b"content-type", b"text/plain; charset=utf-8")] if body else []
    await send(
        {"type": prefix + "response.start", "status": status, "headers": headers}
    )
    await send({"type": prefix + "response.body", "body": body})


async def serve(
    app: AcpAsgiApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    ready: Callable[[int], object] | None = None,
) -> None:
    """Serve ``app`` with uvicorn (HTTP/1.1 and WebSocket) on ``host``
    (loopback unless told otherwise) until cancelled; ``ready(port)`` is
    called once it listens (pass ``port=0`` for any free port)."""
    try:  # typed Any: a package vendored without uvicorn stays clean under mypy
        uvicorn: Any = importlib.import_module("uvicorn")
    except ImportError:
        raise ImportError(
            "serving ACP over the network needs an ASGI server: pip install uvicorn "
            "(or run asgi_agent_app(...) under hypercorn)"
        ) from None
    if app.authenticate is None and not _is_loopback_host(host):
        log.warning(
            "serving on %s with no authentication hook: anyone who reaches it can use the agent",
            host,
        )
    config: Any = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        log_level="warning",
        ws_max_size=4 * app.max_message,
        ws="websockets-sansio",
    )
    server: Any = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    try:
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if ready is not None and server.started:
            ready(server.servers[0].sockets[0].getsockname()[1])
        await asyncio.shield(task)
    finally:
        if not task.done():
            server.should_exit = True
            try:
                await asyncio.wait_for(task, 5)
            except (Exception, asyncio.CancelledError):  # pragma: no cover
                task.cancel()


def _is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
