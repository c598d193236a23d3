"""The golden package: ``tests/fixtures/golden/kitchen_sink``, generated from
``tests/kitchen/schema.json``, a small schema with every construct the
generator emits. Any change to the generated output shows up as a diff of
this package, a few files instead of the four ACP packages.

Re-record it after an intended output change::

    ACPGEN_RECORD_GOLDEN=1 .venv/bin/python -m pytest tests/e2e/test_golden.py -q

(or ``acpgen generate --schema tests/kitchen/schema.json --package
kitchen_sink --out tests/fixtures/golden``, which writes the same files).

The rest of the file imports the committed package and decodes and encodes
a value of each construct, in lenient and strict mode, and folds patches and
session updates with it. Its type check (mypy --strict, pyright strict) is
in tests/e2e/test_typecheck.py, one run of each with the ACP packages.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acpgen.output.trees import read_tree
from acpgen.output.write import package_tree, write_packages
from acpgen.pipeline import build_package

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "tests/kitchen/schema.json"
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
PACKAGE = "kitchen_sink"
RECORD = os.environ.get("ACPGEN_RECORD_GOLDEN") == "1"


def test_golden_package_is_what_the_generator_writes() -> None:
    files = build_package(ROOT / SCHEMA, PACKAGE, display_path=SCHEMA)
    if RECORD:
        write_packages(GOLDEN, {PACKAGE: files}, overwrite_edited=True)
    wanted = package_tree(GOLDEN, PACKAGE, files).files  # with the .acpgen marker, as `acpgen check` compares
    committed = read_tree(GOLDEN / PACKAGE)
    assert ".acpgen" in wanted
    stale = sorted(name for name in set(wanted) | set(committed) if wanted.get(name) != committed.get(name))
    assert not stale, f"stale golden files {stale}: re-record with ACPGEN_RECORD_GOLDEN=1 (see this module's docstring)"


@pytest.fixture(scope="module")
def ks() -> ModuleType:
    sys.path.insert(0, str(GOLDEN))
    try:
        return importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(GOLDEN))


WIDGET: dict[str, Any] = {
    "id": "w1",
    "name": "knob",
    "kind": "widget",
    "size": 5,
    "note": None,
    "color": "blue",
    "mood": "calm",
    "level": "info",
    "ratio": 0.5,
    "enabled": True,
    "tags": ["a-b"],
    "aliases": ["x"],
    "labels": {"k": "v"},
    "shape": {"type": "circle", "radius": 1.5},
    "settings": {"mode": "m"},
    "extra": [1, {"two": 2}],
    "_meta": {"a": 1},
}

# (definition, wire value): valid in both modes, decoded and encoded back unchanged.
ROUND_TRIPS: list[tuple[str, Any]] = [
    ("Widget", WIDGET),
    ("Widget", {**WIDGET, "mood": "zany", "shape": None, "settings": [1]}),
    ("Shape", {"type": "square", "side": 3}),
    ("Shape", {"type": "hexagon", "sides": 6, "nested": {"a": [1]}}),
    ("RequestId", 7),
    ("RequestId", "r-7"),
    ("Payload", {"text": "t"}),
    ("Outcome", {"result": {"any": "json"}}),
    ("Outcome", {"error": -32601}),
    ("Outcome", {"error": 42}),
    ("Scope", {"sessionId": "s1"}),
    ("Scope", {"requestId": 3}),
    ("Color", "green"),
    ("Mood", "busy"),
    ("Mood", "_custom"),
    ("Level", "warn"),
    ("Priority", 2),
    ("ErrorCode", -32700),
    ("ErrorCode", 12),
    ("Percent", 100),
    ("Ratio", 1),
    ("Slug", "a1"),
    ("RawSettings", {"mode": "fast"}),
    ("ProtocolVersion", 2),
    (
        "UpdateSessionNotification",
        {"sessionId": "s1", "update": {"sessionUpdate": "state_update", "state": "idle", "stopReason": "done"}},
    ),
    ("UpdateSessionNotification", {"sessionId": "s1", "update": {"sessionUpdate": "state_update", "state": "_paused"}}),
    ("UpdateSessionNotification", {"sessionId": "s1", "update": {"sessionUpdate": "_custom", "x": 1}}),
    (
        "NewSessionRequest",
        {"widget": {"id": "w", "name": "n", "size": 10, "color": "red", "enabled": False}, "scope": None},
    ),
    ("InspectRequest", {"sessionId": "s1", "payload": {"text": "t"}, "shapes": [{"type": "circle", "radius": 0}]}),
    ("CancelRequestNotification", {"requestId": "r1"}),
    ("CancelSessionNotification", {"sessionId": "s1"}),
    ("LogoutAuthRequest", {}),
    ("FieldsNamedLikeBuiltins", {"str": "s", "int": 1, "list": ["a"], "label": "l"}),
]


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
@pytest.mark.parametrize(("name", "wire"), ROUND_TRIPS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ROUND_TRIPS)])
def test_round_trip(ks: ModuleType, name: str, wire: Any, strict: bool) -> None:
    value = ks.decode(name, wire, strict=strict)
    assert ks.encode(value) == wire
    assert ks.decode(name, ks.encode(value), strict=strict) == value


# (definition, wire value, what lenient decoding encodes back): strict mode refuses these.
LENIENT_ONLY: list[tuple[str, Any, Any]] = [
    # x-deserialize-skip-invalid-items: the item that is not a string is dropped
    ("Widget", {"id": "w", "name": "n", "tags": ["ok", 5]}, {"id": "w", "name": "n", "tags": ["ok"]}),
    # x-deserialize-default-on-error: an unknown level is dropped
    ("Widget", {"id": "w", "name": "n", "level": "loud"}, {"id": "w", "name": "n"}),
    # x-deserialize-default-on-null: null is an empty list
    ("Widget", {"id": "w", "name": "n", "aliases": None}, {"id": "w", "name": "n", "aliases": []}),
    # minLength, pattern and minItems are checked in strict mode only
    ("Widget", {"id": "w", "name": ""}, {"id": "w", "name": ""}),
    ("Widget", {"id": "w", "name": "n", "tags": ["BAD"]}, {"id": "w", "name": "n", "tags": ["BAD"]}),
    ("Widget", {"id": "w", "name": "n", "aliases": []}, {"id": "w", "name": "n", "aliases": []}),
    ("Notice", {"title": ""}, {"title": ""}),
    # a _meta that is not an object is dropped (default-on-error)
    (
        "ContentChunk",
        {"messageId": "m", "content": {"type": "text", "text": "t"}, "_meta": 5},
        {"messageId": "m", "content": {"type": "text", "text": "t"}},
    ),
]


@pytest.mark.parametrize(
    ("name", "wire", "lenient"), LENIENT_ONLY, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(LENIENT_ONLY)]
)
def test_lenient_salvages_what_strict_refuses(ks: ModuleType, name: str, wire: Any, lenient: Any) -> None:
    value = ks.decode(name, wire)
    got = ks.encode(value)
    for defaulted in ("size", "color", "enabled"):  # Widget's defaults, filled in by decoding
        if name == "Widget":
            got.pop(defaulted)
    assert got == lenient
    with pytest.raises(ks.ValidationError):
        ks.decode(name, wire, strict=True)


# (definition, wire value): refused in both modes.
INVALID: list[tuple[str, Any]] = [
    ("Widget", {"name": "n"}),  # required
    ("Widget", {"id": "w", "name": "n", "kind": "gadget"}),  # const
    ("Widget", {"id": "w", "name": "n", "size": 0}),  # minimum
    ("Widget", {"id": "w", "name": "n", "size": 1001}),  # maximum
    ("Widget", {"id": "w", "name": "n", "note": 3}),  # nullable string
    ("Shape", {"type": "circle"}),  # a known tag with a bad payload never goes to the catch-all
    ("Shape", {"radius": 1}),  # no tag
    ("RequestId", 1.5),
    ("RequestId", None),
    ("Scope", {"sessionId": "s", "requestId": 1}),  # oneOf: both members accept it
    ("Color", "pink"),
    ("Level", "loud"),
    ("Priority", 3),
    ("Percent", 101),
    ("Ratio", 1.5),
    ("Mood", 3),
    ("RawSettings", {"mode": 1}),  # kept as JSON, checked against its subschema
    ("RawSettings", "text"),
    ("UpdateSessionNotification", {"sessionId": "s1", "update": {"sessionUpdate": "notice"}}),
]


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
@pytest.mark.parametrize(("name", "wire"), INVALID, ids=[f"{n}-{i}" for i, (n, _) in enumerate(INVALID)])
def test_invalid(ks: ModuleType, name: str, wire: Any, strict: bool) -> None:
    with pytest.raises(ks.ValidationError):
        ks.decode(name, wire, strict=strict)


def test_decoded_types(ks: ModuleType) -> None:
    widget = ks.decode("Widget", {"id": "w", "name": "n", "mood": "zany", "color": "blue"})
    assert (widget.size, widget.color, widget.enabled) == (10, ks.Color.BLUE, False)
    assert widget.mood == "zany" and not isinstance(widget.mood, ks.Mood)
    assert widget.note is ks.UNSET
    assert ks.decode("Widget", {"id": "w", "name": "n", "note": None}).note is None
    assert ks.decode("Mood", "calm") is ks.Mood.CALM
    assert isinstance(ks.decode("Shape", {"type": "circle", "radius": 2}), ks.CircleShape)
    other = ks.decode("Shape", {"type": "hexagon", "sides": 6})
    assert other.type == "hexagon" and other.extra == {"sides": 6}
    assert ks.decode("Outcome", {"error": -32601}).error is ks.ErrorCode.METHOD_NOT_FOUND
    assert isinstance(ks.decode("Scope", {"requestId": 1}), ks.RequestScope)
    # first match: a member with no required keys takes any object
    assert isinstance(ks.decode("Payload", {"count": 3}), ks.TextPayload)
    assert ks.decode("Level", "debug") is ks.Level.DEBUG
    assert ks.decode("Priority", 1) is ks.Priority.LOW


def test_encode_validate_refuses_a_catch_all_with_a_known_tag(ks: ModuleType) -> None:
    other = ks.decode("Shape", {"type": "hexagon"})
    other.type = "circle"
    with pytest.raises(ks.ValidationError):
        ks.encode(other, validate=True)


def test_method_table(ks: ModuleType) -> None:
    sides = {name: (info.request or info.notification).side for name, info in ks.METHODS.items()}
    assert sides == {
        "session/new": "agent",
        "auth/logout": "agent",
        "kitchen/inspect": "client",
        "session/cancel": "agent",
        "session/update": "client",
        "$/cancel_request": "protocol",
    }
    assert {name for name, info in ks.METHODS.items() if info.request} == {
        "session/new",
        "auth/logout",
        "kitchen/inspect",
    }


def test_patch_rules(ks: ModuleType) -> None:
    state = ks.apply_tool_call_update(
        None, ks.decode("ToolCallUpdate", {"toolCallId": "c1", "kind": "read", "title": "t"})
    )
    assert (state.kind, state.status, state.title) == (ks.ToolKind.READ, ks.ToolCallStatus.PENDING, "t")
    state = ks.apply_tool_call_update(
        state, ks.decode("ToolCallUpdate", {"toolCallId": "c1", "kind": None, "title": None})
    )
    assert (state.kind, state.title) == (ks.ToolKind.OTHER, None)  # null-resets and null-clears


def _update(ks: ModuleType, session: Any, update: dict[str, Any]) -> Any:
    notification = ks.decode("UpdateSessionNotification", {"sessionId": "s1", "update": update}, strict=True)
    return ks.Session.apply_session_update(session, notification)


def test_session_fold(ks: ModuleType) -> None:
    s = None
    for update in [
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "a"}},
        {"sessionUpdate": "agent_message_chunk", "messageId": "m1", "content": {"type": "text", "text": "b"}},
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "run"},
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c1",
            "content": {"type": "content", "content": {"type": "text", "text": "out"}},
        },
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "aGk="},
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "IQ=="},
        {"sessionUpdate": "plan_update", "plan": {"planId": "p1", "entries": [{"content": "do", "priority": 1}]}},
        {"sessionUpdate": "usage_update", "used": 1, "size": 10},
        {"sessionUpdate": "notice", "title": "hello", "level": "info"},
        {"sessionUpdate": "state_update", "state": "running"},
        {"sessionUpdate": "_custom", "x": 1},
    ]:
        s = _update(ks, s, update)
    assert s is not None
    assert [block.text for block in s.agent_messages["m1"].content] == ["a", "b"]
    assert s.tool_calls["c1"].title == "run" and len(s.tool_calls["c1"].content) == 1
    assert s.terminals["t1"].output.data == "aGkh"  # base64 of b"hi!"
    assert s.plans["p1"].entries[0].priority is ks.Priority.LOW
    assert (s.usage.used, s.usage.size) == (1, 10)
    assert [n.title for n in s.notices] == ["hello"]
    assert isinstance(s.state, ks.StateUpdateRunning)
    assert len(s.unrecognized) == 1
    assert ks.session_to_json(ks.session_from_json(ks.session_to_json(s))) == ks.session_to_json(s)
