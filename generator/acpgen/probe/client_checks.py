"""The client probe's checks: each a scenario the probe's agent plays
against a client (one client process each with ``probe --client``; one
prompt each with ``probe-agent``), in :data:`CLIENT_CHECKS`, with its tier
and the sentence it checks, as :mod:`.checks` has them for agents.

A check starts (or takes) a connection, waits for the client's prompt and
plays the turn: updates, requests to the client, the turn's end. What the
client sends meanwhile is checked against the schema of the version
negotiated (:class:`~.client_context.Recorder`); an invalid message fails
the check it arrived in. That a client *tolerates* something (an update it
does not know, an error) is seen by a request sent after it (the barrier,
:data:`~.client_context.BARRIER`): a client that answers it read what came
before and is still there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import uuid
from typing import Any

from .checks import Check
from .client_context import ClientContext, Link, NewSessionHook, Turn
from .context import Failed, NotExercised, Skipped
from .samples import session_updates

SLOW_TURN = 5.0
"""Seconds the slow turn stays silent between its first update and its end."""

PROBE_FILE = ".acpgen-probe-{}.txt"
"""The file the fs check writes (and reads back) in the session's working
directory (``{}``: a random part); the probe removes it after, when it can
(``probe --client``: the client runs on this machine)."""

PROBE_TEXT = "written by the acpgen probe\n"

UNKNOWN_KIND = "acpgen_probe_unknown"
"""The sessionUpdate kind no version has."""

ERROR_CODE = -32603
"""The error the probe's agent answers the prompt with mid-turn."""


def _options(name: str) -> list[dict[str, Any]]:
    return [
        {"optionId": f"{name}-allow", "name": "Allow once", "kind": "allow_once"},
        {"optionId": f"{name}-reject", "name": "Reject", "kind": "reject_once"},
    ]


def _tool(version: int, tool_id: str, title: str) -> dict[str, Any]:
    """A tool call's announcement (v1 ``tool_call``; v2 ``tool_call_update`` upserts)."""
    kind = "tool_call" if version == 1 else "tool_call_update"
    return {"sessionUpdate": kind, "toolCallId": tool_id, "title": title, "kind": "execute", "status": "pending"}


async def _begin(ctx: ClientContext, name: str) -> tuple[Link, Turn]:
    link = await ctx.start(name)
    turn = await ctx.turn(link)
    await turn.accept()
    return link, turn


async def _closed_or_answered(ctx: ClientContext, link: Link, what: str, clean: bool = True) -> str:
    """After the turn's end: the client answers the barrier, or ends the
    connection (``clean``: with exit status 0, as a client that runs one
    prompt and quits does)."""
    try:
        await link.barrier(what)
        return "the client answered a request sent after it"
    except Failed:
        pass
    client = ctx.client
    if client is None or client.process is None:
        return "the client closed the connection"
    status = await client.exited(ctx.timeout / 2)  # within the check's own timeout
    if status not in (None, 0) and clean:
        raise Failed(f"the client exited with status {status} after {what}") from None
    return "the client closed the connection" + (f" and exited (status {status})" if status is not None else "")


# ---------------------------------------------------------------- initialize and sessions


async def client_initialize(ctx: ClientContext) -> str:
    link = await ctx.start("client-initialize")
    first = link.recorder.first or {}
    if first.get("method") != "initialize":
        raise Failed(f"the client's first message is not an initialize request: {first!r}")
    params = first.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    if type(version) is not int:
        raise Failed(f"initialize offers protocolVersion {version!r}, not an integer")
    if version < 1:
        raise Failed(f"initialize offers protocolVersion {version}, no version of ACP")
    caps = params.get("clientCapabilities", params.get("capabilities")) if isinstance(params, dict) else None
    return f"offers version {version}; answered {link.version}; client capabilities: {caps}"


