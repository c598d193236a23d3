"""The golden package: ``tests/fixtures/golden/kitchen_sink``, generated from
``tests/kitchen/schema.json``, a small schema with every construct the
generator emits. Any change to the generated output shows up as a diff of
this package, a few files instead of the four ACP packages.

Re-record it after an intended output change::

    ACPGEN_RECORD_GOLDEN=1 .venv/bin/python -m pytest tests/e2e/test_golden.py -q

(or ``acpgen generate --schema tests/kitchen/schema.json --package
kitchen_sink --out tests/fixtures/golden``, which writes the same files).

The rest of the file decodes and encodes a value of each construct, in
lenient and strict mode, and folds patches and session updates, with the
committed package and with the package the compiler generates now (into a
temporary directory: a compiler change that alters behaviour fails there,
not only in the byte comparison above). The expected values come from the
schema's semantics and the Rust reference's serde behaviour.
``test_the_kitchen_holds_every_ir_kind_and_flag_value`` holds the kitchen
schema to every construct the IR distinguishes. Its type check (mypy --strict, pyright strict) is
in tests/e2e/test_typecheck.py, one run of each with the ACP packages.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import inspect
import itertools
import os
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from acpgen.compile import ir
from acpgen.compile.ir import defs as ir_defs
from acpgen.compile.ir import methods as ir_methods
from acpgen.compile.ir import patch as ir_patch
from acpgen.compile.ir import session as ir_session
from acpgen.compile.ir import types as ir_types
from acpgen.compile.load import load_schema
from acpgen.output.trees import read_tree
from acpgen.output.write import package_tree, write_packages
from acpgen.pipeline import build_ir, build_package

from ..patience import HANG

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


@pytest.fixture(scope="module", params=["committed", "fresh"])
def ks(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The kitchen package: the committed golden, and the package the
    compiler as it is now generates (``fresh``), so that a change to the
    compiler that changes behaviour fails the tests below, not only the
    golden's byte comparison."""
    if request.param == "committed":
        root, name = GOLDEN, PACKAGE
    else:
        root, name = tmp_path_factory.mktemp("kitchen"), "kitchen_fresh"
        write_packages(root, {name: build_package(ROOT / SCHEMA, name, display_path=SCHEMA)})
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(root))


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

TITLED: dict[str, Any] = {"options": [{"const": "a", "title": "A"}]}
BARE_WIDGET: dict[str, Any] = {"id": "w", "name": "n", "size": 10, "color": "red", "enabled": False}
# What decoding Options fills in: its schema defaults.
OPTIONS_DEFAULTS: dict[str, Any] = {
    "circle": {"radius": 1},
    "empty": {},
    "colors": ["red", "blue"],
    "tint": "green",
    "words": ["a"],
    "counts": {"x": 1},
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
    ("ThreadId", "t1"),
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
    # a tagged union with a catch-all and an untagged fallback
    ("Choices", {"type": "string", "values": ["a", "b"]}),
    ("Choices", TITLED),
    ("Choices", {"type": "_custom", "x": 1}),
    # a tagged union with an untagged fallback and no catch-all
    ("Signal", {"kind": "ping"}),
    ("Signal", {"text": "hi"}),
    # a tagged union with a member whose tag is null or absent
    ("Beat", {"tempo": "fast"}),
    ("Beat", {}),
    ("Beat", {"tempo": None, "count": 3}),
    # shared fields, a lenient tag, a null tag and a catch-all
    ("Halt", {"reason": "done", "note": "n"}),
    ("Halt", {"reason": "failed", "error": -32700}),
    ("Halt", {"reason": "_x", "k": 1}),
    ("Halt", {}),
    ("Halt", {"reason": None, "note": None}),
    # flattened scopes
    ("Ask", {"message": "m", "sessionId": "s"}),
    ("Ask", {"message": "m", "requestId": 1}),
    ("Tell", {"message": "m", "requestId": "r"}),
    ("Amount", 1.5),
    ("Sealed", {"seal": "s"}),
    ("Nothing", {}),
    ("Labels", {"a": "b"}),
    ("Anything", [1, {"a": None}]),
    ("WidgetRef", BARE_WIDGET),
    ("ForwardRequest", {"widget": BARE_WIDGET}),
    ("ForwardResponse", {"forwarded": True}),
    ("PromptRequest", {"sessionId": "s", "mode": "text", "text": "t"}),
    ("PromptRequest", {"sessionId": "s", "mode": "widget", "widget": BARE_WIDGET}),
    ("MoodResponse", "glad"),
    ("Options", OPTIONS_DEFAULTS),
    (
        "Options",
        {
            **OPTIONS_DEFAULTS,
            "hints": ["h"],
            "env": {"K": "v"},
            "flag": None,
            "weight": 0.5,
            "limit": None,
            "nothing": None,
            "lookup": {"c": {"radius": 2}},
            "choices": {"type": "string", "values": []},
            "menu": [TITLED, {"type": "_x"}, {"type": "string", "values": ["v"]}],
        },
    ),
    ("Options", {**OPTIONS_DEFAULTS, "flag": True, "limit": 7, "colors": [], "counts": {}}),
    ("Listing", {"entries": ["e"], "pin": "p"}),
]

