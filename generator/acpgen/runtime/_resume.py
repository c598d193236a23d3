"""Sessions that survive a dropped connection: the fixed part of the
generated ``SessionKeeper``, which keeps one session's ``Session`` fold
across connections.

The client connection folds the sessions it opened (``conn.sessions``); the
keeper follows the session's fold from one connection to the next. When the
connection drops, :meth:`~SessionKeeperBase.reconnect` opens a new one with
the factory it was given, initializes it and takes the session up again (the
generated subclass says how: ``session/load``, or ``session/resume`` with or
without a replay, as the schema and the agent offer). The fold stays exact
when the agent replays the session:

* A replay is folded into a fresh Session (the new connection's fold of the
  session starts empty), never into the one folded before, so nothing the
  agent sends again is applied twice.
* When the reply to the load or resume request arrives, every update the
  agent sent before it has been folded (the connection's ordering contract);
  the replayed Session then takes the place of the old one, reconciled with
  it: the conversation (``history`` and the fields with entries in it) is
  the replay's. Where messages and tool calls are keyed by their ids (v2),
  an entry the replay does not hold (history the agent no longer retains)
  is kept, before the replayed ones; where messages are keyed by their
  place (v1), the replay, which is the whole conversation, replaces it. Any
  other field is the replay's when the replay changed it, and stays as it
  was folded before otherwise.
* The new connection folds what comes after into the reconciled Session.

Without a replay (v1's ``session/resume``) the new connection folds on from
the Session folded before: nothing is applied twice, but what the agent sent
while no connection was open is lost, and nothing tells the client what it
was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, Generic, TypeVar

from ._connection import Connection
from ._session import HistoryEntryBase, SessionBase

__all__ = ["ResumeUnsupported", "SessionKeeperBase"]

_HISTORY = "history"

_C = TypeVar("_C", bound=Connection[Any])
_S = TypeVar("_S", bound=SessionBase)


class ResumeUnsupported(Exception):
    """The agent offers no way to take a session up again (neither
    ``session/load`` nor ``session/resume`` in its capabilities)."""


class SessionKeeperBase(Generic[_C, _S]):
    """One session's fold across connections. ``connect()`` returns a new,
    started client connection that folds its sessions; ``connection`` is the
    current one (None: none yet) and ``session`` the fold so far. With
    ``replay`` (the default) :meth:`reconnect` asks the agent to replay the
    session, which keeps the fold exact; without it, it resumes without a
    replay where the agent offers that (cheaper, but what was sent meanwhile
    is lost).

    The generated subclass sets the class attributes, ``_folds``,
    ``_resume`` and ``_build``."""

    FIELDS: ClassVar[tuple[str, ...]] = ()
    """The Session's fields, ``history`` first."""
    HISTORY_FIELDS: ClassVar[frozenset[str]] = frozenset()
    """The fields whose entities have entries in ``history``."""
    KEYED_BY_ID: ClassVar[bool] = False
    """Messages are keyed by their ids (v2), not by their place in the
    history (v1): a replayed entity replaces the one of the same key."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[_C]],
        session: _S,
        *,
        connection: _C | None = None,
        replay: bool = True,
    ) -> None:
        self.connect = connect
        self.connection = connection
        self.replay = replay
        self._session = session
        """The fold when no connection holds it."""
        self._replay: _S | None = None
        self._reconnecting = False
        self.method: str | None = None
        """The method the last :meth:`reconnect` resumed with."""
        self.replayed = False
        """Whether the agent replayed the session at the last :meth:`reconnect`
        (the fold is exact), or resumed without a replay."""

    @property
    def session_id(self) -> str:
        """The id of the session kept."""
        return self._session.session_id

    @property
    def session(self) -> _S:
        """The session folded so far: the current connection's fold (during
        a replay: as it was before the connection dropped)."""
        return self._session if self._replay is not None else self._current()

    @property
    def replaying(self) -> bool:
        """True while a replay is being folded (during :meth:`reconnect`)."""
        return self._replay is not None

    def _folds(self, connection: _C) -> dict[str, _S]:
        """The sessions ``connection`` folds (the generated subclass)."""
        raise NotImplementedError

    def _current(self) -> _S:
        """The newest fold: the current connection's, else the last known."""
        connection = self.connection
        if connection is not None:
            found = self._folds(connection).get(self.session_id)
            if found is not None:
                return found
        return self._session

    def _begin(
        self,
        connection: _C,
        method: str,
        replay: bool,
        new_session: Callable[[str], _S],
    ) -> None:
        """Called by ``_resume`` just before it sends ``method``: ``connection``
        folds the session from a new Session (``replay``), or from the one
        folded before. Raises ``ValueError`` when it folds no sessions."""
        self.method = method
        self.replayed = replay
        start = new_session(self.session_id) if replay else self._session
        self._folds(connection)[self.session_id] = start
        if self._folds(connection).get(self.session_id) is not start:
            raise ValueError(
                "the connection folds no sessions (fold_sessions=False): "
                "a SessionKeeper needs its folds"
            )
        self._replay = start if replay else None

    async def _resume(self, connection: _C) -> None:
        """Initialize ``connection`` and take the session up again on it (the
        generated subclass), calling :meth:`_begin` just before the request
        that resumes."""
        raise NotImplementedError

    async def reconnect(self) -> _C:
        """Open a new connection with ``connect()``, initialize it and resume
        the session on it; returns the connection (also ``connection``).

        The connection before, if any, is retired first: when its peer is
        gone, what it had read is still folded (its queued updates all, its
        request handlers get its ``grace`` seconds); when it is still open,
        it is closed. Raises
        :class:`ResumeUnsupported` when the agent offers no way to resume,
        and what initializing or resuming raised (``RequestError``,
        ``ConnectionError``); the new connection is closed then and the fold
        is as it was, as it is when the call is cancelled (``asyncio.wait_for``
        gives up on an agent that does not answer). Raises ``RuntimeError``
        while another reconnect of the session is under way."""
        if self._reconnecting:
            raise RuntimeError("a reconnect of this session is under way")
        self._reconnecting = True
        try:
            previous, self.connection = self.connection, None
            if previous is not None:
                await retire(previous)
                self._session = self._folds(previous).get(
                    self.session_id, self._session
                )
            connection = await self.connect()
            try:
                await self._resume(connection)
            except BaseException:
                self._replay = None
                with contextlib.suppress(Exception):
                    await connection.close()
                raise
            start, self._replay = self._replay, None
            folds = self._folds(connection)
            if start is not None:
                replayed = folds.get(self.session_id, start)
                folds[self.session_id] = self._reconcile(
                    self._session, replayed, start.changed_fields()
                )
            self._session = folds.get(self.session_id, self._session)
            self.connection = connection
            return connection
        finally:
            self._reconnecting = False

    async def close(self) -> None:
        """Close the current connection, if any (``session`` stays)."""
        connection = self.connection
        if connection is not None:
            self._session = self._current()
            self.connection = None
            await connection.close()

    def _reconcile(self, before: _S, replay: _S, changed: frozenset[str]) -> _S:
        """The Session to go on with after a replay that ``changed`` these
        fields: see the module's docstring."""
        fields: dict[str, Any] = {}
        history: list[HistoryEntryBase] = getattr(replay, _HISTORY)
        replayed = {(entry.field, entry.key) for entry in history}
        keyed = self.KEYED_BY_ID
        for name in self.FIELDS:
            new = getattr(replay, name)
            if name == _HISTORY:
                old: list[HistoryEntryBase] = getattr(before, name)
                kept = (
                    [e for e in old if (e.field, e.key) not in replayed]
                    if keyed
                    else []
                )
                fields[name] = [*kept, *new]
            elif name in self.HISTORY_FIELDS:
                if keyed:
                    entities: dict[str, Any] = getattr(before, name)
                    merged = {
                        k: v for k, v in entities.items() if (name, k) not in replayed
                    }
                    merged.update(new)
                    fields[name] = merged
                else:
                    fields[name] = new
            else:
                fields[name] = new if name in changed else getattr(before, name)
        return self._build(before.session_id, fields)

    def _build(self, session_id: str, fields: dict[str, Any]) -> _S:
        """A Session with these fields (the generated subclass)."""
        raise NotImplementedError


async def retire(connection: Connection[Any]) -> None:
    """Done with ``connection``: when nothing more is read from it, wait
    until what was read has been handled (the queued messages all, the
    request handlers for at most its ``grace`` seconds); then close it."""
    if connection.ended:
        with contextlib.suppress(Exception):
            await connection.run()
    await connection.close()
