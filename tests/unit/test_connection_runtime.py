"""The connection runtime (``_connection``) on its own, with a tiny method
table and trivial codec: what a hostile or careless peer can do to it.

An "agent" end (handles ``echo``, ``slow`` and ``note``) talks either to a
"client" end (handles ``ask`` and ``tell``) or to a raw peer that writes and
reads lines itself."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import signal
import socket
import sys
from typing import Any

import pytest
from acpgen.runtime import _connection as connection
from acpgen.runtime import _jsonrpc as rpc
from acpgen.runtime import _transport as transport
from acpgen.runtime._runtime import ValidationError

from ..patience import HANG
from .gated_writer import GatedWriter

TIMEOUT = HANG


def _copy(value: Any) -> Any:
    """A recursive copy, as generated decoders walk a value: deep nesting
    raises RecursionError here, as it can in a real package."""
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


def _decode(name: str, value: Any, strict: bool = False) -> Any:
    if not isinstance(value, dict):
        raise ValidationError(f"expected an object for {name}")
    return _copy(value)


def _encode(value: Any, validate: bool = False) -> Any:
    return value


def _request(side: rpc.Side, name: str) -> rpc.MethodInfo:
    return rpc.MethodInfo(name, request=rpc.RequestInfo(side, dict, dict, name, "P", "R"))


def _notification(side: rpc.Side, name: str) -> rpc.MethodInfo:
    return rpc.MethodInfo(name, notification=rpc.NotificationInfo(side, dict, name, "P"))


METHODS = {
    info.name: info
    for info in (
        _request("agent", "echo"),
        _request("agent", "slow"),
        _notification("agent", "note"),
        _request("client", "ask"),
        _notification("client", "tell"),
    )
}
CODEC = rpc.MessageCodec(METHODS, _decode, _encode, null_request_id=False)


class AgentInterface:
    async def echo(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("echo")

    async def slow(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("slow")

    async def note(self, params: Any) -> None:
        pass


class ClientInterface:
    async def ask(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("ask")

    async def tell(self, params: Any) -> None:
        pass


class AgentEnd(connection.Connection[Any]):
    side = "agent"
    codec = CODEC
    interface = AgentInterface


class ClientEnd(connection.Connection[Any]):
    side = "client"
    codec = CODEC
    interface = ClientInterface


class Echo(AgentInterface):
    """``echo`` answers its params' ``value``; ``slow`` waits for ``gate``;
    ``note`` records its params after waiting ``note_delay`` seconds."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.gate = asyncio.Event()
        self.calls: list[tuple[str, Any]] = []
        self.running = 0
        self.most = 0
        self.cancelled: list[Any] = []
        self.note_gate: asyncio.Event | None = None

    async def echo(self, params: Any) -> Any:
        self.calls.append(("echo", params))
        if "raise" in params:
            raise RuntimeError(params["raise"])
        return params.get("value", {})

    async def slow(self, params: Any) -> Any:
        self.calls.append(("slow", params))
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled.append(params.get("n"))
            raise
        finally:
            self.running -= 1
        return {"n": params.get("n")}

    async def note(self, params: Any) -> None:
        if self.note_gate is not None:
            await self.note_gate.wait()
        self.calls.append(("note", params))


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


async def socket_peer(
    make_handler: Any = Echo, **options: Any
) -> tuple[AgentEnd, asyncio.StreamReader, asyncio.StreamWriter]:
    """An agent end on one side of a socket pair, and the raw streams of the other."""
    left, right = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=left, limit=options.pop("limit", 2**16))
    conn = AgentEnd(
        make_handler,
        transport.StreamTransport(
            reader, writer, max_message=options.pop("max_message", transport.DEFAULT_MAX_MESSAGE)
        ),
        **options,
    )
    conn.start()
    peer_reader, peer_writer = await asyncio.open_connection(sock=right, limit=2**24)
    return conn, peer_reader, peer_writer


async def send(writer: asyncio.StreamWriter, *lines: bytes | dict[str, Any]) -> None:
    for line in lines:
        writer.write(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n")
    await writer.drain()


def _refuse_constant(token: str) -> None:
    raise AssertionError(f"{token} is not JSON")


async def read_reply(reader: asyncio.StreamReader) -> dict[str, Any]:
    """The next line, which must be strict JSON in valid UTF-8."""
    line = await reader.readline()
    assert line.endswith(b"\n"), line
    return json.loads(line.decode("utf-8", errors="strict"), parse_constant=_refuse_constant)


def echo(id: Any, value: Any = None, **params: Any) -> dict[str, Any]:
    if value is not None:
        params["value"] = value
    return {"jsonrpc": "2.0", "id": id, "method": "echo", "params": params}


# ------------------------------------------------------------ 1. parse errors


@pytest.mark.parametrize(
    "line",
    [
        b"[" * 1000 + b"]" * 1000,
        b'{"a":' * 2000 + b"1" + b"}" * 2000,
        json.dumps(echo(1, x=1)).encode()[:-2] + b',"_meta":' + b"[" * 1000 + b"]" * 1000 + b"}}",
        # Shallow enough to parse, too deep for a decoder that walks it.
        json.dumps(echo(1, x=1)).encode()[:-2] + b',"_meta":' + b'{"a":' * 600 + b"1" + b"}" * 600 + b"}}",
        b"\xff\xfe{",
        b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {}',
        b"NaN",
    ],
    ids=["array-1000", "object-2000", "meta-1000", "meta-600", "not-utf8", "cut", "nan"],
)
def test_a_line_that_does_not_parse_is_answered_and_reading_goes_on(line):
    async def main():
        conn, reader, writer = await socket_peer()
        await send(writer, line + b"\n")
        first = await read_reply(reader)
        if "result" in first:
            # A Python whose json and decoder go this deep (3.13) reads the
            # request and answers it.
            assert line.startswith(b'{"jsonrpc"') and first["id"] == 1, first
        else:
            assert first["error"]["code"] in (rpc.PARSE_ERROR, rpc.INVALID_REQUEST, rpc.INVALID_PARAMS), first
        await send(writer, echo("after", 42))
        assert await read_reply(reader) == {"jsonrpc": "2.0", "id": "after", "result": 42}
        await conn.close()

    run(main())


def test_a_request_without_method_result_or_error_is_answered_invalid_request():
    async def main():
        conn, reader, writer = await socket_peer()
        await send(writer, {"jsonrpc": "2.0", "id": 1})
        reply = await read_reply(reader)
        assert reply["id"] == 1 and reply["error"]["code"] == rpc.INVALID_REQUEST
        await send(writer, {"jsonrpc": "x" * 1_000_000, "id": 2, "method": "echo"})
        reply = await read_reply(reader)
        assert reply["error"]["code"] == rpc.INVALID_REQUEST
        assert len(json.dumps(reply)) < 1000
        await conn.close()

    run(main())


# ------------------------------------------------------------ 2. replies with no JSON text


def _cycle() -> Any:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


@pytest.mark.parametrize(
    "result",
    [
        lambda: "\ud800",
        lambda: {"x": ["\udfff"]},
        lambda: {"\ud800": 1},
        lambda: math.nan,
        lambda: [math.inf],
        lambda: object(),
        _cycle,
    ],
    ids=["surrogate", "nested-surrogate", "surrogate-key", "nan", "infinity", "object", "cycle"],
)
def test_a_result_with_no_json_text_is_answered_internal_error(result):
    class Returning(Echo):
        async def echo(self, params: Any) -> Any:
            return result()

    async def main():
        conn, reader, writer = await socket_peer(Returning)
        await send(writer, echo(7))
        reply = await read_reply(reader)
        assert reply["id"] == 7 and reply["error"]["code"] == rpc.INTERNAL_ERROR
        await conn.close()

    run(main())


@pytest.mark.parametrize("field", ["id", "method"])
def test_an_id_or_method_with_a_lone_surrogate_is_still_answered(field):
    async def main():
        conn, reader, writer = await socket_peer()
        message = echo(3, 1)
        message[field] = "\ud800"
        await send(writer, json.dumps(message).encode() + b"\n")  # \ud800 escaped: valid JSON text
        reply = await read_reply(reader)
        if field == "method":
            assert reply["id"] == 3 and reply["error"]["code"] == rpc.METHOD_NOT_FOUND
        else:
            # The peer's own id, escaped as it came: the answer is the
            # echo's result, matched to the request that asked for it.
            assert reply == {"jsonrpc": "2.0", "id": "\ud800", "result": 1}
        await send(writer, echo(4, 2))
        assert (await read_reply(reader))["result"] == 2
        await conn.close()

    run(main())


INIT_CODEC = rpc.MessageCodec(
    {**METHODS, "initialize": _request("agent", "initialize")},
    _decode,
    _encode,
    null_request_id=False,
)


class InitAgentEnd(connection.Connection[Any]):
    side = "agent"
    codec = INIT_CODEC
    interface = AgentInterface


@pytest.mark.parametrize(
    ("id", "method", "error_id"),
    [
        (1, "\ud800", 1),
        ("\ud800", "echo", "\ud800"),
        ("\udc00", "\ud800", "\udc00"),
        ("\ud800", "\ud800x", "\ud800"),
    ],
    ids=["method", "id", "both", "method-and-id"],
)
def test_a_lone_surrogate_before_initialize_is_answered_with_the_requests_own_id(id, method, error_id):
    async def main():
        left, right = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=left)
        conn = InitAgentEnd(Echo, transport.StreamTransport(reader, writer))
        conn.start()
        peer_reader, peer_writer = await asyncio.open_connection(sock=right)
        # json.dumps writes the surrogates escaped: valid JSON text.
        line = json.dumps({"jsonrpc": "2.0", "id": id, "method": method}).encode()
        assert b"\\ud" in line or b"\\udc" in line
        await send(peer_writer, line + b"\n")
        reply = await read_reply(peer_reader)
        assert reply["id"] == error_id and reply["error"]["code"] == rpc.INVALID_REQUEST, reply
        assert "must be initialized" in reply["error"]["message"]
        # The connection goes on.
        await send(peer_writer, {"jsonrpc": "2.0", "id": 2, "method": "echo"})
        reply = await read_reply(peer_reader)
        assert reply["id"] == 2 and reply["error"]["code"] == rpc.INVALID_REQUEST, reply
        await conn.close()
        peer_writer.close()

    run(main())


