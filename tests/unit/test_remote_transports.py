"""The client transports (``_remote``) against the ASGI app served by uvicorn
on a loopback port: real sockets, the websockets and httpx packages (the test
extras), one event loop. The tiny method table and agent are
test_runtime_asgi's."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
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
    assert len(decoder.buffer) < 200
    out = decoder.feed(b"x" * 10_000 + b'"}\n\ndata: {"ok":1}\n\n')
    assert out == [b'{"ok":1}']
    assert json.loads(out[0]) == {"ok": 1}
