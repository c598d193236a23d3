"""The fixed part of the generated ``connection`` module's entry points.

The generated module keeps one thin, typed function per entry point
(``connect_in_memory``, ``asgi_agent_app``, ``connect_agent_ws`` ...):
its signature names the package's own ``AgentSideConnection`` or
``ClientSideConnection`` and its body builds the connection and calls the
function here that does the rest, which is the same for every schema. The
entry points that name no class of the package (:func:`serve_versions`,
:func:`spawn_agent_versions`, :func:`bearer_token`) are defined here
whole, and the generated module re-exports them.

The network transports (``_asgi``, ``_remote``) are imported only when used:
they need packages outside the standard library (uvicorn, websockets,
httpx), imported only then.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, TypeVar

from ._connection import Connection, ConnectionOptions, open_stdio
from ._transport import (
    DEFAULT_CLOSE_GRACE,
    DEFAULT_MAX_BUFFERED,
    Transport,
    memory_pair,
)
from ._versions import AgentEntry, ClientEntry
from ._versions import serve_versions as _serve_versions
from ._versions import spawn_versions as _spawn_versions

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ._asgi import AcpAsgiApp, RequestHead, ServeOptions

__all__ = [
    "asgi_app",
    "bearer_token",
    "connect_http",
    "connect_websocket",
    "in_memory",
    "serve",
    "serve_versions",
    "spawn_agent_versions",
]

_K = TypeVar("_K", bound=Connection[Any])
_L = TypeVar("_L", bound=Connection[Any])


def in_memory(
    agent: Callable[[Transport], _K], client: Callable[[Transport], _L]
) -> tuple[_K, _L]:
    """An agent's connection and a client's (``agent(transport)``,
    ``client(transport)``) joined in this process by a memory pair, both
    started. Call it with an event loop running."""
    agent_end, client_end = memory_pair()
    agent_side = agent(agent_end)
    client_side = client(client_end)
    agent_side.start()
    client_side.start()
    return agent_side, client_side


def asgi_app(
    connect: Callable[[Transport, int], Connection[Any]],
    **options: Unpack[ServeOptions],
) -> AcpAsgiApp:
    """The ASGI application serving one agent connection
    (``connect(transport, max_message)``) per client; ``options`` are
    :class:`~._asgi.ServeOptions`."""
    from ._asgi import AcpAsgiApp

    return AcpAsgiApp(connect, **options)


async def serve(
    app: AcpAsgiApp,
    *,
    host: str,
    port: int,
    ready: Callable[[int], object] | None,
) -> None:
    """Serve ``app`` with uvicorn until cancelled (:func:`._asgi.serve`)."""
    from ._asgi import serve as serve_app

    await serve_app(app, host=host, port=port, ready=ready)


def connect_websocket(
    connect: Callable[[Transport], _K],
    url: str,
    *,
    headers: Mapping[str, str] | None,
    cookies: dict[str, str] | None,
    max_message: int,
    cross_host_redirects: bool,
    options: ConnectionOptions,
) -> AbstractAsyncContextManager[_K]:
    """Open a WebSocket transport to ``url`` and yield ``connect(transport)``
    started; closed on exit (:func:`._remote.open_websocket`). The
    transport holds at most the connection's ``max_buffered`` bytes
    (``options``)."""
    from ._remote import connected, open_websocket

    opening = open_websocket(
        url,
        headers=headers,
        cookies=cookies,
        max_message=max_message,
        max_buffered=options.get("max_buffered", DEFAULT_MAX_BUFFERED),
        cross_host_redirects=cross_host_redirects,
    )
    return connected(connect, opening)


def connect_http(
    connect: Callable[[Transport], _K],
    url: str,
    *,
    headers: Mapping[str, str] | None,
    cookies: dict[str, str] | None,
    max_message: int,
    http2: bool,
    options: ConnectionOptions,
) -> AbstractAsyncContextManager[_K]:
    """Open a Streamable HTTP transport to ``url`` and yield
    ``connect(transport)`` started; closed on exit
    (:func:`._remote.open_http`). The transport holds at most the
    connection's ``max_buffered`` bytes (``options``)."""
    from ._remote import connected, open_http

    opening = open_http(
        url,
        headers=headers,
        cookies=cookies,
        max_message=max_message,
        max_buffered=options.get("max_buffered", DEFAULT_MAX_BUFFERED),
        http2=http2,
    )
    return connected(connect, opening)


async def serve_versions(
    agents: Mapping[int, AgentEntry],
    transport: Transport | None = None,
    **options: Unpack[ConnectionOptions],
) -> None:
    """Serve one client with the package of the version its ``initialize``
    asks for: ``agents`` maps a protocol version to that package's
    ``(AgentSideConnection, make_agent)``, e.g. ``{1: (acp_v1.AgentSideConnection,
    V1Agent), 2: (acp_v2.AgentSideConnection, V2Agent)}``. The newest version at
    or below the requested one serves (the oldest for a string or older version,
    whose agent answers with its own). Serves stdin/stdout unless given a
    ``transport``; ``options`` go to the connection."""
    await _serve_versions(
        agents, transport if transport is not None else await open_stdio(), **options
    )


def spawn_agent_versions(
    clients: Mapping[int, ClientEntry],
    program: str,
    *args: str,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    close_grace: float = DEFAULT_CLOSE_GRACE,
    **options: Unpack[ConnectionOptions],
) -> AbstractAsyncContextManager[tuple[Any, Any]]:
    """Start ``program`` as an agent subprocess, initialize offering the newest
    version of ``clients`` (a protocol version -> that package's
    ``(ClientSideConnection, make_client, InitializeRequest)``) and yield the
    connection of the package of the version the agent chose, with its typed
    answer to ``initialize``; ``options`` are the connection's. Leaving the
    block ends the agent as :func:`spawn_agent` says (``close_grace``). See
    :func:`connect_versions` for any transport."""
    return _spawn_versions(
        clients, program, args, env=env, cwd=cwd, close_grace=close_grace, **options
    )


def bearer_token(token: str) -> Callable[[RequestHead], bool]:
    """An ``authenticate`` hook for :func:`asgi_agent_app` and
    :func:`serve_agent`: a request must carry ``Authorization: Bearer <token>``
    (compared in constant time)."""
    from ._asgi import bearer_token as check_bearer

    return check_bearer(token)
