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
from .client_context import ClientContext
from .runner import Report, Result, run_checks, select


def select_client(only: Sequence[str]) -> list[Check]:
    """The client checks named (all of them when none is), in their order."""
    return select(only, CLIENT_CHECKS, "client check")


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
    ctx = _serving(packages, timeout, only)
    link = ctx.new_link(transport, None)
    results = await _play(ctx, select_client(only), on_result, ends=link)
    await link.close()
    return Report(["probe-agent"], ctx.version, list(results.values()), peer="client")


async def listen_probe_agent(
    packages: dict[int, ModuleType],
    version: int,
    *,
    host: str,
    port: int,
    timeout: float,
    only: Sequence[str] = (),
    on_result: Callable[[Result], None] | None = None,
    ready: Callable[[int], object] | None = None,
) -> Report:
    """Play the client checks over ACP's WebSocket and Streamable HTTP
    transport (the runtime's ASGI app, served by uvicorn on ``host`` and
    ``port``; ``ready(port)`` once it listens), speaking ``version``: one
    check per prompt, the connections in the order they open, until the
    checks are done."""
    from importlib import import_module

    ctx = _serving(packages, timeout, only)
    package = packages[version]
    asgi = import_module(f"{package.__name__}._asgi")

    def connect(transport: Any, max_message: int) -> Any:
        link = ctx.new_link(transport, None, start=False)
        return link.connection(version, max_message)

    server = asyncio.ensure_future(asgi.serve(asgi.AcpAsgiApp(connect), host=host, port=port, ready=ready))
    try:
        results = await _play(ctx, select_client(only), on_result, ends=None)
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await server
        await ctx.close()
    return Report(["probe-agent", "--listen"], ctx.version, list(results.values()), peer="client")


def _serving(packages: dict[int, ModuleType], timeout: float, only: Sequence[str]) -> ClientContext:
    ctx = ClientContext(packages, timeout, timeout, command=None, hooks=NEW_SESSION_HOOKS)
    ctx.pending = [check.name for check in select_client(only)]
    return ctx


async def _play(
    ctx: ClientContext, checks: list[Check], on_result: Callable[[Result], None] | None, ends: Any
) -> dict[str, Result]:
    """Run ``checks`` one after the other as the client's prompts come;
    when ``ends`` (the one connection) closes, the checks left are skipped."""
    results: dict[str, Result] = {}

    def done(result: Result) -> None:
        results[result.check.name] = result
        ctx.pending.remove(result.check.name)
        if on_result is not None:
            on_result(result)

    for check in checks:
        if ends is not None and ends.closed.is_set():
            done(Result(check, "skip", "the client closed the connection before this check"))
            continue
        playing = asyncio.ensure_future(run_checks(ctx, [check]))
        if ends is not None:
            closed = asyncio.ensure_future(ends.closed.wait())
            await asyncio.wait({playing, closed}, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
            if not playing.done():
                # The client is gone: what the check waits for ends with the connection, or on its timeout.
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(playing), ctx.timeout)
            if not playing.done():
                playing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await playing
                done(Result(check, "skip", "the client closed the connection during this check"))
                continue
        one = await playing
        ctx.results = results
        done(one[check.name])
    return results