@pytest.mark.parametrize("detail", [True, False])
def test_error_detail_says_whether_an_exception_text_reaches_the_peer(detail):
    async def main():
        conn, reader, writer = await socket_peer(error_detail=detail)
        await send(writer, echo(1, **{"raise": "secret /home/user/key"}))
        error = (await read_reply(reader))["error"]
        assert error["code"] == rpc.INTERNAL_ERROR and error["message"] == "Internal error"
        if detail:
            assert error["data"] == "secret /home/user/key"
        else:
            assert "data" not in error
        await conn.close()

    run(main())


# ------------------------------------------------------------ 3. a peer that does not read


def test_a_timeout_fires_and_close_returns_while_the_peer_reads_nothing():
    async def main():
        left, right = socket.socketpair()  # nobody ever reads ``right``
        reader, writer = await asyncio.open_connection(sock=left)
        client = ClientEnd(lambda conn: ClientInterface(), reader, writer)
        client.start()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.request("echo", {"value": "x" * 8_000_000}), 0.5)
        # Bounded: close() drops what the peer does not take.
        await asyncio.wait_for(client.close(), 5)
        right.close()

    run(main())


# ------------------------------------------------------------ 4. lines over the limit


def test_a_line_over_the_limit_is_discarded_whole_never_parsed_in_part():
    async def main():
        # The stream buffer is smaller than the limit, which is smaller
        # than the line: the line arrives in pieces.
        conn, reader, writer = await socket_peer(max_message=4096, limit=256)
        smuggled = json.dumps(echo("smuggled", 1)).encode()
        # Longer than what the stream reads at once, so the line's end is not
        # in the buffer when the limit is passed.
        await send(writer, b" " * 2_000_000 + smuggled + b"\n", echo("next", 2))
        first = await read_reply(reader)
        assert first["id"] is None and first["error"]["code"] == rpc.PARSE_ERROR
        assert await read_reply(reader) == {"jsonrpc": "2.0", "id": "next", "result": 2}
        assert conn.handler.calls == [("echo", {"value": 2})]
        # Exactly at the limit is read.
        line = json.dumps(echo("full", "y")).encode()
        await send(writer, line[:-1] + b" " * (4096 - len(line)) + b"}\n")
        assert (await read_reply(reader))["id"] == "full"
        await conn.close()

    run(main())


def test_an_answer_over_the_limit_fails_the_request_waiting_for_it():
    async def main():
        left, right = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=left, limit=512)
        client = ClientEnd(lambda conn: ClientInterface(), transport.StreamTransport(reader, writer, max_message=2048))
        client.start()
        peer_reader, peer_writer = await asyncio.open_connection(sock=right)
        call = asyncio.create_task(client.request("echo", {}))
        request = json.loads(await peer_reader.readline())
        await send(peer_writer, {"jsonrpc": "2.0", "id": request["id"], "result": {"x": "y" * 10_000}})
        with pytest.raises(rpc.RequestError) as raised:
            await call
        assert raised.value.code == rpc.PARSE_ERROR and "2048 bytes" in str(raised.value)
        # The connection goes on.
        call = asyncio.create_task(client.request("echo", {}))
        request = json.loads(await peer_reader.readline())
        await send(peer_writer, {"jsonrpc": "2.0", "id": request["id"], "result": {"ok": 1}})
        assert await call == {"ok": 1}
        await client.close()

    run(main())


def test_a_request_over_the_limit_is_answered_and_fails_no_request_of_ours():
    async def main():
        left, right = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=left, limit=512)
        client = ClientEnd(lambda conn: ClientInterface(), transport.StreamTransport(reader, writer, max_message=2048))
        client.start()
        peer_reader, peer_writer = await asyncio.open_connection(sock=right)
        call = asyncio.create_task(client.request("echo", {}))
        ours = json.loads(await peer_reader.readline())
        # The peer's own request, too large, under the id of ours (each side
        # numbers its requests on its own).
        big = {"jsonrpc": "2.0", "id": ours["id"], "method": "ask", "params": {"x": "y" * 10_000}}
        await send(peer_writer, big)
        reply = json.loads(await peer_reader.readline())
        assert reply["id"] == ours["id"] and reply["error"]["code"] == rpc.PARSE_ERROR
        assert not call.done()
        await send(peer_writer, {"jsonrpc": "2.0", "id": ours["id"], "result": {"ok": 1}})
        assert await call == {"ok": 1}
        await client.close()

    run(main())


# ------------------------------------------------------------ 5. bounds


