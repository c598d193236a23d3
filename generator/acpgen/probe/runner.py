"""Run the checks against one agent command, and say how each went."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol

from .checks import CHECKS, TIERS, Check
from .context import Collected, Context, Failed, Skipped
from .peer import AgentGone, Line, NotJsonRpc
from .sandbox import CAPABILITIES, Sandbox

DEFAULT_TIMEOUT = 30.0
"""Seconds a check may take for its work (the time an agent process takes
to start is not counted) before it fails and the agent is started again."""

DEFAULT_STARTUP_TIMEOUT = 120.0
"""Seconds a process just started may take to answer its first request
(an agent that loads a model or a runtime first may take long)."""

EXIT_STATUSES = {
    0: "no MUST check failed (SHOULD, advisory and skipped checks do not count, nor failures listed in "
    "--expected-failures)",
    1: "a MUST check failed that was not expected to, or a check listed as an expected failure passed "
    "(a stale expectation)",
    2: "a usage error, or no generated package to check with",
}
"""What ``acpgen probe`` exits with."""


@dataclass
class Result:
    check: Check
    status: str
    """``pass``, ``fail`` or ``skip``."""
    reason: str = ""
    transcript: list[Line] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    dropped: int = 0
    """Messages of the exchange before the transcript's first (not kept)."""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "check": self.check.name,
            "tier": self.check.tier,
            "status": self.status,
            "summary": self.check.summary,
            "source": self.check.source,
        }
        if self.reason:
            data["reason"] = self.reason
        if self.status == "fail":
            data["transcript"] = [line.to_json() for line in self.transcript]
            data["transcriptDropped"] = self.dropped
            data["stderr"] = self.stderr
        return data


@dataclass
class Report:
    command: list[str]
    version: int | None
    results: list[Result]
    auth_methods: list[str] = field(default_factory=list)
    """The auth methods the agent advertised, ``id (name)``."""
    peer: str = "agent"
    """What was probed: ``agent`` (``acpgen probe``) or ``client`` (``--client``, ``probe-agent``)."""
    expected: set[str] = field(default_factory=set)
    """The checks expected to fail (``--expected-failures``, for the version negotiated)."""

    @property
    def must_failed(self) -> bool:
        return any(
            r.status == "fail" and r.check.tier == "MUST" and r.check.name not in self.expected for r in self.results
        )

    @property
    def stale(self) -> list[str]:
        """The checks expected to fail that passed: the expectation is out of date."""
        return [r.check.name for r in self.results if r.check.name in self.expected and r.status == "pass"]

    @property
    def exit_status(self) -> int:
        """1 when a MUST check failed that was not expected to, or a check
        expected to fail passed; else 0 (see :data:`EXIT_STATUSES`)."""
        return 1 if self.must_failed or self.stale else 0

    def failed_by_tier(self) -> dict[str, int]:
        return {tier: sum(r.status == "fail" and r.check.tier == tier for r in self.results) for tier in TIERS}

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "protocolVersion": self.version,
            "authMethods": self.auth_methods,
            "results": [result.to_json() for result in self.results],
            "passed": sum(r.status == "pass" for r in self.results),
            "failed": sum(r.status == "fail" for r in self.results),
            "failedByTier": self.failed_by_tier(),
            "skipped": sum(r.status == "skip" for r in self.results),
            "expectedFailures": sorted(self.expected),
            "staleExpectations": self.stale,
            "exitStatus": self.exit_status,
        }

    def text(self, transcript_lines: int = 20) -> Iterable[str]:
        where = f"ACP v{self.version}" if self.version is not None else "no version negotiated"
        yield f"acpgen probe: {' '.join(self.command)} ({where})"
        for result in self.results:
            check = result.check
            line = f"{result.status.upper():<5} {check.tier:<13} {check.name}"
            if check.name in self.expected:
                line += " (expected to fail" + ("; stale: it passed)" if result.status == "pass" else ")")
            yield line + (f": {result.reason}" if result.reason else "")
            if result.status != "fail":
                continue
            yield f"      requires: {check.summary}"
            yield f"      from: {check.source}"
            if result.transcript:
                yield "      transcript:"
                yield from _excerpt(result, transcript_lines)
            if result.stderr:
                yield f"      {self.peer} stderr (last lines):"
                for text in result.stderr:
                    yield f"        {text}"
        failed = self.failed_by_tier()
        by_tier = ", ".join(f"{count} {tier}" for tier, count in failed.items() if tier != "informational")
        passed = sum(r.status == "pass" for r in self.results)
        skipped = sum(r.status == "skip" for r in self.results)
        expected = sum(r.status == "fail" and r.check.name in self.expected for r in self.results)
        also = f", {expected} of them expected" if expected else ""
        yield f"{passed} passed, {sum(failed.values())} failed ({by_tier}{also}), {skipped} skipped"
        for name in self.stale:
            yield f"stale expectation: {name} is listed as an expected failure but passed (remove it from the list)"


def _excerpt(result: Result, last: int) -> Iterable[str]:
    """The exchange of a failure: every message the probe sent (there are
    few), the agent's first and last ``last`` messages, the rest counted."""
    lines = result.transcript
    keep = {i for i, line in enumerate(lines) if line.direction == "client_to_agent"}
    keep |= set(range(min(3, len(lines)))) | set(range(max(0, len(lines) - last), len(lines)))
    if result.dropped:
        yield f"        ... {result.dropped} earlier message(s), not kept"
    previous = -1
    for index in sorted(keep):
        if index > previous + 1:
            yield f"        ... {index - previous - 1} message(s)"
        yield f"        {lines[index]}"
        previous = index


