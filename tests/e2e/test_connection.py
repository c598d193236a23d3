"""The generated connection over real asyncio streams (socket pairs), and
the echo examples as real subprocesses."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import random
import socket
import subprocess
import sys

import pytest

from ..conftest import ROOT, SCHEMAS, load_generated
from ..patience import HANG
from ..unit.gated_writer import GatedWriter

acp = load_generated("acp_v1")
TIMEOUT = HANG


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


async def streams():
    left, right = socket.socketpair()
    return await asyncio.open_connection(sock=left), await asyncio.open_connection(sock=right)


async def connect(make_agent, make_client, package=acp):
    (agent_reader, agent_writer), (client_reader, client_writer) = await streams()
    agent = package.AgentSideConnection(
        make_agent, agent_reader, agent_writer, validate_outgoing=True, require_initialize=False
    )
    client = package.ClientSideConnection(
        make_client, client_reader, client_writer, validate_outgoing=True, require_initialize=False
    )
    agent.start()
    client.start()
    return agent, client


async def raw_agent(make_agent):
    """An agent connection and the raw streams of its peer."""
    (agent_reader, agent_writer), peer = await streams()
    agent = acp.AgentSideConnection(make_agent, agent_reader, agent_writer, require_initialize=False)
    agent.start()
    return agent, peer


async def exchange(peer, message) -> dict:
    reader, writer = peer
    writer.write(message if isinstance(message, bytes) else (json.dumps(message) + "\n").encode())
    await writer.drain()
    return json.loads(await reader.readline())


class Agent(acp.Agent):
    def __init__(self, conn):
        self.conn = conn
        self.running = 0
        self.most = 0
        self.release = asyncio.Event()
        self.cancelled: list[str] = []

    async def new_session(self, params):
        self.running += 1
        self.most = max(self.most, self.running)
        await self.release.wait()
        await asyncio.sleep(random.random() / 100)
        self.running -= 1
        return acp.NewSessionResponse(session_id="s-" + params.cwd)

    async def prompt(self, params):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.append(params.session_id)
            raise

    async def load_session(self, params):
        raise RuntimeError("disk on fire")

    async def set_session_mode(self, params):
        raise acp.RequestError(-32002, "Resource not found", {"sessionId": params.session_id})


class Client(acp.Client):
    def __init__(self, conn):
        self.conn = conn
        self.updates = []
        self.cancelled = asyncio.Event()

    async def session_update(self, params):
        self.updates.append(params)

    async def request_permission(self, params):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


def new_session(cwd: str):
    return acp.NewSessionRequest(cwd=cwd, mcp_servers=[])


def test_many_requests_in_flight_are_answered_each_with_its_own_result():
    async def main():
        agent, client = await connect(Agent, Client)
        calls = [asyncio.create_task(client.new_session(new_session(f"/w/{i}"))) for i in range(30)]
        while agent.handler.running < 30:
            await asyncio.sleep(0.01)
        agent.handler.release.set()
        results = await asyncio.gather(*calls)
        assert [r.session_id for r in results] == [f"s-/w/{i}" for i in range(30)]
        assert isinstance(results[0], acp.NewSessionResponse)
        assert agent.handler.most == 30
        await client.close()

    run(main())


def test_unknown_and_unimplemented_methods_answer_method_not_found():
    async def main():
        _agent, client = await connect(Agent, Client)
        for method, params in [
            ("_zed/unknown", {}),  # an extension the agent does not handle
            ("authenticate", {"methodId": "m"}),  # an agent method this agent does not implement
            ("fs/read_text_file", {"sessionId": "s", "path": "/a"}),  # a client method, sent to the agent
            ("no/such", None),
        ]:
            with pytest.raises(acp.RequestError) as caught:
                await client.request(method, params)
            assert caught.value.code == -32601, method
        await client.close()

    run(main())


def test_invalid_params_answer_minus_32602_with_the_path():
    async def main():
        _agent, client = await connect(Agent, Client)
        with pytest.raises(acp.RequestError) as caught:
            await client.request("session/new", {"cwd": 5, "mcpServers": []})
        assert caught.value.code == -32602
        assert caught.value.data["path"] == "$.params.cwd"
        await client.close()

    run(main())


def test_handler_errors_answer_internal_error_or_the_error_raised():
    async def main():
        agent, client = await connect(Agent, Client)
        with pytest.raises(acp.RequestError) as caught:
            await client.load_session(acp.LoadSessionRequest(session_id="s", cwd="/", mcp_servers=[]))
        assert caught.value.code == -32603 and "disk on fire" in caught.value.data
        with pytest.raises(acp.RequestError) as caught:
            await client.set_session_mode(acp.SetSessionModeRequest(session_id="s9", mode_id="m"))
        assert (caught.value.code, caught.value.data) == (-32002, {"sessionId": "s9"})
        # The connection still serves.
        agent.handler.release.set()
        assert (await client.new_session(new_session("/x"))).session_id == "s-/x"
        await client.close()

    run(main())


def test_a_bad_line_does_not_stop_the_loop():
    async def main():
        agent, peer = await raw_agent(Agent)
        agent.handler.release.set()
        answer = await exchange(peer, b"{this is not json\n")
        assert answer == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        answer = await exchange(peer, {"id": 1, "method": "session/new", "params": {}})  # no "jsonrpc"
        assert (answer["id"], answer["error"]["code"], answer["error"]["data"]["path"]) == (1, -32600, "$.jsonrpc")
        answer = await exchange(peer, {"jsonrpc": "2.0", "id": [1], "method": "session/new"})
        assert (answer["id"], answer["error"]["code"]) == (None, -32600)
        answer = await exchange(
            peer, {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/a", "mcpServers": []}}
        )
        assert answer == {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s-/a"}}
        await agent.close()

    run(main())


def test_cancel_request_from_the_client_cancels_the_agent_handler():
    async def main():
        agent, peer = await raw_agent(Agent)
        _reader, writer = peer
        request = {
            "jsonrpc": "2.0",
            "id": "p1",
            "method": "session/prompt",
            "params": {"sessionId": "s1", "prompt": []},
        }
        writer.write((json.dumps(request) + "\n").encode())
        while "p1" not in agent._answering:
            await asyncio.sleep(0.01)
        answer = await exchange(peer, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "p1"}})
        # A cancelled prompt ends its turn "cancelled" (CANCELLATION); a
        # request without such an answer is answered -32800.
        assert answer == {"jsonrpc": "2.0", "id": "p1", "result": {"stopReason": "cancelled"}}
        assert agent.handler.cancelled == ["s1"]
        request = {"jsonrpc": "2.0", "id": "n1", "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
        writer.write((json.dumps(request) + "\n").encode())
        while "n1" not in agent._answering:
            await asyncio.sleep(0.01)
        answer = await exchange(peer, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "n1"}})
        assert answer == {"jsonrpc": "2.0", "id": "n1", "error": {"code": -32800, "message": "Request cancelled"}}
        await agent.close()

    run(main())


def test_cancelling_an_awaiting_task_sends_cancel_request_both_ways():
    async def main():
        agent, client = await connect(Agent, Client)
        # client -> agent
        task = asyncio.create_task(client.prompt(acp.PromptRequest(session_id="s2", prompt=[])))
        while not agent._answering:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        while agent.handler.cancelled != ["s2"]:
            await asyncio.sleep(0.01)
        # agent -> client
        options = [acp.PermissionOption(option_id="o", name="Allow", kind=acp.PermissionOptionKind.ALLOW_ONCE)]
        call = acp.ToolCallUpdate(tool_call_id="t")
        asking = asyncio.create_task(
            agent.request_permission(acp.RequestPermissionRequest(session_id="s2", tool_call=call, options=options))
        )
        while not client._answering:
            await asyncio.sleep(0.01)
        asking.cancel()
        await asyncio.wait_for(client.handler.cancelled.wait(), 5)
        assert not client._answering or all(t.done() for t in client._answering.values())
        await client.close()

    run(main())


def test_the_peer_closing_fails_pending_requests_and_ends_run():
    async def main():
        agent, client = await connect(Agent, Client)
        pending = asyncio.create_task(client.prompt(acp.PromptRequest(session_id="s3", prompt=[])))
        while not agent._answering:
            await asyncio.sleep(0.01)
        await agent.close()
        with pytest.raises(ConnectionError):
            await pending
        await client.run()  # returns: the peer is gone
        with pytest.raises(ConnectionError):
            await client.new_session(new_session("/late"))

    run(main())


def test_notifications_arrive_in_order_before_the_response_that_follows_them():
    class Streamer(Agent):
        async def prompt(self, params):
            for i in range(50):
                chunk = acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=str(i)))
                await self.conn.session_update(acp.SessionNotification(session_id=params.session_id, update=chunk))
            return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    async def main():
        _agent, client = await connect(Streamer, Client)
        response = await client.prompt(acp.PromptRequest(session_id="s4", prompt=[]))
        assert response.stop_reason is acp.StopReason.END_TURN
        assert [u.update.content.text for u in client.handler.updates] == [str(i) for i in range(50)]
        await client.close()

    run(main())


def test_close_ends_run_and_fails_what_is_waiting():
    async def main():
        agent, client = await connect(Agent, Client)
        serving = asyncio.create_task(client.run())
        pending = asyncio.create_task(client.prompt(acp.PromptRequest(session_id="s5", prompt=[])))
        while not agent._answering:
            await asyncio.sleep(0.01)
        await client.close()
        await serving  # returns, without raising
        with pytest.raises(ConnectionError):
            await pending
        agent.grace = 0.05  # what a handler still running gets to finish
        await agent.run()  # the agent sees the client go and stops serving
        while agent.handler.cancelled != ["s5"]:  # and cancels the handler still running
            await asyncio.sleep(0.01)

    run(main())


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_package_connects_an_agent_and_a_client(name):
    package = load_generated(name)
    version = 1 if name.startswith("acp_v1") else 2

    class Minimal(package.Agent):
        def __init__(self, conn):
            self.conn = conn

        async def initialize(self, params):
            info = {"name": "minimal", "version": "1"}
            return package.decode("InitializeResponse", {"protocolVersion": params.protocol_version, "info": info})

    class Silent(package.Client):
        def __init__(self, conn):
            self.conn = conn

    async def main():
        _agent, client = await connect(Minimal, Silent, package)
        request = package.decode(
            "InitializeRequest",
            {
                "protocolVersion": version,
                "clientInfo": {"name": "t", "version": "1"},
                "info": {"name": "t", "version": "1"},
            },
        )
        response = await client.initialize(request)
        assert isinstance(response, package.InitializeResponse) and response.protocol_version == version
        with pytest.raises(package.RequestError) as caught:
            await client.prompt(
                package.decode("PromptRequest", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]})
            )
        assert caught.value.code == -32601
        await client.close()

    run(main())


# ------------------------------------------------------------ notification handlers


def chunk_update(session_id: str, text: str):
    chunk = acp.AgentMessageChunkSessionUpdate(content=acp.TextContentBlock(text=text))
    return acp.SessionNotification(session_id=session_id, update=chunk)


class AskingClient(acp.Client):
    """Each session/update handler sends a request to the agent and awaits its
    answer (an unknown extension method: -32601)."""

    def __init__(self, conn):
        self.conn = conn
        self.texts: list[str] = []
        self.answers: list[int] = []

    async def session_update(self, params):
        try:
            await self.conn.request("_interop/unknown", {})
        except acp.RequestError as error:
            self.answers.append(error.code)
        self.texts.append(params.update.content.text)


@pytest.mark.parametrize("peer", ["acpgen", "python-sdk"])
def test_a_notification_handler_can_await_a_request_to_an_agent_process(peer):
    from ..interop import harness

    command = harness.acpgen_agent("v1") if peer == "acpgen" else harness.python_sdk_agent()

    async def main():
        async with acp.spawn_agent(AskingClient, *command, validate_outgoing=True) as conn:
            await conn.initialize(acp.InitializeRequest(protocol_version=1))
            session = await conn.new_session(new_session(os.getcwd()))
            words = [acp.TextContentBlock(text="one two three four")]
            response = await conn.prompt(acp.PromptRequest(session_id=session.session_id, prompt=words))
            assert response.stop_reason is acp.StopReason.END_TURN
            # prompt() returned after every update's handler, request included, finished
            assert "".join(conn.handler.texts).split() == ["one", "two", "three", "four"]
            assert conn.handler.answers == [-32601] * len(conn.handler.texts)

    run(main())


class Streamer(Agent):
    """Streams ``count`` updates, then answers the prompt."""

    count = 20

    async def prompt(self, params):
        for i in range(self.count):
            await self.conn.session_update(chunk_update(params.session_id, str(i)))
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)


def test_a_notification_handler_can_await_a_request_in_process():
    class Answering(Streamer):
        async def ext_method(self, method, params):
            return {"seen": params["text"]}

    class Asking(Client):
        async def session_update(self, params):
            answer = await self.conn.request("_ack", {"text": params.update.content.text})
            self.updates.append(answer["seen"])

    async def main():
        _agent, client = await connect(Answering, Asking)
        await client.prompt(acp.PromptRequest(session_id="s", prompt=[]))
        assert client.handler.updates == [str(i) for i in range(Streamer.count)]
        await client.close()

    run(main())


def test_notification_handlers_start_in_order_run_one_at_a_time_and_finish_before_the_response():
    class Slow(Client):
        running = 0
        most = 0

        async def session_update(self, params):
            self.running += 1
            self.most = max(self.most, self.running)
            self.updates.append(("start", params.update.content.text))
            await asyncio.sleep(random.random() / 200)
            self.updates.append(("end", params.update.content.text))
            self.running -= 1

    async def main():
        _agent, client = await connect(Streamer, Slow)
        for turn in range(3):
            del client.handler.updates[:]
            await client.prompt(acp.PromptRequest(session_id="s", prompt=[]))
            expected = [(edge, str(i)) for i in range(Streamer.count) for edge in ("start", "end")]
            assert client.handler.updates == expected, turn
        assert client.handler.most == 1
        await client.close()

    run(main())


@pytest.mark.parametrize("via_task", [False, True], ids=["directly", "from-a-task"])
def test_a_request_from_a_notification_handler_does_not_wait_for_the_notifications_behind_it(via_task):
    """The answer to the handler's request arrives after further updates,
    which queue behind the running handler: the request must not wait for them."""

    class Holding(Agent):
        async def prompt(self, params):
            self.streamed = asyncio.Event()
            await self.conn.session_update(chunk_update(params.session_id, "first"))
            for i in range(5):
                await self.conn.session_update(chunk_update(params.session_id, str(i)))
            self.streamed.set()
            return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

        async def ext_method(self, method, params):
            await self.streamed.wait()  # answered after the five updates were sent
            return {}

    class Asking(Client):
        async def session_update(self, params):
            text = params.update.content.text
            if text == "first":
                call = self.conn.request("_hold", {})
                await (asyncio.create_task(call) if via_task else call)
            self.updates.append(text)

    async def main():
        _agent, client = await connect(Holding, Asking)
        await client.prompt(acp.PromptRequest(session_id="s", prompt=[]))
        assert client.handler.updates == ["first", "0", "1", "2", "3", "4"]
        await client.close()

    run(main())


def test_a_notification_handler_that_raises_does_not_stop_the_later_ones(caplog):
    class Failing(Client):
        async def session_update(self, params):
            text = params.update.content.text
            self.updates.append(text)
            await asyncio.sleep(0)
            if int(text) % 3 == 0:
                raise RuntimeError(f"cannot show {text}")

    async def main():
        _agent, client = await connect(Streamer, Failing)
        response = await client.prompt(acp.PromptRequest(session_id="s", prompt=[]))
        assert response.stop_reason is acp.StopReason.END_TURN
        assert client.handler.updates == [str(i) for i in range(Streamer.count)]
        await client.close()

    run(main())
    failures = [r for r in caplog.records if "session/update notification handler failed" in r.getMessage()]
    assert [str(r.exc_info[1]) for r in failures] == [f"cannot show {i}" for i in range(0, Streamer.count, 3)]


def test_a_handler_that_sends_after_the_peer_went_is_not_logged_as_a_failure(caplog):
    """The peer closes mid-turn: the handler's next update raises
    ``ConnectionError``; the log says the connection ended, with no
    traceback for each handler that was running."""
    failed: list[BaseException] = []

    class Holding(Agent):
        started = asyncio.Event()

        async def prompt(self, params):
            Holding.started.set()
            await self.release.wait()
            try:
                for i in range(5):
                    await self.conn.session_update(chunk_update(params.session_id, str(i)))
            except ConnectionError as error:
                failed.append(error)
                raise
            return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    async def main():
        agent, (_reader, writer) = await raw_agent(Holding)
        prompt = {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {"sessionId": "s", "prompt": []}}
        writer.write((json.dumps(prompt) + "\n").encode())
        await writer.drain()
        await Holding.started.wait()
        writer.close()
        await writer.wait_closed()
        agent.handler.release.set()
        await agent.run()  # the peer is gone: it ends once the handler has
        assert failed, "the handler never saw the connection end"

    run(main())
    assert not [r for r in caplog.records if "handler failed" in r.getMessage()]


def test_notifications_read_before_the_peer_closes_are_still_handled():
    async def main():
        (client_reader, client_writer), (_peer_reader, peer_writer) = await streams()

        class Slow(Client):
            async def session_update(self, params):
                await asyncio.sleep(0.01)
                self.updates.append(params.update.content.text)

        client = acp.ClientSideConnection(Slow, client_reader, client_writer, require_initialize=False)
        for i in range(5):
            note = {"jsonrpc": "2.0", "method": "session/update", "params": acp.encode(chunk_update("s", str(i)))}
            peer_writer.write((json.dumps(note) + "\n").encode())
        peer_writer.close()
        await client.run()  # returns once the peer is gone and the five are handled
        assert client.handler.updates == ["0", "1", "2", "3", "4"]

    run(main())


def test_close_drops_the_queued_notifications():
    async def main():
        (client_reader, client_writer), (_peer_reader, peer_writer) = await streams()

        class Stuck(Client):
            async def session_update(self, params):
                self.updates.append(params.update.content.text)
                await asyncio.Event().wait()

        client = acp.ClientSideConnection(Stuck, client_reader, client_writer, require_initialize=False)
        client.start()
        for i in range(3):
            note = {"jsonrpc": "2.0", "method": "session/update", "params": acp.encode(chunk_update("s", str(i)))}
            peer_writer.write((json.dumps(note) + "\n").encode())
        await peer_writer.drain()
        while not client.handler.updates:
            await asyncio.sleep(0.01)
        await client.close()
        await asyncio.sleep(0.05)
        assert client.handler.updates == ["0"]
        peer_writer.close()

    run(main())


# ------------------------------------------------------------ the examples


def _client(*args, timeout=HANG):
    return subprocess.run(
        [sys.executable, str(ROOT / "examples/echo_client.py"), *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )  # fmt: skip


def test_the_echo_client_spawns_the_echo_agent_and_prints_the_streamed_answer():
    out = _client("hello", "streaming", "world")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "hello streaming world \n[end_turn]\n"


def test_the_echo_client_drives_the_v2_echo_agent_too():
    for client, _agent in [("echo_client_v2.py", "echo_agent_v2.py")]:
        out = subprocess.run(
            [sys.executable, str(ROOT / "examples" / client), "two", "words"],
            capture_output=True, text=True, timeout=HANG, cwd=ROOT,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert out.stdout == "two words \n[end_turn]\n"


@pytest.mark.parametrize("stdin_file, stdout_file", [(True, True), (False, True), (True, False)])
def test_the_echo_agent_serves_regular_files_as_stdin_and_stdout(tmp_path, stdin_file, stdout_file):
    """``agent < requests.jsonl > replies.jsonl``: asyncio streams only
    pipes, sockets and terminals; a regular file is read and written in
    place, and its end ends the connection as a closed pipe does."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ]
    text = "".join(json.dumps(r) + "\n" for r in requests).encode()
    (tmp_path / "requests.jsonl").write_bytes(text)
    argv = [sys.executable, str(ROOT / "examples/echo_agent.py")]
    with (tmp_path / "requests.jsonl").open("rb") as given, (tmp_path / "replies.jsonl").open("wb") as taken:
        out = subprocess.run(
            argv,
            input=None if stdin_file else text,
            stdin=given if stdin_file else None,
            stdout=taken if stdout_file else subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=HANG,
            cwd=ROOT,
        )
    assert out.returncode == 0, out.stderr
    replies = (tmp_path / "replies.jsonl").read_bytes() if stdout_file else out.stdout
    answers = [json.loads(line) for line in replies.splitlines()]
    assert [a["id"] for a in answers] == [1, 2], answers
    assert answers[0]["result"]["protocolVersion"] == 1
    assert answers[1]["result"]["sessionId"].startswith("echo-")


