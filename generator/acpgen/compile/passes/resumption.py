"""The IR pass for resumption: how a client takes a session up again on a
new connection (the generated ``SessionKeeper``), as the schema offers it.

The schemas say where each way is advertised only in prose (the
descriptions of ``LoadSessionRequest``, ``ResumeSessionRequest`` and
``AgentCapabilities.session``), so ``rules/resumption.toml`` names the
places:

* the agent's capabilities are the field of ``initialize``'s result that
  holds the ``capabilities`` definition;
* ``session/load`` (the agent replays the whole conversation) is
  advertised by a boolean flag (v1 ``loadSession``);
* ``session/resume`` by the ``resume`` object of the session capabilities
  (v1), else by the agent's ``session`` capabilities (v2, "the baseline
  session methods"); with a ``replayFrom`` union, the request asks for a
  replay from its variant tagged ``start``.

The keeper sends ``sessionId``, ``cwd`` and ``mcpServers`` (a list of
``McpServer``) with the request that resumes; a request without them is not
used. The result is :attr:`ir.Package.resumption`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from ...errors import AcpgenError
from ...records import dataclass
from .. import ir
from .options import Options
from .rules import RESUMPTION, builtin_file, read_rules

INITIALIZE = "initialize"


@dataclass(frozen=True)
class Place:
    """A property of a definition, by wire names."""

    definition: str
    property: str


@dataclass(frozen=True)
class ResumptionRules:
    """The entries of ``rules/resumption.toml``."""

    capabilities: str
    arguments: tuple[str, ...]
    mcp_server: str
    load_method: str
    load_flag: Place
    resume_method: str
    session_capabilities: Place
    resume: Place
    session: Place
    replay: Place
    replay_start: str


def builtin_rules_file() -> Path:
    return builtin_file(RESUMPTION)


def resumption_rules(path: Path | None = None) -> ResumptionRules:
    """The rules file, read."""
    path = path or builtin_rules_file()
    data = read_rules(path)

    def text(table: dict[str, Any], key: str) -> str:
        value = table.get(key)
        if not isinstance(value, str) or not value:
            raise AcpgenError(f"the resumption rules need {key} = a string", file=str(path))
        return value

    def place(table: dict[str, Any], key: str) -> Place:
        value = text(table, key)
        if value.count(".") != 1:
            raise AcpgenError(f'the resumption rules need {key} = "Definition.property"', file=str(path))
        definition, name = value.split(".")
        return Place(definition, name)

    def section(key: str) -> dict[str, Any]:
        value = data.get(key)
        if not isinstance(value, dict):
            raise AcpgenError(f"the resumption rules need a [{key}] table", file=str(path))
        return value

    arguments = data.get("arguments")
    if not isinstance(arguments, list) or not all(isinstance(a, str) for a in arguments):
        raise AcpgenError("the resumption rules need arguments = a list of property names", file=str(path))
    load, resume = section("load"), section("resume")
    return ResumptionRules(
        capabilities=text(data, "capabilities"),
        arguments=tuple(arguments),
        mcp_server=text(data, "mcp_server"),
        load_method=text(load, "method"),
        load_flag=place(load, "flag"),
        resume_method=text(resume, "method"),
        session_capabilities=place(resume, "session_capabilities"),
        resume=place(resume, "resume"),
        session=place(resume, "session"),
        replay=place(resume, "replay"),
        replay_start=text(resume, "replay_start"),
    )


def find_resumption(package: ir.Package, rules: ResumptionRules | None = None) -> ir.Package:
    """The package with :attr:`~ir.Package.resumption` set (None without a
    session fold, ``initialize`` or a method to resume with)."""
    return replace(package, resumption=resumption(package, rules or resumption_rules()))


def run(package: ir.Package, options: Options) -> ir.Package:
    """The pass: :func:`find_resumption`."""
    return find_resumption(package)


def resumption(package: ir.Package, rules: ResumptionRules) -> ir.Resumption | None:
    """How a client resumes a session of ``package`` on a new connection."""
    if package.session is None:
        return None
    defs = {d.name: d for d in package.definitions}
    calls = {c.method: c for c in package.calls("agent")}
    initialize = calls.get(INITIALIZE)
    result = _object(defs, initialize.result) if initialize is not None else None
    holder = next((f for f in result.fields if _referred(f.type) == rules.capabilities), None) if result else None
    if holder is None or _object(defs, rules.capabilities) is None:
        return None

    def usable(method: str) -> ir.Call | None:
        """The call of ``method`` when it takes what the keeper sends."""
        call = calls.get(method)
        params = _object(defs, call.params) if call is not None else None
        takes = params is not None and all(_field(params, key) is not None for key in rules.arguments)
        return call if takes and rules.mcp_server in defs else None

    flag = _at(defs, rules.load_flag)
    load = usable(rules.load_method) is not None and flag is not None and flag.type.kind == "bool"
    resume: Literal["", "session_capabilities", "session"] = ""
    place: tuple[str, ...] = ()
    advertised = ""
    request = usable(rules.resume_method)
    if request is not None:
        container, inner, session = (
            _at(defs, rules.session_capabilities),
            _at(defs, rules.resume),
            _at(defs, rules.session),
        )
        if container is not None and inner is not None:
            resume, place, advertised = "session_capabilities", (container.name, inner.name), _referred(inner.type)
        elif session is not None:
            resume, place, advertised = "session", (session.name,), _referred(session.type)
    if not load and not resume:
        return None
    replay_class = replay_field = ""
    cursor = _at(defs, rules.replay) if resume else None
    union = defs.get(_referred(cursor.type)) if cursor is not None else None
    if cursor is not None and isinstance(union, ir.UnionDef):
        start = next((v for v in union.variants if v.tag == rules.replay_start), None)
        if start is not None:
            replay_class, replay_field = start.class_name, cursor.name
    return ir.Resumption(
        capabilities=holder.name,
        load=load,
        resume=resume,
        replay_class=replay_class,
        load_method=rules.load_method if load else "",
        load_flag=flag.name if load and flag is not None else "",
        resume_method=rules.resume_method if resume else "",
        resume_place=place,
        resume_class=advertised,
        replay_field=replay_field,
        mcp_server=defs[rules.mcp_server].class_name,
    )


def _object(defs: dict[str, ir.Definition], name: str) -> ir.ObjectDef | None:
    found = defs.get(name)
    return found if isinstance(found, ir.ObjectDef) else None


def _field(definition: ir.ObjectDef | None, wire_name: str) -> ir.Field | None:
    if definition is None:
        return None
    return next((f for f in definition.fields if f.wire_name == wire_name), None)


def _at(defs: dict[str, ir.Definition], place: Place) -> ir.Field | None:
    """The field at ``place``, if the schema has it."""
    return _field(_object(defs, place.definition), place.property)


def _referred(t: ir.TypeExpr) -> str:
    """The definition ``t`` (or ``t | None``) names; ``""`` for another type."""
    if isinstance(t, ir.NullableT):
        t = t.inner
    return t.name if isinstance(t, ir.RefT) else ""
