"""Memory a hostile peer can make a generated agent hold: peak RSS of one
process running an ``acp_v1`` agent connection over a socket pair while a
thread plays the peer.

* ``flood``: the peer writes N ``session/cancel`` notifications while the
  agent's handler is stuck on the first; once the peer is done (or its
  writes have blocked for a second) the handler is let go and every
  notification must be handled.
* ``deaf``: the peer writes N ``initialize`` requests and never reads a
  reply, until its writes have blocked for a second (or all are written).

Each scenario runs in a fresh child process; the figure is the child's peak
RSS (``ru_maxrss``) minus its RSS just before the peer starts.

python tests/bench_hostile_memory.py [--generated DIR] [--count N]

``--generated`` points at another ``generated/`` directory (an older
checkout's, to compare): only the stream constructor the connection has
always had is used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(scenario: str, count: int) -> dict[str, object]:
    import acp_v1 as acp

    release = asyncio.Event()
    handled = 0

    class Agent(acp.Agent):
        def __init__(self, conn):
            self.conn = conn

        async def cancel(self, params):
            nonlocal handled
            await release.wait()
            handled += 1

        async def initialize(self, params):
            return acp.InitializeResponse(protocol_version=1)

    if scenario == "flood":
        line = json.dumps({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}).encode() + b"\n"
    else:
        line = (
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}).encode()
            + b"\n"
        )
    written = 0
    finished = threading.Event()

    def peer(sock: socket.socket) -> None:
        nonlocal written
        batch = 100
        try:
            for _ in range(count // batch):
                sock.sendall(line * batch)
                written += batch
        except OSError:
            pass
        finished.set()

    async def main() -> dict[str, object]:
        left, right = socket.socketpair()
        reader, writer = await asyncio.open_connection(sock=left)
        conn = acp.AgentSideConnection(Agent, reader, writer)
        conn.start()
        await asyncio.sleep(0.1)
        base = _rss_mb()
        started = time.monotonic()
        thread = threading.Thread(target=peer, args=(right,), daemon=True)
        thread.start()
        last, still = -1, 0.0
        while not finished.is_set():
            await asyncio.sleep(0.1)
            if written == last:
                still += 0.1
                if still >= 1.0:
                    break  # the peer's writes block
            else:
                last, still = written, 0.0
        blocked = not finished.is_set()
        peak = _peak_mb() - base
        result: dict[str, object] = {
            "scenario": scenario,
            "peer_wrote": written,
            "peer_blocked": blocked,
            "peak_rss_mb": round(peak, 1),
            "seconds": round(time.monotonic() - started, 1),
        }
        if scenario == "flood":
            release.set()
            while not finished.is_set() or handled < written:
                await asyncio.sleep(0.05)
                if time.monotonic() - started > 600:
                    break
            result["handled"] = handled
            result["peak_rss_mb"] = round(_peak_mb() - base, 1)
        right.close()
        await asyncio.wait_for(conn.close(), 10)
        return result

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", default=str(ROOT / "generated"))
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, args.generated)
        print(json.dumps(child(args.child, args.count)))
        return
    print(f"generated: {args.generated}, {args.count} messages per scenario")
    for scenario in ("flood", "deaf"):
        done = subprocess.run(
            [sys.executable, __file__, "--generated", args.generated, "--count", str(args.count), "--child", scenario],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode != 0:
            print(f"{scenario}: failed\n{done.stderr[-2000:]}")
            continue
        print(done.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