def test_reading_pauses_while_the_queue_is_full_and_the_peer_waits():
    async def main():
        peer, end = transport.memory_pair(max_queued=4)
        conn = AgentEnd(Echo, end, max_queued=8)
        conn.handler.note_gate = asyncio.Event()
        conn.start()
        sent = 0

        async def flood() -> None:
            nonlocal sent
            for i in range(200):
                await peer.send(json.dumps({"jsonrpc": "2.0", "method": "note", "params": {"i": i}}).encode())
                sent += 1

        flooding = asyncio.create_task(flood())
        for _ in range(200):
            await asyncio.sleep(0)
            assert conn._backlog() <= 8
        # The first note runs (blocked), 8 wait for dispatch, one is read and
        # waiting for room, 4 sit in the transport: the peer's send blocks.
        assert not flooding.done() and sent <= 1 + 8 + 1 + 4
        conn.handler.note_gate.set()
        await flooding
        while len(conn.handler.calls) < 200:
            assert conn._backlog() <= 8
            await asyncio.sleep(0)
        assert [params["i"] for _, params in conn.handler.calls] == list(range(200))
        await conn.close()

    run(main())


def test_at_most_max_running_handlers_run_and_the_rest_wait_their_turn():
    async def main():
        peer, end = transport.memory_pair(max_queued=4)
        conn = AgentEnd(Echo, end, max_running=3, max_queued=5)
        conn.start()
        sent = 0

        async def flood() -> None:
            nonlocal sent
            for n in range(100):
                await peer.send(json.dumps({"jsonrpc": "2.0", "id": n, "method": "slow", "params": {"n": n}}).encode())
                sent += 1

        flooding = asyncio.create_task(flood())
        for _ in range(200):
            await asyncio.sleep(0)
        assert conn.handler.running == 3 and not flooding.done()
        assert len(asyncio.all_tasks()) < 20
        assert sent <= 3 + 5 + 1 + 4
        conn.handler.gate.set()
        answers = [json.loads(await peer.receive()) for _ in range(100)]  # type: ignore[arg-type]
        await flooding
        assert sorted(answer["id"] for answer in answers) == list(range(100))
        assert conn.handler.most == 3
        await conn.close()

    run(main())


def test_a_peer_that_sends_requests_but_reads_no_replies_is_held_back():
    async def main():
        peer, end = transport.memory_pair(max_queued=2)
        conn = AgentEnd(Echo, end, max_running=3, max_queued=5)
        conn.start()
        sent = 0

        async def flood() -> None:
            nonlocal sent
            for n in range(1000):
                await peer.send(json.dumps(echo(n, "x" * 100)).encode())
                sent += 1

        flooding = asyncio.create_task(flood())
        for _ in range(500):
            await asyncio.sleep(0)
        # Two replies fill the transport; three more hold their slots while
        # they wait to be written; five requests wait; reading stops.
        assert not flooding.done()
        assert len(conn.handler.calls) <= 2 + 3
        assert conn._backlog() <= 5 and sent <= 2 + 3 + 5 + 1 + 2
        assert len(asyncio.all_tasks()) < 20
        flooding.cancel()
        await asyncio.wait_for(conn.close(), 5)

    run(main())


def test_what_waits_for_dispatch_is_bounded_by_its_bytes_too():
    # 40 notes of 100 kB behind a handler that waits: reading stops once
    # about max_buffered bytes of them are queued, far below max_queued.
    async def main():
        peer, end = transport.memory_pair(max_queued=1000, max_buffered=1 << 30)
        conn = AgentEnd(Echo, end, max_buffered=1_000_000)
        conn.handler.note_gate = asyncio.Event()
        conn.start()
        note = json.dumps({"jsonrpc": "2.0", "method": "note", "params": {"pad": "x" * 100_000}}).encode()
        for _ in range(40):
            await peer.send(note)
        # every note is accounted for: one handled, some queued, the rest unread
        while 1 + conn._backlog() + len(end._incoming) < 40 or not conn._full():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0)
        assert 1_000_000 // len(note) <= conn._backlog() <= 1_000_000 // len(note) + 1
        conn.handler.note_gate.set()
        while len(conn.handler.calls) < 40:
            await asyncio.sleep(0.01)
        await conn.close()

    run(main())


def test_the_messages_dropped_at_shutdown_are_counted_in_a_warning(caplog):
    # The peer's end drops nothing already read (the queue waits for its
    # handler, whatever the grace): close() does, and says how much.
    async def main():
        peer, end = transport.memory_pair(max_queued=64)
        conn = AgentEnd(Echo, end)
        conn.grace = 0
        conn.handler.note_gate = asyncio.Event()  # never set: the first note never ends
        conn.start()
        for i in range(50):
            await peer.send(json.dumps({"jsonrpc": "2.0", "method": "note", "params": {"i": i}}).encode())
        await peer.close()
        running = asyncio.ensure_future(conn.run())
        while not conn.ended:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0)
        assert not running.done() and conn._backlog() == 49
        await asyncio.wait_for(conn.close(), 5)
        await asyncio.wait_for(running, 5)

    with caplog.at_level(logging.WARNING):
        run(main())
    assert any("dropped 49 queued message(s) unhandled" in record.getMessage() for record in caplog.records), (
        caplog.text
    )


# ------------------------------------------------------------ 6. a broken pipe, reused ids


def test_the_connection_stops_serving_once_a_write_fails(caplog):
    async def main():
        left, right = socket.socketpair()
        right.shutdown(socket.SHUT_RD)  # the peer writes, but takes nothing
        reader, writer = await asyncio.open_connection(sock=left)
        conn = AgentEnd(Echo, reader, writer)
        _peer_reader, peer_writer = await asyncio.open_connection(sock=right)
        serving = asyncio.create_task(conn.run())
        for n in range(20):
            peer_writer.write(json.dumps(echo(n, 1)).encode() + b"\n")
        await peer_writer.drain()
        await asyncio.wait_for(serving, TIMEOUT)  # returns, although the peer never closed
        assert conn.transport.is_closing()
        peer_writer.close()

    with caplog.at_level(logging.WARNING):
        run(main())
    warnings = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert [record.getMessage() for record in warnings] == ["the connection broke while writing: stopping"]
    assert all(record.exc_info is None for record in caplog.records)


def test_cancel_request_reaches_every_handler_of_a_reused_id():
    async def main():
        conn, reader, writer = await socket_peer()
        slow = {"jsonrpc": "2.0", "id": 5, "method": "slow"}
        await send(writer, {**slow, "params": {"n": 1}}, {**slow, "params": {"n": 2}})
        while conn.handler.running < 2:
            await asyncio.sleep(0.01)
        await send(writer, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}})
        replies = [await read_reply(reader), await read_reply(reader)]
        assert [reply["error"]["code"] for reply in replies] == [rpc.REQUEST_CANCELLED] * 2
        assert sorted(conn.handler.cancelled) == [1, 2]
        await conn.close()

    run(main())


def test_a_cancel_right_behind_its_request_is_answered_and_frees_the_slot():
    """Request and ``$/cancel_request`` in one read: the cancel may reach the
    handler's task before its first step (Python before 3.12 starts it
    lazily). The request is still answered, cancelled or with its result,
    and its slot is freed: with ``max_running=1`` the next request runs."""

    async def main():
        conn, reader, writer = await socket_peer(max_running=1, require_initialize=False)
        request = {"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {"n": 1}}
        cancel = {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}}
        await send(writer, json.dumps(request).encode() + b"\n" + json.dumps(cancel).encode() + b"\n")
        first = await read_reply(reader)
        assert first["id"] == 1 and (first.get("error", {}).get("code") == rpc.REQUEST_CANCELLED or "result" in first)
        await send(writer, echo(2, "next"))
        assert (await read_reply(reader))["result"] == "next"
        await conn.close()

    for _ in range(5):
        run(main())


