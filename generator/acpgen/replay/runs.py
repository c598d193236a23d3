"""Replayed runs against live peers: a client command served by the
recording's agent side (:func:`replay_to_client`), the library's in-process
form of the same (:func:`replay_agent`), and an agent command driven by the
recording's client side (:func:`replay_to_agent`, in :mod:`.client`)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from ..scratch import scratch
from .agent import AgentReplayer, serve
from .fold import package_for
from .script import Finding, ReplayResult, RunLog, compare_folds, read_run_log, recorded_traffic
from .transcript import Transcript, load_transcript

SCRATCH_PREFIX = "acpgen-replay-"
"""The name of the directory a replay run logs in (see :mod:`acpgen.scratch`)."""

AGENT_PLACEHOLDER = "{agent}"
"""In a client command, where the replay agent's command goes (else it is
appended)."""


def serve_command(transcript: str | Path, timing: str, log: str, package: str | None = None) -> list[str]:
    """The command that serves the agent side of ``transcript`` on stdio,
    writing the run to ``log``."""
    command = [sys.executable, "-m", "acpgen.replay", "serve", str(transcript), "--timing", timing, "--log", log]
    return [*command, "--package", package] if package else command


def client_command(command: Sequence[str], agent: Sequence[str]) -> list[str]:
    """``command`` with ``agent`` in place of :data:`AGENT_PLACEHOLDER`,
    or after it when it has none."""
    if AGENT_PLACEHOLDER in command:
        at = list(command).index(AGENT_PLACEHOLDER)
        return [*command[:at], *agent, *command[at + 1 :]]
    return [*command, *agent]


def result_of(
    transcript: Transcript,
    package: ModuleType,
    findings: list[Finding],
    traffic: list[tuple[str, dict[str, Any]]],
    ids: Any,
) -> ReplayResult:
    recorded, replayed, fold_finding = compare_folds(package, recorded_traffic(transcript), traffic, ids)
    if fold_finding is not None:
        findings = [*findings, fold_finding]
    return ReplayResult(findings, recorded, replayed, len(traffic))


def replay_to_client(
    path: str | Path,
    command: Sequence[str],
    *,
    timing: str = "compressed",
    package: str | None = None,
    timeout: float | None = None,
    cwd: str | None = None,
) -> tuple[ReplayResult, subprocess.CompletedProcess[bytes]]:
    """Run the client ``command``, whose agent is the agent side of the
    transcript at ``path`` (the client starts it: see :func:`client_command`),
    and compare the run with the recording."""
    transcript = load_transcript(path)
    fold_package = package_for(transcript.protocol_version, package)
    with scratch(SCRATCH_PREFIX) as directory:
        log = os.path.join(directory, "run.jsonl")
        full = client_command(command, serve_command(Path(path).resolve(), timing, log, _directory(fold_package)))
        done = subprocess.run(full, capture_output=True, timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL)
        traffic, findings, ids, ended = read_run_log(log)
    if not ended:
        findings.append(
            Finding("missing", "the replay agent did not finish its run (the client never started it, or killed it)")
        )
    return result_of(transcript, fold_package, findings, traffic, ids), done


def _directory(package: ModuleType) -> str:
    """Where ``package`` is, for the serving process (in another directory)."""
    return os.path.dirname(os.path.abspath(str(package.__file__)))


class AgentReplay:
    """A connection factory whose agent is the agent side of a recording:
    ``factory(make_client)`` is an async context manager yielding a
    client connection of a generated package (``ClientSideConnection`` of
    the package that folds the recording, or ``connection_class``) joined
    in memory to the replayed agent. When the block ends, :attr:`result`
    holds the comparison of the run with the recording::

        replay = replay_agent("session.jsonl")
        async with replay(MyClient) as conn:
            await conn.initialize(...)
            ...
        assert replay.result.ok, replay.result.findings
    """

    def __init__(
        self, path: str | Path, *, timing: str = "compressed", package: str | ModuleType | None = None
    ) -> None:
        self.transcript = load_transcript(path)
        self.timing = timing
        self.package = (
            package if isinstance(package, ModuleType) else package_for(self.transcript.protocol_version, package)
        )
        self.result: ReplayResult | None = None

    def __call__(
        self, make_client: Callable[[Any], Any], connection_class: Any = None, **options: Any
    ) -> contextlib.AbstractAsyncContextManager[Any]:
        return self._connect(make_client, connection_class, options)

    @contextlib.asynccontextmanager
    async def _connect(
        self, make_client: Callable[[Any], Any], connection_class: Any, options: dict[str, Any]
    ) -> AsyncIterator[Any]:
        memory_pair: Any = importlib.import_module(self.package.__name__ + "._transport").memory_pair
        agent_end, client_end = memory_pair()
        cls = connection_class or self.package.ClientSideConnection
        conn = cls(make_client, client_end, **options)
        replayer = AgentReplayer(self.transcript, self.timing, self.package)
        log = RunLog(None)

        async def send(data: bytes) -> None:
            await agent_end.send(data.rstrip(b"\n"))

        serving = asyncio.ensure_future(serve(replayer, agent_end.receive, send, log))
        conn.start()
        try:
            yield conn
        finally:
            await conn.close()
            with contextlib.suppress(Exception):
                await agent_end.close()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
            self.result = result_of(self.transcript, self.package, replayer.findings, log.traffic, replayer.ids)


def replay_agent(
    path: str | Path, *, timing: str = "compressed", package: str | ModuleType | None = None
) -> AgentReplay:
    """The agent side of the recording at ``path`` as a connection factory
    (see :class:`AgentReplay`)."""
    return AgentReplay(path, timing=timing, package=package)
