"""Sessions that survive a dropped connection: the generated SessionKeeper.

Each test drops the client's connection in the middle of a streamed prompt
(after the client received ``k`` of its updates: the transport then closes,
as a network that goes away does: what the agent sends later never arrives),
reconnects, and compares the final Session with the one folded over the same
conversation without a drop. The agents keep their sessions beyond their
connections (as a remote agent does; the example agent over stdio keeps them
on disk), and their turns go on when the client is gone."""

from __future__ import annotations

import asyncio
import contextlib
import sys

import pytest

from ..conftest import ROOT, load_generated
from ..patience import HANG

acp = load_generated("acp_v1")
acp2 = load_generated("acp_v2")
TIMEOUT = HANG
TOOL_AT, DONE_AT, PLAN_AT = 2, 5, 4
"""Where in a v1 turn the agent starts a tool call, completes it and sends a plan."""


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


class Dropping:
    """A transport that goes away when a session/update comes after it
    delivered ``after`` of them: that one and the peer's later messages are
    never received, sends fail."""

    def __init__(self, inner, after: int) -> None:
        self.inner, self.after, self.seen, self.dropped = inner, after, 0, False

    async def receive(self):
        if self.dropped:
            return None
        data = await self.inner.receive()
        if data is not None and b'"session/update"' in data:
            if self.seen == self.after:  # goes away as the next one comes
                await self.close()
                return None
            self.seen += 1
        return data

    async def send(self, data: bytes) -> None:
        if self.dropped:
            raise ConnectionError("dropped")
        await self.inner.send(data)

    def is_closing(self) -> bool:
        return self.dropped or self.inner.is_closing()

    async def close(self) -> None:
        self.dropped = True
        await self.inner.close()


async def flush(conn) -> None:
    """A round trip: when it returns, every update sent before has been folded."""
    with contextlib.suppress(acp.RequestError, acp2.RequestError):
        await conn.request("_flush", {})


class Sessions:
    """The agent's sessions: their updates and the connection each streams to,
    beyond any one connection. A turn runs in a task of its own; with a
    ``hold`` it waits at that update for ``gate``."""

    def __init__(self, package, *, load=True, resume=True, hold=-1, hold_turn=1, retain=None) -> None:
        self.acp, self.load, self.resume, self.retain = package, load, resume, retain
        self.hold = (hold_turn, hold)
        self.logs: dict[str, list] = {}
        self.turn_starts: dict[str, list[int]] = {}
        self.live: dict[str, object] = {}
        self.turns: list[asyncio.Task] = []
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def send(self, session_id: str, update, live: bool = True) -> None:
        self.logs[session_id].append(update)
        conn = self.live.get(session_id)
        if live and conn is not None:
            with contextlib.suppress(ConnectionError):  # the client is gone: a replay gives it this
                await conn.session_update(self.note(session_id, update))

    def note(self, session_id: str, update):
        if self.acp is acp:
            return acp.SessionNotification(session_id=session_id, update=update)
        return acp2.UpdateSessionNotification(session_id=session_id, update=update)

    async def step(self, turn: int, index: int) -> None:
        if (turn, index) == self.hold:
            self.waiting.set()
            await self.gate.wait()
        await asyncio.sleep(0)

    async def replay(self, conn, session_id: str) -> None:
        """Send the session's updates (the retained ones) to ``conn``, then
        stream the turn going on to it: updates logged while replaying are
        replayed too, never sent twice."""
        log = self.logs[session_id]
        index = 0
        if self.retain is not None:
            starts = self.turn_starts[session_id]
            index = starts[-self.retain] if len(starts) >= self.retain else 0
        while index < len(log):
            await conn.session_update(self.note(session_id, log[index]))
            index += 1
        self.live[session_id] = conn