def test_cancel_request_for_a_queued_request_answers_it_without_running_it():
    async def main():
        conn, reader, writer = await socket_peer(max_running=1)
        await send(writer, {"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {"n": 1}})
        await send(writer, {"jsonrpc": "2.0", "id": 2, "method": "slow", "params": {"n": 2}})
        while conn.handler.running < 1:
            await asyncio.sleep(0.01)
        await send(writer, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 2}})
        await asyncio.sleep(0.05)
        conn.handler.gate.set()
        replies = {reply["id"]: reply for reply in [await read_reply(reader), await read_reply(reader)]}
        assert replies[1]["result"] == {"n": 1}
        assert replies[2]["error"]["code"] == rpc.REQUEST_CANCELLED
        assert [params["n"] for name, params in conn.handler.calls] == [1]
        await conn.close()

    run(main())


# ------------------------------------------------------------ 7. ordering


class Announcing(Echo):
    """``echo`` tells the client about item ``n``, then asks about it."""

    async def echo(self, params: Any) -> Any:
        await self.conn.notify("tell", {"item": params["n"]})
        return await self.conn.request("ask", {"item": params["n"]})


class Tracking(ClientInterface):
    """Knows the items ``tell`` announced; ``tell`` is slow."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.known: set[int] = set()

    async def tell(self, params: Any) -> None:
        await asyncio.sleep(0.05)
        self.known.add(params["item"])

    async def ask(self, params: Any) -> Any:
        return {"known": params["item"] in self.known}


def test_a_request_is_handled_only_after_the_notifications_before_it():
    async def main():
        agent_end, client_end = transport.memory_pair()
        agent = AgentEnd(Announcing, agent_end)
        client = ClientEnd(Tracking, client_end)
        agent.start()
        client.start()
        answers = await asyncio.gather(*(client.request("echo", {"n": n}) for n in range(3)))
        assert answers == [{"known": True}] * 3
        await client.close()
        await agent.close()

    run(main())


def test_a_request_handler_the_dispatcher_starts_is_no_notification_handler():
    # Queued behind a notification, the request's handler is started by the
    # dispatcher, which runs in the notification mark; the handler runs
    # without it, so a request it sends returns only once the notifications
    # the peer sent before its answer are handled.
    class Telling(ClientInterface):
        def __init__(self, conn: Any) -> None:
            self.conn = conn

        async def ask(self, params: Any) -> Any:
            await self.conn.notify("note", {"n": 2})
            return {}

    class Asking(Echo):
        async def echo(self, params: Any) -> Any:
            await self.conn.request("ask", {})
            return {"noted": [note["n"] for name, note in self.calls if name == "note"]}

        async def note(self, params: Any) -> None:
            for _ in range(10):  # handled over several turns of the loop
                await asyncio.sleep(0)
            self.calls.append(("note", params))

    async def main() -> Any:
        agent_end, client_end = transport.memory_pair()
        agent = AgentEnd(Asking, agent_end)
        client = ClientEnd(Telling, client_end)
        agent.start()
        client.start()
        await client.notify("note", {"n": 1})
        answer = await client.request("echo", {})
        await client.close()
        await agent.close()
        return answer

    assert run(main()) == {"noted": [1, 2]}


def test_a_notification_handler_awaiting_the_peer_does_not_stall_a_full_queue():
    class Asking(ClientInterface):
        def __init__(self, conn: Any) -> None:
            self.conn = conn
            self.seen: list[Any] = []

        async def tell(self, params: Any) -> None:
            answer = await self.conn.request("echo", {"value": params["i"]})
            self.seen.append(answer)

    class Flooding(Echo):
        async def slow(self, params: Any) -> Any:
            for i in range(50):
                await self.conn.notify("tell", {"i": i})
            return {}

    async def main():
        agent_end, client_end = transport.memory_pair(max_queued=2)
        agent = AgentEnd(Flooding, agent_end, max_queued=2)
        client = ClientEnd(Asking, client_end, max_queued=2)
        agent.start()
        client.start()
        await client.request("slow", {})
        assert client.handler.seen == list(range(50))
        await client.close()
        await agent.close()

    run(main())


def test_once_the_peer_closes_run_returns_when_what_was_read_is_handled_not_after_the_grace():
    # an idle dispatcher is not work still to do: the grace bounds handlers
    # that run, it is not a wait of its own (a process would linger that long)
    async def main() -> list[tuple[str, Any]]:
        conn, _, writer = await socket_peer()
        conn.grace = 3600
        await send(writer, {"jsonrpc": "2.0", "method": "note", "params": {"n": 1}})
        writer.close()
        await asyncio.wait_for(conn.run(), TIMEOUT / 2)
        return conn.handler.calls

    assert run(main()) == [("note", {"n": 1})]


def test_a_request_behind_a_running_notification_handler_waits_for_it_over_a_stream():
    """A request dispatched at once when nothing is being dispatched must
    still wait for a notification handler that is running: the note's
    handler is held until the request has surely been read."""

    async def main():
        conn, reader, writer = await socket_peer(require_initialize=False)
        handler = conn.handler
        handler.note_gate = asyncio.Event()
        await send(writer, {"jsonrpc": "2.0", "method": "note", "params": {"n": 1}})
        await asyncio.sleep(0.05)  # the note's handler waits at its gate, nothing queued
        await send(writer, echo(7, "after"))
        await asyncio.sleep(0.05)
        assert handler.calls == []  # the echo waits behind the note
        handler.note_gate.set()
        assert (await read_reply(reader))["result"] == "after"
        assert [call for call, _ in handler.calls] == ["note", "echo"]
        # Idle again: a request alone is answered, and one right behind a
        # note still comes second.
        await send(writer, echo(8, "alone"))
        assert (await read_reply(reader))["id"] == 8
        await send(writer, {"jsonrpc": "2.0", "method": "note", "params": {"n": 2}}, echo(9, "next"))
        assert (await read_reply(reader))["id"] == 9
        assert [call for call, _ in handler.calls][-2:] == ["note", "echo"]
        await conn.close()

    run(main())


def test_a_request_handler_runs_in_a_task_of_its_own_that_cancel_request_reaches():
    """Its handler's ``current_task()`` is its own task (started eagerly on
    Python 3.12 and later), which ``$/cancel_request`` cancels, and the
    connection goes on."""

    class Own(Echo):
        async def slow(self, params: Any) -> Any:
            self.task = asyncio.current_task()
            self.reader_task = self.conn._loop_task
            return await super().slow(params)

    async def main():
        conn, reader, writer = await socket_peer(Own, require_initialize=False)
        await send(writer, {"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {"n": 1}})
        for _ in range(100):
            if getattr(conn.handler, "task", None) is not None:
                break
            await asyncio.sleep(0.01)
        assert conn.handler.task is not None
        assert conn.handler.task is not conn.handler.reader_task
        assert conn.handler.task is not conn._worker
        await send(writer, {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 1}})
        assert (await read_reply(reader))["error"]["code"] == rpc.REQUEST_CANCELLED
        assert conn.handler.cancelled == [1]
        await send(writer, echo(2, "still here"))
        assert (await read_reply(reader))["result"] == "still here"
        await conn.close()

    run(main())


def test_a_cancel_for_a_request_whose_reply_waits_to_be_written_loses_nothing():
    """The handler has answered and its reply waits behind another write:
    a ``$/cancel_request`` for it must not cancel the reply (on Python 3.12+
    its task started eagerly, answering before it was registered)."""

    async def main() -> dict[Any, dict[str, Any]]:
        reader, writer = asyncio.StreamReader(), GatedWriter()
        conn = AgentEnd(Echo, transport.StreamTransport(reader, writer), require_initialize=False)  # type: ignore[arg-type]
        conn.start()
        reader.feed_data(b'{"jsonrpc":"2.0","id":5,"method":"nope"}\n')  # its answer holds the write lock
        await asyncio.sleep(0.02)
        reader.feed_data(json.dumps(echo(1, "kept")).encode() + b"\n")
        await asyncio.sleep(0.02)  # answered, waiting to be written
        reader.feed_data(b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}\n')
        await asyncio.sleep(0.02)
        writer.gate.set()
        await asyncio.sleep(0.05)
        await conn.close()
        return {m["id"]: m for m in (json.loads(line) for line in writer.out)}

    answers = run(main())
    assert answers[5]["error"]["code"] == rpc.METHOD_NOT_FOUND
    assert answers[1]["result"] == "kept"


# ------------------------------------------------------------ 7. validate_outgoing checks the method's type


class Wire:
    """A generated class, whose wire form is ``{"value": n}`` (``Third``'s:
    ``{"third": n}``). ``typed`` answers an ``Answer``, ``either`` an
    ``Answer`` or an ``Other``."""

    def __init__(self, value: int) -> None:
        self.value = value


class Answer(Wire):
    pass


class Other(Wire):
    pass


class Third(Wire):
    pass


def _typed_encode(value: Any, validate: bool = False) -> Any:
    if isinstance(value, Wire):
        if validate and value.value < 0:
            raise ValidationError("expected 0 or more", ("value",))
        key = "third" if isinstance(value, Third) else "value"
        return {key: value.value}
    return value


def _typed_decode(name: str, value: Any, strict: bool = False) -> Any:
    if not isinstance(value, dict):
        raise ValidationError(f"expected an object for {name}")
    if name == "Either" and strict and "value" not in value:
        raise ValidationError('missing required property "value"')
    return _copy(value)


TYPED_METHODS = {
    "typed": rpc.MethodInfo("typed", request=rpc.RequestInfo("agent", Answer, Answer, "typed", "P", "Answer")),
    "either": rpc.MethodInfo("either", request=rpc.RequestInfo("agent", dict, Answer | Other, "either", "P", "Either")),
    "told": rpc.MethodInfo("told", notification=rpc.NotificationInfo("agent", Answer, "told", "Answer")),
}


class TypedInterface:
    async def typed(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("typed")

    async def either(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("either")

    async def told(self, params: Any) -> None:
        pass


class TypedEnd(connection.Connection[Any]):
    side = "agent"
    codec = rpc.MessageCodec(TYPED_METHODS, _typed_decode, _typed_encode, null_request_id=False)
    interface = TypedInterface


class Returns(TypedInterface):
    """Answers ``typed`` and ``either`` with the class its params name."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.classes: dict[str, type[Wire]] = {"Answer": Answer, "Other": Other, "Third": Third}

    async def typed(self, params: Any) -> Any:
        return self.classes[params["class"]](1)

    async def either(self, params: Any) -> Any:
        return self.classes[params["class"]](1)


