"""What a check is given: the agent it talks to and the moves every check
makes (initialize, a session, a prompt turn to its end), per version."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .peer import AgentGone, Line, Peer, Refusal, Reply
from .sandbox import Sandbox

CLIENT_INFO = {"name": "acpgen-probe", "version": "1"}


class Failed(Exception):
    """The check fails, saying why."""


class Skipped(Exception):
    """The check does not apply to this agent, saying why."""


class NotExercised(Skipped):
    """The check could not be made this run (a race went the other way:
    the turn ended before the cancel landed); reported skipped, never failed."""

    def __init__(self, why: str) -> None:
        super().__init__(f"not exercised: {why}")


class AuthRequired(Skipped):
    """The agent answered -32000 (auth_required), which the schema allows:
    the check is auth-gated, not failed."""


def initialize_params(version: Any, fs: bool = False, terminal: bool = False) -> dict[str, Any]:
    """An initialize request both versions read: v1's ``clientCapabilities``
    and ``clientInfo`` beside v2's ``capabilities`` and ``info`` (each
    version's schema allows the other's members). The client advertises a
    file system and a terminal (v1) only when told to."""
    return {
        "protocolVersion": version,
        "clientCapabilities": {"fs": {"readTextFile": fs, "writeTextFile": fs}, "terminal": terminal},
        "clientInfo": CLIENT_INFO,
        "info": CLIENT_INFO,
        "capabilities": {},
    }


@dataclass
class Collected:
    """What one check's exchange left: its messages, the problems found in
    them, the peer's last stderr lines."""

    transcript: list[Line] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    dropped: int = 0


@dataclass
class Turn:
    """How one prompt turn went."""

    stop_reason: Any
    """The stop reason (v1: the response's; v2: the idle state_update's)."""
    reply: Reply
    """The session/prompt response."""
    updates: list[dict[str, Any]] = field(default_factory=list)
    """The session/update notifications of the session during the turn."""
    ended: int = 0
    """Where the turn's end arrived in the agent's stream (:attr:`.peer.Reply.order`;
    v2: the idle state_update's), to tell what arrived before it."""
    interrupted: bool = False
    """Whether ``during`` ran (the turn had not ended when its first update arrived)."""