# (definition, wire value, what it encodes back as): valid in both modes, and
# decoded to a value that does not hold all of it.
NORMALISED: list[tuple[str, Any, Any]] = [
    # the "string" member refuses it (no `values`) and the catch-all excludes
    # "string": the untagged member takes it, and it declares no `type`
    ("Choices", {"type": "string", **TITLED}, TITLED),
    ("Options", {"choices": {"type": "string", **TITLED}}, {**OPTIONS_DEFAULTS, "choices": TITLED}),
    ("Options", {"menu": [{"type": "string", **TITLED}]}, {**OPTIONS_DEFAULTS, "menu": [TITLED]}),
    # a tag that is not a string: neither the tagged members nor the catch-all
    ("Choices", {"type": 5, **TITLED}, TITLED),
    ("Options", {"choices": {"type": 5, **TITLED}}, {**OPTIONS_DEFAULTS, "choices": TITLED}),
    # an unknown tag, no catch-all: the untagged member
    ("Signal", {"kind": "pong", "text": "hi"}, {"text": "hi"}),
    # anyOf: the first scope whose keys are there
    ("Tell", {"message": "m", "sessionId": "s", "requestId": 1}, {"message": "m", "sessionId": "s"}),
    # a required key without a property: checked, not kept
    ("Stamped", {"seal": "s", "stamp": 1}, {"seal": "s"}),
    # defaults filled in: objects, lists of enum members, maps
    ("Options", {}, OPTIONS_DEFAULTS),
]


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
@pytest.mark.parametrize(
    ("name", "wire", "encoded"), NORMALISED, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(NORMALISED)]
)
def test_normalised(ks: ModuleType, name: str, wire: Any, encoded: Any, strict: bool) -> None:
    assert ks.encode(ks.decode(name, wire, strict=strict)) == encoded


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
    ("Slug", "BAD", "BAD"),
    # a _meta that is not an object is dropped (default-on-error)
    (
        "ContentChunk",
        {"messageId": "m", "content": {"type": "text", "text": "t"}, "_meta": 5},
        {"messageId": "m", "content": {"type": "text", "text": "t"}},
    ),
    # default-on-error on a list without a default: an invalid value is an
    # empty list (serde's Default), an invalid item invalidates the list
    ("Options", {"hints": 5}, {**OPTIONS_DEFAULTS, "hints": []}),
    ("Options", {"hints": ["a", 1]}, {**OPTIONS_DEFAULTS, "hints": []}),
    ("Options", {"hints": None}, {**OPTIONS_DEFAULTS, "hints": []}),
    # default-on-null on a map: null is an empty map
    ("Options", {"env": None}, {**OPTIONS_DEFAULTS, "env": {}}),
    # the same on a required list (v1's Plan.entries): serde's Default, []
    ("Listing", {"entries": {"not": "a list"}, "pin": "p"}, {"entries": [], "pin": "p"}),
    # a tag that is default-on-error: a malformed one counts as absent, which
    # selects the member whose tag is null
    ("Halt", {"reason": 5, "note": "n"}, {"note": "n"}),
    # a closed object: lenient mode ignores other keys
    ("Sealed", {"seal": "s", "other": 1}, {"seal": "s"}),
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


