"""The runtime's ``_sides`` on its own: the fixed part of the generated
connection module's entry points (the generated wrappers over real agents
are tested in tests/e2e and tests/interop)."""

from __future__ import annotations

from typing import Any

from acpgen.runtime import _remote as remote
from acpgen.runtime import _sides as sides
from acpgen.runtime import _transport as transport
from acpgen.runtime._asgi import AcpAsgiApp, RequestHead

from .test_connection_runtime import AgentEnd, ClientEnd, Echo, run


def test_in_memory_joins_and_starts_both_ends():
    async def main() -> None:
        agent, client = sides.in_memory(lambda t: AgentEnd(Echo, t), lambda t: ClientEnd(lambda conn: None, t))
        try:
            assert await client._call("echo", {"value": {"n": 7}}) == {"n": 7}
            assert agent.handler.calls == [("echo", {"value": {"n": 7}})]
        finally:
            await client.close()
            await agent.close()

    run(main())


def test_asgi_app_builds_the_app_with_its_factory_and_options():
    def connect(t: Any, limit: int) -> Any:
        return AgentEnd(Echo, t, max_message=limit)

    app = sides.asgi_app(connect, max_connections=3, path="/x")
    assert isinstance(app, AcpAsgiApp)
    assert (app.make_connection, app.max_connections, app.path) == (connect, 3, "/x")


def head(authorization: str | None) -> RequestHead:
    headers = {} if authorization is None else {"authorization": authorization}
    return RequestHead(kind="http", method="POST", path="/acp", headers=headers, client=None, scope={})


def test_bearer_token_accepts_only_its_token():
    check = sides.bearer_token("s3cret")
    assert check(head("Bearer s3cret")) is True
    assert check(head("Bearer other")) is False
    assert check(head(None)) is False


def test_network_clients_bound_the_transport_by_the_connections_max_buffered(monkeypatch):
    """The transport holds at most the connection's ``max_buffered`` bytes
    (the default when the options do not say), and the connection is made
    over the transport opened."""
    opened: list[tuple[str, dict[str, Any]]] = []
    _, our_end = transport.memory_pair()

    async def fake_open(url: str, **kwargs: Any) -> Any:
        opened.append((url, kwargs))
        return our_end

    monkeypatch.setattr(remote, "open_websocket", fake_open)
    monkeypatch.setattr(remote, "open_http", fake_open)

    async def main() -> None:
        made: list[Any] = []

        def connect(t: Any) -> Any:
            made.append(t)
            return ClientEnd(lambda conn: None, t)

        async with sides.connect_websocket(
            connect,
            "ws://h/acp",
            headers={"a": "b"},
            cookies=None,
            max_message=100,
            cross_host_redirects=True,
            options={"max_buffered": 1234},
        ) as conn:
            assert made == [our_end] and conn.transport is our_end
        async with sides.connect_http(
            connect, "http://h/acp", headers=None, cookies={}, max_message=50, http2=False, options={}
        ):
            pass

    run(main())
    assert opened == [
        (
            "ws://h/acp",
            {
                "headers": {"a": "b"},
                "cookies": None,
                "max_message": 100,
                "max_buffered": 1234,
                "cross_host_redirects": True,
            },
        ),
        (
            "http://h/acp",
            {
                "headers": None,
                "cookies": {},
                "max_message": 50,
                "max_buffered": transport.DEFAULT_MAX_BUFFERED,
                "http2": False,
            },
        ),
    ]
