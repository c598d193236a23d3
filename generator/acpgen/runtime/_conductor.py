"""A conductor: runs a proxy chain in front of an agent (unstable ACP).

To the client the conductor is the agent. It starts each component (the
proxies, then the agent last) and routes every message: what the client
sends goes to the first component; what a proxy wraps in a
``proxy/successor`` envelope goes, unwrapped, to the component after it;
what a component sends otherwise goes toward the client, wrapped in a
``proxy/successor`` envelope for the proxy before it (or as it is to the
client, from the first component; the client's own ``proxy/initialize``
and ``proxy/successor`` are refused, ``-32601``). The ``initialize`` for a component
with a successor goes out as ``proxy/initialize`` (the client's, and the
one each proxy forwards); the agent gets ``initialize``. Nothing else is
changed: params, results and errors are passed on as the same JSON
values. Request ids and cancellation are per hop (see ``_proxy``).

When a component exits (or its connection breaks), the chain ends: the
requests waiting for it fail (``-32603``, naming it), the answers
on their way back to the client get ``grace`` seconds to arrive, then
the client's requests still open are answered ``-32603`` too, the client
is told with an error response of id ``null`` and its connection is
closed, and the other components are closed (their stdin ends; each has
``close_grace`` seconds to exit before it is killed). When the client
closes, the components are closed the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Sequence
from typing import Any

from ._jsonrpc import INTERNAL_ERROR, RequestError, dump_message
from ._proxy import (
    INITIALIZE,
    PROXY_INITIALIZE,
    SUCCESSOR,
    Hop,
    NotificationHandler,
    RequestHandler,
    unwrap,
    wrap,
)
from ._transport import (
    DEFAULT_CLOSE_GRACE,
    DEFAULT_MAX_MESSAGE,
    Transport,
    spawn_process,
)

__all__ = ["ChainEnded", "Conductor", "conduct"]

log = logging.getLogger(__name__.rpartition(".")[0] + ".conductor")


class ChainEnded(Exception):
    """A component of the chain exited, or its connection broke: the chain
    was closed (the message says which component, and how each process
    ended once :func:`conduct` has awaited them)."""


class Conductor:
    """Routes messages between ``client`` and ``components`` (transports to
    the proxies in order, then the agent; ``names`` say what each is, for
    errors). :meth:`run` serves until the client or a component closes."""

    def __init__(
        self,
        client: Transport,
        components: Sequence[Transport],
        names: Sequence[str] | None = None,
        *,
        grace: float = 5.0,
    ) -> None:
        if not components:
            raise ValueError("a chain needs at least an agent")
        labels = list(names) if names is not None else []
        labels += [f"component {i}" for i in range(len(labels), len(components))]
        self.grace = grace
        """Seconds the answers on their way to the client get when the chain ends."""
        self.ended: str | None = None
        """What ended the chain: the component that closed, or ``None`` (the client did)."""
        self._done = asyncio.Event()
        self.client = Hop(
            client,
            self._from_client,
            self._client_notification,
            name="client",
            on_close=lambda why: self._closed(None, why),
        )
        self.components = [
            Hop(
                transport,
                self._requester(i),
                self._notifier(i),
                name=labels[i],
                on_close=functools.partial(self._closed, i),
            )
            for i, transport in enumerate(components)
        ]

    @property
    def _last(self) -> int:
        return len(self.components) - 1

    # ------------------------------------------------------------ routing

    async def _to(self, i: int, method: str, params: Any) -> Any:
        """Send a request to component ``i``; its answer, unchanged."""
        if method == INITIALIZE and i < self._last:
            method = PROXY_INITIALIZE
        return await self.components[i].request(method, params)

    async def _from_client(self, method: str, params: Any) -> Any:
        if method in (PROXY_INITIALIZE, SUCCESSOR):
            # The chain's own methods: the client is no component of it.
            raise RequestError.method_not_found(method)
        return await self._to(0, method, params)

    async def _client_notification(self, method: str, params: Any) -> None:
        if method == SUCCESSOR:
            log.warning("dropped a proxy/successor notification from the client")
            return
        await self.components[0].notify(method, params)

    def _requester(self, i: int) -> RequestHandler:
        async def request(method: str, params: Any) -> Any:
            if method == PROXY_INITIALIZE or (method == SUCCESSOR and i == self._last):
                # The conductor's own method, or a successor the last
                # component does not have.
                raise RequestError.method_not_found(method)
            if method == SUCCESSOR:
                inner, inner_params = unwrap(params)
                return await self._to(i + 1, inner, inner_params)
            if i == 0:
                return await self.client.request(method, params)
            return await self.components[i - 1].request(SUCCESSOR, wrap(method, params))

        return request

    def _notifier(self, i: int) -> NotificationHandler:
        async def notify(method: str, params: Any) -> None:
            if method == PROXY_INITIALIZE or (method == SUCCESSOR and i == self._last):
                log.warning(
                    "dropped a %s notification from the %s",
                    method,
                    self.components[i].name,
                )
                return
            if method == SUCCESSOR:
                try:
                    inner, inner_params = unwrap(params)
                except RequestError:
                    log.warning(
                        "dropped a proxy/successor notification without a method"
                    )
                    return
                await self.components[i + 1].notify(inner, inner_params)
            elif i == 0:
                await self.client.notify(method, params)
            else:
                await self.components[i - 1].notify(SUCCESSOR, wrap(method, params))

        return notify

    # ------------------------------------------------------------ life

    def _closed(self, i: int | None, why: str | None) -> None:
        if self._done.is_set():
            return
        if i is not None:
            name = self.components[i].name
            self.ended = f"the {name} exited" + (f" ({why})" if why else "")
        self._done.set()

    async def run(self) -> None:
        """Serve until the client or a component closes, then close the
        chain (see the module's documentation). Raises :class:`ChainEnded`
        when a component ended it."""
        self.client.start()
        for hop in self.components:
            hop.start()
        await self._done.wait()
        ended = self.ended
        if ended is not None:
            # The errors on their way back get their time to reach the client.
            await self.client.settle(self.grace)
            await self.client.abandon(ended)
            with contextlib.suppress(ConnectionError):
                error = {
                    "code": INTERNAL_ERROR,
                    "message": "Internal error",
                    "data": ended,
                }
                await self.client.transport.send(
                    dump_message({"jsonrpc": "2.0", "id": None, "error": error})
                )
        for hop in self.components:
            await hop.close()
        await self.client.close()
        if ended is not None:
            raise ChainEnded(ended)


async def conduct(
    client: Transport,
    proxies: Sequence[Sequence[str]],
    agent: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    max_message: int = DEFAULT_MAX_MESSAGE,
    close_grace: float = DEFAULT_CLOSE_GRACE,
) -> None:
    """Start each of ``proxies`` (a command each: program and arguments),
    then ``agent``, as subprocesses speaking ACP on stdin/stdout, and
    conduct the chain for the client over ``client`` until either end
    closes (:class:`Conductor`). Raises :class:`ChainEnded` when a component
    ended the chain; every process is awaited (killed after
    ``close_grace`` seconds) before it returns."""
    commands = [list(c) for c in (*proxies, agent)]
    for command in commands:
        if not command:
            raise ValueError("an empty command in the chain")
    processes: list[asyncio.subprocess.Process] = []
    names: list[str] = []
    try:
        async with contextlib.AsyncExitStack() as stack:
            transports: list[Transport] = []
            for n, command in enumerate(commands):
                process, transport = await stack.enter_async_context(
                    spawn_process(
                        command[0],
                        command[1:],
                        env=env,
                        cwd=cwd,
                        max_message=max_message,
                        close_grace=close_grace,
                    )
                )
                processes.append(process)
                transports.append(transport)
                role = "agent" if n == len(commands) - 1 else f"proxy {n + 1}"
                names.append(f"{role} ({' '.join(command)})")
            await Conductor(client, transports, names).run()
    except ChainEnded as ended:
        statuses = ", ".join(
            f"{name}: {process.returncode}"
            for name, process in zip(names, processes, strict=False)
        )
        raise ChainEnded(f"{ended}; exit statuses: {statuses}") from None
