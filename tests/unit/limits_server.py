"""A served app in a process of its own, for the tests of the server's limits
(test_server_limits.py) and the ping-flood measure (tests/bench_ping_flood.py):
``python -m tests.unit.limits_server '<options as JSON>' [NOFILE]``.

It lowers its file descriptor limit to NOFILE when given, serves
test_runtime_asgi's echo agent with ``_asgi.serve`` on a free loopback port
(``authenticate``: a token for ``bearer_token``), prints ``port <n>``, and
serves until its stdin closes; then it prints ``maxrss <KiB>`` (its peak
resident size) and exits.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
from typing import Any

from acpgen.runtime import _asgi as asgi

from .test_runtime_asgi import make_app


async def main(options: dict[str, Any]) -> None:
    if "authenticate" in options:
        options["authenticate"] = asgi.bearer_token(options["authenticate"])
    app = make_app(**options)
    loop = asyncio.get_running_loop()
    server = asyncio.ensure_future(asgi.serve(app, port=0, ready=lambda port: print(f"port {port}", flush=True)))
    stdin_closed = loop.run_in_executor(None, sys.stdin.buffer.read)
    await asyncio.wait({server, stdin_closed}, return_when=asyncio.FIRST_COMPLETED)
    server.cancel()
    await asyncio.gather(server, return_exceptions=True)


if __name__ == "__main__":
    if len(sys.argv) > 2:
        nofile = int(sys.argv[2])
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    asyncio.run(main(json.loads(sys.argv[1])))
    print(f"maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", flush=True)
