"""The ``acpgen`` command line."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from . import __version__
from .config import Target, load_config
from .errors import AcpgenError
from .pipeline import build_all, build_package, stale_files
from .write import write_packages


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        click.echo(f"acpgen: warning: {warning}", err=True)


def _fail(error: AcpgenError) -> None:
    click.echo(f"acpgen: error: {error}", err=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="acpgen")
def main() -> None:
    """Generate typed Python packages from the Agent Client Protocol JSON Schema.

    Each package holds dataclasses for every type of the schema, a wire codec
    (decode/encode) with the reference semantics and a strict JSON Schema
    mode, and patch-merge functions for upserts, using the standard library
    only. Run `acpgen generate` in a project whose pyproject.toml has a
    [tool.acpgen] table, or name one schema with --schema; `acpgen check`
    says whether the committed output is current, `acpgen conformance`
    checks a package against the conformance fixtures, and `acpgen diff` /
    `acpgen schema update` handle schema bumps.
    """


@main.command()
@click.option("--schema", "schema", type=click.Path(dir_okay=False), help="The schema file to generate from (default: every package in [tool.acpgen]).")
@click.option("--package", "package", help="The import name of the generated package (with --schema).")
@click.option("--out", "out", type=click.Path(file_okay=False), help="The directory the package directory is written into (with --schema).")
@click.option("--templates", type=click.Path(file_okay=False), help="A directory of templates that replace the built-in ones of the same file name.")
@click.option("--rules", "rules", help="The patch rule set for --schema (v1, v1_unstable, v2, v2_unstable): generates the patch-merge functions.")
@click.option("--config", "config", type=click.Path(dir_okay=False), help="The pyproject.toml to read [tool.acpgen] from (default: the nearest one).")
def generate(schema, package, out, templates, rules, config) -> None:
    """Generate packages, replacing the previous output atomically.

    With no arguments, regenerates every package listed in the [tool.acpgen]
    table of pyproject.toml. With --schema, --package and --out, generates
    one package from any schema of the ACP shape. On any error nothing is
    written and the exit status is 2.
    """
    started = time.perf_counter()
    warnings: list[str] = []
    try:
        if schema is not None:
            if not package or not out:
                raise AcpgenError("--schema needs --package and --out")
            built = {package: build_package(schema, package, templates, rules=rules, warnings=warnings)}
            out_dir = Path(out)
        else:
            if package or out or rules:
                raise AcpgenError("--package, --out and --rules go with --schema")
            cfg = load_config(Path(config) if config else None)
            built = build_all(cfg.targets, cfg.root, templates, warnings=warnings)
            out_dir = cfg.out_dir
        write_packages(out_dir, built)
    except AcpgenError as error:
        _fail(error)
    except OSError as error:
        _fail(AcpgenError(f"cannot write: {error.strerror}", file=error.filename or str(out_dir)))
    _warn(warnings)
    elapsed = time.perf_counter() - started
    for name, files in built.items():
        lines = sum(text.count("\n") for text in files.values())
        click.echo(f"wrote {out_dir / name} ({len(files)} files, {lines} lines)")
    click.echo(f"generated {len(built)} package(s) in {elapsed:.1f}s")


@main.command()
@click.option("--templates", type=click.Path(file_okay=False), help="Templates to check against, as for generate.")
@click.option("--config", "config", type=click.Path(dir_okay=False), help="The pyproject.toml to read [tool.acpgen] from.")
def check(templates, config) -> None:
    """Check that the generated packages are what generate would write now.

    Writes nothing. Exits 0 when they match, 1 naming every stale file
    (changed, missing or no longer generated) and the packages to
    regenerate, 2 on bad input.
    """
    try:
        cfg = load_config(Path(config) if config else None)
        built = build_all(cfg.targets, cfg.root, templates)
    except AcpgenError as error:
        _fail(error)
    stale = stale_files(built, cfg.out_dir)
    if stale:
        packages = sorted({name.split("/", 1)[0] for name in stale})
        for name in stale:
            click.echo(f"stale: {Path(cfg.out) / name}")
        click.echo(f"{len(packages)} package(s) out of date: {', '.join(packages)}; run `acpgen generate`")
        sys.exit(1)
    click.echo(f"{len(built)} package(s) up to date")


__all__ = ["main", "Target"]
# acpgen diff, acpgen schema update
from .cli_schema import register as _register_schema_commands  # noqa: E402

_register_schema_commands(main)
# acpgen conformance, acpgen conformance-fixtures
from .conformance.cli import register as _register_conformance_commands  # noqa: E402

_register_conformance_commands(main)
# acpgen validate
from .validate.cli import register as _register_validate_command  # noqa: E402

_register_validate_command(main)