async def session_new(ctx: ClientContext) -> str:
    link = await ctx.start("session-new")
    turn = await ctx.turn(link)
    await turn.accept()
    new = _client_message(link, "session/new")
    params = new.get("params") if new is not None else None
    if not isinstance(params, dict):
        raise Failed("no session/new before the prompt")
    cwd = params.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise Failed(f"session/new cwd is {cwd!r}, not an absolute path")
    servers = params.get("mcpServers", [])
    await turn.end()
    return f"cwd {cwd}; {len(servers) if isinstance(servers, list) else 0} MCP server(s)"


def _client_message(link: Link, method: str) -> dict[str, Any] | None:
    for record in link.recorder.records.values():
        for line in record.lines:
            message = line.message
            if line.direction == "client_to_agent" and isinstance(message, dict) and message.get("method") == method:
                return message
    return None


async def prompt(ctx: ClientContext) -> None:
    _link, turn = await _begin(ctx, "prompt")
    await turn.say("hello from the acpgen probe")
    await turn.end()


async def _before_answer(link: Link, session_id: str) -> None:
    update: dict[str, Any] = {"sessionUpdate": "available_commands_update", "availableCommands": []}
    await link.notify("session/update", {"sessionId": session_id, "update": update})
    text: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "early"}}
    if link.version >= 2:
        text["messageId"] = "probe-early"
    await link.notify("session/update", {"sessionId": session_id, "update": text})


async def updates_before_session_new(ctx: ClientContext) -> None:
    link, turn = await _begin(ctx, "updates-before-session-new")
    await link.barrier("session/update notifications sent before the session/new answer")
    await turn.end()


# ---------------------------------------------------------------- updates


async def update_kinds(ctx: ClientContext) -> str:
    link, turn = await _begin(ctx, "update-kinds")
    updates, missed = session_updates(link.package, turn.session_id)
    kinds = []
    async with link.surviving("a session/update of every kind"):
        for params in updates:
            update = params["update"]
            if update.get("sessionUpdate") == "state_update":
                continue  # the turn's own state is the probe's to report
            kinds.append(update["sessionUpdate"])
            await turn.update(update)
    await turn.end()
    note = f"sent {', '.join(kinds)}"
    return note + (f"; no valid sample of {', '.join(missed)}" if missed else "")


async def update_unknown_kind(ctx: ClientContext) -> None:
    link, turn = await _begin(ctx, "update-unknown-kind")
    async with link.surviving(f"a session/update of an unknown kind ({UNKNOWN_KIND})"):
        await turn.update({"sessionUpdate": UNKNOWN_KIND, "probe": True}, valid=False)
    await turn.end()


async def updates_after_turn(ctx: ClientContext) -> str:
    link, turn = await _begin(ctx, "updates-after-turn")
    await turn.say("before the end")
    await turn.end()
    with_late: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "late"}}
    if link.version >= 2:
        with_late["messageId"] = "probe-late"
    try:
        await turn.update(with_late)
    except Failed:
        return "the client closed the connection when the turn ended"
    return await _closed_or_answered(ctx, link, "an update sent after the turn's end")


async def tool_call_patches(ctx: ClientContext) -> None:
    link, turn = await _begin(ctx, "tool-call-patches")
    tool = "probe-tool"
    content = [{"type": "content", "content": {"type": "text", "text": "output"}}]
    async with link.surviving("tool_call_update patches with members omitted, null and given"):
        await turn.update(_tool(link.version, tool, "a tool call"))
        await turn.update({"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": "in_progress"})
        await turn.update({"sessionUpdate": "tool_call_update", "toolCallId": tool, "title": None, "content": None})
        await turn.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": tool, "status": "completed", "content": content}
        )
    await turn.end()


# ---------------------------------------------------------------- permission and cancellation