def test_the_echo_agent_ends_at_once_on_dev_null_as_stdin():
    """``/dev/null`` is a character device no selector watches: read as a
    file, its end ends the connection (a pipe transport never saw it)."""
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null")
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/echo_agent.py")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=HANG,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == b""


def test_cancel_stops_the_echo_agent_mid_prompt():
    class Collect(acp.Client):
        def __init__(self, conn):
            self.conn = conn
            self.chunks = []
            self.first = asyncio.Event()

        async def session_update(self, params):
            self.chunks.append(params.update.content.text)
            self.first.set()

    async def main():
        agent = [sys.executable, str(ROOT / "examples/echo_agent.py"), "0.2"]
        async with acp.spawn_agent(Collect, *agent, validate_outgoing=True) as conn:
            await conn.initialize(acp.InitializeRequest(protocol_version=1))
            session = await conn.new_session(new_session(os.getcwd()))
            words = [acp.TextContentBlock(text=" ".join(f"w{i}" for i in range(100)))]
            prompt = asyncio.create_task(conn.prompt(acp.PromptRequest(session_id=session.session_id, prompt=words)))
            await conn.handler.first.wait()
            await conn.cancel(acp.CancelNotification(session_id=session.session_id))
            response = await prompt
            assert response.stop_reason is acp.StopReason.CANCELLED
            assert 1 <= len(conn.handler.chunks) < 100
            process = conn.process
        assert process.returncode is not None

    run(main())


