"""The harness against itself: the official SDKs' peers talk to each other.

These prove the peer programs and the report checks before acpgen's own
protocol layer takes part (tests/interop/test_matrix.py)."""

from __future__ import annotations

import pytest

from .harness import (
    check_report,
    python_sdk_agent,
    python_sdk_client,
    run_session,
    ts_sdk_agent,
    ts_sdk_client,
)

PAIRS = {
    # id: (client, agent, protocol, agent name)
    "python-sdk-client x python-sdk-agent v1": (
        python_sdk_client,
        python_sdk_agent,
        "v1",
        "python-sdk-echo-agent",
    ),
    "ts-sdk-client x ts-sdk-agent v1": (
        lambda: ts_sdk_client("v1"),
        lambda: ts_sdk_agent("v1"),
        "v1",
        "typescript-sdk-echo-agent",
    ),
    "ts-sdk-client x ts-sdk-agent v2": (
        lambda: ts_sdk_client("v2"),
        lambda: ts_sdk_agent("v2"),
        "v2",
        "typescript-sdk-echo-agent",
    ),
    "python-sdk-client x ts-sdk-agent v1": (
        python_sdk_client,
        lambda: ts_sdk_agent("v1"),
        "v1",
        "typescript-sdk-echo-agent",
    ),
    "ts-sdk-client x python-sdk-agent v1": (
        lambda: ts_sdk_client("v1"),
        python_sdk_agent,
        "v1",
        "python-sdk-echo-agent",
    ),
}


@pytest.mark.parametrize("pair", PAIRS)
def test_sdk_peers_hold_a_session(pair):
    client, agent, protocol, agent_name = PAIRS[pair]
    report = run_session(client(), agent())
    check_report(report, protocol, agent_name)


def test_the_report_check_catches_an_agent_that_ignores_cancel():
    report = run_session(python_sdk_client(), python_sdk_agent())
    report["cancel"]["stopReason"] = "end_turn"
    report["cancel"]["text"] = report["cancel"]["sent"]
    with pytest.raises(AssertionError, match="end_turn"):
        check_report(report, "v1", "python-sdk-echo-agent")
