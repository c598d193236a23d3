"""Protocol versions: how ``initialize`` is read and answered when the two
ends do not speak the same version, and one endpoint for several versions.

* ``protocolVersion`` is read leniently: a string (early clients sent
  ``"1"`` or ``"0.1.0"``) reads as version 0, as the Rust crate
  ``agent-client-protocol-schema`` read it up to schema 1.16 (its
  ``ProtocolVersion`` visitor: "Old versions used strings, we consider all of
  those version 0"); the agent then answers with the version it speaks.
  Strict mode (and the TypeScript SDK's ``z.int()``) refuse a string.
* An agent whose package is newer than what the client asks for and whose
  ``initialize`` params do not decode (a v1 client's request lacks v2's
  ``info``) does not answer -32602: its handler's ``unsupported_version``
  is called with the requested version and the params as JSON if it has
  one, and otherwise the request is answered ``-32022`` (Unsupported
  protocol version, with ``requested`` and ``supported``), as the v2 schema
  prescribes and the TypeScript SDK's v2 agent answers.
* A client whose requested version was not chosen gets
  :class:`VersionMismatch` (the version chosen, the answer as JSON and, when
  the package of that version is importable next to this one, decoded by
  it), and a ``-32022`` answer raises :class:`UnsupportedProtocolVersion`.
* :func:`serve_versions` serves several packages from one endpoint, chosen
  by the first ``initialize``; :func:`connect_versions` offers the newest
  version and goes on with the package of the version the agent chose.

Nothing here imports a sibling package until a mismatch asks for it.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ._jsonrpc import (
    INVALID_REQUEST,
    ErrorResponse,
    Request,
    RequestError,
    Response,
    RpcError,
    dump_message,
    load_message,
    printable,
)
from ._runtime import UNSET, ValidationError
from ._transport import (
    DEFAULT_CLOSE_GRACE,
    DEFAULT_MAX_MESSAGE,
    MessageTooLarge,
    Transport,
    spawn_process,
)

if TYPE_CHECKING:
    from ._connection import Connection

__all__ = [
    "UNSUPPORTED_PROTOCOL_VERSION",
    "UnsupportedProtocolVersion",
    "VersionMismatch",
    "choose_version",
    "connect_versions",
    "read_protocol_version",
    "serve_versions",
    "spawn_versions",
]

INITIALIZE = "initialize"
UNSUPPORTED_PROTOCOL_VERSION = -32022
"""The v2 schema's error code: no version the agent supports is at or below
the requested one."""

_MAX_VERSION = 65535


def read_protocol_version(value: Any) -> int | None:
    """A ``protocolVersion`` as the Rust crate read it: an integer from 0 to
    65535 is itself, any string is version 0; anything else is ``None``."""
    if isinstance(value, str):
        return 0
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 0 <= value <= _MAX_VERSION else None
    return None


def requested_version(data: Any, strict: bool = False) -> int | None:
    """The version an ``initialize`` request (a whole message as JSON) asks
    for, or ``None`` when it is no such request or names no version (nor a
    string one, in ``strict`` mode)."""
    if not isinstance(data, dict):
        return None
    message = cast("dict[str, Any]", data)
    params = message.get("params")
    if message.get("method") != INITIALIZE or not isinstance(params, dict):
        return None
    version = cast("dict[str, Any]", params).get("protocolVersion")
    return (
        None if strict and isinstance(version, str) else read_protocol_version(version)
    )


def _fields(value: Any) -> dict[str, Any]:
    """A JSON object's members; none for anything else."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def lenient_initialize(data: Any) -> Any:
    """An ``initialize`` message whose ``protocolVersion`` is a string, with
    version 0 in its place; any other message as it is."""
    if not isinstance(data, dict):
        return data
    message = cast("dict[str, Any]", data)
    params = message.get("params")
    if message.get("method") != INITIALIZE or not isinstance(params, dict):
        return message
    fields = cast("dict[str, Any]", params)
    if not isinstance(fields.get("protocolVersion"), str):
        return message
    return {**message, "params": {**fields, "protocolVersion": 0}}


