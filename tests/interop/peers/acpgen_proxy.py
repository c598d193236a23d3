"""A proxy on acpgen's generated ``acp_v1_unstable`` or ``acp_v2_unstable``
(``run_proxy_stdio``), for a conductor to start: it puts ``--prefix`` in
front of each prompt's text and passes everything else on unchanged.

    python acpgen_proxy.py [--protocol v1|v2] [--prefix TEXT] [--trace FILE]

``--trace FILE``: the proxy's connection gets a tracer writing its messages
and request spans to FILE (``trace_log.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "generated"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--protocol", choices=("v1", "v2"), default="v1")
    parser.add_argument("--prefix", default="[rewritten] ")
    parser.add_argument("--trace", metavar="FILE")
    args = parser.parse_args()
    acp: Any = importlib.import_module(f"acp_{args.protocol}_unstable")

    class Rewrite(acp.Proxy):
        async def on_client_request(self, method: str, params: Any) -> Any:
            if isinstance(params, acp.PromptRequest):
                blocks = [
                    dataclasses.replace(b, text=args.prefix + b.text) if isinstance(b, acp.TextContentBlock) else b
                    for b in params.prompt
                ]
                params = dataclasses.replace(params, prompt=blocks)
            return await self.connection.request_successor(method, params)

    tracer = None
    if args.trace:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from trace_log import JsonLinesTracer

        tracer = JsonLinesTracer(args.trace)
    asyncio.run(acp.run_proxy_stdio(Rewrite, tracer=tracer))


if __name__ == "__main__":
    main()
