"""The client transports (``_remote``) against the ASGI app served by uvicorn
on a loopback port: real sockets, the websockets and httpx packages (the test
extras), one event loop. The tiny method table and agent are
test_runtime_asgi's."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import sys
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

import pytest
from acpgen.runtime import _asgi as asgi
from acpgen.runtime import _connection as connection
from acpgen.runtime import _remote as remote
from acpgen.runtime import _transport as transport
from acpgen.runtime._jsonrpc import RequestError

from ..patience import HANG
from .test_runtime_asgi import CODEC, TIMEOUT, make_app


class ClientEnd(connection.Connection[Any]):
    side = "client"
    codec = CODEC


class Recorder:
    def __init__(self, conn: ClientEnd) -> None:
        self.conn = conn
        self.updates: list[int] = []

    async def session_update(self, params: dict[str, Any]) -> None:
        self.updates.append(params["update"]["i"])

    async def request_permission(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"outcome": f"allowed {params['sessionId']}"}


@contextlib.asynccontextmanager
async def serving(**options: Any) -> AsyncIterator[tuple[asgi.AcpAsgiApp, int]]:
    app = make_app(**options)
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    server = asyncio.ensure_future(asgi.serve(app, port=0, ready=ready.set_result))
    try:
        yield app, await asyncio.wait_for(ready, TIMEOUT)
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG))


async def open_transport(kind: str, port: int, **options: Any) -> transport.Transport:
    if kind == "ws":
        return await remote.open_websocket(f"ws://127.0.0.1:{port}/acp", **options)
    return await remote.open_http(f"http://127.0.0.1:{port}/acp", **options)


async def session(conn: ClientEnd) -> str:
    assert await conn.request("initialize", {}) == {"protocolVersion": 1}
    return (await conn.request("session/new", {}))["sessionId"]


@pytest.mark.parametrize("kind", ["ws", "http"])
def test_a_session_over_the_network(kind: str) -> None:
    async def go() -> None:
        async with serving() as (app, port):
            opening = open_transport(kind, port)
            async with remote.connected(lambda t: ClientEnd(Recorder, t), opening) as conn:
                sid = await session(conn)
                answer = await conn.request("session/prompt", {"sessionId": sid, "n": 50})
                # the updates streamed before the answer have been handled
                assert answer == {"stopReason": "end_turn"}
                assert conn.handler.updates == list(range(50))
                # the agent's request and the client's answer (on the session's stream)
                asked = await conn.request("session/prompt", {"sessionId": sid, "ask": True})
                assert asked == {"stopReason": f"allowed {sid}"}
                second = (await conn.request("session/new", {}))["sessionId"]
                assert second != sid
                assert await conn.request("session/prompt", {"sessionId": second, "n": 3}) == {"stopReason": "end_turn"}
            for _ in range(100):
                if not app.links:
                    break
                await asyncio.sleep(0.02)
            assert not app.links, "closing the client closes its connection on the server"

    run(go())


@pytest.mark.parametrize("kind", ["ws", "http"])
def test_a_refused_client_learns_the_status(kind: str) -> None:
    async def go() -> None:
        async with serving(authenticate=asgi.bearer_token("s3cret")) as (_, port):
            if kind == "ws":
                with pytest.raises(remote.TransportRefused) as refused:
                    await open_transport(kind, port)
                assert refused.value.status == 401
                with pytest.raises(remote.TransportRefused) as refused:
                    await open_transport(
                        kind, port, headers={"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}
                    )
                assert refused.value.status == 403
            else:
                async with remote.connected(lambda t: ClientEnd(Recorder, t), open_transport(kind, port)) as conn:
                    with pytest.raises(RequestError) as error:
                        await conn.request("initialize", {})
                    assert error.value.data["status"] == 401
            headers = {"Authorization": "Bearer s3cret"}
            async with remote.connected(
                lambda t: ClientEnd(Recorder, t), open_transport(kind, port, headers=headers)
            ) as conn:
                await session(conn)

    run(go())


@pytest.mark.parametrize("kind", ["ws", "http"])
def test_the_server_closing_ends_the_clients_connection(kind: str) -> None:
    async def go() -> None:
        async with serving() as (app, port):
            conn = ClientEnd(Recorder, await open_transport(kind, port))
            conn.start()
            await session(conn)
            await app.close()
            with pytest.raises(ConnectionError):
                await asyncio.wait_for(conn.request("session/new", {}), TIMEOUT)
            await conn.close()

    run(go())


def test_an_http_request_the_server_refuses_fails_alone() -> None:
    async def go() -> None:
        async with (
            serving(max_sessions=1) as (_, port),
            remote.connected(lambda t: ClientEnd(Recorder, t), open_transport("http", port)) as conn,
        ):
            sid = await session(conn)
            with pytest.raises(RequestError) as error:
                await conn.request("session/new", {})
            assert error.value.data["status"] == 429
            assert await conn.request("session/prompt", {"sessionId": sid, "n": 2}) == {"stopReason": "end_turn"}

    run(go())


class _CookieApp(asgi.AcpAsgiApp):
    """Sets an affinity cookie on every answer, as a load balancer would."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def sending(event: Any) -> None:
            if event["type"] in ("http.response.start", "websocket.accept"):
                event["headers"] = [*event.get("headers", []), (b"set-cookie", b"affinity=b7; Path=/")]
            await send(event)

        await super().__call__(scope, receive, sending)


