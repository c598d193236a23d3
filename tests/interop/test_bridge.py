"""acpgen bridge between real processes: a v1 client through the bridge to a
v2 agent, and a v2 client through it to a v1 agent. Each pair completes a
streamed prompt and a cancelled one (the echo agents), and a turn with a
tool call and a permission request (tool_agent.py / tool_client.py); the
bridge's loss log lists exactly the values the two schemas cannot carry in
those sessions."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .harness import PEERS, ROOT, acpgen_agent, acpgen_client, check_report, run_session

BRIDGE = [sys.executable, "-c", "from acpgen.cli import main; main()", "bridge"]


def bridged(client_protocol: str, log, agent: list[str]) -> list[str]:
    return [*BRIDGE, "--client-protocol", client_protocol, "--lost-log", str(log), "--", *agent]


def lost(log) -> list[tuple[str, str, str]]:
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return sorted({(r["direction"], r["method"], r["path"]) for r in records if "path" in r})


# What a v1 client's session with a v2 agent loses, and why:
V1_CLIENT_LOSES = [
    # v2 has no fs/* or terminal/* methods: the v1 client's capabilities for them mean nothing there.
    ("v1->v2", "initialize", "/params/clientCapabilities/fs"),
    ("v1->v2", "initialize", "/params/clientCapabilities/terminal"),
    # v1 answers a prompt when the turn ends: the v2 answer's user message id has no place.
    ("v2->v1", "session/prompt", "/result/messageId"),
    # v1 has no turn state: `running` (the idle state_update becomes the prompt's answer).
    ("v2->v1", "session/update", "/params/update"),
]

# What a v2 client's session with a v1 agent loses: the v1 agent's
# capabilities v2 has no field for (v2 has no session/load, no SSE MCP servers).
V2_CLIENT_LOSES = [
    ("v1->v2", "initialize", "/result/agentCapabilities/loadSession"),
    ("v1->v2", "initialize", "/result/agentCapabilities/mcpCapabilities/sse"),
]


@pytest.mark.parametrize(("client", "agent"), [("v1", "v2"), ("v2", "v1")])
def test_echo_session_through_the_bridge(tmp_path, client, agent):
    log = tmp_path / "lost.jsonl"
    report = run_session(acpgen_client(client), bridged(client, log, acpgen_agent(agent)))
    check_report(report, client, "acpgen-echo-agent")  # v1's agentInfo is v2's info
    if client == "v1":
        assert report["prompt"]["updates"][0] == "user_message_chunk"  # v2's user_message, as v1 chunks
    assert lost(log) == (V1_CLIENT_LOSES if client == "v1" else V2_CLIENT_LOSES)


@pytest.mark.parametrize(
    ("client", "agent", "example"), [("v1", "v2", "echo_agent_v2.py"), ("v2", "v1", "echo_agent.py")]
)
def test_examples_through_the_bridge(tmp_path, client, agent, example):
    log = tmp_path / "lost.jsonl"
    # The example's argument: seconds between streamed words. Without one it
    # streams the cancelled turn's 300 words at once, and may end the turn
    # before the cancel has come through the bridge. The cancel cuts the turn
    # short, so a wide margin costs only the 6-word turn's 0.3 s.
    agent = [sys.executable, str(ROOT / "examples" / example), "0.05"]
    report = run_session(acpgen_client(client), bridged(client, log, agent))
    assert report["protocolVersion"] == int(client[1])
    assert report["prompt"]["stopReason"] == "end_turn"
    assert report["prompt"]["text"].split() == report["prompt"]["sent"].split()
    assert report["cancel"]["stopReason"] == "cancelled"
    assert report["cancel"]["sent"].startswith(report["cancel"]["text"]) and report["cancel"]["text"]
    assert report["unknownMethod"] == {"code": -32601}
    assert lost(log) == (V1_CLIENT_LOSES if client == "v1" else V2_CLIENT_LOSES)


@pytest.mark.parametrize(("client", "agent"), [("v1", "v2"), ("v2", "v1")])
def test_tool_call_and_permission_through_the_bridge(tmp_path, client, agent):
    log = tmp_path / "lost.jsonl"
    tool_client = [sys.executable, str(PEERS / "tool_client.py"), "--protocol", client, "--"]
    tool_agent = [sys.executable, str(PEERS / "tool_agent.py"), "--protocol", agent]
    report = run_session(tool_client, bridged(client, log, tool_agent))
    assert report["protocolVersion"] == int(client[1])
    assert report["stopReason"] == "end_turn"
    # The client saw the tool call before it was asked about it, answered
    # `allow`, and the agent got that answer (it streams what it got).
    assert report["permission"]["toolCallId"] == "read-1" and report["permission"]["seen"]
    assert report["permission"]["options"] == ["allow", "reject"]
    assert report["text"] == "selected allow "
    assert report["tools"] == {"read-1": {"title": "Read notes.txt", "kind": "read", "status": "completed"}}
    if client == "v1":
        # v2's upserts: the first is v1's tool_call, the next its update.
        assert [u for u in report["updates"] if u.startswith("tool_call")] == ["tool_call", "tool_call_update"]
    else:
        assert report["permission"]["title"] == "Read notes.txt"  # v2's required title, from the tool call
        assert report["updates"][:2] == ["user_message", "state_update"] and report["updates"][-1] == "state_update"
    assert lost(log) == (V1_CLIENT_LOSES if client == "v1" else V2_CLIENT_LOSES)


def test_a_line_over_the_limit_is_answered_and_the_bridge_goes_on(tmp_path):
    log = tmp_path / "lost.jsonl"
    command = [*BRIDGE, "--client-protocol", "v1", "--lost-log", str(log), "--max-message", "1000"]
    agent = [sys.executable, str(ROOT / "examples" / "echo_agent_v2.py")]
    process = subprocess.Popen([*command, "--", *agent], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    big = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1, "x": "a" * 3000}}
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    process.stdin.write((json.dumps(big) + "\n" + json.dumps(hello) + "\n").encode())
    process.stdin.flush()
    refused = json.loads(process.stdout.readline())
    assert refused["id"] is None and refused["error"]["code"] == -32600
    answered = json.loads(process.stdout.readline())
    assert answered["id"] == 1 and answered["result"]["protocolVersion"] == 1
    process.stdin.close()
    assert process.wait() == 0
    notes = [json.loads(line).get("note", "") for line in log.read_text(encoding="utf-8").splitlines()]
    assert any("over 1000 bytes" in note for note in notes)
