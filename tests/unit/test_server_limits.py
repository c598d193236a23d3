"""The limits of a served agent that hold before (and apart from)
authentication: what a peer can hold open, for how long, and what it can make
the server buffer. Sockets at the socket level go through uvicorn on a
loopback port (``_asgi.serve``, in this process, or in a process of its own
with a lowered file descriptor limit: limits_server.py); the rest through ASGI
events as in test_runtime_asgi.

Every wait is for an event (an answer, a close, a process's line) bounded by
HANG only so that a hang fails; a timeout set small here is the thing under
test."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from acpgen.runtime import _asgi as asgi
from acpgen.runtime import _connection as connection
from acpgen.runtime import _jsonrpc as rpc

from ..conftest import ROOT
from ..patience import HANG
from .test_runtime_asgi import (
    METHODS,
    Call,
    EchoAgent,
    HangingAgent,
    _decode,
    _encode,
    _request,
    initialize,
    make_app,
    message,
    new_session,
    opened,
    run,
    websocket,
)

TOKEN = "s3cret"


@contextlib.asynccontextmanager
async def serving(app: asgi.AcpAsgiApp) -> AsyncIterator[int]:
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    server = asyncio.ensure_future(asgi.serve(app, port=0, ready=ready.set_result))
    try:
        yield await asyncio.wait_for(ready, HANG)
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server


async def exchange(port: int, data: bytes) -> bytes:
    """Send ``data`` on a new socket and read until the server closes it."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        return await asyncio.wait_for(reader.read(), HANG)
    finally:
        writer.close()