def test_the_servers_cookies_come_back_into_the_dict() -> None:
    async def go() -> None:
        app = _CookieApp(make_app().make_connection)
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        server = asyncio.ensure_future(asgi.serve(app, port=0, ready=ready.set_result))
        port = await ready
        try:
            for kind in ("ws", "http"):
                cookies: dict[str, str] = {}
                opening = open_transport(kind, port, cookies=cookies)
                async with remote.connected(lambda t: ClientEnd(Recorder, t), opening) as conn:
                    await session(conn)
                assert cookies == {"affinity": "b7"}, kind
        finally:
            server.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await server

    run(go())


@pytest.mark.parametrize(("module", "opener"), [("websockets", remote.open_websocket), ("httpx", remote.open_http)])
def test_a_missing_package_is_named(monkeypatch: pytest.MonkeyPatch, module: str, opener: Any) -> None:
    for name in list(sys.modules):
        if name == module or name.startswith(module + "."):
            monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=f"pip install {module}"):
        run(opener("ws://127.0.0.1:1/acp"))


# ------------------------------------------------------------------ SSE


def test_sse_decoder_frames_events_across_chunks() -> None:
    decoder = remote._SseDecoder(100)
    stream = b': keepalive\r\n\r\ndata: {"a":1}\r\n\r\ndata: {"b"\ndata: :2}\n\nevent: x\nid: 3\ndata:{"c":3}\n\n'
    out: list[Any] = []
    for i in range(0, len(stream), 7):
        out += decoder.feed(stream[i : i + 7])
    assert out == [b'{"a":1}', b'{"b"\n:2}', b'{"c":3}']


def test_sse_decoder_skips_an_event_over_the_limit_in_bounded_memory() -> None:
    decoder = remote._SseDecoder(100)
    big = b'data: {"id": 5, "result": "' + b"x" * 10_000
    out = decoder.feed(big)
    assert len(out) == 1 and isinstance(out[0], transport.MessageTooLarge) and out[0].id == 5
    assert decoder.pending < 200 and not decoder.parts
    out = decoder.feed(b"x" * 10_000 + b'"}\n\ndata: {"ok":1}\n\n')
    assert out == [b'{"ok":1}']
    assert json.loads(out[0]) == {"ok": 1}


def test_sse_decoder_work_on_a_long_line_is_linear() -> None:
    # Each chunk is searched and kept once: feeding the next piece of a long
    # line allocates about that piece, never the line so far (which joining
    # to a buffer, and searching it again from its start, did: quadratic).
    decoder = remote._SseDecoder(8 * 1024 * 1024)
    piece = b"x" * 16_384
    assert decoder.feed(b'data: {"id": 1, "result": "') == []
    tracemalloc.start()
    try:
        most = 0
        for _ in range(128):  # a 2 MiB line
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            assert decoder.feed(piece) == []
            most = max(most, tracemalloc.get_traced_memory()[1] - before)
    finally:
        tracemalloc.stop()
    assert most < 4 * len(piece), most
    out = decoder.feed(b'"}\n\n')
    assert len(out) == 1 and json.loads(out[0]) == {"id": 1, "result": "x" * 16_384 * 128}


