"""The transports of the runtime (``_transport``): line framing with a size
limit that no part of an oversized line gets past, and the in-memory pair."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from pathlib import Path

import pytest
from acpgen.runtime import _transport as transport

from ..patience import HANG

TIMEOUT = HANG
_FEEDING: set[asyncio.Task[None]] = set()


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


async def fed(data: bytes, *, max_message: int, limit: int = 64) -> transport.StreamTransport:
    """A stream transport reading ``data``, which arrives 32 bytes at a time
    (so a long line's end is not in the buffer when the limit is passed)."""
    reader = asyncio.StreamReader(limit=limit)

    async def feed() -> None:
        for start in range(0, len(data), 32):
            reader.feed_data(data[start : start + 32])
            await asyncio.sleep(0)
        reader.feed_eof()

    feeding = asyncio.get_running_loop().create_task(feed())
    _FEEDING.add(feeding)
    feeding.add_done_callback(_FEEDING.discard)
    left, _ = socket.socketpair()
    _, writer = await asyncio.open_connection(sock=left)
    return transport.StreamTransport(reader, writer, max_message=max_message)


async def received(stream: transport.StreamTransport) -> list[object]:
    """Everything the transport reads up to the end: messages, and
    ``("too large", id)`` for each refused one."""
    out: list[object] = []
    while True:
        try:
            data = await stream.receive()
        except transport.MessageTooLarge as error:
            out.append(("too large", error.id))
            continue
        if data is None:
            return out
        out.append(data)


@pytest.mark.parametrize("limit", [16, 64, 1000, 2**16])
def test_a_line_over_the_limit_is_skipped_to_its_end(limit):
    async def main():
        tail = b'{"params":{},"id":"smuggled"}'  # an id no hint reads
        data = b"a\n" + b" " * 300 + tail + b"\n" + b"b" * 100 + b"\n" + b"c\n"
        stream = await fed(data, max_message=100, limit=limit)
        assert await received(stream) == [b"a\n", ("too large", None), b"b" * 100 + b"\n", b"c\n"]

    run(main())


def test_the_line_break_does_not_count_and_blank_lines_are_skipped():
    async def main():
        data = b"x" * 50 + b"\n\n   \n" + b"y" * 51 + b"\n" + b"z" * 50
        stream = await fed(data, max_message=50, limit=16)
        assert await received(stream) == [b"x" * 50 + b"\n", ("too large", None), b"z" * 50]

    run(main())


def test_an_oversized_last_line_without_a_line_break_ends_the_stream():
    async def main():
        stream = await fed(b"ok\n" + b"q" * 500, max_message=100)
        assert await received(stream) == [b"ok\n", ("too large", None)]

    run(main())


def test_a_refused_line_names_the_id_its_first_bytes_show():
    async def main():
        # The first bytes, across the pieces the stream reads them in.
        data = b'{"jsonrpc":"2.0","id":17,"result":"' + b"r" * 500 + b'"}\n'
        data += b'{"id":"a\\"b","result":"' + b"r" * 500 + b'"}\n'
        data += b'{"result":{"id":3,"x":"' + b"r" * 500 + b'"},"id":4}\n'
        data += b'{"jsonrpc":"2.0","pad":"' + b"p" * 100 + b'","id":18,"result":"' + b"r" * 500 + b'"}\n'
        stream = await fed(data, max_message=200)
        assert await received(stream) == [
            ("too large", 17),
            ("too large", 'a"b'),
            ("too large", None),
            ("too large", 18),
        ]

    run(main())


@pytest.mark.parametrize(
    "prefix, expected",
    [
        (b'{"id": 12, "result"', 12),
        (b'  {"jsonrpc":"2.0","id":-3,', -3),
        (b'{"method":"x","id":"abc" ,', "abc"),
        (b'{"params":{"id":1},"id":2', None),  # after a nested value: not trusted
        (b'{"params":[1],"id":2', None),
        (b'{"x":"{\\"id\\":5","id":6}', 6),
        (b'{"id":' + b"9" * 30, None),  # the number may go on
        (b'{"id":' + b"9" * 30 + b',"result"', int("9" * 30)),
        (b'{"id":1.5,"result"', None),
        (b'{"id":"ab', None),
        (b'{"id":true,"result"', None),
        (b'{"id":"\\u00e9","result"', "\u00e9"),
        (b"[", None),
        (b"", None),
    ],
)
def test_id_hint(prefix, expected):
    assert transport.id_hint(prefix) == expected


@pytest.mark.parametrize(
    "prefix, expected",
    [
        (b'{"jsonrpc":"2.0","id":3,"method":"x","params":{', (3, True)),
        (b'{"method":"x","id":"q","params":[', ("q", True)),
        (b'{"jsonrpc":"2.0","id":3,"result":{', (3, False)),
        (b'{"id":3,"params":{"method":1},"method":"x"', (3, False)),  # not seen
    ],
)
def test_head_hint_tells_a_request_from_an_answer(prefix, expected):
    assert transport.head_hint(prefix) == expected


def test_memory_pair_hands_messages_over_and_blocks_a_sender_whose_peer_does_not_read():
    async def main():
        left, right = transport.memory_pair(max_queued=2)
        await left.send(b"1")
        await left.send(b"2")
        blocked = asyncio.create_task(left.send(b"3"))
        await asyncio.sleep(0.01)
        assert not blocked.done()
        assert await right.receive() == b"1"
        await blocked
        assert [await right.receive(), await right.receive()] == [b"2", b"3"]
        await left.close()
        assert await right.receive() is None
        assert right.is_closing() and left.is_closing()
        with pytest.raises(ConnectionError):
            await right.send(b"4")

    run(main())


def test_memory_close_ends_the_peer_even_with_a_full_queue():
    # closing does not wait for room, and drops nothing: what was sent is
    # read, then the end
    async def main():
        left, right = transport.memory_pair(max_queued=1)
        await left.send(b"1")
        await left.close()
        assert await right.receive() == b"1"
        assert await right.receive() is None

    run(main())


def test_memory_pair_bounds_what_waits_by_its_bytes():
    async def main():
        left, right = transport.memory_pair(max_queued=1000, max_buffered=10_000)
        # one message fits whatever its size; the next waits for room
        await asyncio.wait_for(left.send(b"x" * 50_000), HANG)
        waiting = asyncio.create_task(left.send(b"y"))
        await asyncio.sleep(0)
        assert not left.send_nowait(b"z")
        assert not waiting.done()
        assert await right.receive() == b"x" * 50_000
        await asyncio.wait_for(waiting, HANG)
        # small messages fill the bound by the bytes they really hold
        for _ in range(200):
            if not left.send_nowait(b"m" * 10):
                break
        queued = right._incoming
        assert queued.held <= 10_000 + transport.held(b"m" * 10)
        assert 10_000 // transport.held(b"m" * 10) <= len(queued) < 200
        assert transport.held(b"m" * 10) >= sys.getsizeof(b"m" * 10)

    run(main())


def test_close_returns_while_the_peer_reads_nothing():
    async def main():
        left, right = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=left)
        stream = transport.StreamTransport(reader, writer)
        sending = asyncio.create_task(stream.send(b"x" * 8_000_000))
        await asyncio.sleep(0.05)
        assert not sending.done()  # the write waits for the peer
        sending.cancel()
        await asyncio.wait_for(stream.close(), 5)
        assert stream.is_closing()
        with pytest.raises(ConnectionError):
            await stream.send(b"y")
        right.close()

    run(main())