class V1Agent(acp.Agent):
    def __init__(self, conn, sessions: Sessions, words: int) -> None:
        self.conn, self.sessions, self.words = conn, sessions, words

    async def initialize(self, params):
        resume = acp.SessionResumeCapabilities() if self.sessions.resume else None
        capabilities = acp.AgentCapabilities(
            load_session=self.sessions.load, session_capabilities=acp.SessionCapabilities(resume=resume)
        )
        return acp.InitializeResponse(protocol_version=1, agent_capabilities=capabilities)

    async def new_session(self, params):
        session_id = f"s{len(self.sessions.logs)}"
        self.sessions.logs[session_id], self.sessions.turn_starts[session_id] = [], []
        self.sessions.live[session_id] = self.conn
        return acp.NewSessionResponse(session_id=session_id)

    async def prompt(self, params):
        turn = asyncio.ensure_future(self._turn(params, len(self.sessions.turns) + 1))  # goes on without the connection
        self.sessions.turns.append(turn)
        return await asyncio.shield(turn)

    async def _turn(self, params, number: int):
        sessions, session_id = self.sessions, params.session_id
        sessions.turn_starts[session_id].append(len(sessions.logs[session_id]))
        for block in params.prompt:  # the client folds its prompt itself: for a replay
            await sessions.send(session_id, acp.UserMessageChunkSessionUpdate(content=block), live=False)
        tool = f"t{number}"
        for index in range(self.words):
            await sessions.step(number, index)
            if index == TOOL_AT:
                await sessions.send(session_id, acp.ToolCallSessionUpdate(tool_call_id=tool, title=f"look {number}"))
            elif index == DONE_AT:
                update = acp.ToolCallUpdateSessionUpdate(tool_call_id=tool, status=acp.ToolCallStatus.COMPLETED)
                await sessions.send(session_id, update)
            elif index == PLAN_AT:
                entry = acp.PlanEntry(
                    content=f"plan {number}", priority=acp.PlanEntryPriority.HIGH, status=acp.PlanEntryStatus.PENDING
                )
                await sessions.send(session_id, acp.PlanSessionUpdate(entries=[entry]))
            text = acp.TextContentBlock(text=f"w{number}.{index} ")
            await sessions.send(session_id, acp.AgentMessageChunkSessionUpdate(content=text))
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    async def load_session(self, params):
        if params.session_id not in self.sessions.logs:
            raise acp.RequestError(-32602, "Invalid params", {"sessionId": "unknown"})
        await self.sessions.replay(self.conn, params.session_id)
        return acp.LoadSessionResponse()

    async def resume_session(self, params):
        self.sessions.live[params.session_id] = self.conn
        return acp.ResumeSessionResponse()


class Folder(acp.Client):
    """Folds its session's updates into ``box["session"]`` with the plain fold
    (the run without a drop compares with it; a keeper follows the
    connection's own fold)."""

    def __init__(self, conn, box: dict, package=acp) -> None:
        self.conn, self.box, self.acp = conn, box, package

    async def session_update(self, params) -> None:
        self.box["session"] = self.acp.apply_session_update(self.box.get("session"), params)


def memory_connect(package, make_agent, box: dict, drops: list[int]):
    """A factory of connections to agents made by ``make_agent`` over the
    memory pair; the i-th connection drops after ``drops[i]`` updates."""
    from importlib import import_module

    memory_pair = import_module(package.__name__ + "._transport").memory_pair

    async def connect():
        agent_end, client_end = memory_pair()
        after = drops.pop(0) if drops else None
        agent = package.AgentSideConnection(make_agent, agent_end)
        agent.start()
        transport = client_end if after is None else Dropping(client_end, after)
        client = package.ClientSideConnection(lambda c: Folder(c, box, package), transport)
        client.start()
        box.setdefault("clients", []).append(client)
        return client

    return connect


PROMPTS = ("one two", "three four")
WORDS = 8


@contextlib.asynccontextmanager
async def connector(via: str, package, make_agent, box: dict, drops: list[int]):
    """A factory of connections to agents made by ``make_agent`` over
    ``via``; the i-th connection drops after ``drops[i]`` updates."""
    if via == "memory":
        yield memory_connect(package, make_agent, box, drops)
        return
    # the agent served over WebSocket and Streamable HTTP on a loopback port
    ready = asyncio.get_running_loop().create_future()
    server = asyncio.ensure_future(package.serve_agent(make_agent, port=0, ready=ready.set_result))
    try:
        port = await asyncio.wait_for(ready, TIMEOUT)
        opener = {"ws": package.connect_agent_ws, "http": package.connect_agent_http}[via]
        async with contextlib.AsyncExitStack() as stack:

            async def connect():
                conn = await stack.enter_async_context(
                    opener(lambda c: Folder(c, box, package), f"{via}://127.0.0.1:{port}/acp")
                )
                if drops:
                    conn.transport = Dropping(conn.transport, drops.pop(0))
                return conn

            yield connect
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server


