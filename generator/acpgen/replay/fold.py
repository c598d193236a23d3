"""The session fold of a run: the messages of a transcript (recorded or
replayed) folded as a client built on a generated package folds them.

:class:`WireFold` feeds the package's own client-side fold (``SessionFolds``
of its ``_folding`` runtime module, which its client connection keeps) from
the wire: the client's requests as they are sent, the agent's answers to
them and its ``session/update`` notifications. What that fold cannot take
(a message that does not decode, a fold that raises) it reports, and
:attr:`WireFold.errors` lists. The result is each session's
``session_to_json`` snapshot, by session id.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import Any

from .transcript import AGENT, CLIENT

UPDATE = "session/update"


class WireFold:
    """The sessions a client folds from the messages it sends and receives."""

    def __init__(self, package: ModuleType) -> None:
        self.package = package
        methods: Any = package.METHODS
        params_names: dict[str, str] = {}
        for name, info in methods.items():
            call = info.request if info.request is not None else info.notification
            params_names[name] = call.params_name

        def decode(method: str, params: Any) -> Any:
            return package.decode(params_names[method], params)

        folding = importlib.import_module(f"{package.__name__}._folding")
        self.folds: Any = folding.SessionFolds(package.Session, package.SESSION_SOURCES, decode, self._unfolded)
        """The package's ``SessionFolds``."""
        self.pending: dict[Any, str] = {}
        """The client's requests in flight: id -> method."""
        self.errors: list[str] = []
        """Messages the fold could not take (each said once, with why)."""

    def _unfolded(self, method: str, params: Any, reason: str) -> None:
        self.errors.append(f"a {method} the package {reason}")

    @property
    def sessions(self) -> dict[str, Any]:
        """The newest Session of each known session, by session id."""
        sessions: dict[str, Any] = self.folds.sessions
        return sessions

    def add(self, direction: str, message: dict[str, Any]) -> None:
        method = message.get("method")
        if direction == CLIENT:
            if isinstance(method, str) and "id" in message:
                self.pending[_id(message["id"])] = method
                self.folds.sending(method, message.get("params"))
        elif direction == AGENT:
            if method is None and "id" in message:
                sent = self.pending.pop(_id(message["id"]), None)
                if sent is not None and "result" in message:
                    self.folds.answered(sent, message["result"])
            elif method == UPDATE:
                self.folds.received(message.get("params"))

    def snapshot(self) -> dict[str, Any]:
        """Each session's ``session_to_json`` snapshot, by session id."""
        to_json = self.package.session_to_json
        return {session_id: to_json(session) for session_id, session in self.sessions.items()}


def _id(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def fold_messages(package: ModuleType, messages: Iterable[tuple[str, dict[str, Any]]]) -> WireFold:
    """The fold of ``(direction, message)`` pairs, in order."""
    fold = WireFold(package)
    for direction, message in messages:
        fold.add(direction, message)
    return fold


def package_for(version: int, name: str | None = None) -> ModuleType:
    """The generated package that folds a run of protocol ``version``
    (``acp_v1``, ``acp_v2``), or the one ``name`` names (a directory or an
    import name, as ``acpgen validate --package`` takes)."""
    from ..validate.loader import load_package

    return load_package(name or f"acp_v{version}")
