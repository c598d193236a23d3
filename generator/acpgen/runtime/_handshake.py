"""The ``initialize`` handshake of one connection: how ``initialize`` is read
and answered when the two ends do not speak the same version.

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
  it: see :func:`sibling_package`), and a ``-32022`` answer raises
  :class:`UnsupportedProtocolVersion`.
* Before ``initialize`` an agent refuses requests (:func:`not_initialized`).

The connection (``_connection``) uses this module; serving several versions
from one endpoint is ``_versions``, which uses both. Nothing here imports
a sibling package until a mismatch asks for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, cast

from ._jsonrpc import (
    INVALID_REQUEST,
    MessageCodec,
    Request,
    RequestError,
    RpcError,
    printable,
)
from ._runtime import UNSET, ValidationError

__all__ = [
    "INITIALIZE",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "OlderInitialize",
    "UnsupportedProtocolVersion",
    "VersionMismatch",
    "read_protocol_version",
    "sibling_package",
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


def fields_of(value: Any) -> dict[str, Any]:
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
        data = fields_of(error.data)
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


class Initializing(Protocol):
    """What the client's side of the handshake uses of its connection (a
    ``_connection.Connection``, which imports this module)."""

    codec: ClassVar[MessageCodec]

    @property
    def strict(self) -> bool: ...

    async def request(self, method: str, params: Any = None) -> Any: ...

    def mark_initialized(
        self, next_id: int | None = None, result: Any = None
    ) -> None: ...


PACKAGE = __name__.rpartition(".")[0]
"""The import name of the package this module is in, as it was imported: a
vendored or renamed copy names itself (``vendor.old_acp``), whatever the
name it was generated as."""


def sibling_package(
    version: int,
    own_version: int | None,
    siblings: Mapping[int, str] | None = None,
    package: str = PACKAGE,
) -> str | None:
    """The import name of the package of protocol ``version``: the one
    ``siblings`` gives for it (a version -> an import name: a connection's
    ``siblings`` option, :func:`connect_versions`'s packages) or else the
    one named as this package (``package``, its own import name) with its
    version ``own_version`` in the last part of its name replaced
    (``acp_v2`` -> ``acp_v1``, ``vendor.acp_v2_unstable`` ->
    ``vendor.acp_v1_unstable``). ``None`` when neither says: a package
    renamed without ``v<own_version>`` in its name (``old_acp``), one that
    names it more than once, one whose version is not known."""
    if siblings is not None and version in siblings:
        return siblings[version]
    if own_version is None:
        return None
    parent, dot, last = package.rpartition(".")
    mark = f"v{own_version}"
    places = [
        at
        for at in range(len(last))
        if last.startswith(mark, at)
        and (at == 0 or not last[at - 1].isalnum())
        and not last[at + len(mark) : at + len(mark) + 1].isdigit()
    ]
    if len(places) != 1:
        return None
    head, tail = last[: places[0]], last[places[0] + len(mark) :]
    return f"{parent}{dot}{head}v{version}{tail}"


def decode_with_sibling(name: str | None, result: Any) -> tuple[Any, str | None]:
    """``result`` decoded as an ``initialize`` answer by the package ``name``
    (imported only now), and that name; ``(None, None)`` when there is none
    or it does not decode there."""
    if name is None:
        return None, None
    try:
        protocol = importlib.import_module(name + ".protocol")
        codec: Any = protocol.CODEC
        return codec.decode_result(INITIALIZE, result), name
    except (ImportError, AttributeError, ValidationError):
        return None, None


def initialize_result(
    connection: Initializing,
    requested: Any,
    result: Any,
    siblings: Mapping[int, str] | None = None,
) -> Any:
    """The agent's answer to ``initialize`` decoded by this package, or
    :class:`VersionMismatch` when it chose a version this package does not
    speak (decoded by the package of that version, when one is found: see
    :func:`sibling_package`)."""
    fields = fields_of(result)
    raw = fields.get("protocolVersion")
    chosen = read_protocol_version(raw)
    speaks: int | None = getattr(connection, "protocol_version", None)
    strict = connection.strict
    if speaks is not None and chosen is not None and chosen != speaks:
        answer, package = decode_with_sibling(
            sibling_package(chosen, speaks, siblings), result
        )
        raise VersionMismatch(requested, chosen, result, answer, package)
    if isinstance(raw, str) and not strict:
        result = {**fields, "protocolVersion": 0}
    return connection.codec.decode_result(INITIALIZE, result, strict=strict)


async def initialize(
    connection: Initializing,
    params: Any,
    siblings: Mapping[int, str] | None = None,
) -> Any:
    """Send ``initialize``; the typed answer, or the typed refusal."""
    try:
        result = await connection.request(INITIALIZE, params)
    except RequestError as error:
        raise UnsupportedProtocolVersion.from_error(error) from None
    answer = initialize_result(
        connection, getattr(params, "protocol_version", None), result, siblings
    )
    connection.mark_initialized()
    return answer


# ---------------------------------------------------------------- before it


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
