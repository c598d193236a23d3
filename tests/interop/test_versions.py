"""Version negotiation and the refusal before ``initialize`` between acpgen's
peers and the official SDKs' as real processes (the README's matrix).

A client whose version the agent does not speak: the SDK clients report the
error ``initialize`` was answered with, the acpgen client its typed outcome
(``UnsupportedProtocolVersion`` or ``VersionMismatch``), and the acpgen
client offering both versions (``--protocol any``) runs the whole session
in the version the agent chose. The both-versions endpoint
(examples/echo_agent_any.py) against the SDK clients is in test_examples.py.
``raw_client.py`` sends what no SDK client sends: a string
``protocolVersion`` and a request before ``initialize``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .harness import (
    PEERS,
    ROOT,
    TIMEOUT,
    acpgen_agent,
    acpgen_client,
    check_report,
    python_sdk_agent,
    python_sdk_client,
    run_session,
    ts_sdk_agent,
    ts_sdk_client,
)

BOTH = [sys.executable, str(ROOT / "examples" / "echo_agent_any.py"), "0.005"]
REFUSED_V1 = {"code": -32022, "data": {"requested": 1, "supported": [2]}}


@pytest.mark.parametrize(
    ("client", "agent"),
    [
        (python_sdk_client, lambda: acpgen_agent("v2")),
        (lambda: ts_sdk_client("v1"), lambda: acpgen_agent("v2")),
    ],
    ids=["python-sdk-client v1 x acpgen-agent v2", "ts-sdk-client v1 x acpgen-agent v2"],
)
def test_an_sdk_v1_client_gets_minus_32022_from_an_acpgen_v2_agent(client, agent):
    report = run_session(client(), agent())
    error = report["initializeError"]
    assert {"code": error["code"], "data": error["data"]} == REFUSED_V1, report


def test_the_acpgen_v1_client_gets_the_typed_minus_32022_of_the_ts_v2_agent():
    report = run_session(acpgen_client("v1"), ts_sdk_agent("v2"))
    assert report["initializeError"] == {"code": -32022, "requested": 1, "supported": [2]}, report


@pytest.mark.parametrize(
    "agent",
    [python_sdk_agent, lambda: ts_sdk_agent("v1"), lambda: acpgen_agent("v1")],
    ids=["python-sdk-agent", "ts-sdk-agent v1", "acpgen-agent v1"],
)
def test_the_acpgen_v2_client_gets_version_mismatch_from_a_v1_agent(agent):
    report = run_session(acpgen_client("v2"), agent())
    assert report["versionMismatch"] == {
        "requested": 2,
        "chosen": 1,
        "decoded": "acp_v1.models.InitializeResponse",
    }, report


@pytest.mark.parametrize(
    ("agent", "protocol", "name"),
    [
        (python_sdk_agent, "v1", "python-sdk-echo-agent"),
        (lambda: ts_sdk_agent("v1"), "v1", "typescript-sdk-echo-agent"),
        (lambda: ts_sdk_agent("v2"), "v2", "typescript-sdk-echo-agent"),
        (lambda: acpgen_agent("v1"), "v1", "acpgen-echo-agent"),
    ],
    ids=["python-sdk-agent", "ts-sdk-agent v1", "ts-sdk-agent v2", "acpgen-agent v1"],
)
def test_the_acpgen_client_offering_v2_goes_on_in_the_version_the_agent_chose(agent, protocol, name):
    report = run_session(acpgen_client("any"), agent())
    check_report(report, protocol, name)


# ------------------------------------------------------------ raw messages

BEFORE = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
STRING = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "1"}}


def raw(agent: list[str]) -> list[dict]:
    """The agent's answers to a request before initialize, then an
    initialize with a string version."""
    command = [sys.executable, str(PEERS / "raw_client.py"), json.dumps([BEFORE, STRING]), "--", *agent]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("protocol", ["v1", "v2"])
def test_a_request_before_initialize_is_refused_as_the_ts_sdk_refuses_it(protocol):
    """Same code, message and data as the TypeScript SDK's agent; a string
    version: the TypeScript SDK answers -32602 (a departure, see
    docs/codec.md), acpgen reads it as version 0, and the v1 agent answers
    with its version, the v2 agent -32022."""
    (ours, our_string), (theirs, their_string) = raw(acpgen_agent(protocol)), raw(ts_sdk_agent(protocol))
    assert ours["error"] == theirs["error"] and ours["error"]["code"] == -32600, (ours, theirs)
    assert their_string["error"]["code"] == -32602, their_string
    if protocol == "v1":
        assert our_string["result"]["protocolVersion"] == 1, our_string
    else:
        assert our_string["error"] == {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"requested": 0, "supported": [2]},
        }, our_string


def test_the_both_versions_endpoint_refuses_before_initialize_and_serves_a_string_version_with_v1():
    before, string = raw(BOTH)
    assert before["error"]["code"] == -32600, before
    assert string["result"]["protocolVersion"] == 1 and "agentCapabilities" in string["result"], string


def test_the_python_sdk_agent_serves_before_initialize_and_answers_a_string_version():
    """What the Python SDK 0.12.1 does (for the matrix): no refusal before
    initialize, and a string version answered with its own."""
    before, string = raw(python_sdk_agent())
    assert "sessionId" in before["result"], before
    assert string["result"]["protocolVersion"] == 1, string
