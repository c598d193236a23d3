"""The ASGI app (``_asgi``) on its own, driven through ASGI events (no server,
no dependency): the RFD's Streamable HTTP and WebSocket flows, every refusal
with its status, and the bounds on what a peer that does not read can make
the app hold."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from acpgen.runtime import _asgi as asgi
from acpgen.runtime import _connection as connection
from acpgen.runtime import _jsonrpc as rpc
from acpgen.runtime._runtime import ValidationError

from ..patience import HANG

TIMEOUT = HANG


def _decode(name: str, value: Any, strict: bool = False) -> Any:
    if not isinstance(value, dict):
        raise ValidationError(f"expected an object for {name}")
    return value


def _encode(value: Any, validate: bool = False) -> Any:
    return value


def _request(side: rpc.Side, name: str, handler: str) -> rpc.MethodInfo:
    return rpc.MethodInfo(name, request=rpc.RequestInfo(side, dict, dict, handler, "P", "R"))


def _notification(side: rpc.Side, name: str, handler: str) -> rpc.MethodInfo:
    return rpc.MethodInfo(name, notification=rpc.NotificationInfo(side, dict, handler, "P"))


METHODS = {
    info.name: info
    for info in (
        _request("agent", "initialize", "initialize"),
        _request("agent", "session/new", "new_session"),
        _request("agent", "session/load", "load_session"),
        _request("agent", "session/prompt", "prompt"),
        _notification("agent", "session/cancel", "cancel"),
        _notification("client", "session/update", "session_update"),
        _request("client", "session/request_permission", "request_permission"),
    )
}
CODEC = rpc.MessageCodec(METHODS, _decode, _encode, null_request_id=False)


class AgentEnd(connection.Connection[Any]):
    side = "agent"
    codec = CODEC


class EchoAgent:
    """Answers initialize (``hang`` never), numbers its sessions, streams
    ``params["n"]`` updates per prompt."""

    hang = False

    def __init__(self, conn: AgentEnd) -> None:
        self.conn = conn
        self.sessions = 0

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.hang:
            await asyncio.sleep(3600)
        return {"protocolVersion": 1}

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        self.sessions += 1
        return {"sessionId": f"s{self.sessions}"}

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("ask"):  # the RFD's permission flow: a request to the client
            answer = await self.conn.request("session/request_permission", {"sessionId": params["sessionId"]})
            return {"stopReason": answer["outcome"]}
        for i in range(params.get("n", 1)):
            update = {"sessionId": params["sessionId"], "update": {"i": i, "text": "x" * params.get("size", 10)}}
            await self.conn.notify("session/update", update)
        return {"stopReason": "end_turn"}

    async def cancel(self, params: dict[str, Any]) -> None:
        pass


class HangingAgent(EchoAgent):
    hang = True


def make_app(agent: type[EchoAgent] = EchoAgent, **options: Any) -> asgi.AcpAsgiApp:
    return asgi.AcpAsgiApp(lambda t, limit: AgentEnd(agent, t, max_message=limit), **options)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


def message(method: str | None = None, id: int | None = None, **params: Any) -> bytes:
    wire: dict[str, Any] = {"jsonrpc": "2.0"}
    if id is not None:
        wire["id"] = id
    if method is not None:
        wire["method"] = method
        wire["params"] = params
    return json.dumps(wire).encode()


class Call:
    """One HTTP request or WebSocket driven through the app."""

    def __init__(self, app: asgi.AcpAsgiApp, scope: dict[str, Any], first: list[dict[str, Any]]) -> None:
        self.scope = scope
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for event in first:
            self.inbox.put_nowait(event)
        self.sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.task = asyncio.ensure_future(app(scope, self.inbox.get, self.sent.put))

    async def next(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.sent.get(), TIMEOUT)

    async def response(self) -> tuple[int, dict[str, str], bytes]:
        start = await self.next()
        assert start["type"].endswith("response.start"), start
        headers = {k.decode(): v.decode() for k, v in start["headers"]}
        body = b""
        while True:
            event = await self.next()
            body += event.get("body", b"")
            if not event.get("more_body", False):
                return start["status"], headers, body

    async def event(self) -> dict[str, Any]:
        """The next SSE event's message (keep-alive comments skipped)."""
        while True:
            chunk = (await self.next())["body"]
            if chunk.startswith(b"data: "):
                return json.loads(chunk[6:])