# (definition, wire value): valid JSON Schema (`format` is an annotation), but
# beyond the Rust integer type the format names, which lenient mode refuses
# as the reference's serde does.
STRICT_ONLY: list[tuple[str, Any]] = [
    ("ErrorCode", 2**31),  # the open enum's catch-all is int32
    ("ErrorCode", -(2**31) - 1),
    ("Outcome", {"error": 2**31}),
    ("Square", {"side": 2**32}),  # uint32
]


@pytest.mark.parametrize(("name", "wire"), STRICT_ONLY, ids=[f"{n}-{i}" for i, (n, _) in enumerate(STRICT_ONLY)])
def test_strict_keeps_what_the_rust_type_cannot_hold(ks: ModuleType, name: str, wire: Any) -> None:
    assert ks.encode(ks.decode(name, wire, strict=True)) == wire
    with pytest.raises(ks.ValidationError):
        ks.decode(name, wire)


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
    # neither the "string" member (an item is not a string) nor the untagged one (no options)
    ("Choices", {"type": "string", "values": [1]}),
    ("Options", {"choices": {"type": "string", "values": [1]}}),
    ("Options", {"menu": [{"type": "string", "values": [1]}]}),
    ("Choices", {}),  # no tag: the untagged member, which needs options
    ("Signal", {"kind": "pong"}),  # an unknown tag, and no text for the untagged member
    ("Beat", {"tempo": "slow"}),  # an unknown tag, no catch-all, no untagged member
    ("Beat", {"tempo": 5}),  # a tag neither a string nor null
    ("Halt", {"reason": "failed"}),  # the failed member needs error
    ("Ask", {"message": "m", "sessionId": "s", "requestId": 1}),  # oneOf: both scopes
    ("Ask", {"message": "m"}),  # no scope
    ("Tell", {"message": "m"}),
    ("Amount", 2),  # oneOf: an integer is a number too
    ("Amount", "2"),
    ("Stamped", {"seal": "s"}),  # required, though not a property
    ("Options", {"nothing": 1}),
    ("Labels", {"a": 1}),
    ("MoodResponse", "meh"),
    ("Slug", 5),
    ("ThreadId", None),
    ("Listing", {"pin": "p"}),  # required, though an invalid value would be salvaged
    # required, default-on-error, not a list, no schema default: nothing to fall back to
    ("Listing", {"entries": [], "pin": 5}),
]


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
@pytest.mark.parametrize(("name", "wire"), INVALID, ids=[f"{n}-{i}" for i, (n, _) in enumerate(INVALID)])
def test_invalid(ks: ModuleType, name: str, wire: Any, strict: bool) -> None:
    with pytest.raises(ks.ValidationError):
        ks.decode(name, wire, strict=strict)