async def typed_peer(
    validate: bool,
) -> tuple[TypedEnd, asyncio.StreamReader, asyncio.StreamWriter]:
    left, right = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=left)
    conn = TypedEnd(Returns, reader, writer, validate_outgoing=validate, require_initialize=False)
    conn.start()
    peer_reader, peer_writer = await asyncio.open_connection(sock=right)
    return conn, peer_reader, peer_writer


@pytest.mark.parametrize(
    ("method", "cls", "refused"),
    [
        ("typed", "Answer", False),
        ("typed", "Other", True),
        ("either", "Answer", False),
        ("either", "Other", False),
        ("either", "Third", True),  # not a member of the union: its wire form is checked
    ],
)
def test_validate_outgoing_refuses_a_result_of_another_class_than_the_methods(method, cls, refused, caplog):
    async def main() -> dict[str, Any]:
        conn, reader, writer = await typed_peer(validate=True)
        await send(writer, {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"class": cls}})
        reply = await read_reply(reader)
        await send(writer, {"jsonrpc": "2.0", "id": 2, "method": "typed", "params": {"class": "Answer"}})
        assert await read_reply(reader) == {"jsonrpc": "2.0", "id": 2, "result": {"value": 1}}
        await conn.close()
        return reply

    with caplog.at_level(logging.WARNING):
        reply = run(main())
    if not refused:
        assert reply == {"jsonrpc": "2.0", "id": 1, "result": {"value": 1}}
        assert "cannot be sent" not in caplog.text
        return
    assert reply["id"] == 1 and reply["error"]["code"] == rpc.INTERNAL_ERROR, reply
    expected = "an Answer" if method == "typed" else "an Either"
    assert f"{method} answers {expected}" in reply["error"]["data"], reply
    assert f"the reply to {method} cannot be sent" in caplog.text
    assert f"{method} answers {expected}" in caplog.text


def test_without_validate_outgoing_a_result_goes_out_unchecked():
    async def main() -> dict[str, Any]:
        conn, reader, writer = await typed_peer(validate=False)
        await send(writer, {"jsonrpc": "2.0", "id": 1, "method": "either", "params": {"class": "Third"}})
        reply = await read_reply(reader)
        await conn.close()
        return reply

    assert run(main()) == {"jsonrpc": "2.0", "id": 1, "result": {"third": 1}}


def test_validate_outgoing_refuses_params_of_another_class_before_sending():
    async def main() -> list[dict[str, Any]]:
        conn, reader, _writer = await typed_peer(validate=True)
        with pytest.raises(ValidationError, match="typed takes an Answer, not a Third"):
            await conn.request("typed", Third(1))
        with pytest.raises(ValidationError, match="told takes an Answer, not a Third"):
            await conn.notify("told", Third(1))
        with pytest.raises(ValidationError, match="expected 0 or more"):  # the schema check still runs
            await conn.notify("told", Answer(-1))
        await conn.notify("told", Answer(2))
        sent = [await read_reply(reader)]  # the first line written is the one valid message
        await conn.close()
        return sent

    assert run(main()) == [{"jsonrpc": "2.0", "method": "told", "params": {"value": 2}}]


# ------------------------------------------------------------ 12. a spawned agent's exit
#
# Real subprocesses (``python -c`` agents) behind ``spawn_connection``: the
# client's side of ``spawn_agent``. Every wait is on an event, a pipe or an
# exit; HANG only turns a hang into a failure.


def spawned(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG))


def asyncio_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What asyncio logged at ERROR (an exception in one of its callbacks)."""
    return [r.getMessage() for r in caplog.records if r.name == "asyncio" and r.levelno >= logging.ERROR]


class Told(ClientInterface):
    """Sets ``told`` at the agent's first ``tell``."""

    def __init__(self) -> None:
        self.told = asyncio.Event()

    async def tell(self, params: Any) -> None:
        self.told.set()


