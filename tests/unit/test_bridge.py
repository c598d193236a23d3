"""The bridge's rules file (errors name the file and the rule's JSON pointer)
and its translation of messages, unit by unit: each message of a set is
translated v1 -> v2 -> v1 (and v2 -> v1 -> v2) and must come back as it was,
except for exactly the values recorded as lost."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import acp_v1
import acp_v2
import pytest
from acpgen.bridge import META_KEY, Bridge, load_bridge_rules, sides
from acpgen.compile.passes.rules import builtin_file
from acpgen.errors import AcpgenError

from tests.patience import HANG

SIDES = sides(acp_v1, acp_v2)
RULES = load_bridge_rules(SIDES)


def bridge(client_version: int) -> Bridge:
    return Bridge(SIDES, RULES, client_version)


# -------------------------------------------------------------- the rules file


def write_rules(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bridge.toml"
    base = builtin_file("bridge.toml").read_text(encoding="utf-8")
    path.write_text(base + "\n" + text, encoding="utf-8")
    return path


def test_the_shipped_rules_load():
    assert RULES.renamed == {"authenticate": "auth/login", "logout": "auth/logout"}
    assert RULES.variant("SessionUpdate", 1, "tool_call").v2 == "tool_call_update"
    assert RULES.variant("SessionUpdate", 2, "state_update").handler == "turn_state"


@pytest.mark.parametrize(
    ("text", "pointer", "message"),
    [
        ('[[field]]\ntype = "NoSuchType"\nv1 = "a"\nv2 = "b"\n', "/field/7/type", "no type 'NoSuchType'"),
        ('[[field]]\ntype = "InitializeRequest"\nv1 = "clientInfo"\nv2 = "nope"\n', "/field/7/v2", "no field 'nope'"),
        (
            '[[variant]]\nunion = "SessionUpdate"\nv1 = "plan"\nhandler = "teleport"\n',
            "/variant/6/handler",
            "unknown handler",
        ),
        (
            '[[variant]]\nunion = "SessionUpdate"\nv2 = "no_such_tag"\nhandler = "plan"\n',
            "/variant/6/v2",
            "no variant 'no_such_tag'",
        ),
        ('[[flag]]\ntype = "PromptCapabilities"\nfields = ["smell"]\n', "/flag/3/fields/0", "no field 'smell'"),
        (
            '[[fill]]\ntype = "InitializeRequest"\nversion = 3\nfield = "info"\nvalue = 1\n',
            "/fill/3/version",
            "must be 1 or 2",
        ),
        (
            '[[field]]\ntype = "InitializeRequest"\nv1 = "clientInfo"\nv2 = "info"\ncolour = "red"\n',
            "/field/7/colour",
            "unknown key",
        ),
    ],
)
def test_a_bad_rule_names_the_file_and_the_rule(tmp_path, text, pointer, message):
    path = write_rules(tmp_path, text)
    with pytest.raises(AcpgenError) as error:
        load_bridge_rules(SIDES, path)
    assert error.value.file == str(path)
    assert error.value.pointer == pointer
    assert message in error.value.message
    assert str(error.value).startswith(f"{path}#{pointer}: ")


def test_a_renamed_method_must_exist(tmp_path):
    path = tmp_path / "bridge.toml"
    text = builtin_file("bridge.toml").read_text(encoding="utf-8")
    path.write_text(text.replace('"logout" = "auth/logout"', '"logout" = "auth/leave"'), encoding="utf-8")
    with pytest.raises(AcpgenError) as error:
        load_bridge_rules(SIDES, path)
    assert error.value.pointer == "/methods/renamed/logout"
    assert "no method 'auth/leave' in the v2 schema" in error.value.message


def test_rules_that_are_not_toml_name_the_file(tmp_path):
    path = tmp_path / "bridge.toml"
    path.write_text("[methods\n", encoding="utf-8")
    with pytest.raises(AcpgenError, match="invalid TOML") as error:
        load_bridge_rules(SIDES, path)
    assert error.value.file == str(path)


# -------------------------------------------------------------- round trips


def strip_notes(message):
    """``message`` without the bridge's _meta notes (and a _meta they alone made)."""
    message = copy.deepcopy(message)
    for key in ("params", "result"):
        body = message.get(key)
        if isinstance(body, dict) and isinstance(body.get("_meta"), dict):
            body["_meta"].pop(META_KEY, None)
            if not body["_meta"]:
                del body["_meta"]
    return message


