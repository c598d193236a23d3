"""What each finding of ``acpgen validate`` says besides its kind: the
direction its line was sent in and the method, in the text and in JSON; the
summary object ``--format json`` always ends with; a file that is a JSON
array, not JSON Lines; and that a null is named once ("found null")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acpgen.cli import main
from acpgen.validate import Summary, validate_file
from click.testing import CliRunner

from ..conftest import ROOT, load_generated

TRANSCRIPTS = ROOT / "tests/fixtures/transcripts"
v1 = load_generated("acp_v1")
C2A, A2C = "client_to_agent", "agent_to_client"


def record(direction: str, message: dict[str, Any]) -> str:
    return json.dumps({"direction": direction, "timestamp": "2026-01-01T00:00:00.000000Z", "message": message})


def rpc(**members: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", **members}


HANDSHAKE = [
    record(C2A, rpc(id=0, method="initialize", params={"protocolVersion": 1})),
    record(A2C, rpc(id=0, result={"protocolVersion": 1})),
    record(C2A, rpc(id=1, method="session/new", params={"cwd": "/", "mcpServers": []})),
    record(A2C, rpc(id=1, result={"sessionId": "s1"})),
]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_every_finding_names_its_direction_and_method(tmp_path):
    lines = [
        *HANDSHAKE,
        # 5: an invalid prompt (its prompt is null), sent by the client
        record(C2A, rpc(id=2, method="session/prompt", params={"sessionId": "s1", "prompt": None})),
        # 6: the agent asks for a file of a session never opened (the fast path's finding)
        record(A2C, rpc(id=7, method="fs/read_text_file", params={"sessionId": "ghost", "path": "/a"})),
        # 7: the client's answer to it breaks the result's schema
        record(C2A, rpc(id=7, result={"content": 5})),
        # 8: a line tap recorded as not JSON
        json.dumps({"direction": A2C, "timestamp": "2026-01-01T00:00:00.000000Z", "line": "garbage"}),
        # 9: a bare message: no direction to tell
        json.dumps(rpc(id=3, result={})),
        # 10: a request the agent never answers
        record(C2A, rpc(id=4, method="session/set_mode", params={})),
    ]
    found = list(validate_file(write(tmp_path / "t.jsonl", lines), v1))
    said = [(f.line, f.kind, f.direction, f.method) for f in found]
    assert said == [
        (5, "invalid", C2A, "session/prompt"),
        (6, "unknown-session", A2C, "fs/read_text_file"),
        (7, "invalid", C2A, "fs/read_text_file"),
        (8, "bad-line", A2C, None),
        (9, "unknown-response", None, None),
        (10, "invalid", C2A, "session/set_mode"),
        (5, "unanswered", C2A, "session/prompt"),
        (10, "unanswered", C2A, "session/set_mode"),
    ], said
    assert found[0].to_json() == {
        "line": 5,
        "direction": C2A,
        "method": "session/prompt",
        "kind": "invalid",
        "message": "expected an array, found null",
        "pointer": "/params/prompt",
        "error": True,
    }
    assert str(found[1]).startswith("line 6 (agent_to_client): error: unknown-session at /params/sessionId: ")
    assert str(found[4]).startswith("line 9: error: unknown-response at /id: ")


def test_the_cli_says_the_direction_in_text_and_json(tmp_path):
    bad = record(A2C, rpc(id=0, result={"protocolVersion": "one"}))
    transcript = write(tmp_path / "t.jsonl", [HANDSHAKE[0], bad])
    result = run("validate", str(transcript), "--package", "acp_v1")
    assert result.exit_code == 1
    assert result.stdout.startswith("line 2 (agent_to_client): error: invalid at /result/protocolVersion: ")
    result = run("validate", str(transcript), "--package", "acp_v1", "--format", "json")
    first = json.loads(result.stdout.splitlines()[0])
    assert (first["line"], first["direction"], first["method"]) == (2, A2C, "initialize")


def test_json_output_of_a_clean_file_is_one_summary_object():
    transcript = TRANSCRIPTS / "python-sdk-v1.jsonl"
    result = run("validate", str(transcript), "--package", "acp_v1", "--format", "json")
    assert result.exit_code == 0, result.output
    [only] = result.stdout.splitlines()
    lines = transcript.read_bytes().count(b"\n")
    assert json.loads(only) == {
        "summary": {"lines": lines, "messages": lines, "findings": {}, "errors": 0, "warnings": 0, "clean": True}
    }


def test_json_output_ends_with_a_summary_counting_findings_by_kind(tmp_path):
    lines = [
        json.dumps({"start": "2026-01-01T00:00:00.000000Z", "recorder": "acpgen tap"}),
        *HANDSHAKE,
        "",
        "not json",
        record(A2C, rpc(id=99, result={})),
        record(A2C, rpc(id=98, result={})),
        record(C2A, rpc(id=5, method="session/set_mode", params={})),
        json.dumps({"end": "2026-01-01T00:00:01.000000Z", "status": 0}),
    ]
    result = run("validate", str(write(tmp_path / "t.jsonl", lines)), "--package", "acp_v1", "--format", "json")
    assert result.exit_code == 1
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [f["kind"] for f in out[:-1]] == [
        "bad-line",
        "unknown-response",
        "unknown-response",
        "invalid",
        "unanswered",
    ]
    assert out[-1] == {
        "summary": {
            "lines": 11,
            "messages": 7,  # not the blank line, the line that is not JSON, the start and end records
            "findings": {"bad-line": 1, "invalid": 1, "unanswered": 1, "unknown-response": 2},
            "errors": 4,
            "warnings": 1,
            "clean": False,
        }
    }


MESSAGES = [
    rpc(id=0, method="initialize", params={"protocolVersion": 1}),
    rpc(id=0, result={"protocolVersion": 1}),
    rpc(id=1, method="session/new", params={"cwd": "/", "mcpServers": []}),
]


def test_a_json_array_file_is_one_finding_saying_json_lines_is_expected(tmp_path):
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(MESSAGES, indent=2) + "\n")
    compact = tmp_path / "compact.json"  # one message a line, but inside an array
    compact.write_text("\n[" + ",\n".join(json.dumps(m) for m in MESSAGES) + "]\n")
    for path, first in ((pretty, 1), (compact, 2)):
        summary = Summary()
        found = list(validate_file(path, v1, summary=summary))
        assert [(f.line, f.kind, f.message) for f in found] == [
            (first, "bad-line", "expected JSON Lines (one message per line); this file is a JSON array")
        ]
        assert summary.lines == path.read_text().count("\n") and summary.messages == 0
        assert summary.findings == {"bad-line": 1}
    result = run("validate", str(pretty), "--package", "acp_v1", "--format", "json")
    assert result.exit_code == 1
    finding, summary_line = result.stdout.splitlines()
    assert json.loads(finding)["message"].startswith("expected JSON Lines")
    assert json.loads(summary_line)["summary"]["clean"] is False


def test_a_json_lines_file_whose_first_line_is_an_array_is_checked_line_by_line(tmp_path):
    # An array that is a whole line is a JSON value: a message of the wrong
    # shape, not a file in the wrong format; the lines after it are checked.
    lines = [json.dumps(MESSAGES[:1]), json.dumps(MESSAGES[0]), json.dumps(MESSAGES[1])]
    found = list(validate_file(write(tmp_path / "t.jsonl", lines), v1))
    assert [(f.line, f.kind) for f in found] == [(1, "invalid")]
    assert "array" in found[0].message
