"""How each schema lets a client take a session up again (the ``resumption``
pass's ``Package.resumption``, which the generated SessionKeeper follows), read
from the vendored schemas and from copies of them with parts taken out."""

from __future__ import annotations

import json

import pytest
from acpgen.compile import ir
from acpgen.compile.load import parse_schema
from acpgen.pipeline import build_ir

from ..conftest import SCHEMAS


def resumption(name: str, edit=None) -> ir.Resumption | None:
    document = json.loads(SCHEMAS[name].read_text(encoding="utf-8"))
    if edit is not None:
        edit(document["$defs"])
    return build_ir(parse_schema(json.dumps(document).encode(), f"{name}.json"), name).resumption


@pytest.mark.parametrize("name", ["acp_v1", "acp_v1_unstable"])
def test_v1_loads_with_the_load_session_flag_and_resumes_with_session_capabilities(name):
    assert resumption(name) == ir.Resumption(
        capabilities="agent_capabilities", load=True, resume="session_capabilities", replay_class=""
    )


@pytest.mark.parametrize("name", ["acp_v2", "acp_v2_unstable"])
def test_v2_resumes_with_a_replay_from_the_start(name):
    assert resumption(name) == ir.Resumption(
        capabilities="capabilities", load=False, resume="session", replay_class="StartReplayFrom"
    )


def test_without_the_flag_there_is_no_load_and_without_either_method_no_resumption():
    def no_flag(defs):
        del defs["AgentCapabilities"]["properties"]["loadSession"]

    def neither(defs):
        no_flag(defs)
        del defs["SessionCapabilities"]["properties"]["resume"]

    assert resumption("acp_v1", no_flag) == ir.Resumption(
        capabilities="agent_capabilities", load=False, resume="session_capabilities"
    )
    assert resumption("acp_v1", neither) is None


def test_a_resume_request_without_replay_from_replays_nothing():
    def no_cursor(defs):
        del defs["ResumeSessionRequest"]["properties"]["replayFrom"]

    assert resumption("acp_v2", no_cursor) == ir.Resumption(capabilities="capabilities", load=False, resume="session")


def test_a_resume_or_load_request_without_what_the_keeper_sends_is_no_resumption():
    """The SessionKeeper sends ``sessionId``, ``cwd`` and ``mcpServers`` (a
    list of ``McpServer``): a schema whose request lacks them gets no keeper
    (it was generated, and its connection module failed to import)."""

    def no_servers(defs):
        del defs["ResumeSessionRequest"]["properties"]["mcpServers"]

    def no_server_type(defs):
        defs["McpServerList"] = defs.pop("McpServer")
        text = json.dumps(defs).replace('"#/$defs/McpServer"', '"#/$defs/McpServerList"')
        defs.clear()
        defs.update(json.loads(text))

    def no_cwd_to_load(defs):
        del defs["LoadSessionRequest"]["properties"]["cwd"]
        defs["LoadSessionRequest"]["required"].remove("cwd")

    assert resumption("acp_v2", no_servers) is None
    assert resumption("acp_v2", no_server_type) is None
    assert resumption("acp_v1", no_cwd_to_load) == ir.Resumption(
        capabilities="agent_capabilities", load=False, resume="session_capabilities"
    )
