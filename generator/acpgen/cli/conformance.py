"""``acpgen conformance`` and ``acpgen conformance-fixtures``.

This module imports nothing of the generator (see the package docstring):
``python -m acpgen.conformance`` runs the same command."""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from pathlib import Path

import click

from ..conformance.loader import (
    ConformanceError,
    fixtures_for,
    fixtures_on_the_fly,
    import_package,
    package_dir,
    schema_for,
)


@click.command("conformance")
@click.option(
    "--package",
    "packages",
    required=True,
    multiple=True,
    metavar="PATH_OR_NAME",
    help="The generated package: its directory, a directory holding it, or an importable name. "
    "Repeat to check several packages in one run.",
)
@click.option(
    "--schema",
    "schema",
    type=click.Path(dir_okay=False),
    help="The schema to check against (default: the one the package records: SCHEMA_FILE, relative to the "
    "working directory or the project, when its sha256 is SCHEMA_SHA256; else the vendored schema with that "
    "sha256).",
)
@click.option(
    "--fixtures",
    "fixtures",
    type=click.Path(file_okay=False),
    help="The fixtures directory (default: tests/fixtures/conformance/<schema key> of the project around the "
    "working directory; without one, the fixtures are generated from the schema for the run, with the "
    "hand-written ones acpgen ships for it).",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="NAME",
    help="Check only NAME (repeatable): a $defs definition (its fixtures, hostile inputs, patch fixtures and "
    "laws, coverage targets) or a method such as session/prompt (its message fixtures, method-table row and "
    "message coverage, with the JSON-RPC envelope fixtures of no method). A name the schema does not have is an error (exit 2).",
)
@click.option("-q", "--quiet", is_flag=True, help="List only the definitions with failures.")
@click.option("-v", "--verbose", is_flag=True, help="Also list every known failure with its reason.")
def conformance(
    packages: tuple[str, ...],
    schema: str | None,
    fixtures: str | None,
    only: tuple[str, ...],
    quiet: bool,
    verbose: bool,
) -> None:
    """Check a generated package against the conformance fixtures.

    Runs every fixture of the schema through the package's public API
    (decode, encode, apply, ValidationError): strict decoding must accept
    exactly what jsonschema accepts, lenient decoding must give the expected
    wire form, decode/encode must round-trip, invalid input must fail at the
    expected path, the patch laws must hold, and the fixtures must cover every
    definition, union variant, enum value and lenient field of the schema.
    The method table (METHODS) must match the schema's x-method/x-side, and
    whole JSON-RPC messages must decode (decode_message, decode_result).
    Prints a summary per definition and ends with `N passed, M failed`;
    exits 1 on any failure, 2 on bad arguments. --only limits the run to
    some definitions and methods (to rerun what failed, quickly).

    The fixtures: --fixtures, else tests/fixtures/conformance/<schema key> of
    the project around the working directory (this checkout's committed
    ones); where there are none (a package vendored in another project, an
    installed acpgen), they are generated from the schema for the run, as
    `acpgen conformance-fixtures` would, together with the hand-written ones
    (patch fixtures among them) that acpgen ships for the schemas it vendors.
    """
    started = time.perf_counter()
    if len(packages) > 1 and (schema or fixtures):
        click.echo("acpgen: error: --schema and --fixtures go with a single --package", err=True)
        sys.exit(2)
    with ExitStack() as stack:
        _run(stack, packages, schema, fixtures, frozenset(only) or None, quiet, verbose, started)


