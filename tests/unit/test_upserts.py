"""The patch rules file, checked against the schema it is applied to."""

from __future__ import annotations

import json

import pytest

from acpgen.errors import AcpgenError
from acpgen.load import load_schema, parse_schema
from acpgen.pipeline import build_ir
from acpgen.upserts import apply_rules

from ..conftest import ROOT, SCHEMAS

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
    "properties": {"id": {"type": "string"}, "title": {"type": ["string", "null"]}, "added": {"type": ["string", "null"]}},
    "required": ["id"],
}


def _rules(tmp_path, text):
    path = tmp_path / "rules.toml"
    path.write_text(text)
    return path


def test_an_unknown_rule_kind_is_an_error(tmp_path):
    rules = _rules(tmp_path, '[s]\n[[s.upserts]]\nupdate = "U"\nstate = "UState"\nkey = ["id"]\n[s.upserts.fields]\nid = { rule = "key" }\ntitle = { rule = "merge-deeply" }\n')
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
    # v2 rules on the v1 schema: v2-only types and fields are warnings.
    package = build_ir(load_schema(ROOT / "schema/v1/schema.json"), "p", "v2")
    assert any("TerminalUpdate is not in this schema" in w for w in package.warnings)
    assert any("ToolCallUpdate.capabilities is not in this schema" in w for w in package.warnings)
