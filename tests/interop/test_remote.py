"""acpgen's network transports against the official SDKs', real peers over
real sockets: each agent peer serves ACP's Streamable HTTP and WebSocket
transport on a loopback port (``--listen``: acpgen's ``serve_agent``, the
Python SDK's ``acp.http.asgi`` app under uvicorn, the TypeScript SDK's
``AcpServer`` behind node:http and ``ws``), and each client peer connects to
its ``/acp`` URL (acpgen's ``connect_agent_ws``/``connect_agent_http``, the
Python SDK's ``create_websocket_stream``/``create_http_stream``, the
TypeScript SDK's ``createWebSocketStream``/``createHttpStream``). The session
is the one of test_matrix.py: initialize, session/new, a streamed prompt, a
prompt cancelled mid-stream, an unknown extension request.
"""

from __future__ import annotations

import pytest

from .harness import (
    acpgen_agent,
    acpgen_client,
    check_report,
    listening,
    python_sdk_agent,
    python_sdk_client,
    run_session,
    ts_sdk_agent,
    ts_sdk_client,
)

ACPGEN_AGENT = "acpgen-echo-agent"
PAIRS = {
    # id: (client, agent, protocol, agent name)
    "acpgen-client x python-sdk-agent v1": (
        lambda: acpgen_client("v1"),
        python_sdk_agent,
        "v1",
        "python-sdk-echo-agent",
    ),
    "python-sdk-client x acpgen-agent v1": (python_sdk_client, lambda: acpgen_agent("v1"), "v1", ACPGEN_AGENT),
    "acpgen-client x ts-sdk-agent v1": (
        lambda: acpgen_client("v1"),
        lambda: ts_sdk_agent("v1"),
        "v1",
        "typescript-sdk-echo-agent",
    ),
    "ts-sdk-client x acpgen-agent v1": (lambda: ts_sdk_client("v1"), lambda: acpgen_agent("v1"), "v1", ACPGEN_AGENT),
    "acpgen-client x ts-sdk-agent v2": (
        lambda: acpgen_client("v2"),
        lambda: ts_sdk_agent("v2"),
        "v2",
        "typescript-sdk-echo-agent",
    ),
    "ts-sdk-client x acpgen-agent v2": (lambda: ts_sdk_client("v2"), lambda: acpgen_agent("v2"), "v2", ACPGEN_AGENT),
}


@pytest.mark.parametrize("pair", PAIRS)
def test_pair_over_websocket_and_http(pair: str) -> None:
    client, agent, protocol, agent_name = PAIRS[pair]
    with listening(agent()) as port:
        for scheme in ("ws", "http"):
            report = run_session(client(), [f"{scheme}://127.0.0.1:{port}/acp"])
            check_report(report, protocol, agent_name)
