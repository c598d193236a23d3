"""The capability gates the generator reads from the vendored schemas: from
the capability descriptions ("Whether the Client supports `fs/read_text_file`
requests.") and from rules/capabilities.toml, each placed under the
initialize params or result of the side that advertises it."""

from __future__ import annotations

import functools

import pytest
from acpgen.compile.load import load_schema
from acpgen.compile.passes import gates as gates_pass
from acpgen.errors import AcpgenError
from acpgen.pipeline import build_ir

from ..conftest import ROOT


@functools.cache
def package(schema: str):
    return build_ir(load_schema(ROOT / "schema" / schema), "acp_x")


def table(schema: str) -> dict[str, tuple[str, str, str]]:
    return {g.method: (g.side, ".".join(g.path), g.source) for g in package(schema).gates}


def test_v1_gates_from_the_descriptions() -> None:
    found = table("v1/schema.json")
    assert found["fs/read_text_file"] == ("client", "clientCapabilities.fs.readTextFile", "description")
    assert found["fs/write_text_file"] == ("client", "clientCapabilities.fs.writeTextFile", "description")
    # "Whether the Client support all `terminal/*` methods."
    terminal = {m for m, (_, path, _) in found.items() if path == "clientCapabilities.terminal"}
    assert terminal == {
        "terminal/create",
        "terminal/output",
        "terminal/release",
        "terminal/wait_for_exit",
        "terminal/kill",
    }
    assert found["session/load"] == ("agent", "agentCapabilities.loadSession", "description")
    for method, field in [("list", "list"), ("delete", "delete"), ("resume", "resume"), ("close", "close")]:
        assert found[f"session/{method}"] == ("agent", f"agentCapabilities.sessionCapabilities.{field}", "description")


def test_v1_gates_from_the_rules() -> None:
    found = table("v1/schema.json")
    # "Whether the agent supports the logout method": no backticks
    assert found["logout"] == ("agent", "agentCapabilities.auth.logout", "rules")
    assert found["elicitation/create"] == ("client", "clientCapabilities.elicitation", "rules")
    # Methods every agent and client must support are not gated.
    for method in ("initialize", "session/new", "session/prompt", "session/cancel", "session/update"):
        assert method not in found
    assert "session/request_permission" not in found


def test_v1_unstable_gates_name_both_methods_of_one_capability() -> None:
    found = table("v1/schema.unstable.json")
    # "Whether the agent supports `session/archive` and `session/unarchive`."
    assert (
        found["session/archive"][1] == found["session/unarchive"][1] == "agentCapabilities.sessionCapabilities.archive"
    )
    assert found["auth/status"] == ("agent", "agentCapabilities.auth.status", "description")
    assert {m for m in found if m.startswith("providers/")} == {"providers/list", "providers/set", "providers/disable"}


def test_v2_gates() -> None:
    found = table("v2/schema.json")
    assert found["auth/login"] == found["auth/logout"] == ("agent", "authMethods", "rules")
    assert found["session/delete"] == ("agent", "capabilities.session.delete", "description")
    assert found["elicitation/create"] == ("client", "capabilities.elicitation", "rules")
    # The baseline session methods stay ungated (TypeScript SDK v2 agents
    # omit `capabilities.session` and serve them).
    assert not {"session/new", "session/prompt", "session/list", "session/resume"} & set(found)


def test_the_generated_table_is_the_gates() -> None:
    from ..conftest import load_generated

    acp = load_generated("acp_v1")
    assert acp.REQUIRES["fs/read_text_file"] == ("clientCapabilities", "fs", "readTextFile")
    assert set(acp.REQUIRES) == set(table("v1/schema.json"))


def test_a_rule_for_a_method_the_other_side_handles_is_an_error() -> None:
    wrong = (gates_pass.GateRule("ClientCapabilities", "terminal", ("session/new",)),)
    with pytest.raises(AcpgenError, match="'session/new' is handled by the agent side"):
        gates_pass.find_gates(package("v1/schema.json"), wrong)


def test_a_rule_for_what_a_schema_lacks_is_ignored() -> None:
    rules = (
        gates_pass.GateRule("NoSuchCapabilities", "x", ("fs/read_text_file",)),
        gates_pass.GateRule("ClientCapabilities", "terminal", ("no/such_method",)),
    )
    described = tuple(g for g in package("v1/schema.json").gates if g.source == "description")
    assert gates_pass.find_gates(package("v1/schema.json"), rules).gates == described


def test_the_rules_file_is_checked(tmp_path) -> None:
    bad = tmp_path / "capabilities.toml"
    bad.write_text('[[gate]]\ncapability = "NoDot"\nmethods = ["x"]\n')
    with pytest.raises(AcpgenError, match=r"Definition\.property"):
        gates_pass.gate_rules(bad)
