"""How each schema lets a client take a session up again (the ``resumption``
pass's ``Package.resumption``, which the generated SessionKeeper follows), read
from the vendored schemas and from copies of them with parts taken out."""

from __future__ import annotations

import dataclasses
import json

import pytest
from acpgen.compile import ir
from acpgen.compile import resumption as pass_
from acpgen.compile.load import parse_schema
from acpgen.errors import AcpgenError
from acpgen.pipeline import build_ir

from ..conftest import SCHEMAS


def package(name: str, edit=None) -> ir.Package:
    document = json.loads(SCHEMAS[name].read_text(encoding="utf-8"))
    if edit is not None:
        edit(document["$defs"])
    return build_ir(parse_schema(json.dumps(document).encode(), f"{name}.json"), name)


def resumption(name: str, edit=None) -> ir.Resumption | None:
    return package(name, edit).resumption


V1 = ir.Resumption(
    capabilities="agent_capabilities",
    load=True,
    resume="session_capabilities",
    load_method="session/load",
    load_flag="load_session",
    resume_method="session/resume",
    resume_place=("session_capabilities", "resume"),
    resume_class="SessionResumeCapabilities",
    mcp_server="McpServer",
)
"""v1: session/load with its flag, session/resume with its capability object."""

NO_LOAD = dataclasses.replace(V1, load=False, load_method="", load_flag="")

V2 = ir.Resumption(
    capabilities="capabilities",
    load=False,
    resume="session",
    replay_class="StartReplayFrom",
    resume_method="session/resume",
    resume_place=("session",),
    resume_class="SessionCapabilities",
    replay_field="replay_from",
    mcp_server="McpServer",
)
"""v2: session/resume advertised by the session capabilities, with a replay."""


@pytest.mark.parametrize("name", ["acp_v1", "acp_v1_unstable"])
def test_v1_loads_with_the_load_session_flag_and_resumes_with_session_capabilities(name):
    assert resumption(name) == V1


@pytest.mark.parametrize("name", ["acp_v2", "acp_v2_unstable"])
def test_v2_resumes_with_a_replay_from_the_start(name):
    assert resumption(name) == V2


def test_without_the_flag_there_is_no_load_and_without_either_method_no_resumption():
    def no_flag(defs):
        del defs["AgentCapabilities"]["properties"]["loadSession"]

    def neither(defs):
        no_flag(defs)
        del defs["SessionCapabilities"]["properties"]["resume"]

    assert resumption("acp_v1", no_flag) == NO_LOAD
    assert resumption("acp_v1", neither) is None


def test_a_resume_request_without_replay_from_replays_nothing():
    def no_cursor(defs):
        del defs["ResumeSessionRequest"]["properties"]["replayFrom"]

    assert resumption("acp_v2", no_cursor) == dataclasses.replace(V2, replay_class="", replay_field="")


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
    assert resumption("acp_v1", no_cwd_to_load) == NO_LOAD


def test_the_places_are_the_rules_files():
    """A schema whose flag has another name loads only with rules naming it."""

    def renamed(defs):
        properties = defs["AgentCapabilities"]["properties"]
        properties["canLoad"] = properties.pop("loadSession")

    built = package("acp_v1", renamed)
    assert built.resumption == NO_LOAD
    rules = dataclasses.replace(pass_.resumption_rules(), load_flag=pass_.Place("AgentCapabilities", "canLoad"))
    assert pass_.resumption(built, rules) == dataclasses.replace(V1, load_flag="can_load")


def test_a_place_that_is_not_definition_dot_property_is_refused(tmp_path):
    text = pass_.builtin_rules_file().read_text(encoding="utf-8")
    broken = tmp_path / "resumption.toml"
    broken.write_text(text.replace('flag = "AgentCapabilities.loadSession"', 'flag = "loadSession"'), encoding="utf-8")
    with pytest.raises(AcpgenError, match=r"Definition\.property"):
        pass_.resumption_rules(broken)
