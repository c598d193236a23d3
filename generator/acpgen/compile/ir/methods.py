"""The JSON-RPC method table: each method and how it is used."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Side = Literal["agent", "client", "protocol", "proxy"]
"""``x-side``: the side that handles a message."""
CallKind = Literal["request", "notification"]
"""How a method is used: answered with a result, or not."""


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
