"""``acpgen probe -- AGENT COMMAND...``."""

from __future__ import annotations

import asyncio
import json
import sys
from types import ModuleType

import click

from ..errors import AcpgenError
from ..probe import DEFAULT_TIMEOUT, NAMES, probe, select
from ..validate.loader import load_package
from .common import fail

PACKAGES = {1: "acp_v1", 2: "acp_v2"}
"""The packages the probe checks messages with, by protocol version."""

UNSTABLE = {1: "acp_v1_unstable", 2: "acp_v2_unstable"}
"""With --unstable: the packages of the unstable schemas."""


@click.command("probe", context_settings={"ignore_unknown_options": True})
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds each check may take; a check that takes longer fails, and the agent is started again.",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="CHECK",
    help=f"Run only this check (repeat the option for more): {', '.join(NAMES)}.",
)
@click.option(
    "--packages",
    "packages_dir",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="The directory holding the generated packages the messages are checked with: acp_v1 and acp_v2 "
    "(acp_v1_unstable and acp_v2_unstable with --unstable). Default: the 'out' directory of the "
    "[tool.acpgen] table of the nearest pyproject.toml (generated/ of the working directory when there "
    "is none), else the importable packages.",
)
@click.option(
    "--unstable",
    is_flag=True,
    help="Check the messages against the unstable schemas (acp_v1_unstable, acp_v2_unstable): "
    "for agents that use methods and fields not yet stable.",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- AGENT_COMMAND...")
def probe_command(
    fmt: str,
    timeout: float,
    only: tuple[str, ...],
    packages_dir: str | None,
    unstable: bool,
    command: tuple[str, ...],
) -> None:
    """Run conformance checks against an ACP agent program.

    Starts the agent (as many times as the checks need: a fresh process for
    each initialize check and for a request before initialize), speaks raw
    JSON-RPC to it as a client that advertises no file system and no
    terminal, and runs the checks for the protocol version it negotiates (it
    asks for the latest the probe speaks, 2): initialize with a supported,
    an unsupported (999) and a string ("1") version; a request before
    initialize; an unknown method (-32601); malformed params (-32602);
    session/new; a prompt; session/cancel and $/cancel_request; a permission
    request, answered; no fs/* or terminal/* call; each advertised prompt
    capability and loadSession; an extension method. Every message the agent
    sends is checked against the schema of that version; an invalid one
    fails the check it arrived in.

    Each check is reported PASS, FAIL or SKIP with its level (MUST or
    SHOULD) and where the requirement is written, and a failure with the
    transcript of its exchange and the agent's last stderr lines. Exit 1
    when a MUST check fails, 0 otherwise, 2 on a usage error.

    The packages are looked for in --packages DIR; without it, where `acpgen
    generate` writes (the 'out' directory of the [tool.acpgen] table of the
    nearest pyproject.toml, generated/ of the working directory when there
    is none), then imported. Only the versions found are spoken: with acp_v1
    alone the probe asks for version 1 and says on stderr that version 2 is
    not checked; with neither, it stops (exit 2) saying where it looked.
    """
    try:
        select(only)
    except ValueError as exc:
        fail(str(exc))
    packages = _packages(packages_dir, UNSTABLE if unstable else PACKAGES)
    try:
        report = asyncio.run(probe(list(command), packages, timeout=timeout, only=only))
    except KeyboardInterrupt:
        sys.exit(130)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        for line in report.text():
            click.echo(line)
    sys.exit(1 if report.must_failed else 0)


def _packages(directory: str | None, names: dict[int, str]) -> dict[int, ModuleType]:
    """The packages found, by version; those missing are said on stderr
    (the probe speaks the versions it has), and none at all is an error."""
    found: dict[int, ModuleType] = {}
    missing: list[AcpgenError] = []
    for version, name in names.items():
        try:
            found[version] = load_package(
                name,
                packages_dir=directory,
                option="--packages",
                hint="give the directory holding the generated packages with --packages",
                importable=directory is None,
            )
        except AcpgenError as exc:
            missing.append(exc)
    if not found:
        fail(missing[0] if len(missing) == 1 else "; ".join(str(exc) for exc in missing))
    for error, version in zip(missing, [v for v in names if v not in found], strict=True):
        click.echo(f"acpgen probe: protocol version {version} is not checked: {error}", err=True)
    return found
