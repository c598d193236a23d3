"""An ACP proxy that logs every message it passes on, one JSON line each.

The log file is the first argument, else $ACP_PROXY_LOG, else proxy_log.jsonl.
Run in a proxy chain by a conductor:
  acpgen conduct -- python examples/proxy_log.py LOG_FILE -- AGENT...
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1_unstable as acp  # noqa: E402


class LogProxy(acp.Proxy):
    def __init__(self, connection: acp.ProxySideConnection[LogProxy], path: str) -> None:
        super().__init__(connection)
        self.log = open(path, "a", encoding="utf-8")  # noqa: SIM115 (open for the proxy's life)

    def _write(self, direction: str, method: str, what: str, value: Any) -> None:
        line = {"direction": direction, "method": method, what: acp.encode(value)}
        self.log.write(json.dumps(line) + "\n")
        self.log.flush()

    async def on_initialize(self, params: acp.InitializeRequest, result: acp.InitializeResponse) -> Any:
        self._write("client->agent", "initialize", "params", params)
        self._write("agent->client", "initialize", "result", result)
        return result

    async def on_client_request(self, method: str, params: Any) -> Any:
        self._write("client->agent", method, "params", params)
        result = await self.connection.request_successor(method, params)
        self._write("agent->client", method, "result", result)
        return result

    async def on_client_notification(self, method: str, params: Any) -> None:
        self._write("client->agent", method, "params", params)
        await self.connection.notify_successor(method, params)

    async def on_successor_request(self, method: str, params: Any) -> Any:
        self._write("agent->client", method, "params", params)
        result = await self.connection.request_client(method, params)
        self._write("client->agent", method, "result", result)
        return result

    async def on_successor_notification(self, method: str, params: Any) -> None:
        self._write("agent->client", method, "params", params)
        await self.connection.notify_client(method, params)


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("ACP_PROXY_LOG", "proxy_log.jsonl")
    asyncio.run(acp.run_proxy_stdio(lambda conn: LogProxy(conn, path)))
