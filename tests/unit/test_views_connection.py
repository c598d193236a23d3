"""The views of ``connection.py`` and ``protocol.py`` (``acpgen.views``):
what each side's connection sends and handles, how the SessionKeeper
resumes for each schema (``Package.resumption``, set by its pass), and that
the two templates only print what the views say."""

from __future__ import annotations

import dataclasses
import functools

import jinja2
import jinja2.meta
import jinja2.nodes
import pytest
from acpgen.compile import ir
from acpgen.compile.load import load_schema
from acpgen.emit.render import builtin_templates, environment
from acpgen.pipeline import build_ir
from acpgen.views import VIEWS, ViewInputs
from acpgen.views.connection import ConnectionView
from acpgen.views.names import ModuleNames, exports, schema_names
from acpgen.views.protocol import ProtocolView

from ..conftest import ROOT, SCHEMAS

KITCHEN = ROOT / "tests/kitchen/schema.json"
TEMPLATES = ("connection.py.jinja", "protocol.py.jinja")


@functools.cache
def package(name: str) -> ir.Package:
    path = KITCHEN if name == "kitchen_sink" else SCHEMAS[name]
    return build_ir(load_schema(path), name)


def view(name: str, module: str) -> object:
    built = package(name)
    names = exports(built)
    return VIEWS[module](
        ViewInputs(
            package=built,
            defs={d.name: d for d in built.definitions},
            names=ModuleNames(own=frozenset(names[module]), schema=schema_names(built), binds_schema=False),
            exports=names,
            generator_version="0",
        )
    )


def connection(name: str) -> ConnectionView:
    built = view(name, "connection")
    assert isinstance(built, ConnectionView)
    return built


def protocol(name: str) -> ProtocolView:
    built = view(name, "protocol")
    assert isinstance(built, ProtocolView)
    return built


# ---------------------------------------------------------------- resumption


def test_resumption_is_a_field_set_by_its_pass_once():
    assert "resumption" in {f.name for f in dataclasses.fields(ir.Package)}
    assert not isinstance(getattr(ir.Package, "resumption", None), property)
    v1 = package("acp_v1").resumption
    assert v1 is not None and (v1.load, v1.resume, v1.replay_class) == (True, "session_capabilities", "")
    v2 = package("acp_v2").resumption
    assert v2 is not None and (v2.load, v2.resume, v2.replay_class) == (False, "session", "StartReplayFrom")


def test_the_kitchen_sink_folds_sessions_but_cannot_resume_them():
    """The kitchen's ``session/resume`` takes no ``cwd`` or ``mcpServers``
    (the keeper sends them): a session fold, no keeper."""
    assert package("kitchen_sink").session is not None
    assert package("kitchen_sink").resumption is None
    built = connection("kitchen_sink")
    assert built.keeper is None and not built.uses_unset and built.sessions
    assert built.protocol_version == "_PROTOCOL_VERSION"
    assert [side.sessions_doc != "" for side in built.sides] == [False, True]
    assert "'SessionKeeper'" not in built.exports and "'ResumeUnsupported'" not in built.exports


def test_v1_loads_when_it_can_and_resumes_without_a_replay_otherwise():
    keeper = connection("acp_v1").keeper
    assert keeper is not None
    assert [(f.name, f.expression) for f in keeper.flags] == [
        ("load", "capabilities.load_session is True"),
        ("resume", "isinstance(capabilities.session_capabilities.resume, SessionResumeCapabilities)"),
    ]
    load, resume = keeper.ways
    assert (load.condition, load.method, load.replay, load.handler) == (
        "load and (self.replay or not resume)",
        "'session/load'",
        "True",
        "load_session",
    )
    assert (resume.condition, resume.method, resume.replay, resume.extra) == ("resume", "'session/resume'", "False", "")
    assert keeper.response == "LoadSessionResponse | ResumeSessionResponse"
    assert keeper.capabilities == "agent_capabilities" and keeper.keyed_by_id == "False"
    assert (
        keeper.unsupported == "'neither session/load (loadSession) nor session/resume' ' (sessionCapabilities.resume)'"
    )
    assert "``session/load`` when the agent advertises ``loadSession``" in keeper.doc
    assert not connection("acp_v1").uses_unset
    # It keeps a SessionId and sends it as one (the runtime holds a str).
    assert (keeper.session_id, keeper.session_id_arg, keeper.cwd) == ("SessionId", "SessionId(self.session_id)", "str")