TELL = '{"jsonrpc":"2.0","method":"tell","params":{}}'

# Writes a first line, then 16 MB (more than the pipe and the client's stream
# buffer hold) that nobody reads once the client leaves; then waits for its
# stdin to end and exits 0.
WRITER = f"""
import sys
out = sys.stdout.buffer
out.write(b'{TELL}\\n')
out.flush()
line = b'{{"jsonrpc":"2.0","method":"tell","params":{{"pad":"' + b"x" * 1000 + b'"}}}}\\n'
for _ in range(16000):
    out.write(line)
out.flush()
sys.stdin.buffer.read()
"""

# Says it runs, then never reads its stdin and never exits.
DEAF = f"""
import sys, threading
sys.stdout.write('{TELL}\\n')
sys.stdout.flush()
threading.Event().wait()
"""

# Says it runs (on stderr, then to the client), reads its stdin to the end,
# tells a local TCP port (argv[1]) so, then never exits.
STUBBORN = f"""
import socket, sys, threading
print("agent: ready", file=sys.stderr, flush=True)
sys.stdout.write('{TELL}\\n')
sys.stdout.flush()
sys.stdin.buffer.read()
socket.create_connection(("127.0.0.1", int(sys.argv[1]))).sendall(b"eof")
threading.Event().wait()
"""


@contextlib.asynccontextmanager
async def listening() -> Any:
    """A local TCP port, and the future of what the first connection to it
    sends (to its end)."""
    heard: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.read()
        if not heard.done():
            heard.set_result(data)
        writer.close()

    server = await asyncio.start_server(connected, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], heard
    finally:
        server.close()


@contextlib.contextmanager
def reaped_at_the_end(processes: list[asyncio.subprocess.Process]) -> Any:
    """Kill what a failing test left running."""
    try:
        yield
    finally:
        for process in processes:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("agent", "status", "last_line"),
    [
        ("def serve(:\n    pass", 1, "SyntaxError:"),
        (
            "import sys\nprint('agent: starting', file=sys.stderr)\nrun_agent_stdoi()",
            1,
            "NameError: name 'run_agent_stdoi' is not defined",
        ),
        (
            "import sys\nprint('agent: no model named x', file=sys.stderr)\nsys.exit(3)",
            3,
            "agent: no model named x",
        ),
    ],
    ids=["syntax-error", "misspelled-handler", "exit-3"],
)
def test_an_agent_that_dies_at_start_up_fails_the_client_with_its_status_and_stderr(agent, status, last_line, caplog):
    """Not a bare CancelledError (the close that timed out had cancelled the
    subprocess's shared stdin-closed future, which the second close then
    awaited, and asyncio logged InvalidStateError setting it): a
    ConnectionError naming the exit status and the last stderr line. Three
    times over, for it was a race."""

    async def main() -> list[tuple[BaseException, int | None]]:
        outcomes = []
        for _ in range(3):
            process = None
            try:
                async with connection.spawn_connection(
                    lambda t: ClientEnd(lambda conn: ClientInterface(), t),
                    sys.executable,
                    ["-c", agent],
                    close_grace=HANG,  # it exits on its own, however slowly: never killed
                ) as conn:
                    process = conn.process
                    await conn.request("echo", {"value": 1})
            except BaseException as error:  # the test looks at which
                assert process is not None
                outcomes.append((error, process.returncode))
        return outcomes

    caplog.set_level(logging.WARNING)
    outcomes = spawned(main())
    assert len(outcomes) == 3
    for error, returncode in outcomes:
        assert type(error) is ConnectionError, repr(error)
        assert returncode == status
        assert f"exited with status {status}" in str(error)
        assert str(error).splitlines()[-1].strip().startswith(last_line)
        assert isinstance(error.__cause__, ConnectionError)
    assert asyncio_errors(caplog) == []


def test_leaving_while_the_agent_still_writes_drains_it_and_it_exits_on_its_own(caplog):
    """The client stops reading, the agent blocks on a full stdout pipe: the
    client discards what it still writes, so it reaches its stdin's end and
    exits 0 (before, it was killed, then asyncio waited forever for the pipe
    to end on 3.11+)."""

    async def main() -> int | None:
        processes: list[asyncio.subprocess.Process] = []
        with reaped_at_the_end(processes):
            told = Told()
            async with connection.spawn_connection(
                lambda t: ClientEnd(lambda conn: told, t),
                sys.executable,
                ["-c", WRITER],
                close_grace=HANG,  # it exits on its own once drained, however slowly
            ) as conn:
                assert conn.process is not None
                processes.append(conn.process)
                await told.told.wait()
            return processes[0].returncode

    caplog.set_level(logging.WARNING)
    assert spawned(main()) == 0
    assert asyncio_errors(caplog) == []


def test_leaving_with_input_the_agent_never_reads_kills_and_reaps_it(caplog):
    """More than the pipe holds is unsent and the agent reads nothing: the
    close drops it, the agent is killed after its grace and reaped, and no
    CancelledError escapes (it did, and the agent was left running)."""

    async def main() -> int | None:
        processes: list[asyncio.subprocess.Process] = []
        with reaped_at_the_end(processes):
            told = Told()
            async with connection.spawn_connection(
                lambda t: ClientEnd(lambda conn: told, t), sys.executable, ["-c", DEAF], close_grace=0.1
            ) as conn:
                assert conn.process is not None
                processes.append(conn.process)
                await told.told.wait()
                await conn.notify("note", {"pad": "x" * 1_000_000})  # buffered: never read
            return processes[0].returncode

    caplog.set_level(logging.WARNING)
    assert spawned(main()) == -signal.SIGKILL
    assert asyncio_errors(caplog) == []


def test_close_grace_is_how_long_an_agent_ignoring_its_stdin_s_end_has_before_the_kill():
    """The agent stays after its stdin ends: after ``close_grace`` it is
    killed and reaped, and a ConnectionError leaving the block says so, with
    the end of the agent's stderr."""

    async def main() -> tuple[BaseException, int | None]:
        processes: list[asyncio.subprocess.Process] = []
        with reaped_at_the_end(processes):
            async with listening() as (port, _):
                told = Told()
                try:
                    async with connection.spawn_connection(
                        lambda t: ClientEnd(lambda conn: told, t),
                        sys.executable,
                        ["-c", STUBBORN, str(port)],
                        close_grace=0.25,
                    ) as conn:
                        assert conn.process is not None
                        processes.append(conn.process)
                        await told.told.wait()
                        raise ConnectionError("given up")
                except ConnectionError as error:
                    return error, processes[0].returncode
        raise AssertionError("no ConnectionError")

    error, returncode = spawned(main())
    assert returncode == -signal.SIGKILL
    message = str(error)
    assert message.startswith("given up; ")
    assert "did not exit within 0.25 s of its stdin closing and was killed" in message
    assert message.splitlines()[-1].strip() == "agent: ready"


