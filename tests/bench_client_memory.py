"""Memory (and CPU) the network transports spend on what a peer sends: peak
RSS of one child process per scenario, the server and the client in it (the
hostile servers write from one reused buffer, so what grows is the side
measured).

* ``stream``: the ASGI app's SSE buffer behind a session stream nobody
  opens, filled with small updates: what it counts (``Link.buffered``, at
  most ``max_buffered``, 8 MiB) against the RSS it really holds.
* ``post``: a 600 MB answer to the HTTP client's ``initialize`` ``POST``
  (chunked, so nothing tells its size in advance).
* ``sse``: one 64 MB ``data:`` line through the SSE decoder, in 64 KiB
  chunks: RSS and CPU seconds.
* ``queued``: 60 events of 8 MiB on the HTTP client's connection stream
  while its update handler waits (until the server's writes have blocked
  for a second, or all are written).

Each figure is the child's peak RSS (``ru_maxrss``) minus its RSS just
before the scenario starts.

python tests/bench_client_memory.py [--runtime DIR] [SCENARIO ...]

``--runtime`` puts DIR first on the path: a directory holding another
``acpgen/runtime`` (say ``git archive main generator/acpgen/runtime``
unpacked, with ``generator/acpgen`` renamed ``acpgen`` and an empty
``acpgen/__init__.py``), to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _read_head(reader: asyncio.StreamReader) -> str:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    length = 0
    for line in head.split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    await reader.readexactly(length)
    return head.split(" ", 1)[0]


async def _stream() -> dict[str, Any]:
    import httpx
    from acpgen.runtime import _asgi as asgi

    from tests.unit.test_runtime_asgi import make_app

    app = make_app()
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    server = asyncio.ensure_future(asgi.serve(app, port=0, ready=ready.set_result))
    port = await ready
    url = f"http://127.0.0.1:{port}/acp"
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, read=None)) as client:
        answer = await client.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
        cid = answer.headers["Acp-Connection-Id"]
        headers = {"Acp-Connection-Id": cid}
        async with client.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) as events:
            await client.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "session/new"})
            async for line in events.aiter_lines():
                if line.startswith("data:"):
                    sid = json.loads(line[5:])["result"]["sessionId"]
                    break
            base = _rss_mb()
            prompt = {"sessionId": sid, "n": 10_000_000, "size": 10}
            await client.post(
                url,
                headers={**headers, "Acp-Session-Id": sid},
                json={"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt},
            )
            (link,) = app.links.values()
            # the agent waits once the buffer is full
            while link.room.is_set() or link.buffered < link.limits.max_buffered:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)
            items = sum(len(stream.items) for stream in link.streams.values())
            result = {
                "counted_mb": link.buffered / 2**20,
                "rss_mb": _rss_mb() - base,
                "messages": items,
            }
            await app.close()
    server.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await server
    return result


async def _post() -> dict[str, Any]:
    from acpgen.runtime import _remote as remote

    from tests.unit.test_remote_transports import ClientEnd, Recorder

    total = 600 * MB
    piece = b"x" * 65_536

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError, asyncio.IncompleteReadError):
            while True:
                method = await _read_head(reader)
                if method != "POST":
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    continue
                start = b'{"jsonrpc":"2.0","id":0,"result":{"pad":"'
                writer.write(
                    b"HTTP/1.1 200 OK\r\nAcp-Connection-Id: c\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"%x\r\n%s\r\n" % (len(start), start)
                )
                for _ in range(total // len(piece)):
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await writer.drain()
                writer.write(b'4\r\n"}}\n\r\n0\r\n\r\n')
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    base = _rss_mb()
    outcome = "answered"
    opening = remote.open_http(f"http://127.0.0.1:{port}/acp")
    async with remote.connected(lambda t: ClientEnd(Recorder, t), opening) as conn:
        try:
            await conn.request("initialize", {})
        except Exception as error:  # the figure, and what the client said
            outcome = f"{type(error).__name__}: {str(error)[:80]}"
    server.close()
    return {"peak_mb": _peak_mb() - base, "outcome": outcome}


async def _sse() -> dict[str, Any]:
    from acpgen.runtime import _remote as remote

    line = b"data: " + b"x" * (64 * MB - 6)
    chunk = 65_536
    decoder = remote._SseDecoder(64 * 2**20)
    base = _rss_mb()
    cpu = time.process_time()
    for start in range(0, len(line), chunk):
        assert decoder.feed(line[start : start + chunk]) == []
    out = decoder.feed(b"\n\n")
    seconds = time.process_time() - cpu
    assert len(out) == 1 and len(out[0]) == 64 * MB - 6
    return {"peak_mb": _peak_mb() - base, "cpu_s": round(seconds, 2)}


async def _queued() -> dict[str, Any]:
    from acpgen.runtime import _remote as remote

    from tests.unit.test_remote_transports import ClientEnd, Recorder

    release = asyncio.Event()
    pad = 8 * 2**20
    event = b'data: {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"i":0,"t":"'
    event += b"x" * pad + b'"}}}\n\n'
    chunk = b"%x\r\n%s\r\n" % (len(event), event)
    written = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal written
        with contextlib.suppress(ConnectionError, OSError, asyncio.IncompleteReadError):
            while True:
                method = await _read_head(reader)
                if method == "GET":
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                    )
                    for _ in range(60):
                        writer.write(chunk)
                        try:
                            await asyncio.wait_for(writer.drain(), 1.0)
                        except asyncio.TimeoutError:
                            release.set()  # the client stopped reading
                            await writer.drain()
                        written += 1
                    release.set()
                    await reader.read()
                    return
                body = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}' if method == "POST" else b""
                writer.write(
                    b"HTTP/1.1 200 OK\r\nAcp-Connection-Id: c\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
                )
                await writer.drain()
        writer.close()

    class Slow(Recorder):
        async def session_update(self, params: dict[str, Any]) -> None:
            await release.wait()
            await super().session_update(params)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    base = _rss_mb()
    opening = remote.open_http(f"http://127.0.0.1:{port}/acp")
    async with remote.connected(lambda t: ClientEnd(Slow, t), opening) as conn:
        await conn.request("initialize", {})
        while len(conn.handler.updates) < 60:
            await asyncio.sleep(0.05)
    server.close()
    return {"peak_mb": _peak_mb() - base, "handled": 60}


SCENARIOS = {"stream": _stream, "post": _post, "sse": _sse, "queued": _queued}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", help="a directory holding another acpgen/runtime, put first on the path")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    args = parser.parse_args()
    if args.child:
        if args.runtime:
            sys.path.insert(0, args.runtime)
        sys.path.insert(1, str(ROOT))
        print(json.dumps(asyncio.run(SCENARIOS[args.child]())))
        return
    for name in args.scenarios:
        command = [sys.executable, __file__, "--child", name]
        if args.runtime:
            command += ["--runtime", args.runtime]
        done = subprocess.run(command, capture_output=True, text=True, env=os.environ)
        figure = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-500:]
        print(f"{name}: {figure}", flush=True)


if __name__ == "__main__":
    main()
