"""The IR pass for resumption: how a client takes a session up again on a
new connection (the generated ``SessionKeeper``), as the schema offers it.

Every name this pass looks for is one the schemas state only in prose (the
descriptions of ``LoadSessionRequest``, ``ResumeSessionRequest`` and
``AgentCapabilities.session``), so they are listed here, once:

* the agent's capabilities are the field of ``initialize``'s result that
  holds an :data:`AGENT_CAPABILITIES`;
* :data:`LOAD` (the agent replays the whole conversation) is advertised by
  the boolean flag :data:`LOAD_FLAG` ("Whether the agent supports
  `session/load`");
* :data:`RESUME` is advertised by the ``resume`` object of
  :data:`SESSION_CAPABILITIES` (v1: "Only available if the Agent supports
  the `sessionCapabilities.resume` capability"), or by the agent's
  ``session`` capabilities (v2: "Supplying `{}` means the agent supports the
  baseline session methods: ... `session/resume`");
* with :data:`REPLAY_FIELD`, a union of cursors, the request asks for a
  replay from the variant tagged :data:`REPLAY_START`.

The keeper sends ``sessionId``, ``cwd`` and ``mcpServers`` (a list of
:data:`MCP_SERVER`) with the request that resumes; a request without them
is not used. The result is :attr:`ir.Package.resumption`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from . import ir

INITIALIZE = "initialize"
LOAD = "session/load"
RESUME = "session/resume"
AGENT_CAPABILITIES = "AgentCapabilities"
LOAD_FLAG = "loadSession"
SESSION_CAPABILITIES = "SessionCapabilities"
SESSION_CAPABILITIES_FIELD = "sessionCapabilities"
SESSION_FIELD = "session"
RESUME_CAPABILITY = "resume"
REPLAY_FIELD = "replayFrom"
REPLAY_START = "start"
MCP_SERVER = "McpServer"
SESSION_ARGUMENTS = ("sessionId", "cwd", "mcpServers")


def find_resumption(package: ir.Package) -> ir.Package:
    """The package with :attr:`~ir.Package.resumption` set (None without a
    session fold, ``initialize`` or a method to resume with)."""
    return replace(package, resumption=resumption(package))


def resumption(package: ir.Package) -> ir.Resumption | None:
    """How a client resumes a session of ``package`` on a new connection."""
    if package.session is None:
        return None
    defs = {d.name: d for d in package.definitions}
    calls = {c.method: c for c in package.calls("agent")}
    initialize = calls.get(INITIALIZE)
    result = _object(defs, initialize.result) if initialize is not None else None
    holder = next((f for f in result.fields if _refers_to(f, AGENT_CAPABILITIES)), None) if result else None
    agent = _object(defs, AGENT_CAPABILITIES)
    if holder is None or agent is None:
        return None
    flag = _field(agent, LOAD_FLAG)
    load = (
        LOAD in calls
        and flag is not None
        and flag.type.kind == "bool"
        and _takes_session_arguments(_object(defs, calls[LOAD].params), defs)
    )
    resume: Literal["", "session_capabilities", "session"] = ""
    resume_call = calls.get(RESUME)
    request = _object(defs, resume_call.params) if resume_call is not None else None
    if _takes_session_arguments(request, defs):
        if _field(_object(defs, SESSION_CAPABILITIES), RESUME_CAPABILITY) and _field(agent, SESSION_CAPABILITIES_FIELD):
            resume = "session_capabilities"
        elif _field(agent, SESSION_FIELD):
            resume = "session"
    if not load and not resume:
        return None
    replay_class = ""
    cursor = _field(request, REPLAY_FIELD) if resume else None
    union = defs.get(_referred(cursor.type)) if cursor is not None else None
    if isinstance(union, ir.UnionDef):
        start = next((v for v in union.variants if v.tag == REPLAY_START), None)
        replay_class = start.class_name if start is not None else ""
    return ir.Resumption(capabilities=holder.name, load=load, resume=resume, replay_class=replay_class)


def _object(defs: dict[str, ir.Definition], name: str) -> ir.ObjectDef | None:
    found = defs.get(name)
    return found if isinstance(found, ir.ObjectDef) else None


def _field(definition: ir.ObjectDef | None, wire_name: str) -> ir.Field | None:
    if definition is None:
        return None
    return next((f for f in definition.fields if f.wire_name == wire_name), None)


def _takes_session_arguments(params: ir.ObjectDef | None, defs: dict[str, ir.Definition]) -> bool:
    """The request object has what the generated SessionKeeper sends with it
    (``sessionId``, ``cwd`` and an ``McpServer`` list)."""
    return all(_field(params, key) is not None for key in SESSION_ARGUMENTS) and MCP_SERVER in defs


def _referred(t: ir.TypeExpr) -> str:
    """The definition ``t`` (or ``t | None``) names; ``""`` for another type."""
    if isinstance(t, ir.NullableT):
        t = t.inner
    return t.name if isinstance(t, ir.RefT) else ""


def _refers_to(f: ir.Field, name: str) -> bool:
    return _referred(f.type) == name