def test_named_string_types_are_new_types_over_str(ks: ModuleType) -> None:
    """A definition that is a plain string, constrained or not, is a NewType
    over ``str``; an alias of one is that type; nothing else is a NewType.
    At run time the values are the plain strings."""
    named = {n for n in ks.__all__ if isinstance(getattr(ks, n), typing.NewType)}
    assert named == {"SessionId", "MessageId", "ToolCallId", "TerminalId", "Slug", "ThreadId"}
    assert ks.ThreadId is ks.SessionId  # an alias: the same type under another name
    assert all(getattr(ks, n).__supertype__ is str for n in named)
    assert ks.Slug("a1") == "a1" and type(ks.Slug("a1")) is str
    widget = ks.decode("Widget", {"id": "w", "name": "n", "tags": ["a1"]})
    assert type(widget.id) is str and type(widget.tags[0]) is str
    wire = {"id": "w", "name": "n", "size": 10, "color": "red", "enabled": False}
    assert ks.encode(ks.Widget(id="w", name="n")) == wire  # a constructor takes a plain str


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


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_decoded_types_of_the_union_shapes(ks: ModuleType, strict: bool) -> None:
    def decode(name: str, wire: Any) -> Any:
        return ks.decode(name, wire, strict=strict)

    refused = {"type": "string", **TITLED}
    for choices in (
        decode("Choices", refused),
        decode("Options", {"choices": refused}).choices,
        decode("Options", {"menu": [refused]}).menu[0],
    ):
        assert isinstance(choices, ks.TitledChoices) and choices.options == [ks.Choice(const="a", title="A")]
    assert isinstance(decode("Choices", {"type": "string", "values": []}), ks.StringChoices)
    other = decode("Options", {"choices": {"type": "_x", "y": 1}}).choices
    assert isinstance(other, ks.OtherChoices) and (other.type, other.extra) == ("_x", {"y": 1})
    assert isinstance(decode("Signal", {"kind": "ping", "text": "t"}), ks.PingSignal)
    assert isinstance(decode("Signal", {"kind": "pong", "text": "t"}), ks.TextSignal)
    beat = decode("Beat", {"count": 2})
    assert isinstance(beat, ks.NoneBeat) and beat.tempo is ks.UNSET and beat.count == 2
    assert decode("Beat", {"tempo": None}).tempo is None
    assert isinstance(decode("Halt", {}), ks.NoneHalt)
    failed = decode("Halt", {"reason": "failed", "error": -32700, "note": "x"})
    assert isinstance(failed, ks.FailedHalt) and failed.error is ks.ErrorCode.PARSE_ERROR and failed.note == "x"
    assert decode("Halt", {"reason": "_x"}).reason == "_x"
    ask = decode("Ask", {"message": "m", "requestId": "r"})
    assert isinstance(ask.scope, ks.RequestScope) and ask.scope.request_id == "r"
    assert isinstance(decode("Tell", {"message": "m", "sessionId": "s", "requestId": 1}).scope, ks.SessionScope)
    assert type(decode("Amount", 1.5)) is float
    assert isinstance(decode("WidgetRef", BARE_WIDGET), ks.Widget)
    assert isinstance(decode("ForwardRequest", {"widget": BARE_WIDGET}), ks.NewSessionRequest)
    assert isinstance(decode("PromptRequest", {"sessionId": "s", "mode": "text"}), ks.TextPromptRequest)
    assert decode("MoodResponse", "sad") is ks.MoodResponse.SAD


