"""Hostile-network fuzzing for a bounded time (``make fuzz``): random attacks
on a served agent (``_asgi.serve``, uvicorn, on loopback, a bearer token
required) from many sockets at once, then an authenticated ``initialize``,
which must still be answered, and the server's size, which must stay bounded.

python tests/fuzz_network.py [SECONDS] [SEED]

The attacks: raw garbage; request heads cut short and left open; heads of
random junk headers; POST bodies of garbage, deep nesting, wrong lengths and
bad tokens; WebSocket upgrades followed by random frames, oversized frames,
unmasked frames and bursts of pings nobody reads the pongs of. Each round
picks a few with a seed; a failure prints the round's seed and attacks
(``python tests/fuzz_network.py SECONDS SEED`` replays the run) and exits 1.
The deterministic cases, one per defect, are tests/unit/test_server_limits.py,
run by ``make test``. The server runs with its file descriptors limited (so
the socket cap is reached) and prints its peak resident size at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import time
import typing
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "fuzz-token"
NOFILE = 256
"""The server's file descriptor limit: low, so half-open sockets reach it."""
MAX_RSS_MB = 300
"""The server's resident size may not pass this (it serves in about 40 MB)."""
PATIENCE = 60.0
"""Seconds an honest client may wait for its answer while attacks go on."""


