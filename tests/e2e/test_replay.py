"""acpgen replay: every transcript recorded from a real peer replays --as agent
to our client and to the official Python SDK's client with the recorded
session fold, --as client against our echo agent finds nothing, and a changed
recorded answer is reported with its JSON path.

Each replay runs ``RUNS`` times (``ACPGEN_REPLAY_RUNS``, default 2: each run
is three processes); the closing measurement of the feature ran 100.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from acpgen.errors import AcpgenError
from acpgen.replay import load_transcript, replay_agent, replay_to_agent, replay_to_client, runs
from acpgen.replay.fold import fold_messages, package_for
from acpgen.replay.match import IdMap, compare
from acpgen.replay.transcript import AGENT, CLIENT

from ..conftest import ROOT, load_generated
from ..interop import harness
from ..patience import HANG

TRANSCRIPTS = ROOT / "tests/fixtures/transcripts"
PYTHON = sys.executable
ECHO_AGENT = [PYTHON, str(ROOT / "examples/echo_agent.py")]
ECHO_PROMPT = "Hello agent, please echo this back"
RUNS = int(os.environ.get("ACPGEN_REPLAY_RUNS") or 2)

# transcript -> the protocol of our client peer that runs the same session
RECORDED_FROM_SDKS = {
    "python-sdk-v1.jsonl": "v1",
    "typescript-sdk-v1.jsonl": "v1",
    "typescript-sdk-v2.jsonl": "v2",
}


def acpgen(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    command = [str(Path(PYTHON).with_name("acpgen")), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=HANG, cwd=cwd)


def agent_messages(fold: dict) -> int:
    """How many agent messages a fold's sessions hold (a fold that compares
    equal because it is empty proves nothing)."""
    return sum(len(session["agentMessages"]) for session in fold.values())


def assert_clean(result, client_run=None) -> None:
    details = [str(finding) for finding in result.findings]
    if client_run is not None:
        assert client_run.returncode == 0, client_run.stderr.decode(errors="replace")[-2000:]
    assert result.ok, details
    assert result.fold_equal, details
    assert agent_messages(result.recorded_fold) >= 1


@pytest.mark.parametrize("name", sorted(RECORDED_FROM_SDKS))
def test_sdk_transcripts_replay_to_our_client(name: str) -> None:
    """The acpgen client peer (the generated package's connection) runs the
    recorded session against the replayed agent: same messages up to ids,
    same fold."""
    for _ in range(RUNS):
        result, run = replay_to_client(
            TRANSCRIPTS / name, harness.acpgen_client(RECORDED_FROM_SDKS[name]), timeout=HANG, cwd="/"
        )
        assert_clean(result, run)
        assert result.exchanged == len(load_transcript(TRANSCRIPTS / name).records)


@pytest.mark.parametrize("name", ["python-sdk-v1.jsonl", "typescript-sdk-v1.jsonl"])
def test_v1_transcripts_replay_to_the_python_sdk_client(name: str) -> None:
    """The official Python SDK's client (v1 only) against the replayed agent."""
    for _ in range(RUNS):
        result, run = replay_to_client(TRANSCRIPTS / name, harness.python_sdk_client(), timeout=HANG, cwd="/")
        assert_clean(result, run)


def test_echo_transcript_replays_to_the_echo_client_with_recorded_timing() -> None:
    """A transcript acpgen tap recorded (with times) between examples/echo_client.py
    and examples/echo_agent.py replays to the echo client, the client starting
    the replay agent where its command says {agent}."""
    client = [PYTHON, str(ROOT / "examples/echo_client.py"), ECHO_PROMPT, "--", "{agent}"]
    for timing in ("compressed", "recorded"):
        result, run = replay_to_client(
            TRANSCRIPTS / "acpgen-echo-v1.jsonl", client, timing=timing, timeout=HANG, cwd="/"
        )
        assert_clean(result, run)
        assert run.stdout.decode().startswith(ECHO_PROMPT), run.stdout


def test_a_replay_logs_in_a_scratch_directory_that_goes_with_a_killed_run_s(tmp_path, monkeypatch) -> None:
    """The run's log is in a scratch directory: gone after the run, and a
    run killed with SIGKILL leaves nothing the next run does not remove."""
    home = tmp_path / "temp"
    killed = home / f"{runs.SCRATCH_PREFIX}killed"
    killed.mkdir(parents=True)
    (killed / "run.jsonl").write_text("")
    monkeypatch.setattr(tempfile, "tempdir", str(home))
    monkeypatch.setenv("TMPDIR", str(home))
    client = [PYTHON, str(ROOT / "examples/echo_client.py"), ECHO_PROMPT, "--", "{agent}"]
    result, run = replay_to_client(TRANSCRIPTS / "acpgen-echo-v1.jsonl", client, timeout=HANG, cwd="/")
    assert_clean(result, run)
    assert list(home.iterdir()) == []


def test_a_client_that_says_something_else_is_reported_with_the_path() -> None:
    """The echo client sending another prompt than the recorded one: the
    prompt's text is the difference, and the fold differs there too."""
    client = [PYTHON, str(ROOT / "examples/echo_client.py"), "Goodbye agent", "--"]
    result, _run = replay_to_client(TRANSCRIPTS / "acpgen-echo-v1.jsonl", client, timeout=HANG, cwd="/")
    assert not result.ok
    differs = [f for f in result.findings if f.kind == "differs"]
    assert [d.path for d in differs[0].differences] == ["$.params.prompt[0].text"]
    assert differs[0].differences[0].live == "Goodbye agent"
    folds = [f for f in result.findings if f.kind == "fold"]
    assert folds and any(".userMessages" in d.path for d in folds[0].differences)


def test_replay_agent_is_a_connection_factory() -> None:
    """replay_agent(path) in a test: a generated client connection joined in
    memory to the recording's agent side, the comparison in .result."""
    acp = load_generated("acp_v1")
    replay = replay_agent(TRANSCRIPTS / "python-sdk-v1.jsonl")
    seen: list[str] = []

    class Client:
        def __init__(self, conn) -> None:
            self.conn = conn

        async def session_update(self, params) -> None:
            text = getattr(params.update.content, "text", "")
            seen.append(text)
            if text == "word0 ":
                await self.conn.cancel(acp.CancelNotification(session_id=params.session_id))

    async def session() -> list[str]:
        stops = []
        async with replay(Client) as conn:
            await conn.initialize(acp.InitializeRequest(protocol_version=1))
            new = await conn.new_session(acp.NewSessionRequest(cwd="/", mcp_servers=[]))
            for text in (ECHO_PROMPT, " ".join(f"word{i}" for i in range(300))):
                prompt = [acp.TextContentBlock(text=text)]
                response = await conn.prompt(acp.PromptRequest(session_id=new.session_id, prompt=prompt))
                stops.append(response.stop_reason.value)
            with pytest.raises(acp.RequestError) as error:
                await conn.request("_interop/unknown", {})
            assert error.value.code == -32601
        return stops

    assert asyncio.run(session()) == ["end_turn", "cancelled"]
    assert "".join(seen) == ECHO_PROMPT + "word0 "
    assert replay.result is not None
    assert_clean(replay.result)


def test_as_client_against_the_echo_agent_finds_nothing() -> None:
    result = replay_to_agent(TRANSCRIPTS / "acpgen-echo-v1.jsonl", ECHO_AGENT, patience=HANG)
    assert_clean(result)
    assert result.findings == []


def test_as_client_tolerates_updates_racing_the_cancel() -> None:
    """The SDK transcript's cancelled turn against the echo agent (50 ms a
    word): whatever it streams after the cancel is said, not a divergence.
    The one real difference: the echo agent ends its last word with a space
    ("back "), the SDK echo agents do not."""
    result = replay_to_agent(TRANSCRIPTS / "python-sdk-v1.jsonl", [*ECHO_AGENT, "0.05"], patience=HANG)
    kinds = sorted(f.kind for f in result.findings)
    assert kinds == ["differs", "fold"] or kinds == ["differs", "fold", "tolerated"], [str(f) for f in result.findings]
    differs = next(f for f in result.findings if f.kind == "differs")
    assert differs.line == 11
    assert [(d.path, d.recorded, d.live) for d in differs.differences] == [
        ("$.params.update.content.text", "back", "back ")
    ]


def test_a_changed_recorded_answer_is_reported_with_its_path(tmp_path: Path) -> None:
    """One recorded answer changed (the turn's stop reason), replayed --as
    client against the echo agent: reported at its line with its JSON path,
    by the library and by the command (exit status 1)."""
    lines = (TRANSCRIPTS / "acpgen-echo-v1.jsonl").read_text().splitlines()
    changed = None
    for n, line in enumerate(lines):
        record = json.loads(line)
        if record.get("message", {}).get("result", {}).get("stopReason") == "end_turn":
            record["message"]["result"]["stopReason"] = "max_tokens"
            lines[n], changed = json.dumps(record), n + 1
    assert changed is not None
    path = tmp_path / "changed.jsonl"
    path.write_text("\n".join(lines) + "\n")

    result = replay_to_agent(path, ECHO_AGENT, patience=HANG)
    assert not result.ok
    assert [(f.kind, f.line) for f in result.findings] == [("differs", changed)]
    [difference] = result.findings[0].differences
    assert (difference.path, difference.recorded, difference.live) == ("$.result.stopReason", "max_tokens", "end_turn")

    run = acpgen("replay", str(path), "--as", "client", "--", *ECHO_AGENT)
    assert run.returncode == 1, run.stderr
    assert f"differs: line {changed}:" in run.stdout
    assert '$.result.stopReason: recorded "max_tokens", live "end_turn"' in run.stdout


def test_a_changed_recorded_update_changes_the_fold(tmp_path: Path) -> None:
    """A recorded chunk's text changed: the update differs, and so does the
    fold, at the message's content."""
    text = (TRANSCRIPTS / "acpgen-echo-v1.jsonl").read_text()
    assert text.count('"text":"Hello "') == 1
    path = tmp_path / "changed.jsonl"
    path.write_text(text.replace('"text":"Hello "', '"text":"Howdy "'))
    result = replay_to_agent(path, ECHO_AGENT, patience=HANG)
    fold = next(f for f in result.findings if f.kind == "fold")
    [difference] = fold.differences
    assert difference.path.endswith(".agentMessages['#1'].content[0].text")
    assert (difference.recorded, difference.live) == ("Howdy ", "Hello ")


def test_a_recorded_update_the_package_cannot_decode_is_reported(tmp_path: Path) -> None:
    """A recorded chunk whose text is a number: the client's fold cannot
    take it, and the fold finding says which message and why (the live
    fold has the chunk the recorded one lacks)."""
    text = (TRANSCRIPTS / "acpgen-echo-v1.jsonl").read_text()
    path = tmp_path / "undecodable.jsonl"
    path.write_text(text.replace('"text":"Hello "', '"text":5'))
    result = replay_to_agent(path, ECHO_AGENT, patience=HANG)
    fold = next(f for f in result.findings if f.kind == "fold")
    assert "a session/update the package cannot decode: $.update.content.text: expected a string" in fold.message
    assert fold.differences


def test_the_fold_lists_each_message_it_cannot_take() -> None:
    """A prompt and an update that do not decode are listed, each once,
    and the fold goes on with the messages after them."""
    package = package_for(1)
    session = {"sessionId": "s"}
    text = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ok"}}
    fold = fold_messages(
        package,
        [
            (CLIENT, {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
            (AGENT, {"jsonrpc": "2.0", "id": 1, "result": session}),
            (CLIENT, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {**session, "prompt": "hi"}}),
            (
                AGENT,
                {"jsonrpc": "2.0", "method": "session/update", "params": {**session, "update": {**text, "content": 5}}},
            ),
            (AGENT, {"jsonrpc": "2.0", "method": "session/update", "params": {**session, "update": text}}),
        ],
    )
    assert fold.errors == [
        'a session/prompt the package cannot decode: $.prompt: expected an array, found string "hi"',
        "a session/update the package cannot decode: $.update.content: expected an object, found integer 5",
    ]
    [snapshot] = fold.snapshot().values()
    assert snapshot["agentMessages"] == {"#0": {"messageId": None, "content": [{"type": "text", "text": "ok"}]}}


def test_a_package_whose_fold_cannot_report_is_refused(tmp_path: Path) -> None:
    """A package generated before SessionFolds took on_unfolded: replay
    says to regenerate it instead of failing in the fold."""
    package = tmp_path / "acp_old"
    shutil.copytree(ROOT / "generated" / "acp_v1", package)
    folding = package / "_folding.py"
    text = folding.read_text()
    assert "        on_unfolded: Unfolded | None = None,\n" in text
    folding.write_text(text.replace("        on_unfolded: Unfolded | None = None,\n", ""))
    with pytest.raises(AcpgenError, match="acp_old was generated by an older acpgen"):
        fold_messages(package_for(1, str(package)), [])


def test_ids_are_remapped_one_to_one() -> None:
    ids = IdMap()
    recorded = {"method": "session/update", "params": {"sessionId": "a", "update": {"toolCallId": "t1"}}}
    live = {"method": "session/update", "params": {"sessionId": "x", "update": {"toolCallId": "y1"}}}
    assert compare(recorded, live, ids) == []
    assert ids.to_live("a") == "x" and ids.to_recorded("y1") == "t1"
    # a recorded id already bound cannot stand for another live one, nor a live one for another recorded
    other = {"method": "session/update", "params": {"sessionId": "z", "update": {"toolCallId": "y1"}}}
    paths = [d.path for d in compare(recorded, other, ids)]
    assert paths == ["$.params.sessionId"]
    again = {"method": "session/update", "params": {"sessionId": "x", "update": {"toolCallId": "y1"}}}
    assert compare(
        {"method": "session/update", "params": {"sessionId": "b", "update": {"toolCallId": "t1"}}}, again, ids
    )


def test_volatile_fields_are_not_compared() -> None:
    recorded = {"params": {"cwd": "/a", "clientInfo": {"name": "one"}, "_meta": {"k": 1}, "mcpServers": []}}
    live = {"params": {"cwd": "/b", "clientInfo": {"name": "two"}, "mcpServers": []}}
    assert compare(recorded, live, IdMap()) == []
    assert [d.path for d in compare(recorded, {"params": {"cwd": "/b", "mcpServers": [1]}}, IdMap())] == [
        "$.params.mcpServers[0]"
    ]


def test_serving_on_stdio_reports_what_the_client_never_sent(tmp_path: Path) -> None:
    """`acpgen replay T --as agent` with no client command serves stdin and
    stdout: a client that stops after initialize leaves the rest missing."""
    transcript = TRANSCRIPTS / "acpgen-echo-v1.jsonl"
    first = json.loads(transcript.read_text().splitlines()[1])["message"]
    run = subprocess.run(
        [str(Path(PYTHON).with_name("acpgen")), "replay", str(transcript), "--as", "agent"],
        input=json.dumps(first) + "\n",
        capture_output=True,
        text=True,
        timeout=HANG,
        cwd=ROOT,
    )
    assert run.returncode == 1, run.stderr
    answer = json.loads(run.stdout.splitlines()[0])
    assert answer["id"] == first["id"] and answer["result"]["protocolVersion"] == 1
    assert "the client never sent the recorded session/new" in run.stderr
    assert "the client never sent the recorded session/prompt" in run.stderr