async def v1_conversation(
    drop: int | None, *, via="memory", replay=True, load=True, resume=True, hold=-1, wait_turn=True
):
    """The v1 conversation of PROMPTS over ``via``; the first prompt's
    connection drops after ``drop`` updates (None: no drop, the plain fold).
    Returns the final Session and the keeper."""
    sessions = Sessions(acp, load=load, resume=resume, hold=hold)
    if hold < 0:
        sessions.gate.set()
    box: dict = {}
    make_agent = lambda c: V1Agent(c, sessions, WORDS)  # noqa: E731
    async with connector(via, acp, make_agent, box, [] if drop is None else [drop]) as connect:
        conn = await connect()
        initialize = acp.InitializeRequest(protocol_version=1)
        await conn.initialize(initialize)
        session_id = (await conn.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))).session_id
        keeper = None
        if drop is not None:
            keeper = box["keeper"] = acp.SessionKeeper(
                connect, session_id, initialize=initialize, cwd="/", connection=conn, replay=replay
            )
        for text in PROMPTS:
            request = acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text=text)])
            if keeper is None:
                box["session"] = acp.apply_prompt(box.get("session"), request)
                sessions.gate.set()
                await conn.prompt(request)
                continue
            try:
                await keeper.connection.prompt(request)
            except ConnectionError:
                if hold >= 0:
                    await sessions.waiting.wait()  # the turn is under way at the agent
                elif wait_turn:
                    await sessions.turns[-1]  # the agent finished the turn meanwhile
                await keeper.reconnect()
                sessions.gate.set()
                await sessions.turns[-1]
                await flush(keeper.connection)
        if keeper is None:
            return box["session"], None
        return keeper.session, keeper


def texts(session, field="agent_messages") -> list[str]:
    return [
        "".join(b.text for b in getattr(session, field)[e.key].content) for e in session.history if e.field == field
    ]


def test_the_undropped_conversation_is_what_the_comparisons_compare_with():
    session, _ = run(v1_conversation(None))
    assert texts(session, "user_messages") == list(PROMPTS)
    # each turn: words before the tool call, then after it
    first = [f"w1.{i} " for i in range(WORDS)]
    assert texts(session)[:2] == ["".join(first[:TOOL_AT]), "".join(first[TOOL_AT:])]
    assert [c.status.value for c in session.tool_calls.values()] == ["completed", "completed"]
    assert session.plan[0].content == "plan 2"


@pytest.mark.parametrize("drop", [0, 1, TOOL_AT + 1, WORDS + 1, WORDS + 3])
def test_session_load_after_a_drop_mid_prompt_folds_exactly(drop):
    baseline, _ = run(v1_conversation(None))
    session, keeper = run(v1_conversation(drop))
    assert keeper.method == "session/load" and keeper.replayed
    assert session == baseline
    assert acp.session_to_json(session) == acp.session_to_json(baseline)


def test_session_load_while_the_turn_goes_on_streams_the_rest_live():
    """Reconnected while the agent's turn still runs: the replay has what was
    logged so far, the rest comes live on the new connection; none twice."""
    baseline, _ = run(v1_conversation(None))
    session, keeper = run(v1_conversation(2, hold=6))
    assert keeper.method == "session/load"
    assert session == baseline


@pytest.mark.parametrize("offer", ["replay=False", "no loadSession"])
def test_session_resume_goes_on_without_a_replay_and_loses_what_came_meanwhile(offer):
    # session/resume (asked for, or all the agent offers) replays nothing: the
    # fold goes on where it was; what the agent sent between the drop (after
    # 3 updates: words 0, 1 and the tool call) and the reconnect (the turn
    # held before word 6) is lost.
    options = {"replay": False} if offer == "replay=False" else {"load": False}
    session, keeper = run(v1_conversation(3, hold=6, **options))
    assert keeper.method == "session/resume" and not keeper.replayed
    first = [f"w1.{i} " for i in range(WORDS)]
    # word 2 and the plan at 4 came while disconnected (and the tool call's
    # completion at 5): lost, and nothing is doubled.
    assert texts(session)[:2] == ["".join(first[:2]), "".join(first[6:])]
    assert session.tool_calls["t1"].status is acp.ToolCallStatus.PENDING  # its completion came meanwhile
    assert texts(session, "user_messages") == list(PROMPTS)
    assert session.plan[0].content == "plan 2"  # the second turn's, live


