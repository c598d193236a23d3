"""The repository's examples (examples/echo_agent.py, examples/echo_client.py,
on acp_v1) against the official SDKs' peers, as real processes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .harness import (
    ROOT,
    TIMEOUT,
    python_sdk_agent,
    python_sdk_client,
    run_session,
    ts_sdk_agent,
    ts_sdk_client,
)

EXAMPLES = ROOT / "examples"
AGENTS = {"python-sdk-agent": python_sdk_agent, "ts-sdk-agent v1": lambda: ts_sdk_agent("v1")}
CLIENTS = {"python-sdk-client": python_sdk_client, "ts-sdk-client v1": lambda: ts_sdk_client("v1")}


@pytest.mark.parametrize("agent", AGENTS)
def test_echo_client_example_against_sdk_agent(agent):
    text = "interop says hello"
    command = [sys.executable, str(EXAMPLES / "echo_client.py"), text, "--", *AGENTS[agent]()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [*text.split(), "[end_turn]"], done.stdout


@pytest.mark.parametrize("client", CLIENTS)
def test_sdk_client_against_echo_agent_example(client):
    # the example takes the delay between streamed words as its argument
    agent = [sys.executable, str(EXAMPLES / "echo_agent.py"), "0.005"]
    report = run_session(CLIENTS[client](), agent)
    assert report["protocolVersion"] == 1, report
    turn = report["prompt"]
    assert turn["stopReason"] == "end_turn", turn
    assert turn["text"].split() == turn["sent"].split(), turn
    turn = report["cancel"]
    assert turn["stopReason"] == "cancelled", turn["stopReason"]
    echoed, sent = turn["text"].split(), turn["sent"].split()
    assert 0 < len(echoed) < len(sent) and sent[: len(echoed)] == echoed, turn["text"][:80]