async def _ask(link: Link, turn: Turn, name: str) -> asyncio.Future[tuple[Any, dict[str, Any] | None]]:
    tool = f"probe-{name}"
    await turn.update(_tool(link.version, tool, f"acpgen probe: {name}"))
    params: dict[str, Any] = {"sessionId": turn.session_id, "options": _options(name)}
    if link.version == 1:
        params["toolCall"] = {"toolCallId": tool, "title": f"acpgen probe: {name}"}
    else:
        params["title"] = f"acpgen probe: {name}"
    asked = asyncio.ensure_future(link.request("session/request_permission", params))
    await link.written("session/request_permission")
    return asked


def _outcome(result: Any) -> tuple[str | None, Any]:
    outcome = result.get("outcome") if isinstance(result, dict) else None
    if not isinstance(outcome, dict):
        return None, None
    return outcome.get("outcome"), outcome.get("optionId")


async def permission_answer(ctx: ClientContext) -> str:
    name = "permission-answer"
    link, turn = await _begin(ctx, name)
    result, error = await (await _ask(link, turn, name))
    await turn.end()
    if error is not None:
        return f"the client refused the permission request ({error['code']}: {error['message']}): nothing granted"
    kind, option = _outcome(result)
    offered = [o["optionId"] for o in _options(name)]
    if kind == "cancelled":
        return "answered cancelled"
    if kind != "selected":
        raise Failed(f"the permission answer is neither selected nor cancelled: {result!r}")
    if option not in offered:
        raise Failed(f"the client selected {option!r}, which was not offered ({', '.join(offered)})")
    return f"selected {option}"


async def permission_cancel(ctx: ClientContext) -> None:
    name = "permission-cancel"
    link, turn = await _begin(ctx, name)
    asked = await _ask(link, turn, name)
    cancelled: asyncio.Future[Any] = asyncio.ensure_future(link.cancelled.wait())
    done, _ = await asyncio.wait({asked, cancelled}, return_when=asyncio.FIRST_COMPLETED)
    if asked in done and not link.cancelled.is_set():
        cancelled.cancel()
        await turn.end()
        raise NotExercised("the client answered the permission request without cancelling the turn")
    result, error = await asked
    await turn.end("cancelled")
    if error is not None:
        raise Failed(f"after session/cancel the pending permission request was answered with an error: {error}")
    kind, option = _outcome(result)
    if kind != "cancelled":
        raise Failed(f"after session/cancel the pending permission request was answered {kind} {option!r}")


async def cancel_request(ctx: ClientContext) -> str:
    name = "cancel-request"
    link, turn = await _begin(ctx, name)
    asked = await _ask(link, turn, name)
    # The cancel right behind its request, as an agent that changes its mind
    # sends it: the client may read both before it starts on the request.
    request_id = link.sent_id("session/request_permission")
    await link.notify("$/cancel_request", {"requestId": request_id})
    _result, error = await asked
    await turn.end()
    if error is None:
        return "answered with a result"
    if error["code"] == -32800:
        return "answered -32800 (cancelled)"
    if error["code"] == -32601:
        raise NotExercised("the client refuses session/request_permission (-32601): there was nothing to cancel")
    raise Failed(f"the request cancelled by $/cancel_request was answered {error}, not a result or -32800")


# ---------------------------------------------------------------- what the client advertised


def _advertised(link: Link) -> dict[str, Any]:
    params = (link.recorder.initialize or {}).get("params")
    caps = params.get("clientCapabilities") if isinstance(params, dict) else None
    return caps if isinstance(caps, dict) else {}


async def fs(ctx: ClientContext) -> str:
    name = "fs"
    link = await ctx.start(name)
    if link.version != 1:
        raise Skipped(f"ACP v{link.version} has no fs/* methods")
    caps = _advertised(link).get("fs")
    write = isinstance(caps, dict) and caps.get("writeTextFile") is True
    read = isinstance(caps, dict) and caps.get("readTextFile") is True
    if not (read or write):
        raise Skipped("the client does not advertise fs.readTextFile or fs.writeTextFile")
    turn = await ctx.turn(link)
    cwd = _session_cwd(link)
    path = os.path.join(cwd, PROBE_FILE.format(uuid.uuid4().hex[:12]))
    try:
        return await _fs(ctx, link, turn, path, read, write)
    finally:
        if ctx.command is not None:
            with contextlib.suppress(OSError):
                os.remove(path)