def drop(message, pointers):
    """``message`` without the values at ``pointers`` (JSON pointers)."""
    message = copy.deepcopy(message)
    for pointer in pointers:
        parts = pointer.strip("/").split("/")
        holder = message
        for part in parts[:-1]:
            holder = holder[int(part)] if isinstance(holder, list) else holder[part]
        if isinstance(holder, list):
            del holder[int(parts[-1])]
        else:
            del holder[parts[-1]]
    return message


def client_round_trip(version: int, message: dict):
    """A message of a ``version`` client, there (to an agent of the other
    version) and back (as a client of the other version would send it)."""
    there = bridge(version).from_client(message)
    (onward,) = there.to_agent
    back = bridge(3 - version).from_client(strip_notes(onward))
    (returned,) = back.to_agent
    return strip_notes(returned), [(x.method, x.path) for x in there.lost + back.lost]


def agent_round_trip(version: int, message: dict, setup=()):
    """A message of a ``version`` agent, there and back."""
    first, second = bridge(3 - version), bridge(version)
    for earlier in setup:
        onward_setup = first.from_agent(earlier).to_client
        for item in onward_setup:
            second.from_agent(strip_notes(item))
    there = first.from_agent(message)
    back_messages = []
    lost = [(x.method, x.path) for x in there.lost]
    for item in there.to_client:
        back = second.from_agent(strip_notes(item))
        back_messages.extend(strip_notes(m) for m in back.to_client)
        lost += [(x.method, x.path) for x in back.lost]
    return back_messages, lost


TEXT = {"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 0.5}}

# Client messages of v1, with the values each round trip loses, and why.
V1_CLIENT = [
    # v2's InitializeRequest has `info` and `capabilities` (v1's clientInfo and
    # clientCapabilities renamed); v2 clients have no file system nor terminal
    # (v2 has no fs/* or terminal/* methods), so `fs` and `terminal` are lost.
    (
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": 1,
                "clientInfo": {"name": "c", "version": "1"},
                "clientCapabilities": {"fs": {"readTextFile": True}, "terminal": True, "elicitation": {"form": {}}},
            },
        },
        [("initialize", "/params/clientCapabilities/fs"), ("initialize", "/params/clientCapabilities/terminal")],
    ),
    ({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}, []),
    (
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": "/w", "mcpServers": [{"type": "http", "name": "m", "url": "http://x", "headers": []}]},
        },
        [],
    ),
    ({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s", "_meta": {"k": 1}}}, []),
    ({"jsonrpc": "2.0", "id": 3, "method": "_vendor/thing", "params": {"anything": [1, 2]}}, []),
    ({"jsonrpc": "2.0", "id": 4, "method": "authenticate", "params": {"methodId": "token"}}, []),
]

# Agent messages of v1 (to a v2 client and back).
V1_AGENT = [
    # ContentChunk: v2 requires a messageId, the bridge fills it (nothing lost;
    # the v1 message had none, so the round trip gives the filled one back).
    (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": TEXT},
            },
        },
        [],
    ),
    # v1's tool_call is v2's upsert tool_call_update; back in v1 the first
    # sight of the id is a tool_call again.
    (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "t",
                    "title": "Read",
                    "kind": "read",
                    "status": "pending",
                    "locations": [{"path": "/w/a", "line": 3}],
                    "rawInput": {"path": "/w/a"},
                    "content": [{"type": "content", "content": TEXT}],
                },
            },
        },
        [],
    ),
    # v1's plan is v2's plan_update with an items plan; its planId (made up on
    # the way there) has no v1 counterpart.
    (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "plan",
                    "entries": [{"content": "a", "priority": "high", "status": "pending"}],
                },
            },
        },
        [("session/update", "/params/update/plan/planId")],
    ),
    # current_mode_update: v2 has no session modes.
    (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": {"sessionUpdate": "current_mode_update", "currentModeId": "x"}},
        },
        [("session/update", "/params/update")],
    ),
    # A v1 Diff (path, oldText, newText) has no v2 counterpart (v2 requires a
    # list of `changes`): the tool call's content item is lost.
    (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "t",
                    "content": [{"type": "diff", "path": "/w/a", "newText": "x"}],
                },
            },
        },
        [("session/update", "/params/update/content/0")],
    ),
    # The permission request: v1's toolCall is v2's subject; v2's title is
    # filled from the tool call's title and, being that title, is not lost
    # on the way back.
    (
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "session/request_permission",
            "params": {
                "sessionId": "s",
                "toolCall": {"toolCallId": "t", "title": "Read"},
                "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
            },
        },
        [],
    ),
]

