"""``acpgen conduct -- PROXY... -- PROXY... -- AGENT...``."""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

import click

SEPARATOR = "--"

HELP = """Run a proxy chain in front of an agent (ACP's unstable proxy chains), as the agent a client starts.

The command line holds the chain's components, each a command and its
arguments, separated by `--`: every group but the last is a proxy, in order
from the client's side, and the last is the agent. The first `--` ends
conduct's own options; a component's own arguments therefore cannot contain a
lone `--`.

conduct starts each component as a subprocess speaking ACP on its
stdin/stdout and is the agent to its own client on stdin/stdout. It sends
`proxy/initialize` to every proxy and `initialize` to the agent, delivers
what a proxy wraps in `proxy/successor` to the component after it and what a
component sends toward the client to the proxy before it (wrapped) or to the
client, and changes no message: params, results and errors pass as they
came. Request ids and `$/cancel_request` are per hop.

When a component exits, the requests waiting for it fail with -32603 naming
it, the client's requests still open are answered with that error, the
client gets an error response of id null saying why, its connection is
closed, and the other components are closed (their stdin ends; killed after
--close-grace seconds); conduct then exits 1, naming each component's exit
status on stderr. When the client closes, the components are closed the same
way and conduct exits 0.

\b
Examples:
  acpgen conduct -- python examples/proxy_log.py /tmp/chain.jsonl \\
                 -- python examples/proxy_rewrite.py \\
                 -- python examples/echo_agent.py
  acpgen conduct -- my-agent --acp          # no proxy: the agent alone
"""


def split_chain(words: Sequence[str]) -> list[list[str]]:
    """The components of ``words``: groups separated by ``--``, each
    non-empty (a leading ``--`` is allowed)."""
    groups: list[list[str]] = [[]]
    for word in words:
        if word == SEPARATOR:
            groups.append([])
        else:
            groups[-1].append(word)
    if groups and not groups[0] and len(groups) > 1:
        groups.pop(0)
    if any(not g for g in groups):
        raise click.UsageError("every component of the chain needs a command (an empty group between `--`s)")
    return groups


def _conductor(protocol: str) -> ModuleType:
    """The conductor of the package of ``protocol`` (``acp_v1_unstable``
    ...), when it can be imported, else acpgen's own copy of the same module."""
    try:
        return importlib.import_module(f"acp_{protocol}_unstable._conductor")
    except ImportError:
        return importlib.import_module("acpgen.runtime._conductor")


@click.command(
    "conduct",
    help=HELP,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.option(
    "--protocol",
    type=click.Choice(["v1", "v2"]),
    default="v1",
    show_default=True,
    help="The unstable schema the chain speaks: the conductor of that package runs (acp_v1_unstable or "
    "acp_v2_unstable, when importable; else acpgen's own copy). Both route every message the same way.",
)
@click.option(
    "--close-grace",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    help="Seconds a component gets to exit once its stdin is closed, before it is killed.",
)
@click.argument("chain", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- PROXY... -- AGENT...")
def conduct_command(protocol: str, close_grace: float, chain: tuple[str, ...]) -> None:
    components = split_chain(chain)
    module = _conductor(protocol)
    try:
        asyncio.run(_run(module, components[:-1], components[-1], close_grace))
    except module.ChainEnded as ended:
        click.echo(f"acpgen conduct: {ended}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        # asyncio.run cancelled the chain, which closed its components.
        click.echo("acpgen conduct: interrupted; the chain is closed", err=True)
        sys.exit(130)


async def _run(module: ModuleType, proxies: list[list[str]], agent: list[str], close_grace: float) -> None:
    from ..runtime._connection import open_stdio

    await module.conduct(await open_stdio(), proxies, agent, close_grace=close_grace)


__all__ = ["conduct_command", "split_chain"]