class Failure(Exception):
    pass


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise Failure("the server is gone")


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def head(port: int, method: str = "POST", *extra: str, length: int | None = None) -> bytes:
    lines = [f"{method} /acp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines += extra
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def ws_frame(rng: random.Random, opcode: int, payload: bytes, masked: bool = True, fin: bool = True) -> bytes:
    first = (0x80 if fin else 0) | opcode
    size = len(payload)
    if size < 126:
        length = bytes([(0x80 if masked else 0) | size])
    elif size < 1 << 16:
        length = bytes([(0x80 if masked else 0) | 126]) + struct.pack("!H", size)
    else:
        length = bytes([(0x80 if masked else 0) | 127]) + struct.pack("!Q", size)
    if not masked:
        return bytes([first]) + length + payload
    key = rng.randbytes(4)
    return bytes([first]) + length + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def upgrade(port: int, token: bool) -> bytes:
    extra = [
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
    ]
    if token:
        extra.append(f"Authorization: Bearer {TOKEN}")
    return head(port, "GET", *extra)


def garbage(rng: random.Random, size: int) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        return rng.randbytes(size)
    if kind == 1:
        depth = rng.randrange(1, 20_000)
        return b"[" * depth + b"]" * rng.randrange(depth + 1)
    if kind == 2:
        return json.dumps({"jsonrpc": "2.0", "id": rng.random(), "method": "x" * rng.randrange(size + 1)}).encode()
    return bytes(rng.choice(b'{}[]":,\\ntrue0e-') for _ in range(size))


# ------------------------------------------------------------------ attacks
# Each opens its sockets, sends, and leaves them open or closes them; it
# returns the sockets it leaves open (closed after the round's check).

Attack = Callable[[random.Random, int], list[socket.socket]]


def raw_garbage(rng: random.Random, port: int) -> list[socket.socket]:
    sock = connect(port)
    sock.sendall(garbage(rng, rng.randrange(1, 64 << 10)))
    return [sock]


def half_open_heads(rng: random.Random, port: int) -> list[socket.socket]:
    opened = []
    for _ in range(rng.randrange(10, 400)):
        try:
            sock = connect(port)
            cut = head(port, length=100)
            sock.sendall(cut[: rng.randrange(1, len(cut))])
            opened.append(sock)
        except OSError:
            break  # the server refuses (its cap): what is open stays open
    return opened


def junk_headers(rng: random.Random, port: int) -> list[socket.socket]:
    sock = connect(port)
    lines = [f"X-{rng.randrange(1 << 30)}: {'v' * rng.randrange(1, 9000)}" for _ in range(rng.randrange(1, 200))]
    with contextlib.suppress(OSError):
        sock.sendall(head(port, "POST", *lines, length=2) + b"{}")
    return [sock]


def bad_posts(rng: random.Random, port: int) -> list[socket.socket]:
    opened = []
    for _ in range(rng.randrange(1, 20)):
        body = garbage(rng, rng.randrange(0, 256 << 10))
        token = rng.choice([f"Bearer {TOKEN}", "Bearer nope", "bearer", "", f"basic {TOKEN}"])
        declared = rng.choice([len(body), len(body) + rng.randrange(1, 1000), max(0, len(body) - 1)])
        extra = [f"Authorization: {token}"] if token else []
        try:
            sock = connect(port)
            sock.sendall(head(port, "POST", *extra, length=declared) + body)
            opened.append(sock)
        except OSError:
            break
    return opened


def websocket_junk(rng: random.Random, port: int) -> list[socket.socket]:
    sock = connect(port)
    try:
        sock.sendall(upgrade(port, token=rng.random() < 0.7))
        for _ in range(rng.randrange(1, 50)):
            choice = rng.randrange(5)
            if choice == 0:
                sock.sendall(ws_frame(rng, 1, garbage(rng, rng.randrange(1, 8 << 10))))
            elif choice == 1:
                sock.sendall(ws_frame(rng, rng.randrange(16), rng.randbytes(rng.randrange(0, 200))))
            elif choice == 2:
                sock.sendall(ws_frame(rng, 1, b"x" * 10, masked=False))
            elif choice == 3:
                sock.sendall(ws_frame(rng, 2, b"\0" * rng.randrange(1 << 20, 5 << 20)))  # over max_message
            else:
                sock.sendall(rng.randbytes(rng.randrange(1, 4096)))
    except OSError:
        pass  # closed by the server: what it should do with much of this
    return [sock]


def ping_burst(rng: random.Random, port: int) -> list[socket.socket]:
    sock = connect(port)
    try:
        sock.sendall(upgrade(port, token=True))
        sock.settimeout(0.0)
        ping = ws_frame(rng, 9, b"p" * 125)
        sent = 0
        limit = rng.randrange(1 << 20, 32 << 20)
        while sent < limit:
            try:
                sent += sock.send(ping * 64)
            except BlockingIOError:
                break  # the server stopped reading: the flood is held back
    except OSError:
        pass
    return [sock]


ATTACKS: dict[str, Attack] = {
    "raw-garbage": raw_garbage,
    "half-open-heads": half_open_heads,
    "junk-headers": junk_headers,
    "bad-posts": bad_posts,
    "websocket-junk": websocket_junk,
    "ping-burst": ping_burst,
}


# ------------------------------------------------------------------ the check


def initialize(port: int) -> None:
    """An authenticated initialize over HTTP must be answered 200 with its
    result, within PATIENCE seconds, while the round's sockets stay open."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}).encode()
    request = head(port, "POST", f"Authorization: Bearer {TOKEN}", "Connection: close", length=len(body)) + body
    deadline = time.monotonic() + PATIENCE
    while True:  # a socket refused for the cap is tried again: the oldest half-open one gives way
        try:
            sock = connect(port)
            sock.sendall(request)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
            sock.close()
        except OSError as error:
            answer = f"({error})".encode()
        if answer.startswith(b"HTTP/1.1 200") and b'"result"' in answer:
            return
        if time.monotonic() > deadline:
            raise Failure(f"an authenticated initialize got {answer[:300]!r}")
        time.sleep(0.05)


def main(seconds: float, seed: int) -> int:
    with tempfile.TemporaryFile(mode="w+") as log:
        return _fuzz(seconds, seed, log)


def _fuzz(seconds: float, seed: int, log: typing.TextIO) -> int:
    argv = [sys.executable, "-m", "tests.unit.limits_server", json.dumps({"authenticate": TOKEN}), str(NOFILE)]
    # Its log (asyncio says so when accept() meets the fd limit) is shown on a failure only.
    server = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line.startswith("port "):
        print(f"fuzz_network: the server did not start: {line!r}")
        return 1
    port = int(line.split()[1])
    master = random.Random(seed)
    rounds, peak = 0, 0.0
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            round_seed = master.randrange(1 << 32)
            rng = random.Random(round_seed)
            names = rng.sample(sorted(ATTACKS), rng.randrange(1, 4))
            opened: list[socket.socket] = []
            try:
                for name in names:
                    opened += ATTACKS[name](rng, port)
                initialize(port)
                peak = max(peak, rss_mb(server.pid))
                if peak > MAX_RSS_MB:
                    raise Failure(f"the server holds {peak:.0f} MB (more than {MAX_RSS_MB})")
                if server.poll() is not None:
                    raise Failure(f"the server exited with {server.returncode}")
            except Failure as failure:
                print(f"fuzz_network: FAIL round {rounds} (seed {round_seed}, attacks {', '.join(names)}): {failure}")
                print(f"fuzz_network: replay with: python tests/fuzz_network.py {seconds:g} {seed}")
                log.seek(0)
                print("fuzz_network: the end of the server's log:\n" + "".join(log.readlines()[-30:]))
                return 1
            finally:
                for sock in opened:
                    sock.close()
            rounds += 1
    finally:
        out, _ = server.communicate("", timeout=PATIENCE)
    maxrss = out.split()[-1] if out.split() else "?"
    print(
        f"fuzz_network: {rounds} rounds in {seconds:g} s (seed {seed}): every authenticated initialize answered; "
        f"server RSS at most {peak:.0f} MB while attacked, peak {int(maxrss) // 1024 if maxrss.isdigit() else '?'} MB"
    )
    return 0


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int.from_bytes(os.urandom(4), "big")
    sys.exit(main(seconds, seed))
