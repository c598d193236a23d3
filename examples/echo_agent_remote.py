"""The echo agent (echo_agent.py) served over the network: ACP's WebSocket and
Streamable HTTP transport on one endpoint, ws:// and http://HOST:PORT/acp.

python examples/echo_agent_remote.py [--host HOST] [--port PORT] [--token TOKEN]

Needs uvicorn (pip install uvicorn). Binds to 127.0.0.1 unless --host says
otherwise; a client must send "Authorization: Bearer TOKEN" (the token is
printed when not given: ACP_TOKEN=... python examples/echo_client_remote.py).
Browser pages from other origins than localhost are refused.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "generated"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import acp_v1 as acp  # noqa: E402
from echo_agent import EchoAgent  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve the echo agent over WebSocket and HTTP.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0: any free port")
    parser.add_argument("--token", default=None, help="default: a random one, printed")
    args = parser.parse_args()
    token = args.token or secrets.token_urlsafe(16)

    def ready(port: int) -> None:
        print(f"serving ws://{args.host}:{port}/acp and http://{args.host}:{port}/acp", flush=True)
        if args.token is None:
            print(f"token: {token}", flush=True)

    serving = acp.serve_agent(EchoAgent, host=args.host, port=args.port, ready=ready, authenticate=acp.bearer_token(token))
    try:
        asyncio.run(serving)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
