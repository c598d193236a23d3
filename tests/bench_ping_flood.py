"""Memory a WebSocket peer that floods pings and reads nothing can make a
served agent hold: the server (``_asgi.serve`` under uvicorn, in a process of
its own: tests/unit/limits_server.py) against a thread that upgrades one
socket and writes COUNT pings of 125 bytes, until all are written or its
writes have blocked for a second (the server stopped reading).

The figure is the server's peak RSS (``ru_maxrss``) and its RSS before the
flood, in MB; and how much of the flood the server read.

python tests/bench_ping_flood.py [--count N]
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UPGRADE = (
    b"GET /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
PING = bytes([0x89, 0x80 | 125, 1, 2, 3, 4]) + b"p" * 125


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2_000_000)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.unit.limits_server", json.dumps({})],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    port = int(server.stdout.readline().split()[1])
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(UPGRADE)
    assert sock.recv(4096).startswith(b"HTTP/1.1 101")
    before = rss_mb(server.pid)
    sent = 0
    last = time.monotonic()
    done = threading.Event()

    def flood() -> None:
        nonlocal sent, last
        batch = PING * 1000
        try:
            while sent < args.count:
                sock.sendall(batch)
                sent += 1000
                last = time.monotonic()
        except OSError:
            pass
        done.set()

    started = time.monotonic()
    threading.Thread(target=flood, daemon=True).start()
    while not done.wait(0.2) and time.monotonic() - last < 1.0:
        pass
    elapsed = time.monotonic() - started
    sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    done.wait()
    out, _ = server.communicate("")
    peak = int(out.split()[-1]) / 1024
    print(
        f"pings written {sent:,} of {args.count:,} in {elapsed:.1f} s; "
        f"server RSS before {before:.0f} MB, peak {peak:.0f} MB"
    )


if __name__ == "__main__":
    main()