def test_sse_decoder_drops_a_long_comment_line_but_not_the_next_event() -> None:
    decoder = remote._SseDecoder(100)
    assert decoder.feed(b": " + b"c" * 1000) == []
    assert decoder.feed(b"c" * 1000 + b'\ndata: {"ok":2}\n\n') == [b'{"ok":2}']


# ------------------------------------------------------------- hostile peers
#
# Servers written here, at loopback, that answer what no well-behaved agent
# would: bodies far over the client's limits, frames it must refuse,
# redirects to another host.


class RawServer:
    """An asyncio server at loopback running ``handle(reader, writer)`` per
    connection, noting every request head it reads and when each handler
    ended."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.heads: list[dict[str, str]] = []
        self.ended = asyncio.Event()
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> RawServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self.server is not None
        self.server.close()

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self.handle(self, reader, writer)
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()
            self.ended.set()

    async def read_head(self, reader: asyncio.StreamReader) -> dict[str, str]:
        """The request line (``:request``) and headers (lowercased); a body
        of ``Content-Length`` bytes is read and dropped."""
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        head = {":request": lines[0]}
        for line in lines[1:]:
            if ":" in line:
                name, _, value = line.partition(":")
                head[name.strip().lower()] = value.strip()
        await reader.readexactly(int(head.get("content-length", "0")))
        self.heads.append(head)
        return head


async def write_big_body(writer: asyncio.StreamWriter, total: int, chunked: bool, prefix: bytes) -> bool:
    """Write ``prefix`` then padding up to ``total`` bytes; True when all of
    it was taken, False once the client hung up."""
    piece = b"x" * 65_536
    sent = 0
    try:
        for part in [prefix] + [piece] * (total // len(piece)):
            writer.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
            await writer.drain()
            sent += len(part)
        if chunked:
            writer.write(b"0\r\n\r\n")
        await writer.drain()
    except (ConnectionError, OSError):
        return False
    return True


BIG = 32 * 1024 * 1024
"""A body far over the limits the tests set, and over what loopback socket
buffers hold: a client reading it whole lets its server finish writing."""


@pytest.mark.parametrize("framing", ["chunked", "length"])
def test_an_http_answer_over_max_message_is_refused_without_being_read(framing: str) -> None:
    finished: list[bool] = []

    async def handle(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await server.read_head(reader)
        if not head[":request"].startswith("POST"):
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
            return
        answer = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"pad":"'
        length = b"Transfer-Encoding: chunked" if framing == "chunked" else b"Content-Length: %d" % (BIG + 100)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nAcp-Connection-Id: c1\r\n%s\r\n\r\n" % length
        )
        finished.append(await write_big_body(writer, BIG, framing == "chunked", answer))

    async def go() -> None:
        async with RawServer(handle) as server:
            opening = remote.open_http(f"http://127.0.0.1:{server.port}/acp", max_message=65_536)
            async with remote.connected(lambda t: ClientEnd(Recorder, t), opening) as conn:
                with pytest.raises(RequestError) as error:
                    await conn.request("initialize", {})
                assert error.value.code == -32700
                assert "more than 65536 bytes" in str(error.value.data)
            await asyncio.wait_for(server.ended.wait(), HANG)
            assert finished == [False], "the client hung up before the body's end"
            # and told the server its connection is over
            while len(server.heads) < 2:
                await asyncio.sleep(0.01)
            assert [head[":request"].split()[0] for head in server.heads] == ["POST", "DELETE"]
            assert server.heads[1]["acp-connection-id"] == "c1"

    run(go())


def test_an_http_refusal_with_a_big_body_keeps_its_status_and_reads_only_its_start() -> None:
    finished: list[bool] = []

    async def handle(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        writer.write(b"HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n")
        finished.append(await write_big_body(writer, BIG, True, b"log in first "))

    async def go() -> None:
        async with RawServer(handle) as server:
            opening = remote.open_http(f"http://127.0.0.1:{server.port}/acp")
            async with remote.connected(lambda t: ClientEnd(Recorder, t), opening) as conn:
                with pytest.raises(RequestError) as error:
                    await conn.request("initialize", {})
                assert error.value.data["status"] == 401
                assert error.value.data["body"].startswith("log in first xxx")
            await asyncio.wait_for(server.ended.wait(), HANG)
            assert finished == [False]

    run(go())


def test_what_an_http_stream_brings_waits_in_bounded_bytes() -> None:
    # The connection's stream sends 300 events of 64 KiB that nobody reads:
    # the inbox holds about max_buffered bytes of them, not 256 events.
    event = b'data: {"jsonrpc":"2.0","method":"x","params":{"pad":"' + b"x" * 65_536 + b'"}}\n\n'

    async def handle(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:  # one connection may carry several requests
            head = await server.read_head(reader)
            if head[":request"].startswith("GET"):
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                )
                for _ in range(300):
                    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                    await writer.drain()
                await reader.read()
                return
            body = (
                b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'
                if head[":request"].startswith("POST")
                else b""
            )
            writer.write(
                b"HTTP/1.1 200 OK\r\nAcp-Connection-Id: c1\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            await writer.drain()

    async def go() -> None:
        async with RawServer(handle) as server:
            http = await remote.open_http(f"http://127.0.0.1:{server.port}/acp", max_buffered=1024 * 1024)
            try:
                # (the answer to initialize waits behind the stream's events)
                sending = asyncio.ensure_future(
                    http.send(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}')
                )
                inbox = http._inbox
                async with asyncio.timeout(HANG) if sys.version_info >= (3, 11) else contextlib.nullcontext():
                    while not inbox.full():
                        await asyncio.sleep(0.01)
                # each held parsed, weighed as its text and a bound on its parsed form
                weight = transport.held(transport.Loaded(None, event[6:-2]))
                assert weight > len(event)
                assert len(inbox) <= 1024 * 1024 // weight + 2  # and the answer, maybe
                assert inbox.held <= 1024 * 1024 + 2 * weight
                sizes = []
                for _ in range(301):  # everything still comes
                    message = await asyncio.wait_for(http.receive(), HANG)
                    assert message is not None
                    sizes.append(len(message))
                assert sum(size > 65_536 for size in sizes) == 300
                await asyncio.wait_for(sending, HANG)
            finally:
                await http.close()

    run(go())


# WebSocket: the server's side of the handshake, by hand.

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def accept_upgrade(head: dict[str, str]) -> bytes:
    key = head["sec-websocket-key"].encode()
    accept = base64.b64encode(hashlib.sha1(key + _GUID).digest())
    return (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: %s\r\n\r\n" % accept
    )


def text_frame(payload: bytes) -> bytes:
    if len(payload) < 126:
        return bytes([0x81, len(payload)]) + payload
    if len(payload) < 65_536:
        return bytes([0x81, 126]) + len(payload).to_bytes(2, "big") + payload
    return bytes([0x81, 127]) + len(payload).to_bytes(8, "big") + payload


@pytest.mark.parametrize(
    ("frame", "cause"),
    [
        (text_frame(b'{"pad":"' + b"x" * 5000 + b'"}'), "over max_message (1000 bytes)"),
        (text_frame(b'{"text":"\xff\xfe"}'), "not UTF-8"),
    ],
    ids=["1009", "1007"],
)
def test_a_websocket_frame_the_client_refuses_names_the_cause(frame: bytes, cause: str) -> None:
    async def handle(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(accept_upgrade(await server.read_head(reader)))
        await reader.read(1)  # the client's first frame: initialize
        writer.write(frame)
        await writer.drain()
        await reader.read()  # never closes its side: the client gives up

    async def go() -> None:
        async with RawServer(handle) as server:
            opening = remote.open_websocket(f"ws://127.0.0.1:{server.port}/acp", max_message=1000)
            async with remote.connected(lambda t: ClientEnd(Recorder, t), opening) as conn:
                with pytest.raises(ConnectionError) as error:
                    await conn.request("initialize", {})
                assert cause in str(error.value)
                assert ("1009" if "max_message" in cause else "1007") in str(error.value)

    run(go())


def test_a_refused_websocket_upgrade_with_a_big_body_keeps_its_status() -> None:
    async def handle(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.read_head(reader)
        writer.write(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n" % BIG)
        await write_big_body(writer, 1024 * 1024, False, b"log in first")

    async def go() -> None:
        async with RawServer(handle) as server:
            with pytest.raises(remote.TransportRefused) as refused:
                await remote.open_websocket(f"ws://127.0.0.1:{server.port}/acp")
            assert refused.value.status == 401
            assert "Unauthorized" in refused.value.body

    run(go())


@pytest.mark.parametrize("allowed", [False, True])
def test_a_websocket_redirect_to_another_host_is_refused_unless_allowed(allowed: bool) -> None:
    async def target(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(accept_upgrade(await server.read_head(reader)))
        await writer.drain()
        await reader.read()

    async def go() -> None:
        async with RawServer(target) as other:

            async def redirect(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                await server.read_head(reader)
                location = b"ws://127.0.0.1:%d/acp" % other.port
                writer.write(b"HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % location)

            async with RawServer(redirect) as server:
                url = f"ws://127.0.0.1:{server.port}/acp"
                headers = {"X-Api-Key": "s3cret"}
                if not allowed:
                    with pytest.raises(remote.TransportRefused) as refused:
                        await remote.open_websocket(url, headers=headers)
                    assert refused.value.status == 302
                    assert f"127.0.0.1:{other.port}" in refused.value.body
                    assert other.heads == [], "nothing was sent to the other host"
                else:
                    socket = await remote.open_websocket(url, headers=headers, cross_host_redirects=True)
                    await socket.close()
                    assert [head.get("x-api-key") for head in other.heads] == ["s3cret"]
                assert len(server.heads) == 1

    run(go())


# ------------------------------------------------------------- at the end


class SlowRecorder(Recorder):
    """Its first update waits for ``release``."""

    entered: asyncio.Event
    release: asyncio.Event

    async def session_update(self, params: dict[str, Any]) -> None:
        if not self.updates:
            self.entered.set()
            await self.release.wait()
        await super().session_update(params)


def test_at_the_peers_end_the_updates_read_are_handled_before_the_answer() -> None:
    # The agent streams updates, answers and closes; the client's update
    # handler is slower than its grace: the answer still comes after every
    # update was handled, none dropped.
    async def go() -> None:
        agent, end = transport.memory_pair()
        conn = ClientEnd(SlowRecorder, end)
        conn.handler.entered, conn.handler.release = asyncio.Event(), asyncio.Event()
        conn.grace = 0
        conn.start()
        asking = asyncio.ensure_future(conn.request("session/prompt", {"sessionId": "s", "n": 3}))
        request = json.loads(await asyncio.wait_for(agent.receive(), HANG))
        for i in range(3):
            update = {"sessionId": "s", "update": {"i": i}}
            await agent.send(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": update}).encode())
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "end_turn"}}
        await agent.send(json.dumps(answer).encode())
        await asyncio.wait_for(conn.handler.entered.wait(), HANG)
        await agent.close()
        async with asyncio.timeout(HANG) if sys.version_info >= (3, 11) else contextlib.nullcontext():
            while not conn.ended:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0)
        conn.handler.release.set()
        assert await asyncio.wait_for(asking, HANG) == {"stopReason": "end_turn"}
        assert conn.handler.updates == [0, 1, 2]
        await asyncio.wait_for(conn.run(), HANG)
        await conn.close()

    run(go())


def test_a_stream_nobody_reads_holds_max_buffered_bytes_of_what_its_messages_hold() -> None:
    # Small updates behind a session stream never opened: the server's
    # buffer counts the bytes its messages hold, not their length alone
    # (that each holds only its text, not orjson's 4 KiB buffer, is
    # test_json_backend's)
    import httpx

    async def go() -> None:
        async with serving(max_buffered=100_000) as (app, port):
            url = f"http://127.0.0.1:{port}/acp"
            async with httpx.AsyncClient(timeout=httpx.Timeout(HANG)) as client:
                answer = await client.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
                headers = {"Acp-Connection-Id": answer.headers["Acp-Connection-Id"]}
                async with client.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) as events:
                    await client.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "session/new"})
                    async for line in events.aiter_lines():
                        if line.startswith("data:"):
                            sid = json.loads(line[5:])["result"]["sessionId"]
                            break
                    prompt = {"sessionId": sid, "n": 100_000, "size": 10}
                    message = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}
                    await client.post(url, headers={**headers, "Acp-Session-Id": sid}, json=message)
                    (link,) = app.links.values()
                    while link.room.is_set():  # the agent waits once the buffer is full
                        await asyncio.sleep(0.01)
                    items = [data for stream in link.streams.values() for data in stream.items]
                    assert link.buffered == sum(transport.held(data) for data in items)
                    assert sum(sys.getsizeof(data) for data in items) <= 100_000 + max(map(len, items)) + 64

    run(go())


def test_what_a_websocket_brings_waits_in_bounded_bytes() -> None:
    # 40 updates of 100 kB while the client's handler waits on the first:
    # the client stops reading (and the server's writes wait) once about
    # max_buffered bytes are held, in websockets' frame queue and the
    # connection's; it held every one (16 frames, then 1024 messages).
    update = {"sessionId": "s", "update": {"i": 0, "text": "x" * 100_000}}
    frame = text_frame(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": update}).encode())
    started = asyncio.Event()

    async def handle(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(accept_upgrade(await server.read_head(reader)))
        await started.wait()
        for _ in range(40):
            writer.write(frame)
            await writer.drain()
        await reader.read()

    async def go() -> None:
        async with RawServer(handle) as server:
            url = f"ws://127.0.0.1:{server.port}/acp"
            ws = await remote.open_websocket(url, max_message=200_000, max_buffered=400_000)
            conn = ClientEnd(SlowRecorder, ws, max_buffered=400_000)
            conn.handler.entered, conn.handler.release = asyncio.Event(), asyncio.Event()
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                conn.start()
                started.set()
                await asyncio.wait_for(conn.handler.entered.wait(), HANG)
                # until the client stops reading for good (its queue full,
                # the socket paused), or has read everything
                while not (conn._full() and not ws.socket.transport.is_reading()) and conn._backlog() < 39:
                    await asyncio.sleep(0.01)
                held = tracemalloc.get_traced_memory()[0] - before
            finally:
                tracemalloc.stop()
            assert conn._backlog() < 10
            assert held < 3 * 400_000 + 3 * len(frame), held
            conn.handler.release.set()
            while len(conn.handler.updates) < 40:
                await asyncio.sleep(0.01)
            await conn.close()

    run(go())


ANSWER = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}'


@pytest.mark.parametrize(
    "text",
    [
        # Nested past what json's recursion reaches: load_message says so
        # (ValueError, never RecursionError) and the connection answers -32700.
        b"[" * 100_000 + b"]" * 100_000,
        b'{"jsonrpc":"2.0","method":"x","params":{"a":NaN}}',
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"x","params":{}}',
        b'{"jsonrpc":"2.0","id":1' + b"0" * 5000 + b',"method":"x"}',
    ],
)
def test_an_http_stream_hands_on_what_the_connection_reads_and_goes_on(text: bytes) -> None:
    # Over stdio any line reaches the connection, which decides; the SSE
    # stream reads an event as the connection does (_jsonrpc's load_message)
    # and hands it on whatever it holds, then the events after it.
    after = b'{"jsonrpc":"2.0","method":"after","params":{}}'

    async def handle(server: RawServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await server.read_head(reader)
            if head[":request"].startswith("GET"):
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                )
                for event in (text, after):
                    chunk = b"data: " + event + b"\n\n"
                    writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
                await reader.read()
                return
            body = ANSWER if head[":request"].startswith("POST") else b""
            writer.write(
                b"HTTP/1.1 200 OK\r\nAcp-Connection-Id: c1\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            await writer.drain()

    async def go() -> list[bytes | None]:
        async with RawServer(handle) as server:
            http = await remote.open_http(f"http://127.0.0.1:{server.port}/acp")
            try:
                await http.send(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}')
                return [await asyncio.wait_for(http.receive(), HANG) for _ in range(3)]
            finally:
                await http.close()

    got = run(go())
    # (the answer to initialize may come before, between or after the events)
    assert got.count(ANSWER) == 1
    assert [message for message in got if message != ANSWER] == [text, after]