def test_a_cancellation_while_leaving_kills_and_reaps_the_agent_then_propagates():
    """Cancelled while the agent has its grace (here unbounded), the client
    kills it at once, reaps it, and the CancelledError goes on (it went on
    before, leaving the agent running)."""

    async def main() -> tuple[bool, int | None]:
        processes: list[asyncio.subprocess.Process] = []

        async def client(port: int) -> None:
            told = Told()
            async with connection.spawn_connection(
                lambda t: ClientEnd(lambda conn: told, t),
                sys.executable,
                ["-c", STUBBORN, str(port)],
                close_grace=HANG * 10,
            ) as conn:
                assert conn.process is not None
                processes.append(conn.process)
                await told.told.wait()

        with reaped_at_the_end(processes):
            async with listening() as (port, heard):
                leaving = asyncio.ensure_future(client(port))
                # The agent saw its stdin end: the client waits out its grace.
                assert await heard == b"eof"
                assert not leaving.done()
                leaving.cancel()
                try:
                    await leaving
                except asyncio.CancelledError:
                    cancelled = True
                else:
                    cancelled = False
                return cancelled, processes[0].returncode

    cancelled, returncode = spawned(main())
    assert cancelled
    assert returncode == -signal.SIGKILL


def test_the_agent_s_stderr_still_reaches_this_process_s_and_the_error_quotes_only_its_end(capfd):
    """The agent's stderr goes on to this process's file descriptor 2, as when
    the agent inherited it; the error keeps a bounded tail of it."""
    agent = (
        "import sys\n"
        "for i in range(2000):\n"
        "    print(f'agent: line {i}', file=sys.stderr)\n"
        "print('agent: last words', file=sys.stderr)\n"
        "sys.exit(2)"
    )

    async def main() -> BaseException:
        try:
            async with connection.spawn_connection(
                lambda t: ClientEnd(lambda conn: ClientInterface(), t),
                sys.executable,
                ["-c", agent],
                close_grace=HANG,  # it exits on its own: never killed
            ) as conn:
                await conn.request("echo", {"value": 1})
        except ConnectionError as error:
            return error
        raise AssertionError("no ConnectionError")

    message = str(spawned(main()))
    err = capfd.readouterr().err
    assert "agent: line 0\n" in err  # all of it, in order
    assert err.index("agent: line 1999\n") < err.index("agent: last words\n")
    assert "exited with status 2" in message
    quoted = message.split("the end of its stderr:\n", 1)[1].splitlines()
    assert [line.strip() for line in quoted] == [f"agent: line {i}" for i in range(1996, 2000)] + ["agent: last words"]


# ------------------------------------------------------------ the lifecycle

State = connection.ConnectionState


class Scripted:
    """A transport fed by the test: ``feed`` a message, ``end`` the peer's
    side; ``send`` fails once ``broken`` is set."""

    def __init__(self) -> None:
        self.incoming: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.sent: list[dict[str, Any]] = []
        self.broken = False
        self.closed = False

    def feed(self, message: dict[str, Any]) -> None:
        self.incoming.put_nowait(json.dumps(message).encode())

    def end(self) -> None:
        self.incoming.put_nowait(None)

    async def receive(self) -> bytes | None:
        return await self.incoming.get()

    async def send(self, data: bytes) -> None:
        if self.broken:
            raise ConnectionError("the peer is gone")
        self.sent.append(json.loads(data))

    def is_closing(self) -> bool:
        return self.closed

    async def close(self) -> None:
        self.closed = True


class Recorded(AgentEnd):
    """An agent end that records each state it enters."""

    def __init__(self, *args: Any, **options: Any) -> None:
        self.path: list[connection.ConnectionState] = []
        super().__init__(*args, **options)

    def _enter(self, state: connection.ConnectionState) -> None:
        super()._enter(state)
        self.path.append(state)


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0)


NOTE = {"jsonrpc": "2.0", "method": "note", "params": {"n": 1}}


def test_the_transition_table_names_every_state_and_closed_is_the_end():
    assert set(connection.TRANSITIONS) == set(State)
    assert connection.TRANSITIONS[State.CLOSED] == frozenset()
    # Every state but CLOSED can close; nothing goes back to OPEN.
    for state, targets in connection.TRANSITIONS.items():
        assert State.OPEN not in targets
        assert (State.CLOSED in targets) == (state is not State.CLOSED)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        (source, target)
        for source in connection.ConnectionState
        for target in connection.ConnectionState
        if target not in connection.TRANSITIONS[source]
    ],
)
def test_an_illegal_transition_raises_and_leaves_the_state_as_it_was(source, target):
    async def main() -> None:
        conn = AgentEnd(Echo, Scripted())
        conn._state = source
        with pytest.raises(RuntimeError, match=f"from {source.value} to {target.value}"):
            conn._enter(target)
        assert conn.state is source

    run(main())


def test_a_new_connection_is_open_and_close_closes_it():
    async def main() -> list[Any]:
        wire = Scripted()
        conn = Recorded(Echo, wire)
        assert conn.state is State.OPEN and not conn.ended
        conn.start()
        await conn.close()
        assert wire.closed and conn.ended
        await conn.close()  # closing again changes nothing
        with pytest.raises(ConnectionError):
            await conn.request("ask", {})
        with pytest.raises(ConnectionError):
            await conn.notify("tell", {})
        return conn.path

    assert run(main()) == [State.CLOSED]


def test_the_peer_closing_drains_what_was_read_then_closes():
    async def main() -> tuple[list[Any], list[Any]]:
        wire = Scripted()
        conn = Recorded(Echo, wire)
        conn.handler.note_gate = asyncio.Event()
        wire.feed(NOTE)
        wire.end()
        serving = asyncio.ensure_future(conn.run())
        await _until(lambda: conn.state is State.DRAINING)
        # Draining: nothing more is read, no request can be sent, the
        # queued note still waits for its handler.
        assert conn.ended and conn.handler.calls == []
        with pytest.raises(ConnectionError):
            await conn.request("ask", {})
        conn.handler.note_gate.set()
        await serving
        return conn.path, conn.handler.calls

    assert run(main()) == ([State.DRAINING, State.CLOSED], [("note", {"n": 1})])


def test_close_while_draining_closes_and_drops_what_was_queued():
    async def main() -> tuple[list[Any], list[Any]]:
        wire = Scripted()
        conn = Recorded(Echo, wire)
        conn.handler.note_gate = asyncio.Event()
        wire.feed(NOTE)
        wire.end()
        serving = asyncio.ensure_future(conn.run())
        await _until(lambda: conn.state is State.DRAINING)
        await conn.close()
        await serving  # run returns: close() is no failure of serving
        return conn.path, conn.handler.calls

    assert run(main()) == ([State.DRAINING, State.CLOSED], [])


def test_a_failed_write_breaks_an_open_connection_then_closes_it(caplog):
    async def main() -> list[Any]:
        wire = Scripted()
        conn = Recorded(Echo, wire)
        wire.broken = True
        wire.feed(echo(1, "x"))
        await conn.run()  # returns: the read loop is stopped, not the caller
        assert conn.state is State.CLOSED and wire.closed
        return conn.path

    with caplog.at_level(logging.WARNING):
        assert run(main()) == [State.BROKEN, State.CLOSED]
    assert "the connection broke while writing: stopping" in caplog.messages


def test_a_failed_write_while_draining_leaves_it_draining():
    async def main() -> list[Any]:
        wire = Scripted()
        conn = Recorded(Echo, wire)
        conn.handler.note_gate = asyncio.Event()
        wire.feed(NOTE)
        wire.end()
        serving = asyncio.ensure_future(conn.run())
        await _until(lambda: conn.state is State.DRAINING)
        wire.broken = True
        with pytest.raises(ConnectionError):
            await conn.notify("tell", {})
        assert conn.state is State.DRAINING
        conn.handler.note_gate.set()
        await serving
        return conn.path

    assert run(main()) == [State.DRAINING, State.CLOSED]