def test_defaults_are_fresh_objects(ks: ModuleType) -> None:
    a, b = ks.decode("Options", {}), ks.decode("Options", {})
    assert a.circle == ks.Circle(radius=1) and isinstance(a.empty, ks.TextPayload)
    assert a.colors == [ks.Color.RED, ks.Color.BLUE] and a.counts == {"x": 1}
    assert a.tint is ks.Color.GREEN and ks.Options().tint is ks.Color.GREEN  # through the alias Tint
    assert a.circle is not b.circle and a.colors is not b.colors and a.counts is not b.counts
    assert all(type(c) is ks.Color for c in a.colors)  # members, not their strings
    built, other = ks.Options(), ks.Options()
    assert (
        built.circle == ks.Circle(radius=1) and built.words == ["a"] and built.colors == [ks.Color.RED, ks.Color.BLUE]
    )
    for name in ("circle", "empty", "colors", "words", "counts"):  # built afresh for each instance
        assert getattr(built, name) is not getattr(other, name), name
    built.circle.radius = 5
    assert other.circle.radius == 1 and ks.Options().circle.radius == 1


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
        "proxy/forward": "proxy",
        "proxy/initialize": "proxy",
        "proxy/successor": "proxy",
        "kitchen/prompt": "client",
        "kitchen/mood": "client",
        "initialize": "agent",
        "session/resume": "agent",
    }
    assert {name for name, info in ks.METHODS.items() if info.request} == {
        "initialize",
        "session/resume",
        "session/new",
        "auth/logout",
        "kitchen/inspect",
        "proxy/forward",
        "proxy/initialize",
        "proxy/successor",
        "kitchen/prompt",
        "kitchen/mood",
    }
    # what each gated method needs the peer to advertise: named in a "Whether
    # the ... supports" paragraph, or by rules/capabilities.toml (authMethods)
    assert ks.REQUIRES == {
        "session/resume": ("agentCapabilities", "session"),
        "auth/logout": ("authMethods",),
        "kitchen/inspect": ("clientCapabilities", "inspect"),
    }


def test_a_schema_with_a_proxy_chain_gets_the_proxy_module(ks: ModuleType) -> None:
    assert ks.METHODS["proxy/successor"].notification is not None
    assert ks.ProxySideConnection.codec is ks.CODEC
    assert ks.ProxySideConnection.interface is ks.Proxy
    assert {"ChainEnded", "Conductor", "conduct", "run_proxy_stdio"} <= set(dir(ks))
    assert (GOLDEN / "kitchen_sink" / "_proxy.py").is_file() and (GOLDEN / "kitchen_sink" / "_conductor.py").is_file()


def test_patch_rules(ks: ModuleType) -> None:
    state = ks.apply_tool_call_update(
        None, ks.decode("ToolCallUpdate", {"toolCallId": "c1", "kind": "read", "title": "t"})
    )
    assert (state.kind, state.status, state.title) == (ks.ToolKind.READ, ks.ToolCallStatus.PENDING, "t")
    state = ks.apply_tool_call_update(
        state, ks.decode("ToolCallUpdate", {"toolCallId": "c1", "kind": None, "title": None})
    )
    assert (state.kind, state.title) == (ks.ToolKind.OTHER, None)  # null-resets and null-clears


def test_a_field_no_patch_rule_names_gets_the_general_rule(ks: ModuleType) -> None:
    """Omitted keeps the stored value, null clears it, a value replaces it."""
    state = None
    seen = []
    for update in [
        {"toolCallId": "c1", "progressNote": "half"},
        {"toolCallId": "c1"},
        {"toolCallId": "c1", "progressNote": "most"},
        {"toolCallId": "c1", "progressNote": None},
    ]:
        state = ks.apply_tool_call_update(state, ks.decode("ToolCallUpdate", update))
        seen.append(state.progress_note)
    assert seen == ["half", "half", "most", None]


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


# ---------------------------------------------------------------- IR coverage
#
# The kitchen sink must hold every construct the lowering distinguishes: each
# kind of type expression, definition and default value, and each value of
# every flag of the IR's type and definition classes (a ``bool``, a
# ``Literal``, an optional or a tuple field or property: both true and false,
# every literal, both None and set, both empty and not), read from the classes
# themselves, so that a kind or a flag added to the IR fails here until the
# kitchen has a case.

_NOT_FLAGS = {"description", "open_description", "title"}
"""Optional fields that document a definition: no construct of their own."""
_NEVER: dict[str, str] = {
    "ScalarUnionT.members = 'empty'": "a union has members",
    "FirstMatchT.members = 'empty'": "a union has members",
    "KeyedT.refs = 'empty'": "a keyed union has members",
    "KeyedT.keys = 'empty'": "a keyed union has members",
    "KeyedT.wire_names = 'empty'": "a keyed union's members have properties",
    "EnumDef.members = 'empty'": "an enum has members",
    "UnionDef.variants = 'empty'": "a union has members",
    "ListValue.items = 'empty'": "an empty list default is a JsonValue",
}
"""Values no schema gives an attribute, and why."""


