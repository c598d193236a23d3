"""The conformance fixture generator and the semantic model behind its
expectations: deterministic, current, valid where it says so, every kind of
mutation made, and in agreement with the TypeScript SDK's recordings and the
hand-written fixtures. That the committed fixtures are what the generator
writes, and valid where they say so, is checked on one Python only, in
tests/e2e/test_conformance_fixtures.py."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
from acpgen.conformance import coverage, fixturegen
from acpgen.conformance.model import Model, Reject, format_path
from acpgen.conformance.runner import path_matches

from ..conftest import ROOT

SCHEMAS = {
    "v1": ROOT / "schema/v1/schema.json",
    "v1_unstable": ROOT / "schema/v1/schema.unstable.json",
    "v2": ROOT / "schema/v2/schema.json",
    "v2_unstable": ROOT / "schema/v2/schema.unstable.json",
}
FIXTURES = ROOT / "tests/fixtures/conformance"
REFERENCE = ROOT / "tests/fixtures/reference"
_MODELS: dict[str, Model] = {}


def model(key: str) -> Model:
    if key not in _MODELS:
        _MODELS[key] = Model(json.loads(SCHEMAS[key].read_text()))
    return _MODELS[key]


def _generated_cases(key: str):
    for path in sorted((FIXTURES / key / "generated").glob("*.json")):
        yield from json.loads(path.read_text())["cases"]


# ------------------------------------------------------------------ the files


def test_generation_is_deterministic_per_definition_and_seed():
    m = model("v2")
    for name in ("ToolCallUpdate", "SessionUpdate", "ToolKind", "RequestId"):
        first = fixturegen.DefFixtures(m, name, "s").build()
        again = fixturegen.DefFixtures(m, name, "s").build()
        assert first == again
    other = fixturegen.DefFixtures(m, "ToolCallUpdate", "another seed").build()
    assert other != fixturegen.DefFixtures(m, "ToolCallUpdate", "s").build()


def test_manifest_records_the_schema_and_the_counts():
    for key, path in SCHEMAS.items():
        manifest = json.loads((FIXTURES / key / "manifest.json").read_text())
        assert manifest["schema"] == f"schema/{path.parent.name}/{path.name}"
        assert manifest["defs"] == len(json.loads(path.read_text())["$defs"])
        counts = {"valid": 0, "invalid": 0, "lenient": 0}
        for case in _generated_cases(key):
            counts[fixturegen.category(case)] += 1
        counts["messages"] = len(json.loads((FIXTURES / key / "messages.json").read_text())["messages"])
        assert manifest["counts"] == counts


def test_one_generated_file_per_definition():
    for key, path in SCHEMAS.items():
        defs = set(json.loads(path.read_text())["$defs"])
        files = {p.stem for p in (FIXTURES / key / "generated").glob("*.json")}
        assert files == defs


def test_schema_keys():
    assert fixturegen.schema_key("schema/v2/schema.unstable.json") == "v2_unstable"
    assert fixturegen.schema_key("schema/v1/schema.json") == "v1"
    assert fixturegen.schema_key("/x/v3/schema.draft.json") == "v3_draft"


def test_dump_puts_one_case_per_line_and_write_keeps_known_failures(tmp_path):
    document = {
        "def": "X",
        "schema_sha256": "0",
        "cases": [{"name": "a", "input": 1}, {"name": "b", "input": [2]}],
    }
    text = fixturegen.dump(document)
    assert json.loads(text) == document
    assert '  {"name": "a", "input": 1},' in text.splitlines()
    files = {"generated/X.json": document, "manifest.json": {"schema": "s"}}
    fixturegen.write(tmp_path, files)
    path = tmp_path / "generated/X.json"
    edited = dict(json.loads(path.read_text()), known_failures={"a": "why"})
    path.write_text(fixturegen.dump(edited))
    assert fixturegen.stale(tmp_path, files) == []  # the hand-kept list is kept
    edited["known_failures"]["gone"] = "a fixture that is no longer generated"
    path.write_text(fixturegen.dump(edited))
    (tmp_path / "generated/Old.json").write_text("{}")
    changed = fixturegen.write(tmp_path, files)
    assert set(changed) == {str(tmp_path / "generated/Old.json"), str(path)}
    assert json.loads(path.read_text())["known_failures"] == {"a": "why"}


# ------------------------------------------------------------------ the cases


@pytest.mark.parametrize("key", sorted(SCHEMAS))
def test_every_kind_of_mutation_is_made(key):
    names = [case["name"] for case in _generated_cases(key)]
    for kind in (
        "required ",  # a required key dropped
        "wrong type",
        "null at",
        "invalid item at",
        "integer ",  # an integer out of range
        "true for an integer",
        "whole float for an integer",
        "unknown key at",
        "valid full",
        "valid minimal",
        "enum value",
    ):
        assert any(name.startswith(kind) for name in names), kind
    for kind in ("unknown tag at", "known tag ", "tag dropped at", "non-string tag at"):
        assert any(name.startswith(kind) for name in names), kind


def test_every_member_of_a_union_of_the_definition_is_chosen():
    cases = [c for c in _generated_cases("v2") if c["def"] == "SessionUpdate" and c["valid"]]
    tags = {c["input"]["sessionUpdate"] for c in cases}
    definition = json.loads(SCHEMAS["v2"].read_text())["$defs"]["SessionUpdate"]
    known = {
        o["properties"]["sessionUpdate"]["const"]
        for o in definition["anyOf"]
        if "const" in o["properties"]["sessionUpdate"]
    }
    assert known <= tags
    assert tags - known, "the catch-all variant is chosen too"


def test_valid_instances_honour_bounds_and_min_items():
    for case in _generated_cases("v2"):
        if case["def"] == "TerminalSize" and case["valid"]:
            assert 1 <= case["input"]["cols"] <= 65535
        if case["def"] == "PromptRequest" and case["valid"]:
            assert len(case["input"]["prompt"]) >= 1


# ------------------------------------------------------------------ the model


ENVELOPE_CASES = {
    # The README: acpgen keeps params/result as JSON. The recordings parse
    # request/notification params with zod's first-match union.
    "env_v1_client_request_initialize",
    "env_v1_client_request_prompt",
    "env_v1_client_request_prompt_bad_params",
    "env_v1_client_request_authenticate",
    "env_v1_client_request_unknown_method",
    "env_v1_client_request_meta_params",
    "env_v1_client_request_jsonrpc_stripped",
    "env_v2_client_request_initialize",
    "env_v2_client_request_prompt",
    "env_v2_client_request_initialize_wrong_method",
    "env_v1_agent_request_read_text_file_extra",
    "env_v2_agent_notification_session_update",
    "env_v2_agent_notification_elicitation_complete",
    "env_v1_client_notification_cancel",
    "env_v2_client_notification_unknown_with_session",
    "env_v1_unstable_client_request_fork",
    # Results: zod's first-match union collapses them (to {} or another type);
    # the envelope classes keep them as JSON. (A response with both result
    # and error agrees: the result member is chosen, as zod does.) (Whole messages are compared
    # with the SDK's dispatch by method in tests/e2e/test_reference.py.)
    "env_v1_agent_response_initialize",
    "env_v1_agent_response_prompt",
    "env_v1_agent_response_new_session",
    "env_v2_agent_response_prompt",
    "env_v1_client_response_permission",
}


def test_the_model_agrees_with_the_typescript_sdk_recordings():
    """Every recorded case agrees, except the README's departures (which must
    still differ) and the envelope cases where zod's first-match union
    rewrites params or results the envelope classes keep as JSON."""
    departures = json.loads((ROOT / "tests/reference/departures.json").read_text())["cases"]
    disagree = []
    count = 0
    for path in sorted(REFERENCE.glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            count += 1
            data = case["input"] if "input" in case else json.loads(case["input_json"])
            try:
                ok, out = True, model(case["schema"]).decode(case["def"], data)
            except Reject:
                ok, out = False, None
            agrees = ok == case["ok"] and (not ok or out == case["output"])
            expected_to_differ = case["name"] in departures or case["name"] in ENVELOPE_CASES
            if agrees == expected_to_differ:
                disagree.append(case["name"])
    assert count > 400
    assert not disagree


@pytest.mark.parametrize("key", sorted(SCHEMAS))
def test_the_model_agrees_with_the_hand_written_fixtures(key):
    """Hand-written and generated expectations follow one set of rules."""
    m = model(key)
    for path in sorted((FIXTURES / key / "handwritten").glob("*.json")):
        for case in json.loads(path.read_text()).get("cases", ()):
            data = case["input"] if "input" in case else json.loads(case["input_json"])
            try:
                out = m.decode(case["def"], data)
            except Reject as error:
                assert "error" in case, (
                    f"{path.name}: {case['name']}: the model rejects it at {format_path(error.path)}"
                )
                assert not error.exact or path_matches(case["error"], format_path(error.path)), case["name"]
            else:
                assert case.get("output") == out, f"{path.name}: {case['name']}"
            assert m.is_valid(case["def"], data) == case.get("valid", m.is_valid(case["def"], data))


def test_model_shapes():
    m = model("v2")
    assert m.shape("ContentBlock").kind == "tagged"
    assert {v.role for v in m.shape("IdleStateUpdate").variants} >= {"tagged", "catch_all", "null_tag"}
    assert m.shape("EmbeddedResourceResource").kind == "keyed"
    assert m.shape("ToolKind").kind == "enum" and m.shape("ToolKind").open
    response = m.shape("AgentResponse")
    assert response.kind == "keyed" and not response.exclusive
    result = next(shape for _, required, shape in response.members if "result" in required)
    assert {f.wire: f.shape.kind for f in result.fields}["result"] == "raw"  # decided by the method
    request = m.shape("CreateElicitationRequest")
    assert request.kind == "tagged"
    other = next(v for v in request.variants if v.role == "catch_all")
    scope = next(f for f in other.fields if f.flatten)
    assert scope.shape.exclusive and [r for r, _, _ in scope.shape.members] == [
        "ElicitationSessionScope",
        "ElicitationRequestScope",
    ]
    assert not next(f for f in model("v1").shape("ElicitationFormMode").fields if f.flatten).shape.exclusive
    assert {"ClientRequest", "AgentResponse"} <= m.envelopes
    v1 = model("v1")
    assert not v1.shape("ToolKind").open
    assert {v.role for v in v1.shape("McpServer").variants} == {"tagged", "untagged"}


# ------------------------------------------------------------------ coverage


def test_coverage_targets_come_from_the_schema():
    targets = coverage.targets(model("v2"))
    names = {t.name for t in targets}
    assert "def ToolCallUpdate" in names
    assert "variant ContentBlock type='image'" in names
    assert "variant ContentBlock catch-all" in names
    assert "enum ToolKind 'read'" in names and "enum ToolKind (another value)" in names
    assert "lenient ToolCallUpdate content [x-deserialize-skip-invalid-items]" in names
    assert "lenient SessionInfo additionalDirectories [x-deserialize-default-on-null]" in names
    assert "variant ClientRequest params: PromptRequest" in names
    kinds = {t.kind for t in targets}
    assert kinds == {"def", "variant", "enum", "lenient"}


def test_coverage_notices_what_is_missing():
    m = model("v2")
    cases = [{"name": "only", "def": "ToolKind", "input": "read", "valid": True, "output": "read"}]
    result = {t.name: t.covered_by for t in coverage.evaluate(m, cases)}
    assert result["enum ToolKind 'read'"] == "only"
    assert result["enum ToolKind 'edit'"] is None
    assert result["def ToolCallUpdate"] is None


def test_the_conformance_model_loads_no_stage_of_the_generator():
    """The model is a second implementation of the decoding rules: it shares
    with the generator only what JSON Schema keywords mean
    (``acpgen.vocabulary``), never a stage's code."""
    code = (
        "import sys, acpgen.conformance.model, acpgen.conformance.fixturegen, acpgen.conformance.coverage\n"
        "print(sorted(m for m in sys.modules if m.startswith('acpgen.')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(result.stdout)
    assert "acpgen.vocabulary" in loaded and "acpgen.conformance.model" in loaded
    assert [
        m for m in loaded if m.startswith(("acpgen.compile", "acpgen.emit", "acpgen.views", "acpgen.pipeline"))
    ] == []