def http(
    app: asgi.AcpAsgiApp,
    method: str,
    body: bytes = b"",
    *,
    path: str = "/acp",
    headers: dict[str, str] | None = None,
    chunks: list[bytes] | None = None,
) -> Call:
    sent = {"content-type": "application/json", "accept": "text/event-stream"} if method != "DELETE" else {}
    sent.update(headers or {})
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(k.lower().encode(), v.encode()) for k, v in sent.items() if v is not None],
        "client": ("127.0.0.1", 50000),
    }
    parts = chunks if chunks is not None else [body]
    events = [{"type": "http.request", "body": part, "more_body": i < len(parts) - 1} for i, part in enumerate(parts)]
    return Call(app, scope, events)


async def initialize(app: asgi.AcpAsgiApp, **headers: str) -> str:
    status, answer_headers, body = await http(app, "POST", message("initialize", 0), headers=headers).response()
    assert status == 200, body
    assert json.loads(body)["result"] == {"protocolVersion": 1}
    return answer_headers["acp-connection-id"]


async def new_session(app: asgi.AcpAsgiApp, cid: str, stream: Call, id: int = 1) -> str:
    status, _, _ = await http(app, "POST", message("session/new", id), headers={"acp-connection-id": cid}).response()
    assert status == 202
    answer = await stream.event()
    assert answer["id"] == id
    return answer["result"]["sessionId"]


async def opened(call: Call) -> Call:
    start = await call.next()
    assert start["status"] == 200, start
    return call


# ------------------------------------------------------------------ the flows


def test_streamable_http_session_as_the_rfd_draws_it() -> None:
    async def go() -> None:
        app = make_app()
        cid = await initialize(app)
        stream = await opened(http(app, "GET", headers={"acp-connection-id": cid}))
        sid = await new_session(app, cid, stream)  # answered on the connection stream
        session = await opened(http(app, "GET", headers={"acp-connection-id": cid, "acp-session-id": sid}))
        headers = {"acp-connection-id": cid, "acp-session-id": sid}
        status, _, _ = await http(
            app, "POST", message("session/prompt", 2, sessionId=sid, n=3), headers=headers
        ).response()
        assert status == 202
        events = [await session.event() for _ in range(4)]
        assert [e["params"]["update"]["i"] for e in events[:3]] == [0, 1, 2]
        assert events[3] == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
        # session/load names the session: its answer comes on the connection stream
        load = message("session/load", 3, sessionId=sid, cwd="/")
        assert (await http(app, "POST", load, headers=headers).response())[0] == 202
        assert (await stream.event())["id"] == 3
        assert (await http(app, "DELETE", headers={"acp-connection-id": cid}).response())[0] == 202
        assert cid not in app.links
        assert (await http(app, "POST", message("session/new", 4), headers=headers).response())[0] == 404

    run(go())


def test_the_agents_request_comes_on_the_session_stream_and_its_answer_by_post() -> None:
    async def go() -> None:
        app = make_app()
        cid = await initialize(app)
        stream = await opened(http(app, "GET", headers={"acp-connection-id": cid}))
        sid = await new_session(app, cid, stream)
        headers = {"acp-connection-id": cid, "acp-session-id": sid}
        session = await opened(http(app, "GET", headers=headers))
        await http(app, "POST", message("session/prompt", 2, sessionId=sid, ask=True), headers=headers).response()
        request = await session.event()
        assert request["method"] == "session/request_permission"
        wrong = {"acp-connection-id": cid, "acp-session-id": "s9"}
        answer = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": "allowed"}}).encode()
        for _ in range(2):  # a refused answer leaves the request waiting for its own
            assert (await http(app, "POST", answer, headers=wrong).response())[0] == 400
        assert (await http(app, "POST", answer, headers=headers).response())[0] == 202
        assert (await session.event()) == {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "allowed"}}

    run(go())


