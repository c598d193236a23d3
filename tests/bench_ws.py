"""Benchmark: one ACP v1 prompt whose answer streams 100 session/update
notifications, over WebSocket: the acpgen pair (``acp_v1.connect_agent_ws``
against ``acp_v1.serve_agent``) against the Python SDK pair
(``acp.ws.create_websocket_stream`` against ``acp.http.asgi.create_asgi_app``).

Run with ``make bench`` or ``.venv/bin/python tests/bench_ws.py [--quick]
[--rounds R] [--updates N]``.

Method: both servers run under uvicorn (the same WebSocket implementation,
websockets' sans-I/O one) on loopback ports, in this one process and event
loop with both clients, so the CPU time of the process is the cost of both
ends of a pair, framing and sockets included. Each pair is set up once
(initialize, session/new) and warmed up. One timed batch is N prompts back to
back on one pair, timed with ``time.process_time`` (CPU time, not wall time:
less sensitive to a busy machine); a prompt counts once its response has been
received and every one of its updates handled by the client (checked). N is
the same for both pairs (calibrated on the slower). R rounds alternate which
pair goes first; the median per-prompt time over the rounds is reported, and
ratio = SDK time / acpgen time. The agents and clients are bench_protocol's.

Not part of the test suite (no ``test_`` prefix).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))

import acp_v1
from bench_protocol import AcpgenAgent, AcpgenClient, SdkAgent, SdkClient, chunks
from bench_summary import record

try:
    import acp
    import uvicorn
    from acp.http.asgi import create_asgi_app
    from acp.ws import create_websocket_stream
except ImportError as error:
    sys.exit(f"{error}: run `make bench` (it installs the bench extras: agent-client-protocol[http], uvicorn)")

Prompt = Callable[[], Awaitable[int]]


async def serve_sdk(texts: list[str]) -> tuple[int, Callable[[], Awaitable[None]]]:
    app = create_asgi_app(lambda _conn: SdkAgent(texts))
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws="websockets-sansio")
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)

    async def stop() -> None:
        server.should_exit = True
        await asyncio.wait_for(task, 10)

    return server.servers[0].sockets[0].getsockname()[1], stop


async def serve_acpgen(texts: list[str]) -> tuple[int, Callable[[], Awaitable[None]]]:
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(
        acp_v1.serve_agent(lambda conn: AcpgenAgent(conn, texts), port=0, ready=ready.set_result)
    )

    async def stop() -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    return await ready, stop


async def acpgen_pair(port: int, stack: contextlib.AsyncExitStack) -> Prompt:
    handler: AcpgenClient | None = None

    def make_client(conn):
        nonlocal handler
        handler = AcpgenClient(conn)
        return handler

    conn = await stack.enter_async_context(acp_v1.connect_agent_ws(make_client, f"ws://127.0.0.1:{port}/acp"))
    await conn.initialize(acp_v1.InitializeRequest(protocol_version=1))
    session = await conn.new_session(acp_v1.NewSessionRequest(cwd="/", mcp_servers=[]))
    request = acp_v1.PromptRequest(session_id=session.session_id, prompt=[acp_v1.TextContentBlock(text="go")])

    async def prompt() -> int:
        handler.updates = 0
        response = await conn.prompt(request)
        assert response.stop_reason == "end_turn", response
        return handler.updates

    return prompt


async def sdk_pair(port: int, stack: contextlib.AsyncExitStack) -> Prompt:
    handler = SdkClient()
    conn = acp.connect_to_agent(handler, await create_websocket_stream(f"ws://127.0.0.1:{port}/acp"))
    stack.push_async_callback(conn.close)
    await conn.initialize(protocol_version=1)
    session = await conn.new_session(cwd="/", mcp_servers=[])
    blocks = [acp.text_block("go")]

    async def prompt() -> int:
        handler.updates = 0
        response = await conn.prompt(session_id=session.session_id, prompt=blocks)
        assert response.stop_reason == "end_turn", response
        return handler.updates

    return prompt


async def batch(prompt: Prompt, n: int, expected: int) -> float:
    """CPU seconds for ``n`` prompts back to back."""
    gc.collect()
    gc.disable()
    try:
        t0 = time.process_time()
        for _ in range(n):
            got = await prompt()
            if got != expected:
                raise AssertionError(f"the client handled {got} updates, not {expected}, before its prompt returned")
        return time.process_time() - t0
    finally:
        gc.enable()


async def run(rounds: int, updates: int, target_ms: float, warmup: int) -> tuple[int, dict[str, list[float]]]:
    texts = chunks(updates)
    async with contextlib.AsyncExitStack() as stack:
        sdk_port, stop_sdk = await serve_sdk(texts)
        stack.push_async_callback(stop_sdk)
        acpgen_port, stop_acpgen = await serve_acpgen(texts)
        stack.push_async_callback(stop_acpgen)
        prompts = {"acpgen": await acpgen_pair(acpgen_port, stack), "sdk": await sdk_pair(sdk_port, stack)}
        for prompt in prompts.values():
            await batch(prompt, warmup, updates)
        slowest = max([await batch(p, 3, updates) / 3 for p in prompts.values()])
        n = max(1, round(target_ms / 1e3 / max(slowest, 1e-6)))
        samples: dict[str, list[float]] = {name: [] for name in prompts}
        names = list(prompts)
        for r in range(rounds):
            for name in names[r % 2 :] + names[: r % 2]:
                samples[name].append(await batch(prompts[name], n, updates) / n)
        return n, samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds (default 11, 3 with --quick)")
    parser.add_argument("--updates", type=int, default=100, help="session/update notifications per prompt")
    parser.add_argument("--target-ms", type=float, default=None, help="CPU time of one batch (default 200)")
    parser.add_argument("--quick", action="store_true", help="few iterations: a smoke run")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 11)
    target_ms = args.target_ms or (20.0 if args.quick else 200.0)
    print(
        f"Python {platform.python_version()} ({os.cpu_count()} CPUs); agent-client-protocol "
        f"{metadata.version('agent-client-protocol')}, websockets {metadata.version('websockets')}, "
        f"uvicorn {metadata.version('uvicorn')}"
    )
    print(
        f"one prompt over WebSocket = session/prompt -> {args.updates} x session/update -> response, "
        f"client and server in this process; CPU time; rounds={rounds}; timing..."
    )
    load = os.getloadavg()[0]
    n, samples = asyncio.run(run(rounds, args.updates, target_ms, 3 if args.quick else 10))
    medians = {name: statistics.median(s) for name, s in samples.items()}
    print(f"\n{n} prompts per batch; per-prompt CPU time, median over {rounds} rounds (min in brackets)")
    for name, title in (("acpgen", "acpgen client <-> acpgen agent"), ("sdk", "SDK client <-> SDK agent")):
        print(f"{title:<32} {medians[name] * 1e3:8.3f} ms  ({min(samples[name]) * 1e3:.3f})")
    ratio = medians["sdk"] / medians["acpgen"]
    print(f"\nratio SDK / acpgen over WebSocket: {ratio:.2f}x ({'acpgen faster' if ratio > 1 else 'SDK faster'})")
    record("ws", "prompt of 100 updates over WebSocket: SDK time / acpgen time", ratio, "x")
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after (noisy when the machine is shared)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
