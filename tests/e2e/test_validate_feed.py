"""acpgen.validate.Validator: the engine of validate_file fed one line at a
time (what acpgen tap checks live with), and the records tap writes for
lines that are not JSON."""

from __future__ import annotations

import json
import sys
import types

import pytest
from acpgen.validate import Validator, validate_file, validate_lines

from ..conftest import ROOT, load_generated

TRANSCRIPTS = ROOT / "tests/fixtures/transcripts"
v1 = load_generated("acp_v1")
v2 = load_generated("acp_v2")


@pytest.fixture(params=["orjson", "stdlib"], autouse=True)
def backend(request, monkeypatch):
    if request.param == "orjson":
        pytest.importorskip("orjson")
    monkeypatch.setenv("ACPGEN_JSON", request.param)
    return request.param


def fed(lines, package=v1, **options):
    validator = Validator(package, **options)
    found = []
    for line in lines:
        found += validator.feed(line)
    return found + validator.close()


def record(direction, message):
    return json.dumps({"direction": direction, "timestamp": "2026-01-01T00:00:00.000000Z", "message": message})


C2A, A2C = "client_to_agent", "agent_to_client"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
INIT_OK = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}
NEW = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}
NEW_OK = {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}


def update(session):
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": chunk}}


HOSTILE = [
    record(C2A, INIT),
    record(A2C, INIT_OK),
    "not json at all",
    b"\xff\xfe not utf-8",
    "",
    record(C2A, NEW),
    record(A2C, {"jsonrpc": "2.0", "id": 99, "result": {}}),
    record(A2C, NEW_OK),
    record(A2C, update("s1")),
    record(A2C, update("ghost")),
    record(A2C, {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {}}}),
    "[" * 5000,
    record(C2A, {"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"sessionId": "s1"}}),
    record(C2A, {"jsonrpc": "2.0", "id": 8, "method": "session/cancel", "params": {}}),
]


@pytest.mark.parametrize(
    "name, package", [("python-sdk-v1.jsonl", v1), ("typescript-sdk-v1.jsonl", v1), ("typescript-sdk-v2.jsonl", v2)]
)
def test_fed_line_by_line_it_finds_what_validate_file_finds(name, package, tmp_path):
    path = TRANSCRIPTS / name
    broken = tmp_path / name
    lines = path.read_bytes().splitlines()
    # a few hand-broken lines among the real ones, so that there is something to find
    broken.write_bytes(b"\n".join([*lines[:3], b"garbage", *lines[3:], lines[2]]) + b"\n")
    for transcript in (path, broken):
        expected = list(validate_file(transcript, package, strict=True))
        assert fed(transcript.read_bytes().splitlines(keepends=True), package, strict=True) == expected
    assert expected  # the broken copy has findings


def test_fed_hostile_lines_give_the_findings_of_validate_lines():
    expected = list(validate_lines(HOSTILE, v1))
    assert fed(HOSTILE) == expected
    assert {f.kind for f in expected} >= {"bad-line", "unknown-response", "unknown-session", "invalid", "unanswered"}


def test_a_line_over_the_limit_is_a_finding_when_fed():
    found = fed([record(C2A, INIT), "x" * 300, record(A2C, INIT_OK)], max_line_bytes=250)
    assert [(f.line, f.kind) for f in found] == [(2, "bad-line")]
    assert "line too long" in found[0].message


def test_findings_carry_the_direction_given_and_unanswered_that_of_its_request():
    validator = Validator(v1)
    assert validator.feed(record(C2A, INIT), C2A) == []
    (found,) = validator.feed(record(A2C, {"jsonrpc": "2.0", "id": 5, "result": {}}), A2C)
    assert (found.line, found.kind, found.pointer, found.direction) == (2, "unknown-response", "/id", A2C)
    assert validator.lines == 2
    (unanswered,) = validator.close()
    assert (unanswered.line, unanswered.kind, unanswered.direction) == (1, "unanswered", C2A)
    assert validator.close() == []
    with pytest.raises(ValueError, match="closed"):
        validator.feed(record(C2A, INIT))


def test_an_exception_of_the_engine_is_raised_once_and_checking_goes_on_with_its_state():
    """A package whose decoder fails on one message (not a ValidationError):
    feed raises for that line; the request in flight before it, the session
    opened before it, are still known after it."""
    broken = types.ModuleType("broken_acp")
    broken.__dict__.update({k: v for k, v in vars(v1).items() if not k.startswith("__")})
    del broken.codec  # no fast path: every message is decoded by the package

    def decode_message(data, strict=False):
        if isinstance(data, dict) and data.get("method") == "boom":
            raise RuntimeError("boom")
        return v1.decode_message(data, strict=strict)

    broken.decode_message = decode_message
    sys.modules["broken_acp"] = broken
    try:
        validator = Validator(broken)
        for line in (record(C2A, INIT), record(A2C, INIT_OK), record(C2A, NEW), record(A2C, NEW_OK)):
            assert validator.feed(line) == []
        assert validator.feed(record(C2A, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {}})) != []
        with pytest.raises(RuntimeError, match="boom"):
            validator.feed(record(C2A, {"jsonrpc": "2.0", "method": "boom"}))
        assert validator.feed(record(A2C, update("s1"))) == []  # the session is still open
        found = validator.feed(record(A2C, update("ghost")))
        assert [(f.line, f.kind) for f in found] == [(8, "unknown-session")]  # the failed line was counted
        assert validator.feed(record(A2C, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}})) == []
        assert validator.close() == []  # the prompt in flight before the failure was answered
    finally:
        del sys.modules["broken_acp"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("garbage", "not JSON"),
        ("gar\udcffbage", "not UTF-8: byte 0xff at offset 3"),
        ("[" * 5000, "nested too deeply"),
        ("half\ud800", "not UTF-8"),
    ],
)
def test_a_record_of_a_line_that_is_not_json_is_that_line_s_finding(tmp_path, text, message):
    line = json.dumps({"direction": A2C, "timestamp": "t", "line": text})
    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n")
    found = list(validate_file(path, v1))
    assert [(f.line, f.kind) for f in found] == [(1, "bad-line")]
    assert message in found[0].message


def test_a_record_of_a_line_that_is_json_after_all_is_checked_as_a_message():
    lines = [record(C2A, INIT), json.dumps({"direction": A2C, "line": json.dumps({"jsonrpc": "2.0", "id": 9})})]
    assert [(f.line, f.kind) for f in validate_lines(lines, v1)][:1] == [(2, "invalid")]
    blank = json.dumps({"direction": A2C, "line": "  \r"})
    assert list(validate_lines([blank], v1)) == []


def test_a_record_of_an_omitted_line_and_malformed_records_are_bad_lines():
    lines = [
        json.dumps({"direction": A2C, "omitted": 12345}),
        json.dumps({"direction": "sideways", "line": "x"}),
        json.dumps({"direction": A2C, "neither": 1}),
    ]
    found = list(validate_lines(lines, v1))
    assert [(f.line, f.kind) for f in found] == [(1, "bad-line"), (2, "bad-line"), (3, "bad-line")]
    assert "12345 bytes" in found[0].message
    assert "unknown direction 'sideways'" in found[1].message
