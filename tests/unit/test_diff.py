"""The classification rules of ``acpgen diff``, on small hand-written schemas.

Each schema has the ACP message forms (``Agent``/``Client`` members of the
top-level ``anyOf``), so the reasons can name who sends what: ``Req`` is a
request clients send, ``Resp`` a response agents send.
"""

from __future__ import annotations

import copy
import json

import pytest
from acpgen.cli import main
from acpgen.compile.load import parse_schema
from acpgen.diff import (
    KINDS,
    OLD_RECEIVERS,
    OLD_SENDERS,
    diff_schemas,
    render_json,
    render_markdown,
    render_text,
)
from click.testing import CliRunner

META = {"type": ["object", "null"], "additionalProperties": True}


def document(defs: dict, agent=("Resp",), client=("Req",)) -> dict:
    forms = []
    for title, names in (("Agent", agent), ("Client", client)):
        if names:
            forms.append({"title": title, "anyOf": [{"$ref": f"#/$defs/{n}"} for n in names if n in defs]})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Test",
        "anyOf": forms,
        "$defs": defs,
    }


def base() -> dict:
    """A request (client -> agent) and a response (agent -> client)."""
    return {
        "Req": {
            "type": "object",
            "x-method": "thing/do",
            "x-side": "agent",
            "properties": {"id": {"type": "string"}, "_meta": META},
            "required": ["id"],
        },
        "Resp": {
            "type": "object",
            "x-method": "thing/do",
            "x-side": "agent",
            "properties": {"ok": {"type": "boolean"}, "_meta": META},
            "required": ["ok"],
        },
    }


def run(old_defs: dict, new_defs: dict, **forms):
    old = parse_schema(json.dumps(document(old_defs, **forms)).encode(), "old.json")
    new = parse_schema(json.dumps(document(new_defs, **forms)).encode(), "new.json")
    return diff_schemas(old, new, old_version="1.0.0", new_version="2.0.0")


def only(diff, kind: str, path: str):
    found = [c for c in diff.changes if c.kind == kind and c.path == path]
    assert len(found) == 1, f"{kind} {path} not found once in {[(c.kind, c.path) for c in diff.changes]}"
    return found[0]


def changed(mutate, start=None):
    old = start or base()
    new = copy.deepcopy(old)
    mutate(new)
    return run(old, new)


# ---------------------------------------------------------------- fields


def test_no_changes():
    assert run(base(), base()).changes == ()


def test_descriptions_are_not_changes():
    def mutate(d):
        d["Req"]["description"] = "now documented"
        d["Req"]["properties"]["id"]["description"] = "the id"

    assert changed(mutate).changes == ()


def test_new_required_field_in_a_request_breaks_old_senders():
    def mutate(d):
        d["Req"]["properties"]["cwd"] = {"type": "string"}
        d["Req"]["required"].append("cwd")

    change = only(changed(mutate), "field-added", "Req.cwd")
    assert change.wire.breaking and change.wire.affects == (OLD_SENDERS,)
    assert "agents built on the new schema reject" in change.wire.reason
    assert "clients built on the old schema" in change.wire.reason
    assert change.senders == ("client",)
    assert change.api.breaking and "needs the argument `cwd`" in change.api.reason


def test_new_optional_field_is_neither():
    def mutate(d):
        d["Resp"]["properties"]["extra"] = {"type": ["string", "null"]}

    change = only(changed(mutate), "field-added", "Resp.extra")
    assert not change.wire.breaking and not change.api.breaking
    assert not change.breaking


def test_new_optional_field_breaks_old_receivers_of_a_closed_object():
    start = base()
    start["Resp"]["additionalProperties"] = False

    def mutate(d):
        d["Resp"]["properties"]["extra"] = {"type": "string"}

    change = only(changed(mutate, start), "field-added", "Resp.extra")
    assert change.wire.affects == (OLD_RECEIVERS,)
    assert not change.api.breaking


def test_field_that_became_required_in_a_response_does_not_break_old_receivers():
    start = base()
    start["Resp"]["properties"]["note"] = {"type": "string"}

    def mutate(d):
        d["Resp"]["required"].append("note")

    change = only(changed(mutate, start), "field-required", "Resp.note")
    # Old receivers (clients) always get it now: fine for them. Old senders
    # (agents) that omit it are rejected by new clients.
    assert OLD_RECEIVERS not in change.wire.affects
    assert change.wire.affects == (OLD_SENDERS,)
    assert "clients built on the new schema reject" in change.wire.reason
    assert "agents built on the old schema" in change.wire.reason
    assert change.api.breaking


