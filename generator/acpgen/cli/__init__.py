"""The ``acpgen`` command line, every command in this package:

=========================  ===============  ==========================================
command                    module           what it does
=========================  ===============  ==========================================
``generate``, ``check``    ``generate.py``  write the packages / say whether they are current
``diff``                   ``schema.py``    what changes between two schema files
``schema update``          ``schema.py``    vendor a release into ``schema/`` and regenerate
``conformance``            ``conformance``  check a package against the conformance fixtures
``conformance-fixtures``   ``conformance``  regenerate the generated fixtures
``validate``               ``validate.py``  check a recorded transcript, message by message
``tap``                    ``tap.py``       proxy an agent's stdio, recording and validating live
``probe``                  ``probe.py``     run conformance checks against an agent (or, --client, a client)
``probe-agent``            ``probe.py``     the probe as the agent a client starts: checks the client
``report``                 ``report.py``    a recorded transcript as one HTML page
``replay``                 ``replay.py``    play one side of a recording to a live peer
``explore``                ``replay.py``    one exchange under many delivery schedules
``bridge``                 ``bridge.py``    a translating proxy between a v1 and a v2 peer
``conduct``                ``conduct.py``   run a proxy chain in front of an agent
=========================  ===============  ==========================================

The group loads a command's module only when that command runs, so
``acpgen conformance`` (and ``python -m acpgen.conformance``) import none of
the generator's stages: the conformance suite checks a package against its
own model of the schema, independent of the generator that made it, and
runs where only a generated package and its schema are at hand.
``common.py`` holds what the commands share (error reporting).

Usage errors (a bad option value, a missing argument, an unknown command)
are one line too, ``acpgen: error: ...`` with exit status 2, like every
other error; ``--help`` is click's.
"""

from __future__ import annotations

import importlib
from typing import IO, Any

import click
from click.exceptions import NoArgsIsHelpError

from .. import __version__

COMMANDS = {
    "generate": (".generate", "generate"),
    "check": (".generate", "check"),
    "diff": (".schema", "diff_command"),
    "schema": (".schema", "schema_group"),
    "conformance": (".conformance", "conformance"),
    "conformance-fixtures": (".conformance", "conformance_fixtures"),
    "validate": (".validate", "validate_command"),
    "tap": (".tap", "tap_command"),
    "probe": (".probe", "probe_command"),
    "probe-agent": (".probe", "probe_agent_command"),
    "report": (".report", "report_command"),
    "replay": (".replay", "replay_command"),
    "explore": (".replay", "explore_command"),
    "bridge": (".bridge", "bridge_command"),
    "conduct": (".conduct", "conduct_command"),
}
"""Command name -> (module of this package, attribute)."""


class _UsageError(click.ClickException):
    """A click usage error, shown as one line (``acpgen: error: ...``)
    instead of click's usage block."""

    exit_code = 2

    def __init__(self, error: click.UsageError) -> None:
        message = error.format_message().strip().rstrip(".")
        message = " ".join(message.split())
        ctx = error.ctx
        if ctx is not None:
            message += f" (`{ctx.command_path} --help` shows the usage)"
        super().__init__(message)

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"acpgen: error: {self.message}", err=True)


def _one_line(error: click.UsageError) -> click.ClickException:
    """``error`` as one line, unless it is the help a bare group prints."""
    if isinstance(error, NoArgsIsHelpError):
        return error
    return _UsageError(error)


class _LazyGroup(click.Group):
    """A group whose commands are imported when used, and whose usage
    errors (its own and its commands') are one line."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise _one_line(error) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise _one_line(error) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(module, __name__), attribute)
        return command


@click.group("acpgen", cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="acpgen")
def main() -> None:
    """Generate typed Python packages from the Agent Client Protocol JSON Schema.

    Each package holds dataclasses for every type of the schema, a wire codec
    (decode/encode) with the reference semantics and a strict JSON Schema
    mode, and patch-merge functions for upserts, using the standard library
    only.

    \b
    generate              write the packages of [tool.acpgen] in pyproject.toml,
                          or one package with --schema/--package/--out
    check                 exit 1 naming stale generated files; writes nothing
    diff                  what changes from one schema file to another, and what breaks
    schema update         vendor a release of the schemas into schema/ and regenerate
    conformance           check a generated package against the conformance fixtures
    conformance-fixtures  regenerate the schema-derived conformance fixtures
    validate              check a recorded transcript (JSON-RPC lines) message by message
    tap                   run an agent behind a proxy that records and validates live
    probe                 run conformance checks against an agent: probe -- AGENT COMMAND...,
                          or a client: probe --client -- CLIENT COMMAND... {agent}
    probe-agent           the agent a client starts, checking the client; findings to a file
    report                a recorded transcript as one self-contained HTML page
    replay                play one side of a recording to a live peer: replay T --as agent|client -- CMD...
    explore               one exchange under many delivery schedules; the first that differs
    bridge                a v1 client in front of a v2 agent, or the reverse: bridge --client-protocol v1|v2 -- AGENT...
    conduct               run a proxy chain in front of an agent: conduct -- PROXY... -- AGENT...

    Errors are one line naming the file (and JSON pointer) with exit status 2,
    and nothing is written. acpgen replaces only directories it generated
    (marked by an .acpgen file); run `acpgen COMMAND --help` for details.
    """


__all__ = ["main"]
