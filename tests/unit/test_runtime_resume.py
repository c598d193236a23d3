"""The reconnect runtime (``_resume``) on its own: how a replayed Session is
reconciled with the fold before it, how the connection before is retired,
and ``Connection.ended``. The generated SessionKeeper over real agents is
tested in tests/e2e/test_resume.py."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any, ClassVar

from acpgen.runtime import _resume as resume
from acpgen.runtime._session import HistoryEntryBase

from .test_connection_runtime import Echo, run, send, socket_peer


@dataclass(slots=True, frozen=True)
class Message(HistoryEntryBase):
    field: ClassVar[str] = "messages"


@dataclass(slots=True, frozen=True)
class Call(HistoryEntryBase):
    field: ClassVar[str] = "calls"


class Fake:
    """A stand-in for a generated Session: the fields the keeper reads."""

    def __init__(self, session_id: str, **fields: Any) -> None:
        self.session_id = session_id
        self.history: list[HistoryEntryBase] = fields.get("history", [])
        self.messages: dict[str, str] = fields.get("messages", {})
        self.calls: dict[str, str] = fields.get("calls", {})
        self.plan: list[str] = fields.get("plan", [])
        self.mode: str | None = fields.get("mode")


class Link:
    """A stand-in for a client connection: the sessions it folds."""

    def __init__(self, folds: bool = True) -> None:
        self.folds = folds
        self.kept: dict[str, Any] = {}
        self.closed = False

    @property
    def sessions(self) -> dict[str, Any]:
        return self.kept if self.folds else {}

    async def close(self) -> None:
        self.closed = True


def keeper(keyed: bool = True) -> Any:
    class Keeper(resume.SessionKeeperBase[Any, Any]):
        FIELDS = ("history", "messages", "calls", "plan", "mode")
        HISTORY_FIELDS = frozenset({"messages", "calls"})
        KEYED_BY_ID = keyed

        def _folds(self, connection: Any) -> dict[str, Any]:
            return connection.sessions

        def _build(self, session_id: str, fields: dict[str, Any]) -> Any:
            return Fake(session_id, **fields)

    async def connect() -> Any:
        raise AssertionError("not reconnected here")

    return Keeper(connect, Fake("s"))


BEFORE = Fake(
    "s",
    history=[Message("m1"), Call("c1"), Message("m2")],
    messages={"m1": "hello", "m2": "half"},
    calls={"c1": "pending"},
    plan=["old"],
    mode="ask",
)
REPLAY = Fake(
    "s",
    history=[Message("m2"), Call("c2")],
    messages={"m2": "half and the rest"},
    calls={"c2": "done"},
    plan=[],
)


def test_keyed_by_id_an_entry_the_replay_lacks_keeps_its_place_before_the_replayed_ones():
    merged = keeper(True)._reconcile(BEFORE, REPLAY, frozenset({"plan", "messages", "calls"}))
    assert merged.history == [Message("m1"), Call("c1"), Message("m2"), Call("c2")]
    assert merged.messages == {"m1": "hello", "m2": "half and the rest"}
    assert merged.calls == {"c1": "pending", "c2": "done"}
    assert merged.plan == []  # the replay set it (empty): the replay's
    assert merged.mode == "ask"  # the replay did not set it: as folded before
    assert merged.session_id == "s"


def test_keyed_by_place_the_replay_is_the_whole_conversation():
    merged = keeper(False)._reconcile(BEFORE, REPLAY, frozenset({"messages", "calls"}))
    assert merged.history == REPLAY.history
    assert merged.messages == REPLAY.messages and merged.calls == REPLAY.calls
    assert merged.plan == ["old"] and merged.mode == "ask"


def test_the_new_connection_folds_from_a_fresh_session_for_a_replay_else_from_the_fold():
    made = keeper()
    link = Link()
    made._begin(link, "session/load", True, lambda session_id: Fake(session_id, mode="fresh"))
    assert link.kept["s"].mode == "fresh" and link.kept["s"] is not made._session
    assert made.replaying and made.method == "session/load" and made.replayed
    assert made.session_id == "s"
    other = Link()
    made._begin(other, "session/resume", False, lambda session_id: Fake(session_id))
    assert other.kept["s"] is made._session and not made.replaying and not made.replayed


def test_the_session_is_the_connections_fold_except_during_a_replay():
    made = keeper()
    first = made.session
    assert first.session_id == "s"  # no connection: the fold it was given
    link = Link()
    made.connection = link
    link.kept["s"] = newer = Fake("s", mode="newer")
    assert made.session is newer  # the current connection's fold
    made._begin(link, "session/load", True, lambda session_id: Fake(session_id, mode="replayed"))
    assert made.replaying and link.kept["s"].mode == "replayed"
    assert made.session is first  # during the replay: as it was before


def test_a_connection_that_folds_no_sessions_is_refused():
    made = keeper()
    try:
        made._begin(Link(folds=False), "session/load", True, lambda session_id: Fake(session_id))
    except ValueError as error:
        assert "fold_sessions=False" in str(error)
    else:
        raise AssertionError("accepted a connection without folds")


def test_retire_handles_what_was_read_before_it_closes():
    async def main() -> list[Any]:
        conn, _, writer = await socket_peer(Echo)
        handler: Echo = conn.handler
        handler.note_gate = asyncio.Event()
        assert not conn.ended
        await send(writer, *({"jsonrpc": "2.0", "method": "note", "params": {"n": n}} for n in range(3)))
        writer.close()
        while not conn.ended:
            await asyncio.sleep(0.01)
        asyncio.get_running_loop().call_later(0.05, handler.note_gate.set)
        await resume.retire(conn)
        assert conn.ended
        return handler.calls

    assert run(main()) == [("note", {"n": n}) for n in range(3)]


def test_retire_closes_a_connection_still_open():
    async def main() -> None:
        conn, reader, _ = await socket_peer(Echo)
        await resume.retire(conn)
        assert conn.ended
        assert await reader.read() == b""  # closed: the peer reads the end

    run(main())


def test_a_reconnect_cancelled_or_failing_leaves_the_fold_and_allows_the_next():
    async def main() -> None:
        made = keeper()
        started = asyncio.Event()
        stuck = Link()

        async def connect() -> Any:
            return stuck

        async def resume_forever(connection: Any) -> None:
            made._begin(connection, "session/resume", True, lambda session_id: Fake(session_id))
            started.set()
            await asyncio.Event().wait()  # an agent that never answers

        made.connect = connect
        made._resume = resume_forever
        before = made._session
        task = asyncio.ensure_future(made.reconnect())
        await started.wait()
        try:
            await made.reconnect()
        except RuntimeError as error:
            assert "under way" in str(error)
        else:
            raise AssertionError("a second reconnect ran")
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert stuck.closed and made._session is before and not made.replaying
        assert made.connection is None and not made._reconnecting

    run(main())
