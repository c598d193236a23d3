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
=========================  ===============  ==========================================

The group loads a command's module only when that command runs, so
``acpgen conformance`` (and ``python -m acpgen.conformance``) import none of
the generator's stages: the conformance suite checks a package against its
own model of the schema, independent of the generator that made it, and
runs where only a generated package and its schema are at hand.
``common.py`` holds what the commands share (error reporting).
"""

from __future__ import annotations

import importlib

import click

from .. import __version__

COMMANDS = {
    "generate": (".generate", "generate"),
    "check": (".generate", "check"),
    "diff": (".schema", "diff_command"),
    "schema": (".schema", "schema_group"),
    "conformance": (".conformance", "conformance"),
    "conformance-fixtures": (".conformance", "conformance_fixtures"),
    "validate": (".validate", "validate_command"),
}
"""Command name -> (module of this package, attribute)."""


class _LazyGroup(click.Group):
    """A group whose commands are imported when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(module, __name__), attribute)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
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

    Errors are one line naming the file (and JSON pointer) with exit status 2,
    and nothing is written. acpgen replaces only directories it generated
    (marked by an .acpgen file); run `acpgen COMMAND --help` for details.
    """


__all__ = ["main"]