def post(port: int, body: bytes, **headers: str) -> bytes:
    lines = [
        "POST /acp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{name.replace('_', '-')}: {value}" for name, value in headers.items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def upgrade(port: int, *extra: str) -> bytes:
    lines = [
        "GET /acp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        *extra,
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1.1 "), answer[:200]
    return int(answer[9:12])


class ServerProcess:
    """limits_server.py: the app served in a process of its own."""

    def __init__(self, options: dict[str, Any], nofile: int | None = None) -> None:
        argv = [sys.executable, "-m", "tests.unit.limits_server", json.dumps(options)]
        if nofile is not None:
            argv.append(str(nofile))
        self.process = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("port "), line
        self.port = int(line.split()[1])

    def stop(self) -> int:
        """Close its stdin; its peak resident size (KiB) once it exits."""
        out, _ = self.process.communicate("", timeout=HANG)
        assert self.process.returncode == 0
        return int(out.split()[-1])


# ------------------------------------------------------------------ sockets


def test_half_open_requests_beyond_the_fd_limit_leave_room_for_an_authenticated_client() -> None:
    """The server may open 256 files; 300 sockets each send half a request
    head and stop (as 1,100 against the usual 1,024 would): the oldest ones
    make room for new ones, and an authenticated initialize is answered."""
    server = ServerProcess({"authenticate": TOKEN}, nofile=256)
    half_open: list[socket.socket] = []
    try:
        for _ in range(300):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=HANG)
            sock.sendall(b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            half_open.append(sock)
        request = post(server.port, message("initialize", 1), Authorization=f"Bearer {TOKEN}")
        answer = run(exchange(server.port, request))
        assert status(answer) == 200, answer
        assert b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}' in answer
    finally:
        for sock in half_open:
            sock.close()
        server.stop()


def test_a_socket_that_sends_no_whole_request_head_is_closed_after_header_timeout() -> None:
    async def go() -> None:
        async with serving(make_app(header_timeout=0.2)) as port:
            answer = await exchange(port, b"POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            assert status(answer) == 408
            # after a first request kept alive, the next head is timed too
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(post(port, b"{nope").replace(b"Connection: close", b"Connection: keep-alive"))
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HANG)
            assert status(head) == 400 and b"transfer-encoding: chunked" in head.lower()
            await asyncio.wait_for(reader.readuntil(b"\r\n0\r\n\r\n"), HANG)  # the last chunk
            writer.write(b"POST /acp HTTP/1.1\r\n")
            answer = await asyncio.wait_for(reader.read(), HANG)
            writer.close()
            assert status(answer) == 408

    run(go())


def test_a_socket_beyond_max_sockets_closes_the_oldest_one_still_sending_its_head() -> None:
    async def go() -> None:
        async with serving(make_app(max_sockets=3, header_timeout=HANG)) as port:
            streams = [await asyncio.open_connection("127.0.0.1", port) for _ in range(3)]
            for _, writer in streams:
                writer.write(b"POST /acp HTTP/1.1\r\n")
            answer = await exchange(port, post(port, message("initialize", 1)))
            assert status(answer) == 200
            oldest = await asyncio.wait_for(streams[0][0].read(), HANG)
            assert status(oldest) == 503
            for _, writer in streams:
                writer.close()

    run(go())


def test_a_body_dripping_in_is_answered_408_after_body_timeout() -> None:
    async def go() -> None:
        async with serving(make_app(body_timeout=0.5)) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            head = post(port, b"").replace(b"Content-Length: 0", b"Content-Length: 100000")
            writer.write(head + b"{")

            async def drip() -> None:  # a byte now and then: it never ends by itself
                while True:
                    await asyncio.sleep(0.05)
                    writer.write(b" ")

            dripping = asyncio.ensure_future(drip())
            try:
                answer = await asyncio.wait_for(reader.read(), HANG)  # until the server closes
            except ConnectionResetError:
                # closed with a drip unread, the server's kernel resets the
                # socket, and the 408 before the reset may be lost with it
                answer = b""
            finally:
                dripping.cancel()
                writer.close()
            assert answer == b"" or status(answer) == 408, answer

    run(go())


@pytest.mark.parametrize(
    "extra",
    [["X-Long: " + "a" * 8200], [f"X-Many-{i}: {i}" for i in range(130)]],
    ids=["an 8 KiB header line", "130 header lines"],
)
def test_an_upgrade_whose_head_websockets_refuses_gets_an_answer(extra: list[str]) -> None:
    async def go() -> None:
        async with serving(make_app()) as port:
            answer = await exchange(port, upgrade(port, *extra))
            assert status(answer) == 431

    run(go())


def test_a_ping_flood_from_a_peer_that_does_not_read_is_not_buffered() -> None:
    """The peer sends pings and reads nothing: once what waits to be written
    passes the socket's high-water mark, the server stops reading the peer
    (without it, uvicorn read on and queued every pong: tests/bench_ping_flood.py
    measures the memory)."""
    guards: list[asgi._WsGuard] = []
    init = asgi._WsGuard.__init__

    def recording(self: asgi._WsGuard, inner: Any, sockets: Any) -> None:
        init(self, inner, sockets)
        guards.append(self)

    arrived = asyncio.Event()

    class Flagging(EchoAgent):
        async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
            arrived.set()
            return await super().initialize(params)

    async def go() -> None:
        app = asgi.AcpAsgiApp(lambda t, limit: AgentEnd(Flagging, t, max_message=limit))
        async with serving(app) as port:
            sock = socket.create_connection(("127.0.0.1", port), timeout=HANG)
            sock.sendall(upgrade(port))
            loop = asyncio.get_running_loop()
            assert status(await loop.run_in_executor(None, sock.recv, 4096)) == 101
            ping = bytes([0x89, 0x80 | 125, 1, 2, 3, 4]) + b"p" * 125  # masked, as from a client
            text = message("initialize", 1)
            frame = bytes([0x81, 0x80 | 126]) + len(text).to_bytes(2, "big") + b"\0\0\0\0" + text
            flood = ping * 300_000 + frame  # 39 MB of pings (more than loopback buffers), then a request

            def send() -> None:
                with contextlib.suppress(OSError):
                    sock.sendall(flood)

            sender = threading.Thread(target=send, daemon=True)
            sender.start()
            (guard,) = guards
            transport = guard.transport
            assert transport is not None
            high = transport.get_write_buffer_limits()[1]
            # until the server stops reading the peer, or has read all of it
            while transport.is_reading() and not arrived.is_set():
                await asyncio.sleep(0.01)
            held = transport.get_write_buffer_size()
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            await loop.run_in_executor(None, sender.join)
            assert not arrived.is_set(), f"the server read the whole flood ({held} bytes of pongs held)"
            assert held < high + 512 * 1024, held

    asgi._WsGuard.__init__ = recording  # type: ignore[method-assign]
    try:
        run(go())
    finally:
        asgi._WsGuard.__init__ = init  # type: ignore[method-assign]


# ------------------------------------------------------------------ WebSockets


def test_64_idle_websockets_make_room_for_a_65th_client() -> None:
    """Every connection is taken by an idle WebSocket: a new client takes the
    place of the one idle longest (``ws_idle_timeout`` 0 here: idle at all)."""
    from websockets.asyncio.client import connect

    async def go() -> None:
        app = make_app(ws_idle_timeout=0, max_connections_per_peer=64)
        async with serving(app) as port:
            url = f"ws://127.0.0.1:{port}/acp"
            sockets = [await connect(url, open_timeout=HANG) for _ in range(64)]
            async with connect(url, open_timeout=HANG) as late:  # the upgrade is accepted
                await late.send(message("initialize", 1).decode())
                assert json.loads(await asyncio.wait_for(late.recv(), HANG))["id"] == 1
                await asyncio.wait_for(sockets[0].wait_closed(), HANG)  # the oldest made room
                assert sockets[0].close_code == 1000
                assert len(app.links) == 64
            for ws in sockets:
                await ws.close()

    run(go())


def test_a_busy_websocket_keeps_its_place() -> None:
    async def go() -> None:
        app = make_app(HangingAgent, max_connections=2, ws_idle_timeout=0)
        busy = websocket(app)
        await busy.next()
        busy.inbox.put_nowait({"type": "websocket.receive", "text": message("initialize", 1).decode()})
        idle = websocket(app)
        await idle.next()
        busy_link, idle_link = app.links.values()
        while not busy_link.connection.busy:  # the request reached the agent, which never answers
            await asyncio.sleep(0.01)
        assert busy_link.idle_for(asyncio.get_running_loop().time() + 3600) is None
        assert (await websocket(app).next())["type"] == "websocket.accept"
        assert busy_link.id in app.links and idle_link.id not in app.links
        # with ws_idle_timeout=None no WebSocket gives way
        full = make_app(max_connections=1, ws_idle_timeout=None)
        assert (await websocket(full).next())["type"] == "websocket.accept"
        assert (await websocket(full).next())["status"] == 503

    run(go())


def test_one_peer_cannot_take_every_connection() -> None:
    async def go() -> None:
        app = make_app(
            max_connections=4,
            max_connections_per_peer=2,
            authenticate=lambda head: head.headers.get("authorization") in ("Bearer a", "Bearer b"),
        )
        for _ in range(2):
            assert (await websocket(app, {"authorization": "Bearer a"}).next())["type"] == "websocket.accept"
        refused = await websocket(app, {"authorization": "Bearer a"}).next()
        assert refused["status"] == 429
        await initialize(app, authorization="Bearer b")  # another token still gets in
        assert len(app.links) == 3
        # a peer at its share gives way to itself: its own idle WebSocket, not another's
        app = make_app(
            max_connections=4,
            max_connections_per_peer=2,
            ws_idle_timeout=0,
            authenticate=lambda head: head.headers.get("authorization") in ("Bearer a", "Bearer b"),
        )
        await websocket(app, {"authorization": "Bearer b"}).next()
        for _ in range(3):
            assert (await websocket(app, {"authorization": "Bearer a"}).next())["type"] == "websocket.accept"
        peers = [link.peer for link in app.links.values()]
        assert len(peers) == 3 and len(set(peers)) == 2, "b's connection stayed, a holds two"
        # without authentication a peer is its address
        plain = make_app(max_connections=4)
        assert plain.max_connections_per_peer == 3
        for _ in range(3):
            await initialize(plain)
        status, _, text = await http_call(plain, "POST", message("initialize", 1)).response()
        assert status == 429 and b"one peer" in text

    run(go())


# ------------------------------------------------------------------ Host, auth


def http_call(
    app: asgi.AcpAsgiApp,
    method: str,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    server: tuple[str, int] = ("127.0.0.1", 8000),
) -> Call:
    sent = {"content-type": "application/json", **(headers or {})}
    scope = {
        "type": "http",
        "method": method,
        "path": "/acp",
        "headers": [(k.encode(), v.encode()) for k, v in sent.items()],
        "client": ("127.0.0.1", 50000),
        "server": server,
    }
    return Call(app, scope, [{"type": "http.request", "body": body, "more_body": False}])


@pytest.mark.parametrize(
    ("host", "server", "allowed", "ok"),
    [
        ("127.0.0.1:8000", "127.0.0.1", None, True),
        ("localhost:8000", "127.0.0.1", None, True),
        ("app.localhost", "127.0.0.1", None, True),
        ("[::1]:8000", "::1", None, True),
        ("evil.example:8000", "127.0.0.1", None, False),
        ("127.0.0.1.evil.example", "127.0.0.1", None, False),
        ("evil.example", "10.0.0.5", None, True),
        ("agent.example:443", "127.0.0.1", ["agent.example"], True),
        ("localhost", "127.0.0.1", ["agent.example"], False),
        ("[::1]", "10.0.0.5", ["[::1]"], True),
        ("anything.example", "127.0.0.1", ["*"], True),
    ],
)
def test_host_allow_list(host: str, server: str, allowed: list[str] | None, ok: bool) -> None:
    async def go() -> None:
        app = make_app(allowed_hosts=allowed)
        call = http_call(app, "POST", message("initialize", 1), {"host": host}, (server, 8000))
        status, _, text = await call.response()
        assert status == (200 if ok else 421), text
        scope = {
            "type": "websocket",
            "path": "/acp",
            "headers": [(b"host", host.encode())],
            "client": ("127.0.0.1", 50000),
            "server": (server, 8000),
            "extensions": {"websocket.http.response": {}},
        }
        first = await Call(app, scope, [{"type": "websocket.connect"}]).next()
        assert first["type"] == ("websocket.accept" if ok else "websocket.http.response.start")

    run(go())


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("Bearer s3cret", True),
        ("bearer s3cret", True),
        ("BEARER s3cret", True),
        ("Bearer  s3cret", True),
        ("Bearer s3cre", False),
        ("Basic s3cret", False),
        ("Bearers3cret", False),
        ("", False),
    ],
)
def test_bearer_token_scheme_in_any_case(value: str, ok: bool) -> None:
    head = asgi.RequestHead("http", "POST", "/acp", {"authorization": value} if value else {}, None, {})
    assert asgi.bearer_token(TOKEN)(head) is ok