@pytest.mark.parametrize("name", ["acp_v2", "acp_v2_unstable"])
def test_v2_resumes_asking_for_a_replay_from_the_start(name):
    built = connection(name)
    keeper = built.keeper
    assert keeper is not None
    assert [f.name for f in keeper.flags] == ["resume"]
    (way,) = keeper.ways
    assert (way.method, way.replay, way.handler) == ("'session/resume'", "self.replay", "resume_session")
    assert way.extra == ", replay_from=StartReplayFrom() if self.replay else _UNSET"
    assert keeper.unsupported == "'no session/resume' ' (capabilities.session)'"
    assert keeper.keyed_by_id == "True" and keeper.fields[0] == "'history'"
    assert built.uses_unset
    assert (keeper.session_id, keeper.cwd) == ("SessionId", "AbsolutePath")


# ---------------------------------------------------------------- sides


@pytest.mark.parametrize("name", ["acp_v1", "acp_v2", "kitchen_sink"])
def test_each_side_sends_what_the_other_handles_and_handles_its_own(name):
    built = package(name)
    agent, client = connection(name).sides
    assert (agent.class_name, client.class_name) == ("AgentSideConnection", "ClientSideConnection")
    assert [h.name for h in agent.sends] == [c.handler for c in built.calls("client")]
    assert [h.name for h in client.sends] == [c.handler for c in built.calls("agent")]
    interfaces = protocol(name).interfaces
    assert [i.class_name for i in interfaces] == ["Agent", "Client"]
    assert [h.name for h in interfaces[0].handlers] == [h.name for h in client.sends]
    assert [h.name for h in interfaces[1].handlers] == [h.name for h in agent.sends]


def test_the_client_sends_initialize_and_prompts_and_the_agent_the_updates():
    agent, client = connection("acp_v2").sides
    sent = {h.method: h for h in client.sends}
    assert sent["'initialize'"].request and sent["'initialize'"].returns == "InitializeResponse"
    assert sent["'session/cancel'"].returns == "None" and not sent["'session/cancel'"].request
    update = {h.method: h for h in agent.sends}["'session/update'"]
    assert (update.name, update.request, update.params) == ("session_update", False, "UpdateSessionNotification")
    assert agent.sessions_doc == "" and client.sessions_doc.startswith('"""The sessions this client opened')


def test_a_gate_on_one_capability_is_a_one_element_tuple():
    gates = {g.method: g.path for g in protocol("acp_v2").gates}
    assert gates["'auth/login'"] == "('authMethods',)"
    assert gates["'elicitation/create'"] == "('capabilities', 'elicitation')"


# ---------------------------------------------------------------- templates


def fixed_lines(source: str) -> list[str]:
    """The lines of a template that hold no Jinja, leaving out blank lines,
    imports and the module docstring."""
    lines = []
    in_docstring = False
    docstring_seen = False
    for line in source.splitlines():
        text = line.strip()
        if not docstring_seen and text.startswith('"""'):
            in_docstring = not (len(text) > 3 and text.endswith('"""'))
            docstring_seen = True
            continue
        if in_docstring:
            in_docstring = not text.endswith('"""')
            continue
        if not text or any(mark in line for mark in ("{{", "{%", "{#")):
            continue
        if text.startswith(("from ", "import ")) or text == "#acpgen:imports#":
            continue
        lines.append(text)
    return lines


def test_fixed_lines_counts_code_but_not_imports_docstring_or_jinja():
    source = '{{ view.header }}\n"""Doc\n\nmore\n"""\nfrom . import x\n\nA = 1\n    {{ h.doc }}\n    return result\n'
    assert fixed_lines(source) == ["A = 1", "return result"]


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_template_holds_under_40_lines_of_fixed_python(template):
    source = (builtin_templates() / template).read_text(encoding="utf-8")
    assert len(fixed_lines(source)) < 40


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_template_reads_only_its_view(template):
    env = environment()
    source = (builtin_templates() / template).read_text(encoding="utf-8")
    parsed = env.parse(source)
    assert jinja2.meta.find_undeclared_variables(parsed) == {"view"}
    assert not list(parsed.find_all(jinja2.nodes.Filter))
    assert not list(parsed.find_all(jinja2.nodes.Call))
    assert not list(parsed.find_all((jinja2.nodes.Import, jinja2.nodes.FromImport, jinja2.nodes.Include)))
