"""The report's fold, line diff and page writing, without a browser
(tests/e2e/test_report_browser.py looks at the page in one)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from acpgen.errors import AcpgenError
from acpgen.report import fold_file, latency, render_report, report_data
from acpgen.report.diff import MAX_MATCHED, line_diff
from acpgen.report.fold import Fold, _seconds
from acpgen.report.page import script_json, write_atomically
from hypothesis import given, settings
from hypothesis import strategies as st

from ..conftest import examples, load_generated
from ..report.transcripts import NEW, OLD, SESSION_A, SESSION_B, XSS, Writer, demo, timed

TRANSCRIPTS = Path(__file__).resolve().parent.parent / "fixtures/transcripts"


def fold(lines: list[str]) -> Fold:
    result = Fold()
    for n, line in enumerate(lines, 1):
        result.add(n, json.loads(line))
    return result


def rows(result: Fold, kind: str) -> list[dict[str, Any]]:
    return [row.to_json() for row in result.rows if row.kind == kind]


def texts(row: dict[str, Any]) -> list[str]:
    return [block[1] for block in row["content"]]


# -- the line diff -------------------------------------------------------------


def test_a_diff_has_hunks_with_context_and_both_line_numbers():
    old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
    new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"
    assert line_diff(old, new) == [
        ["@", 0, 0, "@@ -1,5 +1,5 @@"],
        [" ", 1, 1, "a"],
        ["-", 2, 0, "b"],
        ["+", 0, 2, "B"],
        [" ", 3, 3, "c"],
        [" ", 4, 4, "d"],
        [" ", 5, 5, "e"],
        ["@", 0, 0, "@@ -8,3 +8,4 @@"],
        [" ", 8, 8, "h"],
        [" ", 9, 9, "i"],
        [" ", 10, 10, "j"],
        ["+", 0, 11, "k"],
    ]


def test_a_new_file_is_all_added_and_equal_texts_have_no_lines():
    assert line_diff(None, "x\ny") == [["@", 0, 0, "@@ -1,0 +1,2 @@"], ["+", 0, 1, "x"], ["+", 0, 2, "y"]]
    assert line_diff("same\n", "same\n") == []


def test_a_huge_change_is_shown_removed_then_added_without_matching():
    old = "".join(f"old {i}\n" for i in range(MAX_MATCHED))
    new = "".join(f"new {i}\n" for i in range(MAX_MATCHED))
    lines = line_diff("keep\n" + old, "keep\n" + new)
    ops = [line[0] for line in lines]
    assert ops == ["@", " "] + ["-"] * MAX_MATCHED + ["+"] * MAX_MATCHED
    assert lines[2] == ["-", 2, 0, "old 0"] and lines[-1] == ["+", 0, MAX_MATCHED + 1, f"new {MAX_MATCHED - 1}"]


# -- the fold ---------------------------------------------------------------------


def test_the_demo_folds_into_what_an_editor_shows(tmp_path):
    result, raw, directions = fold_file(demo(tmp_path / "demo.jsonl"))
    assert [s.id for s in result.sessions] == [SESSION_A, SESSION_B]
    assert [s.cwd for s in result.sessions] == [f"/work/{SESSION_A}", f"/work/{SESSION_B}"]
    (thought,) = rows(result, "thought")
    assert texts(thought) == ["Let me look at greet first."] and thought["l"] == [8, 9]
    agent = rows(result, "agent")
    assert [texts(a) for a in agent] == [["Done: greet now has type hints."], ["Echo: " + XSS]]
    tool = rows(result, "tool")[0]
    assert (tool["title"], tool["kind"], tool["status"]) == ("Edit src/app.py", "edit", "completed")
    assert tool["statuses"] == [[11, "pending"], [14, "in_progress"], [15, "completed"]]
    assert tool["locations"] == ["/work/src/app.py:1"]
    (diff,) = tool["content"]
    assert diff["t"] == "diff" and diff["lines"] == line_diff(OLD, NEW)
    (permission,) = rows(result, "permission")
    assert permission["answer"] == "allow" and permission["answerLine"] == 13 and permission["l"] == [12, 13]
    (plan,) = rows(result, "plan")
    assert [entry[0] for entry in plan["entries"]] == ["Read src/app.py", "Annotate greet", "Run the tests"]
    assert [row["stop"] for row in rows(result, "turn")] == ["end_turn", "end_turn", "end_turn"]
    (usage,) = rows(result, "usage")
    assert (usage["used"], usage["size"]) == (5230, 200000)
    unstarted = rows(result, "tool")[1]
    assert unstarted["id"] == "call_9" and unstarted["started"] is False
    assert len(raw) == len(directions) == 32 and directions.startswith("cacaca")
    assert sorted(n for row in result.rows for n in row.lines) == list(range(1, 33))
    assert result.terminals == {
        "term_1": {"command": "pytest -q", "output": "...\n3 passed in 0.02s\n", "exit": "exit code 0"}
    }
    terminal = rows(result, "tool")[2]
    assert terminal["content"] == [{"t": "terminal", "id": "term_1"}] and terminal["status"] == "completed"


@pytest.mark.parametrize("name", ["python-sdk-v1.jsonl", "typescript-sdk-v1.jsonl", "typescript-sdk-v2.jsonl"])
def test_every_line_of_a_recorded_session_is_in_exactly_one_row(name):
    result, raw, _ = fold_file(TRANSCRIPTS / name)
    lines = [n for row in result.rows for n in row.lines]
    assert sorted(lines) == list(range(1, len(raw) + 1))
    assert [row.data["stop"] for row in result.rows if row.kind == "turn"] == ["end_turn", "cancelled"]
    (error,) = [row for row in result.rows if "error" in row.data and row.kind == "rpc"]
    assert error.data["method"] == "_interop/unknown" and error.data["error"].startswith("-32601 ")


def test_v2_the_prompt_and_its_echo_are_one_user_row():
    result, _, _ = fold_file(TRANSCRIPTS / "typescript-sdk-v2.jsonl")
    users = [row for row in result.rows if row.kind == "user"]
    assert texts(users[0].to_json())[0] == "Hello agent, please echo this back"
    assert users[0].lines == [5, 6, 7]  # the prompt, the agent's user_message, the response


def test_chunks_join_per_session_even_interleaved():
    w = Writer()
    for session in (SESSION_A, SESSION_B):
        w.client(id=session, method="session/new", params={"cwd": "/", "mcpServers": []})
        w.agent(id=session, result={"sessionId": session})
    for word in ("one ", "two ", "three"):
        for session in (SESSION_A, SESSION_B):
            w.update(session, sessionUpdate="agent_message_chunk", content={"type": "text", "text": session[5] + word})
    w.update(SESSION_A, sessionUpdate="tool_call", toolCallId="t", title="Run")
    w.update(SESSION_A, sessionUpdate="agent_message_chunk", content={"type": "text", "text": "after"})
    result = fold(w.lines)
    agent = [(row.session, texts(row.to_json())) for row in result.rows if row.kind == "agent"]
    assert agent == [(0, ["aone atwo athree"]), (1, ["bone btwo bthree"]), (0, ["after"])]


def test_a_message_of_other_blocks_keeps_them_apart():
    w = Writer()
    w.update(SESSION_A, sessionUpdate="user_message_chunk", content={"type": "text", "text": "see "})
    w.update(
        SESSION_A,
        sessionUpdate="user_message_chunk",
        content={"type": "image", "mimeType": "image/png", "data": "AAAA"},
    )
    w.update(SESSION_A, sessionUpdate="user_message_chunk", content={"type": "text", "text": "this"})
    (user,) = rows(fold(w.lines), "user")
    assert user["content"] == [["text", "see "], ["image", "image (image/png, 3 bytes)"], ["text", "this"]]


def test_a_permission_cancelled_or_unanswered():
    w = Writer()
    options = [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]
    params = {"sessionId": SESSION_A, "toolCall": {"toolCallId": "t"}, "options": options}
    w.agent(id=1, method="session/request_permission", params=params)
    w.agent(id=2, method="session/request_permission", params=params)
    w.client(id=1, result={"outcome": {"outcome": "cancelled"}})
    first, second = rows(fold(w.lines), "permission")
    assert first["answer"] == "cancelled" and "answer" not in second


def test_lines_that_are_not_messages_are_bad_rows(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"jsonrpc": "2.0"\n\xff\xfe\n[1, 2]\n\n' + b'{"x": "' + b"y" * 100 + b'"}\n')
    result, raw, _ = fold_file(path, max_line_bytes=50)
    why = [(row.line, row.data["why"].split(":")[0]) for row in result.rows]
    assert why == [(1, "not JSON"), (2, "not UTF-8"), (3, "not a JSON-RPC message (an object)"), (5, "line too long")]
    assert raw[1] == "\ufffd\ufffd" and raw[3] == "" and raw[4] == ""


def test_a_value_json_cannot_hold_is_kept_as_text(tmp_path):
    path = tmp_path / "t.jsonl"
    update = '{"sessionUpdate": "usage_update", "used": NaN, "size": Infinity}'
    path.write_text(
        f'{{"jsonrpc": "2.0", "method": "session/update", "params": {{"sessionId": "s", "update": {update}}}}}\n'
    )
    data = report_data(path, None)
    (usage,) = [row for row in data["rows"] if row["k"] == "usage"]
    assert (usage["used"], usage["size"]) == ("nan", "inf")
    script_json(data)  # no NaN reaches the page


def test_a_recording_s_times_give_round_trips_turns_tool_calls_and_permission_waits(tmp_path):
    data = report_data(timed(tmp_path / "t.jsonl"), None)
    assert data["timed"] is True
    by_line = {row["n"]: row for row in data["rows"]}
    assert (by_line[2]["ms"], by_line[4]["ms"]) == (10.0, 30.0)  # initialize, session/new
    assert by_line[6]["t"] == 1000.0  # the prompt, 1 s after the start record
    assert (by_line[14]["ms"], by_line[14]["first"]) == (3500.0, 250.0)
    assert (by_line[17]["ms"], by_line[17]["first"]) == (500.0, 100.0)
    tool, permission = by_line[8], by_line[9]
    assert tool["ms"] == 3000.0 and permission["ms"] == 2000.0
    assert permission["toolRow"] == data["rows"].index(tool)
    assert tool["history"] == [
        {"n": 8, "t": 1300.0, "title": "Edit a.py", "kind": "edit", "status": "pending"},
        {"n": 9, "t": 1400.0, "permission": data["rows"].index(permission)},
        {"n": 11, "t": 3500.0, "status": "in_progress"},
        {"n": 12, "t": 4300.0, "status": "completed", "set": ["content"]},
    ]
    assert data["latency"] == [
        ["session/prompt", 2, 500.0, 3500.0, 3500.0],
        ["session/request_permission", 1, 2000.0, 2000.0, 2000.0],
        ["session/new", 1, 30.0, 30.0, 30.0],
        ["initialize", 1, 10.0, 10.0, 10.0],
    ]


def test_the_sequence_pairs_each_response_with_the_request_of_its_direction(tmp_path):
    w = Writer()
    w.client(id=1, method="session/prompt", params={"sessionId": SESSION_A, "prompt": []})
    w.agent(id=1, method="fs/read_text_file", params={"sessionId": SESSION_A, "path": "/a"})  # the same id
    w.update(SESSION_A, sessionUpdate="agent_message_chunk", content={"type": "text", "text": "hi"})
    w.client(id=1, error={"code": -32002, "message": "not found"})  # the agent's request's answer
    w.agent(id=1, result={"stopReason": "end_turn"})
    w.agent(id=5, method="fs/write_text_file", params={"sessionId": SESSION_A, "path": "/b", "content": ""})
    w.client(id=9, result={})  # answers nothing
    data = report_data(w.write(tmp_path / "t.jsonl"), None)
    seq = data["lines"]["seq"]
    assert seq["k"] == "qqnerqr"
    assert [seq["methods"][m] if m >= 0 else "" for m in seq["m"]] == [
        "session/prompt",
        "fs/read_text_file",
        "session/update agent_message_chunk",
        "fs/read_text_file",
        "session/prompt",
        "fs/write_text_file",
        "",
    ]
    assert seq["p"] == [5, 4, 0, 2, 1, 0, 0]  # the write never answered, the last response no request's
    assert "t" not in seq  # no times in the transcript


def test_the_sequence_has_each_message_s_time(tmp_path):
    seq = report_data(timed(tmp_path / "t.jsonl"), None)["lines"]["seq"]
    assert seq["k"] == "-qrqrqnnqrnnnrqnr-"  # tap's start and end records are no messages
    assert seq["t"][1:3] == [0.0, 10.0] and seq["t"][8:10] == [1400.0, 3400.0]
    assert seq["t"][0] is None and seq["p"][8:10] == [10, 9]


def test_latency_percentiles_are_nearest_rank():
    values = [float(n) for n in range(100, 0, -1)]  # 1 .. 100, in no order
    assert latency({"m": values}) == [["m", 100, 50.0, 99.0, 100.0]]
    assert latency({"a": [5.0], "b": [1.0, 9.0]}) == [["b", 2, 1.0, 9.0, 9.0], ["a", 1, 5.0, 5.0, 5.0]]


def test_a_permission_asked_before_its_tool_call_starts_is_linked_when_it_does():
    w = Writer()
    options = [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]
    params = {"sessionId": SESSION_A, "toolCall": {"toolCallId": "t1"}, "options": options}
    w.agent(id=1, method="session/request_permission", params=params)
    w.update(SESSION_A, sessionUpdate="tool_call", toolCallId="t1", title="Run")
    result = fold(w.lines)
    permission, tool = result.rows
    assert permission.data["toolRow"] == 1
    assert [step.get("permission") for step in tool.data["history"]] == [0, None]
    assert "ms" not in tool.data and "t" not in tool.data  # no times in this transcript


def test_times_that_are_not_rfc_3339_are_no_times():
    assert _seconds("2027-01-01T00:00:00Z") == 1_798_761_600.0
    assert _seconds("2027-01-01T01:00:00+01:00") == 1_798_761_600.0
    assert _seconds("2027-01-01T00:00:00.250000") == 1_798_761_600.25  # no offset: UTC
    for junk in ("", "yesterday", "2027-13-45T00:00:00Z", 5, None, "2027-01-01T00:00:00Z" * 3):
        assert _seconds(junk) is None


def test_what_is_no_message_keeps_its_direction_and_raw_payload(tmp_path):
    lines = [
        json.dumps({"direction": "agent_to_client", "timestamp": "t", "line": "Traceback (most recent call last):"}),
        json.dumps({"direction": "agent_to_client", "omitted": 99999}),
        json.dumps({"direction": "client_to_agent", "message": [1, 2]}),
        "garbage",
        json.dumps(
            {
                "direction": "client_to_agent",
                "message": {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "s"}},
            }
        ),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    data = report_data(path, None)
    said = [(row["k"], row["d"], row.get("why", "")[:20], row.get("raw")) for row in data["rows"]]
    assert said == [
        ("bad", "a", "not JSON (acpgen tap", [[1, "Traceback (most recent call last):"]]),
        ("bad", "a", "a line of 99999 byte", None),
        ("bad", "c", "not a JSON-RPC messa", [[3, "[1,2]"]]),
        ("bad", "", "not JSON: Expecting ", [[4, "garbage"]]),
        ("user", "c", "", [[5, json.dumps(json.loads(lines[4])["message"], separators=(",", ":"))]]),
    ]


def test_the_line_of_an_invalid_message_is_on_its_row_and_findings_carry_direction_and_method(tmp_path):
    records = [
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}},
        {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": "s", "prompt": [{"type": "x"}]},
        },
    ]
    directions = ["client_to_agent", "agent_to_client", "client_to_agent"]
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"direction": d, "message": m}) for d, m in zip(directions, records, strict=True)]
    path.write_text("".join(line + "\n" for line in lines))
    data = report_data(path, load_generated("acp_v1"))
    invalid = [f for f in data["findings"] if f[1] == "invalid"]
    assert [(f[0], f[5], f[6]) for f in invalid] == [(3, "c", "session/prompt")]
    (user,) = [row for row in data["rows"] if row["k"] == "user"]
    assert user["raw"] == [[3, lines[2]]]


# -- the page ------------------------------------------------------------------------


def test_script_json_cannot_end_its_script_and_reads_back_the_same():
    value = {"text": XSS + "\u2029 & > \ud800 lone", "</script>": ["<!--"]}
    text = script_json(value)
    assert not set("<>&\u2028\u2029") & set(text)
    text.encode("utf-8")  # no lone surrogate left to encode
    assert json.loads(text) == value


def test_the_policy_names_the_hashes_of_the_pages_own_style_and_script(tmp_path):
    page = render_report(report_data(demo(tmp_path / "demo.jsonl"), None))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    script = re.search(r"<script>(.*?)</script>", page, re.S)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert script is not None and style is not None

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert f"script-src {digest(script.group(1))};" in policy.group(1)
    assert f"style-src {digest(style.group(1))};" in policy.group(1)
    assert "default-src 'none'" in policy.group(1)
    # The transcript's markup is in the page only as escaped JSON.
    assert "<img" not in page and page.count("</script>") == 3
    # Outside the data, nothing that would load from elsewhere.
    markup = re.sub(r'<script type="application/json" id="acp-[a-z]+">[^<]*</script>', "", page)
    assert markup.count("<script") == 1
    assert not re.search(r"\b(src|href)=", markup) and "http://" not in markup and "https://" not in markup


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.html"
    target.write_text("old page")

    def parts():
        yield "<!DOCTYPE html>"
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        write_atomically(target, parts())
    assert target.read_text() == "old page"
    assert [p.name for p in tmp_path.iterdir()] == ["out.html"]
    write_atomically(target, iter(["new ", "page"]))
    assert target.read_text() == "new page"
    assert [p.name for p in tmp_path.iterdir()] == ["out.html"]


def test_a_missing_directory_or_a_directory_target_is_an_error(tmp_path):
    with pytest.raises(AcpgenError, match="does not exist"):
        write_atomically(tmp_path / "nowhere" / "out.html", iter(["x"]))
    with pytest.raises(AcpgenError, match="is a directory"):
        write_atomically(tmp_path, iter(["x"]))


# -- any JSON at all ---------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
_KEYS = [
    "sessionId",
    "toolCallId",
    "terminalId",
    "content",
    "status",
    "title",
    "kind",
    "entries",
    "plan",
    "messageId",
    "options",
    "toolCall",
    "outcome",
    "optionId",
    "prompt",
    "oldText",
    "newText",
    "type",
    "text",
    "data",
    "used",
    "size",
    "cost",
    "locations",
    "rawInput",
    "stopReason",
    "state",
    "command",
    "args",
    "output",
    "exitStatus",
]
_TAGS = [
    "agent_message_chunk",
    "user_message_chunk",
    "agent_thought_chunk",
    "user_message",
    "agent_message",
    "tool_call",
    "tool_call_update",
    "tool_call_content_chunk",
    "plan",
    "plan_update",
    "plan_removed",
    "usage_update",
    "state_update",
    "session_info_update",
    "terminal_update",
    "terminal_output_chunk",
    "x",
]
_METHODS = [
    "session/update",
    "session/prompt",
    "session/new",
    "session/load",
    "session/request_permission",
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "initialize",
    "_x",
]
_values = st.sampled_from(["s1", "s2", "t1", "text", "diff", "terminal", "content", "selected"]) | _json
_objects = st.recursive(
    st.dictionaries(st.sampled_from(_KEYS), _values, max_size=5),
    lambda inner: st.dictionaries(st.sampled_from(_KEYS), inner | st.lists(inner, max_size=2) | _values, max_size=5),
    max_leaves=10,
)


@st.composite
def _messages(draw: Any) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    shape = draw(st.sampled_from(["request", "notification", "response", "error", "junk"]))
    if shape == "junk":
        return draw(_json)
    if shape in ("request", "response", "error"):
        message["id"] = draw(st.integers(0, 3) | st.sampled_from(["a", None]))
    if shape in ("request", "notification"):
        message["method"] = draw(st.sampled_from(_METHODS))
        params = draw(_objects)
        if message["method"] == "session/update":
            params["update"] = {**draw(_objects), "sessionUpdate": draw(st.sampled_from(_TAGS))}
        message["params"] = params
    elif shape == "response":
        message["result"] = draw(_objects | _json)
    else:
        message["error"] = draw(_objects | _json)
    if draw(st.booleans()):
        record = {"direction": draw(st.sampled_from(["client_to_agent", "agent_to_client", "up"])), "message": message}
        if draw(st.booleans()):  # tap's timestamps, and what a hand-written one may hold
            record["timestamp"] = draw(st.sampled_from(_STAMPS) | _json)
        return record
    return message


_STAMPS = [
    "2027-01-01T00:00:00.000000Z",
    "2027-01-01T00:00:01.5Z",
    "2026-12-31T23:59:59+01:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999Z",
    "2027-13-45T00:00:00Z",
    "yesterday",
]


@settings(max_examples=examples(50))
@given(st.lists(_messages(), max_size=12))
def test_any_transcript_folds_every_line_into_one_row_and_onto_the_page(tmp_path_factory, records):
    path = tmp_path_factory.mktemp("any") / "t.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    data = report_data(path, None)
    lines = sorted(n for row in data["rows"] for n in row["l"])
    assert lines == list(range(1, len(records) + 1))
    seq = data["lines"]["seq"]
    assert len(seq["k"]) == len(seq["m"]) == len(seq["p"]) == len(records)
    for n, pair in enumerate(seq["p"], 1):  # pairs go both ways, a request with a response
        if pair:
            assert seq["p"][pair - 1] == n
            assert {seq["k"][n - 1], seq["k"][pair - 1]} in ({"q", "r"}, {"q", "e"})
            assert seq["m"][n - 1] == seq["m"][pair - 1]
    page = render_report(data)  # no value the page cannot hold
    found = re.search(r'id="acp-data">([^<]*)</script>', page)
    assert found is not None
    assert (
        json.loads(found.group(1), parse_constant=lambda name: pytest.fail(f"{name} on the page"))["rows"]
        == data["rows"]
    )


def test_a_long_stream_is_one_block_of_at_most_max_text_and_counts_the_rest(monkeypatch):
    monkeypatch.setattr("acpgen.report.fold.MAX_TEXT", 1000)
    result = Fold()
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "abcdefghij"}}
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": chunk}}
    for n in range(1, 20001):  # 200,000 characters
        result.add(n, message)
    (row,) = [row.to_json() for row in result.rows]
    assert row["content"] == [["text", "abcdefghij" * 100]]
    assert row["cut"] == 200_000 - 1000 and len(row["l"]) == 20000


def test_messages_carrying_a_traceparent_are_grouped_by_trace_with_their_spans(tmp_path):
    from ..report.transcripts import SPAN_C, SPAN_S, SPAN_Z, TRACE_A, TRACE_B, traced

    data = report_data(traced(tmp_path / "traced.jsonl"), None)
    # Lines 1-4: the handshake, no trace context. Each message: line,
    # direction, request or notification, method, the span it came from,
    # the line of the request that span serves (0: none, as far as the
    # wire shows).
    assert data["traces"] == {
        "list": [
            [
                TRACE_A,
                [
                    [5, "c", "q", "session/prompt", SPAN_C, 0],
                    [6, "a", "n", "session/update", SPAN_S, 5],
                    [7, "a", "q", "session/request_permission", SPAN_Z, 5],
                    [9, "c", "n", "session/cancel", SPAN_S, 5],
                ],
                0,
            ],
            [TRACE_B, [[11, "c", "q", "session/prompt", SPAN_C, 0]], 0],
        ],
        "dropped": 0,
    }
    assert report_data(timed(tmp_path / "timed.jsonl"), None)["traces"] == {"list": [], "dropped": 0}


def test_only_valid_traceparents_make_a_trace():
    from acpgen.report.traces import trace_ids

    good = "4bf92f3577b34da6a3ce929d0e0e4736"
    assert trace_ids(f"00-{good}-00f067aa0ba902b7-01") == (good, "00f067aa0ba902b7")
    assert trace_ids(f"01-{good}-00f067aa0ba902b7-01-later") == (good, "00f067aa0ba902b7")
    for bad in (
        None,
        5,
        f"00-{good}-{'0' * 16}-01",
        f"ff-{good}-00f067aa0ba902b7-01",
        f"00-{good.upper()}-00f067aa0ba902b7-01",
    ):
        assert trace_ids(bad) is None
