"""An ACP proxy that rewrites each prompt's text: it puts a prefix in front, and says
so in the chain's capabilities (``_meta.proxyRewrite`` of the agent capabilities).

Run in a proxy chain by a conductor:
  acpgen conduct -- python examples/proxy_rewrite.py [PREFIX] -- AGENT...
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
import acp_v1_unstable as acp  # noqa: E402

PREFIX = sys.argv[1] if __name__ == "__main__" and len(sys.argv) > 1 else "[rewritten] "


class RewriteProxy(acp.Proxy):
    async def on_initialize(self, params: acp.InitializeRequest, result: acp.InitializeResponse) -> Any:
        capabilities = result.agent_capabilities
        meta = {**(capabilities.meta or {}), "proxyRewrite": {"prefix": PREFIX}}
        return dataclasses.replace(result, agent_capabilities=dataclasses.replace(capabilities, meta=meta))

    async def on_client_request(self, method: str, params: Any) -> Any:
        if isinstance(params, acp.PromptRequest):
            blocks = [
                dataclasses.replace(b, text=PREFIX + b.text) if isinstance(b, acp.TextContentBlock) else b
                for b in params.prompt
            ]
            params = dataclasses.replace(params, prompt=blocks)
        return await self.connection.request_successor(method, params)


if __name__ == "__main__":
    asyncio.run(acp.run_proxy_stdio(RewriteProxy))