class _Flag(typing.NamedTuple):
    values: tuple[object, ...]
    """The values the kitchen must give the attribute ..."""
    observe: Callable[[object], object]
    """... as told from the attribute's value."""


def _same(value: object) -> object:
    return value


def _flag(annotation: Any) -> _Flag | None:
    """What a coverage check wants of an attribute of this type, or None
    when the attribute is not a flag."""
    if annotation is bool:
        return _Flag((False, True), _same)
    if typing.get_origin(annotation) is tuple:
        return _Flag(("empty", "nonempty"), lambda v: "nonempty" if v else "empty")
    if typing.get_origin(annotation) is typing.Literal:
        return _Flag(typing.get_args(annotation), _same)
    args = typing.get_args(annotation)
    if type(None) in args and typing.get_origin(annotation) in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and typing.get_origin(rest[0]) is typing.Literal:
            return _Flag((None, *typing.get_args(rest[0])), _same)
        return _Flag(("None", "set"), lambda v: "None" if v is None else "set")
    return None


def _flags(cls: type) -> dict[str, _Flag]:
    """Every flag of an IR class: its fields and properties that are flags."""
    out: dict[str, _Flag] = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        flag = _flag(hints.get(f.name))
        if flag is not None and f.name not in _NOT_FLAGS:
            out[f.name] = flag
    for name, member in inspect.getmembers(cls, lambda m: isinstance(m, property)):
        flag = _flag(typing.get_type_hints(member.fget).get("return"))
        if flag is not None:
            out[name] = flag
    return out


def _walk(node: object, found: dict[type, list[object]]) -> None:
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        found.setdefault(type(node), []).append(node)
        for f in dataclasses.fields(node):
            _walk(getattr(node, f.name), found)
        # the __init__ parameters the IR computes for each class
        if isinstance(node, ir.ObjectDef):
            _walk(node.init_params, found)
        if isinstance(node, ir.UnionDef):
            for variant in node.variants:
                _walk(node.init_params(variant), found)
    elif isinstance(node, (tuple, list)):
        for item in node:
            _walk(item, found)


def _ir_classes(*modules: ModuleType) -> list[type]:
    return [
        c
        for module in modules
        for c in vars(module).values()
        if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == module.__name__
    ]


def test_the_kitchen_holds_every_ir_kind_and_flag_value() -> None:
    package = build_ir(load_schema(ROOT / SCHEMA), PACKAGE)
    found: dict[type, list[object]] = {}
    _walk((package.definitions, package.fallbacks), found)
    missing: list[str] = []
    for union in (ir.TypeExpr, ir.Definition, ir.Value):
        missing += [f"kind {c.__name__}" for c in typing.get_args(union) if c not in found]
    for cls in _ir_classes(ir_types, ir_defs):
        for name, flag in _flags(cls).items():
            seen = {flag.observe(getattr(obj, name)) for obj in found.get(cls, ())}
            missing += [f"{cls.__name__}.{name} = {v!r}" for v in flag.values if v not in seen]
    missing = [m for m in missing if m not in _NEVER]
    # Which members a tagged union has besides the tagged ones picks its
    # decoder's branches: every combination the lowering accepts.
    role_sets = {
        frozenset(v.role for v in d.variants) - {ir.TAGGED}
        for d in package.definitions
        if isinstance(d, ir.UnionDef) and d.tag is not None
    }
    others = (ir.CATCH_ALL, ir.UNTAGGED, ir.NULL_TAG)
    for combination in itertools.chain.from_iterable(itertools.combinations(others, n) for n in range(3)):
        if {ir.UNTAGGED, ir.NULL_TAG} <= set(combination):
            continue  # refused by the lowering
        if frozenset(combination) not in role_sets:
            missing.append(f"a tagged union with {sorted(combination) or 'only tagged members'}")
    assert not missing, f"the kitchen schema has no case of: {missing}"


