"""Capability checks at the sender, from what the ``initialize`` exchange
advertised.

The package's ``REQUIRES`` maps each method a side supports only when it
advertises a capability to that capability's place: a path of wire names
into the side's part of ``initialize`` (the client's request params, the
agent's response result), e.g. ``fs/read_text_file`` to
``("clientCapabilities", "fs", "readTextFile")``. A capability is advertised
when its value is ``true``, an object (``{}`` included) or a non-empty list;
omitted, ``null``, ``false`` and anything else are not.

:class:`Capabilities` is what one end of a connection knows: once it has seen
the peer's part, a call of a gated method the peer did not advertise raises
:class:`CapabilityError` before anything is sent (before that nothing is
checked: the peer has advertised nothing yet, and refuses on its own); and
:meth:`Capabilities.unbacked` lists the capabilities this end's own part
advertises without the handler that serves them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from ._jsonrpc import MethodInfo, Side

__all__ = ["Capabilities", "CapabilityError", "advertised"]

_Path = tuple[str, ...]

_PART = {
    "client": "the client's initialize request",
    "agent": "the agent's initialize response",
}


class CapabilityError(RuntimeError):
    """A call of a method the peer did not advertise in ``initialize``,
    refused before it was sent."""

    def __init__(self, method: str, side: Side, capability: str) -> None:
        self.method = method
        """The method refused."""
        self.capability = capability
        """The capability it needs, as a dotted path of wire names."""
        super().__init__(
            f"{method} needs {capability}, which {_PART.get(side, side)} did not "
            "advertise (check_capabilities=False sends it anyway)"
        )


def advertised(part: Any, path: _Path) -> bool:
    """Whether the capability at ``path`` of ``part`` (JSON) is advertised."""
    value = part
    for key in path:
        if not isinstance(value, dict):
            return False
        value = cast("dict[str, Any]", value).get(key)
    if isinstance(value, list):
        return value != []
    return value is True or isinstance(value, dict)


class Capabilities:
    """The capability checks of one end (``side``) of a connection."""

    __slots__ = ("_own_gates", "_peer_gates", "_peer_side", "peer")

    def __init__(
        self,
        requires: Mapping[str, _Path],
        methods: Mapping[str, MethodInfo],
        side: Side,
    ) -> None:
        self._peer_side: Side = "client" if side == "agent" else "agent"
        self._peer_gates: dict[str, _Path] = {}
        """Gated methods the peer handles: what this end's calls need."""
        self._own_gates: dict[str, tuple[_Path, str]] = {}
        """Gated requests this end handles: the capability and the handler."""
        for method, path in requires.items():
            info = methods.get(method)
            if info is None:
                continue
            for call in (info.request, info.notification):
                if call is None:
                    continue
                if call.side != side:
                    self._peer_gates[method] = path
                elif call is info.request:
                    self._own_gates[method] = (path, call.handler)
        self.peer: Any = None
        """The peer's part of ``initialize`` (JSON), once seen."""

    def observe(self, part: Any) -> None:
        """The peer's part of ``initialize``, as JSON: from now on calls are
        checked against it."""
        self.peer = part if isinstance(part, dict) else {}

    def check(self, method: str) -> None:
        """Raise :class:`CapabilityError` when the peer's part has been seen and
        does not advertise what ``method`` needs."""
        if self.peer is None:
            return
        path = self._peer_gates.get(method)
        if path is not None and not advertised(self.peer, path):
            raise CapabilityError(method, self._peer_side, ".".join(path))

    def unbacked(self, part: Any, handler: object, interface: type | None) -> list[str]:
        """What this end's own part of ``initialize`` (JSON) advertises
        without the handler behind it: ``"<capability> (<method>: <handler>,
        ...)"`` for each. A handler counts when the handler object's class defines it
        (not only the interface's default, which answers -32601)."""
        missing: dict[str, list[str]] = {}
        for method, (path, name) in self._own_gates.items():
            if advertised(part, path) and not _implements(handler, interface, name):
                missing.setdefault(".".join(path), []).append(f"{method}: {name}")
        return [f"{path} ({', '.join(calls)})" for path, calls in missing.items()]


def _implements(handler: object, interface: type | None, name: str) -> bool:
    found = getattr(type(handler), name, None)
    if found is None:
        return callable(getattr(handler, name, None))
    default = getattr(interface, name, None) if interface is not None else None
    return found is not default
