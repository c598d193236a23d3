"""MCP over ACP (``mcp/message``): MCP servers that one end of an ACP
connection provides and the other calls, through the ACP connection itself.

Copied into the packages whose schema has ``mcp/message`` (the unstable
ones). The schema's binding:

- The **provider** (a client, or a proxy in front of the agent) declares a
  server in ``session/new``'s ``mcpServers`` as the ``acp`` variant
  (``McpServerAcp``: a ``name`` and a ``serverId`` it generates, never
  reused on the connection).
- The **consumer** (the agent) sends each inner MCP request as an
  ``mcp/message`` request (``serverId``, a ``requestId`` it generates, the
  inner ``method`` and ``params``). The successful outer answer carries
  exactly one inner outcome: ``{"result": ...}`` (any JSON, null included)
  or ``{"error": {"code", "message", "data"?}}`` (an inner MCP error). Outer
  ACP errors are kept for the binding's own failures: an unknown
  ``serverId`` (-33001), a ``requestId`` already active on that server
  (-32602), a backend that failed without an MCP outcome (-33002), a
  cancelled request (-32800). The codes are those of the TypeScript SDK.
- While a request is active the provider may send ``mcp/message``
  notifications for it (``serverId``, ``requestId``, the inner
  notification's ``method`` and ``params``): progress, log messages,
  subscription updates. None is sent after the answer.

Provider side: :class:`McpProvider` (``conn.mcp_provider`` of a client's
connection) maps server ids to handlers and answers ``mcp/message`` for
them. A handler is an async callable given an :class:`McpContext` that
returns the inner result or raises :class:`McpCallError` for an inner
error: :class:`McpTools` (a small tools server written in Python) or
:class:`McpStdioServer` (a real MCP server process over stdio, its
newline-delimited JSON-RPC bridged to ``mcp/message``).

Consumer side: :class:`McpSession` (``conn.mcp(server_id)`` of an agent's
connection) sends inner requests to one declared server and returns their
results, raising :class:`McpCallError` for an inner error (an outer error
is the connection's ``RequestError``); the notifications of a request go to
its ``on_notification`` callback.

Standard library only; the connection is reached through
``conn.answerers`` and ``conn.listeners`` (see ``_connection``), so this
module imports nothing of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from ._jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND, RequestError
from ._runtime import UNSET

__all__ = [
    "BACKEND_FAILED",
    "MCP_MESSAGE",
    "SERVER_UNAVAILABLE",
    "CallsMcp",
    "McpCallError",
    "McpContext",
    "McpHandler",
    "McpProvider",
    "McpServerRegistration",
    "McpSession",
    "McpStdioServer",
    "McpTools",
    "ProvidesMcp",
    "acp_server_ids",
    "mcp_provider",
    "mcp_session",
]

MCP_MESSAGE = "mcp/message"
SERVER_UNAVAILABLE = -33001
"""Outer error: no server of that ``serverId`` on this connection."""
BACKEND_FAILED = -33002
"""Outer error: the server failed without an MCP outcome."""

MCP_PROTOCOL_VERSION = "2025-06-18"
"""The MCP revision :class:`McpTools` and :class:`McpStdioServer` speak."""

log = logging.getLogger(__name__.rpartition(".")[0] + ".connection")

T = TypeVar("T")
NotificationCallback = Callable[[str, "dict[str, Any] | None"], Any]
"""Receives an inner notification (its method and params) of a request; may
be a coroutine function."""


class McpConnection(Protocol):
    """What this module needs of a connection (``_connection.Connection``)."""

    answerers: dict[str, Callable[[Any], Awaitable[Any]]]
    listeners: dict[str, Callable[[Any], Awaitable[None]]]

    async def request(self, method: str, params: Any = None) -> Any: ...

    async def notify(self, method: str, params: Any = None) -> None: ...


class McpCallError(Exception):
    """An inner MCP error: a handler raises it to answer with the ``error``
    carrier, and :meth:`McpSession.request` raises it when the server
    answered with one. Never an ACP error (that is ``RequestError``)."""

    def __init__(self, code: int, message: str, data: Any = UNSET) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data
        self.error: dict[str, Any] = {"code": code, "message": message}
        """The inner error object as sent (unknown members kept)."""
        if data is not UNSET:
            self.error["data"] = data

    def __str__(self) -> str:
        return f"{self.message} ({self.code})"

    @classmethod
    def of(cls, error: Mapping[str, Any]) -> McpCallError:
        """From an inner error object, keeping its other members."""
        made = cls(int(error["code"]), str(error["message"]), error.get("data", UNSET))
        made.error = dict(error)
        return made


def _field(params: Any, attribute: str, key: str) -> Any:
    """A member of ``mcp/message`` params: a decoded class or wire JSON."""
    if isinstance(params, Mapping):
        return cast("Mapping[str, Any]", params).get(key)
    value = getattr(params, attribute, None)
    return None if value is UNSET else value


@dataclass
class McpContext:
    """One inner MCP request, as a provider's handler gets it."""

    server_id: str
    request_id: str
    method: str
    params: dict[str, Any] | None
    """The inner params (None: none)."""
    meta: dict[str, Any] | None = None
    """The outer envelope's ``_meta``."""
    _send: Callable[[str, dict[str, Any] | None], Awaitable[None]] | None = field(
        default=None, repr=False
    )
    answered: bool = field(default=False, repr=False)
    """Set once the request has been answered."""

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send an inner notification for this request (an ``mcp/message``
        notification); dropped once the request has been answered."""
        if self.answered or self._send is None:
            return
        await self._send(method, params)


McpHandler = Callable[[McpContext], Awaitable[Any]]
"""A server: given a request, its inner result (raise :class:`McpCallError`
for an inner error)."""


@dataclass(frozen=True)
class McpServerRegistration:
    """A server a :class:`McpProvider` serves."""

    name: str
    server_id: str

    def declaration(self, cls: Callable[..., T]) -> T:
        """The server's ``mcpServers`` entry, as the package's class of the
        ``acp`` variant of ``McpServer`` (``AcpMcpServer``)."""
        return cls(name=self.name, server_id=self.server_id)

    @property
    def wire(self) -> dict[str, Any]:
        """The same entry as JSON."""
        return {"type": "acp", "name": self.name, "serverId": self.server_id}


class McpProvider:
    """The MCP servers one connection provides (the client's end, or a
    proxy's end towards the agent), answering its ``mcp/message`` requests
    when the connection's handler does not answer them itself."""

    def __init__(self, conn: McpConnection) -> None:
        self._conn = conn
        self._servers: dict[str, tuple[str, McpHandler]] = {}
        self._used: set[str] = set()
        self._active: set[tuple[str, str]] = set()
        conn.answerers[MCP_MESSAGE] = self.answer

    def add(
        self, name: str, handler: McpHandler, *, server_id: str | None = None
    ) -> McpServerRegistration:
        """Serve ``handler`` as the server ``name``; its ``serverId`` is new
        (``server_id`` if given: a ValueError when that id was ever used on
        this connection). Declare it with the registration's
        :meth:`~McpServerRegistration.declaration` in ``session/new``."""
        if server_id is None:
            server_id = f"mcp-{uuid.uuid4().hex}"
        if server_id in self._used:
            raise ValueError(
                f"the MCP server id {server_id!r} was used already on this connection"
            )
        self._used.add(server_id)
        self._servers[server_id] = (name, handler)
        return McpServerRegistration(name, server_id)

    def remove(self, server_id: str) -> None:
        """Stop serving ``server_id``: its requests then answer -33001 (the id
        is never given again)."""
        self._servers.pop(server_id, None)

    async def aclose(self) -> None:
        """Stop serving every server, and close those that can be closed (an
        :class:`McpStdioServer` ends its process)."""
        handlers = [handler for _, handler in self._servers.values()]
        self._servers.clear()
        for handler in handlers:
            close = getattr(handler, "aclose", None)
            if close is not None:
                await close()

    @property
    def servers(self) -> dict[str, str]:
        """Server id -> name, of the servers served now."""
        return {sid: name for sid, (name, _) in self._servers.items()}

    async def answer(self, params: Any) -> dict[str, Any]:
        """The answer to one ``mcp/message`` request (its params decoded or
        as JSON): the inner outcome, or an outer ``RequestError``."""
        server_id = _field(params, "server_id", "serverId")
        request_id = _field(params, "request_id", "requestId")
        method = _field(params, "method", "method")
        if (
            not isinstance(server_id, str)
            or not isinstance(request_id, str)
            or not isinstance(method, str)
        ):
            raise RequestError(
                INVALID_PARAMS,
                "Invalid params",
                "serverId, requestId and method are strings",
            )
        served = self._servers.get(server_id)
        if served is None:
            raise RequestError(
                SERVER_UNAVAILABLE, "MCP server unavailable", {"serverId": server_id}
            )
        key = (server_id, request_id)
        if key in self._active:
            raise RequestError(
                INVALID_PARAMS,
                "duplicate active MCP request id",
                {"serverId": server_id, "requestId": request_id},
            )
        inner = _field(params, "params", "params")
        meta = _field(params, "meta", "_meta")

        async def send(inner_method: str, inner_params: dict[str, Any] | None) -> None:
            wire: dict[str, Any] = {
                "serverId": server_id,
                "requestId": request_id,
                "method": inner_method,
            }
            if inner_params is not None:
                wire["params"] = inner_params
            await self._conn.notify(MCP_MESSAGE, wire)

        context = McpContext(
            server_id,
            request_id,
            method,
            cast("dict[str, Any]", inner) if isinstance(inner, dict) else None,
            cast("dict[str, Any]", meta) if isinstance(meta, dict) else None,
            send,
        )
        self._active.add(key)
        try:
            result = await served[1](context)
        except McpCallError as failure:
            return {"error": failure.error}
        except (RequestError, asyncio.CancelledError):
            raise
        except Exception as failure:
            log.exception("the MCP server %r failed on %s", served[0], method)
            raise RequestError(
                BACKEND_FAILED, "MCP server failed", str(failure)
            ) from failure
        finally:
            context.answered = True
            self._active.discard(key)
        return {"result": result}


def mcp_provider(conn: McpConnection) -> McpProvider:
    """The connection's provider (made on first use)."""
    answerer = conn.answerers.get(MCP_MESSAGE)
    provider = getattr(answerer, "__self__", None)
    if isinstance(provider, McpProvider):
        return provider
    return McpProvider(conn)


# ---------------------------------------------------------------- consumer


class _Consumers:
    """The active requests of a connection's :class:`McpSession`\\ s, by
    (server id, request id), for the notifications of each."""

    def __init__(self, conn: McpConnection) -> None:
        self.active: dict[tuple[str, str], NotificationCallback | None] = {}
        self.ids = itertools.count(1)
        self.prefix = uuid.uuid4().hex[:12]
        conn.listeners[MCP_MESSAGE] = self.notified

    async def notified(self, params: Any) -> None:
        key = (
            _field(params, "server_id", "serverId"),
            _field(params, "request_id", "requestId"),
        )
        method = _field(params, "method", "method")
        inner = _field(params, "params", "params")
        if key not in self.active or not isinstance(method, str):
            log.debug(
                "dropped an mcp/message notification for no active request: %r", key
            )
            return
        callback = self.active[key]
        if callback is None:
            return
        outcome = callback(
            method, cast("dict[str, Any]", inner) if isinstance(inner, dict) else None
        )
        if asyncio.iscoroutine(outcome):
            await outcome


def _consumers(conn: McpConnection) -> _Consumers:
    listener = conn.listeners.get(MCP_MESSAGE)
    consumers = getattr(listener, "__self__", None)
    return consumers if isinstance(consumers, _Consumers) else _Consumers(conn)


class McpSession:
    """Calls one MCP server the peer declared (``type: "acp"``) over this
    connection. ``meta`` goes into every request's inner ``params._meta``
    (what the caller's params set is kept)."""

    def __init__(
        self,
        conn: McpConnection,
        server_id: str,
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.conn = conn
        self.server_id = server_id
        self.meta = dict(meta or {})
        self._consumers = _consumers(conn)
        self.server_info: dict[str, Any] | None = None
        """The ``initialize`` result, once :meth:`initialize` has run."""

    def new_request_id(self) -> str:
        """A request id never used on this connection."""
        return f"{self._consumers.prefix}-{next(self._consumers.ids)}"

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        on_notification: NotificationCallback | None = None,
        request_id: str | None = None,
    ) -> Any:
        """Send the inner request ``method`` and return its inner result;
        raises :class:`McpCallError` when the server answers with an inner
        error, ``RequestError`` for an outer (ACP) one. The request's
        notifications go to ``on_notification`` (which also asks the
        server for progress: ``params._meta.progressToken`` is the request
        id unless the params name one)."""
        request_id = request_id or self.new_request_id()
        inner: dict[str, Any] | None = dict(params) if params is not None else None
        meta = dict(self.meta)
        if on_notification is not None:
            meta["progressToken"] = request_id
        if meta:
            inner = inner if inner is not None else {}
            given = inner.get("_meta")
            inner["_meta"] = {
                **meta,
                **(cast("dict[str, Any]", given) if isinstance(given, dict) else {}),
            }
        wire: dict[str, Any] = {
            "serverId": self.server_id,
            "requestId": request_id,
            "method": method,
        }
        if inner is not None:
            wire["params"] = inner
        key = (self.server_id, request_id)
        active = self._consumers.active
        if key in active:
            raise ValueError(f"the MCP request id {request_id!r} is active already")
        active[key] = on_notification
        try:
            answer = await self.conn.request(MCP_MESSAGE, wire)
        finally:
            del active[key]
        if isinstance(answer, dict):
            carrier = cast("dict[str, Any]", answer)
            if "result" in carrier:
                return carrier["result"]
            error = carrier.get("error")
            if isinstance(error, dict):
                inner = cast("dict[str, Any]", error)
                if isinstance(inner.get("code"), int) and isinstance(
                    inner.get("message"), str
                ):
                    raise McpCallError.of(inner)
        raise RequestError(
            BACKEND_FAILED, "invalid mcp/message response carrier", answer
        )

    async def initialize(
        self,
        *,
        client_info: Mapping[str, Any] | None = None,
        protocol_version: str = MCP_PROTOCOL_VERSION,
    ) -> dict[str, Any]:
        """The inner ``initialize`` (the server's info and capabilities)."""
        result = await self.request(
            "initialize",
            {
                "protocolVersion": protocol_version,
                "capabilities": {},
                "clientInfo": dict(client_info or {"name": "acpgen", "version": "0"}),
            },
        )
        self.server_info = (
            cast("dict[str, Any]", result) if isinstance(result, dict) else {}
        )
        return self.server_info

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools (``tools/list``, every page)."""
        tools: list[dict[str, Any]] = []
        cursor: Any = None
        while True:
            result = await self.request(
                "tools/list", {"cursor": cursor} if cursor is not None else None
            )
            page = cast("dict[str, Any]", result) if isinstance(result, dict) else {}
            tools.extend(cast("list[dict[str, Any]]", page.get("tools") or []))
            cursor = page.get("nextCursor")
            if not cursor:
                return tools

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        on_notification: NotificationCallback | None = None,
    ) -> dict[str, Any]:
        """``tools/call``: the tool's result (``content``, ``isError``...)."""
        result = await self.request(
            "tools/call",
            {"name": name, "arguments": dict(arguments or {})},
            on_notification=on_notification,
        )
        return cast("dict[str, Any]", result) if isinstance(result, dict) else {}


def mcp_session(
    conn: McpConnection, server_id: str, *, meta: Mapping[str, Any] | None = None
) -> McpSession:
    """An :class:`McpSession` for ``server_id`` on ``conn``."""
    return McpSession(conn, server_id, meta=meta)


def acp_server_ids(servers: Iterable[Any]) -> dict[str, str]:
    """Server id -> name of the ``acp`` entries of ``mcpServers`` (decoded
    or as JSON), the servers the peer provides over this connection."""
    found: dict[str, str] = {}
    for server in servers:
        if isinstance(server, Mapping):
            entry = cast("Mapping[str, Any]", server)
            kind, sid, name = (
                entry.get("type"),
                entry.get("serverId"),
                entry.get("name"),
            )
        else:
            kind, sid, name = (
                getattr(server, "type", None),
                getattr(server, "server_id", None),
                getattr(server, "name", ""),
            )
        if kind == "acp" and isinstance(sid, str):
            found[sid] = name if isinstance(name, str) else ""
    return found


class ProvidesMcp:
    """What a client's connection gains (the package's
    ``ClientSideConnection`` derives from it): :attr:`mcp_provider`."""

    @property
    def mcp_provider(self) -> McpProvider:
        """The MCP servers this end provides over ``mcp/message`` (MCP over
        ACP): ``add(name, handler)`` serves a handler (an :class:`McpTools`,
        an :class:`McpStdioServer`) and returns its registration, whose
        ``declaration(AcpMcpServer)`` goes in ``session/new``'s
        ``mcp_servers``. It answers ``mcp/message`` when the handler has no
        ``mcp_message`` of its own."""
        return mcp_provider(cast("McpConnection", self))


class CallsMcp:
    """What an agent's connection gains (the package's
    ``AgentSideConnection`` derives from it): :meth:`mcp`."""

    def mcp(
        self, server_id: str, *, meta: Mapping[str, Any] | None = None
    ) -> McpSession:
        """Call the MCP server ``server_id`` the client declared (an ``acp``
        entry of ``mcp_servers``) over ``mcp/message``; ``meta`` goes in
        every inner request's ``params._meta``. An inner MCP error raises
        :class:`McpCallError`, an outer ACP one ``RequestError``."""
        return McpSession(cast("McpConnection", self), server_id, meta=meta)


# ---------------------------------------------------------------- servers

ToolFunction = Callable[[dict[str, Any], McpContext], Awaitable[Any]]
"""A tool of :class:`McpTools`: given its arguments and the request, a
``str`` (one text block), a list of content blocks or a whole result."""


class McpTools:
    """A small MCP server in Python answering ``initialize``, ``ping``,
    ``tools/list`` and ``tools/call``: a :data:`McpHandler`.

    >>> tools = McpTools("calc")
    >>> @tools.tool("add", "Adds a and b", {"type": "object"})
    ... async def add(arguments, context):
    ...     return str(arguments["a"] + arguments["b"])
    """

    def __init__(self, name: str, version: str = "0") -> None:
        self.info = {"name": name, "version": version}
        self._tools: dict[str, tuple[dict[str, Any], ToolFunction]] = {}

    def tool(
        self,
        name: str,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
    ) -> Callable[[ToolFunction], ToolFunction]:
        """Register the decorated coroutine function as the tool ``name``."""

        def register(function: ToolFunction) -> ToolFunction:
            entry: dict[str, Any] = {
                "name": name,
                "inputSchema": dict(input_schema or {"type": "object"}),
            }
            if description:
                entry["description"] = description
            self._tools[name] = (entry, function)
            return function

        return register

    async def __call__(self, context: McpContext) -> Any:
        params = context.params or {}
        if context.method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if isinstance(asked, str) else MCP_PROTOCOL_VERSION
            return {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": dict(self.info),
            }
        if context.method == "ping":
            return {}
        if context.method == "tools/list":
            return {"tools": [entry for entry, _ in self._tools.values()]}
        if context.method == "tools/call":
            name = params.get("name")
            tool = self._tools.get(name) if isinstance(name, str) else None
            if tool is None:
                raise McpCallError(INVALID_PARAMS, f"Unknown tool: {name}")
            arguments = params.get("arguments")
            given = (
                cast("dict[str, Any]", arguments) if isinstance(arguments, dict) else {}
            )
            out = await tool[1](given, context)
            if isinstance(out, str):
                return {"content": [{"type": "text", "text": out}], "isError": False}
            if isinstance(out, list):
                return {"content": list(cast("Iterable[Any]", out)), "isError": False}
            return out
        raise McpCallError(
            METHOD_NOT_FOUND, "Method not found", {"method": context.method}
        )


class McpStdioServer:
    """A real MCP server process over stdio (newline-delimited JSON-RPC), as
    a :data:`McpHandler`. Started on the first request (or
    :meth:`start`), initialized once by this end (the inner ``initialize``
    of a consumer is answered with the process's answer: over ACP the
    consumer cannot send ``notifications/initialized``), and ended by
    :meth:`aclose`.

    Each inner request gets an id of the process's own; the process's
    notifications reach the request they belong to: a
    ``notifications/progress`` by its ``progressToken``, any other one the
    only active request (dropped when none or several are active). Requests
    of the process answer ``{}`` to ``ping`` and -32601 otherwise."""

    def __init__(
        self,
        command: str,
        *args: str,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        client_info: Mapping[str, Any] | None = None,
        protocol_version: str = MCP_PROTOCOL_VERSION,
    ) -> None:
        self.command = command
        self.args = args
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.client_info = dict(client_info or {"name": "acpgen", "version": "0"})
        self.protocol_version = protocol_version
        self.process: asyncio.subprocess.Process | None = None
        self.initialized: dict[str, Any] | None = None
        """The process's answer to ``initialize``."""
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._contexts: dict[int, McpContext] = {}
        self._starting: asyncio.Task[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()

    async def __aenter__(self) -> McpStdioServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Start the process and initialize it (once)."""
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        await asyncio.shield(self._starting)

    async def _start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            self.command,
            *self.args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=self.env,
            cwd=self.cwd,
            limit=64 * 1024 * 1024,
        )
        self._reader = asyncio.ensure_future(self._read())
        answer = await self._call(
            "initialize",
            {
                "protocolVersion": self.protocol_version,
                "capabilities": {},
                "clientInfo": self.client_info,
            },
        )
        if "error" in answer:
            raise McpCallError.of(answer["error"])
        self.initialized = answer.get("result")
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def _send(self, message: dict[str, Any]) -> None:
        process = self.process
        if process is None or process.stdin is None:
            raise ConnectionError("the MCP server is not running")
        async with self._write_lock:
            process.stdin.write(
                json.dumps(message, separators=(",", ":")).encode() + b"\n"
            )
            await process.stdin.drain()

    async def _call(
        self, method: str, params: Any, context: McpContext | None = None
    ) -> dict[str, Any]:
        id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = (
            asyncio.get_running_loop().create_future()
        )
        self._pending[id] = future
        if context is not None:
            self._contexts[id] = context
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            if self._reader is not None and self._reader.done():
                raise ConnectionError("the MCP server exited")
            await self._send(message)
            return await future
        except asyncio.CancelledError:
            with contextlib.suppress(ConnectionError, OSError):
                await self._send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/cancelled",
                        "params": {"requestId": id},
                    }
                )
            raise
        finally:
            self._pending.pop(id, None)
            self._contexts.pop(id, None)

    async def _read(self) -> None:
        process = self.process
        assert process is not None and process.stdout is not None
        try:
            while True:
                try:
                    line = await process.stdout.readline()
                except ValueError:  # over the limit: asyncio dropped what it read
                    log.warning("the MCP server %s wrote a line too long", self.command)
                    continue
                if not line:
                    break
                try:
                    message = json.loads(line)
                except (ValueError, RecursionError):
                    log.warning(
                        "the MCP server %s wrote a line that is not JSON", self.command
                    )
                    continue
                if not isinstance(message, dict):
                    continue
                try:
                    await self._received(cast("dict[str, Any]", message))
                except (ConnectionError, OSError):
                    raise
                except Exception:  # what it sent, not this reader, is at fault
                    log.exception(
                        "the MCP server %s sent a message that cannot be handled",
                        self.command,
                    )
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the MCP server exited"))

    async def _received(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if not isinstance(method, str):
            id: object = message.get("id")
            if not isinstance(id, int) or isinstance(id, bool):
                return  # no id this end gave (its ids are integers)
            future = self._pending.get(id)
            if future is not None and not future.done():
                future.set_result(message)
            return
        if "id" in message:  # a request of the process
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
            if method == "ping":
                answer["result"] = {}
            else:
                answer["error"] = {
                    "code": METHOD_NOT_FOUND,
                    "message": "Method not found",
                }
            with contextlib.suppress(ConnectionError, OSError):
                await self._send(answer)
            return
        params = message.get("params")
        params = cast("dict[str, Any]", params) if isinstance(params, dict) else None
        context = self._owner(method, params)
        if context is not None:
            with contextlib.suppress(ConnectionError):
                await context.notify(method, params)

    def _owner(self, method: str, params: dict[str, Any] | None) -> McpContext | None:
        if method == "notifications/progress" and params is not None:
            token = params.get("progressToken")
            for context in self._contexts.values():
                meta = (context.params or {}).get("_meta")
                if (
                    isinstance(meta, dict)
                    and cast("dict[str, Any]", meta).get("progressToken") == token
                ):
                    return context
            return None
        if len(self._contexts) == 1:
            return next(iter(self._contexts.values()))
        log.debug(
            "dropped the MCP notification %s: %d requests active",
            method,
            len(self._contexts),
        )
        return None

    async def __call__(self, context: McpContext) -> Any:
        await self.start()
        if context.method == "initialize":
            return self.initialized
        answer = await self._call(context.method, context.params, context)
        if "result" in answer:
            return answer["result"]
        error = answer.get("error")
        if isinstance(error, dict):
            raise McpCallError.of(cast("dict[str, Any]", error))
        raise ValueError("the MCP server answered with neither a result nor an error")

    async def aclose(self) -> None:
        """End the process (closing its stdin, then terminating it)."""
        process = self.process
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except asyncio.TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            await process.wait()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