TOOL_CALL = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Read"}},
}


@pytest.mark.parametrize(
    ("message", "lost"), V1_CLIENT, ids=lambda v: v.get("method", "") if isinstance(v, dict) else ""
)
def test_v1_client_messages_round_trip(message, lost):
    returned, recorded = client_round_trip(1, message)
    assert recorded == lost
    expected = drop(message, [p for _, p in lost])
    if message.get("method") == "initialize":
        # v1's default capabilities come back spelled out by nobody: compare what was sent.
        assert returned["params"]["clientInfo"] == expected["params"]["clientInfo"]
        assert returned["params"]["clientCapabilities"] == expected["params"]["clientCapabilities"]
        assert returned["params"]["protocolVersion"] == 1
    else:
        assert returned == expected


@pytest.mark.parametrize(
    ("message", "lost"), V1_AGENT, ids=lambda v: v.get("method", "") if isinstance(v, dict) else ""
)
def test_v1_agent_messages_round_trip(message, lost):
    # A tool call is updated, or asked about, after it started.
    update = message["params"].get("update", {})
    started = message["method"] == "session/request_permission" or update.get("sessionUpdate") == "tool_call_update"
    setup = [TOOL_CALL] if started else []
    returned, recorded = agent_round_trip(1, message, setup)
    assert recorded == lost
    if lost == [("session/update", "/params/update")]:
        assert returned == []
        return
    if lost and lost[0][1].startswith("/params/update/plan"):
        assert returned == [message]
        return
    assert returned == [drop(message, [p for _, p in lost])]


# v2 agent messages (to a v1 client and back), with what each loses.
V2_AGENT = [
    # A v2 tool_call_update of an id never seen is a v1 tool_call (title
    # filled from the id), and back a tool_call_update again; its
    # `capabilities` (v2's tool call cancellation) has no v1 counterpart.
    (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": "t",
                    "title": "Run",
                    "kind": "execute",
                    "capabilities": {},
                },
            },
        },
        [("session/update", "/params/update/capabilities")],
    ),
    # v2's whole agent message is one v1 chunk per block: back in v2 they are
    # chunks, so compare the blocks.
    (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": {"sessionUpdate": "usage_update", "used": 5, "size": 10}},
        },
        [],
    ),
    # running: v1 has no turn state.
    (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": {"sessionUpdate": "state_update", "state": "running"}},
        },
        [("session/update", "/params/update")],
    ),
    # v1 has no terminals in updates, and no appended tool call content.
    (
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "tool_call_content_chunk",
                    "toolCallId": "t",
                    "content": {"type": "content", "content": TEXT},
                },
            },
        },
        [("session/update", "/params/update")],
    ),
    # A permission request whose title is not the tool call's and that has a
    # description: both have no v1 counterpart.
    (
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "session/request_permission",
            "params": {
                "sessionId": "s",
                "title": "May I?",
                "description": "It reads a file",
                "subject": {"type": "tool_call", "toolCall": {"toolCallId": "t"}},
                "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
            },
        },
        [("session/request_permission", "/params/title"), ("session/request_permission", "/params/description")],
    ),
]

