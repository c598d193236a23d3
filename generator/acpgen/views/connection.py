"""The view of ``connection.py``: the two sides' connection classes with a
typed method per call of the peer, the entry points (thin wrappers over
the runtime's ``_sides``) and, when the schema lets a client take a session
up again, the ``SessionKeeper`` and how it resumes."""

from __future__ import annotations

from collections.abc import Mapping

from ..compile import ir
from ..records import dataclass
from . import text
from .inputs import ViewInputs
from .names import has_mcp, reexports
from .protocol import Handler, handler, header, literals
from .senders import session_type

INITIALIZE = "initialize"


@dataclass(frozen=True)
class Side:
    """One side's connection class."""

    class_name: str
    type_var: str
    """The type variable of its handler (``_A``: an ``Agent``)."""
    type_var_name: str
    """The type variable's name, as a literal."""
    side: str
    """The side it is, as a literal."""
    interface: str
    """The private name of the handler interface it serves."""
    doc: str
    sessions_doc: str
    """The docstring of ``sessions`` (``""``: the side folds no sessions)."""
    sends: tuple[Handler, ...]
    """A typed method per call the peer handles."""
    session_type: str = ""
    """The annotation of ``session``'s session id (``""``: the side has no
    ``session`` method returning a ``SessionSender``)."""
    session_doc: str = ""
    mixin: str = ""
    """``, _Base`` when the class also derives from a runtime class (MCP
    over ACP: ``_mcp``'s ``CallsMcp`` for the agent, ``ProvidesMcp`` for the
    client), else ``""``."""


@dataclass(frozen=True)
class Flag:
    """What ``_resume`` reads from the agent's capabilities: ``name =
    expression``."""

    name: str
    expression: str


@dataclass(frozen=True)
class Way:
    """One way ``_resume`` takes the session up again, tried in order."""

    condition: str
    """When (an expression over the flags)."""
    method: str
    """The method, as a literal."""
    replay: str
    """Whether the agent replays the session (an expression)."""
    handler: str
    params: str
    """The params class."""
    extra: str
    """Arguments after those every way sends (``, replay_from=...``)."""


@dataclass(frozen=True)
class Keeper:
    """The ``SessionKeeper``: one session's fold across connections."""

    doc: str
    init_doc: str
    initialized_doc: str
    response_doc: str
    fields: tuple[str, ...]
    """The Session's fields (``history`` first), as literals."""
    history_fields: tuple[str, ...]
    keyed_by_id: str
    initialize: str
    """The ``initialize`` params class."""
    initialized: str
    """The ``initialize`` result class."""
    mcp_server: str
    session_id: str
    """The annotation of the session id it keeps (the resuming requests'
    ``session_id``: ``SessionId``)."""
    session_id_arg: str
    """The session id as those requests take it: the runtime's ``str``
    made a value of a named string type by calling it."""
    cwd: str
    """The annotation of the ``cwd`` sent with them."""
    response: str
    """The annotation of the answer to the request that resumes."""
    capabilities: str
    """The attribute of the ``initialize`` result holding the agent's."""
    flags: tuple[Flag, ...]
    ways: tuple[Way, ...]
    unsupported: str
    """The end of the error when the agent offers no way, as literals."""
    uses_unset: bool
    """Its code names ``UNSET`` (the module imports it)."""


@dataclass(frozen=True)
class ConnectionView:
    """Everything ``connection.py`` prints."""

    header: str
    reexports: tuple[tuple[str, str], ...]
    exports: tuple[str, ...]
    sessions: bool
    """The package folds sessions (imports ``session``)."""
    protocol_version: str
    """The connection's ``protocol_version``: a name or ``None``."""
    sides: tuple[Side, ...]
    keeper: Keeper | None
    uses_unset: bool
    """The keeper's code names ``UNSET``."""
    senders: bool
    """The agent's connection has ``session`` (imports ``senders``)."""
    docs: Mapping[str, str]
    """The entry points' docstrings, as source, by function name."""
    mcp: bool = False
    """The package binds MCP over ACP (imports ``_mcp``)."""