def test_a_cancel_arriving_after_the_handler_returned_does_not_lose_the_answer():
    class Agent:
        async def initialize(self, params):
            return acp.InitializeResponse(protocol_version=1)

    async def main():
        reader, writer = asyncio.StreamReader(), GatedWriter()
        conn = acp.AgentSideConnection(lambda c: Agent(), reader, writer, require_initialize=False)
        conn.start()
        reader.feed_data(b'{"jsonrpc":"2.0","id":5,"method":"nope"}\n')  # its answer holds the write lock
        await asyncio.sleep(0.02)
        reader.feed_data(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
        await asyncio.sleep(0.02)  # answered, waiting to be written
        reader.feed_data(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}\n')
        await asyncio.sleep(0.02)
        writer.gate.set()
        await asyncio.sleep(0.05)
        answers = {m["id"]: m for m in (json.loads(line) for line in writer.out)}
        await conn.close()
        return answers

    answers = run(main())
    assert answers[5]["error"]["code"] == -32601
    assert answers[1]["result"]["protocolVersion"] == 1


def test_requests_piped_in_are_answered_after_the_input_ends():
    """A client that writes its requests and closes its side (a pipe) still
    gets every answer."""
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
    ]
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples/echo_agent.py")],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    answers = {m["id"]: m for m in map(json.loads, out.stdout.splitlines())}
    assert set(answers) == {1, 2}, out.stdout + out.stderr
    assert answers[1]["result"]["protocolVersion"] == 1
    assert "sessionId" in answers[2]["result"]


