"""``acpgen generate`` and ``acpgen check``: write the generated packages,
or say whether they are current."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click

from ..config import load_config
from ..errors import AcpgenError
from ..output.journal import JOURNAL_FILE
from ..output.lock import waiting_notice
from ..output.manifest import EDITED, FOREIGN, ownership
from ..output.recovery import describe_state, find_leftovers
from ..output.write import package_tree, prepared
from ..pipeline import build_all, build_package, check_package_name, stale_files
from .common import check_out_dir, check_package_target, overwrite_options
from .common import fail as _fail
from .common import warn as _warn


@click.command()
@click.option(
    "--schema",
    "schema",
    type=click.Path(dir_okay=False),
    help="The schema file to generate from (default: every package in [tool.acpgen]): a regular file of at most 64 MiB.",
)
@click.option(
    "--package",
    "package",
    help="The import name of the generated package (with --schema): an identifier that is not a keyword, a "
    "standard-library module, a __name__ of Python's own (__main__) or sitecustomize/usercustomize.",
)
@click.option(
    "--out",
    "out",
    type=click.Path(),
    help="The directory the package directory is written into (with --schema); acpgen creates only its last level, as mkdir does. Not under /proc, /sys or /dev, nor a file system's root or the home directory itself.",
)
@click.option(
    "--templates",
    type=click.Path(file_okay=False),
    help="A directory of templates that replace the built-in ones of the same file name (each receives only its module's view, as the built-in template does; a runtime module's file name replaces that module).",
)
@click.option(
    "--rules",
    "rules",
    help="The patch rule set for --schema: v1, v1_unstable, v2 or v2_unstable (default: the one the schema's methods and **UNSTABLE** markers call for; a set that contradicts them is refused), or none for no patch-merge functions.",
)
@click.option(
    "--config",
    "config",
    type=click.Path(dir_okay=False),
    help="The pyproject.toml to read [tool.acpgen] from (default: the nearest one).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Also print, per package, where lowering fell back: each value kept as JSON (Any) and each definition made an alias because no enum, union or class fits it, with its JSON pointer, what it became and why.",
)
@overwrite_options
def generate(
    schema: str | None,
    package: str | None,
    out: str | None,
    templates: str | None,
    rules: str | None,
    config: str | None,
    explain: bool,
    overwrite_foreign: bool,
    overwrite_edited: bool,
) -> None:
    """Generate packages, replacing the previous output all or nothing.

    With no arguments, regenerates every package listed in the [tool.acpgen]
    table of pyproject.toml. With --schema, --package and --out, generates
    one package, OUT/PACKAGE, from any schema of the ACP shape.

    \b
    Safety:
    - acpgen replaces only a directory it generated: each package holds an
      .acpgen marker with the sha256 of every file written. Any other
      directory is refused (exit 2, nothing touched) unless
      --overwrite-foreign; a generated package whose files changed since is
      refused unless --overwrite-edited.
    - The packages of one run are swapped in together under a lock on the
      output directory (a second run waits for the first), journaled so that
      a run killed midway is rolled back by the next one.

    On any error nothing is written and the exit status is 2.
    """
    started = time.perf_counter()
    warnings: list[str] = []
    fallbacks: dict[str, list[str]] = {}
    out_dir = Path(out or ".")
    try:
        if schema is not None:
            if not package or not out:
                raise AcpgenError("--schema needs --package and --out")
            check_package_name(package, "--package")
            names: list[str] = [package]
        else:
            if package or out or rules:
                raise AcpgenError("--package, --out and --rules go with --schema")
            cfg = load_config(Path(config) if config else None)
            out_dir = cfg.out_dir
            names = [target.package for target in cfg.targets]
        if schema is not None:
            check_out_dir(out_dir, "--out")
        else:
            check_out_dir(out_dir, f"[tool.acpgen] out = {cfg.out!r}", cfg.root)
        for name in names:
            check_package_target(out_dir, name, overwrite_foreign)
        # Build under the lock, once an interrupted run is recovered: the
        # schemas read are the ones in place, and no other run swaps them.
        targets = [(out_dir / name, True) for name in names]
        with prepared(
            out_dir,
            targets,
            overwrite_foreign=overwrite_foreign,
            overwrite_edited=overwrite_edited,
            on_wait=waiting_notice,
            warnings=warnings,
        ) as writer:
            if schema is not None:
                built = {
                    names[0]: build_package(
                        schema, names[0], templates, rules=rules, warnings=warnings, fallbacks=fallbacks
                    )
                }
            else:
                built = build_all(cfg.targets, cfg.root, templates, warnings=warnings, fallbacks=fallbacks)
            writer.replace(
                [package_tree(out_dir, name, files) for name, files in built.items()],
                overwrite_foreign=overwrite_foreign,
                overwrite_edited=overwrite_edited,
            )
    except AcpgenError as error:
        _warn(warnings)
        _fail(error)
    except OSError as error:
        _warn(warnings)
        _fail(AcpgenError(f"cannot write: {error.strerror}", file=error.filename or os.path.normpath(out_dir)))
    _warn(warnings)
    elapsed = time.perf_counter() - started
    for name, files in built.items():
        lines = sum(text.count("\n") for text in files.values())
        click.echo(f"wrote {os.path.normpath(out_dir / name)} ({len(files)} files, {lines} lines)")
    click.echo(f"generated {len(built)} package(s) in {elapsed:.1f}s")
    if explain:
        for name in built:
            report = fallbacks.get(name, [])
            click.echo(f"{name}: {'fallbacks' if report else 'no fallbacks'}")
            for line in report:
                click.echo(f"  {line}")


@click.command()
@click.option("--templates", type=click.Path(file_okay=False), help="Templates to check against, as for generate.")
@click.option(
    "--config", "config", type=click.Path(dir_okay=False), help="The pyproject.toml to read [tool.acpgen] from."
)
def check(templates: str | None, config: str | None) -> None:
    """Check that the generated packages are what generate would write now.

    Writes nothing. Exits 0 when they match, 1 naming every stale file
    (changed, missing or no longer generated) and the packages to
    regenerate (or an interrupted run to recover), 2 on bad input.
    Directories an interrupted run left beside the packages are named in
    a warning.
    """
    try:
        cfg = load_config(Path(config) if config else None)
    except AcpgenError as error:
        _fail(error)
    shown_out = Path(os.path.normpath(cfg.out))
    if (cfg.out_dir / JOURNAL_FILE).exists():
        # Before reading anything: the schemas and packages may be halfway
        # through a swap (schema/ even missing), and only a writing run
        # recovers them.
        click.echo(
            f"interrupted: {shown_out / JOURNAL_FILE} records a run that did not finish: {describe_state(cfg.out_dir)}; "
            "`acpgen generate` (or `acpgen schema update`) first rolls it back or completes it, then writes the packages"
        )
        sys.exit(1)
    try:
        built = build_all(cfg.targets, cfg.root, templates)
    except AcpgenError as error:
        _fail(error)
    stale = stale_files(built, cfg.out_dir)
    _warn(
        [
            f"{shown_out / leftover.path.name} was left by an interrupted acpgen run "
            f"({'a copy of' if leftover.kind == 'old' else 'a staged new'} {shown_out / name}); "
            "`acpgen generate` deletes it when it repeats what is in place, and otherwise says what to do"
            for name in sorted(built)
            for leftover in find_leftovers(cfg.out_dir / name, True)
        ]
    )
    if stale:
        packages = sorted({name.split("/", 1)[0] for name in stale})
        for name in stale:
            click.echo(f"stale: {shown_out / name}")
        # What generate will say of each: an edited or foreign package is
        # refused without the flag that overwrites it.
        flags: list[str] = []
        for package in packages:
            owner = ownership(cfg.out_dir / package)
            if owner.status == EDITED:
                flags.append("--overwrite-edited")
                click.echo(
                    f"edited: {shown_out / package}: files changed since acpgen wrote them ({owner.changed_summary()}); "
                    "`acpgen generate` refuses to overwrite them: keep what you need elsewhere (your own "
                    "--templates, or code beside the package), then `acpgen generate --overwrite-edited` discards them"
                )
            elif owner.status == FOREIGN:
                flags.append("--overwrite-foreign")
                click.echo(
                    f"not generated: {shown_out / package}: acpgen did not make it ({owner.changed_summary()}); "
                    "`acpgen generate` refuses to replace it: move it out, or `acpgen generate --overwrite-foreign` "
                    "deletes it"
                )
        run = " ".join(["acpgen generate", *sorted(set(flags))])
        click.echo(f"{len(packages)} package(s) out of date: {', '.join(packages)}; run `{run}`")
        sys.exit(1)
    click.echo(f"{len(built)} package(s) up to date")
