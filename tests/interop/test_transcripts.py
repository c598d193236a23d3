"""The recorded session transcripts (tests/fixtures/transcripts/) are whole
sessions, and the recorder still reproduces them."""

from __future__ import annotations

import json

import pytest

from . import record_transcripts
from .harness import ROOT

TRANSCRIPTS = ROOT / "tests/fixtures/transcripts"
SENDER = {"session/update": "agent_to_client"}  # every other method here: client_to_agent


def load(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def shape(records):
    """(direction, method or "result") per message, streamed chunks merged.
    A ``session/cancel`` counts where the chunks streaming around it end:
    how many chunks the agent sent before it read the cancel is timing
    alone (updates may follow a cancel until the turn's answer)."""
    out = []
    cancel = None
    for r in records:
        m = r["message"]
        step = (r["direction"], m.get("method", "error" if "error" in m else "result"))
        if m.get("method") == "session/update":
            step += (m["params"]["update"]["sessionUpdate"],)
        if step == ("client_to_agent", "session/cancel"):
            cancel = step
            continue
        if cancel is not None and step[-1] != "agent_message_chunk":
            out.append(cancel)
            cancel = None
        if not out or out[-1] != step or step[-1] != "agent_message_chunk":
            out.append(step)
    if cancel is not None:
        out.append(cancel)
    return out


def test_the_shape_of_a_cancelled_turn_does_not_depend_on_where_the_cancel_landed():
    def chunk():
        update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "x"}}
        return {"direction": "agent_to_client", "message": {"method": "session/update", "params": {"update": update}}}

    prompt = {"direction": "client_to_agent", "message": {"id": 2, "method": "session/prompt"}}
    cancel = {"direction": "client_to_agent", "message": {"method": "session/cancel"}}
    answer = {"direction": "agent_to_client", "message": {"id": 2, "result": {"stopReason": "cancelled"}}}
    early = shape([prompt, chunk(), cancel, answer])
    assert shape([prompt, chunk(), cancel, chunk(), chunk(), answer]) == early
    assert shape([prompt, chunk(), chunk(), cancel, answer]) == early
    assert early == [
        ("client_to_agent", "session/prompt"),
        ("agent_to_client", "session/update", "agent_message_chunk"),
        ("client_to_agent", "session/cancel"),
        ("agent_to_client", "result"),
    ]
    assert shape([prompt, cancel, answer]) != early  # no chunk at all is another session


@pytest.mark.parametrize("name", record_transcripts.TRANSCRIPTS)
def test_transcript_is_a_whole_session(name):
    records = load(TRANSCRIPTS / name)
    requests = {}
    for r in records:
        m = r["message"]
        assert r["direction"] in ("client_to_agent", "agent_to_client"), r
        assert m["jsonrpc"] == "2.0", m
        if "method" in m:
            assert r["direction"] == SENDER.get(m["method"], "client_to_agent"), r
            if "id" in m:
                requests[m["id"]] = (r["direction"], m["method"])
        else:
            direction, _method = requests.pop(m["id"])
            assert r["direction"] != direction, f"response {m['id']} went the way of its request"
            assert ("result" in m) != ("error" in m), m
    assert not requests, f"requests never answered: {requests}"
    methods = [r["message"].get("method") for r in records if "method" in r["message"]]
    assert methods[:2] == ["initialize", "session/new"]
    assert methods.count("session/prompt") == 2 and methods.count("session/cancel") == 1
    assert methods[-1] == "_interop/unknown"
    assert records[-1]["message"]["error"]["code"] == -32601


def test_the_recorder_reproduces_the_python_sdk_transcript(tmp_path):
    name = "python-sdk-v1.jsonl"
    fresh = record_transcripts.record(name, tmp_path)
    assert shape(load(fresh)) == shape(load(TRANSCRIPTS / name))