def test_an_agent_that_cannot_resume_is_refused_and_the_fold_is_kept():
    async def scenario():
        sessions = Sessions(acp, load=False, resume=False)
        sessions.gate.set()
        box: dict = {}
        connect = memory_connect(acp, lambda c: V1Agent(c, sessions, WORDS), box, [])
        conn = await connect()
        initialize = acp.InitializeRequest(protocol_version=1)
        await conn.initialize(initialize)
        session_id = (await conn.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))).session_id
        keeper = box["keeper"] = acp.SessionKeeper(connect, session_id, initialize=initialize, cwd="/", connection=conn)
        request = acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text="hi")])
        await conn.prompt(request)
        before = keeper.session
        with pytest.raises(acp.ResumeUnsupported, match="neither session/load"):
            await keeper.reconnect()
        assert keeper.session is before and keeper.connection is None and not keeper.replaying
        assert box["clients"][-1].ended  # the new connection was closed
        assert len(texts(before)) == 2

    run(scenario())


def test_a_replay_that_fails_leaves_the_fold_as_it_was():
    async def scenario():
        sessions = Sessions(acp)
        sessions.gate.set()
        box: dict = {}
        connect = memory_connect(acp, lambda c: V1Agent(c, sessions, WORDS), box, [])
        conn = await connect()
        initialize = acp.InitializeRequest(protocol_version=1)
        await conn.initialize(initialize)
        await conn.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
        keeper = box["keeper"] = acp.SessionKeeper(connect, "gone", initialize=initialize, cwd="/", connection=conn)
        with pytest.raises(acp.RequestError):
            await keeper.reconnect()
        assert keeper.session == acp.Session("gone") and keeper.connection is None
        assert keeper.method == "session/load" and not keeper.replaying

    run(scenario())


# ---------------------------------------------------------------- v2


class V2Agent(acp2.Agent):
    """Answers session/prompt at once with the user message's id and runs the
    turn in a task; session/resume replays what it retains (``retain``: the
    last turns) and reports the current state before answering."""

    def __init__(self, conn, sessions: Sessions, words: int) -> None:
        self.conn, self.sessions, self.words = conn, sessions, words

    async def initialize(self, params):
        return acp2.InitializeResponse(
            protocol_version=2,
            info=acp2.Implementation(name="keeper-test", version="1"),
            capabilities=acp2.AgentCapabilities(session=acp2.SessionCapabilities()),
        )

    async def new_session(self, params):
        session_id = f"s{len(self.sessions.logs)}"
        self.sessions.logs[session_id], self.sessions.turn_starts[session_id] = [], []
        self.sessions.live[session_id] = self.conn
        return acp2.NewSessionResponse(session_id=session_id)

    async def prompt(self, params):
        number = len(self.sessions.turns) + 1
        self.sessions.turns.append(asyncio.ensure_future(self._turn(params, number)))
        return acp2.PromptResponse(message_id=f"u{number}")

    async def _turn(self, params, number: int) -> None:
        sessions, session_id = self.sessions, params.session_id
        sessions.turn_starts[session_id].append(len(sessions.logs[session_id]))
        await sessions.send(session_id, acp2.UserMessageSessionUpdate(message_id=f"u{number}", content=params.prompt))
        await sessions.send(session_id, acp2.StateUpdateSessionUpdate(value=acp2.StateUpdateRunning()))
        for index in range(self.words):
            await sessions.step(number, index)
            if index == TOOL_AT:
                update = acp2.ToolCallUpdateSessionUpdate(tool_call_id=f"t{number}", title=f"look {number}")
                await sessions.send(session_id, update)
            elif index == DONE_AT:
                update = acp2.ToolCallUpdateSessionUpdate(
                    tool_call_id=f"t{number}", status=acp2.ToolCallStatus.COMPLETED
                )
                await sessions.send(session_id, update)
            text = acp2.TextContentBlock(text=f"w{number}.{index} ")
            chunk = acp2.AgentMessageChunkSessionUpdate(message_id=f"a{number}", content=text)
            await sessions.send(session_id, chunk)
        idle = acp2.StateUpdateIdle(value=acp2.EndTurnIdleStateUpdate())
        await sessions.send(session_id, acp2.StateUpdateSessionUpdate(value=idle))

    async def resume_session(self, params):
        sessions, session_id = self.sessions, params.session_id
        if params.replay_from is acp2.UNSET or params.replay_from is None:
            sessions.live[session_id] = self.conn
        else:
            await sessions.replay(self.conn, session_id)
        running = any(not turn.done() for turn in sessions.turns)
        state = acp2.StateUpdateRunning() if running else acp2.StateUpdateIdle(value=acp2.EndTurnIdleStateUpdate())
        await self.conn.session_update(
            acp2.UpdateSessionNotification(session_id=session_id, update=acp2.StateUpdateSessionUpdate(value=state))
        )
        return acp2.ResumeSessionResponse()