V2_TOOL_CALL = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "t", "title": "Read"}},
}


@pytest.mark.parametrize(
    ("message", "lost"), V2_AGENT, ids=lambda v: v.get("method", "") if isinstance(v, dict) else ""
)
def test_v2_agent_messages_round_trip(message, lost):
    setup = [V2_TOOL_CALL] if message["method"] == "session/request_permission" else []
    returned, recorded = agent_round_trip(2, message, setup)
    assert recorded == lost
    if lost == [("session/update", "/params/update")]:
        assert returned == []
        return
    expected = drop(message, [p for _, p in lost])
    if message["method"] == "session/request_permission":
        # v2's title is required: it comes back as the tool call's title.
        expected["params"]["title"] = "Read"
    assert returned == [expected]


# Client messages of v2 (to a v1 agent and back), with what each loses.
V2_CLIENT = [
    # v1's clientInfo and clientCapabilities are v2's info and capabilities;
    # v2's client capabilities (auth, elicitation) are all v1's too.
    (
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": 2,
                "info": {"name": "c", "version": "1"},
                "capabilities": {"elicitation": {"form": {}}},
            },
        },
        [],
    ),
    # v1 requires mcpServers: the bridge fills [] (a fill, not a loss), which
    # comes back; the rest is field for field.
    (
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "additionalDirectories": ["/d"]}},
        [],
    ),
    (
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/prompt",
            "params": {"sessionId": "s", "prompt": [TEXT], "_meta": {"k": 1}},
        },
        [],
    ),
    ({"jsonrpc": "2.0", "id": 3, "method": "_vendor/thing", "params": {"anything": [1, 2]}}, []),
]


@pytest.mark.parametrize(
    ("message", "lost"), V2_CLIENT, ids=lambda v: v.get("method", "") if isinstance(v, dict) else ""
)
def test_v2_client_messages_round_trip(message, lost):
    returned, recorded = client_round_trip(2, message)
    assert recorded == lost
    expected = drop(message, [p for _, p in lost])
    if message["method"] == "session/new":
        expected["params"]["mcpServers"] = []  # filled for v1, kept on the way back
    if message["method"] == "session/prompt":
        # The bridge forwards a v2 client's prompt under its own id (it answers the client at once).
        assert returned["params"] == expected["params"] and returned["method"] == "session/prompt"
    else:
        assert returned == expected


def test_a_v2_client_prompt_is_answered_at_once_and_the_v1_answer_ends_the_turn():
    b = bridge(2)
    routed = b.from_client(
        {"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {"sessionId": "s", "prompt": [TEXT]}}
    )
    (forwarded,) = routed.to_agent
    assert forwarded["id"] != 5 and forwarded["params"]["prompt"] == [TEXT]
    answer, user, running = routed.to_client
    assert answer["id"] == 5 and answer["result"]["messageId"]
    assert user["params"]["update"] == {
        "sessionUpdate": "user_message",
        "messageId": answer["result"]["messageId"],
        "content": [TEXT],
    }
    assert running["params"]["update"] == {"sessionUpdate": "state_update", "state": "running"}
    end = b.from_agent({"jsonrpc": "2.0", "id": forwarded["id"], "result": {"stopReason": "cancelled"}})
    (idle,) = end.to_client
    assert idle["params"]["update"] == {"sessionUpdate": "state_update", "state": "idle", "stopReason": "cancelled"}


def test_a_v1_client_prompt_is_answered_by_the_idle_state_update():
    b = bridge(1)
    (forwarded,) = b.from_client(
        {"jsonrpc": "2.0", "id": 5, "method": "session/prompt", "params": {"sessionId": "s", "prompt": [TEXT]}}
    ).to_agent
    held = b.from_agent({"jsonrpc": "2.0", "id": forwarded["id"], "result": {"messageId": "m"}})
    assert held.to_client == [] and [(x.path, x.value) for x in held.lost] == [("/result/messageId", '"m"')]
    update = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "max_tokens"}
    (answer,) = b.from_agent(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}
    ).to_client
    assert answer == {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "max_tokens"}}


