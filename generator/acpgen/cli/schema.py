"""``acpgen diff`` and ``acpgen schema update``: schema bumps."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click

from ..config import load_config
from ..diff import RENDERERS, SchemaDiff, diff_files, headline, render_markdown
from ..errors import AcpgenError
from ..scratch import scratch
from ..update import Plan, apply, known_names, npm_pack, plan, read_source
from ..output.recovery import describe_state
from ..update.release import SCHEMA_DIR
from ..output.journal import JOURNAL_FILE
from ..output.lock import waiting_notice
from ..output.write import prepared
from .common import fail as _fail
from .common import warn as _warn
from .common import overwrite_options


BREAKING_SHOWN = 15
"""How many breaking changes ``schema update`` lists per file."""


@click.command("diff")
@click.argument("old", type=click.Path())
@click.argument("new", type=click.Path())
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(RENDERERS)),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a changelog or pull request, json for tools.",
)
@click.option("--fail-on-breaking", is_flag=True, help="Exit with status 1 when any change breaks the wire or the Python API.")
def diff_command(old: str, new: str, fmt: str, fail_on_breaking: bool) -> None:
    """Show what changes from the schema file OLD to the schema file NEW.

    Lists the types, fields, union variants, enum values, defaults,
    x-deserialize-* keywords, methods and message forms added, removed or
    changed, each classified, with its reason, as breaking or not for a peer
    on the wire (one built on the old schema talking to one built on the new)
    and for Python code written against the generated package.

    Exit status: 0; 1 with --fail-on-breaking when anything breaks; 2 on bad
    input.
    """
    try:
        result = diff_files(old, new)
    except AcpgenError as error:
        _fail(error)
    click.echo(RENDERERS[fmt](result), nl=False)
    if fail_on_breaking and result.breaking:
        sys.exit(1)


@click.group("schema")
def schema_group() -> None:
    """Manage the vendored schemas in schema/."""


@schema_group.command("update")
@click.option("--from", "source", type=click.Path(), help="An npm tarball of @agentclientprotocol/sdk (.tgz), an unpacked package directory, or one schema file.")
@click.option("--npm", "npm_version", metavar="VERSION", help="Fetch @agentclientprotocol/sdk@VERSION with `npm pack` instead of --from.")
@click.option("--as", "as_name", metavar="NAME", help="With a single schema file: the vendored file it replaces, e.g. v2/schema.unstable.json.")
@click.option("--config", "config", type=click.Path(dir_okay=False), help="The pyproject.toml with [tool.acpgen] (default: the nearest one); schema/ is beside it.")
@click.option("--no-generate", is_flag=True, help="Update schema/ only; `acpgen check` then names the stale packages.")
@click.option("--dry-run", is_flag=True, help="Check the source and show the changes; write nothing.")
@click.option("--report", type=click.Path(dir_okay=False), help="Also write the full changes of every changed file to this file, as Markdown.")
@click.option("--templates", type=click.Path(file_okay=False), help="Templates to generate with, as for generate.")
@overwrite_options
def update_command(
    source: str | Path | None,
    npm_version: str | None,
    as_name: str | None,
    config: str | None,
    no_generate: bool,
    dry_run: bool,
    report: str | None,
    templates: str | None,
    overwrite_foreign: bool,
    overwrite_edited: bool,
) -> None:
    """Vendor a release of the ACP schemas and regenerate.

    Copies the schema files and LICENSE of the release into schema/, records
    the package, version and sha256 of each file in schema/SOURCE.json,
    prints a summary of the changes to each schema file, and regenerates the
    configured packages (unless --no-generate). Nothing is written unless
    everything succeeds: schema/ and the packages are swapped in together,
    under the same lock and journal as generate (a killed run is rolled back
    by the next one), and only over packages acpgen generated. A tarball or
    directory is read with limits: no links, devices or paths leaving it,
    and capped sizes. Exit status 0, or 2 on bad input.
    """
    started = time.perf_counter()
    warnings: list[str] = []
    try:
        if (source is None) == (npm_version is None):
            raise AcpgenError("name the release with exactly one of --from PATH and --npm VERSION")
        cfg = load_config(Path(config) if config else None)
        with scratch("acpgen-npm-pack-") as npm_scratch:  # removed however the run ends
            if npm_version is not None:
                if as_name:
                    raise AcpgenError("--as goes with a single schema file given to --from")
                click.echo(f"npm pack @agentclientprotocol/sdk@{npm_version}")
                source = npm_pack(npm_version, Path(npm_scratch))
            assert source is not None  # exactly one of --from and --npm, checked above
            if dry_run:
                _refuse_interrupted(cfg.out_dir)
                the_plan = plan(cfg, read_source(source, as_name=as_name, known=known_names(cfg)))
                _show(the_plan, report)
                click.echo("dry run: nothing written")
                return
            # Read schema/ under the lock, once an interrupted run is
            # recovered, and hold the lock until everything is written: what
            # is compared and generated is what is in place, and no other
            # run changes it meanwhile.
            targets = [(cfg.root / SCHEMA_DIR, False)] + [(cfg.out_dir / t.package, True) for t in cfg.targets]
            with prepared(
                cfg.out_dir,
                targets,
                overwrite_foreign=overwrite_foreign,
                overwrite_edited=overwrite_edited,
                on_wait=waiting_notice,
                warnings=warnings,
            ) as writer:
                the_plan = plan(cfg, read_source(source, as_name=as_name, known=known_names(cfg)))
                _show(the_plan, report)
                changed = the_plan.changed
                if not changed:
                    click.echo("schema/ is already up to date")
                    if no_generate:
                        _warn(warnings)
                        return
                built = apply(
                    the_plan,
                    generate=not no_generate,
                    templates=templates,
                    warnings=warnings,
                    overwrite_foreign=overwrite_foreign,
                    overwrite_edited=overwrite_edited,
                    writer=writer,
                )
    except AcpgenError as error:
        _warn(warnings)
        _fail(error)
    except OSError as error:
        _warn(warnings)
        _fail(AcpgenError(f"cannot write the update: {error}"))
    _warn(warnings)
    if changed:
        click.echo(f"updated schema/ (SOURCE.json{', LICENSE' if the_plan.release.license else ''})")
    if no_generate:
        click.echo("generated packages left as they were: run `acpgen generate` (`acpgen check` names the stale ones)")
        return
    for name, files in built.items():
        lines = sum(text.count("\n") for text in files.values())
        click.echo(f"wrote {Path(os.path.normpath(cfg.out)) / name} ({len(files)} files, {lines} lines)")
    click.echo(f"generated {len(built)} package(s) in {time.perf_counter() - started:.1f}s")


def _refuse_interrupted(out_dir: Path) -> None:
    """A dry run writes nothing, so it cannot recover an interrupted run,
    and schema/ may be halfway through its swap."""
    if (out_dir / JOURNAL_FILE).exists():
        raise AcpgenError(
            f"an interrupted acpgen run did not finish ({describe_state(out_dir)}), so schema/ may hold neither "
            "what it held before that run nor what the run wrote; a dry run writes nothing, so it does not recover: "
            "`acpgen generate` (or this command without --dry-run) first rolls the run back or completes it",
            file=os.path.normpath(out_dir / JOURNAL_FILE),
        )


def _show(the_plan: Plan, report: str | None) -> None:
    _print_plan(the_plan)
    if report:
        _write_report(Path(report), the_plan)


def _print_plan(the_plan: Plan) -> None:
    release = the_plan.release
    if release.single:
        click.echo(f"{release.origin} (a single schema file)")
    else:
        before = the_plan.old_version or "unknown"
        click.echo(f"{release.name or 'package'} {before} -> {release.version} (from {release.origin})")
    for change in the_plan.files:
        if change.diff is None:
            click.echo(f"  {change.name}: {change.status}" + (f": {change.note}" if change.note else ""))
            continue
        diff: SchemaDiff = change.diff
        click.echo(f"  {change.name}: {headline(diff)}")
        breaking = diff.breaking
        for item in breaking[:BREAKING_SHOWN]:
            tags = "+".join(n for n, i in (("wire", item.wire), ("api", item.api)) if i.breaking)
            click.echo(f"    breaking [{tags}] {item.kind} {item.path}: {item.summary}")
        if len(breaking) > BREAKING_SHOWN:
            click.echo(
                f"    ... and {len(breaking) - BREAKING_SHOWN} more breaking changes "
                "(--report FILE writes every change with its reasons)"
            )


def _write_report(path: Path, the_plan: Plan) -> None:
    parts = []
    for change in the_plan.files:
        if change.diff is not None:
            parts.append(render_markdown(change.diff, title=change.name))
        else:
            parts.append(f"### `{change.name}`: {change.status}\n" + (f"\n{change.note}\n" if change.note else ""))
    try:
        path.write_text("\n".join(parts), encoding="utf-8")
    except OSError as exc:
        raise AcpgenError(f"cannot write the report: {exc.strerror}", file=str(path)) from None