async def v2_conversation(drop: int | None, *, via="memory", hold=-1, retain=None, drop_turn=1):
    """The v2 conversation of PROMPTS over ``via``; turn ``drop_turn`` goes
    over a connection that drops after ``drop`` updates (None: no drop, the
    plain fold). Returns the final Session and the keeper."""
    sessions = Sessions(acp2, hold=hold, hold_turn=drop_turn, retain=retain)
    if hold < 0:
        sessions.gate.set()
    box: dict = {}
    drops = [] if drop is None else [drop]
    make_agent = lambda c: V2Agent(c, sessions, WORDS)  # noqa: E731
    async with connector(via, acp2, make_agent, box, []) as connect:
        conn = await connect()
        initialize = acp2.InitializeRequest(protocol_version=2, info=acp2.Implementation(name="test", version="1"))
        await conn.initialize(initialize)
        session_id = (await conn.new_session(acp2.NewSessionRequest(cwd="/", mcp_servers=[]))).session_id
        keeper = None
        if drop is not None:
            keeper = box["keeper"] = acp2.SessionKeeper(
                connect, session_id, initialize=initialize, cwd="/", connection=conn
            )
        for number, text in enumerate(PROMPTS, 1):
            request = acp2.PromptRequest(session_id=session_id, prompt=[acp2.TextContentBlock(text=text)])
            current = conn if keeper is None else keeper.connection
            if keeper is not None and number == drop_turn:
                # this turn's updates go over a connection that drops
                current.transport = Dropping(current.transport, drops.pop())
            await current.prompt(request)
            if keeper is not None and number == drop_turn:
                if hold >= 0:
                    await sessions.waiting.wait()
                else:
                    await sessions.turns[-1]
                await keeper.reconnect()
            sessions.gate.set()
            await sessions.turns[-1]
            await flush(conn if keeper is None else keeper.connection)
            if drop is None:
                sessions.gate.clear()  # the baseline holds nowhere: set again at the next prompt
        return (box["session"] if keeper is None else keeper.session), keeper


@pytest.mark.parametrize("drop", [1, TOOL_AT + 2, WORDS + 2])
def test_v2_resume_with_replay_after_a_drop_mid_prompt_folds_exactly(drop):
    baseline, _ = run(v2_conversation(None))
    session, keeper = run(v2_conversation(drop, drop_turn=2))
    assert keeper.method == "session/resume" and keeper.replayed
    assert session == baseline
    assert [e.key for e in session.history] == [e.key for e in baseline.history]
    assert isinstance(session.state, acp2.StateUpdateIdle)


def test_v2_resume_while_the_turn_goes_on_streams_the_rest_live():
    baseline, _ = run(v2_conversation(None))
    session, _ = run(v2_conversation(3, hold=5, drop_turn=2))
    assert session == baseline


def test_v2_history_the_agent_no_longer_retains_is_kept_from_the_fold():
    """The agent replays only the last turn: the first one, folded before the
    drop, keeps its place before the replayed entries."""
    baseline, _ = run(v2_conversation(None))
    session, _ = run(v2_conversation(4, retain=1, drop_turn=2))
    assert session == baseline
    assert [e.key for e in session.history][:3] == ["u1", "a1", "t1"]


# ---------------------------------------------------------------- WebSocket and Streamable HTTP


