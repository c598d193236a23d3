"""The client probe's agent: what ``acpgen probe --client`` and ``acpgen
probe-agent`` put in front of a client, and what its checks are given.

The agent is the generated packages' own ``AgentSideConnection`` (the
version the client's ``initialize`` asks for is served, as
``serve_versions`` chooses it) with a handler of the probe's: it answers
``initialize`` and ``session/new`` itself and hands each ``session/prompt``
to the running check as a :class:`Turn`, which the check plays (updates,
requests to the client, the turn's end). A recording transport between the
connection and the client keeps every message in the running check's
transcript and checks each of the client's against the schema of the
version negotiated (strict decoding); an invalid one fails that check.

Two ways to reach a client: :class:`ClientContext` in ``spawn`` mode starts
the client command once per check, in the working directory, with
``{agent}`` in it replaced by a relay (a small Python program that joins its
stdin and stdout to a socket the probe listens on), or, without ``{agent}``,
speaking ACP on the client's own stdin and stdout; in ``serve`` mode
(``probe-agent``) the client started the probe, and each check plays the
next prompt of the one connection.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import shlex
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from types import ModuleType
from typing import Any

from ..scratch import claim
from .context import Collected, Failed
from .peer import KEPT_LINES, STDERR_TAIL, Line, Record

PREFIX = "acpgen-probe-client-"
"""The name of the directory of a client's agent socket: locked while a run
uses it, deleted by the next run once that run is gone (see
:mod:`acpgen.scratch`)."""

AGENT_PLACEHOLDER = "{agent}"
"""The argument of a client command that stands for the agent to start."""

AGENT_ENV = "ACPGEN_PROBE_AGENT"
"""The environment variable holding the agent command (shell-quoted), for a
client configured through the environment."""

AGENT_INFO = {"name": "acpgen-probe", "version": "1"}


class Closed(Failed):
    """The check fails because the client closed the connection."""


BARRIER = "_acpgen_probe/barrier"
"""A request the probe sends the client after what it checks the client
tolerates: a client reads its input in order, so once it has answered this
(an error is an answer: -32601 is expected) it has read and survived what
came before."""

RELAY = r"""
import os, socket, sys, threading
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
def up():
    try:
        while True:
            data = os.read(0, 65536)
            if not data:
                break
            s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        os._exit(0)
threading.Thread(target=up, daemon=True).start()
try:
    while True:
        data = s.recv(65536)
        if not data:
            break
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]
except OSError:
    pass
"""
"""The agent a spawned client starts: its stdin and stdout joined to the
probe's socket (standard library only, so any Python runs it)."""

OWNERS = {"initialize": "client-initialize", "session/new": "session-new", "session/prompt": "prompt"}
"""The client's requests whose findings belong to one check, whichever is
running (every check's client sends them: a fault in one fails that check
alone)."""

AGENT_OPTIONS: dict[str, Any] = {
    "check_capabilities": False,
    "check_handler": False,
    "fold_sessions": False,
    "error_detail": True,
    "cancel_session_work": False,
}
"""The agent connection's options: the probe's handler is no ``Agent``
subclass and advertises nothing it must back, and its checks end their turns
themselves (``permission-cancel`` holds the turn until the client has answered
the permission request pending when it cancelled)."""

NewSessionHook = Callable[["Link", str], Awaitable[None]]
"""What a check does when ``session/new`` arrives, before it is answered
(given the id the answer will carry)."""


