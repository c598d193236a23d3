"""The agent's session senders (``conn.session(id)``, the generated
``senders`` module): what the client receives for each, as the JSON on the
wire, over ``connect_in_memory`` for v1 and v2; that the senders and the
helpers come from the schema (a kind of update added to a small schema gets
its sender); and that a name two kinds would share is a generation error."""

from __future__ import annotations

import asyncio
import copy
import json
import typing
from pathlib import Path

import pytest
from acpgen.errors import AcpgenError
from acpgen.pipeline import build_package

from ..conftest import ROOT, load_generated
from ..patience import HANG

v1 = load_generated("acp_v1")
v2 = load_generated("acp_v2")
KITCHEN = ROOT / "tests/kitchen/schema.json"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, HANG))


def exchange(p, send, count):
    """The ``session/update`` params the client receives, encoded (the JSON
    on the wire) after ``send(session)`` sent ``count`` of them for session
    ``s1``; and what ``send`` returned."""

    class Agent(p.Agent):
        def __init__(self, conn):
            self.conn = conn

    class Client(p.Client):
        def __init__(self, conn):
            self.got = []
            self.done = asyncio.Event()

        async def session_update(self, params):
            self.got.append(p.encode(params))
            if len(self.got) == count:
                self.done.set()

    async def main():
        agent, client = p.connect_in_memory(
            Agent, Client, validate_outgoing=True, strict=True, require_initialize=False
        )
        try:
            returned = await send(agent.session("s1"))
            await client.handler.done.wait()
        finally:
            await agent.close()
            await client.close()
        return client.handler.got, returned

    return run(main())


def updates(p, send, count):
    got, _ = exchange(p, send, count)
    assert all(g["sessionId"] == "s1" for g in got)
    return [g["update"] for g in got]


TEXT = {"type": "text", "text": "hi"}


# ------------------------------------------------------------------ v1


def test_v1_a_message_from_a_str_and_a_thought():
    async def send(s):
        await s.message("hi")
        await s.thought(v1.text("hm"), message_id="m1")
        await s.user_message("me")

    assert updates(v1, send, 3) == [
        {"sessionUpdate": "agent_message_chunk", "content": TEXT},
        {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}, "messageId": "m1"},
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "me"}},
    ]


def test_v1_a_plan():
    async def send(s):
        await s.plan(
            [v1.PlanEntry(content="Read", priority=v1.PlanEntryPriority.HIGH, status=v1.PlanEntryStatus.PENDING)]
        )

    assert updates(v1, send, 1) == [
        {"sessionUpdate": "plan", "entries": [{"content": "Read", "priority": "high", "status": "pending"}]}
    ]


def test_v1_a_tool_call_its_updates_and_its_end():
    async def send(s):
        tool = await s.tool_call("Read", tool_call_id="t1", kind=v1.ToolKind.READ, content=["x"])
        await tool.update(title=None, locations=[v1.ToolCallLocation(path="/a")])
        await tool.update(content=[v1.text("y"), v1.diff("/a", "new", old_text="old")], raw_output=None)
        await tool.complete()
        other = await s.tool_call("Run")
        await other.fail(content="boom")
        return tool, other

    got, (tool, other) = exchange(v1, send, 6)
    assert tool.tool_call_id == "t1"
    assert len(other.tool_call_id) == 32 and int(other.tool_call_id, 16) >= 0
    assert [g["update"] for g in got] == [
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t1",
            "title": "Read",
            "kind": "read",
            "content": [{"type": "content", "content": {"type": "text", "text": "x"}}],
        },
        # None clears (null on the wire), what is left out stays out.
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": None, "locations": [{"path": "/a"}]},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "content": [
                {"type": "content", "content": {"type": "text", "text": "y"}},
                {"type": "diff", "path": "/a", "newText": "new", "oldText": "old"},
            ],
            "rawOutput": None,
        },
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"},
        {"sessionUpdate": "tool_call", "toolCallId": other.tool_call_id, "title": "Run"},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": other.tool_call_id,
            "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": "boom"}}],
        },
    ]


