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
    """(direction, method or "result") per message, streamed chunks merged."""
    out = []
    for r in records:
        m = r["message"]
        step = (r["direction"], m.get("method", "error" if "error" in m else "result"))
        if m.get("method") == "session/update":
            step += (m["params"]["update"]["sessionUpdate"],)
        if not out or out[-1] != step or step[-1] != "agent_message_chunk":
            out.append(step)
    return out


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