def test_validate_outgoing_checks_typed_messages_and_lets_json_go_as_it_is():
    class Extending(Agent):
        async def ext_method(self, method, params):
            return {"echo": params}

    async def main():
        _agent, client = await connect(Extending, Client)
        # JSON params and an extension's JSON result: sent and answered, unchecked
        assert await client.request("_x/echo", {"n": 1}) == {"echo": {"n": 1}}
        await client.notify("_x/note", [1, 2])
        # a typed message that breaks the schema: refused at the sender
        with pytest.raises(acp.ValidationError):
            await client.new_session(acp.NewSessionRequest(cwd=5, mcp_servers=[]))
        await client.close()

    run(main())


def test_validate_outgoing_checks_each_message_against_its_methods_type(caplog):
    """A handler that returns another method's result, or params of another
    method: refused (an error reply, a log line; a ValidationError at the
    sender), where each is valid as its own class."""

    class Mistaken(Agent):
        async def new_session(self, params):
            return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    async def main():
        _agent, client = await connect(Mistaken, Client)
        with pytest.raises(acp.RequestError) as refused:
            await client.new_session(new_session("/"))
        assert refused.value.code == acp.INTERNAL_ERROR
        assert "session/new answers a NewSessionResponse, not a PromptResponse" in refused.value.data
        prompt = acp.PromptRequest(session_id="s", prompt=[])
        with pytest.raises(acp.ValidationError, match="session/new takes a NewSessionRequest, not a PromptRequest"):
            await client.request("session/new", prompt)
        with pytest.raises(acp.ValidationError, match="session/cancel takes a CancelNotification, not a PromptRequest"):
            await client.notify("session/cancel", prompt)  # valid as a CancelNotification's JSON, yet not one
        await client.close()

    with caplog.at_level("WARNING"):
        run(main())
    assert "the reply to session/new cannot be sent" in caplog.text