async def _fs(ctx: ClientContext, link: Link, turn: Turn, path: str, read: bool, write: bool) -> str:
    done: list[str] = []
    if write:
        params = {"sessionId": turn.session_id, "path": path, "content": PROBE_TEXT}
        _, error = await link.request("fs/write_text_file", params)
        if error is not None:
            raise Failed(f"fs/write_text_file (advertised) of {path} was refused: {error}")
        done.append("wrote")
    if read and write:
        result, error = await link.request("fs/read_text_file", {"sessionId": turn.session_id, "path": path})
        if error is not None:
            raise Failed(f"fs/read_text_file (advertised) of the file just written was refused: {error}")
        content = result.get("content") if isinstance(result, dict) else None
        if content != PROBE_TEXT:
            raise Failed(f"fs/read_text_file of the file just written gave {content!r}, not {PROBE_TEXT!r}")
        done.append("read back")
    elif read:
        result, error = await link.request("fs/read_text_file", {"sessionId": turn.session_id, "path": path})
        done.append(f"read ({'refused' if error else 'answered'}: the probe cannot know the file's text)")
    await turn.end()
    return f"{' and '.join(done)} {path}"


def _session_cwd(link: Link) -> str:
    new = _client_message(link, "session/new")
    params = new.get("params") if new is not None else None
    cwd = params.get("cwd") if isinstance(params, dict) else None
    return cwd if isinstance(cwd, str) else os.getcwd()


async def terminal(ctx: ClientContext) -> str:
    name = "terminal"
    link = await ctx.start(name)
    if link.version != 1:
        raise Skipped(f"ACP v{link.version} has no terminal/* methods")
    if _advertised(link).get("terminal") is not True:
        raise Skipped("the client does not advertise terminal")
    turn = await ctx.turn(link)
    session = turn.session_id
    command = {"sessionId": session, "command": sys.executable if ctx.command else "echo", "args": []}
    command["args"] = ["-c", "print('acpgen-probe')"] if ctx.command else ["acpgen-probe"]
    result, error = await link.request("terminal/create", command)
    if error is not None:
        raise Failed(f"terminal/create (advertised) was refused: {error}")
    terminal_id = result.get("terminalId") if isinstance(result, dict) else None
    ids = {"sessionId": session, "terminalId": terminal_id}
    result, error = await link.request("terminal/wait_for_exit", ids)
    if error is not None:
        raise Failed(f"terminal/wait_for_exit was refused: {error}")
    status = result.get("exitCode") if isinstance(result, dict) else None
    result, error = await link.request("terminal/output", ids)
    if error is not None:
        raise Failed(f"terminal/output was refused: {error}")
    output = result.get("output") if isinstance(result, dict) else None
    if not isinstance(output, str) or "acpgen-probe" not in output:
        raise Failed(f"terminal/output of a command that printed 'acpgen-probe' is {output!r}")
    _, error = await link.request("terminal/release", ids)
    if error is not None:
        raise Failed(f"terminal/release was refused: {error}")
    await turn.end()
    return f"ran {command['command']} (exit status {status})"


# ---------------------------------------------------------------- the agent failing


async def error_mid_turn(ctx: ClientContext) -> str:
    name = "error-mid-turn"
    link = await ctx.start(name)
    turn = await ctx.turn(link)
    await turn.say("about to fail")
    await turn.fail(ERROR_CODE, "acpgen probe: an agent-side error mid-turn")
    return await _closed_or_answered(ctx, link, "an error answer to session/prompt mid-turn", clean=False)