def test_messages_wait_for_a_session_stream_opened_late() -> None:
    async def go() -> None:
        app = make_app()
        cid = await initialize(app)
        stream = await opened(http(app, "GET", headers={"acp-connection-id": cid}))
        sid = await new_session(app, cid, stream)
        headers = {"acp-connection-id": cid, "acp-session-id": sid}
        await http(app, "POST", message("session/prompt", 2, sessionId=sid, n=2), headers=headers).response()
        session = await opened(http(app, "GET", headers=headers))
        assert [(await session.event()).get("id") for _ in range(3)] == [None, None, 2]

    run(go())


def test_websocket_connection() -> None:
    async def go() -> None:
        app = make_app()
        call = websocket(app)
        accept = await call.next()
        assert accept["type"] == "websocket.accept"
        cid = dict(accept["headers"])[b"acp-connection-id"].decode()
        assert cid in app.links
        call.inbox.put_nowait({"type": "websocket.receive", "bytes": b"ignored"})
        call.inbox.put_nowait({"type": "websocket.receive", "text": message("initialize", 1).decode()})
        assert json.loads((await call.next())["text"])["result"] == {"protocolVersion": 1}
        call.inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})
        await asyncio.wait_for(call.task, TIMEOUT)
        assert cid not in app.links

    run(go())


