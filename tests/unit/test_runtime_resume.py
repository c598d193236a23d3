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


def keeper(keyed: bool, touched: set[str]) -> Any:
    class Keeper(resume.SessionKeeperBase[Any, Any]):
        FIELDS = ("history", "messages", "calls", "plan", "mode")
        HISTORY_FIELDS = frozenset({"messages", "calls"})
        KEYED_BY_ID = keyed

        def _build(self, session_id: str, fields: dict[str, Any]) -> Any:
            return Fake(session_id, **fields)

    async def connect() -> Any:
        raise AssertionError("not reconnected here")

    made = Keeper(connect, Fake("s"))
    made._touched = set(touched)
    return made


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
    merged = keeper(True, {"plan", "messages", "calls"})._reconcile(BEFORE, REPLAY)
    assert merged.history == [Message("m1"), Call("c1"), Message("m2"), Call("c2")]
    assert merged.messages == {"m1": "hello", "m2": "half and the rest"}
    assert merged.calls == {"c1": "pending", "c2": "done"}
    assert merged.plan == []  # the replay set it (empty): the replay's
    assert merged.mode == "ask"  # the replay did not set it: as folded before
    assert merged.session_id == "s"


def test_keyed_by_place_the_replay_is_the_whole_conversation():
    merged = keeper(False, {"messages", "calls"})._reconcile(BEFORE, REPLAY)
    assert merged.history == REPLAY.history
    assert merged.messages == REPLAY.messages and merged.calls == REPLAY.calls
    assert merged.plan == ["old"] and merged.mode == "ask"


def test_a_fold_goes_into_the_replay_while_one_runs_and_records_the_field():
    made = keeper(True, set())

    def fold(session: Fake, value: str) -> Fake:
        return Fake(session.session_id, plan=[*session.plan, value])

    made._apply(fold, "live", "plan")
    assert made._session.plan == ["live"] and not made.replaying
    made._begin("session/resume", True, lambda session_id: Fake(session_id))
    made._apply(fold, "replayed", "plan")
    assert made.replaying and made._session.plan == ["live"]
    assert made._replay.plan == ["replayed"] and made._touched == {"plan"}
    assert made.method == "session/resume" and made.replayed
    made._begin("session/resume", False, lambda session_id: Fake(session_id))
    assert not made.replaying and not made._touched


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
        made = keeper(True, set())
        started = asyncio.Event()
        closed: list[bool] = []

        class Stuck:
            async def close(self) -> None:
                closed.append(True)

        async def connect() -> Any:
            return Stuck()

        async def resume_forever(connection: Any) -> None:
            made._begin("session/resume", True, lambda session_id: Fake(session_id))
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
        assert closed == [True] and made._session is before and not made.replaying
        assert made.connection is None and not made._reconnecting

    run(main())