def _joined(ks: ModuleType, answer: Any, advertise: Any, client_class: Any = None) -> Any:
    """An agent answering ``initialize`` with ``answer`` and a client
    advertising ``advertise``, joined in memory and initialized; the
    coroutine gives them with what each handler received."""
    seen: list[Any] = []

    class Agent(ks.Agent):
        def __init__(self, conn: Any) -> None:
            self.conn = conn

        async def initialize(self, params: Any) -> Any:
            return answer

        async def resume_session(self, params: Any) -> Any:
            seen.append(params)
            return ks.ResumeSessionResponse()

        async def logout(self, params: Any) -> Any:
            seen.append(params)
            return ks.LogoutAuthResponse()

    class Client(ks.Client):
        def __init__(self, conn: Any) -> None:
            self.conn = conn

        async def prompt(self, params: Any) -> Any:
            seen.append(params)
            return ks.PromptResponse(answer=params.text)

        async def mood(self, params: Any) -> Any:
            seen.append(params)
            return ks.MoodResponse.SAD

        async def inspect(self, params: Any) -> Any:
            seen.append(params)
            return ks.InspectResponse(outcome=ks.Success(result=1))

    async def join() -> tuple[Any, Any, list[Any]]:
        agent, client = ks.connect_in_memory(Agent, client_class or Client, validate_outgoing=True)
        try:
            await client.initialize(ks.InitializeRequest(protocol_version=2, client_capabilities=advertise))
        except BaseException:
            await client.close()
            await agent.close()
            raise
        return agent, client, seen

    return join()


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, HANG))


def test_a_union_as_params_and_an_enum_as_result_over_a_connection(ks: ModuleType) -> None:
    """``kitchen/prompt`` takes a union (the variant travels as itself),
    ``kitchen/mood`` answers with an enum member; both checked on the way out."""

    async def main() -> tuple[Any, Any, list[Any]]:
        agent, client, seen = await _joined(ks, ks.InitializeResponse(protocol_version=2), ks.ClientCapabilities())
        try:
            answer = await agent.prompt(ks.TextPromptRequest(session_id="s", text="hi"))
            mood = await agent.mood(ks.MoodRequest(session_id="s"))
            return answer, mood, seen
        finally:
            await client.close()
            await agent.close()

    answer, mood, seen = _run(main())
    assert answer == ks.PromptResponse(answer="hi")
    assert mood is ks.MoodResponse.SAD
    assert seen == [ks.TextPromptRequest(session_id="s", text="hi"), ks.MoodRequest(session_id="s")]


def test_gated_methods_need_what_the_peer_advertised(ks: ModuleType) -> None:
    """A method behind a capability the peer did not advertise raises
    CapabilityError before anything is sent: a presence capability
    (``session``: ``{}`` advertises it), a flag (``inspect``) and a rule
    (``auth/logout`` needs ``authMethods``)."""

    async def main(advertised: bool) -> list[Any]:
        answer = ks.InitializeResponse(
            protocol_version=2,
            agent_capabilities=ks.AgentCapabilities(session=ks.SessionCapabilities() if advertised else ks.UNSET),
            auth_methods=["token"] if advertised else [],
        )
        agent, client, seen = await _joined(ks, answer, ks.ClientCapabilities(inspect=advertised))
        out: list[Any] = []
        try:
            for call in (
                lambda: client.resume_session(ks.ResumeSessionRequest(session_id="s")),
                lambda: client.logout(ks.LogoutAuthRequest()),
                lambda: agent.inspect(ks.InspectRequest(session_id="s", payload=ks.TextPayload(text="t"))),
            ):
                try:
                    out.append(await call())
                except ks.CapabilityError as error:
                    out.append(type(error))
            return [out, seen]
        finally:
            await client.close()
            await agent.close()

    refused, seen = _run(main(False))
    assert refused == [ks.CapabilityError] * 3 and seen == []
    answered, seen = _run(main(True))
    assert answered == [
        ks.ResumeSessionResponse(),
        ks.LogoutAuthResponse(),
        ks.InspectResponse(outcome=ks.Success(result=1)),
    ]
    assert len(seen) == 3