def websocket(app: asgi.AcpAsgiApp, headers: dict[str, str] | None = None, extension: bool = True) -> Call:
    scope = {
        "type": "websocket",
        "path": "/acp",
        "headers": [(k.encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "extensions": {"websocket.http.response": {}} if extension else {},
    }
    return Call(app, scope, [{"type": "websocket.connect"}])


def test_a_websocket_message_over_the_limit_is_answered_and_the_connection_goes_on() -> None:
    async def go() -> None:
        app = make_app(max_message=1000)
        call = websocket(app)
        await call.next()
        big = message("session/new", 7, cwd="x" * 2000).decode()
        call.inbox.put_nowait({"type": "websocket.receive", "text": big})
        error = json.loads((await call.next())["text"])
        assert error["id"] == 7 and error["error"]["code"] == rpc.PARSE_ERROR
        call.inbox.put_nowait({"type": "websocket.receive", "text": message("initialize", 8).decode()})
        assert json.loads((await call.next())["text"])["id"] == 8

    run(go())


# ------------------------------------------------------------------ refusals


REFUSALS = {
    # id: (method, body, headers (CID: the connection's id), status)
    "another path": ("POST", message("initialize", 1), {"path": "/other"}, 404),
    "PUT": ("PUT", b"", {}, 405),
    "a foreign Origin": ("POST", message("initialize", 1), {"origin": "https://evil.example"}, 403),
    "the null Origin": ("POST", message("initialize", 1), {"origin": "null"}, 403),
    "not JSON's media type": ("POST", message("initialize", 1), {"content-type": "text/plain"}, 415),
    "a body that is not JSON": ("POST", b"{nope", {}, 400),
    "a batch": ("POST", b"[" + message("initialize", 1) + b"]", {}, 501),
    "a number": ("POST", b"42", {}, 400),
    "no connection id": ("POST", message("session/new", 1), {}, 400),
    "an unknown connection id": ("POST", message("session/new", 1), {"acp-connection-id": "nope"}, 404),
    "initialize on a connection": ("POST", message("initialize", 1), {"acp-connection-id": "CID"}, 400),
    "a prompt without Acp-Session-Id": (
        "POST",
        message("session/prompt", 1, sessionId="s1"),
        {"acp-connection-id": "CID"},
        400,
    ),
    "a cancel without Acp-Session-Id": (
        "POST",
        message("session/cancel", None, sessionId="s1"),
        {"acp-connection-id": "CID"},
        400,
    ),
    "a mismatched Acp-Session-Id": (
        "POST",
        message("session/prompt", 1, sessionId="s1"),
        {"acp-connection-id": "CID", "acp-session-id": "s2"},
        400,
    ),
    "an unknown session": (
        "POST",
        message("session/prompt", 1, sessionId="s9"),
        {"acp-connection-id": "CID", "acp-session-id": "s9"},
        404,
    ),
    "a GET not accepting SSE": ("GET", b"", {"acp-connection-id": "CID", "accept": "application/json"}, 406),
    "a GET without connection id": ("GET", b"", {}, 400),
    "a DELETE without connection id": ("DELETE", b"", {}, 400),
    "a Content-Length over the limit": ("POST", message("initialize", 1), {"content-length": "5000"}, 413),
    "a body over the limit": ("POST", message("initialize", 1, cwd="x" * 5000), {}, 413),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_refusal(case: str) -> None:
    method, body, headers, expected = REFUSALS[case]

    async def go() -> None:
        app = make_app(max_message=4000)
        cid = await initialize(app)
        sent = {k: cid if v == "CID" else v for k, v in headers.items() if k != "path"}
        path = headers.get("path", "/acp")
        status, _, text = await http(app, method, body, headers=sent, path=path).response()
        assert status == expected, text
        assert text, "a refusal says why"
        assert len(app.links) == 1, "a refusal opens no connection"

    run(go())


def test_a_body_over_the_limit_is_refused_before_it_is_read_whole() -> None:
    async def go() -> None:
        app = make_app(max_message=100)
        call = http(app, "POST", chunks=[b"x" * 80, b"x" * 80, b"x" * 80])
        status, _, _ = await call.response()
        assert status == 413
        assert call.inbox.qsize() == 1, "the last part was never read"

    run(go())


@pytest.mark.parametrize(
    ("origin", "allowed", "ok"),
    [
        ("http://localhost:3000", None, True),
        ("http://127.0.0.1:8080", None, True),
        ("http://[::1]:1", None, True),
        ("http://app.localhost", None, True),
        ("https://example.com", None, False),
        ("http://127.0.0.1.example.com", None, False),
        ("https://example.com", ["https://example.com"], True),
        ("http://localhost:3000", ["https://example.com"], False),
        ("https://anything.example", ["*"], True),
    ],
)
def test_origins(origin: str, allowed: list[str] | None, ok: bool) -> None:
    async def go() -> None:
        app = make_app(allowed_origins=allowed)
        status, _, _ = await http(app, "POST", message("initialize", 1), headers={"origin": origin}).response()
        assert status == (200 if ok else 403)

    run(go())


def test_authentication_hook() -> None:
    async def go() -> None:
        app = make_app(authenticate=asgi.bearer_token("s3cret"))
        refused = await http(app, "POST", message("initialize", 1)).response()
        assert refused[0] == 401
        wrong = await http(app, "POST", message("initialize", 1), headers={"authorization": "Bearer nope"}).response()
        assert wrong[0] == 401
        assert not app.links
        cid = await initialize(app, authorization="Bearer s3cret")
        # every request is checked, not only the first
        assert (await http(app, "DELETE", headers={"acp-connection-id": cid}).response())[0] == 401
        assert (
            await http(app, "DELETE", headers={"acp-connection-id": cid, "authorization": "Bearer s3cret"}).response()
        )[0] == 202

        seen: list[asgi.RequestHead] = []

        async def hook(head: asgi.RequestHead) -> bool:
            seen.append(head)
            return head.headers.get("x-token") == "t"

        app = make_app(authenticate=hook)
        assert (await http(app, "POST", message("initialize", 1)).response())[0] == 401
        await initialize(app, **{"x-token": "t"})
        assert seen[0].kind == "http" and seen[0].method == "POST" and seen[0].client == ("127.0.0.1", 50000)

    run(go())


@pytest.mark.parametrize("extension", [True, False])
def test_a_refused_websocket_gets_its_status(extension: bool) -> None:
    async def go() -> None:
        app = make_app(authenticate=asgi.bearer_token("s3cret"))
        call = websocket(app, extension=extension)
        first = await call.next()
        if extension:
            assert first["type"] == "websocket.http.response.start" and first["status"] == 401
        else:
            assert first["type"] == "websocket.close"
        call = websocket(make_app(), {"origin": "https://evil.example"})
        assert (await call.next())["status"] == 403
        assert not app.links

    run(go())


def test_connection_limit() -> None:
    async def go() -> None:
        app = make_app(max_connections=2)
        await initialize(app)
        await initialize(app)
        status, _, text = await http(app, "POST", message("initialize", 1)).response()
        assert status == 503 and b"too many connections" in text
        assert (await websocket(app).next())["status"] == 503
        assert len(app.links) == 2

    run(go())


def test_session_limit() -> None:
    async def go() -> None:
        app = make_app(max_sessions=2)
        cid = await initialize(app)
        stream = await opened(http(app, "GET", headers={"acp-connection-id": cid}))
        await new_session(app, cid, stream, 1)
        await new_session(app, cid, stream, 2)
        status, _, _ = await http(app, "POST", message("session/new", 3), headers={"acp-connection-id": cid}).response()
        assert status == 429
        status, _, _ = await http(app, "GET", headers={"acp-connection-id": cid, "acp-session-id": "other"}).response()
        assert status == 429

    run(go())


def test_one_reader_per_stream() -> None:
    async def go() -> None:
        app = make_app()
        cid = await initialize(app)
        await opened(http(app, "GET", headers={"acp-connection-id": cid}))
        status, _, _ = await http(app, "GET", headers={"acp-connection-id": cid}).response()
        assert status == 409

    run(go())


def test_initialize_timeout() -> None:
    async def go() -> None:
        app = make_app(HangingAgent, initialize_timeout=0.1)
        status, _, _ = await http(app, "POST", message("initialize", 1)).response()
        assert status == 504
        assert not app.links

    run(go())


# ------------------------------------------------------------------ bounds


def test_a_session_stream_nobody_reads_holds_back_the_agent_within_max_buffered() -> None:
    async def go() -> None:
        app = make_app(max_buffered=20_000)
        cid = await initialize(app)
        stream = await opened(http(app, "GET", headers={"acp-connection-id": cid}))
        sid = await new_session(app, cid, stream)
        headers = {"acp-connection-id": cid, "acp-session-id": sid}
        await http(
            app, "POST", message("session/prompt", 2, sessionId=sid, n=500, size=1000), headers=headers
        ).response()
        link = app.links[cid]
        while link.buffered < 20_000:  # the agent streams until the bound holds it back
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # a few more turns of the loop: nothing more is taken
        held = link.buffered
        assert 20_000 <= held < 20_000 + 1200, held  # one message past the bound, no more
        session = await opened(http(app, "GET", headers=headers))
        events = [await session.event() for _ in range(501)]
        assert events[-1]["id"] == 2 and [e["params"]["update"]["i"] for e in events[:-1]] == list(range(500))

    run(go())


def test_a_stream_stalled_past_idle_timeout_closes_its_connection() -> None:
    async def go() -> None:
        app = make_app(max_buffered=5_000, idle_timeout=0.3)
        cid = await initialize(app)
        stream = await opened(http(app, "GET", headers={"acp-connection-id": cid}))
        sid = await new_session(app, cid, stream)
        headers = {"acp-connection-id": cid, "acp-session-id": sid}
        await http(
            app, "POST", message("session/prompt", 2, sessionId=sid, n=100, size=1000), headers=headers
        ).response()
        while cid in app.links:  # closed once idle_timeout has passed (bounded by run's TIMEOUT)
            await asyncio.sleep(0.05)
        assert (await stream.next())["more_body"] is False  # the open stream ends

    run(go())


def test_an_http_connection_with_no_stream_open_is_closed_after_idle_timeout() -> None:
    async def go() -> None:
        app = make_app(idle_timeout=0.2)
        cid = await initialize(app)
        assert cid in app.links
        while cid in app.links:  # closed once idle_timeout has passed (bounded by run's TIMEOUT)
            await asyncio.sleep(0.05)

    run(go())


def test_is_loopback_origin_refuses_garbage() -> None:
    assert not asgi.is_loopback_origin("http://[nope")
    assert not asgi.is_loopback_origin("")


def test_a_websocket_peer_that_does_not_read_is_closed_after_idle_timeout() -> None:
    async def go() -> None:
        app = make_app(idle_timeout=0.3)
        call = websocket(app)
        call.sent = asyncio.Queue(maxsize=2)  # the socket's send waits once two are unread
        call.task.cancel()
        call.task = asyncio.ensure_future(app(call.scope, call.inbox.get, call.sent.put))
        await asyncio.sleep(0)
        for text in (message("initialize", 1), message("session/new", 2)):
            call.inbox.put_nowait({"type": "websocket.receive", "text": text.decode()})
        call.inbox.put_nowait(
            {"type": "websocket.receive", "text": message("session/prompt", 3, sessionId="s1", n=50).decode()}
        )
        while app.links or not call.task.done():  # the stalled connection closed, its handler returned
            await asyncio.sleep(0.05)

    run(go())
