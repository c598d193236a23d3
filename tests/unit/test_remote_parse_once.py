"""Over Streamable HTTP each message is parsed once per hop: the transport
that parses a message to route it hands it on parsed, and routes what its
connection sends by the message the connection dumped.

One session runs between a client over ``_remote.open_http`` and the ASGI
app served on a loopback port (test_remote_transports' setup), with every
``load_message`` of the runtime modules counted, each parse put down to the
side that made it (the server: ``_asgi``, ``_links``, the agent's
connection; the client: ``_remote``, the client's connection), and every
message the two connections send recorded as it is dumped."""

from __future__ import annotations

import collections
import sys
from collections.abc import Callable
from typing import Any

import pytest
from acpgen.runtime import _asgi as asgi
from acpgen.runtime import _connection as connection
from acpgen.runtime import _links as links
from acpgen.runtime import _remote as remote

from .test_remote_transports import ClientEnd, Recorder, open_transport, run, serving, session

_SERVER_MODULES = {asgi.__name__: "agent", links.__name__: "agent", remote.__name__: "client"}


def _side_of_caller() -> str:
    """The side whose code called the counted function: the connection
    found up the stack (its ``side``), else the module that called."""
    frame = sys._getframe(2)
    while frame is not None:
        owner = frame.f_locals.get("self")
        if isinstance(owner, connection.Connection):
            return str(owner.side)
        side = _SERVER_MODULES.get(frame.f_globals.get("__name__", ""))
        if side is not None:
            return side
        frame = frame.f_back
    raise AssertionError("a parse outside the runtime's transports and connections")


class Exchange:
    """What one HTTP session parsed and sent: ``sent[side]`` the texts each
    side's connection dumped, ``parsed[side]`` how often each text was
    parsed on that side."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: dict[str, list[bytes]] = {"agent": [], "client": []}
        self.parsed: dict[str, collections.Counter[bytes]] = {
            "agent": collections.Counter(),
            "client": collections.Counter(),
        }
        for module in (asgi, links, remote, connection):
            monkeypatch.setattr(module, "load_message", self._counting(module.load_message))
        monkeypatch.setattr(connection, "dump_message", self._recording(connection.dump_message))

    def _counting(self, load: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def counted(text: Any) -> Any:
            self.parsed[_side_of_caller()][bytes(text)] += 1
            return load(text)

        return counted

    def _recording(self, dump: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
        def recorded(wire: Any) -> bytes:
            data = dump(wire)
            self.sent[_side_of_caller()].append(data)
            return data

        return recorded

    def parses(self, sender: str, parser: str) -> dict[bytes, int]:
        """How often each message ``sender`` sent was parsed on ``parser``'s side."""
        return {text: self.parsed[parser][text] for text in self.sent[sender]}


def exchange(monkeypatch: pytest.MonkeyPatch) -> Exchange:
    """A session over HTTP: initialize, session/new, a prompt streaming
    updates, a prompt on which the agent asks the client (its request on
    the session's stream, the client's answer by POST)."""
    counts = Exchange(monkeypatch)

    async def go() -> None:
        async with serving() as (_, port):
            opening = open_transport("http", port)
            async with remote.connected(lambda t: ClientEnd(Recorder, t), opening) as conn:
                sid = await session(conn)
                assert await conn.request("session/prompt", {"sessionId": sid, "n": 5}) == {"stopReason": "end_turn"}
                assert conn.handler.updates == list(range(5))
                asked = await conn.request("session/prompt", {"sessionId": sid, "ask": True})
                assert asked == {"stopReason": f"allowed {sid}"}

    run(go())
    # Every kind of message went both ways: requests, answers, notifications.
    assert len(counts.sent["client"]) == 5  # 4 requests and the answer to the agent's
    assert len(counts.sent["agent"]) == 10  # 4 answers, 5 updates, its request
    assert len(set(counts.sent["client"] + counts.sent["agent"])) == 15
    return counts


def test_the_server_parses_each_message_posted_to_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # The app parses a POST's body to route it; the agent's connection takes
    # it parsed.
    counts = exchange(monkeypatch)
    assert counts.parses("client", "agent") == dict.fromkeys(counts.sent["client"], 1)


def test_the_server_routes_what_its_agent_sends_without_parsing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The link routes each message to its SSE stream (or the answer to
    # initialize to its POST) by the message the connection dumped.
    counts = exchange(monkeypatch)
    assert counts.parses("agent", "agent") == dict.fromkeys(counts.sent["agent"], 0)


def test_the_client_posts_what_its_connection_sends_without_parsing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The HTTP transport picks each POST's headers (the connection's id, the
    # session's) from the message the connection dumped.
    counts = exchange(monkeypatch)
    assert counts.parses("client", "client") == dict.fromkeys(counts.sent["client"], 0)


def test_the_client_parses_each_message_the_server_sends_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # An SSE event is parsed to route what follows it (the session's stream
    # an answer opens, the stream an answer to the agent goes on) and the
    # connection takes it parsed; the answer to initialize, the body of its
    # POST, is parsed by the connection alone.
    counts = exchange(monkeypatch)
    assert counts.parses("agent", "client") == dict.fromkeys(counts.sent["agent"], 1)
