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
endpoint's path (404), the ``Host`` header (421), the ``Origin`` header
(403), the authentication hook (401), the number of connections (503, and
429 for one peer's share); then the message's size (413 over HTTP, a
JSON-RPC -32700 answer over WebSocket), the time its body takes (408), its
form (400, 415, 501 for a batch) and the connection and session ids (400,
404). Memory stays bounded: what a connection's SSE streams hold waits below
``max_buffered`` bytes (the agent's writes wait meanwhile), a stream nobody
reads for ``idle_timeout`` seconds closes its connection, and so does an HTTP
connection with no stream open for that long; when ``max_connections`` are
open, a new one takes the place of the WebSocket idle longest, once it has
been idle for ``ws_idle_timeout``.

:func:`serve` adds what only the server sees, before any request is whole:
at most ``max_sockets`` sockets (the oldest one still sending its request
head makes room for a new one), ``header_timeout`` seconds for a request
head, and a WebSocket whose peer does not read stops being read (its pings
go unanswered meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import importlib
import inspect
import ipaddress
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, TypedDict, cast
from urllib.parse import urlsplit

from ._connection import Connection
from ._jsonrpc import PARSE_ERROR, RpcError, dump_message, load_message, session_of
from ._links import Key, Limits, Link, Stream, message_key
from ._transport import Loaded, Transport, head_hint

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
    allowed_hosts: Collection[str] | None
    """Host names the ``Host`` header may give (any port; a request without
    one passes); ``None``: loopback names (``localhost``, ``*.localhost``,
    ``127.0.0.1``, ``[::1]``) for a request that came to a loopback address,
    any otherwise; ``"*"``: any."""
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
    max_connections_per_peer: int | None
    """Connections one peer may hold (``None``: ``max_connections`` less a
    quarter, 48); a peer is its token (the ``Authorization`` header) when
    there is an ``authenticate`` hook, its address otherwise."""
    max_sessions: int
    """Open sessions per connection (64); ``session/close`` frees one."""
    max_buffered: int
    """Bytes a connection's SSE streams hold for their readers (8 MiB)."""
    idle_timeout: float
    """Seconds before a connection nobody reads is closed (60)."""
    ws_idle_timeout: float | None
    """When ``max_connections`` are open, a new connection closes the
    WebSocket connection idle longest (nothing in flight, no message either
    way) once it has been idle this many seconds (60; ``None``: never)."""
    initialize_timeout: float
    """Seconds the agent gets to answer an HTTP ``initialize`` (30)."""
    body_timeout: float
    """Seconds a request's body may take to arrive whole (60; then 408)."""
    header_timeout: float
    """:func:`serve` only: seconds a socket may take to send a request's
    head, the first or the next on a kept-alive socket (20)."""
    max_sockets: int | None
    """:func:`serve` only: sockets open at once, requests and WebSockets
    (``None``: half the process's file descriptor limit, at most 4096)."""


def bearer_token(token: str) -> Callable[[RequestHead], bool]:
    """An authentication hook: the request must carry
    ``Authorization: Bearer <token>`` (the scheme in any case, as RFC 7235
    says; the token compared in constant time)."""
    expected = token.encode()

    def check(head: RequestHead) -> bool:
        scheme, _, given = head.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(
            given.strip(" ").encode("latin-1", "replace"), expected
        )

    return check


def is_loopback_host(host: str) -> bool:
    """Whether a ``Host`` header names this machine (``localhost``,
    ``*.localhost``, a loopback address; any port)."""
    try:
        name = urlsplit(f"http://{host}").hostname
    except ValueError:
        return False
    return bool(name) and _is_loopback_name(str(name))


def _is_loopback_name(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_loopback_origin(origin: str) -> bool:
    """Whether an ``Origin`` names this machine (``localhost``, ``127.0.0.1``
    ``[::1]``, with any scheme and port)."""
    try:
        host = urlsplit(origin).hostname
    except ValueError:
        return False
    if not host:
        return False
    return _is_loopback_name(host)


class _Refusal(Exception):
    def __init__(self, status: int, text: str, close: bool = False) -> None:
        super().__init__(text)
        self.status = status
        self.text = text
        self.close = close
        """Whether the socket closes after the answer (what is left of the
        request is not read)."""


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
        allowed_hosts: Collection[str] | None = None,
        allowed_origins: Collection[str] | None = None,
        authenticate: Authenticate | None = None,
        max_message: int = DEFAULT_MAX_NETWORK_MESSAGE,
        max_connections: int = 64,
        max_connections_per_peer: int | None = None,
        max_sessions: int = 64,
        max_buffered: int = 8 * 1024 * 1024,
        idle_timeout: float = 60.0,
        ws_idle_timeout: float | None = 60.0,
        initialize_timeout: float = 30.0,
        body_timeout: float = 60.0,
        header_timeout: float = 20.0,
        max_sockets: int | None = None,
    ) -> None:
        self.make_connection = make_connection
        self.path = path
        self.allowed_hosts = (
            None
            if allowed_hosts is None
            else frozenset(host.lower() for host in allowed_hosts)
        )
        self.allowed_origins = (
            None if allowed_origins is None else frozenset(allowed_origins)
        )
        self.authenticate = authenticate
        self.max_message = max_message
        self.max_connections = max_connections
        self.max_connections_per_peer = (
            max_connections - max_connections // 4
            if max_connections_per_peer is None
            else max_connections_per_peer
        )
        self.max_sessions = max_sessions
        self.max_buffered = max_buffered
        self.idle_timeout = idle_timeout
        self.ws_idle_timeout = ws_idle_timeout
        self.initialize_timeout = initialize_timeout
        self.body_timeout = body_timeout
        self.header_timeout = header_timeout
        self.max_sockets = max_sockets
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
                await _respond(
                    send, refusal.status, refusal.text.encode(), close=refusal.close
                )

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
        host = headers.get("host")
        if host is not None and not self._host_allowed(host, scope):
            raise _Refusal(421, f"host not allowed: {host}")
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

    def _host_allowed(self, host: str, scope: AsgiScope) -> bool:
        if self.allowed_hosts is None:
            server = scope.get("server")
            here = str(server[0]) if server else ""
            return not _is_loopback_name(here) or is_loopback_host(host)
        if "*" in self.allowed_hosts:
            return True
        try:
            name = urlsplit(f"http://{host}").hostname
        except ValueError:
            return False
        return name is not None and (
            name in self.allowed_hosts or f"[{name}]" in self.allowed_hosts
        )

    def _origin_allowed(self, origin: str) -> bool:
        if self.allowed_origins is None:
            return is_loopback_origin(origin)
        return "*" in self.allowed_origins or origin in self.allowed_origins

    def _peer(self, scope: AsgiScope, headers: Mapping[str, str]) -> str:
        """Whom a connection counts against: its token when requests are
        authenticated, its address otherwise."""
        if self.authenticate is not None and "authorization" in headers:
            token = headers["authorization"].encode("latin-1", "replace")
            return "token " + hashlib.sha256(token).hexdigest()
        client = scope.get("client")
        return f"address {client[0] if client else ''}"

    async def _new_link(self, websocket: AsgiSend | None, peer: str) -> Link:
        share = self.max_connections_per_peer
        mine = [link for link in self.links.values() if link.peer == peer]
        if share < self.max_connections and len(mine) >= share:
            if not await self._make_room(mine):
                raise _Refusal(
                    429, f"too many connections from one peer (at most {share})"
                )
        elif len(self.links) >= self.max_connections and not await self._make_room(
            list(self.links.values())
        ):
            raise _Refusal(
                503, f"too many connections (at most {self.max_connections})"
            )
        link = Link(
            self.make_connection,
            Limits(self.max_message, self.max_buffered, self.idle_timeout),
            websocket,
            lambda gone: self.links.pop(gone.id, None),
            peer,
        )
        self.links[link.id] = link
        return link

    async def _make_room(self, links: list[Link]) -> bool:
        """Close the WebSocket connection of ``links`` idle longest, if it has
        been idle for ``ws_idle_timeout``; whether one was closed."""
        if self.ws_idle_timeout is None:
            return False
        now = asyncio.get_running_loop().time()
        idlest: Link | None = None
        longest = self.ws_idle_timeout
        for link in links:
            idle = link.idle_for(now) if link.websocket is not None else None
            if idle is not None and idle >= longest:
                idlest, longest = link, idle
        if idlest is None:
            return False
        log.info(
            "closing connection %s, idle for %.0f s, for a new one", idlest.id, longest
        )
        await idlest.close()
        return True

    def _link(self, headers: Mapping[str, str]) -> Link:
        id = headers.get(CONNECTION_ID_HEADER)
        if not id:
            raise _Refusal(400, "missing Acp-Connection-Id")
        link = self.links.get(id)
        if link is None:
            raise _Refusal(404, "unknown Acp-Connection-Id")
        return link

    def _attach(self, link: Link, session: str) -> bool:
        """Give ``session`` a slot on ``link``; whether it took a new one."""
        if session in link.sessions:
            return False
        if len(link.sessions) >= self.max_sessions:
            raise _Refusal(429, f"too many sessions (at most {self.max_sessions})")
        link.sessions.add(session)
        return True

    # ---------------------------------------------------------- WebSocket

    async def _websocket(
        self, scope: AsgiScope, receive: AsgiReceive, send: AsgiSend
    ) -> None:
        event = await receive()
        if event["type"] != "websocket.connect":
            return
        try:
            headers = await self._gate(scope, "websocket")
            link = await self._new_link(send, self._peer(scope, headers))
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
            await self._post(scope, headers, receive, send)
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
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        while True:
            try:
                event = await asyncio.wait_for(receive(), deadline - loop.time())
            except asyncio.TimeoutError:
                raise _Refusal(
                    408,
                    f"the body did not arrive within {self.body_timeout:g} s",
                    close=True,
                ) from None
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
        self,
        scope: AsgiScope,
        headers: Mapping[str, str],
        receive: AsgiReceive,
        send: AsgiSend,
    ) -> None:
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != "application/json":
            raise _Refusal(415, "Content-Type must be application/json")
        data = await self._read_body(headers, receive)
        try:
            message = load_message(data)  # as the connection reads it
        except ValueError:
            raise _Refusal(400, "the body is not JSON") from None
        if isinstance(message, list):
            raise _Refusal(501, "JSON-RPC batches are not supported")
        if not isinstance(message, dict):
            raise _Refusal(400, "the body is not a JSON-RPC message")
        wire: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
        # Handed on parsed: the connection does not parse it again.
        loaded = Loaded(wire, data)
        method = wire.get("method")
        key = message_key(wire.get("id"))
        if method == "initialize" and key is not None:
            if CONNECTION_ID_HEADER in headers:
                raise _Refusal(400, "initialize on an existing connection")
            await self._initialize(key, loaded, send, self._peer(scope, headers))
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
            attached = False
            if session is not None:
                if method in _ATTACHING_METHODS:
                    attached = self._attach(link, session)
                elif session not in link.sessions:
                    raise _Refusal(404, "unknown Acp-Session-Id")
            if method == "session/new" and len(link.sessions) >= self.max_sessions:
                raise _Refusal(429, f"too many sessions (at most {self.max_sessions})")
            if key is not None:
                link.routes[key] = None if method in _CONNECTION_ANSWERS else session
                if session is not None and method == "session/close":
                    link.closing[key] = session
                elif session is not None and attached:
                    link.attaching[key] = session
        elif key is not None:  # an answer to the agent's request
            about = link.agent_requests.get(key)
            if given is not None and about is not None and given != about:
                raise _Refusal(
                    400, "Acp-Session-Id does not match the request answered"
                )
            link.agent_requests.pop(key, None)
        await link.deliver(loaded)
        await _respond(send, 202, b"")

    async def _initialize(
        self, key: Key, data: Loaded, send: AsgiSend, peer: str
    ) -> None:
        link = await self._new_link(None, peer)
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
            if stream.ended and not stream.items and session is not None:
                link.sessions.discard(session)  # closed: its slot stays free
                link.streams.pop(session, None)

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
    close: bool = False,
) -> None:
    if headers is None:
        headers = [(b"content-type", b"text/plain; charset=utf-8")] if body else []
    if close:
        headers = [*headers, (b"connection", b"close")]
    await send(
        {"type": prefix + "response.start", "status": status, "headers": headers}
    )
    await send({"type": prefix + "response.body", "body": body})


# ------------------------------------------------------------------ sockets


def default_max_sockets() -> int:
    """Half the process's file descriptor limit (``RLIMIT_NOFILE``), at
    most 4096 (512 where the limit cannot be read)."""
    try:
        resource: Any = importlib.import_module("resource")
        soft = int(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    except (ImportError, OSError, ValueError):  # pragma: no cover - Windows
        return 512
    if soft < 0:  # RLIM_INFINITY
        return 4096
    return max(1, min(4096, soft // 2))


def _raw_answer(status: int, reason: str, text: str) -> bytes:
    """A whole HTTP/1.1 answer that closes the socket (for a socket whose
    request never came whole, so no ASGI answer can be sent)."""
    body = text.encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\n"
        "content-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


class _Sockets:
    """The sockets :func:`serve` holds open, oldest first: at most ``limit``
    (a new one closes the oldest that is still sending a request head, or
    is refused when none is), each given ``header_timeout`` seconds for a
    request head."""

    def __init__(self, limit: int, header_timeout: float) -> None:
        self.limit = limit
        self.header_timeout = header_timeout
        self.open: dict[asyncio.BaseTransport, _HttpGuard | _WsGuard] = {}

    def admit(self, guard: _HttpGuard) -> bool:
        if len(self.open) >= self.limit:
            for other in self.open.values():
                if isinstance(other, _HttpGuard) and other.waiting_for_head():
                    log.info(
                        "closing a socket with no request head: %d open", self.limit
                    )
                    other.drop(503, "Service Unavailable", "too many sockets open")
                    break
            else:
                return False
        assert guard.transport is not None
        self.open[guard.transport] = guard
        return True

    def forget(self, transport: asyncio.BaseTransport | None) -> None:
        if transport is not None:
            self.open.pop(transport, None)


class _HttpGuard(asyncio.Protocol):
    """uvicorn's HTTP protocol behind the socket limits of :class:`_Sockets`
    (uvicorn times out nothing before a request head is whole)."""

    def __init__(self, inner: Any, sockets: _Sockets) -> None:
        self.inner = inner
        self.sockets = sockets
        self.transport: asyncio.Transport | None = None
        self.admitted = False
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        if not self.sockets.admit(self):
            log.info("refusing a socket: %d open", self.sockets.limit)
            self.transport.write(
                _raw_answer(503, "Service Unavailable", "too many sockets open")
            )
            self.transport.close()
            return
        self.admitted = True
        self.inner.connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        if self.admitted:
            self.inner.data_received(data)
            self._watch()

    def eof_received(self) -> bool | None:
        keep_open: bool | None = self.inner.eof_received() if self.admitted else None
        return keep_open

    def connection_lost(self, exc: Exception | None) -> None:
        self._unwatch()
        if self.admitted:
            self.sockets.forget(self.transport)
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.admitted:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.admitted:
            self.inner.resume_writing()

    def waiting_for_head(self) -> bool:
        """Whether the socket is between requests (none yet, or the last
        one answered) and still ours (not upgraded to a WebSocket)."""
        transport = self.transport
        if not self.admitted or transport is None or transport.is_closing():
            return False
        if transport.get_protocol() is not self:
            return False
        cycle = getattr(self.inner, "cycle", None)
        return cycle is None or bool(getattr(cycle, "response_complete", True))

    def drop(self, status: int, reason: str, text: str) -> None:
        self._unwatch()
        self.sockets.forget(self.transport)
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(_raw_answer(status, reason, text))
            self.transport.close()

    def _watch(self) -> None:
        if not self.waiting_for_head():
            self._unwatch()
        elif self.timer is None:
            loop = asyncio.get_running_loop()
            self.timer = loop.call_later(self.sockets.header_timeout, self._expire)

    def _unwatch(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expire(self) -> None:
        self.timer = None
        if self.waiting_for_head():
            timeout = self.sockets.header_timeout
            log.info("closing a socket that sent no request head in %g s", timeout)
            self.drop(408, "Request Timeout", f"no request head within {timeout:g} s")


class _WsGuard(asyncio.Protocol):
    """uvicorn's WebSocket protocol (``websockets-sansio``), mended: a head
    the ``websockets`` parser refuses (a line over 8 KiB, over 128 header
    lines) gets its answer (431) instead of silence, and a peer that does
    not read stops being read (uvicorn answers each ping at once, whatever
    waits to be written)."""

    def __init__(self, inner: Any, sockets: _Sockets) -> None:
        self.inner = inner
        self.sockets = sockets
        self.transport: asyncio.Transport | None = None
        self.holding = False
        """True while reading is paused because the peer does not read."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self.sockets.open[transport] = self  # the HTTP socket it was
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        transport = self.transport
        assert transport is not None
        self.inner.data_received(data)
        conn = self.inner.conn
        refused: BaseException | None = conn.handshake_exc
        if not self.inner.handshake_initiated and refused is not None:
            answer = b"".join(conn.data_to_send())
            if not answer.startswith(b"HTTP/"):  # websockets < 17 answers nothing
                answer = _raw_answer(*_refused_head(refused))
            if not transport.is_closing():
                transport.write(answer)
            transport.close()
            return
        high = transport.get_write_buffer_limits()[1]
        if (
            transport.get_write_buffer_size() > high
            and transport.is_reading()
            and not transport.is_closing()
        ):
            self.holding = True
            transport.pause_reading()

    def eof_received(self) -> bool | None:
        keep_open: bool | None = self.inner.eof_received()
        return keep_open

    def connection_lost(self, exc: Exception | None) -> None:
        self.sockets.forget(self.transport)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()
        transport = self.transport
        if self.holding and transport is not None:
            self.holding = False
            if not self.inner.read_paused and not transport.is_closing():
                transport.resume_reading()


def _refused_head(error: BaseException) -> tuple[int, str, str]:
    """The answer to a WebSocket upgrade head the ``websockets`` parser
    refused: 431 for a line or header count over its limits, else 400."""
    cause = error.__cause__ or error
    if type(cause).__name__ in (
        "SecurityError",
        "HeaderLineTooLong",
        "TooManyHeaders",
        "RequestLineTooLong",
    ):
        return 431, "Request Header Fields Too Large", f"{cause}"
    return 400, "Bad Request", "not a valid WebSocket upgrade"


def _guarded(protocol: Any, sockets: _Sockets, guard: Any) -> Callable[..., Any]:
    def make(**options: Any) -> asyncio.Protocol:
        return cast(asyncio.Protocol, guard(protocol(**options), sockets))

    return make


async def serve(
    app: AcpAsgiApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    ready: Callable[[int], object] | None = None,
) -> None:
    """Serve ``app`` with uvicorn (HTTP/1.1 and WebSocket) on ``host``
    (loopback unless told otherwise) until cancelled; ``ready(port)`` is
    called once it listens (pass ``port=0`` for any free port). The app's
    ``max_sockets`` and ``header_timeout`` hold before any request is whole
    (see :class:`ServeOptions`)."""
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
    sockets = _Sockets(
        app.max_sockets if app.max_sockets is not None else default_max_sockets(),
        app.header_timeout,
    )
    h11: Any = importlib.import_module("uvicorn.protocols.http.h11_impl")
    ws: Any = importlib.import_module(
        "uvicorn.protocols.websockets.websockets_sansio_impl"
    )
    config: Any = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        log_level="warning",
        ws_max_size=4 * app.max_message,
        http=_guarded(h11.H11Protocol, sockets, _HttpGuard),
        ws=_guarded(ws.WebSocketsSansIOProtocol, sockets, _WsGuard),
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