class Recorder:
    """The transcript of one connection, by check, and the schema checks of
    the client's messages."""

    def __init__(self, packages: dict[int, ModuleType]) -> None:
        self.packages = packages
        self.package: ModuleType | None = None
        self.version: int | None = None
        self.current = "setup"
        self.records: dict[str, Record] = {}
        self.sent: dict[Any, str] = {}
        """The method of each request the probe sent, by id."""
        self.initialize: dict[str, Any] | None = None
        """The client's initialize request."""
        self.sessions: set[str] = set()
        self.first: dict[str, Any] | None = None
        """The client's first message."""
        self.wrote = asyncio.Event()
        """Set (and cleared by who waits) each time the probe sends a request or a response."""
        self.prompts: list[Any] = []
        """The ids of the client's session/prompt requests, in order."""
        self.responded: set[Any] = set()
        """The ids of the client's requests the probe has answered."""

    def record(self, check: str | None = None) -> Record:
        return self.records.setdefault(check or self.current, Record())

    def problem(self, text: str, owner: str | None = None) -> None:
        self.record(owner).problem(text)

    def received(self, raw: bytes) -> None:
        try:
            data = json.loads(raw)
        except ValueError:
            text = raw.decode("utf-8", "replace").rstrip("\n")
            self.record().add(Line("client_to_agent", text))
            self.problem(f"the client wrote a line that is not JSON: {text[:200]!r}")
            return
        self.record().add(Line("client_to_agent", data))
        if not isinstance(data, dict):
            self.problem("the client wrote a JSON value that is not a JSON-RPC message")
            return
        if self.first is None:
            self.first = data
        if data.get("method") == "session/prompt" and "id" in data:
            self.prompts.append(data["id"])
        if data.get("method") == "initialize" and self.initialize is None:
            self.initialize = data
            return  # checked once the version is known (see sent)
        owner = OWNERS.get(data["method"]) if isinstance(data.get("method"), str) else None
        for text in self.check(data):
            self.problem(text, owner)

    def sent_line(self, data: bytes) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            return
        self.record().add(Line("agent_to_client", message))
        if not isinstance(message, dict):
            return
        if "method" in message and "id" in message:
            self.sent[message["id"]] = message["method"]
            self.wrote.set()
        elif "method" not in message and "id" in message:
            self.responded.add(message["id"])
            self.wrote.set()
        result = message.get("result")
        if self.version is None and isinstance(result, dict) and type(result.get("protocolVersion")) is int:
            self.version = result["protocolVersion"]
            self.package = self.packages.get(self.version)
            if self.initialize is not None:
                for text in self.check(self.initialize):
                    self.problem(text, OWNERS["initialize"])
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            self.sessions.add(result["sessionId"])

    def check(self, data: dict[str, Any]) -> list[str]:
        """What is wrong with one message of the client, by the package of
        the version negotiated."""
        package = self.package
        if package is None:
            return []
        method = data.get("method")
        if method is None:
            asked = self.sent.get(data.get("id")) if isinstance(data.get("id"), (int, str)) else None
            if asked is None:
                return [f"a response to id {data.get('id')!r}, which the probe never sent"]
            if "result" not in data or asked not in package.METHODS:
                return []
            try:
                package.decode_result(asked, data["result"], strict=True)
            except package.ValidationError as exc:
                return [f"invalid {asked} result: {exc.message}"]
            return []
        if isinstance(method, str) and method.startswith("_"):
            return []
        try:
            package.decode_message(data, strict=True)
        except package.ValidationError as exc:
            return [f"invalid {method}: {exc.message}"]
        return []


