"""acpgen's generated protocol layer against the official SDKs as real peers.

Every pair is two processes talking newline-delimited JSON-RPC over stdio:
an acpgen client (tests/interop/peers/acpgen_client.py, on acp_v1/acp_v2's
``spawn_agent``) against each SDK's echo agent, and each SDK's client against
the acpgen echo agent (peers/acpgen_echo_agent.py, on ``run_agent_stdio``):
with the Python SDK (v1, the only version it speaks) and the TypeScript SDK
2.4.0 (v1, and the v2 draft through its ``experimental/v2`` entry point).
Each session runs initialize, session/new, a prompt streamed back as
session/update notifications, and a prompt cancelled mid-stream.
"""

from __future__ import annotations

import pytest

from .harness import (
    acpgen_agent,
    acpgen_client,
    check_report,
    python_sdk_agent,
    python_sdk_client,
    run_session,
    ts_sdk_agent,
    ts_sdk_client,
)

ACPGEN_AGENT = "acpgen-echo-agent"
MATRIX = {
    # id: (client, agent, protocol, agent name)
    "acpgen-client x python-sdk-agent v1": (
        lambda: acpgen_client("v1"),
        python_sdk_agent,
        "v1",
        "python-sdk-echo-agent",
    ),
    "python-sdk-client x acpgen-agent v1": (
        python_sdk_client,
        lambda: acpgen_agent("v1"),
        "v1",
        ACPGEN_AGENT,
    ),
    "acpgen-client x ts-sdk-agent v1": (
        lambda: acpgen_client("v1"),
        lambda: ts_sdk_agent("v1"),
        "v1",
        "typescript-sdk-echo-agent",
    ),
    "ts-sdk-client x acpgen-agent v1": (
        lambda: ts_sdk_client("v1"),
        lambda: acpgen_agent("v1"),
        "v1",
        ACPGEN_AGENT,
    ),
    "acpgen-client x ts-sdk-agent v2": (
        lambda: acpgen_client("v2"),
        lambda: ts_sdk_agent("v2"),
        "v2",
        "typescript-sdk-echo-agent",
    ),
    "ts-sdk-client x acpgen-agent v2": (
        lambda: ts_sdk_client("v2"),
        lambda: acpgen_agent("v2"),
        "v2",
        ACPGEN_AGENT,
    ),
    "acpgen-client x acpgen-agent v1": (
        lambda: acpgen_client("v1"),
        lambda: acpgen_agent("v1"),
        "v1",
        ACPGEN_AGENT,
    ),
    "acpgen-client x acpgen-agent v2": (
        lambda: acpgen_client("v2"),
        lambda: acpgen_agent("v2"),
        "v2",
        ACPGEN_AGENT,
    ),
}


@pytest.mark.parametrize("pair", MATRIX)
def test_session_between_acpgen_and_sdk_peers(pair):
    client, agent, protocol, agent_name = MATRIX[pair]
    report = run_session(client(), agent())
    check_report(report, protocol, agent_name)


def test_acpgen_agent_ends_a_turn_cancelled_by_cancel_request_cancelled():
    """The TypeScript SDK client aborts its third prompt request on the first
    streamed chunk (``$/cancel_request``): the acpgen agent cancels the
    handler (which has no cancellation code) and answers the request with
    ``stopReason: cancelled`` (the package's CANCELLATION), which the SDK
    client takes as the prompt's result; the session goes on."""
    client = [*ts_sdk_client("v1")]
    client.insert(client.index("--"), "--abort-turn")
    report = run_session(client, acpgen_agent("v1"))
    check_report(report, "v1", ACPGEN_AGENT)
    assert report["abort"] == {"result": {"stopReason": "cancelled"}}, report["abort"]
