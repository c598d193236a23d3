"""One endpoint for several protocol versions: :func:`serve_versions` serves
several packages from one endpoint, chosen by the first ``initialize``;
:func:`connect_versions` offers the newest version and goes on with the
package of the version the agent chose. How one connection reads and
answers ``initialize`` across versions is ``_handshake``'s; its public
names are re-exported here.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any

from ._connection import stopped_reading
from ._handshake import (
    INITIALIZE,
    fields_of,
    initialize_result,
    not_initialized,
    read_protocol_version,
    requested_version,
)
from ._handshake import UNSUPPORTED_PROTOCOL_VERSION as UNSUPPORTED_PROTOCOL_VERSION
from ._handshake import UnsupportedProtocolVersion as UnsupportedProtocolVersion
from ._handshake import VersionMismatch as VersionMismatch
from ._jsonrpc import (
    ErrorResponse,
    RequestError,
    Response,
    RpcError,
    dump_message,
    load_message,
)
from ._runtime import UNSET
from ._transport import (
    DEFAULT_CLOSE_GRACE,
    DEFAULT_MAX_MESSAGE,
    MessageTooLarge,
    Transport,
    spawn_process,
)

__all__ = [
    "UNSUPPORTED_PROTOCOL_VERSION",
    "AgentEntry",
    "ClientEntry",
    "UnsupportedProtocolVersion",
    "VersionMismatch",
    "choose_version",
    "connect_versions",
    "package_of",
    "serve_versions",
    "spawn_versions",
]


# ---------------------------------------------------------------- one endpoint


def choose_version(
    versions: Sequence[int] | Mapping[int, Any], requested: int | None
) -> int:
    """Of ``versions``, the newest at or below ``requested``; the oldest when
    all are newer (a string version reads as 0), the newest when the request
    names none."""
    ordered = sorted(versions)
    if not ordered:
        raise ValueError("no protocol version to choose from")
    if requested is None:
        return ordered[-1]
    below = [version for version in ordered if version <= requested]
    return below[-1] if below else ordered[0]


class _Replay:
    """A transport that gives back one message (or the error reading it
    raised) already read from another, then reads on from that one."""

    def __init__(self, transport: Transport, first: bytes | MessageTooLarge) -> None:
        self._transport = transport
        self._first: bytes | MessageTooLarge | None = first

    async def receive(self) -> bytes | None:
        first, self._first = self._first, None
        if isinstance(first, MessageTooLarge):
            raise first
        if first is not None:
            return first
        return await self._transport.receive()

    async def send(self, data: bytes) -> None:
        await self._transport.send(data)

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    async def close(self) -> None:
        await self._transport.close()


def package_of(connection_class: Any) -> str:
    """The import name of the package of a connection class (its codec's:
    a subclass defined elsewhere still names the generated package)."""
    return str(type(connection_class.codec).__module__).rpartition(".")[0]


AgentEntry = tuple[Any, Callable[[Any], Any]]
"""(the package's ``AgentSideConnection``, ``make_agent``): the class is
typed ``Any`` since each package's ``Connection`` is a class of its own."""


async def serve_versions(
    agents: Mapping[int, AgentEntry], transport: Transport, **options: Any
) -> None:
    """Serve one client with the package its ``initialize`` asks for:
    ``agents`` maps a protocol version to ``(AgentSideConnection,
    make_agent)`` of that version's package. The first message is read
    here, the version chosen by :func:`choose_version` (a string version:
    the oldest; above all: the newest, whose agent answers with its own),
    and that package's connection serves from that message on, with
    ``options`` passed to it. Returns when the client closes."""
    requested: int | None = None
    while True:
        try:
            first: bytes | MessageTooLarge | None = await transport.receive()
        except MessageTooLarge as error:
            first = error
        if first is None:
            await transport.close()
            return
        if not isinstance(first, bytes):
            break
        try:
            data = load_message(first)
        except ValueError:
            break
        message = fields_of(data)
        method, id = message.get("method"), message.get("id")
        if method == INITIALIZE or not isinstance(method, str):
            requested = requested_version(data)
            break
        # Before initialize: a request is refused, a notification dropped,
        # as the connection would (the version is not chosen yet).
        if isinstance(id, (int, str)) and not isinstance(id, bool):
            await transport.send(_refusal(id, method, max(agents)))
    connect, make_agent = agents[choose_version(agents, requested)]
    await connect(make_agent, _Replay(transport, first), **options).run()


ClientEntry = tuple[Any, Callable[[Any], Any], Any]
"""(the package's ``ClientSideConnection``, ``make_client``, its
``InitializeRequest``)."""


async def connect_versions(
    clients: Mapping[int, ClientEntry], transport: Transport, **options: Any
) -> tuple[Any, Any]:
    """Initialize over ``transport`` offering the newest version of
    ``clients`` (a protocol version -> ``(ClientSideConnection,
    make_client, initialize_request)`` of that version's package) and
    return the started connection of the package of the version the agent
    chose, with the agent's typed answer. A ``-32022`` listing a version of
    ``clients`` is retried with it. Raises :class:`VersionMismatch` when
    the agent chose a version ``clients`` lacks, :class:`RequestError` when
    it refused. Messages the agent sends before answering are refused as
    before ``initialize`` (requests -32600) or dropped."""
    tried: set[int] = set()
    version = max(clients)
    next_id = 0
    while True:
        tried.add(version)
        connect, make_client, params = clients[version]
        codec = connect.codec
        request_id, next_id = next_id, next_id + 1
        # That package's own Request class: its codec encodes no other.
        rpc = importlib.import_module(type(codec).__module__)
        message = codec.encode_message(rpc.Request(request_id, INITIALIZE, params))
        await transport.send(dump_message(message))
        answer = await _await_answer(transport, request_id)
        if isinstance(answer, ErrorResponse):
            error = UnsupportedProtocolVersion.from_error(
                RequestError(answer.error.code, answer.error.message, answer.error.data)
            )
            if isinstance(error, UnsupportedProtocolVersion):
                retry = [v for v in error.supported if v in clients and v not in tried]
                if retry:
                    version = max(retry)
                    continue
            raise error
        fields = fields_of(answer.result)
        chosen = read_protocol_version(fields.get("protocolVersion"))
        if chosen is None or chosen not in clients:
            raise VersionMismatch(version, chosen, answer.result)
        connect, make_client, _ = clients[chosen]
        siblings = options.setdefault(
            "siblings", {v: package_of(entry[0]) for v, entry in clients.items()}
        )
        connection = connect(make_client, transport, **options)
        result = initialize_result(connection, version, answer.result, siblings)
        connection.mark_initialized(next_id, answer.result)
        connection.start()
        return connection, result


async def _await_answer(
    transport: Transport, request_id: int
) -> Response[Any] | ErrorResponse:
    """The answer to ``request_id``, read as JSON (the packages' message
    classes are each their own); a request meanwhile is refused."""
    while True:
        try:
            data = await transport.receive()
        except MessageTooLarge as error:
            if error.id == request_id and not error.request:
                raise RequestError(-32700, "Parse error", str(error)) from None
            continue
        if data is None:
            raise ConnectionError(
                "the agent closed the connection before answering initialize"
            )
        try:
            message = fields_of(load_message(data))
        except (ValueError, RecursionError):
            continue
        method, id = message.get("method"), message.get("id")
        if isinstance(method, str) and isinstance(id, (int, str)):
            await transport.send(_refusal(id, method, 1))
        elif method is None and id == request_id:
            failure = fields_of(message.get("error"))
            if "result" in message:
                return Response(request_id, message["result"])
            code, text = failure.get("code"), failure.get("message")
            return ErrorResponse(
                request_id,
                RpcError(
                    code if isinstance(code, int) else -32603,
                    text if isinstance(text, str) else "",
                    failure.get("data", UNSET),
                ),
            )


def _refusal(id: int | str, method: str, version: int | None) -> bytes:
    error = not_initialized(method, version)
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not UNSET:
        body["data"] = error.data
    return dump_message({"jsonrpc": "2.0", "id": id, "error": body})


@contextlib.asynccontextmanager
async def spawn_versions(
    clients: Mapping[int, ClientEntry],
    program: str,
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    max_message: int = DEFAULT_MAX_MESSAGE,
    close_grace: float = DEFAULT_CLOSE_GRACE,
    **options: Any,
) -> AsyncGenerator[tuple[Any, Any], None]:
    """Start ``program`` as an agent subprocess and yield
    :func:`connect_versions` over its stdin/stdout: the connection of the
    version the agent chose and its answer to ``initialize``. On exit the
    connection is closed, then the process has ``close_grace`` seconds to
    exit before it is killed, and is awaited in every case (see
    :func:`spawn_process`)."""
    async with spawn_process(
        program,
        args,
        env=env,
        cwd=cwd,
        max_message=max_message,
        close_grace=close_grace,
    ) as (process, transport):
        connection: Any = None
        try:
            connection, result = await connect_versions(clients, transport, **options)
            connection.process = process
            yield connection, result
        finally:
            if connection is not None:
                await connection.close()
                await stopped_reading(connection)
