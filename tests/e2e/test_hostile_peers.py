"""Hostile peers against the generated connection: the example agents and
the example client as real subprocesses, fed what a broken or malicious
peer sends. Nothing may kill them, stall them or get a message past them:
every hostile line is answered (or dropped) with strict JSON, and the next
valid request is still answered.

``tests/fuzz_peers.py`` (``make fuzz``) runs random scenarios of the same
kinds for a bounded time."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys

import pytest

from ..conftest import ROOT, load_generated
from ..patience import HANG

acp = load_generated("acp_v1")
EXAMPLES = ROOT / "examples"
AGENTS = ["echo_agent.py", "echo_agent_v2.py"]
HOSTILE_AGENT = ROOT / "tests/e2e/hostile_agent.py"
TIMEOUT = HANG
DEEP = "[" * 1000 + "]" * 1000


def _strict(line: bytes) -> dict:
    """A line the peer wrote: strict JSON (no NaN), valid UTF-8, one object."""

    def refuse(token: str) -> None:
        raise AssertionError(f"{token} on the wire: {line[:200]!r}")

    message = json.loads(line.decode("utf-8", errors="strict"), parse_constant=refuse)
    assert isinstance(message, dict), line[:200]
    return message


def initialize(id: object, version: int = 1, **extra: object) -> dict:
    params = {
        "protocolVersion": version,
        "clientInfo": {"name": "t", "version": "1"},
        "info": {"name": "t", "version": "1"},
        **extra,
    }
    return {"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params}


def _version(agent: str) -> int:
    return 2 if agent.endswith("_v2.py") else 1


def talk(agent: str, lines: list[bytes], *, stdin_open: bool = False) -> tuple[list[dict], subprocess.CompletedProcess]:
    """Pipe ``lines`` into the example agent, then a valid ``initialize``
    (id "last"), and close its input; its replies, each checked strict."""
    last = json.dumps(initialize("last", _version(agent))).encode() + b"\n"
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / agent)], input=b"".join(lines) + last, capture_output=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert b"Traceback" not in done.stderr, done.stderr.decode()[-3000:]
    replies = [_strict(line) for line in done.stdout.splitlines()]
    assert replies and replies[-1]["id"] == "last" and "result" in replies[-1], replies[-3:]
    return replies[:-1], done


def _line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


# ------------------------------------------------------------ 1. parse errors


@pytest.mark.parametrize("agent", AGENTS)
def test_deep_nesting_is_a_parse_error_and_the_agent_goes_on(agent):
    meta = json.dumps(initialize(5, _version(agent)))[:-2] + ', "_meta": {"x": ' + DEEP + "}}}"
    replies, _ = talk(agent, [DEEP.encode() + b"\n", meta.encode() + b"\n", b'{"a":' * 100_000 + b"\n"])
    assert [reply["error"]["code"] for reply in replies] == [-32700, -32700, -32700]


# ------------------------------------------------------------ 2. replies with no JSON text


@pytest.mark.parametrize("agent", AGENTS)
def test_an_id_or_method_with_a_lone_surrogate_gets_a_valid_reply(agent):
    by_id = initialize("\ud800", _version(agent))
    by_method = {"jsonrpc": "2.0", "id": 9, "method": "\ud800", "params": {}}
    # Initialized first: an unknown method is refused -32600 before that.
    replies, _ = talk(agent, [_line(initialize(0, _version(agent))), _line(by_id), _line(by_method)])
    assert len(replies) == 3 and "result" in replies[0]
    # The peer's own id, escaped as it came: a reply it can match.
    assert replies[1]["id"] == "\ud800" and "result" in replies[1], replies[1]
    assert replies[2]["id"] == 9 and replies[2]["error"]["code"] == -32601


def test_a_session_update_with_no_json_text_fails_the_prompt_not_the_agent():
    # The v1 echo agent streams the prompt's words back: a lone surrogate
    # in them has no UTF-8, so the update cannot go out.
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}

    def prompt(session):
        return {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "a \ud800 b"}]},
        }

    async def main():
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(EXAMPLES / "echo_agent.py"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        process.stdin.write(_line(initialize("first")))
        assert "result" in _strict(await process.stdout.readline())
        process.stdin.write(_line(new))
        session = _strict(await process.stdout.readline())["result"]["sessionId"]
        process.stdin.write(_line(prompt(session)))
        lines = [_strict(await process.stdout.readline()), _strict(await process.stdout.readline())]
        process.stdin.write(_line(initialize("last")))
        lines.append(_strict(await process.stdout.readline()))
        process.stdin.close()
        await process.wait()
        return lines

    chunk, failed, last = asyncio.run(asyncio.wait_for(main(), TIMEOUT))
    assert chunk["method"] == "session/update" and chunk["params"]["update"]["content"]["text"] == "a "
    assert failed["id"] == 2 and failed["error"]["code"] == -32603
    assert last["id"] == "last" and "result" in last


# ------------------------------------------------------------ 3. a peer that does not read


NOT_READING = """
import asyncio, sys
import acp_v1 as acp