def test_field_that_became_optional_breaks_old_receivers_and_readers():
    def mutate(d):
        d["Resp"]["required"] = []

    change = only(changed(mutate), "field-optional", "Resp.ok")
    assert change.wire.affects == (OLD_RECEIVERS,)
    assert change.api.breaking and "UNSET" in change.api.reason


def test_removed_optional_field_breaks_the_api_only():
    def mutate(d):
        del d["Resp"]["properties"]["_meta"]

    change = only(changed(mutate), "field-removed", "Resp._meta")
    assert not change.wire.breaking
    assert change.api.breaking and "`Resp.meta` is gone" in change.api.reason


def test_removed_required_field_breaks_old_receivers():
    def mutate(d):
        del d["Resp"]["properties"]["ok"]
        d["Resp"]["required"] = []

    change = only(changed(mutate), "field-removed", "Resp.ok")
    assert change.wire.affects == (OLD_RECEIVERS,)


def test_renamed_python_attribute_breaks_the_api_only():
    start = base()
    start["Resp"]["properties"] = {"fooBar": {"type": "string"}}

    def mutate(d):
        # "foo_bar" now comes first and takes the attribute name foo_bar.
        d["Resp"]["properties"] = {"foo_bar": {"type": "string"}, "fooBar": {"type": "string"}}

    diff = changed(mutate, start)
    change = only(diff, "field-renamed", "Resp.fooBar")
    assert not change.wire.breaking
    assert change.api.breaking and "`foo_bar_`" in change.api.reason


# ---------------------------------------------------------------- nullability, types, defaults


def test_nullability():
    start = base()
    start["Resp"]["properties"]["n"] = {"type": "string"}
    start["Resp"]["properties"]["m"] = {"type": "string", "x-deserialize-default-on-error": True}

    def mutate(d):
        d["Resp"]["properties"]["n"] = {"type": ["string", "null"]}
        d["Resp"]["properties"]["m"] = {"type": ["string", "null"], "x-deserialize-default-on-error": True}

    diff = changed(mutate, start)
    plain = only(diff, "field-nullable", "Resp.n")
    assert plain.wire.affects == (OLD_RECEIVERS,)
    assert plain.api.breaking and "None" in plain.api.reason
    lenient = only(diff, "field-nullable", "Resp.m")
    assert not lenient.wire.breaking and lenient.wire.reason.startswith("tolerated")
    back = run(diff_new_defs(mutate, start), start)
    assert only(back, "field-non-nullable", "Resp.n").wire.affects == (OLD_SENDERS,)
    # A narrowing is not tolerated: new receivers drop the null.
    dropped = only(back, "field-non-nullable", "Resp.m")
    assert dropped.wire.affects == (OLD_SENDERS,) and "drop" in dropped.wire.reason


def diff_new_defs(mutate, start):
    new = copy.deepcopy(start)
    mutate(new)
    return new


@pytest.mark.parametrize(
    "before, after, affects, api",
    [
        ({"type": "integer"}, {"type": "number"}, (OLD_RECEIVERS,), True),
        ({"type": "string"}, {"type": "string", "minLength": 1}, (OLD_SENDERS,), False),
        ({"type": "string"}, {"type": "integer"}, (OLD_RECEIVERS, OLD_SENDERS), True),
        (
            {"type": "integer", "format": "uint32", "minimum": 0},
            {"type": "integer", "format": "int64"},
            (OLD_RECEIVERS,),
            False,
        ),
        (
            {"type": "integer", "format": "int64"},
            {"type": "integer", "format": "uint64", "minimum": 0},
            (OLD_RECEIVERS, OLD_SENDERS),
            False,
        ),
        ({"type": "string", "format": "uri"}, {"type": "string"}, None, None),
    ],
)
def test_field_type_changes(before, after, affects, api):
    start = base()
    start["Req"]["properties"]["v"] = before

    def mutate(d):
        d["Req"]["properties"]["v"] = after

    diff = changed(mutate, start)
    if affects is None:
        assert diff.changes == ()  # a string format is an annotation
        return
    change = only(diff, "field-type-changed", "Req.v")
    assert change.wire.affects == affects
    assert change.api.breaking is api