def test_v1_content_helpers_build_the_variants():
    assert v1.encode(v1.text("hi")) == TEXT
    assert v1.encode(v1.image("AAAA", "image/png")) == {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    assert v1.encode(v1.audio("AAAA", "audio/wav")) == {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
    assert v1.encode(v1.resource_link(name="a", uri="file:///a", size=3)) == {
        "type": "resource_link",
        "name": "a",
        "uri": "file:///a",
        "size": 3,
    }
    resource = v1.TextResourceContents(text="x", uri="file:///a")
    assert v1.encode(v1.resource(resource)) == {"type": "resource", "resource": {"text": "x", "uri": "file:///a"}}
    assert v1.encode(v1.tool_content("hi")) == {"type": "content", "content": TEXT}
    assert v1.encode(v1.diff(path="/a", new_text="b", old_text=None)) == {
        "type": "diff",
        "path": "/a",
        "newText": "b",
        "oldText": None,
    }
    assert v1.encode(v1.terminal("t")) == {"type": "terminal", "terminalId": "t"}


def test_v1_the_senders_are_the_schemas_session_update_kinds():
    tags = {v.session_update for v in typing.get_args(v1.SessionUpdate)}
    methods = {n for n, f in vars(v1.SessionSender).items() if asyncio.iscoroutinefunction(f)}
    # Besides the updates: the client's methods whose params name a session.
    calls = {c.handler for c in (i.request or i.notification for i in v1.METHODS.values()) if c.side == "client"}
    names = methods - calls
    naming = {
        c.handler
        for i in v1.METHODS.values()
        for c in (i.request, i.notification)
        if c is not None and c.side == "client" and "session_id" in getattr(c.params, "__dataclass_fields__", {})
    }
    assert methods & calls == naming - {"session_update"}
    assert {"request_permission", "read_text_file", "write_text_file", "create_terminal"} <= naming
    assert len(names) == len(tags)
    assert {"message", "thought", "user_message", "tool_call", "tool_call_update", "plan"} <= names
    assert not {"agent_message_chunk", "message_chunk", "send"} & names


# ------------------------------------------------------------------ v2


def test_v2_messages_and_thoughts_by_id():
    async def send(s):
        await s.message_chunk("m1", "hi")
        await s.message("m1", content=["hi", v2.text("there")])
        await s.thought_chunk("m2", "hm")
        await s.message("m1", content=None)

    assert updates(v2, send, 4) == [
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": TEXT},
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": [TEXT, {"type": "text", "text": "there"}]},
        {"sessionUpdate": "agent_thought_chunk", "messageId": "m2", "content": {"type": "text", "text": "hm"}},
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": None},
    ]


def test_v2_a_plan():
    async def send(s):
        entry = v2.PlanEntry(content="Read", priority=v2.PlanEntryPriority.HIGH, status=v2.PlanEntryStatus.PENDING)
        await s.plan_update(v2.ItemsPlanUpdateContent(plan_id="p", entries=[entry]))

    assert updates(v2, send, 1) == [
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "p",
                "entries": [{"content": "Read", "priority": "high", "status": "pending"}],
            },
        }
    ]


def test_v2_tool_call_update_starts_a_tool_call_and_its_handle_updates_it():
    async def send(s):
        tool = await s.tool_call_update(tool_call_id="t1", title="Read", content=["x"])
        await tool.update(title=None, kind=v2.ToolKind.READ)
        await tool.complete(raw_output={"ok": True})
        other = await s.tool_call_update(title="Run")
        await other.fail()
        return tool, other

    got, (tool, other) = exchange(v2, send, 5)
    assert tool.tool_call_id == "t1" and len(other.tool_call_id) == 32
    assert [g["update"] for g in got] == [
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "title": "Read",
            "content": [{"type": "content", "content": {"type": "text", "text": "x"}}],
        },
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": None, "kind": "read"},
        {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "rawOutput": {"ok": True}},
        {"sessionUpdate": "tool_call_update", "toolCallId": other.tool_call_id, "title": "Run"},
        {"sessionUpdate": "tool_call_update", "toolCallId": other.tool_call_id, "status": "failed"},
    ]


def test_v2_content_helpers_and_tool_call_content_chunks():
    assert v2.encode(v2.resource_link("a", "file:///a")) == {"type": "resource_link", "name": "a", "uri": "file:///a"}
    assert v2.encode(v2.terminal("t")) == {"type": "terminal", "terminalId": "t"}

    async def send(s):
        await s.tool_call_content("t1", "out")
        await s.tool_call_content("t1", v2.terminal("term"))

    assert updates(v2, send, 2) == [
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t1",
            "content": {"type": "content", "content": {"type": "text", "text": "out"}},
        },
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "t1",
            "content": {"type": "terminal", "terminalId": "term"},
        },
    ]


# ------------------------------------------------------------------ from the schema


def kitchen() -> dict:
    return json.loads(KITCHEN.read_text(encoding="utf-8"))