class RecordingTransport:
    """A transport that records what passes (see :class:`Recorder`)."""

    def __init__(self, inner: Any, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    async def receive(self) -> bytes | None:
        data: bytes | None = await self.inner.receive()
        if isinstance(data, bytes):
            self.recorder.received(data)
        return data

    async def send(self, data: bytes) -> None:
        self.recorder.sent_line(data)
        await self.inner.send(data)

    def is_closing(self) -> bool:
        closing: bool = self.inner.is_closing()
        return closing

    async def close(self) -> None:
        await self.inner.close()


class Turn:
    """One ``session/prompt`` of the client, played by a check: updates,
    requests, and its end (v1: the prompt's response; v2: the response
    accepts the prompt at once and an idle ``state_update`` ends the turn)."""

    def __init__(self, link: Link, session_id: str) -> None:
        self.link = link
        self.session_id = session_id
        prompts = link.recorder.prompts
        self.request_id: Any = prompts[-1] if prompts else None
        """The JSON-RPC id of the session/prompt."""
        self.answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.accepted = False
        self.ended = False

    @property
    def version(self) -> int:
        return self.link.version

    async def accept(self) -> None:
        """v2: answer the prompt (the turn goes on); nothing in v1."""
        if self.version >= 2 and not self.accepted:
            self.accepted = True
            self.answer.set_result({"messageId": f"probe-{uuid.uuid4().hex}"})
            await self.answered()

    async def answered(self) -> None:
        """Wait until the answer to the prompt has been sent (or the connection ended)."""
        recorder = self.link.recorder
        while self.request_id not in recorder.responded and not self.link.closed.is_set():
            recorder.wrote.clear()
            wrote = asyncio.ensure_future(recorder.wrote.wait())
            closed = asyncio.ensure_future(self.link.closed.wait())
            await asyncio.wait({wrote, closed}, return_when=asyncio.FIRST_COMPLETED)
            wrote.cancel()
            closed.cancel()

    async def update(self, update: dict[str, Any], valid: bool = True) -> None:
        """Send a session/update (``valid=False``: one the schema of the
        version does not allow, on purpose)."""
        await self.link.notify("session/update", {"sessionId": self.session_id, "update": update}, valid)

    async def say(self, text: str) -> None:
        """An agent message chunk of ``text``."""
        update: dict[str, Any] = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        if self.version >= 2:
            update["messageId"] = "probe-reply"
        await self.update(update)

    async def end(self, stop_reason: str = "end_turn") -> None:
        """End the turn with ``stop_reason``."""
        self.ended = True
        if self.version >= 2:
            await self.accept()
            await self.update({"sessionUpdate": "state_update", "state": "idle", "stopReason": stop_reason})
        elif not self.answer.done():
            self.answer.set_result({"stopReason": stop_reason})
            await self.answered()

    async def fail(self, code: int, message: str) -> None:
        """Answer the prompt with an error (before v2 accepted it)."""
        self.ended = True
        if not self.answer.done():
            self.answer.set_exception(_request_error(self.link, code, message))
            await self.answered()


def _request_error(link: Link, code: int, message: str) -> Exception:
    """The exception a handler raises to answer with an error (the package's ``RequestError``)."""
    from importlib import import_module

    error: Exception = import_module(f"{link.package.__name__}._jsonrpc").RequestError(code, message)
    return error


class Link:
    """One connection to the client: the probe's agent on it, and what the
    client did so far."""

    def __init__(self, ctx: ClientContext, transport: Any, hook: NewSessionHook | None) -> None:
        self.ctx = ctx
        self.recorder = Recorder(ctx.packages)
        self.transport = RecordingTransport(transport, self.recorder)
        self.conn: Any = None
        self.hook = hook
        self.initialized: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.turns: asyncio.Queue[Turn] = ctx.prompts if ctx.command is None else asyncio.Queue()
        """The client's prompts (serve mode: one queue for every connection's)."""
        self.cancels: list[str] = []
        self.cancelled = asyncio.Event()
        self.closed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    @property
    def version(self) -> int:
        return self.recorder.version or max(self.ctx.packages)

    @property
    def package(self) -> ModuleType:
        return self.ctx.packages[self.version]

    def start(self) -> None:
        """Serve the client: the version its initialize asks for, as
        ``serve_versions`` chooses it."""
        from importlib import import_module

        agents = {
            version: (import_module(f"{package.__name__}.connection").AgentSideConnection, self._agent)
            for version, package in self.ctx.packages.items()
        }
        serve = import_module(f"{self.package.__name__}._versions").serve_versions
        self._watch(serve(agents, self.transport, **AGENT_OPTIONS))

    def connection(self, version: int, max_message: int) -> Any:
        """The agent connection of ``version`` over the transport, for a
        server that starts it itself (the runtime's ASGI app)."""
        from importlib import import_module

        package = self.ctx.packages[version]
        make = import_module(f"{package.__name__}.connection").AgentSideConnection
        conn = make(self._agent, self.transport, max_message=max_message, **AGENT_OPTIONS)
        self._watch(conn.run())
        return conn

    def _watch(self, serving: Awaitable[None]) -> None:
        async def run() -> None:
            try:
                await serving
            except Exception as exc:  # the connection's end, whatever broke it
                self.recorder.problem(f"the connection ended with an error: {exc!r}")
            finally:
                self.closed.set()
                if not self.initialized.done():
                    self.initialized.set_exception(Failed("the client closed the connection before initialize"))

        self.task = asyncio.ensure_future(run())

    def _agent(self, conn: Any) -> ProbeAgent:
        self.conn = conn
        return ProbeAgent(self)

    def _valid(self, method: str, params: Any, request: bool) -> None:
        """The probe's own messages are valid (unless made invalid on
        purpose): a mistake here would blame the client."""
        package = self.package
        if method not in package.METHODS:
            return
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            message["id"] = 0
        try:
            package.decode_message(message, strict=True)
        except package.ValidationError as exc:
            raise AssertionError(f"the probe's own {method} is not valid ACP v{self.version}: {exc}") from None

    async def written(self, method: str) -> Any:
        """Wait until a request of ``method`` has been sent; its id."""
        while self.sent_id(method) is None and not self.closed.is_set():
            self.recorder.wrote.clear()
            wrote = asyncio.ensure_future(self.recorder.wrote.wait())
            closed = asyncio.ensure_future(self.closed.wait())
            await asyncio.wait({wrote, closed}, return_when=asyncio.FIRST_COMPLETED)
            wrote.cancel()
            closed.cancel()
        return self.sent_id(method)

    async def notify(self, method: str, params: Any, valid: bool = True) -> None:
        if valid:
            self._valid(method, params, request=False)
        if self.conn is None or self.closed.is_set():
            raise Closed(f"the client closed the connection (sending {method})")
        try:
            await self.conn.notify(method, params)
        except ConnectionError:
            raise Closed(f"the client closed the connection (sending {method})") from None

    async def request(self, method: str, params: Any) -> tuple[Any, dict[str, Any] | None]:
        """Send a request; its result, or None and the error answered.
        Raises :class:`Failed` when the client closed the connection first."""
        self._valid(method, params, request=True)
        if self.conn is None or self.closed.is_set():
            raise Closed(f"the client closed the connection before {method} could be sent")
        try:
            return await self.conn.request(method, params), None
        except ConnectionError:
            raise Closed(f"the client closed the connection without answering {method}") from None
        except Exception as exc:
            code = getattr(exc, "code", None)
            if code is None:
                raise
            return None, {"code": code, "message": getattr(exc, "message", str(exc))}

    def sent_id(self, method: str) -> Any:
        """The id of the latest request of ``method`` the probe sent."""
        ids = [id for id, sent in self.recorder.sent.items() if sent == method]
        return ids[-1] if ids else None

    async def barrier(self, what: str) -> None:
        """Make sure the client read and survived ``what``: it answers a
        request sent after it."""
        await self.request(BARRIER, {"after": what})

    @contextlib.asynccontextmanager
    async def surviving(self, what: str) -> AsyncIterator[None]:
        """What the block sends (``what``), then :meth:`barrier`. A client
        that closes the connection on reading it fails with one reason,
        whether the probe was still sending or already waiting for the
        barrier's answer: which of the two it was is timing alone."""
        try:
            yield
            await self.barrier(what)
        except Closed:
            raise Closed(f"the client closed the connection without answering {BARRIER} after {what}") from None

    async def close(self) -> None:
        if self.conn is not None:
            with contextlib.suppress(Exception):
                await self.conn.close()
        with contextlib.suppress(Exception):
            await self.transport.close()
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task


class ProbeAgent:
    """The handler of the probe's agent connection."""

    def __init__(self, link: Link) -> None:
        self.link = link

    async def initialize(self, params: Any) -> dict[str, Any]:
        link = self.link
        version = link.conn.protocol_version if link.conn is not None else max(link.ctx.packages)
        if link.recorder.initialize is not None and not link.initialized.done():
            link.initialized.set_result(link.recorder.initialize)
        if version >= 2:
            return {"protocolVersion": version, "info": AGENT_INFO, "capabilities": {"session": {}}}
        return {
            "protocolVersion": version,
            "agentInfo": AGENT_INFO,
            "agentCapabilities": {"loadSession": False},
            "authMethods": [],
        }

    async def new_session(self, params: Any) -> dict[str, Any]:
        session_id = f"probe-{uuid.uuid4().hex}"
        link = self.link
        link.recorder.sessions.add(session_id)
        hook, link.hook = link.hook, None
        if hook is not None:
            await hook(link, session_id)
        return {"sessionId": session_id}

    async def prompt(self, params: Any) -> Any:
        link = self.link
        session_id = getattr(params, "session_id", None)
        if session_id not in link.recorder.sessions:
            link.recorder.problem(
                f"session/prompt for session {session_id!r}, which no session/new opened", OWNERS["session/prompt"]
            )
        turn = Turn(link, str(session_id))
        await link.turns.put(turn)
        return await turn.answer

    async def cancel(self, params: Any) -> None:
        self.link.cancels.append(str(getattr(params, "session_id", "")))
        self.link.cancelled.set()


class ClientProcess:
    """A client started for one check, and the socket its agent (the relay) reaches."""

    def __init__(self, command: list[str], given: str | None = None) -> None:
        self.command = command
        self.given = given
        """Text written to the client's stdin, then closed (relayed clients only)."""
        self._claim = claim(PREFIX)
        self.directory = self._claim.path
        self.socket_path = os.path.join(self.directory, "agent.sock")
        self.process: asyncio.subprocess.Process | None = None
        self.server: asyncio.AbstractServer | None = None
        self.connections: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
        self.accepted = 0
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self.tasks: list[asyncio.Future[None]] = []

    @property
    def relayed(self) -> bool:
        return any(AGENT_PLACEHOLDER in arg for arg in self.command)

    def argv(self) -> tuple[list[str], list[str]]:
        agent = [sys.executable, "-S", "-c", RELAY, self.socket_path]
        argv: list[str] = []
        for arg in self.command:
            if arg == AGENT_PLACEHOLDER:
                argv.extend(agent)
            else:
                argv.append(arg.replace(AGENT_PLACEHOLDER, shlex.join(agent)))
        return argv, agent

    async def start(self, max_message: int) -> None:
        argv, agent = self.argv()
        env = {**os.environ, AGENT_ENV: shlex.join(agent)}
        if self.relayed:
            self.server = await asyncio.start_unix_server(self._accept, self.socket_path, limit=max_message)
        self.process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if not self.relayed or self.given is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            limit=max_message,
        )
        self.tasks.append(asyncio.ensure_future(self._read_stderr()))
        if self.relayed:
            self.tasks.append(asyncio.ensure_future(self._drain_stdout()))
        if self.relayed and self.given is not None:
            self.tasks.append(asyncio.ensure_future(self._give(self.given)))

    async def _give(self, text: str) -> None:
        assert self.process is not None and self.process.stdin is not None
        with contextlib.suppress(ConnectionError):
            self.process.stdin.write(text.encode("utf-8"))
            await self.process.stdin.drain()
        self.process.stdin.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        await self.connections.put((reader, writer))

    async def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while True:
            try:
                line = await self.process.stderr.readline()
            except ValueError:
                continue
            if not line:
                return
            self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))

    async def _drain_stdout(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        while await self.process.stdout.read(65536):
            pass

    def streams(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """The client's own stdin and stdout, when it speaks ACP on them."""
        if self.relayed or self.process is None or self.process.stdin is None or self.process.stdout is None:
            return None
        return self.process.stdout, self.process.stdin

    async def exited(self, timeout: float) -> int | None:
        """The client's exit status, once it has exited (None: still running after ``timeout``)."""
        assert self.process is not None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), timeout)
        return self.process.returncode

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        while not self.connections.empty():
            _, writer = self.connections.get_nowait()
            writer.close()
        process = self.process
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                with contextlib.suppress(Exception):
                    process.stdin.close()
            if await self.exited(0.5) is None:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
                if await self.exited(2.0) is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                    await self.exited(5.0)
        for task in self.tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._claim.release()


