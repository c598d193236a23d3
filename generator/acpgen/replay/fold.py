"""The session fold of a run: the messages of a transcript (recorded or
replayed) folded as a client built on a generated package folds them.

:class:`WireFold` follows the package's client connection
(``SessionFolds`` of its runtime): a session is known once the client's own
traffic names it (the package's ``SESSION_SOURCES``), the client's own
``session/prompt`` is folded as it is sent where the package's ``Session``
has ``apply_prompt`` (v1), and each ``session/update`` of a known session is
folded with ``Session.apply_session_update``. The result is each session's
``session_to_json`` snapshot, by session id.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import Any

from .transcript import AGENT, CLIENT

UPDATE = "session/update"
PROMPT = "session/prompt"


class WireFold:
    """The sessions a client folds from the messages it sends and receives."""

    def __init__(self, package: ModuleType) -> None:
        self.package = package
        self.session_class: Any = package.Session
        sources: tuple[tuple[str, str], ...] = package.SESSION_SOURCES
        self.from_params = frozenset(m for m, part in sources if part == "params")
        self.from_results = frozenset(m for m, part in sources if part == "result")
        self.sessions: dict[str, Any] = {}
        self.pending: dict[Any, str] = {}
        """The client's requests in flight: id -> method."""
        methods: Any = package.METHODS
        self.update_params: str = methods[UPDATE].notification.params_name
        self.prompt_params: str = methods[PROMPT].request.params_name
        self.errors: list[str] = []
        """Messages the fold could not read (each said once, with why)."""

    def _open(self, session_id: object) -> None:
        if isinstance(session_id, str) and session_id not in self.sessions:
            self.sessions[session_id] = self.session_class(session_id=session_id)

    def add(self, direction: str, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params")
        if direction == CLIENT:
            if isinstance(method, str) and "id" in message:
                self.pending[_id(message["id"])] = method
                self._sending(method, params)
            return
        if direction != AGENT:
            return
        if method is None and "id" in message:
            sent = self.pending.pop(_id(message["id"]), None)
            result = message.get("result")
            if sent in self.from_results and isinstance(result, dict):
                self._open(result.get("sessionId"))
        elif method == UPDATE and isinstance(params, dict) and params.get("sessionId") in self.sessions:
            try:
                notification = self.package.decode(self.update_params, params)
            except ValueError as error:
                self.errors.append(f"a session/update the package cannot decode: {error}")
                return
            session_id = params["sessionId"]
            self.sessions[session_id] = self.session_class.apply_session_update(self.sessions[session_id], notification)

    def _sending(self, method: str, params: Any) -> None:
        if method == PROMPT and isinstance(params, dict):
            apply_prompt = getattr(self.session_class, "apply_prompt", None)
            if apply_prompt is None:
                self._open(params.get("sessionId"))
                return
            try:
                request = self.package.decode(self.prompt_params, params)
            except ValueError as error:
                self.errors.append(f"a session/prompt the package cannot decode: {error}")
                return
            session_id = params.get("sessionId")
            if isinstance(session_id, str):
                self.sessions[session_id] = apply_prompt(self.sessions.get(session_id), request)
        elif method in self.from_params and isinstance(params, dict):
            self._open(params.get("sessionId"))

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
