"""Proxy chains as real processes: ``acpgen conduct`` running the two example
proxies (examples/proxy_log.py, then examples/proxy_rewrite.py) in front of
an echo agent (acpgen's, the Python SDK's, the TypeScript SDK's), driven by
acpgen's client, the Python SDK's and the TypeScript SDK's. The whole session of the
interop clients goes through the chain: the prompt reaches the agent
rewritten, the logging proxy sees every message, the client sees the chain's
capabilities (the rewriting proxy adds its prefix to them) and the agent's
answers unchanged. The same in v2 with two of acpgen's proxy peers
(tests/interop/peers/acpgen_proxy.py on acp_v2_unstable). Then a chain whose
agent exits mid-request."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from .harness import (
    PEERS,
    ROOT,
    TIMEOUT,
    acpgen_agent,
    acpgen_client,
    python_sdk_agent,
    python_sdk_client,
    run_session,
    ts_sdk_agent,
    ts_sdk_client,
)

EXAMPLES = ROOT / "examples"
PREFIX = "[rewritten] "
CONDUCT = [
    sys.executable,
    "-c",
    # The generator by path: the Python SDK's client starts its agent with a
    # minimal environment (no PYTHONPATH).
    f"import sys; sys.path.insert(0, {str(ROOT / 'generator')!r}); from acpgen.cli import main; "
    "main(['conduct', *sys.argv[1:]], prog_name='acpgen')",
]

AGENTS = {
    "acpgen-agent": "acpgen-echo-agent",
    "python-sdk-agent": "python-sdk-echo-agent",
    "ts-sdk-agent": "typescript-sdk-echo-agent",
}
"""Each echo agent, and the name it gives in initialize."""
CLIENTS = {
    "acpgen-client": lambda: acpgen_client("v1"),
    "python-sdk-client": python_sdk_client,
    "ts-sdk-client": lambda: ts_sdk_client("v1"),
}


def agent_command(agent: str) -> list[str]:
    if agent == "python-sdk-agent":
        return python_sdk_agent()
    if agent == "ts-sdk-agent":
        return ts_sdk_agent("v1")
    return acpgen_agent("v1")


def chain(log: Path, agent: list[str]) -> list[str]:
    return [
        *CONDUCT,
        "--",
        *[sys.executable, str(EXAMPLES / "proxy_log.py"), str(log)],
        "--",
        *[sys.executable, str(EXAMPLES / "proxy_rewrite.py"), PREFIX],
        "--",
        *agent,
    ]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("agent", AGENTS)
def test_a_session_through_a_chain_of_the_example_proxies(client: str, agent: str, tmp_path: Path) -> None:
    log = tmp_path / "chain.jsonl"
    report = run_session(CLIENTS[client](), chain(log, agent_command(agent)))

    # The client sees the agent through the chain, with the chain's capabilities.
    assert report["protocolVersion"] == 1, report
    assert report["agentInfo"]["name"] == AGENTS[agent], report["agentInfo"]
    assert report["agentCapabilities"]["_meta"]["proxyRewrite"] == {"prefix": PREFIX}, report["agentCapabilities"]

    # The prompt reached the agent rewritten: the echo is of the prefixed text.
    turn = report["prompt"]
    assert turn["stopReason"] == "end_turn", turn
    assert turn["text"].split() == (PREFIX + turn["sent"]).split(), turn["text"]
    turn = report["cancel"]
    assert turn["stopReason"] == "cancelled", turn
    assert turn["text"] and (PREFIX + turn["sent"]).startswith(turn["text"].rstrip()), turn["text"][:80]
    assert len(turn["text"].split()) < len((PREFIX + turn["sent"]).split()), "the cancelled turn was not cut short"
    assert report["unknownMethod"] == {"code": -32601}, report["unknownMethod"]

    # The logging proxy (first in the chain) saw every message of the session.
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    seen = [(line["direction"], line["method"], next(k for k in line if k not in ("direction", "method"))) for line in lines]  # fmt: skip
    updates = len(report["prompt"]["updates"]) + len(report["cancel"]["updates"])
    assert seen[:4] == [
        ("client->agent", "initialize", "params"),
        ("agent->client", "initialize", "result"),
        ("client->agent", "session/new", "params"),
        ("agent->client", "session/new", "result"),
    ], seen
    assert seen.count(("client->agent", "session/prompt", "params")) == 2, seen
    assert seen.count(("agent->client", "session/prompt", "result")) == 2, seen
    assert seen.count(("agent->client", "session/update", "params")) >= updates, seen
    assert ("client->agent", "session/cancel", "params") in seen, seen
    assert seen[-2:] == [
        ("client->agent", "_interop/unknown", "params"),
        ("agent->client", "_interop/unknown", "error"),
    ], seen
    # What the logging proxy saw is before the rewrite and after the capabilities were set.
    prompts = [line["params"] for line in lines if line["method"] == "session/prompt" and "params" in line]
    assert prompts[0]["prompt"][0]["text"] == report["prompt"]["sent"]
    answer = next(line["result"] for line in lines if line["method"] == "initialize" and "result" in line)
    assert answer["agentCapabilities"]["_meta"]["proxyRewrite"] == {"prefix": PREFIX}
    assert answer["protocolVersion"] == 1


V2_AGENTS = {"acpgen-agent": (acpgen_agent, "acpgen-echo-agent"), "ts-sdk-agent": (ts_sdk_agent, "typescript-sdk-echo-agent")}  # fmt: skip
V2_CLIENTS = {"acpgen-client": acpgen_client, "ts-sdk-client": ts_sdk_client}


@pytest.mark.parametrize("client", V2_CLIENTS)
@pytest.mark.parametrize("agent", V2_AGENTS)
def test_a_v2_session_through_a_chain_of_two_rewriting_proxies(client: str, agent: str) -> None:
    proxy = [sys.executable, str(PEERS / "acpgen_proxy.py"), "--protocol", "v2", "--prefix"]
    make_agent, name = V2_AGENTS[agent]
    command = [*CONDUCT, "--protocol", "v2", "--", *proxy, "[1] ", "--", *proxy, "[2] ", "--", *make_agent("v2")]
    report = run_session(V2_CLIENTS[client]("v2"), command)
    assert report["protocolVersion"] == 2, report
    assert report["agentInfo"]["name"] == name, report["agentInfo"]
    # Each proxy rewrote the prompt it got, in the chain's order.
    turn = report["prompt"]
    assert turn["stopReason"] == "end_turn", turn
    assert turn["text"].split() == ("[2] [1] " + turn["sent"]).split(), turn["text"]
    assert turn["updates"][0] == "user_message" and turn["updates"][-1] == "state_update", turn["updates"]
    turn = report["cancel"]
    assert turn["stopReason"] == "cancelled", turn
    assert 0 < len(turn["text"].split()) < len(turn["sent"].split()) + 2, turn["text"][:80]
    assert report["unknownMethod"] == {"code": -32601}, report["unknownMethod"]


def test_an_agent_exiting_mid_request_fails_the_request_and_ends_the_chain(tmp_path: Path) -> None:
    # The agent reads one message (initialize) and exits with status 3 without answering.
    agent = [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(3)"]
    command = chain(tmp_path / "chain.jsonl", agent)
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    # Only a hang reaches the bound: then the conductor is killed and the test fails.
    watchdog = threading.Timer(TIMEOUT, process.kill)
    watchdog.start()
    try:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        request = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1}}
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        # The conductor answers, tells why, and closes its side: stdout ends
        # while our stdin is still open.
        out = process.stdout.read()
        stderr = process.stderr.read()
        status = process.wait()
    finally:
        watchdog.cancel()
        if process.stdin is not None:
            process.stdin.close()
    assert status == 1, (status, stderr)
    messages = [json.loads(line) for line in out.splitlines()]
    answer = next(m for m in messages if m.get("id") == 7)
    assert answer["error"]["code"] == -32603, answer
    told = next(m for m in messages if m.get("id", 0) is None)
    assert "agent" in told["error"]["data"] and "exited" in told["error"]["data"], told
    assert "exit statuses" in stderr and ": 3" in stderr, stderr


def test_an_interrupted_conductor_closes_the_chain_and_exits_130(tmp_path: Path) -> None:
    log = tmp_path / "chain.jsonl"
    command = chain(log, acpgen_agent("v1"))
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )
    watchdog = threading.Timer(TIMEOUT, process.kill)
    watchdog.start()
    try:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1  # the chain is up
        process.send_signal(signal.SIGINT)  # Ctrl-C
        stderr = process.stderr.read()
        status = process.wait()
    finally:
        watchdog.cancel()
        if process.stdin is not None:
            process.stdin.close()
    assert status == 130, (status, stderr)
    assert "Traceback" not in stderr and "interrupted" in stderr, stderr
