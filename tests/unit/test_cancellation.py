"""The cancellation pass: what a session's cancel does, read from
``rules/cancellation.toml`` and checked against each schema."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from acpgen.compile import ir
from acpgen.compile.load import load_schema
from acpgen.compile.passes import cancellation
from acpgen.errors import AcpgenError
from acpgen.pipeline import build_ir

from ..conftest import ROOT, load_generated


@functools.cache
def package(schema: str) -> ir.Package:
    return build_ir(load_schema(ROOT / "schema" / schema), "acp_x")


PROMPT = ("session/prompt", '{"stopReason":"cancelled"}')
PERMISSION = ("session/request_permission", '{"outcome":{"outcome":"cancelled"}}')


@pytest.mark.parametrize("schema", ["v1/schema.json", "v1/schema.unstable.json"])
def test_v1_cancels_prompts_and_permission_requests(schema: str) -> None:
    found = package(schema).cancellation
    assert found == ir.Cancellation("session/cancel", "session_id", (PERMISSION, PROMPT))


@pytest.mark.parametrize("schema", ["v2/schema.json", "v2/schema.unstable.json"])
def test_v2_answers_session_prompt_at_once_so_only_permission_requests_are_cancelled(schema: str) -> None:
    # v2's PromptResponse needs the user message's id: {"stopReason": ...}
    # is not valid as one, so the rule is left out there.
    found = package(schema).cancellation
    assert found == ir.Cancellation("session/cancel", "session_id", (PERMISSION,))


def test_the_generated_table_is_the_rules() -> None:
    v1, v2 = load_generated("acp_v1"), load_generated("acp_v2")
    assert v1.CANCELLATION.notification == "session/cancel"
    assert dict(v1.CANCELLATION.answers) == {m: json.loads(r) for m, r in (PERMISSION, PROMPT)}
    assert dict(v2.CANCELLATION.answers) == {PERMISSION[0]: json.loads(PERMISSION[1])}
    # Each answer decodes strictly as its method's result.
    for acp in (v1, v2):
        for method, result in acp.CANCELLATION.answers.items():
            acp.decode_result(method, result, strict=True)


def _rules(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cancellation.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_answer_that_is_not_a_valid_result_is_left_out(tmp_path: Path) -> None:
    path = _rules(
        tmp_path,
        'notification = "session/cancel"\nsession = "sessionId"\n'
        '[[answer]]\nmethod = "session/prompt"\nresult = { stopReason = "gave_up" }\n'
        '[[answer]]\nmethod = "session/request_permission"\nresult = { outcome = { outcome = "cancelled" } }\n',
    )
    found = cancellation.cancellation(package("v1/schema.json"), cancellation.cancellation_rules(path))
    assert found is not None and found.answers == (PERMISSION,)


def test_a_notification_the_schema_lacks_gives_no_cancellation(tmp_path: Path) -> None:
    path = _rules(tmp_path, 'notification = "session/stop"\nsession = "sessionId"\n')
    assert cancellation.cancellation(package("v1/schema.json"), cancellation.cancellation_rules(path)) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('session = "sessionId"\n', "need notification = and session ="),
        ('notification = "session/cancel"\nsession = "sessionId"\nanswer = 3\n', "must be a list"),
        ('notification = "session/cancel"\nsession = "sessionId"\n[[answer]]\nmethod = "m"\n', "needs method"),
        (
            'notification = "n"\nsession = "s"\n[[answer]]\nmethod = "m"\nresult = {}\n'
            '[[answer]]\nmethod = "m"\nresult = {}\n',
            "two \\[\\[answer\\]\\] entries for m",
        ),
    ],
)
def test_the_rules_file_is_checked(tmp_path: Path, text: str, message: str) -> None:
    path = _rules(tmp_path, text)
    with pytest.raises(AcpgenError, match=message) as info:
        cancellation.cancellation_rules(path)
    assert str(info.value).startswith(f"{path}: ")


def test_each_answer_is_checked_against_its_own_result_type_by_one_validator() -> None:
    # One validator checks every answer of a schema, each against the result
    # type of its own method, as a validator made for that type alone does.
    import jsonschema_rs

    schema = package("v1/schema.json")
    values = [
        ("PromptResponse", {"stopReason": "cancelled"}),
        ("RequestPermissionResponse", {"stopReason": "cancelled"}),
        ("PromptResponse", {"outcome": {"outcome": "cancelled"}}),
        ("RequestPermissionResponse", {"outcome": {"outcome": "cancelled"}}),
        ("NoSuchType", {}),
        ("PromptResponse", {"stopReason": "gave_up"}),
    ]
    defs = schema.validation_defs
    alone = [
        name in defs and jsonschema_rs.Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{name}"}).is_valid(v)
        for name, v in values
    ]
    assert alone == [True, False, False, True, False, False]
    assert cancellation._valid(schema, values) == alone
    assert cancellation._valid(schema, []) == []
