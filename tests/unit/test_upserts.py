"""The patch rules file, checked against the schema it is applied to."""

from __future__ import annotations

import json

import pytest
from acpgen.compile.load import load_schema, parse_schema
from acpgen.compile.lower.facts import schema_facts
from acpgen.compile.passes import ruleselect
from acpgen.compile.passes.upserts import apply_rules
from acpgen.errors import AcpgenError
from acpgen.pipeline import build_ir

from ..conftest import ROOT, SCHEMAS, schema_with

RULE_SETS = {"acp_v1": "v1", "acp_v1_unstable": "v1_unstable", "acp_v2": "v2", "acp_v2_unstable": "v2_unstable"}


@pytest.mark.parametrize("package", sorted(SCHEMAS))
def test_the_vendored_schemas_fit_their_rules_without_a_warning(package):
    ir = build_ir(load_schema(SCHEMAS[package]), package, RULE_SETS[package])
    assert ir.warnings == ()
    assert ir.upserts and ir.capabilities


def test_v2_finds_every_upsert_the_schema_describes():
    ir = build_ir(load_schema(SCHEMAS["acp_v2_unstable"]), "p", "v2_unstable")
    assert {u.update for u in ir.upserts} == {
        "ToolCallUpdate",
        "TerminalUpdate",
        "SessionInfoUpdate",
        "UserMessage",
        "AgentMessage",
        "AgentThought",
        "UsageUpdate",
        "CompactionUpdate",
        "SubagentUpdate",
        "SessionMessage",
    }
    assert {c.chunk for c in ir.chunks} == {
        "ContentChunk",
        "ToolCallContentChunk",
        "TerminalOutputChunk",
        "CompactionSummaryChunk",
        "SessionMessageChunk",
    }


def _schema(defs):
    return parse_schema(json.dumps({"$defs": defs}).encode(), "t.json")


UPDATE = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "title": {"type": ["string", "null"]},
        "added": {"type": ["string", "null"]},
    },
    "required": ["id"],
}


def _rules(tmp_path, text):
    path = tmp_path / "rules.toml"
    path.write_text(text)
    return path


def test_an_unknown_rule_kind_is_an_error(tmp_path):
    rules = _rules(
        tmp_path,
        '[s]\n[[s.upserts]]\nupdate = "U"\nstate = "UState"\nkey = ["id"]\n[s.upserts.fields]\nid = { rule = "key" }\ntitle = { rule = "merge-deeply" }\n',
    )
    with pytest.raises(AcpgenError, match="unknown rule 'merge-deeply'"):
        apply_rules(build_ir(_schema({"U": UPDATE}), "p"), "s", rules)


def test_types_and_fields_the_schema_lacks_are_warnings_and_new_fields_get_the_general_rule(tmp_path):
    rules = _rules(
        tmp_path,
        '[s]\n[[s.upserts]]\nupdate = "U"\nstate = "UState"\nkey = ["id"]\n[s.upserts.fields]\n'
        'id = { rule = "key" }\ntitle = { rule = "null-clears" }\ngone = { rule = "null-clears" }\n'
        '[[s.upserts]]\nupdate = "Missing"\nstate = "MissingState"\nkey = []\n',
    )
    package = apply_rules(build_ir(_schema({"U": UPDATE}), "p"), "s", rules)
    assert package.warnings == (
        "rules s: U.gone is not in this schema",
        "rules s: U.added has no rule: it gets the general rule (null-clears)",
        "rules s: Missing is not in this schema",
    )
    (upsert,) = package.upserts
    assert {f.wire_name: f.rule for f in upsert.fields} == {"id": "key", "title": "null-clears", "added": "null-clears"}


def test_an_unknown_rule_set_is_an_error():
    with pytest.raises(AcpgenError, match="no rule set named 'v9'"):
        build_ir(load_schema(SCHEMAS["acp_v2"]), "p", "v9")


def test_generating_an_older_schema_warns_and_still_generates(make_package):
    # Today's v2 rules on the 2.0.0 v2 schema: fields added since are warnings.
    package = build_ir(load_schema(ROOT / "tests/fixtures/sdk-2.0.0/v2/schema.json"), "p", "v2")
    assert any("ToolCallUpdate.capabilities is not in this schema" in w for w in package.warnings)
    assert package.upserts


# ------------------------------------------------------------------ which rules


@pytest.mark.parametrize(
    "path, expected",
    [
        ("schema/v1/schema.json", "v1"),
        ("schema/v1/schema.unstable.json", "v1_unstable"),
        ("schema/v2/schema.json", "v2"),
        ("schema/v2/schema.unstable.json", "v2_unstable"),
        ("tests/fixtures/sdk-2.0.0/v1/schema.json", "v1"),
        ("tests/fixtures/sdk-2.0.0/v1/schema.unstable.json", "v1_unstable"),
        ("tests/fixtures/sdk-2.0.0/v2/schema.json", "v2"),
        ("tests/fixtures/sdk-2.0.0/v2/schema.unstable.json", "v2_unstable"),
    ],
)
def test_the_rule_set_is_told_from_the_schema(path, expected):
    schema = load_schema(ROOT / path)
    # The vendored files' titles and $ids are all the same: the content tells.
    assert ruleselect.detect(schema_facts(schema)) == expected
    assert build_ir(schema, "p").upserts == build_ir(schema, "p", expected).upserts


def test_a_rule_set_that_contradicts_the_schema_is_refused():
    schema = load_schema(ROOT / "schema/v1/schema.json")
    for wrong in ("v2", "v1_unstable", "v2_unstable"):
        with pytest.raises(AcpgenError, match=f"the rule set '{wrong}' does not fit this schema, which is an ACP v1"):
            build_ir(schema, "p", wrong)
    assert build_ir(schema, "p", "none").upserts == ()


def test_a_schema_that_does_not_tell_gets_rules_only_when_named():
    schema = _schema({"U": UPDATE})
    assert ruleselect.detect(schema_facts(schema)) is None
    assert build_ir(schema, "p").upserts == ()


def test_a_package_without_rules_says_so_when_apply_is_called(make_package):
    package = make_package(schema_with({"A": {"type": "object", "properties": {"x": {"type": "string"}}}}))
    with pytest.raises(TypeError, match="generated without patch rules"):
        package.apply(None, package.A(x="y"))
