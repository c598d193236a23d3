"""``acpgen probe -- AGENT COMMAND...``, ``acpgen probe --client -- CLIENT
COMMAND...`` and ``acpgen probe-agent``."""

from __future__ import annotations

import asyncio
import json
import sys
from types import ModuleType
from typing import Any

import click

from ..errors import AcpgenError
from ..probe import DEFAULT_STARTUP_TIMEOUT, DEFAULT_TIMEOUT, NAMES, Report, probe, select
from ..probe.client_checks import CLIENT_NAMES
from ..probe.client_context import AGENT_ENV, AGENT_PLACEHOLDER
from ..probe.client_runner import listen_probe_agent, probe_client, select_client, serve_probe_agent
from ..probe.expected import ExpectationError, expected_for, read_expected
from ..validate.loader import load_package
from .common import fail

PACKAGES = {1: "acp_v1", 2: "acp_v2"}
"""The packages the probe checks messages with, by protocol version."""

UNSTABLE = {1: "acp_v1_unstable", 2: "acp_v2_unstable"}
"""With --unstable: the packages of the unstable schemas."""


EXPECTED_HELP = (
    "A file of checks expected to fail, one check id a line (vN/CHECK: only when version N is negotiated; "
    "# comments): they are reported, and do not fail the run; a listed check that passes fails the run "
    "(a stale expectation)."
)