class ClientContext:
    """One client probe run's state, shared by the checks (see the module)."""

    def __init__(
        self,
        packages: dict[int, ModuleType],
        timeout: float,
        startup_timeout: float,
        command: list[str] | None = None,
        hooks: dict[str, NewSessionHook] | None = None,
        client_input: str | None = None,
    ) -> None:
        self.packages = packages
        self.client_input = client_input
        """Text given to each client started on its stdin (see :class:`ClientProcess`)."""
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.command = command
        """The client command (spawn mode), or None (serve mode: the client started the probe)."""
        self.hooks = hooks or {}
        self.paused_at: float | None = None
        self.paused = 0.0
        self.clock_changed = asyncio.Event()
        self.dirty = False
        self.results: dict[str, Any] = {}
        self.links: list[Link] = []
        self.client: ClientProcess | None = None
        self.prompts: asyncio.Queue[Turn] = asyncio.Queue()
        """Serve mode: the client's prompts, on whichever connection, in order."""
        self.played: Turn | None = None
        """Serve mode: the prompt the running check plays (ended after it, if the check did not)."""
        self.version: int | None = None
        self.pending: list[str] = []
        """Serve mode: the checks not yet run, in order (the first of them
        with a session/new hook gets the next session/new)."""
        self.max_message = 64 * 1024 * 1024

    # ------------------------------------------------------------ the clock

    async def startup(self, work: Awaitable[Any], what: str) -> Any:
        """Wait for the client to get somewhere (start, connect, open a
        session, prompt): the check's clock stands still, for up to the
        startup timeout (serve mode: without bound, a person may be typing)."""
        loop = asyncio.get_running_loop()
        self.paused_at = loop.time()
        self.clock_changed.set()
        try:
            bound = self.startup_timeout if self.command is not None else None
            return await asyncio.wait_for(work, bound)
        except asyncio.TimeoutError:
            raise Failed(f"the client did not {what} within {self.startup_timeout:g} s (the startup timeout)") from None
        finally:
            self.paused += loop.time() - self.paused_at
            self.paused_at = None
            self.clock_changed.set()

    # ------------------------------------------------------------ connections

    def new_link(self, transport: Any, check: str | None, start: bool = True) -> Link:
        """A connection to the client over ``transport``, recording for
        ``check`` (serve mode: None, the next check's hook applies), served
        at once unless ``start`` is false (see :meth:`Link.connection`)."""
        hook = self.hooks.get(check) if check is not None else None
        if check is None:
            hook = next((self.hooks[name] for name in self.pending if name in self.hooks), None)
        link = Link(self, transport, hook)
        if check is not None:
            link.recorder.current = check
        self.links.append(link)
        if start:
            link.start()
        return link

    async def start(self, check: str) -> Link:
        """A connection to a client, initialized, its recorder on ``check``:
        a client started for this check (spawn mode), or the client's
        connection (serve mode)."""
        if self.command is None:
            return await self._served(check)
        from importlib import import_module

        client = ClientProcess(self.command, self.client_input)
        self.client = client
        try:
            await client.start(self.max_message)
        except OSError as exc:
            raise Failed(f"cannot start the client: {exc}") from None
        transport_class = import_module(f"{self.packages[max(self.packages)].__name__}._transport").StreamTransport
        streams = client.streams()
        if streams is None:
            reader, writer = await self.startup(self._connected(client), "start its agent (the {agent} command)")
        else:
            reader, writer = streams
        link = self.new_link(transport_class(reader, writer, max_message=self.max_message), check)
        await self.startup(asyncio.shield(link.initialized), "send initialize")
        self.version = link.version
        return link

    async def _connected(self, client: ClientProcess) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        got = asyncio.ensure_future(client.connections.get())
        assert client.process is not None
        ended = asyncio.ensure_future(client.process.wait())
        done, _ = await asyncio.wait({got, ended}, return_when=asyncio.FIRST_COMPLETED)
        if got in done:
            ended.cancel()
            return got.result()
        got.cancel()
        raise Failed(f"the client exited (status {client.process.returncode}) without starting its agent")

    async def _served(self, check: str) -> Link:
        """Serve mode: the connection of the client's next prompt, on
        whichever connection it comes (the turn is kept for :meth:`turn`)."""
        turn: Turn = await self.startup(self.prompts.get(), "send a prompt")
        self.played = turn
        link = turn.link
        link.recorder.current = check
        self.version = link.version
        return link

    async def turn(self, link: Link) -> Turn:
        """The client's next prompt on ``link`` (serve mode: the one
        :meth:`start` took)."""
        if self.played is not None and self.played.link is link:
            return self.played
        got = asyncio.ensure_future(link.turns.get())
        closed = asyncio.ensure_future(link.closed.wait())
        try:
            done, _ = await self.startup(
                asyncio.wait({got, closed}, return_when=asyncio.FIRST_COMPLETED), "send a prompt"
            )
        finally:
            closed.cancel()
        if got in done:
            return got.result()
        got.cancel()
        raise Failed("the client closed the connection without sending a prompt")

    # ------------------------------------------------------------ the runner's

    def collect(self, check: str) -> Collected:
        seen = Collected()
        for link in self.links:
            record = link.recorder.records.pop(check, None)
            if record is not None:
                seen.transcript.extend(record.lines)
                seen.dropped += record.dropped_lines
                seen.problems.extend(record.problems)
        if self.client is not None:
            seen.stderr = list(self.client.stderr)
        if len(seen.transcript) > KEPT_LINES:
            seen.dropped += len(seen.transcript) - KEPT_LINES
            seen.transcript = seen.transcript[-KEPT_LINES:]
        return seen

    async def after_check(self) -> None:
        if self.command is None:
            turn, self.played = self.played, None
            if turn is not None and not turn.ended and not turn.link.closed.is_set():
                with contextlib.suppress(Failed, ConnectionError):
                    await turn.end()
            return
        for link in self.links:
            await link.close()
        self.links = []
        if self.client is not None:
            await self.client.close()
            self.client = None

    async def close(self) -> None:
        for link in self.links:
            await link.close()
        if self.client is not None:
            await self.client.close()