def _side_doc(handles: str, interface: str, calls: str) -> str:
    return (
        f'"""The {handles}\'s end of the connection: ``make_{handles}(conn)`` returns\n'
        f"the {handles} (an :class:`{interface}`) that handles what the {calls} sends;\n"
        f'the typed methods below call the {calls}."""'
    )


SESSIONS_DOC = {
    True: '''"""The sessions this client opened (``session/new``, ``session/load``
...: see ``SESSION_SOURCES``), by ``sessionId``: each the newest
``Session``, folded from the agent's ``session/update`` notifications
(before the client's ``session_update`` sees them) and from the
client's own ``session/prompt`` requests as they are sent (the user's
message, which starts a turn). Empty with ``fold_sessions=False``;
delete a session from it to stop folding it."""''',
    False: '''"""The sessions this client opened (``session/new``, ``session/resume``
...: see ``SESSION_SOURCES``), by ``sessionId``: each the newest
``Session``, folded from the agent's ``session/update`` notifications
(before the client's ``session_update`` sees them; the agent sends
the user's prompt back as a ``user_message``). Empty with
``fold_sessions=False``; delete a session from it to stop folding it."""''',
}
"""``ClientSideConnection.sessions``'s docstring, by whether the client's
own prompts are folded (``SessionRules.prompt_field``)."""


DOCS = {
    "run_agent_stdio": '''"""Serve an agent on this process's stdin and stdout until the client
closes stdin. Log to stderr: stdout carries the protocol. ``options``
are the connection's (``validate_outgoing=True`` ...)."""''',
    "spawn_agent": '''"""Start ``program`` with ``args`` as an agent subprocess speaking ACP on
its stdin/stdout and yield the client's connection to it (the process is
``conn.process``). The agent's stderr goes on to this process's stderr.
``options`` are the connection's (``validate_outgoing=True`` ...).

Leaving the block closes the connection (its handlers are cancelled)
and the agent's stdin: the agent has at most ``min(1, close_grace)``
seconds to take what is still unsent, then ``close_grace`` seconds
(default 5) to exit, while what it still writes is read and discarded;
then it is killed (SIGKILL) and awaited, which can no longer block. So
leaving returns within about ``min(1, close_grace) + close_grace``
seconds, and the agent's process is always reaped. A ``ConnectionError``
(the agent died at start-up, say) leaves the block naming the agent's
exit status and the last lines of its stderr."""''',
    "connect_in_memory": '''"""An agent and a client joined in this process (for tests): both are
started, with the same ``options``; close both when done. Call it with
an event loop running."""''',
    "asgi_agent_app": '''"""An ASGI application serving ``make_agent``'s agents, one per
connection, over ACP's Streamable HTTP and WebSocket transport on one
endpoint (``/acp``); run it under uvicorn or hypercorn. Secure by
default: requests with an ``Origin`` other than a loopback one are refused
(``allowed_origins``), ``authenticate`` (see :func:`bearer_token`)
checks each request, and messages, connections, sessions and what waits
for a slow peer are bounded (the options of ``_asgi.ServeOptions``).
``connection`` holds the options of each connection
(``{"validate_outgoing": True}`` ...)."""''',
    "serve_agent": '''"""Serve :func:`asgi_agent_app` with uvicorn (``pip install uvicorn``) on
``host`` (loopback unless told otherwise) and ``port`` until cancelled;
``ready(port)`` is called once it listens (``port=0``: any free port);
``connection`` and ``options`` as for :func:`asgi_agent_app`."""''',
    "connect_agent_ws": '''"""Connect to an agent's WebSocket endpoint (``ws://host:port/acp``,
``pip install websockets``) and yield the client's connection; closed on
exit. ``headers`` go with the upgrade (a token, say); the server's
cookies are kept in ``cookies``: pass the same dict to reconnect. Raises
``_remote.TransportRefused`` (a ``ConnectionError``) with the HTTP status
when the server refuses, or redirects to another host (which would get
every header) unless ``cross_host_redirects``. ``options`` are the
connection's (``validate_outgoing=True`` ...); its ``max_buffered``
also bounds the bytes the transport holds for it."""''',
    "connect_agent_http": '''"""Connect to an agent's Streamable HTTP endpoint (``http://host:port/acp``,
``pip install httpx``; ``http2`` also needs ``h2``) and yield the client's
connection; closed on exit (the server is told with ``DELETE``). A
request the server refuses fails with a ``RequestError`` whose data holds
the HTTP status; no redirect is followed; an answer over ``max_message``
bytes is refused without being read whole; ``headers``, ``cookies`` and
``options`` as for :func:`connect_agent_ws`."""''',
}
"""The docstrings of the entry points the module defines (fixed text, as
source; the others are the runtime's ``_sides``)."""