@click.command("probe", context_settings={"ignore_unknown_options": True})
@click.option(
    "--client",
    "client",
    is_flag=True,
    help=f"Probe a client instead: the command is a client, started once per check; {AGENT_PLACEHOLDER} in it "
    f"stands for the agent it should start (also in ${AGENT_ENV}); without {AGENT_PLACEHOLDER} the client speaks "
    "ACP on its own stdin and stdout. The client checks: " + ", ".join(CLIENT_NAMES) + ".",
)
@click.option(
    "--client-input",
    "client_input",
    default=None,
    metavar="TEXT",
    help="With --client: write TEXT to each client's stdin, then close it (for a client that reads its "
    "prompts from stdin, e.g. 'hello\\n'); default: an empty stdin. \\n in TEXT is a newline.",
)
@click.option(
    "--expected-failures",
    "expected_failures",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help=EXPECTED_HELP,
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds each check may take for its work (not counting an agent process starting); a check that "
    "takes longer fails, and the agent is started again.",
)
@click.option(
    "--startup-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_STARTUP_TIMEOUT,
    show_default=True,
    help="Seconds an agent process just started may take to answer its first request (initialize); "
    "an agent that takes longer fails that check, and the checks needing it skip.",
)
@click.option(
    "--protocol-version",
    type=click.Choice(["1", "2"]),
    default=None,
    help="Offer only this protocol version (default: the latest the probe has a package for, 2).",
)
@click.option(
    "--auth-method",
    metavar="ID",
    default=None,
    help="Authenticate with this auth method (one the agent lists in initialize's authMethods) before "
    "opening sessions: authenticate in v1, auth/login in v2. Without it, an agent that answers session/new "
    "-32000 (auth required) has its session checks skipped, with its auth methods listed.",
)
@click.option(
    "--client-capabilities",
    "client_capabilities",
    default="none",
    show_default=True,
    metavar="fs,terminal",
    help="What the probe's client side advertises (v1 clientCapabilities) and serves: fs (fs/read_text_file, "
    "fs/write_text_file), terminal (terminal/*), both (fs,terminal) or none. They work in a temporary directory "
    "the probe makes, the sessions' working directory, and removes at the end: files outside it are refused, "
    "commands run in it.",
)
@click.option(
    "--sandbox-from",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="With --client-capabilities: the temporary directory starts as a copy of this one (the files an agent "
    "expects to find in its working directory); the directory itself is never touched.",
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
    client: bool,
    client_input: str | None,
    expected_failures: str | None,
    fmt: str,
    timeout: float,
    startup_timeout: float,
    protocol_version: str | None,
    auth_method: str | None,
    client_capabilities: str,
    sandbox_from: str | None,
    only: tuple[str, ...],
    packages_dir: str | None,
    unstable: bool,
    command: tuple[str, ...],
) -> None:
    """Run conformance checks against an ACP agent program.

    Starts the agent (as many times as the checks need: a fresh process for
    each initialize check and for a request before initialize), speaks raw
    JSON-RPC to it as a client that advertises no file system and no
    terminal (unless --client-capabilities), and runs the checks for the protocol version it negotiates (it
    asks for the latest the probe speaks, 2, or --protocol-version):
    initialize with a supported, an unsupported (999) and a string ("1")
    version; a request before initialize; an unknown method (-32601);
    malformed params (-32602); session/new; a prompt; session/cancel and
    $/cancel_request; a permission request, answered; no fs/* or terminal/*
    call; no reply to a notification; each advertised prompt capability,
    loadSession, session/list (and its paging), resume and close; an
    extension method. Every message the agent sends is checked against the
    schema of the version negotiated; an invalid one fails the check it
    arrived in. A wrong negotiation fails initialize alone: the checks after
    it skip.

    Each check is reported PASS, FAIL or SKIP with its tier (MUST, SHOULD,
    advisory: a robustness preference no schema requires, informational:
    never fails) and the sentence of the schema or docs it checks, and a
    failure with the transcript of its exchange and the agent's last stderr
    lines. A check skips, naming why, when a check it needs failed or was
    skipped, when the agent answers -32000 (auth required: its auth methods
    are listed; see --auth-method), or when a race kept it from being
    exercised (the turn ended before the cancel reached the agent).

    With --client the command is a client (an editor's ACP side, an SDK's
    example client) and the probe plays its agent, with the generated
    packages' own agent connection: the client is started once per check,
    {agent} in its command replaced by the agent to start, and is expected
    to initialize, open a session and send a prompt; the probe plays that
    turn as the check says (every SessionUpdate kind, an unknown one,
    updates before the session/new answer and after the turn's end, tool
    call patches, permission requests, $/cancel_request, fs/* and
    terminal/* when advertised, an error, a slow turn, a disconnect).

    Exit status: 0 when no MUST check failed (failed SHOULD and advisory
    checks do not count, nor those --expected-failures lists), 1 when a MUST
    check failed, or a check --expected-failures lists passed (a stale
    expectation), 2 on a usage error or when no package is found.

    The packages are looked for in --packages DIR; without it, where `acpgen
    generate` writes (the 'out' directory of the [tool.acpgen] table of the
    nearest pyproject.toml, generated/ of the working directory when there
    is none), then imported. Only the versions found are spoken: with acp_v1
    alone the probe asks for version 1 and says on stderr that version 2 is
    not checked; with neither, it stops (exit 2) saying where it looked.
    """
    if client_input is not None and not client:
        fail("--client-input is for --client")
    if client:
        _probe_client(
            list(command),
            fmt,
            timeout,
            startup_timeout,
            protocol_version,
            only,
            packages_dir,
            unstable,
            expected_failures,
            None if client_input is None else client_input.replace("\\n", "\n"),
            auth_method is not None or client_capabilities != "none" or sandbox_from is not None,
        )
    try:
        select(only)
    except ValueError as exc:
        fail(str(exc))
    entries = _expected(expected_failures, NAMES)
    capabilities = [name.strip() for name in client_capabilities.split(",") if name.strip() not in ("", "none")]
    unknown = sorted(set(capabilities) - {"fs", "terminal"})
    if unknown:
        fail(f"--client-capabilities: unknown {', '.join(unknown)} (fs, terminal, fs,terminal or none)")
    if sandbox_from is not None and not capabilities:
        fail("--sandbox-from needs --client-capabilities fs, terminal or fs,terminal")
    packages = _packages(packages_dir, _names(unstable, protocol_version))
    try:
        report = asyncio.run(
            probe(
                list(command),
                packages,
                timeout=timeout,
                startup_timeout=startup_timeout,
                only=only,
                auth_method=auth_method,
                client_capabilities=capabilities,
                sandbox_from=sandbox_from,
            )
        )
    except KeyboardInterrupt:
        sys.exit(130)
    _finish(report, entries, fmt)


def _names(unstable: bool, protocol_version: str | None) -> dict[int, str]:
    names = UNSTABLE if unstable else PACKAGES
    if protocol_version is not None:
        names = {int(protocol_version): names[int(protocol_version)]}
    return names


def _expected(path: str | None, known: list[str]) -> dict[str, set[int] | None]:
    if path is None:
        return {}
    try:
        return read_expected(path, known)
    except (ExpectationError, OSError, UnicodeDecodeError) as exc:
        fail(f"--expected-failures: {exc}")


def _finish(report: Report, entries: dict[str, set[int] | None], fmt: str, out: Any = None) -> None:
    """Print the report (to ``out``, a file, when given) and exit with its status."""
    report.expected = expected_for(entries, report.version)
    text = json.dumps(report.to_json(), indent=2) if fmt == "json" else "\n".join(report.text())
    click.echo(text, file=out)
    sys.exit(report.exit_status)


