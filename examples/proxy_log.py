"""An ACP proxy that logs every message it passes on, one JSON line each, to the file
given as its argument (else $ACP_PROXY_LOG, else proxy_log.jsonl). Run by a conductor:
  acpgen conduct -- python examples/proxy_log.py LOG_FILE -- AGENT...
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1_unstable as acp  # noqa: E402

UP, DOWN = "client->agent", "agent->client"
LOG = sys.argv[1] if __name__ == "__main__" and len(sys.argv) > 1 else os.environ.get("ACP_PROXY_LOG", "proxy_log.jsonl")


class LogProxy(acp.Proxy):
    def _write(self, direction: str, method: str, what: str, value: Any) -> None:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"direction": direction, "method": method, what: acp.encode(value)}) + "\n")

    async def _request(self, way: str, back: str, method: str, params: Any, send: Callable[..., Awaitable[Any]]) -> Any:
        self._write(way, method, "params", params)
        try:
            result = await send(method, params)
        except acp.RequestError as error:
            self._write(back, method, "error", {"code": error.code, "message": error.message})
            raise
        self._write(back, method, "result", result)
        return result

    async def on_initialize(self, params: acp.InitializeRequest, result: acp.InitializeResponse) -> Any:
        self._write(UP, "initialize", "params", params)
        self._write(DOWN, "initialize", "result", result)
        return result

    async def on_client_request(self, method: str, params: Any) -> Any:
        return await self._request(UP, DOWN, method, params, self.connection.request_successor)

    async def on_successor_request(self, method: str, params: Any) -> Any:
        return await self._request(DOWN, UP, method, params, self.connection.request_client)

    async def on_client_notification(self, method: str, params: Any) -> None:
        self._write(UP, method, "params", params)
        await self.connection.notify_successor(method, params)

    async def on_successor_notification(self, method: str, params: Any) -> None:
        self._write(DOWN, method, "params", params)
        await self.connection.notify_client(method, params)


if __name__ == "__main__":
    asyncio.run(acp.run_proxy_stdio(LogProxy))