SESSION_DOC = '''"""The sender of session ``session_id``'s updates: a
``senders.SessionSender``, with a method per kind of ``session/update``."""'''

KEEPER_INIT_DOC = '''"""Keep session ``session_id``, folded by ``connection`` (or, without
one, so far into ``session``; None: nothing yet); ``initialize`` is sent
on each new connection, ``cwd`` and ``mcp_servers`` with the request
that resumes."""'''


def build(inputs: ViewInputs) -> ConnectionView:
    """The view of ``connection.py``."""
    package = inputs.package
    keeper = _keeper(inputs)
    return ConnectionView(
        header=header(inputs),
        reexports=tuple(reexports(package)["connection"]),
        exports=literals(inputs.exports["connection"]),
        sessions=package.session is not None,
        protocol_version="_PROTOCOL_VERSION" if package.session is not None else "None",
        sides=(_side(inputs, "agent"), _side(inputs, "client")),
        keeper=keeper,
        uses_unset=keeper is not None and keeper.uses_unset,
        senders=package.senders is not None,
        docs=DOCS,
        mcp=has_mcp(package),
    )


def _side(inputs: ViewInputs, handles: ir.Side) -> Side:
    package = inputs.package
    calls: ir.Side = "client" if handles == "agent" else "agent"
    interface = "Agent" if handles == "agent" else "Client"
    folds = package.session if handles == "client" else None
    type_var = "_A" if handles == "agent" else "_C"
    return Side(
        class_name="AgentSideConnection" if handles == "agent" else "ClientSideConnection",
        type_var=type_var,
        type_var_name=text.py_literal(type_var),
        side=text.py_literal(handles),
        interface="_" + interface,
        doc=_side_doc(handles, interface, calls),
        sessions_doc=SESSIONS_DOC[bool(folds.prompt_field)] if folds is not None else "",
        sends=tuple(handler(inputs, c, text.send_doc(c)) for c in package.calls(calls)),
        session_type=session_type(inputs) if handles == "agent" else "",
        session_doc=SESSION_DOC if handles == "agent" else "",
        mixin=("" if not has_mcp(package) else ", _CallsMcp" if handles == "agent" else ", _ProvidesMcp"),
    )


