"""Session state: every session/update kind of the four schemas is folded,
the v1 and v2 message rules, and snapshots that restore and fold on."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ..conftest import SCHEMAS, load_generated
from ..session_strategies import update as update_strategy

PACKAGES = list(SCHEMAS)
v1 = load_generated("acp_v1")
v2 = load_generated("acp_v2")


def schema_tags(package: str) -> list[str]:
    """The SessionUpdate kinds as the schema file lists them ("*" for the
    catch-all), read independently of the generator."""
    defs = json.loads(SCHEMAS[package].read_text())["$defs"]
    union = defs["SessionUpdate"]
    tags = []
    for variant in union.get("oneOf", []) + union.get("anyOf", []):
        const = variant.get("properties", {}).get("sessionUpdate", {}).get("const")
        tags.append(const if const is not None else "*")
    return tags


def is_v2(package: str) -> bool:
    return package.startswith("acp_v2")


def note(package, session_id, update):
    p = load_generated(package)
    name = "UpdateSessionNotification" if is_v2(package) else "SessionNotification"
    return p.decode(name, {"sessionId": session_id, "update": update}, strict=True)


def fold(package, updates, session=None, session_id="s"):
    p = load_generated(package)
    for u in updates:
        session = p.apply_session_update(session, note(package, session_id, u))
    return session


# ------------------------------------------------------------------ every kind


@pytest.mark.parametrize("package", PACKAGES)
def test_every_session_update_variant_has_a_fold(package):
    p = load_generated(package)
    variants = set(typing.get_args(p.SessionUpdate))
    assert variants and variants == set(p.UPDATE_RULES)
    tags = {rule.tag if rule.tag is not None else "*" for rule in p.UPDATE_RULES.values()}
    assert tags == set(schema_tags(package))


@pytest.mark.parametrize("package", PACKAGES)
@settings(max_examples=10, phases=[Phase.generate], suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_every_session_update_kind_is_folded_into_its_field(package, data):
    """Each kind of the schema, folded into a new session, lands in the field
    its rule names and changes nothing else (a kind nobody handles raises)."""
    p = load_generated(package)
    for tag in schema_tags(package):
        start = p.Session(session_id="s")
        if tag == "plan_removed":
            plan = {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "a", "content": ""}}
            start = fold(package, [plan], start)
        u = data.draw(update_strategy(tag, is_v2(package)))
        if tag == "plan_removed":
            u["planId"] = "a"
        decoded = note(package, "s", u)
        rule = p.UPDATE_RULES[type(decoded.update)]
        after = p.session_to_json(fold(package, [u], start))
        before = p.session_to_json(start)
        changed = {key for key in before if before[key] != after[key]}
        field = p.session_to_json(p.Session(session_id="s"))
        wire = next(k for k in field if k.lower() == rule.field.replace("_", ""))
        assert changed <= {wire, "history"}, tag
        if rule.action == "set":
            empty = getattr(p.Session(session_id="s"), rule.field)
            assert (wire in changed) == (after[wire] != (None if empty is None else [])), tag
        else:
            assert wire in changed, tag


def test_a_schema_kind_without_a_rule_generates_no_fold_and_says_why(tmp_path):
    from acpgen.compile.passes.session import apply_session_rules

    rules = tmp_path / "session.toml"
    text = Path(__import__("acpgen.compile.passes.session", fromlist=["x"]).builtin_session_rules()).read_text()
    rules.write_text(text.replace('tag = "notice"', 'tag = "not_a_kind"', 1))
    from acpgen.compile.load import load_schema
    from acpgen.pipeline import build_ir

    package = build_ir(load_schema(SCHEMAS["acp_v1"]), "acp_v1", "none")
    from acpgen.compile.passes.upserts import apply_rules

    package = apply_rules(package, "v1")
    result = apply_session_rules(package, "v1", rules)
    assert result.session is None
    assert any("'notice'" in w and "has no rule" in w for w in result.warnings)


# ------------------------------------------------------------------ v1 messages


def text(t, message_id=None, kind="agent_message_chunk"):
    u = {"sessionUpdate": kind, "content": {"type": "text", "text": t}}
    if message_id is not None:
        u["messageId"] = message_id
    return u


def texts(message):
    return "".join(block.text for block in message.content)


def test_v1_consecutive_chunks_of_one_kind_form_one_message():
    s = fold("acp_v1", [text("he"), text("llo"), text("hm", kind="agent_thought_chunk"), text("ok")])
    assert [(e.field, texts(getattr(s, e.field)[e.key])) for e in s.history] == [
        ("agent_messages", "hello"),
        ("agent_thoughts", "hm"),
        ("agent_messages", "ok"),
    ]


def test_v1_a_tool_call_ends_the_current_message():
    tool = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read"}
    s = fold("acp_v1", [text("a"), tool, text("b"), text("c", kind="user_message_chunk")])
    assert [e.field for e in s.history] == ["agent_messages", "tool_calls", "agent_messages", "user_messages"]
    assert [texts(m) for m in s.agent_messages.values()] == ["a", "b"]


def test_v1_a_different_message_id_starts_a_new_message():
    """A change in `messageId` indicates a new message has started."""
    s = fold("acp_v1", [text("a", "m1"), text("b", "m1"), text("c", "m2"), text("d")])
    messages = list(s.agent_messages.values())
    assert [(m.message_id, texts(m)) for m in messages] == [("m1", "ab"), ("m2", "cd")]


def test_v1_a_message_without_id_adopts_the_first_id():
    s = fold("acp_v1", [text("a"), text("b", "m1")])
    assert [(m.message_id, texts(m)) for m in s.agent_messages.values()] == [("m1", "ab")]


def test_v1_tool_call_replaces_and_updates_patch():
    s = fold(
        "acp_v1",
        [
            {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read", "status": "pending"},
            {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"},
            {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Again"},
        ],
    )
    call = s.tool_calls["t"]
    assert (call.title, call.status) == ("Again", "pending")
    assert len(s.history) == 1


UNKNOWN_CALL_CONTENT = [{"type": "content", "content": {"type": "text", "text": "x"}}]
"""The content of the update for a tool call never started, below."""

UNKNOWN_CALL = {
    "acp_v1": (
        {"kind": None, "title": None, "rawInput": {"q": 1}, "_meta": {"a": 1}},
        # v1: null leaves a field as it was (here the initial value), _meta replaced.
        {
            "toolCallId": "c9",
            "kind": "other",
            "status": "in_progress",
            "title": "",
            "name": None,
            "content": UNKNOWN_CALL_CONTENT,
            "locations": [],
            "rawInput": {"q": 1},
            "rawOutput": None,
            "_meta": {"a": 1},
        },
    ),
    "acp_v2": (
        {"kind": None, "title": None, "rawInput": {"q": 1}, "_meta": {"a": 1, "b": None}},
        # v2: null resets the kind and clears the title; _meta patches the empty metadata.
        {
            "toolCallId": "c9",
            "name": None,
            "title": None,
            "kind": "other",
            "status": "in_progress",
            "content": UNKNOWN_CALL_CONTENT,
            "locations": [],
            "rawInput": {"q": 1},
            "rawOutput": None,
            "capabilities": None,
            "_meta": {"a": 1},
        },
    ),
}


@pytest.mark.parametrize("package", PACKAGES)
def test_an_update_of_a_tool_call_never_started_folds_from_the_initial_state(package):
    p = load_generated(package)
    fields, expected = UNKNOWN_CALL["acp_v2" if is_v2(package) else "acp_v1"]
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c9", "status": "in_progress"}
    update |= {"content": UNKNOWN_CALL_CONTENT, **fields}
    s = fold(package, [update])
    assert [(type(e).__name__, e.key) for e in s.history] == [("ToolCallEntry", "c9")]
    assert p.encode(s.tool_calls["c9"]) == expected
    # A second update changes what it carries and keeps the rest.
    later = fold(package, [{"sessionUpdate": "tool_call_update", "toolCallId": "c9", "status": "completed"}], s)
    assert p.encode(later.tool_calls["c9"]) == {**expected, "status": "completed"}
    assert p.encode(s.tool_calls["c9"]) == expected


def test_v1_plan_modes_and_commands_are_replaced():
    s = fold(
        "acp_v1",
        [
            {"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "high", "status": "pending"}]},
            {"sessionUpdate": "plan", "entries": []},
            {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
            {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "web", "description": "d"}]},
        ],
    )
    assert s.plan == [] and s.current_mode_id == "code"
    assert [c.name for c in s.available_commands] == ["web"]


# ------------------------------------------------------------------ v2


def test_v2_chunks_of_interleaved_messages_go_to_their_message():
    """Chunks for different messages can interleave."""
    s = fold(
        "acp_v2",
        [
            text("a", "m1"),
            text("x", "m2"),
            text("b", "m1"),
            {"sessionUpdate": "agent_message", "messageId": "m2", "content": None},
        ],
    )
    assert [e.key for e in s.history] == ["m1", "m2"]
    assert texts(s.agent_messages["m1"]) == "ab"
    assert s.agent_messages["m2"].content == []


def test_v2_plans_by_id_and_removal():
    unstable = "acp_v2_unstable"
    s = fold(
        unstable,
        [
            {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p", "content": "# a"}},
            {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "q", "entries": []}},
            {"sessionUpdate": "plan_removed", "planId": "p"},
        ],
    )
    assert list(s.plans) == ["q"]


def test_v2_unknown_kinds_are_kept_and_encode_back():
    raw = {"sessionUpdate": "_vendor", "x": [1]}
    s = fold("acp_v2", [raw])
    assert v2.session_to_json(s)["unrecognized"] == [raw]


def test_another_sessions_notification_is_refused():
    s = fold("acp_v2", [text("a", "m")])
    with pytest.raises(ValueError, match="session 'other'"):
        v2.apply_session_update(s, note("acp_v2", "other", text("b", "m")))


def test_folding_changes_neither_argument():
    s = fold("acp_v1", [text("a")])
    before = v1.session_to_json(s)
    n = note("acp_v1", "s", text("b"))
    v1.apply_session_update(s, n)
    assert v1.session_to_json(s) == before


# ------------------------------------------------------------------ snapshots


@pytest.mark.parametrize("package", PACKAGES)
@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_a_restored_snapshot_folds_on_like_the_whole_stream(package, data):
    p = load_generated(package)
    tags = schema_tags(package)
    stream = data.draw(
        st.lists(st.sampled_from(tags).flatmap(lambda t: update_strategy(t, is_v2(package))), max_size=25)
    )
    cut = data.draw(st.integers(0, len(stream)))
    whole = fold(package, stream)
    head = fold(package, stream[:cut]) or p.Session(session_id="s")
    snapshot = json.loads(json.dumps(p.session_to_json(head)))
    restored = p.session_from_json(snapshot)
    assert restored == head
    resumed = fold(package, stream[cut:], restored)
    assert p.session_to_json(resumed) == p.session_to_json(whole or p.Session(session_id="s"))


def test_a_bad_snapshot_is_a_validation_error():
    with pytest.raises(v2.ValidationError, match="not a session snapshot"):
        v2.session_from_json({"sessionId": "s"})


# ------------------------------------------------------------------ purity


@pytest.mark.parametrize("package", PACKAGES)
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_an_older_session_never_changes(package, data):
    """Sessions held along a stream (read or not before the next fold, and
    folded again from: a fork) each keep the state they had."""
    p = load_generated(package)
    tags = schema_tags(package)
    stream = data.draw(
        st.lists(st.sampled_from(tags).flatmap(lambda t: update_strategy(t, is_v2(package))), max_size=30)
    )
    read = data.draw(st.lists(st.booleans(), min_size=len(stream), max_size=len(stream)))
    held = []
    session = p.Session(session_id="s")
    for u, read_now in zip(stream, read, strict=False):
        snapshot = p.session_to_json(session) if read_now else None
        held.append((session, snapshot, len(held)))
        session = p.apply_session_update(session, note(package, "s", u))
    for old, snapshot, count in held:
        expected = p.session_to_json(fold(package, stream[:count], p.Session(session_id="s")))
        assert p.session_to_json(old) == expected
        if snapshot is not None:
            assert snapshot == expected
    if held:
        old, _, count = held[len(held) // 2]
        forked = fold(package, stream[count:], old)
        assert p.session_to_json(forked) == p.session_to_json(session)
        assert p.session_to_json(old) == p.session_to_json(fold(package, stream[:count], p.Session(session_id="s")))


def test_what_a_session_returned_stays_as_it_was():
    s = fold("acp_v1", [text("a"), {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read"}])
    messages, calls, history = s.agent_messages, s.tool_calls, s.history
    s2 = fold(
        "acp_v1",
        [text("b"), text("c"), {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}],
        s,
    )
    assert [texts(m) for m in messages.values()] == ["a"] and calls["t"].status == "pending"
    assert len(history) == 2 and len(s.history) == 2
    assert [texts(m) for m in s2.agent_messages.values()] == ["a", "bc"] and s2.tool_calls["t"].status == "completed"
    assert [texts(m) for m in s.agent_messages.values()] == ["a"]


def test_a_message_read_before_more_chunks_keeps_its_content():
    s = fold("acp_v1", [text("a")])
    message = s.agent_messages["#0"]
    s2 = fold("acp_v1", [text("b")], s)
    s3 = fold("acp_v1", [text("c")], s2)
    assert texts(message) == "a" and texts(s.agent_messages["#0"]) == "a"
    assert texts(s2.agent_messages["#0"]) == "ab" and texts(s3.agent_messages["#0"]) == "abc"


def test_v2_chunks_read_between_folds_stay_as_they_were():
    s = fold("acp_v2", [text("a", "m"), text("b", "m")])
    before = s.agent_messages["m"]
    s2 = fold("acp_v2", [text("c", "m")], s)
    assert texts(before) == "ab" and texts(s2.agent_messages["m"]) == "abc"
    assert texts(s.agent_messages["m"]) == "ab"


# ------------------------------------------------------------------ turns


def prompt(t, session_id="s"):
    return v1.PromptRequest(session_id=session_id, prompt=[v1.TextContentBlock(text=t)])


def three_turns():
    session = None
    for turn in range(3):
        session = v1.apply_prompt(session, prompt(f"question {turn}"))
        for word in ("the ", "answer"):
            session = v1.apply_session_update(session, note("acp_v1", "s", text(f"{word}{turn}")))
    return session


def test_v1_the_prompt_separates_the_turns():
    session = three_turns()
    assert [(type(e).__name__, texts(e.value(session))) for e in session.history] == [
        ("UserMessageEntry", "question 0"),
        ("AgentMessageEntry", "the 0answer0"),
        ("UserMessageEntry", "question 1"),
        ("AgentMessageEntry", "the 1answer1"),
        ("UserMessageEntry", "question 2"),
        ("AgentMessageEntry", "the 2answer2"),
    ]
    assert len(session.user_messages) == 3 and len(session.agent_messages) == 3


def test_v1_without_the_prompt_the_turns_run_together():
    """What apply_prompt is for: the notifications alone are one message."""
    session = None
    for turn in range(3):
        session = v1.apply_session_update(session, note("acp_v1", "s", text(f"answer{turn}")))
    assert len(session.agent_messages) == 1


def test_v1_a_prompt_after_a_user_chunk_is_a_new_message_and_snapshots():
    s = fold("acp_v1", [text("replayed", kind="user_message_chunk")])
    s = v1.apply_prompt(s, prompt("new"))
    assert [texts(m) for m in s.user_messages.values()] == ["replayed", "new"]
    assert v1.session_from_json(json.loads(json.dumps(v1.session_to_json(s)))) == s
    with pytest.raises(ValueError, match="session 'other'"):
        v1.apply_prompt(s, prompt("x", session_id="other"))


def test_v2_has_no_apply_prompt():
    """v2 keys every message by its id: its turns stay apart without one."""
    assert not hasattr(v2, "apply_prompt")


# ------------------------------------------------------------------ typed history


def test_history_entries_are_typed_and_give_their_entity():
    tool = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read"}
    s = fold("acp_v1", [text("a"), tool, text("b", kind="agent_thought_chunk")])
    first, second, third = s.history
    assert isinstance(first, v1.AgentMessageEntry) and first.value(s) is s.agent_messages[first.key]
    assert isinstance(second, v1.ToolCallEntry) and second.value(s).title == "Read"
    assert isinstance(third, v1.AgentThoughtEntry)
    assert (first.field, second.field) == ("agent_messages", "tool_calls")
    assert {c.field for c in typing.get_args(v1.HistoryItem)} == {
        "user_messages",
        "agent_messages",
        "agent_thoughts",
        "tool_calls",
        "compactions",
    }


README_EXAMPLE = "## The session fold"


def readme_session_example() -> str:
    readme = (Path(__file__).resolve().parents[2] / "docs" / "client.md").read_text()
    section = readme.split(README_EXAMPLE, 1)[1]
    # the example that folds by hand (before it: the connection's own fold)
    blocks = [block.split("```", 1)[0] for block in section.split("```python\n")[1:]]
    return next(block for block in blocks if "acp.apply_prompt(" in block)


def test_the_readme_session_example_runs(capsys):
    exec(compile(readme_session_example(), "docs/client.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[:6] == [
        "user: What does main.py do?",
        "agent: Let me look.",
        "tool: Read main.py (completed)",
        "agent: It prints hello.",
        "user: And tests?",
        "agent: There are none.",
    ]


@pytest.mark.parametrize("package", PACKAGES)
@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_apply_session_update_folds_as_fold_session_update(package, data):
    """apply_session_update extends the message the store owns inline (v1's
    chunks); every stream folds to what each kind's fold gives through
    fold_session_update, with reads and message ids in between."""
    p = load_generated(package)
    tags = schema_tags(package)
    chunk_tags = [t for t in tags if t.endswith("_chunk")] or tags
    stream = data.draw(
        st.lists(
            st.sampled_from(chunk_tags * 3 + tags).flatmap(lambda t: update_strategy(t, is_v2(package))), max_size=40
        )
    )
    read = data.draw(st.lists(st.booleans(), min_size=len(stream), max_size=len(stream)))
    applied = p.Session(session_id="s")
    folded = p.Session(session_id="s")
    for u, read_now in zip(stream, read, strict=False):
        notification = note(package, "s", u)
        applied = p.apply_session_update(applied, notification)
        folded = p.fold_session_update(folded, notification.update)
        if read_now:
            assert p.session_to_json(applied) == p.session_to_json(folded)
    assert p.session_to_json(applied) == p.session_to_json(folded)


def test_a_chunk_with_another_message_id_starts_a_message_after_inline_extensions():
    def chunk(text_, message_id=None):
        u = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text_}}
        if message_id is not None:
            u["messageId"] = message_id
        return u

    s = fold("acp_v1", [chunk("a", "m1"), chunk("b"), chunk("c", "m1"), chunk("d", "m2"), chunk("e")])
    assert [(m.message_id, [c.text for c in m.content]) for m in s.agent_messages.values()] == [
        ("m1", ["a", "b", "c"]),
        ("m2", ["d", "e"]),
    ]
    prompt = v1.decode("PromptRequest", {"sessionId": "s", "prompt": [{"type": "text", "text": "q"}]}, strict=True)
    s = v1.apply_prompt(s, prompt)
    s = fold("acp_v1", [{"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "r"}}], s)
    assert [[c.text for c in m.content] for m in s.user_messages.values()] == [["q", "r"]]


def test_older_sessions_keep_their_chunks_when_the_newest_extends_its_message_in_place():
    """A chunk of the message the store owns is folded in place, and the
    Session before it keeps no record but its successor and the length to
    cut: each older Session still sees its own chunks, also once a later
    fold has moved on to a tool call and a new message, and says which
    fields changed since."""
    acp = load_generated("acp_v1")

    def chunk(kind: str, text: str) -> object:
        update = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
        return acp.decode("SessionNotification", {"sessionId": "s", "update": update})

    stream = [chunk("agent_message_chunk", t) for t in "abc"]
    stream.append(
        acp.decode(
            "SessionNotification",
            {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "T"}},
        )
    )
    stream += [chunk("agent_message_chunk", t) for t in "de"]
    sessions = [acp.apply_session_update(None, stream[0])]
    for notification in stream[1:]:
        sessions.append(acp.apply_session_update(sessions[-1], notification))

    def texts(session: object) -> list[list[str]]:
        messages = session.agent_messages  # type: ignore[attr-defined]
        return [[block.text for block in m.content] for m in messages.values()]

    # Read newest first, so each older one rebuilds from the newest state.
    seen = [texts(s) for s in reversed(sessions)][::-1]
    assert seen == [
        [["a"]],
        [["a", "b"]],
        [["a", "b", "c"]],
        [["a", "b", "c"]],
        [["a", "b", "c"], ["d"]],
        [["a", "b", "c"], ["d", "e"]],
    ]
    assert [len(s.history) for s in sessions] == [1, 1, 1, 2, 3, 3]
    assert sessions[0].changed_fields() == {"agent_messages", "tool_calls"}
    assert sessions[4].changed_fields() == {"agent_messages"}
    assert sessions[-1].changed_fields() == frozenset()
    assert list(sessions[2].tool_calls) == [] and list(sessions[3].tool_calls) == ["t"]


def test_a_tool_call_no_session_handed_out_is_patched_in_place_and_older_sessions_keep_theirs():
    """An update of a tool call the store owns changes its state in place,
    the older Session keeping the fields it replaced; once a Session has
    handed the state out, the next update builds a new state instead."""
    from acp_v1._session import PATCH, PUT

    call = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read", "kind": "read"}
    running = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "in_progress"}
    content = [{"type": "content", "content": {"type": "text", "text": "x"}}]
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed", "content": content}
    s1 = fold("acp_v1", [call])
    s2 = fold("acp_v1", [running], s1)
    s3 = fold("acp_v1", [done], s2)
    assert s1._undo[:4] == (PATCH, "tool_calls", "t", ["status", "pending"])
    assert s2._undo[:4] == (PATCH, "tool_calls", "t", ["status", "in_progress", "content", []])
    state = s3.tool_calls["t"]  # handed out: the next update builds a new state
    s4 = fold("acp_v1", [{"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": "Read a"}], s3)
    assert s3._undo[0] == PUT and s3._undo[3] is state
    assert (state.title, state.status) == ("Read", "completed")
    assert [(s.tool_calls["t"].status, s.tool_calls["t"].title) for s in (s1, s2, s3, s4)] == [
        ("pending", "Read"),
        ("in_progress", "Read"),
        ("completed", "Read"),
        ("completed", "Read a"),
    ]
    assert s2.tool_calls["t"].content == [] and v1.encode(s4.tool_calls["t"])["content"] == content
    assert s1.changed_fields() == {"tool_calls"}


def test_the_store_owns_only_the_tool_calls_put_lately():
    """What the fold may patch in place is a bounded set: a session of many
    tool calls does not hold one key per call for it."""
    from acp_v1._session import OWNED_AT_MOST

    calls = [{"sessionUpdate": "tool_call", "toolCallId": f"t{i}", "title": "Read"} for i in range(3 * OWNED_AT_MOST)]
    s = fold("acp_v1", calls)
    assert 0 < len(s._store.tool_calls_owned) <= OWNED_AT_MOST
    assert f"t{3 * OWNED_AT_MOST - 1}" in s._store.tool_calls_owned
    s = fold("acp_v1", [{"sessionUpdate": "tool_call_update", "toolCallId": "t0", "status": "completed"}], s)
    assert s.tool_calls["t0"].status == "completed" and len(s.tool_calls) == 3 * OWNED_AT_MOST