# ---------------------------------------------------------------- errors


class UnsupportedProtocolVersion(RequestError):
    """The ``-32022`` error: no version the agent supports is at or below
    ``requested``; ``supported`` lists those it does. An agent raises it
    from ``initialize``; a client's ``initialize`` raises it when the agent
    answers so."""

    def __init__(
        self,
        requested: int,
        supported: Sequence[int],
        message: str = "Unsupported protocol version",
        data: Any = UNSET,
    ) -> None:
        self.requested = requested
        self.supported = list(supported)
        if data is UNSET:
            data = {"requested": requested, "supported": self.supported}
        super().__init__(UNSUPPORTED_PROTOCOL_VERSION, message, data)

    def __str__(self) -> str:
        return (
            f"{self.message} ({self.code}): asked for version {self.requested}, "
            f"the agent supports {', '.join(map(str, self.supported)) or 'none'}"
        )

    @classmethod
    def from_error(cls, error: RequestError) -> RequestError:
        """``error`` as this class when it is a ``-32022`` (with whatever of
        ``requested``/``supported`` its data holds); otherwise ``error``."""
        if error.code != UNSUPPORTED_PROTOCOL_VERSION:
            return error
        data = _fields(error.data)
        requested = read_protocol_version(data.get("requested"))
        raw: Any = data.get("supported")
        items = list(cast("Iterable[Any]", raw)) if isinstance(raw, list) else []
        supported = [
            version
            for version in map(read_protocol_version, items)
            if version is not None
        ]
        return cls(
            -1 if requested is None else requested, supported, error.message, error.data
        )


class VersionMismatch(Exception):
    """The agent answered ``initialize`` with a version this package does not
    speak. ``requested`` is the version asked for, ``chosen`` the one the
    agent answered with (``None`` when its answer names none), ``result``
    its answer as JSON, and ``answer`` that answer decoded by the package of
    version ``chosen`` when one is importable next to this one (else
    ``None``); ``package`` names it."""

    def __init__(
        self,
        requested: Any,
        chosen: int | None,
        result: Any,
        answer: Any = None,
        package: str | None = None,
    ) -> None:
        self.requested = requested
        self.chosen = chosen
        self.result = result
        self.answer = answer
        self.package = package
        decoded = f"; its answer decoded by {package}" if package else ""
        super().__init__(
            f"the agent chose protocol version {chosen}, not {requested}{decoded}"
        )


# ---------------------------------------------------------------- agent side


@dataclass(frozen=True, slots=True)
class OlderInitialize:
    """``initialize`` params that do not decode as this package's, from a
    client asking for an older version than the package speaks."""

    requested: int
    params: Any


def older_initialize(
    data: Any, id: Any, package_version: int | None, strict: bool = False
) -> Request[OlderInitialize] | None:
    """For an ``initialize`` whose params did not decode: the request to
    hand the handler, when it asks for a version below ``package_version``."""
    requested = requested_version(data, strict)
    if requested is None or package_version is None or requested >= package_version:
        return None
    params = cast("dict[str, Any]", data)["params"]
    return Request(id, INITIALIZE, OlderInitialize(requested, params))


async def answer_older(
    handler: Any, params: OlderInitialize, package_version: int | None
) -> Any:
    """The handler's ``unsupported_version(requested, params)`` answers (its
    result goes out as it is: JSON or a generated class); without one, a
    ``-32022`` naming the package's version."""
    hook = getattr(handler, "unsupported_version", None)
    if hook is not None:
        return await hook(params.requested, params.params)
    supported = [] if package_version is None else [package_version]
    raise UnsupportedProtocolVersion(params.requested, supported)


# ---------------------------------------------------------------- client side


def sibling_package(module: str, version: int) -> str | None:
    """The name of the package of ``version`` next to the one ``module`` is
    in (``acp_v2._versions`` -> ``acp_v1``; ``_unstable`` and an enclosing
    package kept), or ``None`` when the name shows no version."""
    package, _, _ = module.rpartition(".")
    parent, dot, last = package.rpartition(".")
    match = re.fullmatch(r"(.*v)\d+(.*)", last)
    if match is None:
        return None
    return f"{parent}{dot}{match.group(1)}{version}{match.group(2)}"