async def slow_turn(ctx: ClientContext) -> None:
    link, turn = await _begin(ctx, "slow-turn")
    await turn.say("acpgen probe: a slow turn")
    closed = asyncio.ensure_future(link.closed.wait())
    cancelled = asyncio.ensure_future(link.cancelled.wait())
    _done, _ = await asyncio.wait({closed, cancelled}, timeout=SLOW_TURN, return_when=asyncio.FIRST_COMPLETED)
    closed.cancel()
    cancelled.cancel()
    if link.cancelled.is_set():
        raise Failed(f"the client cancelled a turn that was silent for less than {SLOW_TURN:g} s")
    if link.closed.is_set():
        raise Failed(f"the client closed the connection during a turn silent for less than {SLOW_TURN:g} s")
    await turn.end()


async def disconnect_mid_turn(ctx: ClientContext) -> str:
    name = "disconnect-mid-turn"
    link, turn = await _begin(ctx, name)
    await turn.say("the agent is about to disconnect")
    await link.close()
    client = ctx.client
    if client is None or client.process is None:
        return "the connection was closed (the client's own handling is not observable here)"
    exited = asyncio.ensure_future(client.process.wait())
    again = asyncio.ensure_future(client.connections.get())
    bound = ctx.timeout / 2  # within the check's own timeout, so that the failure says what happened
    done, _ = await asyncio.wait({exited, again}, timeout=bound, return_when=asyncio.FIRST_COMPLETED)
    exited.cancel()
    if again in done:
        return "the client started its agent again"
    again.cancel()
    if client.process.returncode is not None:
        return f"the client exited (status {client.process.returncode})"
    raise Failed(
        f"the agent closed the connection mid-turn; {bound:g} s later the client had neither exited "
        "nor started its agent again"
    )


# ---------------------------------------------------------------- the list

V1 = "ACP v1 schema"
V2 = "ACP v2 schema"

NEW_SESSION_HOOKS: dict[str, NewSessionHook] = {"updates-before-session-new": _before_answer}
"""The checks that act when session/new arrives, before it is answered."""