def _keeper(inputs: ViewInputs) -> Keeper | None:
    package, ref = inputs.package, inputs.names.ref
    r, s = package.resumption, package.session
    if r is None or s is None:
        return None
    agent_calls = {c.method: c for c in package.calls("agent")}
    load = agent_calls[r.load_method] if r.load else None
    resume = agent_calls[r.resume_method] if r.resume else None
    flags: list[Flag] = []
    ways: list[Way] = []
    uses_unset = False
    if load is not None:
        flags.append(Flag("load", f"capabilities.{r.load_flag} is True"))
        ways.append(
            Way(
                condition="load and (self.replay or not resume)" if resume is not None else "load",
                method=text.py_literal(load.method),
                replay="True",
                handler=load.handler,
                params=ref(load.params_class),
                extra="",
            )
        )
    if resume is not None:
        place = "capabilities." + ".".join(r.resume_place)
        if r.resume == "session_capabilities":
            flags.append(Flag("resume", f"isinstance({place}, {ref(r.resume_class)})"))
        else:
            flags.append(Flag("resume", f"{place} is not None and {place} is not _UNSET"))
            uses_unset = True
        extra = ""
        if r.replay_class:
            extra = f", {r.replay_field}={ref(r.replay_class)}() if self.replay else _UNSET"
            uses_unset = True
        ways.append(
            Way(
                condition="resume",
                method=text.py_literal(resume.method),
                replay="self.replay" if r.replay_class else "False",
                handler=resume.handler,
                params=ref(resume.params_class),
                extra=extra,
            )
        )
    initialize = agent_calls[INITIALIZE]
    answers = [c.result_class for c in (load, resume) if c is not None]
    params = inputs.defs[(load or resume or initialize).params]
    assert isinstance(params, ir.ObjectDef)
    sent = {f.name: f.type for f in params.fields}
    annotate = text.Annotations(inputs.defs, inputs.names.annotation_ref, inputs.names.builtin)
    session_id = sent["session_id"]
    # The runtime keeps the id as a str: a named string type is made of it by a call.
    session_id_arg = "self.session_id"
    if isinstance(session_id, ir.RefT):
        target = inputs.defs[session_id.name]
        if isinstance(target, ir.AliasDef) and target.named_string:
            session_id_arg = f"{ref(target.class_name)}(self.session_id)"
    return Keeper(
        doc=_keeper_doc(r),
        init_doc=KEEPER_INIT_DOC,
        initialized_doc='"""The agent\'s answer to ``initialize`` on the current connection."""',
        response_doc='"""The agent\'s answer to the request that resumed the session."""',
        fields=literals(("history", *(f.name for f in s.fields))),
        history_fields=literals(tuple(f.name for f in s.fields if f.entry_class)),
        keyed_by_id=text.py_literal(not s.message_class),
        initialize=ref(initialize.params_class),
        initialized=ref(initialize.result_class),
        mcp_server=ref(r.mcp_server),
        session_id=annotate(session_id),
        session_id_arg=session_id_arg,
        cwd=annotate(sent["cwd"]),
        response=" | ".join(ref(a) for a in answers),
        capabilities=r.capabilities,
        flags=tuple(flags),
        ways=tuple(ways),
        unsupported=_unsupported(r),
        uses_unset=uses_unset,
    )


def _keeper_doc(r: ir.Resumption) -> str:
    """How the keeper takes the session up again, in its docstring."""
    if r.load:
        how = (
            "``session/load`` when the agent advertises ``loadSession`` (it replays the\n"
            "whole conversation, which is folded into a fresh Session and then takes\n"
            "the old one's place: the fold is exact: see the ``_resume`` module)"
        )
        if r.resume:
            how += (
                ", else (or\n"
                "with ``replay=False``) ``session/resume`` when it advertises\n"
                "``sessionCapabilities.resume``: no replay, so the fold goes on from where it\n"
                "was and what the agent sent while disconnected is lost"
            )
    else:
        how = "``session/resume``"
        if r.replay_class:
            how += (
                ' with ``replayFrom: {"type": "start"}`` (unless\n'
                "``replay=False``): the agent replays the history it retains, folded into a\n"
                "fresh Session reconciled with the old one by message and tool call ids\n"
                "(see the ``_resume`` module); without a replay what was sent meanwhile is lost"
            )
    return (
        '"""One session\'s ``Session`` fold, kept exact across dropped connections.\n\n'
        "``connect()`` returns a new, started ClientSideConnection (a subprocess, a\n"
        "socket ...), which folds the session into ``conn.sessions``; ``session``\n"
        "is the fold so far and ``connection`` the current connection (pass the\n"
        "first one as ``connection``). When it drops (a call raises\n"
        "``ConnectionError``), :meth:`reconnect` opens a new one, sends\n"
        "``initialize`` and takes the session up again:\n"
        f"{how}.\n"
        'Call it from ordinary code, not from a handler of the connection."""'
    )


def _unsupported(r: ir.Resumption) -> str:
    """The end of the error when the agent offers none of the ways: what is
    missing and where it would be advertised, as two literals."""
    if r.load and r.resume:
        what = "neither session/load (loadSession) nor session/resume"
    elif r.load:
        what = "no session/load (loadSession)"
    else:
        what = "no session/resume"
    where = {"session_capabilities": " (sessionCapabilities.resume)", "session": " (capabilities.session)", "": ""}
    return f"{text.py_literal(what)} {text.py_literal(where[r.resume])}"