def _example(name: str):
    """An example's module, imported from its file (under a name of its own)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("example", "agent", "package"),
    [
        ("echo_agent", "EchoAgent", "acp_v1"),
        ("echo_agent_v2", "EchoAgent", "acp_v2"),
        ("resumable_agent", "ResumableAgent", "acp_v1"),
    ],
)
def test_each_example_agent_gives_every_new_session_an_id_of_its_own(example, agent, package, tmp_path, monkeypatch):
    """40 ``session/new`` on one connection: 40 session ids (sessions that
    shared one would share a cancel flag and, over HTTP, a stream)."""
    module = _example(example)
    if hasattr(module, "SESSIONS"):
        monkeypatch.setattr(module, "SESSIONS", tmp_path)
    pkg = load_generated(package)

    class Quiet(pkg.Client):
        def __init__(self, conn):
            self.conn = conn

    async def main():
        # Without the client's fold (which keeps objects alive that would
        # otherwise be freed): an id made of id(params) repeats as soon as
        # the params of one request are freed before the next is decoded.
        options = {"validate_outgoing": True, "fold_sessions": False}
        _agent, client = pkg.connect_in_memory(getattr(module, agent), Quiet, **options)
        if package == "acp_v2":
            info = pkg.Implementation(name="test", version="1")
            await client.initialize(pkg.InitializeRequest(protocol_version=2, info=info))
            new = pkg.NewSessionRequest(cwd=str(tmp_path))
        else:
            await client.initialize(pkg.InitializeRequest(protocol_version=1))
            new = pkg.NewSessionRequest(cwd=str(tmp_path), mcp_servers=[])
        ids = [(await client.new_session(new)).session_id for _ in range(40)]
        await client.close()
        return ids

    assert len(set(run(main()))) == 40


def test_the_echo_agent_example_over_stdio_gives_40_sessions_40_ids():
    """As a client sees it: 40 ``session/new`` one after another on one
    connection to ``python examples/echo_agent.py``."""

    class Quiet(acp.Client):
        def __init__(self, conn):
            self.conn = conn

    async def main():
        async with acp.spawn_agent(Quiet, sys.executable, str(ROOT / "examples/echo_agent.py")) as conn:
            await conn.initialize(acp.InitializeRequest(protocol_version=1))
            return [(await conn.new_session(new_session("/"))).session_id for _ in range(40)]

    assert len(set(asyncio.run(asyncio.wait_for(main(), HANG)))) == 40


# ---------------------------------------------------------------- cancellation by default


class PlainAgent(acp.Agent):
    """Prompts that wait forever, with no cancellation code of their own."""

    def __init__(self, conn):
        self.conn = conn
        self.started: dict[str, asyncio.Event] = {}

    async def prompt(self, params):
        self.started.setdefault(params.session_id, asyncio.Event()).set()
        await asyncio.Event().wait()
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    async def cancel(self, params):
        # The handler of session/cancel still runs, after the prompt's task
        # has been cancelled.
        self.cancel_seen = params.session_id


def _prompt(session_id: str):
    return acp.PromptRequest(session_id=session_id, prompt=[acp.TextContentBlock(text="hi")])


async def _started(agent, session_id: str) -> None:
    while session_id not in agent.handler.started:
        await asyncio.sleep(0.01)


def test_a_session_cancel_ends_that_sessions_prompt_cancelled_with_no_cancellation_code_in_the_handler():
    async def main():
        agent, client = await connect(PlainAgent, Client)
        one = asyncio.create_task(client.prompt(_prompt("s1")))
        two = asyncio.create_task(client.prompt(_prompt("s2")))
        await _started(agent, "s1")
        await _started(agent, "s2")
        await client.cancel(acp.CancelNotification(session_id="s1"))
        assert (await one).stop_reason is acp.StopReason.CANCELLED
        assert agent.handler.cancel_seen == "s1"
        assert not two.done()  # another session's turn goes on
        await client.cancel(acp.CancelNotification(session_id="s2"))
        assert (await two).stop_reason is acp.StopReason.CANCELLED
        await client.close()
        await agent.close()

    run(main())


def test_cancel_session_work_false_leaves_the_prompt_to_its_handler():
    async def main():
        (agent_reader, agent_writer), (client_reader, client_writer) = await streams()
        agent = acp.AgentSideConnection(
            PlainAgent, agent_reader, agent_writer, require_initialize=False, cancel_session_work=False
        )
        client = acp.ClientSideConnection(Client, client_reader, client_writer)
        agent.start()
        client.start()
        prompt = asyncio.create_task(client.prompt(_prompt("s1")))
        await _started(agent, "s1")
        await client.cancel(acp.CancelNotification(session_id="s1"))
        while not hasattr(agent.handler, "cancel_seen"):
            await asyncio.sleep(0.01)
        assert not prompt.done() and agent._answering  # still running
        await client.close()
        await agent.close()
        with pytest.raises(ConnectionError):
            await prompt

    run(main())


def test_a_prompt_waiting_for_a_handler_slot_is_answered_cancelled_without_running():
    async def main():
        (agent_reader, agent_writer), (client_reader, client_writer) = await streams()
        agent = acp.AgentSideConnection(PlainAgent, agent_reader, agent_writer, require_initialize=False, max_running=1)
        client = acp.ClientSideConnection(Client, client_reader, client_writer)
        agent.start()
        client.start()
        first = asyncio.create_task(client.prompt(_prompt("s1")))
        await _started(agent, "s1")
        second = asyncio.create_task(client.prompt(_prompt("s2")))
        while not agent._waiting:
            await asyncio.sleep(0.01)
        await client.cancel(acp.CancelNotification(session_id="s2"))
        assert (await second).stop_reason is acp.StopReason.CANCELLED
        assert "s2" not in agent.handler.started  # its handler never ran
        assert not first.done()
        await client.close()
        await agent.close()

    run(main())


class AskingAgent(acp.Agent):
    def __init__(self, conn):
        self.conn = conn


class WaitingClient(acp.Client):
    """Permission requests that wait for a user who never answers."""

    def __init__(self, conn):
        self.conn = conn
        self.asked: list[str] = []

    async def request_permission(self, params):
        self.asked.append(params.session_id)
        await asyncio.Event().wait()


def _permission(session_id: str):
    options = [acp.PermissionOption(option_id="ok", name="Allow", kind=acp.PermissionOptionKind.ALLOW_ONCE)]
    return acp.RequestPermissionRequest(
        session_id=session_id, tool_call=acp.ToolCallUpdate(tool_call_id="t1"), options=options
    )


def test_sending_session_cancel_answers_that_sessions_pending_permission_requests_cancelled():
    async def main():
        agent, client = await connect(AskingAgent, WaitingClient)
        one = asyncio.create_task(agent.request_permission(_permission("s1")))
        also_one = asyncio.create_task(agent.request_permission(_permission("s1")))
        two = asyncio.create_task(agent.request_permission(_permission("s2")))
        while len(client.handler.asked) < 3:
            await asyncio.sleep(0.01)
        await client.cancel(acp.CancelNotification(session_id="s1"))
        for task in (one, also_one):
            assert isinstance((await task).outcome, acp.CancelledRequestPermissionOutcome)
        assert not two.done()
        await client.close()
        await agent.close()

    run(main())


def test_a_permission_request_cancelled_by_cancel_request_is_answered_with_the_cancelled_outcome():
    async def main():
        agent, client = await connect(AskingAgent, WaitingClient)
        asking = asyncio.create_task(agent.request_permission(_permission("s1")))
        while not client.handler.asked:
            await asyncio.sleep(0.01)
        id = next(iter(agent._pending))
        await agent.notify("$/cancel_request", {"requestId": id})
        assert isinstance((await asking).outcome, acp.CancelledRequestPermissionOutcome)
        await client.close()
        await agent.close()

    run(main())


# ---------------------------------------------------------------- permission policy


class ToolAgent(acp.Agent):
    """Announces a tool call (kind and path), then asks permission for it by
    id alone, and ends the turn with the option chosen as its message."""

    def __init__(self, conn):
        self.conn = conn
        self.outcomes: list[object] = []

    async def new_session(self, params):
        return acp.NewSessionResponse(session_id=f"s{len(self.outcomes)}")

    async def prompt(self, params):
        sid = params.session_id
        kind = acp.ToolKind(params.prompt[0].text)
        location = acp.ToolCallLocation(path="/work/notes.txt")
        call = acp.ToolCallSessionUpdate(tool_call_id="t1", title="Tool", kind=kind, locations=[location])
        await self.conn.session_update(acp.SessionNotification(session_id=sid, update=call))
        options = [
            acp.PermissionOption(option_id="always", name="Always", kind=acp.PermissionOptionKind.ALLOW_ALWAYS),
            acp.PermissionOption(option_id="once", name="Once", kind=acp.PermissionOptionKind.ALLOW_ONCE),
            acp.PermissionOption(option_id="no", name="No", kind=acp.PermissionOptionKind.REJECT_ONCE),
        ]
        answer = await self.conn.request_permission(
            acp.RequestPermissionRequest(
                session_id=sid, tool_call=acp.ToolCallUpdate(tool_call_id="t1"), options=options
            )
        )
        self.outcomes.append(answer.outcome)
        return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)


class SilentClient(acp.Client):
    """No request_permission of its own."""

    def __init__(self, conn):
        self.conn = conn

    async def session_update(self, params):
        pass


async def _turn(client, kind: str) -> str:
    session = await client.new_session(new_session("/work"))
    await client.prompt(acp.PromptRequest(session_id=session.session_id, prompt=[acp.TextContentBlock(text=kind)]))
    return session.session_id


def test_a_client_without_a_permission_handler_denies_by_default_and_records_it():
    async def main():
        agent, client = await connect(ToolAgent, SilentClient)
        sid = await _turn(client, "read")
        assert agent.handler.outcomes == [acp.SelectedRequestPermissionOutcome(option_id="no")]
        [decision] = client.permission_decisions[sid]
        assert (decision.tool_call_id, decision.kind, decision.paths) == ("t1", "read", ("/work/notes.txt",))
        assert decision.option_id == "no" and not decision.allowed
        await client.close()
        await agent.close()

    run(main())


def test_the_policy_decides_by_the_kind_and_path_the_fold_knows():
    async def main():
        (agent_reader, agent_writer), (client_reader, client_writer) = await streams()
        agent = acp.AgentSideConnection(ToolAgent, agent_reader, agent_writer, require_initialize=False)
        policy = acp.PermissionPolicy(allow={acp.ToolKind.READ}, reject_paths=["*/secrets/*"])
        client = acp.ClientSideConnection(SilentClient, client_reader, client_writer, permission_policy=policy)
        agent.start()
        client.start()
        read = await _turn(client, "read")
        edit = await _turn(client, "edit")
        assert agent.handler.outcomes == [
            acp.SelectedRequestPermissionOutcome(option_id="once"),  # allow_once, not the first option
            acp.SelectedRequestPermissionOutcome(option_id="no"),
        ]
        assert client.permission_decisions[read][0].reason == "tool kind 'read' is allowed"
        assert client.permission_decisions[edit][0].allowed is False
        await client.close()
        await agent.close()

    run(main())


def test_a_handlers_own_answer_is_recorded_too():
    class Approving(SilentClient):
        async def request_permission(self, params):
            return acp.RequestPermissionResponse(outcome=acp.SelectedRequestPermissionOutcome(option_id="always"))

    async def main():
        agent, client = await connect(ToolAgent, Approving)
        sid = await _turn(client, "edit")
        [decision] = client.permission_decisions[sid]
        assert (decision.option_id, decision.option_kind, decision.reason) == (
            "always",
            "allow_always",
            "answered by the handler",
        )
        await client.close()
        await agent.close()

    run(main())


def test_a_permission_request_cancelled_by_session_cancel_is_recorded_cancelled():
    class NewSessions(AskingAgent):
        async def new_session(self, params):
            return acp.NewSessionResponse(session_id="c1")

    async def main():
        agent, client = await connect(NewSessions, WaitingClient)
        sid = (await client.new_session(new_session("/c"))).session_id  # a session the fold knows
        asking = asyncio.create_task(agent.request_permission(_permission(sid)))
        while not client.handler.asked:
            await asyncio.sleep(0.01)
        await client.cancel(acp.CancelNotification(session_id=sid))
        await asking
        [decision] = client.permission_decisions[sid]
        assert (decision.outcome, decision.reason) == ("cancelled", "cancelled")
        await client.close()
        await agent.close()

    run(main())


def test_session_work_is_cancelled_by_its_sessions_cancel_and_by_close():
    """v2 answers a prompt at once and runs the turn after it: work started
    with start_session_work is cancelled by that session's session/cancel
    (not another's), and by closing the connection."""
    v2 = load_generated("acp_v2")
    events: list[str] = []
    started = {"a": asyncio.Event(), "b": asyncio.Event()}

    class TurnAgent(v2.Agent):
        def __init__(self, conn):
            self.conn = conn

        async def prompt(self, params):
            async def turn():
                started[params.session_id].set()
                try:
                    await asyncio.Event().wait()
                except asyncio.CancelledError:
                    events.append(f"cancelled {params.session_id}")
                    raise

            self.task = self.conn.start_session_work(params.session_id, turn())
            return v2.PromptResponse(message_id=v2.MessageId("m"))

    class Quiet(v2.Client):
        def __init__(self, conn):
            self.conn = conn

    async def main():
        agent, client = v2.connect_in_memory(TurnAgent, Quiet, require_initialize=False)
        for sid in ("a", "b"):
            await client.prompt(v2.PromptRequest(session_id=v2.SessionId(sid), prompt=[]))
            await started[sid].wait()
        b = agent.handler.task
        await client.cancel(v2.CancelSessionNotification(session_id=v2.SessionId("a")))
        while events != ["cancelled a"]:
            await asyncio.sleep(0.01)
        assert not b.done()
        await agent.close()
        while events != ["cancelled a", "cancelled b"]:
            await asyncio.sleep(0.01)
        assert agent._session_work == {}
        await client.close()

    run(main())
