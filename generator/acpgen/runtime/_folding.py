"""The client connection's session folds: a ``Session`` per session the
client opened, kept up to date from what the connection sends and receives.

A session is known once the client's own traffic names it: the messages of
the package's ``SESSION_SOURCES`` (``session/new``'s result, the params of
``session/load`` and ``session/resume`` ...), and the client's own
``session/prompt``. Each ``session/update`` for a known session is folded
before the client's handler sees it; updates for other sessions are left to
the handler (a peer cannot make the client keep sessions it did not open).
Where the package's ``Session`` has ``apply_prompt`` (v1), the client's own
``session/prompt`` is folded as it is sent, as the user's message that
starts a turn, so the agent's messages of different turns stay apart; v2
agents send the prompt back as a ``user_message`` update instead.

A message the fold cannot take (a prompt or an update of a known session
whose params do not decode, an update whose fold raises) leaves its session
as it was. By default a fold that raises is logged and a prompt that does not
decode is left to the agent, which answers it with an error; the
``on_unfolded`` callback of :class:`SessionFolds` is told of each instead (what
``acpgen replay`` lists in its report).

Beside each session's fold, ``permissions`` keeps how each
``session/request_permission`` of a known session was answered (a
``PermissionDecision`` of ``_permissions``, in order), whether the client's
handler or its permission policy answered it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar, cast

__all__ = ["PROMPT", "UPDATE", "SessionFolds", "Unfolded"]

PROMPT = "session/prompt"
UPDATE = "session/update"

S = TypeVar("S")

Unfolded = Callable[[str, Any, str], None]
"""What :class:`SessionFolds` calls with a message it could not fold: the
method (``session/prompt`` or ``session/update``), the params as they were
given (JSON or decoded), and why, as ``cannot decode: <the error>`` or
``cannot fold: <the exception's class>: <the exception>``."""

log = logging.getLogger(__name__.rpartition(".")[0] + ".connection")


def _session_id(value: Any) -> str | None:
    """The ``sessionId`` of a decoded message or of its JSON."""
    if isinstance(value, dict):
        found: object = cast("dict[str, Any]", value).get("sessionId")
    else:
        found = getattr(value, "session_id", None)
    return found if isinstance(found, str) else None


class SessionFolds(Generic[S]):
    """The sessions of one client connection, by ``sessionId``.

    ``session_class`` is the package's ``Session``; ``sources`` its
    ``SESSION_SOURCES``; ``decode`` reads the params of a ``session/prompt``
    or ``session/update`` given as JSON (the method and the params; raises
    ``ValueError`` when they do not decode). ``on_unfolded``, when given, is
    called with each message the fold could not take (see :data:`Unfolded`);
    without it a fold that raises is logged and nothing else is said."""

    __slots__ = (
        "_class",
        "_decode",
        "_params",
        "_results",
        "on_unfolded",
        "permissions",
        "sessions",
    )

    def __init__(
        self,
        session_class: Any,
        sources: tuple[tuple[str, str], ...],
        decode: Callable[[str, Any], Any],
        on_unfolded: Unfolded | None = None,
    ) -> None:
        self._class = session_class
        self._decode = decode
        self._params = frozenset(m for m, part in sources if part == "params")
        self._results = frozenset(m for m, part in sources if part == "result")
        self.sessions: dict[str, S] = {}
        """The Session of each known session, the newest fold."""
        self.on_unfolded = on_unfolded
        """Told of each message the fold could not take (None: not told)."""
        self.permissions: dict[str, list[Any]] = {}
        """Session -> how each of its permission requests was answered (a
        ``PermissionDecision``), in order; known sessions only."""

    def decided(self, session_id: str, decision: Any) -> None:
        """Record how a permission request of ``session_id`` was answered
        (not for a session the client did not open)."""
        if session_id in self.sessions:
            self.permissions.setdefault(session_id, []).append(decision)

    def tool_call(self, session_id: str, tool_call_id: str) -> Any:
        """The folded state of a tool call (None: not known)."""
        calls: object = getattr(self.sessions.get(session_id), "tool_calls", None)
        if isinstance(calls, dict):
            return cast("dict[str, Any]", calls).get(tool_call_id)
        return None

    def _open(self, session_id: str | None) -> None:
        if session_id is not None and session_id not in self.sessions:
            self.sessions[session_id] = cast("S", self._class(session_id=session_id))

    def sending(self, method: str, params: Any) -> None:
        """The client is about to send a request to ``method`` (its params
        decoded, or JSON): a source of sessions by its params opens the
        session, a prompt is folded (v1)."""
        if method == PROMPT:
            apply_prompt = getattr(self._class, "apply_prompt", None)
            if apply_prompt is None:
                self._open(_session_id(params))
                return
            try:
                request = (
                    self._decode(PROMPT, params) if isinstance(params, dict) else params
                )
            except ValueError as error:
                # Not a prompt the fold can read; the agent will say so.
                if self.on_unfolded is not None:
                    self.on_unfolded(PROMPT, params, f"cannot decode: {error}")
                return
            session_id = _session_id(request)
            if session_id is not None:
                self.sessions[session_id] = apply_prompt(
                    self.sessions.get(session_id), request
                )
        elif method in self._params:
            self._open(_session_id(params))

    def answered(self, method: str, result: Any) -> None:
        """A request to ``method`` succeeded with ``result`` (JSON)."""
        if method in self._results:
            self._open(_session_id(result))

    def received(self, notification: Any) -> None:
        """Fold a ``session/update`` notification (decoded, or its params as
        JSON) into its session, when known (what :meth:`update_then` does
        before the handler, for a caller that reads the wire itself)."""
        session_id = _session_id(notification)
        if session_id is None or session_id not in self.sessions:
            return
        decoded = notification
        if isinstance(notification, dict):
            try:
                decoded = self._decode(UPDATE, notification)
            except ValueError as error:
                if self.on_unfolded is not None:
                    self.on_unfolded(UPDATE, notification, f"cannot decode: {error}")
                return
        try:
            self.sessions[session_id] = self._class.apply_session_update(
                self.sessions[session_id], decoded
            )
        except Exception as error:
            self._failed(session_id, notification, error)

    def _failed(self, session_id: str, notification: Any, error: Exception) -> None:
        """The fold of ``notification`` into ``session_id`` raised ``error``."""
        if self.on_unfolded is None:
            log.exception("could not fold a session/update into %s", session_id)
        else:
            self.on_unfolded(
                UPDATE,
                notification,
                f"cannot fold: {type(error).__name__}: {error}",
            )

    async def update_then(
        self, handler: Callable[[Any], Awaitable[None]] | None, notification: Any
    ) -> None:
        """Fold a decoded ``session/update`` notification into its session
        (when known), then hand it to ``handler``."""
        # :meth:`received` without its JSON case, inlined: a client folds
        # every update it reads here.
        session_id = _session_id(notification)
        if session_id is not None and session_id in self.sessions:
            try:
                self.sessions[session_id] = self._class.apply_session_update(
                    self.sessions[session_id], notification
                )
            except Exception as error:
                self._failed(session_id, notification, error)
        if handler is not None:
            await handler(notification)
