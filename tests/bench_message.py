"""Benchmark the message path of ``acp_v1``, each figure against a baseline
measured in the same process.

- ``decode_message`` of a small session/update notification (the envelope
  dict, as ``load_message`` returns it) against ``decode`` of its params
  alone: the difference in microseconds (target: within 0.3 us).
- ``encode`` of the decoded notification against ``encode`` as it was
  before its ``validate`` parameter (the class's encoder looked up and
  called, as the package's ``codec.py`` printed it), each called the same
  way: the ratio (target: within 2%).
- The JSON text of that message, read and written (``load_message`` then
  ``dump_message`` of its wire form), with the backend in use (orjson when
  importable) and with ``json`` (``use_json_backend("stdlib")``), against
  ``json.loads`` plus ``json.dumps`` as the connection called them.
- JSON text to objects, against the official SDK's pydantic
  ``Model.model_validate_json`` of the same message's params (or result)
  text: both sides take text and give typed objects. Ours reads the whole
  message's text (``load_message``, what the connection parses a line into)
  and decodes it as the connection does (``decode_message``, and a
  response's result by its method); the share of ``load_message`` alone
  (JSON values) is shown beside it, and for scale the SDK's own read path
  (its transport's ``json.loads`` of the whole line, then
  ``model_validate`` of the params or result). Large messages: a 1 MB
  agent_message_chunk session/update (prose: line breaks, quotes, some
  non-ASCII, as a model writes; and, beside it, 1 MB of plain ASCII with
  nothing to unescape), a 20 KB fs/read_text_file response, a tool_call
  whose content is a source file with over 500 brackets (target: at most
  1x). Small ones: a session/update chunk, a session/prompt request, a
  session/new response (target: within 0.35x of it, at most 1.35x).
- Over a socket pair (newline-delimited JSON through the kernel, as over a
  pipe), one acp_v1 client and agent in one event loop: a small request's
  round trip (session/set_mode, awaited one after the other) against a
  notification's cost (session/cancel, sent one after the other, until the
  agent handled the last): the ratio (target: within 2x). Beside it, for
  scale: the round trip asyncio itself costs over the same kind of pair (a
  line echoed by a bare protocol, read back by a StreamReader), and a
  notification sent only once the one before it was handled.
- The floor of the request round trip: a minimal hand-written asyncio
  JSON-RPC pair over the same kind of socket pair (the client writes the
  request and awaits a future its reader resolves by id; the server reads a
  line, parses it, starts a task per request, which dumps and writes the
  answer), parsing and dumping with the connection's JSON backend. The
  request round trip against it, with orjson (when importable) and with
  ``json`` (target: within 1.2x).

Rounds interleave the ways; each figure is the median of the rounds of the
process CPU time (``time.process_time``) per operation. The garbage
collector is off inside a timed loop.

Usage: ``python tests/bench_message.py [--rounds R]``; part of ``make
bench``. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import socket
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "generated"))
sys.path.insert(0, str(ROOT / "tests"))

import acp_v1  # noqa: E402
from acp_v1 import _jsonrpc, codec  # noqa: E402
from acp_v1.protocol import CODEC  # noqa: E402
from bench_summary import record  # noqa: E402

PARAMS = {
    "sessionId": "sess_1",
    "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello, world "}},
}
MESSAGE = {"jsonrpc": "2.0", "method": "session/update", "params": PARAMS}


def per_call(fn: Callable[[], object], n: int) -> float:
    """CPU seconds per call of ``fn`` over ``n`` calls."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        for _ in range(n):
            fn()
        return (time.process_time() - start) / n
    finally:
        gc.enable()