def test_union_members_added_are_not_api_breaking():
    start = base()
    start["Req"]["properties"]["v"] = {"anyOf": [{"type": "string"}, {"type": "integer"}]}

    def mutate(d):
        d["Req"]["properties"]["v"] = {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]}

    change = only(changed(mutate, start), "field-type-changed", "Req.v")
    assert change.wire.affects == (OLD_RECEIVERS,)
    assert not change.api.breaking


def test_defaults():
    start = base()
    start["Req"]["properties"]["mode"] = {"type": "string", "default": "a"}
    start["Req"]["properties"]["size"] = {"type": "integer", "default": 3}

    def mutate(d):
        d["Req"]["properties"]["mode"] = {"type": "string", "default": "b"}
        d["Req"]["properties"]["size"] = {"type": "integer"}
        d["Req"]["properties"]["new"] = {"type": "boolean"}

    diff = changed(mutate, start)
    value = only(diff, "field-default-changed", "Req.mode")
    assert value.wire.breaking and set(value.wire.affects) == {OLD_RECEIVERS, OLD_SENDERS}
    assert (value.old, value.new) == ("a", "b")
    assert not value.api.breaking
    removed = only(diff, "field-default-changed", "Req.size")
    assert not removed.wire.breaking
    assert removed.api.breaking and "UNSET" in removed.api.reason


def test_deserialize_keywords():
    start = base()
    start["Resp"]["properties"]["items"] = {
        "type": "array",
        "items": {"type": "string"},
        "x-deserialize-skip-invalid-items": True,
    }

    def mutate(d):
        d["Resp"]["properties"]["items"] = {
            "type": "array",
            "items": {"type": "string"},
            "x-deserialize-default-on-error": True,
        }
        d["Resp"]["properties"]["_meta"]["x-deserialize-default-on-null"] = True

    diff = changed(mutate, start)
    added = only(diff, "deserialize-added", "Resp.items")
    assert "x-deserialize-default-on-error" in added.summary
    removed = only(diff, "deserialize-removed", "Resp.items")
    assert "x-deserialize-skip-invalid-items" in removed.summary
    on_null = only(diff, "deserialize-added", "Resp._meta")
    for change in (added, removed, on_null):
        assert not change.breaking
    assert [c.kind for c in diff.changes if c.kind.startswith("field")] == []


# ---------------------------------------------------------------- enums and unions


def with_enum(open_: bool, values=("a", "b"), default_on_error=False) -> dict:
    defs = base()
    options = [{"type": "string", "const": v} for v in values]
    if open_:
        options.append({"type": "string"})
    defs["Kind"] = {"anyOf": options}
    prop = {"$ref": "#/$defs/Kind"}
    if default_on_error:
        prop = {"anyOf": [{"$ref": "#/$defs/Kind"}, {"type": "null"}], "x-deserialize-default-on-error": True}
    defs["Resp"]["properties"]["kind"] = prop
    defs["Req"]["properties"]["kind"] = prop
    return defs


def test_enum_value_added_to_a_closed_enum_breaks_old_receivers():
    diff = run(with_enum(False), with_enum(False, ("a", "b", "c")))
    change = only(diff, "enum-value-added", "Kind:c")
    assert change.wire.affects == (OLD_RECEIVERS,)
    assert not change.api.breaking


def test_enum_value_added_to_an_open_enum_is_compatible():
    change = only(run(with_enum(True), with_enum(True, ("a", "b", "c"))), "enum-value-added", "Kind:c")
    assert not change.breaking


def test_enum_value_added_where_old_receivers_drop_unknown_values():
    diff = run(with_enum(False, default_on_error=True), with_enum(False, ("a", "b", "c"), default_on_error=True))
    change = only(diff, "enum-value-added", "Kind:c")
    assert not change.wire.breaking and "tolerated" in change.wire.reason