def select(only: Sequence[str], checks: Sequence[Check] = CHECKS, what: str = "check") -> list[Check]:
    """The ``checks`` named (all of them when none is), in their order;
    ``what`` names them in the error for an unknown name."""
    if not only:
        return list(checks)
    known = {check.name for check in checks}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise ValueError(f"unknown {what}(s): {', '.join(unknown)} (the checks: {', '.join(sorted(known))})")
    return [check for check in checks if check.name in only]


async def probe(
    command: list[str],
    packages: dict[int, ModuleType],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    only: Sequence[str] = (),
    protocol_version: int | None = None,
    auth_method: str | None = None,
    client_capabilities: Sequence[str] = (),
    sandbox_from: str | None = None,
) -> Report:
    """Run the checks (``only`` those, if given) against the agent that
    ``command`` starts. Each check gets at most ``timeout`` seconds for its
    work, and each process it starts ``startup_timeout`` seconds to answer
    its first request. ``protocol_version`` offers that version alone (its
    package must be among ``packages``); ``auth_method`` authenticates with
    that method id after initialize. ``client_capabilities`` (``fs``,
    ``terminal``) are advertised (v1) and served in a temporary directory,
    the sessions' working directory, removed at the end; it starts as a copy
    of ``sandbox_from`` when given."""
    checks = select(only)
    if protocol_version is not None:
        if protocol_version not in packages:
            raise ValueError(f"no package for protocol version {protocol_version} (the probe has {sorted(packages)})")
        packages = {protocol_version: packages[protocol_version]}
    unknown = set(client_capabilities) - set(CAPABILITIES)
    if unknown:
        raise ValueError(f"unknown client capability {', '.join(sorted(unknown))} (one of: {', '.join(CAPABILITIES)})")
    sandbox = None
    if client_capabilities:
        sandbox = Sandbox("fs" in client_capabilities, "terminal" in client_capabilities, sandbox_from)
    ctx = Context(command, packages, timeout, startup_timeout, auth_method, sandbox)
    try:
        results = await run_checks(ctx, checks)
    finally:
        await ctx.close()
        if sandbox is not None:
            await sandbox.close()
    auth_methods = ctx.auth_methods() if ctx.version is not None else []
    return Report(command, ctx.version, list(results.values()), auth_methods)


class RunContext(Protocol):
    """What :func:`run_checks` needs of a run's context (the agent probe's
    :class:`~.context.Context`, the client probe's
    :class:`~.client_context.ClientContext`)."""

    timeout: float
    paused: float
    paused_at: float | None
    clock_changed: asyncio.Event
    dirty: bool
    results: dict[str, Any]

    def collect(self, check: str) -> Collected:
        """What the check's exchange was, once it has ended."""
        ...

    async def after_check(self) -> None:
        """Tidy up after a check (close what it alone used)."""
        ...


async def run_checks(ctx: RunContext, checks: Sequence[Check]) -> dict[str, Result]:
    """Run ``checks`` in order (those ``after`` the others last), each
    within ``ctx.timeout`` seconds of its own work, and say how each went."""
    results: dict[str, Result] = {}
    ctx.results = results
    for check in [c for c in checks if not c.after] + [c for c in checks if c.after]:
        results[check.name] = await _run(ctx, check, results)
        await ctx.after_check()
    return results


def _blocked(check: Check, results: dict[str, Result]) -> str | None:
    """Why ``check`` cannot run: a check it needs failed or was skipped."""
    for name in check.needs:
        result = results.get(name)
        if result is None or result.status == "pass":
            continue
        how = "failed" if result.status == "fail" else "was skipped"
        return f"needs {name}, which {how}" + (f": {result.reason}" if result.reason else "")
    return None


async def _timed(ctx: RunContext, check: Check) -> str | None:
    """Run the check within ``ctx.timeout`` seconds of its own work: the
    clock stands still while a process it started is starting (that wait has
    the startup timeout, see :meth:`Context.first`)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(check.run(ctx))
    begun = loop.time()
    ctx.paused = 0.0
    try:
        while True:
            ctx.clock_changed.clear()
            left = None if ctx.paused_at is not None else ctx.timeout - (loop.time() - begun - ctx.paused)
            changed = asyncio.ensure_future(ctx.clock_changed.wait())
            done, _ = await asyncio.wait(
                {task, changed}, timeout=None if left is None else max(0.0, left), return_when=asyncio.FIRST_COMPLETED
            )
            changed.cancel()
            if task in done:
                return task.result()
            if changed not in done:
                raise asyncio.TimeoutError
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def _run(ctx: RunContext, check: Check, results: dict[str, Result]) -> Result:
    status, reason = "pass", ""
    blocked = _blocked(check, results)
    if blocked is not None:
        return Result(check, "skip", blocked)
    try:
        reason = await _timed(ctx, check) or ""
    except Skipped as exc:
        status, reason = "skip", str(exc)
    except Failed as exc:
        status, reason = "fail", str(exc)
    except asyncio.TimeoutError:
        status, reason = "fail", f"no answer within {ctx.timeout:g} s (the timeout)"
        ctx.dirty = True
    except (AgentGone, NotJsonRpc) as exc:
        status, reason = "fail", str(exc)
        ctx.dirty = True
    seen = ctx.collect(check.name)
    problems = seen.problems
    if problems and status != "fail":
        status, reason = (
            "fail",
            "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""),
        )
    elif problems:
        reason += "; " + "; ".join(problems[:3])
    return Result(check, status, reason, seen.transcript, seen.stderr if status == "fail" else [], seen.dropped)
