"""The interop peers: the commands that start each agent and client, a check
that the official SDKs are installed, and the checks on a client's report.

Every client peer (Python SDK, TypeScript SDK, acpgen) takes the agent command
as its trailing arguments, runs the same session (initialize, session/new, a
prompt, a prompt cancelled on its first streamed chunk) and prints the same
JSON report; every echo agent streams a prompt back word by word.
"""

from __future__ import annotations

import contextlib
import json
import select
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..patience import HANG

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PEERS = HERE / "peers"
TS = HERE / "ts"

PYTHON_SDK = ("agent-client-protocol", "0.12.1")
TS_SDK = ("@agentclientprotocol/sdk", "2.4.0")
MCP_SDK = ("mcp", "2.3.0")
"""The official MCP Python SDK, whose server ``peers/mcp_stdio_server.py`` is."""
PROTOCOL_VERSIONS = {"v1": 1, "v2": 2}
TIMEOUT = HANG


def require_python_sdk(sdk: tuple[str, str] = PYTHON_SDK) -> None:
    """Fail (never skip) unless the pinned Python SDK (or ``sdk``, such as
    :data:`MCP_SDK`) is importable here."""
    from importlib import metadata

    name, pinned = sdk
    try:
        found = metadata.version(name)
    except metadata.PackageNotFoundError:
        pytest.fail(
            f"the Python SDK peer is missing: {name}=={pinned} is not installed in "
            f"{sys.prefix}; run `make install` (it installs the `test` extras)"
        )
    if found != pinned:
        pytest.fail(f"the Python SDK peer is {name} {found}, the tests pin {pinned}: run `make install`")


def require_ts_sdk() -> None:
    """Fail (never skip) unless node and the pinned TypeScript SDK are there."""
    name, pinned = TS_SDK
    if shutil.which("node") is None:
        pytest.fail("the TypeScript SDK peers need node (>= 20) on PATH")
    package = TS / "node_modules" / name / "package.json"
    if not package.is_file():
        pytest.fail(
            f"the TypeScript SDK peer is missing: {package} does not exist; "
            "run `make install` (it installs tests/interop/ts from its lockfile)"
        )
    found = json.loads(package.read_text())["version"]
    if found != pinned:
        pytest.fail(f"the TypeScript SDK peer is {name} {found}, the tests pin {pinned}: run `make install`")


# ------------------------------------------------------------------ commands


def python_sdk_agent() -> list[str]:
    require_python_sdk()
    return [sys.executable, str(PEERS / "sdk_echo_agent.py")]


def python_sdk_client() -> list[str]:
    require_python_sdk()
    return [sys.executable, str(PEERS / "sdk_client.py")]


def ts_sdk_agent(protocol: str) -> list[str]:
    require_ts_sdk()
    return ["node", str(TS / "echo_agent.mjs"), "--protocol", protocol]


def ts_sdk_client(protocol: str) -> list[str]:
    require_ts_sdk()
    return ["node", str(TS / "client.mjs"), "--protocol", protocol, "--"]


def acpgen_agent(protocol: str) -> list[str]:
    return [sys.executable, str(PEERS / "acpgen_echo_agent.py"), "--protocol", protocol]


def acpgen_client(protocol: str) -> list[str]:
    return [sys.executable, str(PEERS / "acpgen_client.py"), "--protocol", protocol, "--"]


# ------------------------------------------------------------------ running


def run_session(client: list[str], agent: list[str], cwd: Path = ROOT) -> dict:
    """Run ``client`` against ``agent`` (real processes over stdio, in ``cwd``,
    which the client sends as the session's cwd) and return the client's
    report; fail with the peer's stderr if anything goes wrong."""
    command = [*client, *agent]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"{command} did not finish in {TIMEOUT} s; stderr:\n{error.stderr}")
    if done.returncode != 0:
        pytest.fail(f"{command} exited with {done.returncode}; stderr:\n{done.stderr}")
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        pytest.fail(f"{command} printed no JSON report; stdout:\n{done.stdout}\nstderr:\n{done.stderr}")


def check_report(report: dict, protocol: str, agent_name: str) -> None:
    """What every client must have seen of every echo agent."""
    assert report["protocolVersion"] == PROTOCOL_VERSIONS[protocol], report
    assert report["agentInfo"]["name"] == agent_name, report["agentInfo"]
    assert isinstance(report["sessionId"], str) and report["sessionId"]

    turn = report["prompt"]
    assert turn["stopReason"] == "end_turn", turn
    assert turn["text"] == turn["sent"], "the streamed chunks do not add up to the prompt"
    assert turn["updates"].count("agent_message_chunk") == len(turn["sent"].split()), turn["updates"]

    turn = report["cancel"]
    assert turn["stopReason"] == "cancelled", turn["stopReason"]
    assert turn["text"], "the cancelled turn streamed nothing before the cancel"
    assert turn["sent"].startswith(turn["text"]) and turn["text"] != turn["sent"], (
        "the cancelled turn was not cut short: " + turn["text"][:80]
    )

    assert report["unknownMethod"] == {"code": -32601}, (
        f"an unknown extension request was not answered -32601 (method not found): {report['unknownMethod']}"
    )

    if protocol == "v2":
        for turn in (report["prompt"], report["cancel"]):
            assert isinstance(turn["messageId"], str) and turn["messageId"], turn
            assert turn["updates"][0] == "user_message", turn["updates"]
            assert turn["updates"][-1] == "state_update", turn["updates"]


# ------------------------------------------------------------------ over the network


@contextlib.contextmanager
def listening(agent: list[str]) -> Iterator[int]:
    """Start ``agent`` with ``--listen`` (it serves HTTP and WebSocket on a
    free loopback port and prints ``LISTENING <port>``); yield the port, stop
    the agent on exit."""
    command = [*agent, "--listen"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], TIMEOUT)
        line = process.stdout.readline() if ready else ""
        if not line.startswith("LISTENING "):
            process.kill()
            _, stderr = process.communicate(timeout=TIMEOUT)
            pytest.fail(f"{command} did not start listening; stdout: {line!r}; stderr:\n{stderr}")
        yield int(line.split()[1])
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