def medians(ways: dict[str, Callable[[], object]], rounds: int, n: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, fn in ways.items():
            times[name].append(per_call(fn, n))
    return {name: statistics.median(values) for name, values in times.items()}


def codec_figures(rounds: int) -> None:
    decode, encode = acp_v1.decode, acp_v1.encode
    notification = decode("SessionNotification", PARAMS)
    lookup = codec._ENCODERS.get

    def earlier_encode(value: object) -> object:
        """``encode`` as it was before its ``validate`` parameter (the
        package's ``codec.py`` printed it): the class's encoder, looked up."""
        encoder = lookup(type(value))
        if encoder is not None:
            return encoder(value)
        raise TypeError("a generated class is encoded here")

    wire = CODEC.encode_message(acp_v1.Notification("session/update", notification))
    text = _jsonrpc.dump_message(wire)
    backend = _jsonrpc.json_backend()

    def stdlib_text() -> object:
        data = json.loads(text)
        return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")

    def runtime_text() -> object:
        return _jsonrpc.dump_message(_jsonrpc.load_message(text))

    ways = {
        "decode": lambda: decode("SessionNotification", PARAMS),
        "decode_message": lambda: CODEC.decode_message(MESSAGE),
        "earlier encode": lambda: earlier_encode(notification),
        "encode": lambda: encode(notification),
        "json text": stdlib_text,
    }
    times: dict[str, list[float]] = {name: [] for name in [*ways, "text fast", "text stdlib"]}
    # Many short rounds, each way right after its baseline: the machine's
    # speed drifts less within a round than across the run, so the figures
    # below compare each way with its baseline round by round (the median
    # of the per-round gaps and ratios).
    n = 4_000
    for _ in range(rounds * 5):
        for name, fn in ways.items():
            times[name].append(per_call(fn, n))
        for name, choice in (("text fast", None), ("text stdlib", "stdlib")):
            _jsonrpc.use_json_backend(choice)
            times[name].append(per_call(runtime_text, n))
        _jsonrpc.use_json_backend()
    m = {name: statistics.median(values) for name, values in times.items()}
    us = {name: value * 1e6 for name, value in m.items()}
    print(
        f"message path of a small session/update, CPU time, medians of {rounds * 5} interleaved rounds"
        " (gaps and ratios: medians of the per-round ones)"
    )

    def paired(way: str, baseline: str) -> tuple[float, float]:
        """The medians of the per-round differences and ratios."""
        pairs = list(zip(times[way], times[baseline], strict=True))
        return statistics.median(a - b for a, b in pairs), statistics.median(a / b for a, b in pairs)

    gap = paired("decode_message", "decode")[0] * 1e6
    print(
        f"  decode {us['decode']:.2f} us, decode_message {us['decode_message']:.2f} us: +{gap:.2f} us (target <= 0.3)"
    )
    record("message", "decode_message - decode of the params", gap, "us", "<= 0.3", gap <= 0.3)
    ratio = paired("encode", "earlier encode")[1]
    print(
        f"  encode {us['encode']:.2f} us, encode as it was before its validate parameter"
        f" {us['earlier encode']:.2f} us: {ratio:.2f}x (target <= 1.02)"
    )
    record("message", "encode / encode before its validate parameter", ratio, "x", "<= 1.02", ratio <= 1.02)
    fast, slow = paired("text fast", "json text")[1], paired("text stdlib", "json text")[1]
    print(
        f"  JSON text read and written: json.loads+dumps {us['json text']:.2f} us;"
        f" load/dump_message with {backend} {us['text fast']:.2f} us ({fast:.2f}x),"
        f" with json {us['text stdlib']:.2f} us ({slow:.2f}x)"
    )
    record("message", f"load+dump_message ({backend}) / json.loads+dumps", fast, "x")
    record("message", "load+dump_message (json) / json.loads+dumps", slow, "x")


class Agent:
    def __init__(self, conn: Any) -> None:
        self.cancels = 0
        self.done: asyncio.Event = asyncio.Event()
        self.wanted = 0

    async def initialize(self, params: Any) -> Any:
        return acp_v1.InitializeResponse(protocol_version=1)

    async def new_session(self, params: Any) -> Any:
        return acp_v1.NewSessionResponse(session_id="s")

    async def prompt(self, params: Any) -> Any:
        return acp_v1.PromptResponse(stop_reason="end_turn")

    async def set_session_mode(self, params: Any) -> Any:
        return acp_v1.SetSessionModeResponse()

    async def cancel(self, params: Any) -> None:
        self.cancels += 1
        if self.cancels == self.wanted:
            self.done.set()


class Client:
    def __init__(self, conn: Any) -> None:
        pass

    async def session_update(self, params: Any) -> None:
        pass


async def round_trips(rounds: int) -> None:
    client_sock, agent_sock = socket.socketpair()
    agent_reader, agent_writer = await asyncio.open_connection(sock=agent_sock)
    client_reader, client_writer = await asyncio.open_connection(sock=client_sock)
    agents: list[Agent] = []

    def make_agent(conn: Any) -> Agent:
        agents.append(Agent(conn))
        return agents[-1]

    agent_conn = acp_v1.AgentSideConnection(make_agent, agent_reader, agent_writer)
    client = acp_v1.ClientSideConnection(Client, client_reader, client_writer)
    agent_conn.start()
    client.start()
    await client.initialize(acp_v1.InitializeRequest(protocol_version=1))
    agent = agents[0]
    mode = acp_v1.SetSessionModeRequest(session_id="s", mode_id="ask")
    cancel = acp_v1.CancelNotification(session_id="s")
    n = 2_000

    async def requests() -> float:
        start = time.process_time()
        for _ in range(n):
            await client.set_session_mode(mode)
        return (time.process_time() - start) / n

    async def notifications() -> float:
        agent.cancels, agent.wanted = 0, n
        agent.done.clear()
        start = time.process_time()
        for _ in range(n):
            await client.cancel(cancel)
        await agent.done.wait()
        return (time.process_time() - start) / n

    async def notified_one_by_one() -> float:
        start = time.process_time()
        for _ in range(n):
            agent.cancels, agent.wanted = 0, 1
            agent.done.clear()
            await client.cancel(cancel)
            await agent.done.wait()
        return (time.process_time() - start) / n

    floor = await _Floor.open()
    hand = await _HandWritten.open()
    ways = {
        "request": requests,
        "notification": notifications,
        "notification, one by one": notified_one_by_one,
        "asyncio floor": functools.partial(floor.round_trips, n),
    }
    backends = ["stdlib"] if _jsonrpc.use_json_backend() == "stdlib" else ["orjson", "stdlib"]
    for backend in backends:
        ways[f"request ({backend})"] = functools.partial(_with_backend, backend, requests)
        ways[f"hand-written ({backend})"] = functools.partial(_with_backend, backend, hand.round_trips, n)
    times: dict[str, list[float]] = {name: [] for name in ways}
    for way in ways.values():
        await way()
    for _ in range(rounds):
        for name, way in ways.items():
            gc.collect()
            gc.disable()
            try:
                times[name].append(await way())
            finally:
                gc.enable()
    _jsonrpc.use_json_backend()
    floor.close()
    hand.close()
    await client.close()
    await agent_conn.close()
    m = {name: statistics.median(values) for name, values in times.items()}
    ratio = m["request"] / m["notification"]
    print(
        f"  over a socket pair: request round trip {m['request'] * 1e6:.1f} us,"
        f" notification {m['notification'] * 1e6:.1f} us: {ratio:.2f}x (target <= 2)"
    )
    record("message", "request round trip / notification", ratio, "x", "<= 2", ratio <= 2)
    floor_ratio = m["asyncio floor"] / m["notification"]
    print(
        f"  asyncio's own round trip over the same pair (a line echoed by a bare protocol, no JSON):"
        f" {m['asyncio floor'] * 1e6:.1f} us, {floor_ratio:.2f}x a notification;"
        f" the request round trip is {m['request'] / m['asyncio floor']:.2f}x it"
    )
    record("message", "asyncio's bare round trip / notification", floor_ratio, "x")
    record("message", "request round trip / asyncio's bare round trip", m["request"] / m["asyncio floor"], "x")
    for backend in backends:
        ours, floor_time = m[f"request ({backend})"], m[f"hand-written ({backend})"]
        print(
            f"  a minimal hand-written JSON-RPC pair ({backend}: parse, a task per request, dump):"
            f" {floor_time * 1e6:.1f} us; the request round trip ({ours * 1e6:.1f} us) is"
            f" {ours / floor_time:.2f}x it (target <= 1.2)"
        )
        record(
            "message",
            f"request round trip / hand-written JSON-RPC pair ({backend})",
            ours / floor_time,
            "x",
            "<= 1.2",
            ours / floor_time <= 1.2,
        )
    one = m["notification, one by one"]
    print(
        f"  a notification sent when the one before was handled: {one * 1e6:.1f} us;"
        f" the request round trip is {m['request'] / one:.2f}x it"
    )
    record("message", "request round trip / notification sent one by one", m["request"] / one, "x")


async def _with_backend(backend: str, way: Callable[..., Any], *args: Any) -> float:
    """``way(*args)`` with the connection's JSON backend set to ``backend``."""
    _jsonrpc.use_json_backend(backend)
    try:
        return cast(float, await way(*args))
    finally:
        _jsonrpc.use_json_backend()


class _HandWritten:
    """The floor of a request round trip: a minimal asyncio JSON-RPC client
    and server over a socket pair, doing the work any JSON-RPC endpoint
    does (parse a line, a task per request, dump the answer, resolve the
    caller's future by id) and nothing else, with the connection's JSON
    backend (``_jsonrpc.load_message`` / ``dump_message`` are not used: the
    backend's own functions are called, as a hand-written endpoint would)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        server_reader: asyncio.StreamReader,
        server_writer: asyncio.StreamWriter,
    ) -> None:
        self.reader, self.writer = reader, writer
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.tasks = [
            asyncio.ensure_future(self._client_reads()),
            asyncio.ensure_future(self._serve(server_reader, server_writer)),
        ]
        self.server_writer = server_writer
        self.loads, self.dumps = self._codec()

    @classmethod
    async def open(cls) -> _HandWritten:
        near, far = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=near)
        server_reader, server_writer = await asyncio.open_connection(sock=far)
        return cls(reader, writer, server_reader, server_writer)

    @staticmethod
    def _codec() -> tuple[Callable[[bytes], Any], Callable[[Any], bytes]]:
        if _jsonrpc.json_backend() == "orjson":
            import orjson

            return orjson.loads, orjson.dumps
        return json.loads, lambda value: json.dumps(value, separators=(",", ":")).encode()

    async def _client_reads(self) -> None:
        while line := await self.reader.readline():
            message = self.loads(line)
            self.pending.pop(message["id"]).set_result(message.get("result"))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        running: set[asyncio.Task[None]] = set()

        async def answer(message: dict[str, Any]) -> None:
            writer.write(self.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}) + b"\n")

        while line := await reader.readline():
            message = self.loads(line)
            if "id" in message:
                task = asyncio.ensure_future(answer(message))
                running.add(task)
                task.add_done_callback(running.discard)

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.writer.write(self.dumps(message) + b"\n")
        return await future

    async def round_trips(self, n: int) -> float:
        params = {"sessionId": "s", "modeId": "ask"}
        self.loads, self.dumps = self._codec()  # the backend of this round, bound once
        start = time.process_time()
        for _ in range(n):
            await self.request("session/set_mode", params)
        return (time.process_time() - start) / n

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        self.writer.close()
        self.server_writer.close()


class _Echo(asyncio.Protocol):
    """Sends back what it receives, as it arrives."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.transport.write(data)


class _Floor:
    """What a round trip costs asyncio itself over a socket pair: a line
    written, echoed by a bare protocol (no parsing, no task), and read back
    through a StreamReader, as the connection reads."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, echo: asyncio.Transport) -> None:
        self.reader, self.writer, self.echo = reader, writer, echo

    @classmethod
    async def open(cls) -> _Floor:
        loop = asyncio.get_running_loop()
        near, far = socket.socketpair()
        echo, _ = await loop.connect_accepted_socket(_Echo, far)
        reader, writer = await asyncio.open_connection(sock=near)
        return cls(reader, writer, echo)

    async def round_trips(self, n: int) -> float:
        line = b'{"jsonrpc":"2.0","id":1,"method":"session/set_mode","params":{"sessionId":"s","modeId":"ask"}}\n'
        reader, writer = self.reader, self.writer
        start = time.process_time()
        for _ in range(n):
            writer.write(line)
            await reader.readuntil(b"\n")
        return (time.process_time() - start) / n

    def close(self) -> None:
        self.writer.close()
        self.echo.close()


def _prose(size: int) -> str:
    """Text as a model streams it: paragraphs, a list, code with quotes and
    backslashes, a little non-ASCII; ``size`` characters."""
    paragraph = (
        "The handler reads the request, checks the session and answers — "
        'or says "not found" when the file is gone.\n\n'
        "- the `timeout` is 30 s by default;\n- retries back off (1 s, 2 s, 4 s).\n\n"
        '```python\nlog.info("path: %s\\n", request.path)\n```\n\n'
    )
    return (paragraph * (size // len(paragraph) + 1))[:size]


def _bracketed_source(functions: int) -> str:
    """A TypeScript file: braces and brackets by the hundred, in a string."""
    return "".join(
        f"export function handler{i}(items: number[]): Record<string, number> {{\n"
        f"  const seen = {{ first: items[0], index: {i} }};\n"
        f"  return {{ ...seen, last: items[items.length - 1] }};\n}}\n\n"
        for i in range(functions)
    )


def _chunk(text: str) -> dict[str, Any]:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "sess_1", "update": update}}


TEXT_CASES: list[tuple[str, bool, dict[str, Any], str, str]] = [
    # (label, large, message, SDK model, the method of a response)
    ("1 MB agent_message_chunk (prose)", True, _chunk(_prose(1_000_000)), "SessionNotification", ""),
    ("1 MB agent_message_chunk (plain ASCII)", True, _chunk("word " * 200_000), "SessionNotification", ""),
    (
        "20 KB fs/read_text_file response",
        True,
        {"jsonrpc": "2.0", "id": 7, "result": {"content": _bracketed_source(400)[:20_000]}},
        "ReadTextFileResponse",
        "fs/read_text_file",
    ),
    (
        "tool_call with a source file (>500 brackets)",
        True,
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "sess_1",
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "call_1",
                    "title": "Read src/handlers.ts",
                    "kind": "read",
                    "status": "completed",
                    "content": [{"type": "content", "content": {"type": "text", "text": _bracketed_source(200)}}],
                },
            },
        },
        "SessionNotification",
        "",
    ),
    ("small agent_message_chunk", False, _chunk("Hello, world "), "SessionNotification", ""),
    (
        "small session/prompt request",
        False,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "session/prompt",
            "params": {"sessionId": "sess_1", "prompt": [{"type": "text", "text": "Fix the failing test"}]},
        },
        "PromptRequest",
        "",
    ),
    (
        "small session/new response",
        False,
        {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "sess_1"}},
        "NewSessionResponse",
        "session/new",
    ),
]


def text_figures(rounds: int) -> None:
    """JSON text to objects against pydantic's model_validate_json."""
    try:
        from acp import schema as sdk
    except ImportError:
        print("JSON text to objects: the official SDK (agent-client-protocol) is not installed: skipped")
        return
    backend = _jsonrpc.json_backend()
    load, decode_message, decode_result = _jsonrpc.load_message, CODEC.decode_message, CODEC.decode_result
    print(
        f"\nJSON text to objects ({backend}), against the SDK's model_validate_json of the params or result"
        f" text: CPU time, medians of {rounds * 3} interleaved rounds (ratios: medians of the per-round ones)"
    )
    for label, large, message, model_name, method in TEXT_CASES:
        text = json.dumps(message, ensure_ascii=False).encode("utf-8")
        part = "result" if "result" in message else "params"
        payload = json.dumps(message[part], ensure_ascii=False).encode("utf-8")
        model = getattr(sdk, model_name)
        model.model_validate_json(payload)  # it must read it

        def typed(text: bytes = text, method: str = method) -> object:
            read = decode_message(load(text))
            return decode_result(method, read.result) if method else read  # type: ignore[union-attr]

        assert load(text) == message

        def sdk_path(text: bytes = text, part: str = part, model: Any = model) -> object:
            return model.model_validate(json.loads(text)[part])

        ways: dict[str, Callable[[], object]] = {
            "sdk": functools.partial(model.model_validate_json, payload),
            "sdk path": sdk_path,
            "load": functools.partial(load, text),
            "typed": typed,
        }
        n = max(10, min(20_000, 4_000_000 // len(text)))
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(rounds * 3):
            for name, fn in ways.items():
                times[name].append(per_call(fn, n))
        us = {name: statistics.median(values) * 1e6 for name, values in times.items()}
        ratio = {
            name: statistics.median(a / b for a, b in zip(times[name], times["sdk"], strict=True))
            for name in ("load", "typed", "sdk path")
        }
        # Text in, typed objects out. Large: at most model_validate_json's
        # time; small: within 0.35x of it.
        target = 1.0 if large else 1.35
        print(
            f"  {label} ({len(text):,} B): model_validate_json {us['sdk']:.2f} us;"
            f" load_message+decode {us['typed']:.2f} us ({ratio['typed']:.2f}x, target <= {target}),"
            f" of which load_message {us['load']:.2f} us ({ratio['load']:.2f}x);"
            f" the SDK's json.loads+model_validate {us['sdk path']:.2f} us ({ratio['sdk path']:.2f}x)"
        )
        record(
            "message",
            f"load_message+decode / model_validate_json: {label}",
            ratio["typed"],
            "x",
            f"<= {target}",
            ratio["typed"] <= target,
        )
        record("message", f"load_message / model_validate_json: {label}", ratio["load"], "x")
        record(
            "message",
            f"load_message+decode / SDK json.loads+model_validate: {label}",
            ratio["typed"] / ratio["sdk path"],
            "x",
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--text-only", action="store_true", help="only the JSON text figures")
    args = parser.parse_args()
    text_figures(args.rounds)
    if args.text_only:
        return
    codec_figures(args.rounds)
    asyncio.run(round_trips(args.rounds))


if __name__ == "__main__":
    main()
