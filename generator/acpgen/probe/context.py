"""What a check is given: the agent it talks to and the moves every check
makes (initialize, a session, a prompt turn to its end), per version."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .peer import AgentGone, Peer, Refusal, Reply

CLIENT_INFO = {"name": "acpgen-probe", "version": "1"}


class Failed(Exception):
    """The check fails, saying why."""


class Skipped(Exception):
    """The check does not apply to this agent, saying why."""


def initialize_params(version: Any) -> dict[str, Any]:
    """An initialize request both versions read: v1's ``clientCapabilities``
    and ``clientInfo`` beside v2's ``capabilities`` and ``info`` (each
    version's schema allows the other's members). The client advertises no
    file system and no terminal."""
    return {
        "protocolVersion": version,
        "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
        "clientInfo": CLIENT_INFO,
        "info": CLIENT_INFO,
        "capabilities": {},
    }


@dataclass
class Turn:
    """How one prompt turn went."""

    stop_reason: Any
    """The stop reason (v1: the response's; v2: the idle state_update's)."""
    reply: Reply
    """The session/prompt response."""
    updates: list[dict[str, Any]] = field(default_factory=list)
    """The session/update notifications of the session during the turn."""


class Context:
    """One probe run's state, shared by the checks."""

    def __init__(self, command: list[str], packages: dict[int, ModuleType], timeout: float) -> None:
        self.command = command
        self.packages = packages
        self.timeout = timeout
        self.latest = max(packages)
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
        self.setup_failure: str | None = None
        self.initializing = False
        """The main connection's initialize is in flight."""
        self.unusable: str | None = None
        """Why the main connection cannot be set up: the checks needing it skip."""
        self.cwd = os.path.abspath(os.getcwd())

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
        self.peers.append(peer)
        try:
            await peer.start()
        except OSError as exc:
            raise Failed(f"cannot start the agent: {exc}") from None
        return peer

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
        self.initializing = True  # stays set if the check times out meanwhile
        try:
            reply = await self.main.request("initialize", initialize_params(self.latest))
            self.negotiated(reply)
        except (Failed, AgentGone) as exc:
            self.initializing = False
            self.unusable = str(exc)
            if check != "initialize":
                raise Skipped(f"needs a working initialize: {exc}") from None
            raise
        self.initializing = False
        self.main.current = check
        return self.main

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
        self.version = version
        self.agent = result
        self.peer.package = self.packages[version]

    async def session(self, check: str) -> str:
        """The main connection's session, opened by session/new if none is."""
        peer = await self.connect(check)
        if self.session_id is None:
            try:
                self.session_id = await self.new_session(peer)
            except Failed:
                if check != "session-new":
                    self.setup_failure = "a working session/new (see the session-new check)"
                raise
        return self.session_id

    async def new_session(self, peer: Peer) -> str:
        """A new session; what is wrong with it belongs to the session-new check."""
        check, peer.current = peer.current, "session-new"
        try:
            reply = await peer.request("session/new", {"cwd": self.cwd, "mcpServers": []})
        finally:
            peer.current = check
        if reply.error is not None:
            raise Failed(f"session/new was refused: {reply.error}")
        session_id = reply.result.get("sessionId") if isinstance(reply.result, dict) else None
        if not isinstance(session_id, str):
            raise Failed(f"the session/new result has no sessionId: {reply.result!r}")
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
        if during is not None:
            # v1: the response ends the turn, and may come before any update;
            # v2: the response only acknowledges the prompt, the turn goes on.
            first: asyncio.Future[Any] = asyncio.ensure_future(peer.wait_for(ours, start))
            waiting: set[asyncio.Future[Any]] = {first} if self.version != 1 else {first, pending}
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if first in done:
                first.result()
                await during(peer, request_id)
            else:
                first.cancel()
        reply = await pending
        self.turns += 1
        if reply.error is not None or self.version == 1:
            stop = reply.result.get("stopReason") if isinstance(reply.result, dict) else None
        else:
            idle = await peer.wait_for(lambda note: ours(note) and _idle(note), start)
            stop = idle["params"]["update"].get("stopReason")
        updates = [note for note in peer.since(start) if ours(note)]
        return Turn(stop, reply, updates)

    # ------------------------------------------------------------ the agent's requests

    def answer(self, request: dict[str, Any]) -> Any:
        """The probe's answers, as a client that advertised no file system
        and no terminal: a permission request is granted (its first allow
        option), everything else is -32601."""
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

    def session_capability(self, name: str) -> bool:
        """Whether the agent supports the session method ``name`` (``list``,
        ``resume``, ``close``): v1 advertises each in ``agentCapabilities.sessionCapabilities``
        (an object); in v2 an object ``capabilities.session`` means the
        baseline session methods, these among them."""
        if self.version == 1:
            return isinstance(_get(self.agent, "agentCapabilities", "sessionCapabilities", name), dict)
        return isinstance(_get(self.agent, "capabilities", "session"), dict)

    async def close(self) -> None:
        for peer in self.peers:
            await peer.close()


def _get(value: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _idle(note: dict[str, Any]) -> bool:
    update = note["params"].get("update")
    return isinstance(update, dict) and update.get("sessionUpdate") == "state_update" and update.get("state") == "idle"