def test_advertising_a_capability_without_its_handler_is_refused(ks: ModuleType) -> None:
    class Bare(ks.Client):  # no inspect handler
        def __init__(self, conn: Any) -> None:
            self.conn = conn

    with pytest.raises(ks.HandlerError):
        _run(_joined(ks, ks.InitializeResponse(protocol_version=2), ks.ClientCapabilities(inspect=True), Bare))


def test_supports_reads_presence_and_flag_capabilities(ks: ModuleType) -> None:
    """A presence capability is supported when it is an object, even ``{}``
    (not when omitted or null); a flag when it is true."""

    def agent(wire: dict[str, Any]) -> bool:
        return bool(ks.supports(ks.decode("AgentCapabilities", wire), "session"))

    assert (agent({"session": {}}), agent({"session": None}), agent({})) == (True, False, False)
    assert ks.supports(ks.decode("AgentCapabilities", {"logout": {}}), "logout") is True
    assert ks.supports(ks.decode("ClientCapabilities", {"inspect": True}), "inspect") is True
    assert ks.supports(ks.decode("ClientCapabilities", {}), "inspect") is False
    with pytest.raises(KeyError):
        ks.supports(ks.ClientCapabilities(), "session")


_OTHER_RULES: dict[str, str] = {
    "Mark.side = None": "an x-method without x-side is an error the method table reports",
    "Gate.side = 'protocol'": "a gate is advertised in initialize's params (client) or result (agent)",
    "Gate.side = 'proxy'": "a gate is advertised in initialize's params (client) or result (agent)",
    "SessionField.container = 'messages'": "v1 rules: the kitchen is a v2 schema",
    "SessionAction.action = 'message-chunk'": "v1 rules: the kitchen is a v2 schema",
    "SessionAction.replaces = True": "v1 rules (tool_call, a full snapshot): the kitchen is a v2 schema",
    "PatchField.everywhere = False": "v1 rules (an upsert taking two classes): the kitchen is a v2 schema",
    "SessionAction.action = 'remove'": "v2_unstable rules (plan_removed): the kitchen is a stable v2 schema",
}
"""Values the kitchen cannot give, and why (the rule sets are covered by the
ACP packages' own tests)."""


def test_the_kitchen_holds_every_method_patch_and_session_flag_value() -> None:
    """The same for the method table, the patch rules and the session fold:
    every ``bool`` and ``Literal`` attribute of their IR classes, but for
    what only another rule set has (:data:`_OTHER_RULES`)."""
    package = build_ir(load_schema(ROOT / SCHEMA), PACKAGE)
    found: dict[type, list[object]] = {}
    _walk(package, found)
    missing: list[str] = []
    for cls in _ir_classes(ir_methods, ir_patch, ir_session):
        if cls is ir.SchemaFacts:
            continue  # one per package
        for name, flag in _flags(cls).items():
            if flag.values in (("empty", "nonempty"), ("None", "set")):
                continue  # what an entry names, not how it behaves
            seen = {flag.observe(getattr(obj, name)) for obj in found.get(cls, ())}
            missing += [f"{cls.__name__}.{name} = {v!r}" for v in flag.values if v not in seen]
    assert sorted(m for m in missing if m not in _OTHER_RULES) == []
    assert sorted(set(_OTHER_RULES) - set(missing)) == [], "the kitchen has these now: drop them from _OTHER_RULES"