def add_update(schema: dict, tag: str, ref: str = "ContentChunk") -> dict:
    """``schema`` with a SessionUpdate variant tagged ``tag`` carrying
    ``ref`` (and the catch-all told not to take it)."""
    schema = copy.deepcopy(schema)
    variants = schema["$defs"]["SessionUpdate"]["anyOf"]
    tagged = {"type": "object", "properties": {"sessionUpdate": {"type": "string", "const": tag}}}
    variants[-1]["not"]["anyOf"].append({**tagged, "required": ["sessionUpdate"]})
    variants.insert(
        0, {"description": f"A {tag}.", **tagged, "required": ["sessionUpdate"], "allOf": [{"$ref": f"#/$defs/{ref}"}]}
    )
    return schema


def generate(tmp_path: Path, schema: dict) -> dict[str, str]:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    return build_package(path, "senders_pkg")


def test_a_kind_of_update_the_schema_adds_gets_its_sender(make_package):
    p = make_package(add_update(kitchen(), "agent_greeting_chunk"))
    assert asyncio.iscoroutinefunction(p.SessionSender.greeting)

    async def send(s):
        await s.greeting("m1", "hello")

    assert updates(p, send, 1) == [
        {"sessionUpdate": "agent_greeting_chunk", "messageId": "m1", "content": {"type": "text", "text": "hello"}}
    ]


def test_two_kinds_under_one_name_are_a_generation_error(tmp_path):
    # "message" is also agent_message's sender.
    with pytest.raises(AcpgenError) as info:
        generate(tmp_path, add_update(kitchen(), "message"))
    assert "variants 'message' and 'agent_message' would both be sent as 'message'" in str(info.value)


def test_a_kind_named_like_the_senders_own_attribute_is_a_generation_error(tmp_path):
    with pytest.raises(AcpgenError) as info:
        generate(tmp_path, add_update(kitchen(), "agent_send"))
    assert "'agent_send' would be sent as 'send', which SessionSenderBase already defines" in str(info.value)


def test_a_helper_named_like_another_export_is_a_generation_error(tmp_path):
    schema = kitchen()
    schema["$defs"]["text"] = {"type": "string"}
    with pytest.raises(AcpgenError) as info:
        generate(tmp_path, schema)
    assert "the sender name 'text' (senders.py) is also the schema's name" in str(info.value)


def test_a_status_enum_without_failed_is_a_generation_error(tmp_path):
    schema = kitchen()
    status = schema["$defs"]["ToolCallStatus"]
    status["anyOf"] = [v for v in status["anyOf"] if v.get("const") != "failed"]
    with pytest.raises(AcpgenError) as info:
        generate(tmp_path, schema)
    assert "the tool call status 'failed'" in str(info.value) and "ToolCallStatus" in str(info.value)


def test_v1_the_requests_naming_a_session_are_sent_for_the_senders_session():
    class Agent(v1.Agent):
        def __init__(self, conn):
            self.conn = conn

    class Client(v1.Client):
        def __init__(self, conn):
            self.got = []

        async def read_text_file(self, params):
            self.got.append(v1.encode(params))
            return v1.ReadTextFileResponse(content="hello")

        async def request_permission(self, params):
            self.got.append(v1.encode(params))
            return v1.RequestPermissionResponse(outcome=v1.CancelledRequestPermissionOutcome())

    async def main():
        agent, client = v1.connect_in_memory(Agent, Client, validate_outgoing=True, require_initialize=False)
        session = agent.session("s1")
        read = await session.read_text_file("/work/a.txt", limit=2)
        option = v1.PermissionOption(option_id="o", name="Allow", kind=v1.PermissionOptionKind.ALLOW_ONCE)
        answer = await session.request_permission(v1.ToolCallUpdate(tool_call_id="t1"), [option])
        await agent.close()
        await client.close()
        return read, answer, client.handler.got

    read, answer, got = run(main())
    assert read == v1.ReadTextFileResponse(content="hello")
    assert answer.outcome == v1.CancelledRequestPermissionOutcome()
    assert got == [
        {"sessionId": "s1", "path": "/work/a.txt", "limit": 2},
        {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t1"},
            "options": [{"optionId": "o", "name": "Allow", "kind": "allow_once"}],
        },
    ]


def test_a_call_named_like_a_sender_is_a_generation_error(tmp_path):
    schema = kitchen()
    # The client's kitchen/mood request, renamed so that its handler is "message",
    # the name agent_message's sender has.
    text = json.dumps(schema).replace('"MoodRequest"', '"MessageRequest"').replace("/MoodRequest", "/MessageRequest")
    with pytest.raises(AcpgenError) as info:
        generate(tmp_path, json.loads(text))
    assert "'MessageRequest' would be sent as 'message' by the session's sender" in str(info.value)