def decode_with_sibling(
    module: str, version: int, result: Any
) -> tuple[Any, str | None]:
    """``result`` decoded by the sibling package of ``version`` (imported
    only now), and its name; ``(None, None)`` when there is none or it does
    not decode there."""
    name = sibling_package(module, version)
    if name is None:
        return None, None
    try:
        protocol = importlib.import_module(name + ".protocol")
        codec: Any = protocol.CODEC
        return codec.decode_result(INITIALIZE, result), name
    except (ImportError, AttributeError, ValidationError):
        return None, None


def initialize_result(connection: Connection[Any], requested: Any, result: Any) -> Any:
    """The agent's answer to ``initialize`` decoded by this package, or
    :class:`VersionMismatch` when it chose a version this package does not
    speak."""
    fields = _fields(result)
    raw = fields.get("protocolVersion")
    chosen = read_protocol_version(raw)
    speaks: int | None = getattr(connection, "protocol_version", None)
    strict = connection.strict
    if speaks is not None and chosen is not None and chosen != speaks:
        answer, package = decode_with_sibling(
            type(connection).__module__, chosen, result
        )
        raise VersionMismatch(requested, chosen, result, answer, package)
    if isinstance(raw, str) and not strict:
        result = {**fields, "protocolVersion": 0}
    return connection.codec.decode_result(INITIALIZE, result, strict=strict)


async def initialize(connection: Connection[Any], params: Any) -> Any:
    """Send ``initialize``; the typed answer, or the typed refusal."""
    try:
        result = await connection.request(INITIALIZE, params)
    except RequestError as error:
        raise UnsupportedProtocolVersion.from_error(error) from None
    answer = initialize_result(
        connection, getattr(params, "protocol_version", None), result
    )
    connection.mark_initialized()
    return answer


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
            message = _fields(load_message(first))
        except (ValueError, RecursionError):
            break
        method, id = message.get("method"), message.get("id")
        if method == INITIALIZE or not isinstance(method, str):
            break
        # Before initialize: a request is refused, a notification dropped,
        # as the connection would (the version is not chosen yet).
        if isinstance(id, (int, str)) and not isinstance(id, bool):
            await transport.send(_refusal(id, method, max(agents)))
    requested: int | None = None
    if isinstance(first, bytes):
        with contextlib.suppress(ValueError, RecursionError):
            requested = requested_version(load_message(first))
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
        fields = _fields(answer.result)
        chosen = read_protocol_version(fields.get("protocolVersion"))
        if chosen is None or chosen not in clients:
            raise VersionMismatch(version, chosen, answer.result)
        connect, make_client, _ = clients[chosen]
        connection = connect(make_client, transport, **options)
        result = initialize_result(connection, version, answer.result)
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
            message = _fields(load_message(data))
        except (ValueError, RecursionError):
            continue
        method, id = message.get("method"), message.get("id")
        if isinstance(method, str) and isinstance(id, (int, str)):
            await transport.send(_refusal(id, method, 1))
        elif method is None and id == request_id:
            failure = _fields(message.get("error"))
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


def not_initialized(method: str, version: int | None = 1) -> RpcError:
    """The refusal of a request before ``initialize``: ``-32600`` as the
    TypeScript SDK words it, for v1 in the message
    (``agentInitializationGate``, ``dist/v1/acp.js``), for v2 in the data
    (``initializationUnavailable``, ``dist/v2/acp.js``); the Rust SDK's
    ``ProtocolCompat::ensure_initialized`` answers the same code. A lone
    surrogate in ``method`` is quoted escaped (the refusal must go out)."""
    method = printable(method)
    if version is None or version <= 1:
        return RpcError(
            INVALID_REQUEST,
            f"Invalid request: ACP connection must be initialized before '{method}'",
        )
    return RpcError(
        INVALID_REQUEST,
        "Invalid request",
        f"ACP v{version} connection must be initialized before '{method}'",
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
    from ._connection import stopped_reading

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