def _run(
    stack: ExitStack,
    packages: tuple[str, ...],
    schema: str | None,
    fixtures: str | None,
    only: frozenset[str] | None,
    quiet: bool,
    verbose: bool,
    started: float,
) -> None:
    import json

    from ..conformance.runner import Runner, summary_lines, unknown_names

    runs = []
    try:
        for package in packages:
            directory = package_dir(package)
            module = import_package(directory)
            schema_path = schema_for(module, schema)
            if only is not None:
                unknown = unknown_names(json.loads(schema_path.read_text(encoding="utf-8")), only)
                if unknown:
                    raise ConformanceError(
                        f"--only {', '.join(unknown)}: {schema_path} has no definition or method of that name"
                    )
            fixtures_dir, label = fixtures_for(schema_path, fixtures), None
            if fixtures_dir is None:
                # Only here: a check with fixtures at hand loads nothing
                # of acpgen beyond the conformance modules.
                from ..scratch import scratch

                fixtures_dir = Path(stack.enter_context(scratch("acpgen-fixtures-")))
                label = fixtures_on_the_fly(schema_path, fixtures_dir)
            runs.append((directory, module, schema_path, fixtures_dir, label))
    except ConformanceError as error:
        click.echo(f"acpgen: error: {error}", err=True)
        sys.exit(2)
    passed = failed = 0
    for directory, module, schema_path, fixtures_dir, label in runs:
        package_started = time.perf_counter()
        report = Runner(module, f"{directory.name} ({directory})", schema_path, fixtures_dir, label, only).run()
        lines = summary_lines(report, quiet=quiet, verbose=verbose)
        for line in lines[:-1]:
            click.echo(line)
        seconds = time.perf_counter() - package_started
        click.echo(f"{directory.name}: {lines[-1]} in {seconds:.1f}s" if len(runs) > 1 else f"ran in {seconds:.1f}s")
        passed += report.passed
        failed += report.failed
    if len(runs) > 1:
        click.echo(f"{len(runs)} packages in {time.perf_counter() - started:.1f}s")
    click.echo(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


@click.command("conformance-fixtures")
@click.option(
    "--schema",
    "schemas",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="A schema to generate fixtures for (repeatable; default: the four vendored schemas).",
)
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False),
    help="The fixtures directory (default: tests/fixtures/conformance/<schema key>; with one --schema only).",
)
@click.option("--seed", default=None, help="The seed of the generator (default: the committed one).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if the committed fixtures are stale.")
def conformance_fixtures(schemas: tuple[str, ...], out: str | None, seed: str | None, check: bool) -> None:
    """Regenerate the generated conformance fixtures from the schema.

    Writes <fixtures>/manifest.json, <fixtures>/generated/<Def>.json and the
    JSON-RPC message fixtures <fixtures>/messages.json (deterministic, seeded),
    keeping the known_failures lists of the files
    it rewrites; hand-written fixtures are left alone.
    """
    from ..conformance import fixturegen
    from ..conformance.loader import FIXTURES_ROOT, PROJECT_ROOT

    if not schemas:
        schemas = tuple(
            str(PROJECT_ROOT / "schema" / s)
            for s in (
                "v1/schema.json",
                "v1/schema.unstable.json",
                "v2/schema.json",
                "v2/schema.unstable.json",
            )
        )
    if out and len(schemas) != 1:
        click.echo("acpgen: error: --out goes with exactly one --schema", err=True)
        sys.exit(2)
    jobs: list[tuple[str, str, str | None]] = []
    targets: list[Path] = []
    for schema in schemas:
        path = Path(schema)
        if not path.is_file():
            click.echo(f"acpgen: error: --schema {schema}: no such file", err=True)
            sys.exit(2)
        target = Path(out) if out else FIXTURES_ROOT / fixturegen.schema_key(path)
        try:
            display = path.resolve().relative_to(PROJECT_ROOT).as_posix()
        except ValueError:
            display = path.as_posix()
        jobs.append((str(path), seed or fixturegen.committed_seed(target), display))
        targets.append(target)
    started = time.perf_counter()
    results = fixturegen.generate_many(jobs)
    elapsed = time.perf_counter() - started
    stale = []
    for target, files in zip(targets, results, strict=False):
        if check:
            changed = fixturegen.stale(target, files)
            stale += changed
            for name in changed:
                click.echo(f"stale: {name}")
            continue
        changed = fixturegen.write(target, files)
        counts = files["manifest.json"]["counts"]
        click.echo(
            f"wrote {target} ({sum(1 for name in files if name.startswith('generated/'))} definitions, "
            f"{counts['valid'] + counts['invalid'] + counts['lenient']} cases: "
            f"{counts['valid']} valid, {counts['invalid']} invalid, {counts['lenient']} lenient; "
            f"{counts.get('messages', 0)} messages; {len(changed)} file(s) changed)"
        )
    click.echo(f"generated the fixtures of {len(jobs)} schema(s) in {elapsed:.1f}s")
    if check:
        if stale:
            click.echo(f"{len(stale)} fixture file(s) out of date; run `make fixtures`")
            sys.exit(1)
        click.echo("conformance fixtures up to date")