CLIENT_CHECKS: list[Check] = [
    Check(
        "client-initialize",
        "MUST",
        f"{V1}/{V2} initialize: 'called at the beginning of the connection'; InitializeRequest.protocolVersion: "
        "'The latest protocol version supported by the client' (an integer); the request valid against the "
        "schema of the version negotiated",
        "the client's first message is initialize, offering an integer version, valid for the version negotiated",
        client_initialize,
    ),
    Check(
        "session-new",
        "MUST",
        f"{V1}/{V2} NewSessionRequest.cwd: 'The working directory for this session. Must be an absolute path.'; "
        "mcpServers: the MCP servers the agent should connect to (valid against the schema)",
        "session/new, before the prompt, has an absolute cwd and valid MCP servers",
        session_new,
    ),
    Check(
        "prompt",
        "MUST",
        f"{V1}/{V2} PromptRequest.sessionId: 'The ID of the session to send this user message to'; every "
        "message valid against the schema",
        "the prompt names the session session/new opened; a turn with an update and a normal end goes through",
        prompt,
    ),
    Check(
        "updates-before-session-new",
        "SHOULD",
        f"{V2} NewSessionResponse: 'Updates may arrive before or after this response'",
        "session/update notifications for the new session sent before its session/new answer are tolerated "
        "(the client then prompts that session and answers a request sent after them)",
        updates_before_session_new,
    ),
    Check(
        "update-kinds",
        "MUST",
        f"{V1}/{V2} SessionUpdate: 'Different types of updates that can be sent during session processing' "
        "(every kind the schema of the version negotiated has)",
        "a session/update of every SessionUpdate kind (a small valid sample of each) is tolerated: the client "
        "answers a request sent after them",
        update_kinds,
    ),
    Check(
        "update-unknown-kind",
        "SHOULD",
        f"{V2} SessionUpdate (other): 'Receivers that do not understand this update type should ... otherwise "
        "ignore it or display it generically'; JSON-RPC 2.0 (a notification gets no answer, so nothing refuses it)",
        f"a session/update of an unknown kind ({UNKNOWN_KIND}) is tolerated: the client answers a request sent "
        "after it",
        update_unknown_kind,
    ),
    Check(
        "updates-after-turn",
        "SHOULD",
        f"{V2} StateUpdate: 'Background activity can continue and emit other session/update notifications while "
        f"idle'; {V1} prompt turn: updates belong before the response, a late one must not break the client",
        "a session/update after the turn's end is tolerated: the client answers a request sent after it, or "
        "ends the connection with exit status 0 (a one-prompt client)",
        updates_after_turn,
    ),
    Check(
        "tool-call-patches",
        "MUST",
        f"{V1} ToolCallUpdate: 'All fields except the tool call ID are optional - only changed fields need to be "
        f"included' (and may be null); {V2} ToolCallUpdate: 'omitted fields leave the existing tool call value "
        "unchanged, null clears or unsets the value'",
        "a tool call and tool_call_update patches with members omitted, null and given are tolerated",
        tool_call_patches,
    ),
    Check(
        "permission-answer",
        "MUST",
        f"{V1}/{V2} RequestPermissionOutcome: 'The user selected one of the provided options' or 'cancelled'",
        "session/request_permission is answered with an offered optionId or cancelled (an error answer grants "
        "nothing: noted, not failed)",
        permission_answer,
    ),
    Check(
        "permission-cancel",
        "MUST",
        f"{V1}/{V2} RequestPermissionOutcome cancelled: 'When a client sends a session/cancel notification to "
        "cancel an ongoing prompt turn, it MUST respond to all pending session/request_permission requests with "
        "this cancelled outcome'",
        "when the client sends session/cancel while a permission request is pending, it answers that request "
        "cancelled (not exercised when the client answers without cancelling)",
        permission_cancel,
    ),
    Check(
        "cancel-request",
        "MUST",
        f"{V1}/{V2} $/cancel_request: the receiver 'MUST send one of these responses for the original request: "
        "a valid response ... or an error with code -32800'",
        "a permission request the agent cancels with $/cancel_request right behind it is still answered (a "
        "result or -32800; not exercised when the client refuses permission requests, -32601)",
        cancel_request,
    ),
    Check(
        "fs",
        "MUST",
        f"{V1} ClientCapabilities.fs: 'Determines which file operations the agent can request'",
        "when the client advertises fs: fs/write_text_file of a file in the session's directory and "
        "fs/read_text_file of it are answered, the read giving what was written",
        fs,
    ),
    Check(
        "terminal",
        "MUST",
        f"{V1} ClientCapabilities.terminal: 'Whether the Client support all terminal/* methods'",
        "when the client advertises terminal: terminal/create, wait_for_exit, output and release of a command "
        "that prints a line are answered, the output holding the line",
        terminal,
    ),
    Check(
        "error-mid-turn",
        "SHOULD",
        "JSON-RPC 2.0 section 5 (an error response is a response); a client goes on after an agent's error",
        "after session/prompt is answered with an error mid-turn, the client answers a request sent after it "
        "or ends the connection (it does not go silent with the connection open)",
        error_mid_turn,
    ),
    Check(
        "slow-turn",
        "advisory",
        "no schema requirement: a turn may take as long as the agent needs; clients that time a turn out cut "
        "real agents short",
        f"a turn silent for {SLOW_TURN:g} s after its first update is neither cancelled nor dropped",
        slow_turn,
    ),
    Check(
        "disconnect-mid-turn",
        "advisory",
        "no schema requirement: an agent that exits mid-turn must not leave its client waiting forever",
        "when the agent closes the connection mid-turn, the client exits or starts its agent again within half "
        "the timeout (probe --client only)",
        disconnect_mid_turn,
    ),
]
"""Every client check, in the order they run."""

CLIENT_NAMES = [check.name for check in CLIENT_CHECKS]