def test_enum_value_removed_closed_vs_open():
    closed = only(run(with_enum(False), with_enum(False, ("a",))), "enum-value-removed", "Kind:b")
    assert closed.wire.affects == (OLD_SENDERS,)
    assert closed.api.breaking and "`Kind.B` is gone" in closed.api.reason
    opened = only(run(with_enum(True), with_enum(True, ("a",))), "enum-value-removed", "Kind:b")
    assert not opened.wire.breaking and "open" in opened.wire.reason
    assert opened.api.breaking


def test_enum_opened_and_closed():
    opened = only(run(with_enum(False), with_enum(True)), "enum-opened", "Kind")
    assert not opened.wire.breaking and opened.api.breaking
    closed = only(run(with_enum(True), with_enum(False)), "enum-closed", "Kind")
    assert not closed.wire.breaking and closed.api.breaking


def with_union(tags=("text", "image"), catch_all=False, names=()) -> dict:
    defs = base()
    options = [
        {
            "type": "object",
            "properties": {"type": {"type": "string", "const": tag}, "data": {"type": "string"}},
            "required": ["type"],
        }
        for tag in tags
    ]
    if catch_all:
        options.append({"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]})
    defs["Block"] = {"anyOf": options}
    for name in names:
        defs[name] = {"type": "string"}
    defs["Resp"]["properties"]["block"] = {"$ref": "#/$defs/Block"}
    return defs


def test_new_variant_breaks_old_receivers_without_a_catch_all():
    change = only(run(with_union(), with_union(("text", "image", "audio"))), "variant-added", "Block[audio]")
    assert change.wire.affects == (OLD_RECEIVERS,)
    assert change.senders == ("agent",)
    assert not change.api.breaking


def test_new_variant_is_compatible_with_a_catch_all():
    diff = run(with_union(catch_all=True), with_union(("text", "image", "audio"), catch_all=True))
    change = only(diff, "variant-added", "Block[audio]")
    assert not change.breaking and "catch-all" in change.wire.reason


def test_removed_variant():
    plain = only(run(with_union(), with_union(("text",))), "variant-removed", "Block[image]")
    assert plain.wire.affects == (OLD_SENDERS,)
    assert plain.api.breaking and "`ImageBlock`" in plain.api.reason
    caught = only(
        run(with_union(catch_all=True), with_union(("text",), catch_all=True)), "variant-removed", "Block[image]"
    )
    assert not caught.wire.breaking and caught.api.breaking


def test_renamed_variant_class_breaks_the_api_only():
    # A new type takes the name TextBlock, so the variant class is renamed.
    diff = run(with_union(), with_union(names=("TextBlock",)))
    change = only(diff, "variant-renamed", "Block[text]")
    assert (change.old, change.new) == ("TextBlock", "BlockText")
    assert not change.wire.breaking and change.api.breaking


def test_variant_fields_are_reported_on_the_variant():
    def mutate(d):
        d["Block"]["anyOf"][0]["properties"]["lang"] = {"type": "string"}

    change = only(changed(mutate, with_union()), "field-added", "Block[text].lang")
    assert not change.breaking


def test_object_that_became_a_union_and_back():
    command = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
        "required": ["name", "description"],
    }
    old = base()
    old["Command"] = copy.deepcopy(command)
    old["Resp"]["properties"]["command"] = {"$ref": "#/$defs/Command"}
    new = copy.deepcopy(old)
    new["CommandBody"] = copy.deepcopy(command)
    new["Command"] = {
        "anyOf": [
            {
                "type": "object",
                "properties": {"type": {"type": "string", "const": "command"}},
                "required": ["type"],
                "allOf": [{"$ref": "#/$defs/CommandBody"}],
            },
            {"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]},
        ]
    }
    forward = only(run(old, new), "type-kind-changed", "Command")
    # New receivers need the tag old senders do not send; old receivers
    # ignore the tag new senders add.
    assert forward.wire.affects == (OLD_SENDERS,)
    assert forward.api.breaking and "dataclass" in forward.api.reason
    back = only(run(new, old), "type-kind-changed", "Command")
    assert back.wire.affects == (OLD_RECEIVERS,)
    assert back.api.breaking


# ---------------------------------------------------------------- types, renames, methods


def test_removed_type_and_rename_detection():
    old = base()
    old["Caps"] = {"type": "object", "properties": {"terminal": {"type": ["boolean", "null"]}}}
    old["Req"]["properties"]["caps"] = {"anyOf": [{"$ref": "#/$defs/Caps"}, {"type": "null"}]}
    new = copy.deepcopy(old)
    new["ClientCaps"] = new.pop("Caps")
    new["ClientCaps"]["description"] = "renamed"
    new["Req"]["properties"]["caps"] = {"anyOf": [{"$ref": "#/$defs/ClientCaps"}, {"type": "null"}]}
    diff = run(old, new)
    removed = only(diff, "type-removed", "Caps")
    assert not removed.wire.breaking and "renamed to `ClientCaps`" in removed.wire.reason
    assert removed.api.breaking and removed.new == "ClientCaps"
    assert not only(diff, "type-added", "ClientCaps").breaking
    field = only(diff, "field-type-changed", "Req.caps")
    assert not field.wire.breaking and field.api.breaking


def test_removed_type_breaks_the_wire_where_its_use_does():
    old = base()
    old["Token"] = {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]}
    old["Resp"]["properties"]["token"] = {"$ref": "#/$defs/Token"}
    old["Resp"]["required"].append("token")
    gone = copy.deepcopy(old)
    del gone["Token"]
    del gone["Resp"]["properties"]["token"]
    gone["Resp"]["required"] = ["ok"]
    removed = only(run(old, gone), "type-removed", "Token")
    assert removed.wire.breaking and "Resp.token" in removed.wire.reason
    unused = base()
    unused["Spare"] = {"type": "string"}
    spare = only(run(unused, base()), "type-removed", "Spare")
    assert not spare.wire.breaking and spare.api.breaking


def test_changes_inside_a_referenced_type_are_reported_once():
    old = with_enum(False)
    new = with_enum(False, ("a", "b", "c"))
    diff = run(old, new)
    assert [(c.kind, c.path) for c in diff.changes] == [("enum-value-added", "Kind:c")]


def test_methods():
    old = base()
    new = copy.deepcopy(old)
    new["StopReq"] = {"type": "object", "x-method": "thing/stop", "x-side": "agent", "properties": {}}
    added = only(run(old, new, client=("Req", "StopReq")), "method-added", "method thing/stop (agent)")
    assert not added.breaking and added.new == ["StopReq"]
    removed = only(run(new, old, client=("Req", "StopReq")), "method-removed", "method thing/stop (agent)")
    assert removed.wire.affects == (OLD_SENDERS,) and removed.senders == ("client",)
    assert not removed.api.breaking
    moved = copy.deepcopy(old)
    for name in ("Req", "Resp"):
        moved[name]["x-side"] = "client"
    assert only(run(old, moved), "method-changed", "method thing/do").wire.breaking


def test_message_forms():
    old = base()
    diff = run(old, old, agent=(), client=("Req",))
    assert diff.changes == ()
    before = parse_schema(json.dumps(document(old)).encode(), "a.json")
    after = parse_schema(json.dumps(document(old, agent=())).encode(), "b.json")
    removed = only(diff_schemas(before, after), "message-form-removed", "message Agent")
    assert removed.wire.affects == (OLD_SENDERS,) and removed.senders == ("agent",)


# ---------------------------------------------------------------- output


def sample():
    def mutate(d):
        d["Req"]["properties"]["cwd"] = {"type": "string"}
        d["Req"]["required"].append("cwd")
        d["Resp"]["properties"]["extra_info"] = {"type": ["string", "null"]}

    return changed(mutate)


def test_json_form_is_sorted_stable_and_documented():
    diff = sample()
    text = render_json(diff)
    assert text == render_json(sample())
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert data["format"] == 1
    assert set(data) == {"format", "old", "new", "summary", "changes"}
    assert set(data["old"]) == {"file", "sha256", "version", "title"}
    assert data["old"]["version"] == "1.0.0"
    assert set(data["summary"]) == {"changes", "breaking", "wire_breaking", "api_breaking", "compatible", "kinds"}
    assert data["summary"]["changes"] == 2 and data["summary"]["breaking"] == 1
    keys = {"kind", "definition", "path", "summary", "senders", "old", "new", "breaking", "wire", "api"}
    for change in data["changes"]:
        assert set(change) == keys
        assert set(change["wire"]) == {"breaking", "affects", "reason"}
        assert set(change["api"]) == {"breaking", "reason"}
        assert change["kind"] in KINDS
    order = [(c["definition"], c["path"]) for c in data["changes"]]
    assert order == sorted(order)


def test_markdown_and_text_forms():
    diff = sample()
    markdown = render_markdown(diff)
    assert markdown.startswith("### Schema changes: ")
    assert "1.0.0 → 2.0.0" in markdown
    assert "#### Breaking changes (1)" in markdown
    assert "<summary>Compatible changes (1)</summary>" in markdown
    # Names stay in code spans; prose is escaped.
    assert "`Req.cwd`" in markdown and "`extra_info`" in markdown
    text = render_text(diff)
    assert "2 changes: 1 breaking" in text
    assert "[wire+api] field-added Req.cwd" in text


# ---------------------------------------------------------------- the command


def write(tmp_path, name, defs, **forms):
    path = tmp_path / name
    path.write_text(json.dumps(document(defs, **forms)), encoding="utf-8")
    return str(path)


def test_cli_exit_status(tmp_path):
    runner = CliRunner()
    old = write(tmp_path, "old.json", base())
    new_defs = base()
    new_defs["Req"]["required"].append("_meta")
    new = write(tmp_path, "new.json", new_defs)
    same = runner.invoke(main, ["diff", old, old, "--fail-on-breaking"])
    assert same.exit_code == 0, same.output
    assert "no changes" in same.output
    result = runner.invoke(main, ["diff", old, new])
    assert result.exit_code == 0 and "field-required Req._meta" in result.output
    failing = runner.invoke(main, ["diff", old, new, "--fail-on-breaking", "--format", "json"])
    assert failing.exit_code == 1
    assert json.loads(failing.stdout)["summary"]["breaking"] == 1
    markdown = runner.invoke(main, ["diff", old, new, "--format", "markdown"])
    assert markdown.exit_code == 0 and markdown.stdout.startswith("### Schema changes")


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        ("{not json", "invalid JSON"),
        (
            '{"$defs": {}}',
            "not an ACP JSON Schema (a JSON object whose $defs holds the types): it holds a JSON "
            "object with the keys $defs, whose $defs is empty",
        ),
        # A package.json trips the metaschema on "type": "module"; what the
        # file is matters more than that.
        (
            '{"name": "@agentclientprotocol/sdk", "version": "2.4.0", "type": "module"}',
            "not an ACP JSON Schema (a JSON object whose $defs holds the types): it holds a JSON object with the "
            "keys name, version, type, without $defs (an npm package.json?",
        ),
        ("[1, 2, 3]", "it holds a JSON array of 3 items"),
        (
            '{"jsonrpc": "2.0", "id": 1, "method": "initialize"}\n{"jsonrpc": "2.0", "id": 1, "result": {}}\n',
            "it holds JSON lines (2 lines, the first a JSON object with the keys jsonrpc, id, method): a transcript "
            "of JSON-RPC messages, which `acpgen validate` checks",
        ),
    ],
)
def test_cli_bad_input(tmp_path, content, message):
    good = write(tmp_path, "good.json", base())
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", good, str(bad)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("acpgen: error: ") and message in lines[0]
    assert result.stdout == ""


def test_recursive_types_terminate():
    old = base()
    old["Node"] = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
        "required": ["name"],
    }
    old["Tree"] = {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}
    old["Resp"]["properties"]["tree"] = {"$ref": "#/$defs/Tree"}
    new = copy.deepcopy(old)
    new["Node2"] = copy.deepcopy(old["Node"])
    new["Node2"]["properties"]["children"]["items"] = {"$ref": "#/$defs/Node2"}
    new["Tree"] = {"anyOf": [{"$ref": "#/$defs/Node2"}, {"type": "null"}]}
    diff = run(old, new)
    change = only(diff, "alias-type-changed", "Tree")
    # Node2 is Node under another name: the same values either way.
    assert not change.wire.breaking and change.api.breaking


def test_cli_directory_is_bad_input(tmp_path):
    good = write(tmp_path, "good.json", base())
    result = CliRunner().invoke(main, ["diff", str(tmp_path), good])
    assert result.exit_code == 2
    assert result.stderr.startswith("acpgen: error: ") and len(result.stderr.strip().splitlines()) == 1