def test_methods_one_version_lacks_are_answered_by_the_bridge():
    routed = bridge(1).from_client(
        {"jsonrpc": "2.0", "id": 3, "method": "session/set_mode", "params": {"sessionId": "s", "modeId": "x"}}
    )
    assert routed.to_agent == []
    (error,) = routed.to_client
    assert error["id"] == 3 and error["error"]["code"] == -32601
    assert [(x.method, x.path) for x in routed.lost] == [("session/set_mode", "")]
    routed = bridge(2).from_agent(
        {"jsonrpc": "2.0", "id": 4, "method": "fs/read_text_file", "params": {"sessionId": "s", "path": "/a"}}
    )
    assert routed.to_client == [] and routed.to_agent[0]["error"]["code"] == -32601


def test_lost_values_are_noted_in_meta():
    routed = bridge(1).from_client(V1_CLIENT[0][0])
    (onward,) = routed.to_agent
    notes = onward["params"]["_meta"][META_KEY]
    assert [(n["direction"], n["path"]) for n in notes] == [
        ("v1->v2", "/params/clientCapabilities/fs"),
        ("v1->v2", "/params/clientCapabilities/terminal"),
    ]
    assert notes[1]["value"] == "true"


# -------------------------------------------------------------- messages the bridge cannot carry


def encoded(messages):
    """``messages`` as the bridge writes them: strict JSON."""
    return json.dumps(messages, allow_nan=False)


def lost_paths(routed):
    return [(item.method, item.path) for item in routed.lost]


def test_a_v1_plan_whose_entries_are_no_list_is_recorded_as_lost():
    routed = bridge(2).from_agent(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": "x"}},
        }
    )
    encoded(routed.to_client)
    assert routed.to_client == []
    assert ("session/update", "/params/update/entries") in lost_paths(routed)


def test_a_v2_plan_update_whose_entries_are_no_list_is_recorded_as_lost():
    update = {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": {"a": 1}}}
    routed = bridge(1).from_agent(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}
    )
    encoded(routed.to_client)
    assert routed.to_client == []
    assert ("session/update", "/params/update/plan/entries") in lost_paths(routed)


@pytest.mark.parametrize("tool_call", [{"title": "x"}, {"toolCallId": 5, "title": "x"}])
def test_a_v1_permission_request_whose_tool_call_has_no_string_id_goes_without_a_subject(tool_call):
    params = {"sessionId": "s", "toolCall": tool_call, "options": []}
    routed = bridge(2).from_agent({"jsonrpc": "2.0", "id": 3, "method": "session/request_permission", "params": params})
    encoded(routed.to_client)
    (request,) = routed.to_client
    assert request["id"] == 3 and "subject" not in request["params"]
    assert ("session/request_permission", "/params/toolCall") in lost_paths(routed)


def test_a_permission_request_whose_params_do_not_translate_is_answered_invalid_params():
    params = {"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": "none"}
    routed = bridge(2).from_agent({"jsonrpc": "2.0", "id": 3, "method": "session/request_permission", "params": params})
    assert routed.to_client == []
    (answer,) = routed.to_agent
    assert answer["id"] == 3 and answer["error"]["code"] == -32602
    assert ("session/request_permission", "") in lost_paths(routed)


