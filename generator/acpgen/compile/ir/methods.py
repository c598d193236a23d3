"""The JSON-RPC method table: each method and how it is used."""

from __future__ import annotations

from typing import Literal

from ...records import dataclass

Side = Literal["agent", "client", "protocol", "proxy"]
"""``x-side``: the side that handles a message."""
CallKind = Literal["request", "notification"]
"""How a method is used: answered with a result, or not."""
MessageKind = Literal["request", "response", "notification"]
"""What a JSON-RPC message type is: a request's params, a response's result
or a notification's params."""


@dataclass(frozen=True)
class Mark:
    """What the schema says of one definition with ``x-method`` or
    ``x-side``, read once at lowering: the method and the side, checked; or,
    for marks that are not usable, why (``error``, at ``error_at``: the JSON
    pointer), which the method table reports."""

    definition: str
    method: str = ""
    side: Side | None = None
    error: str = ""
    error_at: str = ""


@dataclass(frozen=True)
class SchemaFacts:
    """Facts of the whole schema document the later passes need, read once
    at lowering, so that no pass reads the schema again."""

    marks: tuple[Mark, ...] = ()
    """In ``$defs`` order."""
    envelope_kinds: tuple[tuple[str, tuple[MessageKind, ...]], ...] = ()
    """``($defs name, kinds)`` for every type an envelope's ``params`` or
    ``result`` refers to, anywhere in the document (kinds sorted)."""
    null_request_id: bool = False
    """The schema's ``RequestId`` allows ``null`` (v1 does, as serde's ``Null``)."""
    methods_named: frozenset[str] = frozenset()
    """Every ``x-method`` anywhere in the document (which rule set fits)."""
    unstable_marked: bool = False
    """Some description begins ``**UNSTABLE**`` (an unstable schema)."""
    version: str = ""
    """The version of the npm package the schema came in, from a
    SOURCE.json beside it, or empty."""


@dataclass(frozen=True)
class Call:
    """One way a JSON-RPC method is used: a request (answered with a result)
    or a notification, and the side that handles it."""

    method: str
    kind: CallKind
    side: Side
    params: str
    """The ``$defs`` name of the params type."""
    params_class: str
    handler: str
    """The Python method name on the handler interface and the connection."""
    result: str = ""
    """For a request: the ``$defs`` name of the result type."""
    result_class: str = ""
    summary: str = ""
    """The first paragraph of the params type's description."""


@dataclass(frozen=True)
class RpcMethod:
    """A JSON-RPC method name and how it is used; a name may be both a
    request and a notification (JSON-RPC tells them apart by ``id``)."""

    name: str
    request: Call | None = None
    notification: Call | None = None

    @property
    def calls(self) -> tuple[Call, ...]:
        return tuple(c for c in (self.request, self.notification) if c is not None)


GateSource = Literal["description", "rules"]
"""Where a gate was read: a capability's description, or ``rules/capabilities.toml``."""


@dataclass(frozen=True)
class Gate:
    """A method the side that handles it supports only when it advertises a
    capability in the ``initialize`` exchange: ``path`` is the capability's
    place, as wire names, in that side's part of it (the client's request
    params, the agent's response result)."""

    method: str
    side: Side
    """The side that handles the method and advertises the capability."""
    path: tuple[str, ...]
    source: GateSource


@dataclass(frozen=True)
class Cancellation:
    """What a session's cancel does to the requests being handled, and what
    a request is answered when its handler is cancelled (read from
    ``rules/cancellation.toml``, checked against the schema)."""

    notification: str
    """The notification that cancels a session's work (``""``: the schema
    has none that names a session)."""
    session_attribute: str
    """The Python attribute, on its params and on the requests' params, that
    names the session."""
    answers: tuple[tuple[str, str], ...]
    """``(method, result)``: a request whose handler is cancelled is answered
    with ``result`` (JSON text, valid as the method's result in the schema)
    instead of -32800; in method order."""