def test_send_nowait_writes_until_the_peer_stops_reading_then_refuses():
    """``send_nowait`` takes a message at once only while ``drain()`` would
    not wait: once a peer that reads nothing has filled the buffers, it
    refuses (nothing written) and ``send`` waits, so memory stays bounded."""

    async def main() -> tuple[int, int, bool]:
        left, right = socket.socketpair()
        left.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        reader, writer = await asyncio.open_connection(sock=left)
        stream = transport.StreamTransport(reader, writer)
        line = b"x" * 1000
        taken = 0
        while stream.send_nowait(line):
            taken += 1
            assert taken < 10_000, "send_nowait never refused a peer that reads nothing"
        buffered = writer.transport.get_write_buffer_size()
        # send() waits until the peer reads.
        waiting = asyncio.get_running_loop().create_task(stream.send(line))
        await asyncio.sleep(0.05)
        blocked = not waiting.done()
        right.setblocking(False)
        loop = asyncio.get_running_loop()
        got = 0
        while not waiting.done():  # read until send() has written its line
            receiving = asyncio.ensure_future(loop.sock_recv(right, 1 << 16))
            await asyncio.wait({receiving, waiting}, timeout=TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
            if receiving.done():
                got += len(receiving.result())
            else:
                receiving.cancel()
        await asyncio.wait_for(waiting, TIMEOUT)
        await stream.close()
        right.close()
        return taken, buffered, blocked

    taken, buffered, blocked = run(main())
    assert taken > 0 and blocked
    # What it left buffered is bounded by the stream's high-water mark plus a line.
    assert buffered <= 64 * 1024 + 1001


def test_send_nowait_of_a_writer_without_flow_control_defers_to_send():
    class Writer:
        def __init__(self) -> None:
            self.out: list[bytes] = []

        def write(self, data: bytes) -> None:
            self.out.append(data)

        async def drain(self) -> None:
            pass

        def is_closing(self) -> bool:
            return False

    async def main() -> list[bytes]:
        writer = Writer()
        stream = transport.StreamTransport(asyncio.StreamReader(), writer)  # type: ignore[arg-type]
        assert not stream.send_nowait(b"a")
        await stream.send(b"b")
        return writer.out

    assert run(main()) == [b"b\n"]


def test_memory_send_nowait_refuses_a_full_queue():
    async def main() -> None:
        left, right = transport.memory_pair(max_queued=2)
        assert left.send_nowait(b"1") and left.send_nowait(b"2")
        assert not left.send_nowait(b"3")
        assert await right.receive() == b"1"
        assert left.send_nowait(b"3")
        await left.close()
        with pytest.raises(ConnectionError):
            left.send_nowait(b"4")

    run(main())


def test_a_close_that_timed_out_or_was_cancelled_leaves_the_next_close_working(caplog):
    """A subprocess's stdin shares one closed-future among all who wait for
    it: close() must never cancel it. It did (a timed-out wait_for), so the
    next close() raised CancelledError and asyncio logged InvalidStateError
    when the pipe closed."""
    deaf = "import sys, threading\nsys.stdout.write('up\\n'); sys.stdout.flush()\nthreading.Event().wait()"

    async def main() -> int | None:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", deaf, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        try:
            assert process.stdin is not None and process.stdout is not None
            assert await process.stdout.readline() == b"up\n"
            stream = transport.StreamTransport(process.stdout, process.stdin)
            stream.send_nowait(b"x" * 1_000_000)  # more than the pipe holds: never taken
            closing = asyncio.ensure_future(stream.close())
            await asyncio.sleep(0)
            closing.cancel()  # the caller gives up: what is buffered is dropped
            with pytest.raises(asyncio.CancelledError):
                await closing
            await stream.close()
            await stream.close()
            assert stream.is_closing()
        finally:
            process.kill()
            await process.wait()
        return process.returncode

    caplog.set_level(logging.WARNING)
    assert asyncio.run(asyncio.wait_for(main(), HANG)) == -signal.SIGKILL
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


# A client whose own stderr nobody reads spawns an agent that writes more to
# stderr than the pipes hold, then leaves.
STDERR_NOT_READ = """
import asyncio, sys
from acpgen.runtime import _transport as transport

AGENT = "import sys\\nsys.stderr.buffer.write(b'e' * 8_000_000)\\nsys.stderr.flush()\\nsys.stdin.buffer.read()"

async def main():
    async with transport.spawn_process(sys.executable, ["-c", AGENT], close_grace=0.5) as (process, stream):
        await stream.send(b"{}")
    print("closed", process.returncode, flush=True)

asyncio.run(main())
"""


def test_a_stderr_nobody_reads_blocks_the_agent_not_the_client_s_event_loop():
    """The agent's stderr is copied to the client's by a thread: when nobody
    reads the client's stderr, the agent blocks writing (as when it wrote
    there itself) and is killed after its grace; the client's loop goes on."""

    async def main() -> tuple[bytes, int]:
        env = {**os.environ, "PYTHONPATH": str(Path(transport.__file__).parents[2])}
        client = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            STDERR_NOT_READ,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        assert client.stdout is not None and client.stderr is not None
        try:
            out = await client.stdout.read()  # to its end: the client exited; its stderr is read only then
        except BaseException:  # a hang (HANG): the client goes
            client.kill()
            raise
        finally:
            await client.stderr.read()
            await client.wait()  # not killed first: its stdout can end before it is reaped
        return out, client.returncode

    out, returncode = asyncio.run(asyncio.wait_for(main(), HANG))
    assert out == f"closed {-signal.SIGKILL}\n".encode()
    assert returncode == 0


def test_a_loaded_message_holds_the_bytes_of_its_text_and_crosses_a_loaded_pair_as_it_was_sent():
    async def main():
        text = b'{"jsonrpc":"2.0","method":"m","params":{"pad":"' + b"x" * 5_000 + b'"}}'
        message = {"jsonrpc": "2.0", "method": "m", "params": {"pad": "x" * 5_000}}
        loaded = transport.Loaded(message, text)
        assert len(loaded) == len(text)
        # counted as its text and a bound on what its parsed form holds
        assert transport.held(loaded) == transport.held(text) + transport.parsed_bound(text)
        left, right = transport.loaded_pair(max_queued=1000, max_buffered=100_000)
        # a Loaded comes out as it went in (receive_loaded), or as its text
        # (receive, for a reader of text); text goes as text
        await left.send(loaded)
        await left.send(b"{}")
        assert await right.receive_loaded() is loaded
        assert await right.receive_loaded() == b"{}"
        await left.send(loaded)
        assert await right.receive() == text
        # the bound counts each by its weight
        sent = 0
        while left.send_nowait(transport.Loaded(message, text)):
            sent += 1
        queued = right._incoming
        assert sent == len(queued) == -(-100_000 // transport.held(loaded))
        assert queued.held == sent * transport.held(loaded)
        await left.close()
        while await right.receive_loaded() is not None:
            pass
        with pytest.raises(ConnectionError):
            await right.send(loaded)

    run(main())


def _deep_size(value: object, seen: set[int] | None = None) -> int:
    """The bytes ``value`` and everything it holds take, each object once."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(_deep_size(k, seen) + _deep_size(v, seen) for k, v in value.items())
    elif isinstance(value, list):
        size += sum(_deep_size(v, seen) for v in value)
    return size


_SHAPES = {
    # what a peer would send to make a small text parse into much memory
    "empty objects": b"[" + b",".join([b"{}"] * 20_000) + b"]",
    "empty arrays": b"[" + b",".join([b"[]"] * 20_000) + b"]",
    "zeros": b"[" + b",".join([b"0"] * 20_000) + b"]",
    "empty strings": b"[" + b",".join([b'""'] * 20_000) + b"]",
    "one-member objects": b"[" + b",".join([b'{"a":1}'] * 20_000) + b"]",
    "many keys": b"{" + b",".join(b'"k%d":null' % i for i in range(20_000)) + b"}",
    "big ints": b"[" + b",".join([b"9" * 40] * 5_000) + b"]",
    "floats": b"[" + b",".join([b"1e5"] * 20_000) + b"]",
    "astral text": b'["' + "\U0001f600a".encode() * 10_000 + b'"]',
    "escaped text": b'["' + b"\\u00e9" * 10_000 + b'"]',
    "nested": b"[" * 60 + b"]" * 60,
}


@pytest.mark.parametrize("backend", ["stdlib", "orjson"])
@pytest.mark.parametrize("shape", sorted(_SHAPES))
def test_a_loaded_message_weighs_at_least_what_its_parsed_form_holds(shape: str, backend: str) -> None:
    """The queues bound a loaded message by its weight: that must cover the
    parsed objects whatever shape a peer gives the text."""
    import json

    import orjson

    value = (orjson.loads if backend == "orjson" else json.loads)(_SHAPES[shape])
    text = _SHAPES[shape]
    assert _deep_size(value) <= transport.parsed_bound(text)
    assert transport.held(transport.Loaded(value, text)) >= _deep_size(value) + len(text)


def test_a_regular_file_is_read_in_chunks_the_reader_pauses_and_ends_with_its_end(tmp_path):
    """``FileReading`` feeds a reader no faster than it takes: however large
    the file, the reader holds at most twice its limit and a chunk."""
    limit = 4096
    lines = [b'{"n":%d,"pad":"%s"}\n' % (n, b"x" * (n % 300)) for n in range(20_000)]
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b"".join(lines))

    async def go() -> tuple[list[bytes], int]:
        reader = asyncio.StreamReader(limit=limit)
        with path.open("rb") as file:
            reading = transport.FileReading(file.fileno(), reader)
            reader.set_transport(reading)
            most = 0
            got: list[bytes] = []
            for _ in range(50):  # nobody reads: the file stops at the bound
                await asyncio.sleep(0)
                most = max(most, len(reader._buffer))
            assert not reading.is_reading()
            while line := await reader.readline():
                most = max(most, len(reader._buffer))
                got.append(line)
            assert reader.at_eof()
            reading.close()
            return got, most

    got, most = run(go())
    assert got == lines
    assert most <= 2 * limit + transport.FILE_CHUNK


def test_a_regular_file_s_read_error_reaches_the_reader_as_a_connection_error(tmp_path):
    async def go() -> None:
        reader = asyncio.StreamReader()
        directory = os.open(tmp_path, os.O_RDONLY)  # read() of a directory: EISDIR
        try:
            reader.set_transport(transport.FileReading(directory, reader))
            with pytest.raises(ConnectionError):
                await reader.readline()
        finally:
            os.close(directory)

    run(go())


def test_a_regular_file_is_written_whole_and_refuses_writes_once_closed(tmp_path):
    path = tmp_path / "replies.jsonl"

    async def go() -> None:
        loop = asyncio.get_running_loop()
        lost: list[object] = []

        class Protocol(asyncio.streams.FlowControlMixin):
            def connection_lost(self, exc: Exception | None) -> None:
                lost.append(exc)
                super().connection_lost(exc)

        with path.open("wb") as file:
            protocol = Protocol()
            writing = transport.FileWriting(file.fileno(), protocol, loop)
            writer = asyncio.StreamWriter(writing, protocol, None, loop)
            sent = transport.StreamTransport(asyncio.StreamReader(), writer)
            big = b"y" * (3 * 1024 * 1024)
            assert sent.send_nowait(b"first")
            await sent.send(big)
            assert writing.get_write_buffer_size() == 0
            await sent.close()
            assert writing.is_closing() and lost == [None]
            with pytest.raises(ConnectionError):
                await sent.send(b"after")
        assert path.read_bytes() == b"first\n" + big + b"\n"

    run(go())


def test_streamable_tells_what_asyncio_streams_from_what_it_cannot(tmp_path):
    path = tmp_path / "f"
    path.write_text("")
    with path.open() as file:
        assert not transport.streamable(file.fileno())
        assert not transport.streamable(file.fileno(), writing=True)
    read, write = os.pipe()
    try:
        assert transport.streamable(read)
        assert transport.streamable(write, writing=True)
    finally:
        os.close(read)
        os.close(write)
    left, right = socket.socketpair()
    with left, right:
        assert transport.streamable(left.fileno())
    if os.path.exists("/dev/null"):
        with open("/dev/null", "rb") as null:  # a character device no selector watches
            assert not transport.streamable(null.fileno())
    assert not transport.streamable(10_000)  # not open


def test_closing_a_file_reading_ends_what_waits_to_read_and_its_pump(tmp_path):
    """Closed before the file's end (the connection over it closed), the
    reading gives the reader its end, as a pipe's transport does, and its
    task ends: nothing is left pending for the collector to find."""
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b"x" * (1024 * 1024))  # no line break: the reader waits for more

    async def go() -> None:
        reader = asyncio.StreamReader(limit=1024)
        with path.open("rb") as file:
            reading = transport.FileReading(file.fileno(), reader)
            reader.set_transport(reading)
            pump = reading._task
            waiting = asyncio.ensure_future(reader.read(-1))  # to the end
            for _ in range(5):
                await asyncio.sleep(0)
            assert not waiting.done() and not pump.done()
            assert pump in transport._PUMPING  # held while it runs
            reading.close()
            data = await waiting
            assert len(data) < 1024 * 1024 and reader.at_eof()
            await pump
            await asyncio.sleep(0)  # its done callbacks
            assert pump not in transport._PUMPING

    run(go())


def test_a_stream_transport_closes_the_file_reading_it_owns(tmp_path):
    path = tmp_path / "requests.jsonl"
    path.write_bytes(b'{"n":1}\n' * 100_000)

    async def go() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1024)
        with path.open("rb") as given, (tmp_path / "out").open("wb") as taken:
            reading = transport.FileReading(given.fileno(), reader)
            reader.set_transport(reading)
            protocol = asyncio.streams.FlowControlMixin()
            writer = asyncio.StreamWriter(transport.FileWriting(taken.fileno(), protocol, loop), protocol, reader, loop)
            stream = transport.StreamTransport(reader, writer, reading=reading)
            assert await stream.receive() == b'{"n":1}\n'
            await stream.close()
            assert reading.is_closing()
            await reading._task

    run(go())
