"""The probe's checks: one small function each, in :data:`CHECKS`, run in
that order.

A check gets the run's :class:`~.context.Context`, talks to the agent and
returns (it passes), raises :class:`Failed` or :class:`Skipped`. Whatever the
agent sends meanwhile is checked against the schema of the negotiated
version; a message that is not valid fails the check it arrived in. A check
``after`` the others reads what the whole run saw. To add one: write the
function and add a :class:`Check` to the list, with its level and the text
of the specification it comes from.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..scratch import claim
from .context import Context, Failed, NotExercised, Skipped, Turn
from .peer import Peer, Reply

EXTRA_PREFIX = "acpgen-probe-extra-"
"""The name of the empty directory the additional-directories check names
(see :mod:`acpgen.scratch`)."""

LONG_PROMPT = " ".join(f"word{i}" for i in range(300))
"""A prompt an echoing agent takes long enough over to be cancelled."""

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
"""A 1x1 PNG."""

SILENCE = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="
"""An empty WAV."""

BARRIER = "probe/barrier"
"""A request sent after a notification: an agent reads its input in order,
so once it has answered this (-32601 is an answer) it has read the
notification before it."""

MAX_PAGES = 1000
"""Pages of session/list the paging check follows before it calls the paging endless."""

MCP_URL = "http://127.0.0.1:9/mcp"
"""Where the MCP servers of the MCP checks are said to be: nothing serves
MCP there (port 9 is discard), the checks see whether the agent takes a
server of the kind it advertised."""


TIERS = ("MUST", "SHOULD", "advisory", "informational")
"""The tiers of the checks, as acp-tck has them: a failed ``MUST`` check
makes the run exit 1; a failed ``SHOULD`` check is a finding that does not;
an ``advisory`` check is a robustness preference no schema makes a
requirement; an ``informational`` check reports what the agent said and
never fails."""


@dataclass(frozen=True)
class Check:
    name: str
    tier: str
    """One of :data:`TIERS`; only a failed ``MUST`` makes the run exit 1."""
    source: str
    """The sentence of the schema or docs the check checks, and where it is written."""
    summary: str
    run: Callable[[Any], Awaitable[str | None]]
    """Passes by returning (a note for the report, or None), else raises
    :class:`Failed` or :class:`Skipped`; given the run's context (an agent
    probe's :class:`~.context.Context`, a client probe's
    :class:`~.client_context.ClientContext`)."""
    needs: tuple[str, ...] = ()
    """Checks this one builds on: when one of them failed or was skipped,
    this one is skipped, naming it."""
    after: bool = False
    """Runs after the others, judging what the whole run saw."""
    exercises: tuple[str, ...] = ()
    """The capabilities the check exercises when it runs (passes or fails),
    by their path in the initialize result's ``agentCapabilities`` (v1) or
    ``capabilities`` (v2), as ``agent-info`` lists them:
    ``promptCapabilities.image``, ``session.prompt.image``."""

    @property
    def level(self) -> str:
        """The tier (the name it had before there were four)."""
        return self.tier


def text(words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


# ---------------------------------------------------------------- initialize


async def initialize(ctx: Context) -> None:
    await ctx.connect("initialize")


async def unsupported_version(ctx: Context) -> None:
    name = "initialize-unsupported-version"
    await ctx.connect(name)  # the version the agent negotiates
    peer = await ctx.fresh(name)
    reply = await ctx.first(peer, "initialize", ctx.initialize_params(999))
    if reply.error is not None:
        if reply.code == -32022 and ctx.version is not None and ctx.version >= 2:
            return
        raise Failed(f"initialize with version 999 was refused: {reply.error}")
    version = reply.result.get("protocolVersion") if isinstance(reply.result, dict) else None
    if type(version) is not int:
        raise Failed(f"the answer to version 999 has no integer protocolVersion: {version!r}")
    if version != ctx.version:
        raise Failed(f"asked for 999, the agent answered {version}, not the latest it supports ({ctx.version})")


async def string_version(ctx: Context) -> None:
    name = "initialize-string-version"
    await ctx.connect(name)  # the version the agent negotiates
    peer = await ctx.fresh(name)
    reply = await ctx.first(peer, "initialize", ctx.initialize_params("1"))
    if reply.error is not None:
        if reply.code == -32022 and ctx.version is not None and ctx.version >= 2:
            return  # read as version 0, which no v2 agent speaks
        raise Failed(f'initialize with protocolVersion "1" was refused: {reply.error}')
    version = reply.result.get("protocolVersion") if isinstance(reply.result, dict) else None
    if type(version) is not int:
        raise Failed(f"the answer has no integer protocolVersion: {version!r}")


async def authenticate(ctx: Context) -> None:
    await ctx.connect("authenticate")
    methods = ctx.auth_methods()
    if ctx.auth_method is None:
        listed = f"the agent's auth methods: {', '.join(methods)}" if methods else "the agent advertises none"
        raise Skipped(f"no --auth-method given ({listed})")
    reply = ctx.auth_reply
    assert reply is not None
    if reply.error is not None:
        raise Failed(f"authenticating with {ctx.auth_method!r} was refused: {reply.error}")


async def agent_info(ctx: Context) -> str:
    await ctx.connect("agent-info")
    info = ctx.agent.get("agentInfo", ctx.agent.get("info"))
    who = "no agent info"
    if isinstance(info, dict):
        who = " ".join(str(info[key]) for key in ("name", "version") if key in info)
    capabilities = ctx.agent.get("agentCapabilities", ctx.agent.get("capabilities"))
    advertised = sorted(_leaves(capabilities)) if isinstance(capabilities, dict) else []
    methods = ctx.auth_methods()
    return (
        f"ACP v{ctx.version}; {who}; capabilities: {', '.join(advertised) or 'none'}; "
        f"auth methods: {', '.join(methods) or 'none'}"
    )


CONTAINERS = {
    1: {"promptCapabilities", "mcpCapabilities", "sessionCapabilities", "auth"},
    2: {"session.prompt", "session.mcp", "auth"},
}
"""Per version, the capability objects that hold capabilities: empty, they
advertise none (v1's ``sessionCapabilities: {}``), unlike an empty object
that is one (v1's ``sessionCapabilities.list: {}``, v2's ``session: {}``)."""


async def capabilities_exercised(ctx: Context) -> str:
    await ctx.connect("capabilities-exercised")
    empty = CONTAINERS.get(ctx.version or 0, set())
    advertised = sorted(path for path in _leaves(ctx.capabilities()) if path not in empty)
    if not advertised:
        return "the agent advertises no capability"
    exercised = {
        path for result in ctx.results.values() if result.status in ("pass", "fail") for path in result.check.exercises
    }
    missed: list[str] = []
    for path in advertised:
        if path in exercised:
            continue
        by = [check.name for check in CHECKS if path in check.exercises]
        if not by:
            missed.append(f"{path} (no check)")
            continue
        how = [f"{name} {_how(ctx, name)}" for name in by]
        missed.append(f"{path} ({', '.join(how)})")
    if not missed:
        return f"every capability the agent advertises was exercised: {', '.join(advertised)}"
    return f"advertised but not exercised by any check: {'; '.join(missed)}"


def _how(ctx: Context, name: str) -> str:
    result = ctx.results.get(name)
    if result is None:
        return "did not run"
    return "was skipped" + (f": {result.reason}" if result.reason else "")


def _leaves(value: dict[str, Any], prefix: str = "") -> list[str]:
    """The capabilities advertised: each true flag or object, by its path."""
    found: list[str] = []
    for key, inner in value.items():
        if key == "_meta":
            continue
        path = f"{prefix}{key}"
        if isinstance(inner, dict) and inner:
            found.extend(_leaves(inner, path + "."))
        elif inner is True or isinstance(inner, dict):
            found.append(path)
    return found


async def before_initialize(ctx: Context) -> None:
    peer = await ctx.fresh("before-initialize")
    reply = await ctx.first(peer, "session/new", {"cwd": ctx.cwd, "mcpServers": []})
    if reply.error is None:
        raise Failed("session/new before initialize was answered with a result, not refused")


# ---------------------------------------------------------------- errors


async def unknown_method(ctx: Context) -> None:
    peer = await ctx.connect("unknown-method")
    reply = await peer.request("probe/no_such_method", {})
    if reply.code != -32601:
        raise Failed(f"an unknown method was answered {reply.error or reply.message} instead of -32601")


async def malformed_params(ctx: Context) -> None:
    peer = await ctx.connect("malformed-params")
    reply = await peer.request("session/new", {"cwd": 42, "mcpServers": "none"})
    if reply.code == -32000:  # the agent asks for authentication before it reads the params
        raise ctx.auth_required("session/new", reply)
    if reply.code != -32602:
        raise Failed(f"session/new with malformed params was answered {reply.error or reply.message}, not -32602")


async def extension_method(ctx: Context) -> None:
    peer = await ctx.connect("extension-method")
    await peer.notify("_probe/notice", {"probe": True})
    reply = await peer.request("_probe/x", {"probe": True})
    if reply.error is not None and reply.code != -32601:
        raise Failed(f"the extension request _probe/x was answered {reply.error}, neither a result nor -32601")


async def notification_reply(ctx: Context) -> None:
    # The replies themselves are found wherever they arrive (peer.py gives
    # them to this check); this check sends one notification more and waits
    # until the agent has read it, then judges the whole run.
    peer = await ctx.connect("notification-reply")
    await peer.notify("_probe/notice", {"probe": True})
    await peer.request(BARRIER, {})


# ---------------------------------------------------------------- sessions and turns


async def session_new(ctx: Context) -> None:
    await ctx.session("session-new")


def _ended(turn: Turn, what: str) -> None:
    if turn.reply.error is not None:
        raise Failed(f"{what} was refused: {turn.reply.error}")
    if turn.stop_reason == "cancelled":
        raise Failed(f"{what} ended cancelled, though nothing cancelled it")


async def prompt(ctx: Context) -> None:
    turn = await ctx.turn("prompt", text("hello from the acpgen probe"))
    _ended(turn, "the prompt")


async def resource_link(ctx: Context) -> None:
    block = {"type": "resource_link", "uri": "file:///probe/README.md", "name": "README.md"}
    turn = await ctx.turn("prompt-resource-link", [*text("read this"), block])
    _ended(turn, "a prompt with a resource_link block")


async def cancel(ctx: Context) -> None:
    barrier: list[asyncio.Future[Reply]] = []

    async def cancel_it(peer: Peer, request_id: int) -> None:
        await peer.notify("session/cancel", {"sessionId": ctx.session_id})
        barrier.append(peer.start_request(BARRIER, {})[1])

    turn = await ctx.turn("cancel", text(LONG_PROMPT), during=cancel_it)
    if turn.reply.error is not None:
        raise Failed(f"the cancelled prompt was answered with an error, not stopReason cancelled: {turn.reply.error}")
    if turn.stop_reason == "cancelled":
        return
    if not turn.interrupted:
        raise NotExercised(f"the turn ended ({turn.stop_reason!r}) before its first update, so nothing was cancelled")
    # A turn that ends before the agent has read the cancel is a race the
    # agent did not lose: only an end that comes after the agent has
    # answered the request sent after the cancel shows it ignored the cancel.
    answered = _answered(barrier[0]) if barrier else None
    if answered is None or answered.order > turn.ended:
        raise NotExercised(
            f"the turn ended {turn.stop_reason!r} before session/cancel was known to have reached the agent "
            f"(its answer to the {BARRIER} request sent after the cancel came after the turn's end)"
        )
    raise Failed(f"after session/cancel the turn ended {turn.stop_reason!r}, not 'cancelled'")


def _answered(future: asyncio.Future[Reply]) -> Reply | None:
    if not future.done() or future.cancelled() or future.exception() is not None:
        return None
    return future.result()


async def cancel_request(ctx: Context) -> None:
    await ctx.connect("cancel-request")
    if "$/cancel_request" not in ctx.package.METHODS:
        raise Skipped(f"ACP v{ctx.version} has no $/cancel_request")

    async def cancel_it(peer: Peer, request_id: int) -> None:
        await peer.notify("$/cancel_request", {"requestId": request_id})

    turn = await ctx.turn("cancel-request", text(LONG_PROMPT), during=cancel_it)
    if turn.reply.error is not None and turn.reply.code != -32800:
        raise Failed(f"the request cancelled by $/cancel_request was answered {turn.reply.error}, not -32800")


def _content(name: str, block: dict[str, Any]) -> Callable[[Context], Awaitable[None]]:
    check = f"prompt-{name}"

    async def run(ctx: Context) -> None:
        await ctx.connect(check)
        if not ctx.prompt_capability(name):
            raise Skipped(f"the agent does not advertise the {name} prompt capability")
        turn = await ctx.turn(check, [*text(f"a prompt with {name}"), block])
        _ended(turn, f"a prompt with {name} content (a {block['type']} block)")

    return run


async def load_session(ctx: Context) -> None:
    name = "load-session"
    peer = await ctx.connect(name)
    if ctx.version != 1:
        raise Skipped(f"ACP v{ctx.version} has no session/load")
    if ctx.agent.get("agentCapabilities", {}).get("loadSession") is not True:
        raise Skipped("the agent does not advertise loadSession")
    session_id = await ctx.session(name)
    if ctx.turns == 0:
        await ctx.turn(name, text("something to replay"))
    start = peer.seen
    reply = await peer.request("session/load", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []})
    if reply.error is not None:
        raise Failed(f"session/load of the session the agent opened was refused: {reply.error}")
    replayed = [
        note
        for note in peer.since(start)
        if note.get("method") == "session/update" and (note.get("params") or {}).get("sessionId") == session_id
    ]
    if not replayed:
        raise Failed("session/load answered without replaying the conversation (no session/update before its response)")


async def load_fresh_session(ctx: Context) -> None:
    name = "load-fresh-session"
    peer = await ctx.connect(name)
    if ctx.version != 1:
        raise Skipped(f"ACP v{ctx.version} has no session/load")
    if ctx.agent.get("agentCapabilities", {}).get("loadSession") is not True:
        raise Skipped("the agent does not advertise loadSession")
    session_id = await ctx.new_session(peer)  # no turn on it
    reply = await peer.request("session/load", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []})
    if reply.error is not None:
        raise Failed(f"session/load of a session the agent opened, with no turn yet, was refused{_missing(reply)}")


async def resume_fresh_session(ctx: Context) -> None:
    name = "resume-fresh-session"
    peer = await ctx.connect(name)
    if not ctx.session_capability("resume"):
        raise Skipped(f"the agent does not advertise session/resume ({_where(ctx, 'resume')})")
    session_id = await ctx.new_session(peer)  # no turn on it
    reply = await peer.request("session/resume", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []})
    if reply.error is not None:
        raise Failed(f"session/resume of a session the agent opened, with no turn yet, was refused{_missing(reply)}")


def _missing(reply: Reply) -> str:
    if reply.code == -32002:
        return f" with -32002 (Resource not found), though the agent opened it: {reply.error}"
    return f": {reply.error}"


async def session_list(ctx: Context) -> None:
    name = "session-list"
    peer = await ctx.connect(name)
    if not ctx.session_capability("list"):
        raise Skipped(f"the agent does not advertise session/list ({_where(ctx, 'list')})")
    session_id = await ctx.session(name)
    reply = await peer.request("session/list", {})
    if reply.error is not None:
        raise Failed(f"session/list was refused: {reply.error}")
    sessions = reply.result.get("sessions") if isinstance(reply.result, dict) else None
    listed = {s.get("sessionId") for s in sessions if isinstance(s, dict)} if isinstance(sessions, list) else set()
    if session_id not in listed and not (isinstance(reply.result, dict) and reply.result.get("nextCursor")):
        raise Failed(f"session/list does not list the session the agent opened ({session_id!r})")


async def session_list_paging(ctx: Context) -> None:
    name = "session-list-paging"
    peer = await ctx.connect(name)
    if not ctx.session_capability("list"):
        raise Skipped(f"the agent does not advertise session/list ({_where(ctx, 'list')})")
    await ctx.session(name)
    for _ in range(2):  # sessions enough for an agent with small pages to page
        await ctx.new_session(peer)
    reply = await peer.request("session/list", {})
    if reply.error is not None:
        raise Failed(f"session/list was refused: {reply.error}")
    cursor = reply.result.get("nextCursor") if isinstance(reply.result, dict) else None
    if cursor is None:
        raise NotExercised("the agent listed every session on one page (no nextCursor)")
    given: set[Any] = set()
    pages = 1
    while cursor is not None:
        if cursor in given or pages >= MAX_PAGES:
            raise Failed(f"the paging does not end: nextCursor {cursor!r} after {pages} page(s)")
        given.add(cursor)
        reply = await peer.request("session/list", {"cursor": cursor})
        if reply.error is not None:
            raise Failed(f"session/list with the nextCursor it gave ({cursor!r}) was refused: {reply.error}")
        pages += 1
        cursor = reply.result.get("nextCursor") if isinstance(reply.result, dict) else None
    return None


async def session_close(ctx: Context) -> None:
    name = "session-close"
    peer = await ctx.connect(name)
    if not ctx.session_capability("close"):
        raise Skipped(f"the agent does not advertise session/close ({_where(ctx, 'close')})")
    session_id = await ctx.new_session(peer)  # a session of its own: the others go on with theirs
    reply = await peer.request("session/close", {"sessionId": session_id})
    if reply.error is not None:
        raise Failed(f"session/close of a session the agent opened was refused: {reply.error}")


async def session_resume(ctx: Context) -> None:
    name = "session-resume"
    peer = await ctx.connect(name)
    if not ctx.session_capability("resume"):
        raise Skipped(f"the agent does not advertise session/resume ({_where(ctx, 'resume')})")
    session_id = await ctx.session(name)
    if ctx.turns == 0:
        await ctx.turn(name, text("something to resume"))
    reply = await peer.request("session/resume", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []})
    if reply.error is not None:
        raise Failed(f"session/resume of the session the agent opened (after a turn) was refused: {reply.error}")


def _where(ctx: Context, name: str) -> str:
    return f"sessionCapabilities.{name}" if ctx.version == 1 else "capabilities.session"


async def _listed(peer: Peer) -> set[Any] | None:
    """Every session id session/list gives, page after page (None: the
    listing was refused, at its first page or a later one; what is wrong with
    it is for the session-list checks)."""
    listed: set[Any] = set()
    params: dict[str, Any] = {}
    given: set[Any] = set()
    for _ in range(MAX_PAGES):
        reply = await peer.request("session/list", params)
        if reply.error is not None or not isinstance(reply.result, dict):
            return None
        sessions = reply.result.get("sessions")
        for entry in sessions if isinstance(sessions, list) else []:
            if isinstance(entry, dict):
                listed.add(entry.get("sessionId"))
        cursor = reply.result.get("nextCursor")
        if cursor is None or cursor in given:
            break
        given.add(cursor)
        params = {"cursor": cursor}
    return listed


async def session_delete(ctx: Context) -> None:
    name = "session-delete"
    peer = await ctx.connect(name)
    if not ctx.capability("sessionCapabilities.delete", "session.delete"):
        raise Skipped(f"the agent does not advertise session/delete ({_advertised(ctx, 'delete')})")
    session_id = await ctx.new_session(peer)  # a session of its own: the others go on with theirs
    reply = await peer.request("session/delete", {"sessionId": session_id})
    if reply.error is not None:
        raise Failed(f"session/delete of a session the agent opened was refused: {reply.error}")
    if not ctx.session_capability("list"):
        return
    listed = await _listed(peer)
    if listed is not None and session_id in listed:
        raise Failed(f"session/delete was answered, yet session/list still lists the session ({session_id!r})")


async def session_fork(ctx: Context) -> None:
    name = "session-fork"
    peer = await ctx.connect(name)
    if not ctx.capability("sessionCapabilities.fork", "session.fork"):
        raise Skipped(f"the agent does not advertise session/fork ({_advertised(ctx, 'fork')})")
    if "session/fork" not in ctx.package.METHODS:
        raise Skipped(f"ACP v{ctx.version}'s package has no session/fork (an unstable method: probe with --unstable)")
    session_id = await ctx.session(name)
    reply = await peer.request("session/fork", {"sessionId": session_id, "cwd": ctx.cwd, "mcpServers": []})
    if reply.code == -32000:
        raise ctx.auth_required("session/fork", reply)
    if reply.error is not None:
        raise Failed(f"session/fork of the session the agent opened was refused: {reply.error}")
    forked = reply.result.get("sessionId") if isinstance(reply.result, dict) else None
    if forked == session_id:
        raise Failed(f"session/fork answered the id of the session forked ({session_id!r}), not a new session's")
    if isinstance(forked, str):
        peer.sessions.add(forked)


async def additional_directories(ctx: Context) -> None:
    name = "additional-directories"
    peer = await ctx.connect(name)
    if not ctx.capability("sessionCapabilities.additionalDirectories", "session.additionalDirectories"):
        raise Skipped(
            f"the agent does not advertise additionalDirectories ({_advertised(ctx, 'additionalDirectories')})"
        )
    extra = claim(EXTRA_PREFIX)  # an empty directory, removed after
    try:
        params = {"cwd": ctx.cwd, "additionalDirectories": [extra.path], "mcpServers": []}
        reply = await peer.request("session/new", params)
    finally:
        extra.release()
    ctx.opened_session(peer, reply, " with an additional directory")


def _mcp(kind: str) -> Callable[[Context], Awaitable[None]]:
    check = f"mcp-{kind}"

    async def run(ctx: Context) -> None:
        peer = await ctx.connect(check)
        if not ctx.capability(f"mcpCapabilities.{kind}", f"session.mcp.{kind}"):
            where = f"mcpCapabilities.{kind}" if ctx.version == 1 else f"capabilities.session.mcp.{kind}"
            raise Skipped(f"the agent does not advertise {kind} MCP servers ({where})")
        server = {"type": kind, "name": "acpgen-probe", "url": MCP_URL, "headers": []}
        reply = await peer.request("session/new", {"cwd": ctx.cwd, "mcpServers": [server]})
        if reply.code == -32000:
            raise ctx.auth_required("session/new", reply)
        if reply.code == -32602:
            raise Failed(
                f"session/new with an {kind} MCP server, which the agent advertises, was refused: {reply.error}"
            )
        if reply.error is not None:  # a server it cannot reach may be an error of its own: still exercised
            return
        session_id = reply.result.get("sessionId") if isinstance(reply.result, dict) else None
        if isinstance(session_id, str):
            peer.sessions.add(session_id)

    return run


def _advertised(ctx: Context, name: str) -> str:
    return f"sessionCapabilities.{name}" if ctx.version == 1 else f"capabilities.session.{name}"


# ---------------------------------------------------------------- what the run saw


async def _observed(ctx: Context, check: str) -> None:
    """Make sure the run saw a prompt turn (one of its own, when the checks
    that prompt did not run)."""
    await ctx.connect(check)
    if ctx.turns == 0:
        await ctx.turn(check, text("hello from the acpgen probe"))


async def permission(ctx: Context) -> None:
    await _observed(ctx, "permission")
    if not any("session/request_permission" in peer.requested for peer in ctx.peers):
        raise Skipped("the agent never asked for permission")


async def client_capabilities(ctx: Context) -> None:
    await _observed(ctx, "client-capabilities")
    served = ctx.served()
    called = sorted(
        {
            method
            for peer in ctx.peers
            for method in peer.requested
            if method.startswith(("fs/", "terminal/")) and method not in served
        }
    )
    if called:
        raise Failed(f"the agent called {', '.join(called)}, which the client did not advertise")


V1 = "ACP v1 schema"
V2 = "ACP v2 schema"
INIT = ("initialize",)
SESSION = ("initialize", "session-new")

CHECKS: list[Check] = [
    Check(
        "initialize",
        "MUST",
        f"{V1}/{V2} InitializeResponse.protocolVersion: 'The protocol version the client specified if supported by "
        "the agent, or the latest protocol version supported by the agent' (v2: 'The highest protocol version "
        "supported by the agent that is at or below the version requested by the client'); the result valid "
        "against that version's schema",
        "initialize, asking for the latest version the probe offers, is answered with a version the probe speaks, "
        "in a result valid against that version's schema",
        initialize,
    ),
    Check(
        "agent-info",
        "informational",
        f"{V1}/{V2} InitializeResponse: 'Contains the negotiated protocol version and agent capabilities'",
        "what the agent advertised: its version, name, capabilities and auth methods (never fails)",
        agent_info,
        needs=INIT,
    ),
    Check(
        "initialize-unsupported-version",
        "MUST",
        f"{V1} InitializeResponse.protocolVersion: 'or the latest protocol version supported by the agent'; "
        f"{V2}: 'If no such version exists, initialization fails with error code -32022'",
        "initialize with version 999: answered with the agent's own version (or -32022 from a v2 agent)",
        unsupported_version,
        needs=INIT,
    ),
    Check(
        "initialize-string-version",
        "advisory",
        f'no schema requirement ({V1}/{V2} InitializeRequest.protocolVersion is an integer, so refusing "1" with '
        "-32602 is correct): the Rust crate (agent-client-protocol-schema) reads a string protocolVersion as "
        'version 0 and its agents answer with their own version (v1) or -32022 (v2); real clients send "1"',
        'initialize with protocolVersion "1" (a string) is answered with an integer version (or -32022 in v2)',
        string_version,
        needs=INIT,
    ),
    Check(
        "before-initialize",
        "SHOULD",
        f"{V2} initialize: 'called at the beginning of the connection, before any other request'; "
        "TypeScript SDK 2.4.0 (dist/v1/acp.js, dist/v2/acp.js) answers a request before initialize -32600 "
        "'ACP connection must be initialized before ...'",
        "session/new sent before initialize is refused with an error",
        before_initialize,
    ),
    Check(
        "authenticate",
        "MUST",
        f"{V1} authenticate: 'The client provides an authentication method ID that was advertised during "
        f"initialization'; {V2} auth/login: 'Agents MUST support this method when their initialize response "
        "included a non-empty authMethods list'",
        "with --auth-method ID: authenticate (v1) / auth/login (v2) with that method is answered with a result "
        "(skipped without the option)",
        authenticate,
        needs=INIT,
    ),
    Check(
        "session-new",
        "MUST",
        f"{V1} SessionCapabilities: 'all Agents MUST support session/new, session/prompt, session/cancel, "
        "and session/update'; session/new: 'May return an auth_required (-32000) error if the agent requires "
        "authentication' (such a run is skipped: auth required)",
        "session/new is answered with a valid result holding a sessionId",
        session_new,
        needs=INIT,
        exercises=("session",),
    ),
    Check(
        "prompt",
        "MUST",
        f"{V1}/{V2} session/prompt and session/update: every message valid against the schema",
        "a text prompt runs to its end; every streamed session/update is valid and names the session",
        prompt,
        needs=SESSION,
    ),
    Check(
        "prompt-resource-link",
        "MUST",
        f"{V1}/{V2} PromptRequest.prompt: 'As a baseline, the Agent MUST support text and resource_link "
        "content blocks'",
        "a prompt with a resource_link block is accepted",
        resource_link,
        needs=SESSION,
    ),
    Check(
        "cancel",
        "MUST",
        f"{V1} StopReason cancelled: 'This stop reason MUST be returned when the client sends a "
        f"session/cancel notification'; {V2} session/cancel: the Agent MUST send an idle state_update "
        "(stopReason cancelled)",
        "session/cancel during a long prompt ends the turn with stopReason cancelled (not exercised when the "
        "turn ended before the agent read the cancel)",
        cancel,
        needs=SESSION,
    ),
    Check(
        "cancel-request",
        "MUST",
        f"{V1}/{V2} $/cancel_request: the receiver 'MUST send one of these responses for the original "
        "request: a valid response ... or an error with code -32800'",
        "$/cancel_request for a running session/prompt: the request is still answered (a result or -32800)",
        cancel_request,
        needs=SESSION,
    ),
    Check(
        "prompt-image",
        "MUST",
        f"{V1}/{V2} PromptCapabilities.image: 'Agent supports image content blocks'",
        "when promptCapabilities.image is advertised: a prompt with an image block is accepted",
        _content("image", {"type": "image", "mimeType": "image/png", "data": PIXEL}),
        needs=SESSION,
        exercises=("promptCapabilities.image", "session.prompt.image"),
    ),
    Check(
        "prompt-audio",
        "MUST",
        f"{V1}/{V2} PromptCapabilities.audio: 'Agent supports audio content blocks'",
        "when promptCapabilities.audio is advertised: a prompt with an audio block is accepted",
        _content("audio", {"type": "audio", "mimeType": "audio/wav", "data": SILENCE}),
        needs=SESSION,
        exercises=("promptCapabilities.audio", "session.prompt.audio"),
    ),
    Check(
        "prompt-embeddedContext",
        "MUST",
        f"{V1}/{V2} PromptCapabilities.embeddedContext: 'the Client is allowed to include resource content "
        "blocks in prompt requests'",
        "when promptCapabilities.embeddedContext is advertised: a prompt with a resource block is accepted",
        _content(
            "embeddedContext",
            {"type": "resource", "resource": {"uri": "file:///probe/notes.txt", "text": "probe notes"}},
        ),
        needs=SESSION,
        exercises=("promptCapabilities.embeddedContext", "session.prompt.embeddedContext"),
    ),
    Check(
        "load-session",
        "MUST",
        f"{V1} LoadSessionRequest: 'Only available if the Agent supports the loadSession capability'; "
        "protocol docs (session-setup#loading-sessions): the Agent MUST replay the entire conversation "
        "as session/update notifications",
        "when loadSession is advertised: session/load of the session works and replays it before answering",
        load_session,
        needs=SESSION,
        exercises=("loadSession",),
    ),
    Check(
        "load-fresh-session",
        "MUST",
        f"{V1} LoadSessionRequest: 'Request parameters for loading an existing session'; ErrorCode -32002: "
        "'Resource not found: A given resource, such as a session or file, was not found' (a session "
        "session/new opened exists, turn or no turn)",
        "when loadSession is advertised: session/load of a session with no turn yet is not refused "
        "(in particular not -32002)",
        load_fresh_session,
        needs=SESSION,
        exercises=("loadSession",),
    ),
    Check(
        "session-list",
        "MUST",
        f"{V1} SessionCapabilities.list: 'Whether the agent supports session/list'; {V2} AgentCapabilities.session: "
        "'Supplying {} means the agent supports the baseline session methods: session/new, session/list, ...'",
        "when session/list is advertised: it answers a valid result listing the session the agent opened",
        session_list,
        needs=SESSION,
        exercises=("sessionCapabilities.list", "session"),
    ),
    Check(
        "session-list-paging",
        "MUST",
        f"{V1}/{V2} ListSessionsResponse.nextCursor: 'If present, pass this in the next request's cursor "
        "parameter to fetch the next page'",
        "when session/list is advertised and pages: every nextCursor fetches a valid next page, and the "
        "paging ends (not exercised when one page holds every session)",
        session_list_paging,
        needs=(*SESSION, "session-list"),
        exercises=("sessionCapabilities.list", "session"),
    ),
    Check(
        "session-resume",
        "MUST",
        f"{V1} SessionCapabilities.resume and session/resume: 'only available if the agent advertises the "
        f"sessionCapabilities.resume capability'; {V2} AgentCapabilities.session (session/resume is a baseline method)",
        "when session/resume is advertised: resuming the session the agent opened, after a turn, succeeds",
        session_resume,
        needs=SESSION,
        exercises=("sessionCapabilities.resume", "session"),
    ),
    Check(
        "resume-fresh-session",
        "MUST",
        f"{V1}/{V2} ResumeSessionRequest: 'Resumes an existing session'; ErrorCode -32002: 'Resource not "
        "found' (a session session/new opened exists, turn or no turn)",
        "when session/resume is advertised: resuming a session with no turn yet is not refused "
        "(in particular not -32002)",
        resume_fresh_session,
        needs=SESSION,
        exercises=("sessionCapabilities.resume", "session"),
    ),
    Check(
        "session-close",
        "MUST",
        f"{V1} SessionCapabilities.close; {V2} AgentCapabilities.session (session/close is a baseline method); "
        "CloseSessionRequest: the agent frees the session's resources",
        "when session/close is advertised: closing a session the agent opened succeeds",
        session_close,
        needs=SESSION,
        exercises=("sessionCapabilities.close", "session"),
    ),
    Check(
        "session-delete",
        "MUST",
        f"{V1} SessionCapabilities.delete / {V2} SessionCapabilities.delete: 'Whether the agent supports "
        "session/delete'; DeleteSessionRequest: 'Request parameters for deleting an existing session from "
        "session/list'",
        "when session/delete is advertised: deleting a session the agent opened succeeds, and session/list "
        "(when advertised) no longer lists it",
        session_delete,
        needs=SESSION,
        exercises=("sessionCapabilities.delete", "session.delete"),
    ),
    Check(
        "session-fork",
        "MUST",
        f"{V1}/{V2} unstable SessionForkCapabilities and ForkSessionRequest: 'Creates a new session based on "
        "the context of an existing one'; ForkSessionResponse.sessionId: 'Unique identifier for the newly "
        "created forked session'",
        "when session/fork is advertised (and the unstable package is used): forking the session the agent "
        "opened answers a new session's id",
        session_fork,
        needs=SESSION,
        exercises=("sessionCapabilities.fork", "session.fork"),
    ),
    Check(
        "additional-directories",
        "MUST",
        f"{V1}/{V2} SessionAdditionalDirectoriesCapabilities: 'Supplying {{}} means the agent supports the "
        "additionalDirectories field on supported session lifecycle requests'",
        "when additionalDirectories is advertised: session/new with an additional directory (an empty "
        "temporary one) opens a session",
        additional_directories,
        needs=SESSION,
        exercises=("sessionCapabilities.additionalDirectories", "session.additionalDirectories"),
    ),
    Check(
        "mcp-http",
        "MUST",
        f"{V1} McpServer http: 'Only available when the Agent capabilities indicate mcp_capabilities.http is "
        f"true'; {V2}: 'Only available when the Agent capabilities include session.mcp.http'",
        "when HTTP MCP servers are advertised: session/new with one is not refused as invalid (-32602); "
        "nothing serves MCP at its URL, so another error is the agent's own",
        _mcp("http"),
        needs=SESSION,
        exercises=("mcpCapabilities.http", "session.mcp.http"),
    ),
    Check(
        "mcp-sse",
        "MUST",
        f"{V1} McpServer sse: 'Only available when the Agent capabilities indicate mcp_capabilities.sse is true'",
        "when SSE MCP servers are advertised: session/new with one is not refused as invalid (-32602); "
        "nothing serves MCP at its URL, so another error is the agent's own",
        _mcp("sse"),
        needs=SESSION,
        exercises=("mcpCapabilities.sse",),
    ),
    Check(
        "unknown-method",
        "MUST",
        f"JSON-RPC 2.0 section 5.1; {V1}/{V2} ErrorCode -32601: 'Method not found: The method does not exist "
        "or is not available'",
        "a request for an unknown method is answered -32601",
        unknown_method,
        needs=INIT,
    ),
    Check(
        "malformed-params",
        "MUST",
        f"JSON-RPC 2.0 section 5.1; {V1}/{V2} ErrorCode -32602: 'Invalid params'",
        "session/new with params of the wrong types is answered -32602",
        malformed_params,
        needs=INIT,
    ),
    Check(
        "extension-method",
        "SHOULD",
        f"{V1}/{V2} ExtRequest: 'Allows for sending an arbitrary request that is not part of the ACP spec'; "
        "protocol docs (extensibility): an unrecognized custom request should be answered 'Method not found' "
        "(-32601), an unrecognized custom notification ignored",
        "_probe/x is answered (a result or -32601), after an extension notification the agent ignores",
        extension_method,
        needs=INIT,
    ),
    Check(
        "notification-reply",
        "MUST",
        "JSON-RPC 2.0 section 4.1: 'The Server MUST NOT reply to a Notification'",
        "the agent answers none of the probe's notifications (session/cancel, $/cancel_request, _probe/notice) "
        "in the whole run",
        notification_reply,
        needs=INIT,
        after=True,
    ),
    Check(
        "permission",
        "MUST",
        f"{V1}/{V2} session/request_permission: the request is valid and the agent goes on once answered",
        "every permission request the agent makes is valid and, answered, lets the turn end (skipped if none)",
        permission,
        needs=SESSION,
        after=True,
    ),
    Check(
        "client-capabilities",
        "MUST",
        f"{V1} ClientCapabilities.fs: 'Determines which file operations the agent can request'; "
        "ClientCapabilities.terminal: 'Whether the Client support all terminal/* methods'",
        "the agent calls no fs/* or terminal/* method the client did not advertise (none, unless "
        "--client-capabilities)",
        client_capabilities,
        needs=SESSION,
        after=True,
    ),
    Check(
        "capabilities-exercised",
        "informational",
        f"{V1} AgentCapabilities / {V2} AgentCapabilities: what the agent advertises, each of which a check exercises",
        "every capability the agent advertised in initialize that no check exercised (its check skipped or "
        "not run, or none exists), so the report says what was not tested (never fails)",
        capabilities_exercised,
        needs=INIT,
        after=True,
    ),
]
"""Every check, in the order they run."""

NAMES = [check.name for check in CHECKS]
