"""The repository's examples (examples/echo_agent.py and echo_client.py on
acp_v1, echo_agent_v2.py and echo_client_v2.py on acp_v2, echo_agent_any.py
serving both) against the official SDKs' peers and each other, as real
processes; resumable_client.py with resumable_agent.py, and every example
under 60 lines."""

from __future__ import annotations

import os
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
SUFFIX = {"v1": "", "v2": "_v2"}
AGENTS = {
    "python-sdk-agent v1": ("v1", python_sdk_agent),
    "ts-sdk-agent v1": ("v1", lambda: ts_sdk_agent("v1")),
    "ts-sdk-agent v2": ("v2", lambda: ts_sdk_agent("v2")),
}
CLIENTS = {
    "python-sdk-client v1": ("v1", python_sdk_client),
    "ts-sdk-client v1": ("v1", lambda: ts_sdk_client("v1")),
    "ts-sdk-client v2": ("v2", lambda: ts_sdk_client("v2")),
}


@pytest.mark.parametrize("agent", AGENTS)
def test_echo_client_example_against_sdk_agent(agent):
    protocol, command = AGENTS[agent]
    text = "interop says hello"
    example = EXAMPLES / f"echo_client{SUFFIX[protocol]}.py"
    command = [sys.executable, str(example), text, "--", *command()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [*text.split(), "[end_turn]"], done.stdout


def test_the_both_versions_echo_agent_serves_the_v1_and_the_v2_echo_client():
    agent = [sys.executable, str(EXAMPLES / "echo_agent_any.py")]
    for suffix in SUFFIX.values():
        text = f"hello from echo_client{suffix}"
        command = [sys.executable, str(EXAMPLES / f"echo_client{suffix}.py"), text, "--", *agent]
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [*text.split(), "[end_turn]"], done.stdout


@pytest.mark.parametrize("example", ["echo_agent{suffix}.py", "echo_agent_any.py"])
@pytest.mark.parametrize("client", CLIENTS)
def test_sdk_client_against_echo_agent_example(client, example):
    protocol, command = CLIENTS[client]
    # the example takes the delay between streamed words as its argument
    agent = [sys.executable, str(EXAMPLES / example.format(suffix=SUFFIX[protocol])), "0.005"]
    report = run_session(command(), agent)
    assert report["protocolVersion"] == int(protocol[1]), report
    turn = report["prompt"]
    assert turn["stopReason"] == "end_turn", turn
    assert turn["text"].split() == turn["sent"].split(), turn
    turn = report["cancel"]
    assert turn["stopReason"] == "cancelled", turn["stopReason"]
    echoed, sent = turn["text"].split(), turn["sent"].split()
    assert 0 < len(echoed) < len(sent) and sent[: len(echoed)] == echoed, turn["text"][:80]
    if protocol == "v2":  # the prompt echoed as user_message, running, the words, idle
        for turn in (report["prompt"], report["cancel"]):
            words = len(turn["text"].split())
            expected = ["user_message", "state_update", *["agent_message_chunk"] * words, "state_update"]
            assert turn["updates"] == expected, turn["updates"]
            assert isinstance(turn["messageId"], str) and turn["messageId"], turn
    assert report["unknownMethod"] == {"code": -32601}, report["unknownMethod"]


def test_echo_client_remote_example_against_echo_agent_remote_example():
    """The network examples: the agent served over WebSocket and HTTP with a
    token, the client connecting with it (and refused without it)."""
    agent = [sys.executable, str(EXAMPLES / "echo_agent_remote.py"), "--port", "0", "--token", "t0k"]
    process = subprocess.Popen(agent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = process.stdout.readline()
        assert line.startswith("serving ws://127.0.0.1:"), line + process.stderr.read()
        ws_url, http_url = line.split()[1], line.split()[3]
        client = [sys.executable, str(EXAMPLES / "echo_client_remote.py")]
        text = "remote says hello"
        for url in (ws_url, http_url):
            env = {**os.environ, "ACP_TOKEN": "t0k"}
            done = subprocess.run(
                [*client, url, text], capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, env=env
            )
            assert done.returncode == 0, done.stderr
            assert done.stdout.split() == [*text.split(), "[end_turn]"], done.stdout
            env["ACP_TOKEN"] = "wrong"
            done = subprocess.run(
                [*client, url, text], capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT, env=env
            )
            assert done.returncode != 0 and "401" in done.stderr, done.stderr
    finally:
        process.terminate()
        process.wait(timeout=TIMEOUT)


def test_resumable_client_example_gets_its_session_back_from_a_new_agent_process(tmp_path):
    # resumable_client.py kills its resumable_agent.py after the first turn and
    # reconnects to a new process, which replays the session from its log
    example = EXAMPLES / "resumable_client.py"
    done = subprocess.run(
        [sys.executable, str(example), str(tmp_path)], capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "user_messages hello there",
        "agent_messages hello there ",
        "user_messages and again",
        "agent_messages and again ",
    ]
    assert len(list(tmp_path.glob("*.jsonl"))) == 1  # one session, kept by the agent


def test_every_example_is_under_60_lines():
    for example in sorted(EXAMPLES.glob("*.py")):
        assert len(example.read_text().splitlines()) < 60, example.name


def test_echo_agent_any_passes_its_delay_to_both_agents():
    """The delay argument reaches the v1 agent too (echo_agent.py reads
    sys.argv only when run itself): without it the v1 agent streams at once
    and a cancelled turn can end end_turn."""
    script = f"""
import runpy, sys
sys.path.insert(0, {str(ROOT / "generated")!r})
import acp_v2
async def serve(agents, *args, **kwargs):
    pass
acp_v2.serve_versions = serve
sys.argv = ["echo_agent_any.py", "0.25"]
runpy.run_path({str(EXAMPLES / "echo_agent_any.py")!r}, run_name="__main__")
print(sys.modules["echo_agent"].DELAY, sys.modules["echo_agent_v2"].DELAY)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0.25", "0.25"]
