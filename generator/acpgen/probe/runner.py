"""Run the checks against one agent command, and say how each went."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .checks import CHECKS, Check
from .context import Context, Failed, Skipped
from .peer import AgentGone, Line

DEFAULT_TIMEOUT = 10.0
"""Seconds a check may take before it fails (and the agent is started again)."""

SETUP = {"initialize", "session-new"}
"""Checks whose failure, met while another check sets up, skips that check."""


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
            "level": self.check.level,
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

    @property
    def must_failed(self) -> bool:
        return any(r.status == "fail" and r.check.level == "MUST" for r in self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "protocolVersion": self.version,
            "results": [result.to_json() for result in self.results],
            "passed": sum(r.status == "pass" for r in self.results),
            "failed": sum(r.status == "fail" for r in self.results),
            "skipped": sum(r.status == "skip" for r in self.results),
        }

    def text(self, transcript_lines: int = 20) -> Iterable[str]:
        where = f"ACP v{self.version}" if self.version is not None else "no version negotiated"
        yield f"acpgen probe: {' '.join(self.command)} ({where})"
        for result in self.results:
            check = result.check
            line = f"{result.status.upper():<5} {check.level:<6} {check.name}"
            yield line + (f": {result.reason}" if result.reason else "")
            if result.status != "fail":
                continue
            yield f"      requires: {check.summary}"
            yield f"      from: {check.source}"
            if result.transcript:
                yield "      transcript:"
                yield from _excerpt(result, transcript_lines)
            if result.stderr:
                yield "      agent stderr (last lines):"
                for text in result.stderr:
                    yield f"        {text}"
        failed = [r for r in self.results if r.status == "fail"]
        must = sum(r.check.level == "MUST" for r in failed)
        passed = sum(r.status == "pass" for r in self.results)
        skipped = sum(r.status == "skip" for r in self.results)
        yield (f"{passed} passed, {len(failed)} failed ({must} MUST, {len(failed) - must} SHOULD), {skipped} skipped")


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


def select(only: Sequence[str]) -> list[Check]:
    """The checks named (all of them when none is), in their order."""
    if not only:
        return list(CHECKS)
    known = {check.name for check in CHECKS}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise ValueError(f"unknown check(s): {', '.join(unknown)} (the checks: {', '.join(sorted(known))})")
    return [check for check in CHECKS if check.name in only]


async def probe(
    command: list[str],
    packages: dict[int, ModuleType],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    only: Sequence[str] = (),
) -> Report:
    """Run the checks (``only`` those, if given) against the agent that
    ``command`` starts. Each check gets at most ``timeout`` seconds."""
    checks = select(only)
    ctx = Context(command, packages, timeout)
    results: list[Result] = []
    try:
        for check in [c for c in checks if not c.after] + [c for c in checks if c.after]:
            results.append(await _run(ctx, check))
            for peer in ctx.peers:
                if peer is not ctx.main:
                    await peer.close()
    finally:
        await ctx.close()
    return Report(command, ctx.version, results)


async def _run(ctx: Context, check: Check) -> Result:
    status, reason = "pass", ""
    try:
        await asyncio.wait_for(check.run(ctx), ctx.timeout)
    except Skipped as exc:
        status, reason = "skip", str(exc)
    except Failed as exc:
        status, reason = "fail", str(exc)
        if ctx.setup_failure is not None and check.name not in SETUP:
            status, reason = "skip", f"needs {ctx.setup_failure}"
            ctx.setup_failure = None
    except asyncio.TimeoutError:
        status, reason = "fail", f"no answer within {ctx.timeout:g} s (the timeout)"
        if ctx.initializing:  # the main connection's initialize hangs: no use retrying it
            ctx.initializing = False
            ctx.unusable = f"initialize had no answer within {ctx.timeout:g} s"
            if check.name != "initialize":
                status, reason = "skip", f"needs a working initialize: {ctx.unusable}"
        ctx.dirty = True
    except AgentGone as exc:
        status, reason = "fail", str(exc)
        ctx.dirty = True
    transcript: list[Line] = []
    problems: list[str] = []
    stderr: list[str] = []
    dropped = 0
    for peer in ctx.peers:
        record = peer.records.pop(check.name, None)
        if record is not None:
            transcript.extend(record.lines)
            dropped += record.dropped_lines
            problems.extend(record.problems)
            if record.dropped_problems:
                problems.append(f"{record.dropped_problems} more problem(s)")
            stderr = list(peer.stderr)
    if problems and status != "fail":
        status, reason = (
            "fail",
            "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""),
        )
    elif problems:
        reason += "; " + "; ".join(problems[:3])
    return Result(check, status, reason, transcript, stderr if status == "fail" else [], dropped)