@pytest.mark.parametrize("via", ["ws", "http"])
@pytest.mark.parametrize("drop", [1, WORDS + 1])
def test_session_load_over_the_network_after_a_drop_mid_prompt_folds_exactly(via, drop):
    baseline, _ = run(v1_conversation(None, via=via))
    session, keeper = run(v1_conversation(drop, via=via))
    assert keeper.method == "session/load" and keeper.replayed
    assert session == baseline


@pytest.mark.parametrize("via", ["ws", "http"])
def test_session_load_over_the_network_while_the_turn_goes_on(via):
    baseline, _ = run(v1_conversation(None, via=via))
    session, _ = run(v1_conversation(2, via=via, hold=6))
    assert session == baseline


@pytest.mark.parametrize("via", ["ws", "http"])
def test_v2_resume_over_the_network_after_a_drop_mid_prompt_folds_exactly(via):
    baseline, _ = run(v2_conversation(None, via=via))
    session, keeper = run(v2_conversation(3, via=via, hold=5, drop_turn=2))
    assert keeper.method == "session/resume" and keeper.replayed
    assert session == baseline


# ---------------------------------------------------------------- stdio


EXAMPLE = ROOT / "examples" / "resumable_agent.py"


async def stdio_conversation(agent: list[str], drop: int | None):
    """The agent ``agent`` (a command) as a subprocess; a dropped connection
    ends its process (stdin closes), and the client reconnects to a new one,
    which loads the session from the agent's log. Returns the final fold's
    snapshot, the keeper's method and the first process's exit status."""
    from acp_v1._connection import spawn_connection

    box: dict = {}
    drops = [] if drop is None else [drop]
    async with contextlib.AsyncExitStack() as stack:

        async def connect():
            after = drops.pop(0) if drops else None

            def make(transport):
                wrapped = transport if after is None else Dropping(transport, after)
                return acp.ClientSideConnection(lambda c: Folder(c, box), wrapped)

            spawned = spawn_connection(make, agent[0], agent[1:])
            return await stack.enter_async_context(spawned)

        conn = await connect()
        initialize = acp.InitializeRequest(protocol_version=1)
        await conn.initialize(initialize)
        session_id = (await conn.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))).session_id
        keeper = box["keeper"] = acp.SessionKeeper(connect, session_id, initialize=initialize, cwd="/", connection=conn)
        for text in ("one two three four five six", "seven eight"):
            request = acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text=text)])
            try:
                await keeper.connection.prompt(request)
            except ConnectionError:
                await asyncio.wait_for(keeper.connection.process.wait(), TIMEOUT)  # it logged its turn and exited
                await keeper.reconnect()
        snapshot = acp.session_to_json(keeper.session)
        return snapshot, keeper.method, conn.process.returncode


@pytest.mark.parametrize("drop", [2, 6])
def test_session_load_over_stdio_after_a_drop_mid_prompt_folds_exactly(tmp_path, drop):
    baseline, method, _ = run(stdio_conversation([sys.executable, str(EXAMPLE), str(tmp_path / "baseline")], None))
    assert method is None
    snapshot, method, returncode = run(
        stdio_conversation([sys.executable, str(EXAMPLE), str(tmp_path / "dropped")], drop)
    )
    assert method == "session/load" and returncode == 0
    for value in (baseline, snapshot):
        assert value.pop("sessionId")
    assert snapshot == baseline
    agent = [m["content"] for m in snapshot["agentMessages"].values()]
    assert ["".join(b["text"] for b in c) for c in agent] == ["one two three four five six ", "seven eight "]


def test_a_session_says_which_fields_the_folds_after_it_changed():
    first = acp.Session("s")
    entry = acp.PlanEntry(content="p", priority=acp.PlanEntryPriority.LOW, status=acp.PlanEntryStatus.PENDING)
    planned = acp.apply_session_update(
        first, acp.SessionNotification(session_id="s", update=acp.PlanSessionUpdate(entries=[entry]))
    )
    text = acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text="hi"))
    newest = acp.apply_session_update(planned, acp.SessionNotification(session_id="s", update=text))
    assert first.changed_fields() == {"plan", "agent_messages"}
    assert planned.changed_fields() == {"agent_messages"}
    assert newest.changed_fields() == frozenset()
