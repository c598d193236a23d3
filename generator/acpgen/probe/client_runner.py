"""Run the client checks: against a client command (``probe --client``),
or as the agent a client started (``probe-agent``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from .checks import Check
from .client_checks import CLIENT_CHECKS, NEW_SESSION_HOOKS
from .client_context import AGENT_PLACEHOLDER, ClientContext
from .runner import Report, Result, run_checks


def select_client(only: Sequence[str]) -> list[Check]:
    """The client checks named (all of them when none is), in their order."""
    if not only:
        return list(CLIENT_CHECKS)
    known = {check.name for check in CLIENT_CHECKS}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise ValueError(f"unknown client check(s): {', '.join(unknown)} (the checks: {', '.join(sorted(known))})")
    return [check for check in CLIENT_CHECKS if check.name in only]


async def probe_client(
    command: list[str],
    packages: dict[int, ModuleType],
    *,
    timeout: float,
    startup_timeout: float,
    only: Sequence[str] = (),
    client_input: str | None = None,
) -> Report:
    """Run the client checks (``only`` those) against the client ``command``
    starts, once per check (see :mod:`.client_context` for ``{agent}``);
    ``client_input`` is written to each client's stdin, then closed."""
    checks = select_client(only)
    ctx = ClientContext(
        packages, timeout, startup_timeout, command=command, hooks=NEW_SESSION_HOOKS, client_input=client_input
    )
    try:
        results = await run_checks(ctx, checks)
    finally:
        await ctx.close()
    return Report(command, ctx.version, list(results.values()), peer="client")


async def serve_probe_agent(
    packages: dict[int, ModuleType],
    transport: Any,
    *,
    timeout: float,
    only: Sequence[str] = (),
    on_result: Callable[[Result], None] | None = None,
) -> Report:
    """Play the client checks on the connection a client opened over
    ``transport`` (this process's stdin and stdout, say): one check per
    prompt, in order, until the checks are done or the client closes the
    connection (the checks left are skipped, saying so). ``on_result`` is
    called with each result as it is known."""
    checks = select_client(only)
    ctx = ClientContext(packages, timeout, timeout, command=None, hooks=NEW_SESSION_HOOKS)
    ctx.pending = [check.name for check in checks]
    link = ctx.new_link(transport, None)
    await ctx.incoming.put(link)

    async def play() -> dict[str, Result]:
        results: dict[str, Result] = {}
        ctx.results = results
        for check in checks:
            one = await run_checks(ctx, [check])
            result = one[check.name]
            results[check.name] = result
            ctx.pending.remove(check.name)
            if on_result is not None:
                on_result(result)
            if link.closed.is_set() and ctx.pending:
                for name in list(ctx.pending):
                    left = next(c for c in checks if c.name == name)
                    results[name] = Result(left, "skip", "the client closed the connection before this check")
                    if on_result is not None:
                        on_result(results[name])
                break
        return results

    playing = asyncio.ensure_future(play())
    closed = asyncio.ensure_future(link.closed.wait())
    await asyncio.wait({playing, closed}, return_when=asyncio.FIRST_COMPLETED)
    if not playing.done():
        # The client is gone: what waits for it ends (its turns, its answers).
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(playing), timeout)
    if not playing.done():
        playing.cancel()
    closed.cancel()
    results: dict[str, Result] = {}
    with contextlib.suppress(asyncio.CancelledError):
        results = await playing
    await link.close()
    return Report(["probe-agent"], ctx.version, list(results.values()), peer="client")


def has_placeholder(command: Sequence[str]) -> bool:
    return any(AGENT_PLACEHOLDER in arg for arg in command)