class Context:
    """One probe run's state, shared by the checks."""

    def __init__(
        self,
        command: list[str],
        packages: dict[int, ModuleType],
        timeout: float,
        startup_timeout: float,
        auth_method: str | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.command = command
        self.sandbox = sandbox
        """The file system and terminal the client advertises, if any (--client-capabilities)."""
        self.packages = packages
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.auth_method = auth_method
        self.auth_reply: Reply | None = None
        """The answer to authenticate (v1) / auth/login (v2) on the main connection, when --auth-method is given."""
        self.latest = max(packages)
        self.paused_at: float | None = None
        """When the running check's clock stopped (a process is starting), or None."""
        self.paused = 0.0
        """Seconds the running check's clock stood still."""
        self.clock_changed = asyncio.Event()
        self.main: Peer | None = None
        self.peers: list[Peer] = []
        self.version: int | None = None
        self.agent: dict[str, Any] = {}
        """The initialize result of the main connection."""
        self.session_id: str | None = None
        self.turns = 0
        """Prompt turns run on the main session."""
        self.dirty = False
        """The main connection is in an unknown state (a check timed out)."""
        self.unusable: str | None = None
        """Why the main connection cannot be set up: the checks needing it skip."""
        self.cwd = str(sandbox.root) if sandbox is not None else os.path.abspath(os.getcwd())
        """The sessions' working directory: the sandbox, when there is one."""
        self.results: dict[str, Any] = {}
        """The results of the checks run so far, by name (:class:`.runner.Result`)."""

    @property
    def package(self) -> ModuleType:
        assert self.version is not None
        return self.packages[self.version]

    @property
    def peer(self) -> Peer:
        assert self.main is not None
        return self.main

    # ------------------------------------------------------------ connections

    async def fresh(self, check: str) -> Peer:
        """A new agent process, nothing sent to it yet."""
        peer = Peer(self.command, self.packages)
        peer.current = check
        peer.on_request = self.answer
        peer.served = self.served()
        self.peers.append(peer)
        try:
            await peer.start()
        except OSError as exc:
            raise Failed(f"cannot start the agent: {exc}") from None
        return peer

    async def first(self, peer: Peer, method: str, params: Any) -> Reply:
        """The first request to a process just started: it may take the agent
        up to the startup timeout to answer, and the running check's clock
        stands still meanwhile (its own timeout is for the check's work)."""
        loop = asyncio.get_running_loop()
        self.paused_at = loop.time()
        self.clock_changed.set()
        try:
            return await asyncio.wait_for(peer.request(method, params), self.startup_timeout)
        except asyncio.TimeoutError:
            raise Failed(
                f"the agent did not answer its first request ({method}) within {self.startup_timeout:g} s "
                "of starting (the startup timeout)"
            ) from None
        finally:
            self.paused += loop.time() - self.paused_at
            self.paused_at = None
            self.clock_changed.set()

    async def connect(self, check: str) -> Peer:
        """The main connection, started and initialized if it is not (or
        started again if a check left it in an unknown state)."""
        if self.unusable is not None:
            raise Skipped(f"needs a working initialize: {self.unusable}")
        if self.main is not None and not self.dirty and self.main.gone is None:
            self.main.current = check
            return self.main
        if self.main is not None:
            await self.main.close()
            self.session_id = None
            self.turns = 0
        self.dirty = False
        self.main = await self.fresh("initialize")
        try:
            reply = await self.first(self.main, "initialize", self.initialize_params(self.latest))
            self.negotiated(reply)
        except (Failed, AgentGone) as exc:
            self.unusable = str(exc)
            if check != "initialize":
                raise Skipped(f"needs a working initialize: {exc}") from None
            raise
        if self.auth_method is not None:
            await self.authenticate(self.main)
        self.main.current = check
        return self.main

    async def authenticate(self, peer: Peer) -> None:
        """Authenticate with --auth-method (v1 ``authenticate``, v2
        ``auth/login``); what is wrong with it belongs to the authenticate
        check. Like a start, it may take up to the startup timeout."""
        method = "authenticate" if "authenticate" in self.package.METHODS else "auth/login"
        check, peer.current = peer.current, "authenticate"
        try:
            self.auth_reply = await self.first(peer, method, {"methodId": self.auth_method})
        finally:
            peer.current = check

    def auth_methods(self) -> list[str]:
        """The auth methods the agent advertised in initialize, ``id (name)``."""
        methods = self.agent.get("authMethods")
        named: list[str] = []
        for method in methods if isinstance(methods, list) else []:
            if isinstance(method, dict):
                method_id = method.get("methodId", method.get("id"))
                name = method.get("name")
                named.append(f"{method_id}" + (f" ({name})" if isinstance(name, str) and name != method_id else ""))
        return named

    def auth_required(self, method: str, reply: Reply) -> AuthRequired:
        """The skip of a check whose ``method`` was answered -32000."""
        methods = self.auth_methods()
        listed = f"the agent's auth methods: {', '.join(methods)}" if methods else "the agent advertises no auth method"
        if self.auth_method is not None:
            return AuthRequired(
                f"auth required: {method} was answered -32000 after authenticating with {self.auth_method!r} ({listed})"
            )
        hint = "; authenticate first with --auth-method ID" if methods else ""
        return AuthRequired(f"auth required: {method} was answered -32000 ({listed}{hint})")

    def negotiated(self, reply: Reply) -> None:
        """Read the version the agent chose; raise :class:`Failed` unless it is
        one the probe speaks, at or below the one asked for."""
        if reply.error is not None:
            raise Failed(f"initialize was refused: {reply.error}")
        result = reply.result
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if type(version) is not int:
            raise Failed(f"the initialize result has no integer protocolVersion: {version!r}")
        if version > self.latest:
            raise Failed(f"the agent answered version {version}, newer than the {self.latest} asked for")
        if version not in self.packages:
            raise Failed(f"the agent answered version {version}; the probe speaks {sorted(self.packages)}")
        package = self.packages[version]
        try:
            package.decode_result("initialize", result, strict=True)
        except package.ValidationError as exc:
            # No check can trust a run whose negotiation is wrong: this one
            # failure stands for it, and the checks after it skip.
            other = [v for v, p in self.packages.items() if v != version and _valid(p, result)]
            like = f" (it is a valid ACP v{other[0]} initialize result)" if other else ""
            raise Failed(
                f"the agent answered version {version} with a result that is not ACP v{version}'s{like}: {exc.message}"
            ) from None
        self.version = version
        self.agent = result
        self.peer.package = self.packages[version]

    async def session(self, check: str) -> str:
        """The main connection's session, opened by session/new if none is."""
        peer = await self.connect(check)
        if self.session_id is None:
            try:
                self.session_id = await self.new_session(peer)
            except AuthRequired:
                raise
            except Failed as exc:
                if check != "session-new":
                    raise Skipped(f"needs a working session/new: {exc}") from None
                raise
        return self.session_id

    async def new_session(self, peer: Peer) -> str:
        """A new session; what is wrong with it belongs to the session-new check."""
        check, peer.current = peer.current, "session-new"
        try:
            reply = await peer.request("session/new", {"cwd": self.cwd, "mcpServers": []})
        finally:
            peer.current = check
        return self.opened_session(peer, reply)

    def opened_session(self, peer: Peer, reply: Reply, how: str = "") -> str:
        """The id of the session ``reply`` (to a ``session/new`` sent ``how``,
        e.g. " with an additional directory") opened, kept as ``peer``'s; an
        auth_required answer is :class:`AuthRequired`, any other error or no
        ``sessionId`` :class:`Failed`."""
        if reply.code == -32000:
            raise self.auth_required("session/new", reply)
        if reply.error is not None:
            raise Failed(f"session/new{how} was refused: {reply.error}")
        session_id = reply.result.get("sessionId") if isinstance(reply.result, dict) else None
        if not isinstance(session_id, str):
            raise Failed(f"session/new{how} answered no sessionId: {reply.result!r}")
        peer.sessions.add(session_id)
        return session_id

    # ------------------------------------------------------------ turns

    async def turn(
        self,
        check: str,
        blocks: list[dict[str, Any]],
        during: Callable[[Peer, int], Awaitable[None]] | None = None,
    ) -> Turn:
        """Run one prompt turn on the main session to its end. ``during(peer,
        request_id)`` runs once the first update of the turn has arrived."""
        session_id = await self.session(check)
        peer = self.peer
        start = peer.seen

        def ours(note: dict[str, Any]) -> bool:
            params = note.get("params")
            return (
                note.get("method") == "session/update"
                and isinstance(params, dict)
                and (params.get("sessionId") == session_id)
            )

        request_id, pending = peer.start_request("session/prompt", {"sessionId": session_id, "prompt": blocks})
        interrupted = False
        if during is not None:
            # v1: the response ends the turn, and may come before any update;
            # v2: the response only acknowledges the prompt, the turn goes on.
            first: asyncio.Future[Any] = asyncio.ensure_future(peer.wait_for(ours, start))
            waiting: set[asyncio.Future[Any]] = {first} if self.version != 1 else {first, pending}
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if first in done:
                first.result()
                interrupted = True
                await during(peer, request_id)
            else:
                first.cancel()
        reply = await pending
        self.turns += 1
        if reply.code == -32000:
            raise self.auth_required("session/prompt", reply)
        ended = reply.order
        if reply.error is not None or self.version == 1:
            stop = reply.result.get("stopReason") if isinstance(reply.result, dict) else None
        else:
            idle = await peer.wait_for(lambda note: ours(note) and _idle(note), start)
            stop = idle["params"]["update"].get("stopReason")
            ended = peer.order_of(idle)
        updates = [note for note in peer.since(start) if ours(note)]
        return Turn(stop, reply, updates, ended, interrupted)

    # ------------------------------------------------------------ the agent's requests

    def initialize_params(self, version: Any) -> dict[str, Any]:
        """The initialize request, advertising what the sandbox serves."""
        box = self.sandbox
        return initialize_params(version, fs=box is not None and box.fs, terminal=box is not None and box.terminal)

    def served(self) -> set[str]:
        """The client methods the probe advertises and serves (fs/*, terminal/*)."""
        return self.sandbox.methods() if self.sandbox is not None else set()

    def answer(self, request: dict[str, Any]) -> Any:
        """The probe's answers: a permission request is granted (its first
        allow option); the fs/* and terminal/* methods the sandbox serves
        are served there (an awaitable); everything else is -32601."""
        method = request.get("method")
        if self.sandbox is not None and method in self.sandbox.methods():
            return self.sandbox.answer(str(method), request.get("params"))
        if request.get("method") == "session/request_permission":
            params = request.get("params")
            options = params.get("options") if isinstance(params, dict) else None
            if not isinstance(options, list) or not options:
                raise Refusal(-32602, "Invalid params: no options")
            allow = [o for o in options if isinstance(o, dict) and str(o.get("kind", "")).startswith("allow")]
            chosen = (allow or options)[0]
            option_id = chosen.get("optionId") if isinstance(chosen, dict) else None
            if not isinstance(option_id, str):
                raise Refusal(-32602, "Invalid params: an option without optionId")
            return {"outcome": {"outcome": "selected", "optionId": option_id}}
        raise Refusal(-32601, "Method not found")

    # ------------------------------------------------------------ capabilities

    def prompt_capability(self, name: str) -> bool:
        """Whether the agent advertised the prompt capability ``name``
        (v1: ``agentCapabilities.promptCapabilities.NAME`` true; v2:
        ``capabilities.session.prompt.NAME`` an object)."""
        if self.version == 1:
            caps = _get(self.agent, "agentCapabilities", "promptCapabilities", name)
            return caps is True
        return isinstance(_get(self.agent, "capabilities", "session", "prompt", name), dict)

    def capabilities(self) -> dict[str, Any]:
        """What the agent advertised: v1's ``agentCapabilities``, v2's ``capabilities``."""
        found = self.agent.get("agentCapabilities" if self.version == 1 else "capabilities")
        return found if isinstance(found, dict) else {}

    def capability(self, v1: str, v2: str) -> bool:
        """Whether the agent advertised the capability at the dotted path
        ``v1`` (under ``agentCapabilities``) or ``v2`` (under ``capabilities``),
        by the version negotiated: true, or an object."""
        found = _get(self.capabilities(), *(v1 if self.version == 1 else v2).split("."))
        return found is True or isinstance(found, dict)

    def session_capability(self, name: str) -> bool:
        """Whether the agent supports the session method ``name`` (``list``,
        ``resume``, ``close``): v1 advertises each in ``agentCapabilities.sessionCapabilities``
        (an object); in v2 an object ``capabilities.session`` means the
        baseline session methods, these among them."""
        if self.version == 1:
            return isinstance(_get(self.agent, "agentCapabilities", "sessionCapabilities", name), dict)
        return isinstance(_get(self.agent, "capabilities", "session"), dict)

    def collect(self, check: str) -> Collected:
        """What ``check`` left in the transcripts of the processes it spoke to."""
        seen = Collected()
        for peer in self.peers:
            record = peer.records.pop(check, None)
            if record is not None:
                seen.transcript.extend(record.lines)
                seen.dropped += record.dropped_lines
                seen.problems.extend(record.problems)
                if record.dropped_problems:
                    seen.problems.append(f"{record.dropped_problems} more problem(s)")
                seen.stderr = list(peer.stderr)
        return seen

    async def after_check(self) -> None:
        """Close the processes the check started for itself (not the main one)."""
        for peer in self.peers:
            if peer is not self.main:
                await peer.close()

    async def close(self) -> None:
        for peer in self.peers:
            await peer.close()


def _get(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _valid(package: ModuleType, result: Any) -> bool:
    try:
        package.decode_result("initialize", result, strict=True)
    except package.ValidationError:
        return False
    return True


def _idle(note: dict[str, Any]) -> bool:
    update = note["params"].get("update")
    return isinstance(update, dict) and update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"