# ------------------------------------------------------------------ sessions


class ClosingAgent(EchoAgent):
    async def close_session(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        raise rpc.RequestError(-32002, "no such session")


CLOSING_CODEC = rpc.MessageCodec(
    {**METHODS, "session/close": _request("agent", "session/close", "close_session")},
    _decode,
    _encode,
    null_request_id=False,
)


class AgentEnd(connection.Connection[Any]):
    side = "agent"
    codec = CLOSING_CODEC


def test_session_close_and_a_refused_load_free_their_slots() -> None:
    async def go() -> None:
        app = asgi.AcpAsgiApp(lambda t, limit: AgentEnd(ClosingAgent, t, max_message=limit), max_sessions=2)
        cid = await initialize(app)
        link = app.links[cid]
        stream = await opened(http_call(app, "GET", headers={"acp-connection-id": cid, "accept": "text/event-stream"}))
        for round in range(5):  # ten sessions in the connection's life, two at a time
            first = await new_session(app, cid, stream, 10 * round + 1)
            second = await new_session(app, cid, stream, 10 * round + 2)
            for sid, id in ((first, 10 * round + 3), (second, 10 * round + 4)):
                headers = {"acp-connection-id": cid, "acp-session-id": sid, "accept": "text/event-stream"}
                session = await opened(http_call(app, "GET", headers=headers))
                close = message("session/close", id, sessionId=sid)
                assert (await http_call(app, "POST", close, headers).response())[0] == 202
                assert (await session.event()) == {"jsonrpc": "2.0", "id": id, "result": {}}
                while (chunk := await session.next())["more_body"]:  # keep-alive comments, then the end
                    assert chunk["body"] == b":\n\n"
                await asyncio.wait_for(session.task, HANG)
            assert not link.sessions and list(link.streams) == [None]
        # closed while nobody reads its stream: the answer waits, and the
        # slot is free once the stream has given it
        sid = await new_session(app, cid, stream, 50)
        headers = {"acp-connection-id": cid, "acp-session-id": sid, "accept": "text/event-stream"}
        assert (await http_call(app, "POST", message("session/close", 51, sessionId=sid), headers).response())[0] == 202
        late = await opened(http_call(app, "GET", headers=headers))
        assert (await late.event())["id"] == 51
        await asyncio.wait_for(late.task, HANG)
        assert not link.sessions and list(link.streams) == [None]
        # a session/load the agent refuses gives back the slot it took
        await new_session(app, cid, stream, 100)
        headers = {"acp-connection-id": cid, "acp-session-id": "ghost"}
        load = message("session/load", 101, sessionId="ghost", cwd="/")
        assert (await http_call(app, "POST", load, headers).response())[0] == 202
        assert (await stream.event())["error"]["code"] == -32002
        assert "ghost" not in link.sessions
        await new_session(app, cid, stream, 102)

    run(go())
