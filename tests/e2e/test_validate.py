"""acpgen validate: the recorded SDK transcripts pass, and hand-broken copies
of them give one finding of each kind, at the right line and pointer."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest
from acpgen.validate import KINDS, validate_lines

from ..conftest import ROOT, load_generated

TRANSCRIPTS = ROOT / "tests/fixtures/transcripts"
v1 = load_generated("acp_v1")
v2 = load_generated("acp_v2")


@pytest.fixture(params=["orjson", "stdlib"], autouse=True)
def backend(request, monkeypatch):
    """Every case with orjson (when it is installed) and with json
    (``ACPGEN_JSON=stdlib``): the findings are the same."""
    if request.param == "orjson":
        pytest.importorskip("orjson")
    monkeypatch.setenv("ACPGEN_JSON", request.param)
    return request.param


def read(name):
    return [json.loads(line) for line in (TRANSCRIPTS / name).read_text().splitlines() if line.strip()]


def lines(records):
    return [json.dumps(r) for r in records]


def check(records, package=v1, strict=False):
    return list(validate_lines(lines(records), package, strict=strict))


def first(records, predicate):
    return next(i for i, r in enumerate(records) if predicate(r["message"]))


def is_update(m):
    return m.get("method") == "session/update"


@pytest.mark.parametrize(
    "name, package", [("python-sdk-v1.jsonl", v1), ("typescript-sdk-v1.jsonl", v1), ("typescript-sdk-v2.jsonl", v2)]
)
def test_the_recorded_sdk_sessions_are_clean(name, package):
    assert check(read(name), package, strict=True) == []


def test_an_invalid_message_is_reported_with_its_pointer():
    records = read("python-sdk-v1.jsonl")
    at = first(records, is_update)
    records[at]["message"]["params"]["update"]["content"] = {"type": "text"}
    [finding] = check(records)
    # A missing member is reported at the object that lacks it.
    assert (finding.line, finding.kind, finding.pointer) == (at + 1, "invalid", "/params/update/content")
    assert "text" in finding.message


def test_a_silent_lenient_drop_is_reported():
    records = read("python-sdk-v1.jsonl")
    at = first(records, is_update)
    session = records[at]["message"]["params"]["sessionId"]
    good = {"content": "read", "priority": "high", "status": "pending"}
    plan = {"sessionUpdate": "plan", "entries": [good, {"content": "bad", "priority": "urgent", "status": "pending"}]}
    records.insert(
        at,
        {
            "direction": "agent_to_client",
            "message": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": plan}},
        },
    )
    [finding] = check(records)
    assert finding.kind == "repaired" and not finding.error
    assert finding.pointer.startswith("/params/update/entries/1")
    assert "/params/update/entries" in finding.message
    [strict] = check(records, strict=True)
    assert strict.error


def test_a_response_to_an_unknown_id():
    records = read("python-sdk-v1.jsonl")
    at = first(records, lambda m: m.get("id") == 1 and "result" in m)
    records[at]["message"]["id"] = 99
    kinds = [(f.kind, f.line) for f in check(records)]
    assert ("unknown-response", at + 1) in kinds
    assert any(kind == "unanswered" for kind, _ in kinds)


def test_a_duplicate_id_in_flight():
    records = read("python-sdk-v1.jsonl")
    at = first(records, lambda m: m.get("method") == "session/new")
    duplicate = copy.deepcopy(records[at])
    records.insert(at + 1, duplicate)
    findings = check(records)
    assert [(f.kind, f.line, f.pointer) for f in findings if f.kind == "duplicate-id"] == [
        ("duplicate-id", at + 2, "/id")
    ]


def test_an_update_for_an_unknown_session():
    records = read("python-sdk-v1.jsonl")
    at = first(records, is_update)
    records[at]["message"]["params"]["sessionId"] = "nobody"
    [finding] = check(records)
    assert (finding.kind, finding.line, finding.pointer) == ("unknown-session", at + 1, "/params/sessionId")


def test_a_v1_tool_call_update_never_started():
    records = read("python-sdk-v1.jsonl")
    at = first(records, is_update)
    session = records[at]["message"]["params"]["sessionId"]

    def update(u):
        return {
            "direction": "agent_to_client",
            "message": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": u}},
        }

    records[at:at] = [
        update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read"}),
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
        update({"sessionUpdate": "tool_call_update", "toolCallId": "t2", "status": "completed"}),
    ]
    [finding] = check(records)
    assert (finding.kind, finding.line) == ("not-started", at + 3)
    assert "'t2'" in finding.message


def test_v2_updates_create_tool_calls():
    records = read("typescript-sdk-v2.jsonl")
    at = first(records, is_update)
    session = records[at]["message"]["params"]["sessionId"]
    u = {"sessionUpdate": "tool_call_update", "toolCallId": "t9", "status": "completed"}
    records.insert(
        at,
        {
            "direction": "agent_to_client",
            "message": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": u}},
        },
    )
    assert check(records, v2) == []


def test_a_protocol_version_mismatch_at_initialize():
    records = read("python-sdk-v1.jsonl")
    at = first(records, lambda m: m.get("id") == 0 and "result" in m)
    records[at]["message"]["result"]["protocolVersion"] = 2
    [finding] = check(records)
    assert (finding.kind, finding.line, finding.pointer) == ("protocol-version", at + 1, "/result/protocolVersion")


def test_a_line_that_is_not_json():
    findings = list(validate_lines(["{", ""], v1))
    assert [(f.kind, f.line) for f in findings] == [("bad-line", 1)]


def test_bare_messages_pair_without_directions():
    records = [r["message"] for r in read("python-sdk-v1.jsonl")]
    assert list(validate_lines([json.dumps(m) for m in records], v1)) == []


START = {"start": "2026-12-01T18:35:02.311619Z", "recorder": "acpgen tap"}
END = {"end": "2026-12-01T18:35:04.000120Z", "status": 0}


def test_a_recording_with_its_end_record_is_whole_and_one_without_is_cut_short():
    records = read("python-sdk-v1.jsonl")
    assert check([START, *records, END], strict=True) == []
    prompt = first(records, lambda m: m.get("method") == "session/prompt")
    answer = first(records, lambda m: m.get("id") == records[prompt]["message"]["id"] and "result" in m)
    # cut in the turn: after the prompt and before its answer
    cut = [START, *records[:answer]]
    found = [(f.kind, f.line, f.error, f.message) for f in check(cut)]
    assert found[0] == (
        "cut-short",
        len(cut),
        True,
        f"the transcript ends mid-turn (the session/prompt of line {prompt + 2} has no response) with no end record "
        f"after line {len(cut)}: the recording (started at line 1) was cut short, and what came after is missing",
    )
    assert found[1][:2] == ("unanswered", prompt + 2)
    # cut between turns, and inside its last line
    cut = [*lines([START, *records[: answer + 1]]), json.dumps(records[answer + 1])[:30]]
    found = [(f.kind, f.line, f.message) for f in validate_lines(cut, v1)]
    assert [kind for kind, _, _ in found] == ["bad-line", "cut-short"]
    assert found[1][2].startswith(f"the transcript ends with no end record after line {len(cut)}: the recording")
    # a transcript no recorder started (no start record) has no end to miss
    assert check(records[:answer]) != [] and "cut-short" not in {f.kind for f in check(records[:answer])}


def test_every_kind_is_tested():
    tested = {
        "invalid",
        "repaired",
        "unknown-response",
        "duplicate-id",
        "unknown-session",
        "not-started",
        "protocol-version",
        "bad-line",
        "unanswered",
        "cut-short",
    }
    assert tested == set(KINDS)


def test_the_command_exits_1_on_findings_and_prints_json(tmp_path):
    records = read("python-sdk-v1.jsonl")
    at = first(records, is_update)
    records[at]["message"]["params"]["sessionId"] = "nobody"
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines(records)) + "\n")
    run = [str(ROOT / ".venv/bin/acpgen")]
    out = subprocess.run(
        [*run, "validate", str(broken), "--package", str(ROOT / "generated/acp_v1"), "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout.splitlines()[0])["kind"] == "unknown-session"
    ok = subprocess.run(
        [*run, "validate", str(TRANSCRIPTS / "python-sdk-v1.jsonl"), "--package", "acp_v1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