def test_cancelling_run_closes_the_connection_and_propagates():
    async def main() -> list[Any]:
        wire = Scripted()
        conn = Recorded(Echo, wire)
        serving = asyncio.ensure_future(conn.run())
        await _until(lambda: conn._loop_task is not None)
        await asyncio.sleep(0)
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving
        assert wire.closed  # shut down before run() raised
        return conn.path

    assert run(main()) == [State.CLOSED]


# ------------------------------------------------------------ parsed messages


def test_over_a_transport_carrying_parsed_messages_nothing_is_parsed_twice(monkeypatch):
    # A transport that parsed a message hands it on parsed (Loaded): the
    # connection takes it as it is, counts its text's bytes in its queue,
    # and sends its own messages with their wire form; text it still parses,
    # answering what is not JSON -32700 as ever.
    parsed: list[bytes] = []
    load = connection.load_message

    def counted(text: bytes) -> Any:
        parsed.append(text)
        return load(text)

    monkeypatch.setattr(connection, "load_message", counted)

    def loaded(wire: dict[str, Any]) -> transport.Loaded:
        return transport.Loaded(wire, json.dumps(wire).encode())

    async def main():
        peer, end = transport.loaded_pair()
        conn = AgentEnd(Echo, end)
        conn.handler.note_gate = asyncio.Event()
        conn.start()
        await peer.send(loaded(echo(1, value={"a": 1})))
        answer = await peer.receive_loaded()
        assert isinstance(answer, transport.Loaded)
        assert answer.message == {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}
        assert json.loads(answer.data) == answer.message
        # queued behind a note still running: counted by their text's bytes
        notes = [loaded({"jsonrpc": "2.0", "method": "note", "params": {"i": "x" * i}}) for i in range(3)]
        for note in notes:
            await peer.send(note)
        while conn._queued < 4 or len(conn._sizes) != 2:  # the first note runs
            await asyncio.sleep(0)
        assert list(conn._sizes) == [len(note) for note in notes[1:]]
        assert conn._queued_bytes == sum(len(note) for note in notes[1:])
        conn.handler.note_gate.set()
        while len(conn.handler.calls) < 4:
            await asyncio.sleep(0)
        assert [params.get("i") for _, params in conn.handler.calls] == [None, "", "x", "xx"]
        assert parsed == []
        await peer.send(b'{"jsonrpc": "2.0", "id": 2, "method": "echo"')
        refusal = await peer.receive_loaded()
        assert isinstance(refusal, transport.Loaded)
        assert refusal.message["error"]["code"] == rpc.PARSE_ERROR and refusal.message["id"] is None
        assert parsed == [b'{"jsonrpc": "2.0", "id": 2, "method": "echo"']
        await conn.close()

    run(main())


class TextOnly:
    """A wrapper carrying text alone (no ``receive_loaded``), as a test's
    or a user's own: what it is given to send must be text."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.not_text: list[Any] = []

    async def receive(self) -> bytes | None:
        return await self.inner.receive()

    async def send(self, data: bytes) -> None:
        if type(data) is not bytes:  # noted, and sent on as the peer expects
            self.not_text.append(data)
            data = data.data
        await self.inner.send(data)

    def is_closing(self) -> bool:
        return self.inner.is_closing()

    async def close(self) -> None:
        await self.inner.close()


def test_a_transport_carrying_parsed_messages_replaced_by_a_wrapper_loses_nothing():
    # The read under way when the transport is replaced still brings a
    # Loaded, and an answer dumped for the old transport waits for the write
    # lock: the first is handled, the second goes out through the wrapper as
    # text, and so does everything after them.
    def loaded(wire: dict[str, Any]) -> transport.Loaded:
        return transport.Loaded(wire, json.dumps(wire).encode())

    async def main():
        peer, end = transport.loaded_pair(max_queued=1)
        conn = AgentEnd(Echo, end)
        conn.start()
        await asyncio.sleep(0)  # the read loop waits on end.receive_loaded()
        for i in range(3):  # the answers fill the queue: the third waits
            await peer.send(loaded(echo(i, value=i)))
        while len(conn.handler.calls) < 3:
            await asyncio.sleep(0)
        assert conn._write_lock.locked()
        wrapper = conn.transport = TextOnly(end)
        await peer.send(loaded(echo(3, value=3)))
        answers = [await peer.receive_loaded() for _ in range(4)]
        ids = []
        for answer in answers:
            message = answer.message if isinstance(answer, transport.Loaded) else json.loads(answer)
            assert message["result"] == message["id"]
            ids.append(message["id"])
        assert sorted(ids) == [0, 1, 2, 3]
        assert isinstance(answers[-1], bytes)  # dumped for the wrapper: text
        assert wrapper.not_text == []
        await conn.close()

    run(main())


# ---------------------------------------------------------------- permission requests

PERMISSION_METHODS = {**METHODS, "session/request_permission": _request("client", "request_permission")}
PERMISSION_CODEC = rpc.MessageCodec(PERMISSION_METHODS, _decode, _encode, null_request_id=False)
OFFERED = {
    "sessionId": "s1",
    "toolCall": {"toolCallId": "t1", "kind": "edit"},
    "options": [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ],
}


class PermissionInterface(ClientInterface):
    async def request_permission(self, params: Any) -> Any:
        raise rpc.RequestError.method_not_found("session/request_permission")


class PermissionAgentEnd(connection.Connection[Any]):
    side = "agent"
    codec = PERMISSION_CODEC
    interface = AgentInterface


class PermissionClientEnd(connection.Connection[Any]):
    side = "client"
    codec = PERMISSION_CODEC
    interface = PermissionInterface


class NoInterfaceClientEnd(connection.Connection[Any]):
    side = "client"
    codec = PERMISSION_CODEC


class Inherits(PermissionInterface):
    def __init__(self, conn: Any) -> None:
        self.conn = conn


class Approves(PermissionInterface):
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def request_permission(self, params: Any) -> Any:
        return {"outcome": {"outcome": "selected", "optionId": "yes"}}


class DuckTyped:
    """No interface class: a plain function attribute is still its handler."""

    def __init__(self, conn: Any) -> None:
        async def approve(params: Any) -> Any:
            return {"outcome": {"outcome": "selected", "optionId": "yes"}}

        self.request_permission = approve


async def _ask(client_class: Any, make_client: Any) -> Any:
    left, right = socket.socketpair()
    ar, aw = await asyncio.open_connection(sock=left)
    cr, cw = await asyncio.open_connection(sock=right)
    agent = PermissionAgentEnd(Echo, ar, aw, require_initialize=False)
    client = client_class(make_client, cr, cw, check_handler=False)
    agent.start()
    client.start()
    try:
        return await agent.request("session/request_permission", OFFERED)
    finally:
        await client.close()
        await agent.close()


@pytest.mark.parametrize(
    ("client_class", "make_client", "chosen"),
    [
        (PermissionClientEnd, Inherits, "no"),  # no handler of its own: the policy denies
        (PermissionClientEnd, Approves, "yes"),
        (NoInterfaceClientEnd, Approves, "yes"),
        (NoInterfaceClientEnd, DuckTyped, "yes"),
        (PermissionClientEnd, DuckTyped, "yes"),
    ],
)
def test_a_permission_request_goes_to_the_handler_unless_it_has_none_of_its_own(client_class, make_client, chosen):
    answer = asyncio.run(asyncio.wait_for(_ask(client_class, make_client), TIMEOUT))
    assert answer == {"outcome": {"outcome": "selected", "optionId": chosen}}
