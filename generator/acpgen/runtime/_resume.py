"""Sessions that survive a dropped connection: the fixed part of the
generated ``SessionKeeper``, which keeps one session's ``Session`` fold
across connections.

The client's handler hands every ``session/update`` of the session to
:meth:`SessionKeeperBase.apply` (and, in v1, each prompt it sends to
``apply_prompt``); when the connection drops, :meth:`~SessionKeeperBase.reconnect`
opens a new one with the factory it was given, initializes it and takes the
session up again (the generated subclass says how: ``session/load``, or
``session/resume`` with or without a replay, as the schema and the agent
offer). The fold stays exact when the agent replays the session:

* A replay is folded into a fresh Session, never into the one folded
  before, so nothing the agent sends again is applied twice.
* When the reply to the load or resume request arrives, every update the
  agent sent before it has been folded (the connection's ordering contract);
  the replayed Session then takes the place of the old one, reconciled with
  it: the conversation (``history`` and the fields with entries in it) is
  the replay's. Where messages and tool calls are keyed by their ids (v2),
  an entry the replay does not hold (history the agent no longer retains)
  is kept, before the replayed ones; where messages are keyed by their
  place (v1), the replay, which is the whole conversation, replaces it. Any
  other field is the replay's when the replay set it, and stays as it was
  folded before otherwise.
* Updates arriving after that are folded into the reconciled Session.

Without a replay (v1's ``session/resume``) the fold goes on from where it
was: nothing is applied twice, but what the agent sent while no connection
was open is lost, and nothing tells the client what it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
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
    started connection whose handler passes the session's updates to
    :meth:`apply`; ``session`` is the fold so far, ``connection`` the
    connection it came over (None: none yet). With ``replay`` (the default)
    :meth:`reconnect` asks the agent to replay the session, which keeps the
    fold exact; without it, it resumes without a replay where the agent
    offers that (cheaper, but what was sent meanwhile is lost).

    The generated subclass sets the class attributes and ``_resume``."""

    FIELDS: ClassVar[tuple[str, ...]] = ()
    """The Session's fields, ``history`` first."""
    HISTORY_FIELDS: ClassVar[frozenset[str]] = frozenset()
    """The fields whose entities have entries in ``history``."""
    KEYED_BY_ID: ClassVar[bool] = False
    """Messages are keyed by their ids (v2), not by their place in the
    history (v1): a replayed entity replaces the one of the same key."""
    UPDATE_FIELDS: ClassVar[Mapping[type, str]] = {}
    """The Session field each update class changes."""

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
        self._replay: _S | None = None
        self._touched: set[str] = set()
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
    def replaying(self) -> bool:
        """True while a replay is being folded (during :meth:`reconnect`)."""
        return self._replay is not None

    def _apply(
        self, fold: Callable[[_S, Any], _S], message: Any, field: str | None
    ) -> None:
        """Fold ``message`` with ``fold`` into the replay while one runs, else
        into the session; ``field`` is the field it changes."""
        replay = self._replay
        if replay is None:
            self._session = fold(self._session, message)
            return
        self._replay = fold(replay, message)
        if field is not None:
            self._touched.add(field)

    def _begin(
        self, method: str, replay: bool, new_session: Callable[[str], _S]
    ) -> None:
        """Called by ``_resume`` just before it sends ``method``: with
        ``replay``, what arrives from now on is folded into a new Session."""
        self.method = method
        self.replayed = replay
        self._touched.clear()
        self._replay = new_session(self.session_id) if replay else None

    async def _resume(self, connection: _C) -> None:
        """Initialize ``connection`` and take the session up again on it (the
        generated subclass), calling :meth:`_begin` just before the request
        that resumes."""
        raise NotImplementedError

    async def reconnect(self) -> _C:
        """Open a new connection with ``connect()``, initialize it and resume
        the session on it; returns the connection (also ``connection``).

        The connection before, if any, is retired first: when its peer is
        gone, what it had read is still folded (for at most its ``grace``
        seconds); when it is still open, it is closed. Raises
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
            connection = await self.connect()
            try:
                await self._resume(connection)
            except BaseException:
                self._replay = None
                self._touched.clear()
                with contextlib.suppress(Exception):
                    await connection.close()
                raise
            replay = self._replay
            if replay is not None:
                self._session = self._reconcile(self._session, replay)
                self._replay = None
            self.connection = connection
            return connection
        finally:
            self._reconnecting = False

    async def close(self) -> None:
        """Close the current connection, if any."""
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.close()

    def _reconcile(self, before: _S, replay: _S) -> _S:
        """The Session to go on with after a replay: see the module's docstring."""
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
                fields[name] = new if name in self._touched else getattr(before, name)
        return self._build(before.session_id, fields)

    def _build(self, session_id: str, fields: dict[str, Any]) -> _S:
        """A Session with these fields (the generated subclass)."""
        raise NotImplementedError


async def retire(connection: Connection[Any]) -> None:
    """Done with ``connection``: when nothing more is read from it, wait
    until what was read has been handled (at most its ``grace`` seconds);
    then close it."""
    if connection.ended:
        with contextlib.suppress(Exception):
            await connection.run()
    await connection.close()