def _probe_client(
    command: list[str],
    fmt: str,
    timeout: float,
    startup_timeout: float,
    protocol_version: str | None,
    only: tuple[str, ...],
    packages_dir: str | None,
    unstable: bool,
    expected_failures: str | None,
    client_input: str | None,
    agent_options: bool,
) -> None:
    if agent_options:
        fail("--auth-method, --client-capabilities and --sandbox-from are for probing agents, not with --client")
    try:
        select_client(only)
    except ValueError as exc:
        fail(str(exc))
    entries = _expected(expected_failures, CLIENT_NAMES)
    packages = _packages(packages_dir, _names(unstable, protocol_version))
    try:
        report = asyncio.run(
            probe_client(
                command,
                packages,
                timeout=timeout,
                startup_timeout=startup_timeout,
                only=only,
                client_input=client_input,
            )
        )
    except KeyboardInterrupt:
        sys.exit(130)
    _finish(report, entries, fmt)


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


@click.command("probe-agent")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--findings",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write the findings to this file (each check's result as it is known, then the report); "
    "default: stderr (stdout carries the protocol).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds each check may take for its work once the client's prompt has arrived.",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="CHECK",
    help=f"Play only this check (repeat the option for more): {', '.join(CLIENT_NAMES)}.",
)
@click.option(
    "--expected-failures", "expected_failures", type=click.Path(exists=True, dir_okay=False), help=EXPECTED_HELP
)
@click.option(
    "--packages",
    "packages_dir",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="The directory holding the generated packages (acp_v1, acp_v2); default as for `acpgen probe`.",
)
@click.option("--unstable", is_flag=True, help="Speak the unstable schemas (acp_v1_unstable, acp_v2_unstable).")
@click.option(
    "--listen",
    metavar="HOST:PORT",
    default=None,
    help="Serve ACP's WebSocket and Streamable HTTP transport on HOST:PORT (ws://HOST:PORT/acp, "
    "http://HOST:PORT/acp; port 0: any free port, said on stderr) instead of stdio; needs uvicorn. "
    "The connections are taken in the order they open.",
)
@click.option(
    "--protocol-version",
    type=click.Choice(["1", "2"]),
    default=None,
    help="With --listen: the version served (default: the latest the probe has a package for). "
    "Over stdio the version the client asks for is served.",
)
def probe_agent_command(
    listen: str | None,
    protocol_version: str | None,
    fmt: str,
    findings: str | None,
    timeout: float,
    only: tuple[str, ...],
    expected_failures: str | None,
    packages_dir: str | None,
    unstable: bool,
) -> None:
    """Be the agent a client under test starts, and check the client.

    Configure the client (an editor) to start `acpgen probe-agent` as its
    agent over stdio. The probe serves the version the client's initialize
    asks for and plays one client check per prompt, in order (the first
    prompt the first check, and so on): send as many prompts as there are
    checks (`--only` picks fewer); the checks left when the client closes
    the connection are skipped. The findings go to --findings FILE (or
    stderr), each check as it is known, then the whole report; the exit
    status is as for `acpgen probe`.
    """
    try:
        select_client(only)
    except ValueError as exc:
        fail(str(exc))
    entries = _expected(expected_failures, CLIENT_NAMES)
    if protocol_version is not None and listen is None:
        fail("--protocol-version is for --listen (over stdio the client's initialize chooses)")
    address = _address(listen) if listen is not None else None
    packages = _packages(packages_dir, _names(unstable, protocol_version))
    out = open(findings, "w", encoding="utf-8") if findings is not None else sys.stderr  # noqa: SIM115
    try:

        def progress(result: Any) -> None:
            line = f"{result.status.upper():<5} {result.check.tier:<13} {result.check.name}"
            click.echo(line + (f": {result.reason}" if result.reason else ""), file=out)
            out.flush()

        def listening(port: int) -> None:
            assert address is not None
            where = f"{address[0]}:{port}"
            click.echo(f"acpgen probe-agent: listening on ws://{where}/acp and http://{where}/acp", err=True)

        async def serve() -> Report:
            from importlib import import_module

            if address is not None:
                version = max(packages)
                return await listen_probe_agent(
                    packages,
                    version,
                    host=address[0],
                    port=address[1],
                    timeout=timeout,
                    only=only,
                    on_result=progress,
                    ready=listening,
                )
            newest = packages[max(packages)]
            transport = await import_module(f"{newest.__name__}._connection").open_stdio()
            return await serve_probe_agent(packages, transport, timeout=timeout, only=only, on_result=progress)

        try:
            report = asyncio.run(serve())
        except KeyboardInterrupt:
            sys.exit(130)
        _finish(report, entries, fmt, out)
    finally:
        if out is not sys.stderr:
            out.close()


def _address(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        fail(f"--listen: not HOST:PORT: {listen!r}")
    return host.strip("[]"), int(port)
