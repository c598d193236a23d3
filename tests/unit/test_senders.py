"""The senders pass (``compile/passes/senders.py``): the one naming rule
of the session senders, and what it finds in the four schemas: which
variant starts a tool call (from the patch rules' pairing), the helpers."""

from __future__ import annotations

import pytest
from acpgen.compile.load import load_schema
from acpgen.compile.passes.senders import sender_name
from acpgen.pipeline import build_ir

from ..conftest import SCHEMAS

V1_TAGS = ["user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"]
V2_TAGS = ["user_message_chunk", "user_message", "agent_message_chunk", "agent_message", "terminal_output_chunk"]


@pytest.mark.parametrize(
    ("tag", "tags", "name"),
    [
        ("agent_message_chunk", V1_TAGS, "message"),
        ("agent_thought_chunk", V1_TAGS, "thought"),
        ("user_message_chunk", V1_TAGS, "user_message"),
        ("tool_call", V1_TAGS, "tool_call"),
        ("tool_call_update", V1_TAGS, "tool_call_update"),
        ("agent_message_chunk", V2_TAGS, "message_chunk"),
        ("agent_message", V2_TAGS, "message"),
        ("user_message_chunk", V2_TAGS, "user_message_chunk"),
        ("terminal_output_chunk", V2_TAGS, "terminal_output"),
        ("agent_chunk", ["agent_chunk"], "chunk"),
        ("agent_", ["agent_"], "agent"),
        ("class_chunk", ["class_chunk"], "class_"),
    ],
)
def test_the_naming_rule(tag: str, tags: list[str], name: str) -> None:
    assert sender_name(tag, tags) == name


def _senders(package: str):
    rules = package.removeprefix("acp_")
    ir = build_ir(load_schema(SCHEMAS[package]), package, rules)
    assert ir.senders is not None
    return ir.senders


@pytest.mark.parametrize("package", list(SCHEMAS))
def test_the_variant_that_starts_a_tool_call_comes_from_the_patch_rules(package: str) -> None:
    s = _senders(package)
    starts = [x.tag for x in s.senders if x.starts]
    # v1's ToolCallUpdate upsert `creates` ToolCall; v2's creates nothing, so
    # its own variant starts one.
    assert starts == (["tool_call"] if package.startswith("acp_v1") else ["tool_call_update"])
    assert s.tool_call is not None and s.tool_call.update_class == "ToolCallUpdateSessionUpdate"
    assert (s.tool_call.completed, s.tool_call.failed) == ("COMPLETED", "FAILED")
    assert s.tool_call.key not in {f.name for f in s.tool_call.fields}
    assert not any(x.tag is None for x in s.senders)  # no catch-all


@pytest.mark.parametrize("package", list(SCHEMAS))
def test_the_helpers_are_the_content_unions_tagged_variants(package: str) -> None:
    s = _senders(package)
    assert [h.name for h in s.helpers] == [
        "text", "image", "audio", "resource_link", "resource", "tool_content", "diff", "terminal"
    ]  # fmt: skip
    assert (s.text_class, s.text_field, s.tool_content_class) == ("TextContentBlock", "text", "ContentToolCallContent")


@pytest.mark.parametrize("package", list(SCHEMAS))
def test_the_calls_are_the_clients_methods_whose_params_name_a_session(package: str) -> None:
    s = _senders(package)
    names = [c.name for c in s.calls]
    v1 = ["request_permission", "read_text_file", "write_text_file", "create_terminal", "terminal_output"]
    assert set(v1 if package.startswith("acp_v1") else ["request_permission"]) <= set(names)
    assert "session_update" not in names  # the senders send that one
    for call in s.calls:
        assert call.session_field == "session_id"
        assert "session_id" not in [f.name for f in call.fields]