def test_a_v2_permission_request_for_a_tool_call_not_seen_yet_announces_it_first():
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "t1", "title": "Run ls"}}
    params = {
        "sessionId": "s",
        "title": "Run ls",
        "subject": subject,
        "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
    }
    routed = bridge(1).from_agent({"jsonrpc": "2.0", "id": 4, "method": "session/request_permission", "params": params})
    encoded(routed.to_client)
    announce, request = routed.to_client
    assert announce["params"]["update"] == {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run ls"}
    assert request["id"] == 4 and request["params"]["toolCall"]["toolCallId"] == "t1"


@pytest.mark.parametrize("client_version", [1, 2])
@pytest.mark.parametrize("sender", ["client", "agent"])
def test_a_request_whose_method_is_no_string_is_answered_invalid_request(client_version, sender):
    b = bridge(client_version)
    receive = b.from_client if sender == "client" else b.from_agent
    routed = receive({"jsonrpc": "2.0", "id": 7, "method": 5, "params": {}})
    back, onward = (routed.to_client, routed.to_agent) if sender == "client" else (routed.to_agent, routed.to_client)
    assert onward == []
    (answer,) = back
    assert answer["id"] == 7 and answer["error"]["code"] == -32600
    assert len(routed.lost) == 1


@pytest.mark.parametrize("sender", ["client", "agent"])
def test_a_notification_whose_method_is_no_string_is_dropped_and_recorded(sender):
    b = bridge(1)
    receive = b.from_client if sender == "client" else b.from_agent
    routed = receive({"jsonrpc": "2.0", "method": ["session/update"], "params": {}})
    assert routed.to_client == [] and routed.to_agent == []
    assert len(routed.lost) == 1


# -------------------------------------------------------------- the bridge between processes

BRIDGE = [sys.executable, "-c", "from acpgen.cli import main; main()", "bridge", "--client-protocol", "v1", "--"]

DEEP_AGENT = textwrap.dedent(
    """
    import sys
    sys.stdout.write("[" * 200000 + "\\n")
    sys.stdout.write('{"jsonrpc":"2.0","method":"_after","params":{}}\\n')
    sys.stdout.flush()
    """
)

ECHO_AGENT = textwrap.dedent(
    """
    import json, sys
    for line in sys.stdin:
        try:
            method = json.loads(line)["method"]
        except Exception:
            method = None
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "_echo", "params": {"method": method}}) + "\\n")
        sys.stdout.flush()
    """
)

NAN_AGENT = textwrap.dedent(
    """
    import sys
    sys.stdout.write('{"jsonrpc":"2.0","method":"_note","params":{"v":NaN}}\\n')
    sys.stdout.write('{"jsonrpc":"2.0","id":1,"method":"_ask","params":{"v":Infinity}}\\n')
    sys.stdout.flush()
    answer = sys.stdin.readline()
    sys.stdout.write('{"jsonrpc":"2.0","method":"_answer","params":' + answer.strip() + '}\\n')
    sys.stdout.flush()
    """
)


def run_bridge(tmp_path, agent: str, client_lines: bytes) -> subprocess.CompletedProcess[bytes]:
    script = tmp_path / "agent.py"
    script.write_text(agent, encoding="utf-8")
    return subprocess.run(
        [*BRIDGE, sys.executable, str(script)], input=client_lines, capture_output=True, timeout=HANG, check=False
    )


def test_a_deeply_nested_line_from_the_agent_is_passed_on_and_the_bridge_goes_on(tmp_path):
    done = run_bridge(tmp_path, DEEP_AGENT, b"")
    assert done.returncode == 0, done.stderr.decode()[-500:]
    assert b'"_after"' in done.stdout
    assert b"no JSON object" in done.stderr


def test_a_deeply_nested_line_from_the_client_is_passed_on_and_the_bridge_goes_on(tmp_path):
    lines = b"[" * 200000 + b"\n" + b'{"jsonrpc":"2.0","method":"_after","params":{}}\n'
    done = run_bridge(tmp_path, ECHO_AGENT, lines)
    assert done.returncode == 0, done.stderr.decode()[-500:]
    echoed = [json.loads(line)["params"]["method"] for line in done.stdout.splitlines()]
    assert echoed == [None, "_after"]


def test_a_message_with_nan_is_never_written_a_request_is_answered_internal_error(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(NAN_AGENT, encoding="utf-8")
    bridge_process = subprocess.Popen(
        [*BRIDGE, sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    watchdog = threading.Timer(HANG, bridge_process.kill)
    watchdog.start()
    try:
        assert bridge_process.stdout is not None and bridge_process.stdin is not None
        line = bridge_process.stdout.readline()  # the only line: the agent's echo of the bridge's answer
        bridge_process.stdin.close()
        rest = bridge_process.stdout.read()
        status = bridge_process.wait()
    finally:
        watchdog.cancel()
    assert status == 0
    answer = json.loads(line)
    assert answer["method"] == "_answer"
    assert answer["params"]["id"] == 1 and answer["params"]["error"]["code"] == -32603
    assert rest == b""
    assert b"NaN" not in line + rest and b"Infinity" not in line + rest


def prompt(b, ident):
    request = {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "session/prompt",
        "params": {"sessionId": "s", "prompt": [TEXT]},
    }
    (forwarded,) = b.from_client(request).to_agent
    return forwarded["id"]


def idle(b, stop):
    update = {"sessionUpdate": "state_update", "state": "idle", "stopReason": stop}
    return b.from_agent({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}})


def test_two_v1_client_prompts_on_a_session_are_each_answered_by_their_own_idle():
    b = bridge(1)
    first, second = prompt(b, 5), prompt(b, 6)
    for ident in (first, second):
        assert b.from_agent({"jsonrpc": "2.0", "id": ident, "result": {"messageId": f"m{ident}"}}).to_client == []
    (answer,) = idle(b, "end_turn").to_client
    assert answer == {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "end_turn"}}
    (answer,) = idle(b, "max_tokens").to_client
    assert answer == {"jsonrpc": "2.0", "id": 6, "result": {"stopReason": "max_tokens"}}


def test_a_v2_agent_refusing_a_second_prompt_leaves_the_first_to_its_idle():
    b = bridge(1)
    first, second = prompt(b, 5), prompt(b, 6)
    error = {"code": -32603, "message": "busy"}
    (refused,) = b.from_agent({"jsonrpc": "2.0", "id": second, "error": error}).to_client
    assert refused == {"jsonrpc": "2.0", "id": 6, "error": error}
    b.from_agent({"jsonrpc": "2.0", "id": first, "result": {"messageId": "m"}})
    (answer,) = idle(b, "end_turn").to_client
    assert answer["id"] == 5


def test_an_idle_before_the_v2_agent_answers_the_prompt_ends_the_turn():
    b = bridge(1)
    ident = prompt(b, 5)
    (answer,) = idle(b, "end_turn").to_client
    assert answer == {"jsonrpc": "2.0", "id": 5, "result": {"stopReason": "end_turn"}}
    late = b.from_agent({"jsonrpc": "2.0", "id": ident, "result": {"messageId": "m"}})
    assert late.to_client == []
    ended = prompt(b, 6)
    idle(b, "cancelled")
    late_error = b.from_agent({"jsonrpc": "2.0", "id": ended, "error": {"code": 1, "message": "x"}})
    assert late_error.to_client == [] and [x.method for x in late_error.lost] == ["session/prompt"]
    late_error = b.from_agent({"jsonrpc": "2.0", "id": prompt(b, 7), "error": {"code": 1, "message": "x"}})
    assert late_error.to_client[0]["id"] == 7


# ------------------------------------------------------------------ what waits for a peer


class _HeldStream:
    """A peer's input that takes nothing until it is let go (a peer that
    stops reading), then everything; or one that is closed (raises)."""

    def __init__(self, closed: bool = False) -> None:
        self.closed = closed
        self.go = threading.Event()
        self.written: list[bytes] = []

    def write(self, data: bytes) -> int:
        if self.closed:
            raise BrokenPipeError
        assert self.go.wait(HANG), "never let go"
        self.written.append(data)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class _Source:
    """``count`` lines of about ``size`` bytes, counting how many were read."""

    def __init__(self, count: int, size: int) -> None:
        self.lines = [
            json.dumps({"jsonrpc": "2.0", "method": "_n", "params": {"i": i, "pad": "x" * size}}).encode() + b"\n"
            for i in range(count)
        ]
        self.read_lines = 0

    def readline(self, limit: int = -1) -> bytes:
        if self.read_lines == len(self.lines):
            return b""
        self.read_lines += 1
        return self.lines[self.read_lines - 1]


def _passed_on(message):
    from acpgen.bridge.translate import Routed

    routed = Routed()
    routed.to_agent.append(message)
    return routed


def test_a_peer_that_stops_reading_stops_its_sender_s_reader_at_the_bound(tmp_path):
    """The client sends 200 lines of about 1 KiB to an agent that reads
    none: the client's reader stops once about 8 KiB wait for the agent (not
    at the end of the client's input), and goes on when the agent reads;
    every line arrives, in order."""
    from acpgen.bridge.proxy import LossLog, Outbox, _writer, pump

    to_agent, to_client = Outbox(8 * 1024), Outbox(8 * 1024)
    agent = _HeldStream()
    agent.go.set()
    # The agent's writer starts once the reader waits: until then nothing
    # takes a line, so the bytes waiting only grow.
    writer = threading.Thread(target=_writer, args=(agent, to_agent), daemon=True)
    source = _Source(200, 1000)
    log = LossLog(str(tmp_path / "lost.jsonl"))
    reader = threading.Thread(
        target=pump, args=(source, _passed_on, (to_agent, to_client), "client", threading.Lock(), log), daemon=True
    )
    reader.start()
    assert to_agent.waiting.wait(HANG), "the reader never waited"
    assert 8 * 1024 < to_agent.size <= 8 * 1024 + 1100
    assert source.read_lines == 8  # 8 KiB waiting and the line that tipped it, not the 200
    writer.start()
    reader.join(HANG)
    assert not reader.is_alive()
    to_agent.put(b"")  # what run() puts last: the writer closes the agent's input
    writer.join(HANG)
    assert [json.loads(line) for line in agent.written] == [json.loads(line) for line in source.lines]
    log.close()


def test_lines_for_a_peer_that_closed_its_input_are_dropped_and_nobody_waits(tmp_path):
    from acpgen.bridge.proxy import LossLog, Outbox, _writer, pump

    to_agent, to_client = Outbox(8 * 1024), Outbox(8 * 1024)
    writer = threading.Thread(target=_writer, args=(_HeldStream(closed=True), to_agent), daemon=True)
    writer.start()
    source = _Source(200, 1000)
    log = LossLog(str(tmp_path / "lost.jsonl"))
    pump(source, _passed_on, (to_agent, to_client), "client", threading.Lock(), log)
    writer.join(HANG)
    assert source.read_lines == 200 and to_agent.stopped and to_agent.size == 0
    log.close()


def test_a_peer_that_stops_reading_holds_only_what_goes_to_it(tmp_path):
    """The client reads nothing while more than the bound waits for it; its
    own messages to the agent still go, and its reader never waits."""
    from acpgen.bridge.proxy import LossLog, Outbox, _writer, pump

    to_agent, to_client = Outbox(8 * 1024), Outbox(8 * 1024)
    client, agent = _HeldStream(), _HeldStream()
    agent.go.set()
    writers = [
        threading.Thread(target=_writer, args=pair, daemon=True) for pair in ((agent, to_agent), (client, to_client))
    ]
    for writer in writers:
        writer.start()
    for line in _Source(20, 1000).lines:  # what the agent sent, waiting for the client
        to_client.put(line)
    source = _Source(50, 1000)
    log = LossLog(str(tmp_path / "lost.jsonl"))
    reader = threading.Thread(
        target=pump, args=(source, _passed_on, (to_agent, to_client), "client", threading.Lock(), log), daemon=True
    )
    reader.start()
    reader.join(HANG)
    assert not reader.is_alive() and source.read_lines == 50
    assert to_client.size > 8 * 1024  # still waiting for the client
    to_agent.put(b"")
    writers[0].join(HANG)
    assert len(agent.written) == 50
    client.go.set()
    to_client.put(b"")
    writers[1].join(HANG)
    assert len(client.written) == 20
    log.close()