class Silent(acp.Client):
    def __init__(self, conn):
        self.conn = conn

async def main():
    async with acp.spawn_agent(Silent, "sleep", "3600") as conn:
        request = acp.InitializeRequest(protocol_version=1, meta={"pad": "x" * 1_000_000})
        try:
            await asyncio.wait_for(conn.initialize(request), 2)
        except asyncio.TimeoutError:
            print("timed out")
        conn.process.kill()  # sleep would take an hour to exit
    print("closed")

asyncio.run(main())
"""


def test_a_timeout_fires_and_close_returns_against_an_agent_that_reads_nothing():
    # In a process of its own: a connection that never returns from either
    # wait must fail the test, not hang it.
    done = subprocess.run(
        [sys.executable, "-c", NOT_READING], cwd=ROOT / "generated", capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "timed out\nclosed\n"


# ------------------------------------------------------------ 4. lines over the limit


@pytest.mark.parametrize("agent", AGENTS)
def test_a_line_over_the_default_limit_is_discarded_whole_through_a_pipe(agent):
    # 70 MB of blanks, then a request, on one line: over the 64 MiB limit.
    smuggled = initialize("smuggled", _version(agent))
    replies, _ = talk(agent, [b" " * (70 * 1024 * 1024) + _line(smuggled)])
    assert [(reply["id"], reply["error"]["code"]) for reply in replies] == [(None, -32700)]


# ------------------------------------------------------------ 6. envelopes, a closed stdout


@pytest.mark.parametrize("agent", AGENTS)
def test_bad_envelopes_are_answered_invalid_request_in_a_few_bytes(agent):
    lines = [
        _line({"jsonrpc": "2.0", "id": 1}),
        _line({"jsonrpc": "x" * 10_000_000, "id": 2, "method": "initialize"}),
        b'{"jsonrpc": "2.0", "id": NaN, "method": "initialize"}\n',
        b'{"jsonrpc": ' + b"9" * 5000 + b', "id": 3, "method": "initialize"}\n',
    ]
    replies, done = talk(agent, lines)
    assert [(reply["id"], reply["error"]["code"]) for reply in replies] == [
        (1, -32600),
        (2, -32600),
        (None, -32600),
        (None, -32700),
    ]
    assert len(done.stdout) < 3000


@pytest.mark.parametrize("sink", ["pipe-without-reader", "/dev/full"])
@pytest.mark.parametrize("agent", AGENTS)
def test_an_agent_whose_output_fails_stops_serving_with_one_warning(agent, sink):
    if sink == "/dev/full" and not os.path.exists(sink):
        pytest.skip("no /dev/full here")
    if sink == "/dev/full":
        write = os.open(sink, os.O_WRONLY)  # every write fails (ENOSPC)
    else:
        read, write = os.pipe()
        os.close(read)  # nobody will ever read what the agent writes (EPIPE)
    process = subprocess.Popen(
        [sys.executable, str(EXAMPLES / agent)], stdin=subprocess.PIPE, stdout=write, stderr=subprocess.PIPE
    )
    os.close(write)
    try:
        for n in range(20):
            process.stdin.write(_line(initialize(n, _version(agent))))
        process.stdin.flush()
        # stdin stays open: the agent ends because its writes fail.
        assert process.wait(timeout=TIMEOUT) == 0
    finally:
        process.kill()
        process.stdin.close()
    errors = process.stderr.read().decode()
    process.stderr.close()
    assert "Traceback" not in errors, errors[-3000:]
    assert errors.count("the connection broke while writing") == 1, errors[-3000:]


# ------------------------------------------------------------ 7. ordering


def test_a_permission_request_comes_after_the_tool_call_update_was_handled():
    """Slow handlers on both sides: the client's session/update handler
    takes 50 ms, the agent pauses between its messages; the permission
    handler finds the tool call the update announced."""

    class Agent(acp.Agent):
        def __init__(self, conn):
            self.conn = conn

        async def prompt(self, params):
            for n in range(3):
                call = acp.ToolCallSessionUpdate(tool_call_id=f"call-{n}", title=f"tool {n}")
                await self.conn.session_update(acp.SessionNotification(session_id=params.session_id, update=call))
                options = [acp.PermissionOption(option_id="yes", name="Yes", kind=acp.PermissionOptionKind.ALLOW_ONCE)]
                request = acp.RequestPermissionRequest(
                    session_id=params.session_id,
                    tool_call=acp.ToolCallUpdate(tool_call_id=f"call-{n}"),
                    options=options,
                )
                answer = await self.conn.request_permission(request)
                assert isinstance(answer.outcome, acp.SelectedRequestPermissionOutcome), answer
                await asyncio.sleep(0.01)
            return acp.PromptResponse(stop_reason=acp.StopReason.END_TURN)

    class Client(acp.Client):
        def __init__(self, conn):
            self.conn = conn
            self.tool_calls: dict[str, str] = {}

        async def session_update(self, params):
            await asyncio.sleep(0.05)
            update = params.update
            if isinstance(update, acp.ToolCallSessionUpdate):
                self.tool_calls[update.tool_call_id] = update.title

        async def request_permission(self, params):
            title = self.tool_calls[params.tool_call.tool_call_id]  # KeyError: answered -32603
            return acp.RequestPermissionResponse(
                outcome=acp.SelectedRequestPermissionOutcome(option_id="yes" if title else "no")
            )

    async def main():
        left, right = socket.socketpair()
        agent_streams = await asyncio.open_connection(sock=left)
        client_streams = await asyncio.open_connection(sock=right)
        agent = acp.AgentSideConnection(Agent, *agent_streams, validate_outgoing=True, require_initialize=False)
        client = acp.ClientSideConnection(Client, *client_streams, validate_outgoing=True)
        agent.start()
        client.start()
        response = await client.prompt(acp.PromptRequest(session_id="s", prompt=[]))
        assert response.stop_reason is acp.StopReason.END_TURN
        assert sorted(client.handler.tool_calls) == ["call-0", "call-1", "call-2"]
        await client.close()
        await agent.close()

    asyncio.run(asyncio.wait_for(main(), TIMEOUT))


# ------------------------------------------------------------ the example client against a hostile agent


def hostile_client_run(tmp_path, scenario: str, seed: int = 0) -> tuple[list, subprocess.CompletedProcess]:
    """The example client driving the hostile agent through ``scenario``;
    the client's messages read meanwhile, each checked strict."""
    report = tmp_path / "report.json"
    command = [
        sys.executable,
        str(EXAMPLES / "echo_client.py"),
        "hi",
        "--",
        sys.executable,
        str(HOSTILE_AGENT),
        scenario,
        str(report),
        str(seed),
    ]
    done = subprocess.run(command, capture_output=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    assert done.stdout.decode("utf-8", "replace").endswith("ok\n[end_turn]\n"), done.stdout[-500:]
    seen = json.loads(report.read_text())
    assert not [message for message in seen if "bad_line" in message], seen
    assert seen[-1]["id"] == "probe" and seen[-1]["error"]["code"] == -32601
    return seen[:-1], done


def test_the_client_survives_deep_nesting(tmp_path):
    seen, _ = hostile_client_run(tmp_path, "deep")
    assert [message["error"]["code"] for message in seen] == [-32700, -32700]


def test_the_client_answers_ids_and_methods_with_no_json_text(tmp_path):
    seen, _ = hostile_client_run(tmp_path, "surrogate")
    assert [(message["id"], message["error"]["code"]) for message in seen] == [("\ud800", -32601), ("m", -32601)]


def test_the_client_answers_bad_envelopes(tmp_path):
    seen, _ = hostile_client_run(tmp_path, "envelope")
    assert [(message["id"], message["error"]["code"]) for message in seen] == [("env", -32600), ("long", -32600)]
    assert len(json.dumps(seen)) < 2000


def test_no_request_is_smuggled_past_the_clients_line_limit(tmp_path):
    seen, _ = hostile_client_run(tmp_path, "smuggle")
    assert [(message["id"], message["error"]["code"]) for message in seen] == [(None, -32700)]


@pytest.mark.parametrize("seed", range(3))
def test_the_client_survives_random_garbage(tmp_path, seed):
    seen, _ = hostile_client_run(tmp_path, "random", seed)
    assert all("error" in message for message in seen)
