"""``acpgen diff`` and ``acpgen schema update``: schema bumps."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import NoReturn

import click

from ..config import load_config
from ..diff import RENDERERS, SchemaDiff, diff_files, headline, render_markdown
from ..diff.usage import find_uses
from ..errors import AcpgenError
from ..output.journal import JOURNAL_FILE
from ..output.lock import waiting_notice
from ..output.recovery import describe_state
from ..output.write import prepared
from ..scratch import scratch
from ..update import Plan, apply, build, check, known_names, npm_pack, plan, read_source, targets
from ..update.planning import FileChange
from .common import check_out_dir, overwrite_options
from .common import fail as _fail
from .common import warn as _warn

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
@click.option(
    "--fail-on-breaking", is_flag=True, help="Exit with status 1 when any change breaks the wire or the Python API."
)
@click.option(
    "--code",
    "code",
    type=click.Path(),
    metavar="DIR",
    help="Also list the lines of the Python code under DIR that use a class, attribute or enum member the change removes or changes (file:line: name — what changed).",
)
def diff_command(old: str, new: str, fmt: str, fail_on_breaking: bool, code: str | None) -> None:
    """Show what changes from the schema file OLD to the schema file NEW.

    Lists the types, fields, union variants, enum values, defaults,
    x-deserialize-* keywords, methods and message forms added, removed or
    changed, each classified, with its reason, as breaking or not for a peer
    on the wire (one built on the old schema talking to one built on the new)
    and for Python code written against the generated package.

    With --code DIR, the Python files under DIR (generated packages and
    virtual environments left out) are scanned for the names the breaking
    changes concern: classes wherever they appear, attributes and enum
    members by name (x.attribute, keyword=...) in files that use a class of
    the old package. Nothing is imported or run.

    Exit status: 0; 1 with --fail-on-breaking when anything breaks; 2 on bad
    input.
    """
    warnings: list[str] = []
    try:
        result = diff_files(old, new)
        uses = find_uses(result, code, warnings) if code is not None else None
    except AcpgenError as error:
        _fail(error)
    _warn(warnings)
    if uses is None:
        click.echo(RENDERERS[fmt](result), nl=False)
    elif fmt == "json":
        data = result.to_json()
        data["code"] = {"directory": code, "uses": [use.to_json() for use in uses]}
        click.echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False))
    else:
        click.echo(RENDERERS[fmt](result), nl=False)
        shown = os.path.normpath(code or ".")
        if fmt == "markdown":
            click.echo(f"\n#### Uses in `{shown}` ({len(uses)})\n")
            for use in uses:
                click.echo(f"- `{use.file}:{use.line}` `{use.name}`: {'; '.join(use.reasons)}")
            if not uses:
                click.echo("None of the changed names is used.")
        else:
            click.echo(f"\nuses in {shown}: {len(uses)}" + ("" if uses else " (none of the changed names is used)"))
            for use in uses:
                click.echo(f"  {use}")
    if fail_on_breaking and result.breaking:
        sys.exit(1)


@click.group("schema")
def schema_group() -> None:
    """Manage the vendored schemas in schema/."""


@schema_group.command("update")
@click.option(
    "--from",
    "source",
    type=click.Path(),
    help="An npm tarball of @agentclientprotocol/sdk (.tgz), an unpacked package directory, or one schema file.",
)
@click.option(
    "--npm",
    "npm_version",
    metavar="VERSION",
    help="Fetch @agentclientprotocol/sdk@VERSION with `npm pack` instead of --from.",
)
@click.option(
    "--as",
    "as_name",
    metavar="NAME",
    help="With a single schema file: the vendored file it replaces, e.g. v2/schema.unstable.json.",
)
@click.option(
    "--config",
    "config",
    type=click.Path(dir_okay=False),
    help="The pyproject.toml with [tool.acpgen] (default: the nearest one); schema/ is beside it.",
)
@click.option("--no-generate", is_flag=True, help="Update schema/ only; `acpgen check` then names the stale packages.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show the changes and make every check the update makes before it writes: the release read and "
    "checked, the packages generated from it (in a scratch directory; not with --no-generate) and the package "
    "directories it would replace (--overwrite-foreign, --overwrite-edited); write nothing. A release the "
    "update refuses is refused the same way (exit 2).",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False),
    help="Also write the full changes of every changed file to this file, as Markdown.",
)
@click.option("--templates", type=click.Path(file_okay=False), help="Templates to generate with, as for generate.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Show (and with --fail-on-breaking, count) the changes of every schema file of the release, not only of those [tool.acpgen] generates packages from.",
)
@click.option(
    "--fail-on-breaking",
    is_flag=True,
    help="Write nothing and exit with status 1 when a change breaks the wire or the Python API.",
)
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
    show_all: bool,
    fail_on_breaking: bool,
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
    and capped sizes.

    The summary covers the schema files the project generates packages from
    ([tool.acpgen]); --all adds the release's other files (which are
    vendored all the same).

    Exit status 0; 1 with --fail-on-breaking when a change breaks (nothing
    is written); 2 on bad input.
    """
    started = time.perf_counter()
    warnings: list[str] = []
    try:
        if (source is None) == (npm_version is None):
            raise AcpgenError("name the release with exactly one of --from PATH and --npm VERSION")
        cfg = load_config(Path(config) if config else None)
        check_out_dir(cfg.out_dir, f"[tool.acpgen] out = {cfg.out!r}", cfg.root)
        # The npm tarball's directory, only for --npm: removed however the run ends.
        with scratch("acpgen-npm-pack-") if npm_version is not None else contextlib.nullcontext("") as npm_scratch:
            if npm_version is not None:
                if as_name:
                    raise AcpgenError("--as goes with a single schema file given to --from")
                click.echo(f"npm pack @agentclientprotocol/sdk@{npm_version}")
                source = npm_pack(npm_version, Path(npm_scratch))
            assert source is not None  # exactly one of --from and --npm, checked above
            if dry_run:
                _refuse_interrupted(cfg.out_dir)
                the_plan = plan(cfg, read_source(source, as_name=as_name, known=known_names(cfg)), every_diff=show_all)
                _show(the_plan, report, show_all)
                if fail_on_breaking and _breaking(the_plan, show_all):
                    _refuse_breaking(the_plan, show_all)
                # What the writing run does before it writes, writing nothing:
                # generate the packages (in a scratch directory) and refuse
                # what it would refuse to replace.
                built, trees = build(the_plan, generate=not no_generate, templates=templates, warnings=warnings)
                check(cfg, trees, overwrite_foreign=overwrite_foreign, overwrite_edited=overwrite_edited)
                _warn(warnings)
                if built:
                    click.echo(f"the {len(built)} package(s) generate from the new schemas")
                click.echo("dry run: nothing written")
                return
            # Read schema/ under the lock, once an interrupted run is
            # recovered, and hold the lock until everything is written: what
            # is compared and generated is what is in place, and no other
            # run changes it meanwhile.
            with prepared(
                cfg.out_dir,
                targets(cfg),
                overwrite_foreign=overwrite_foreign,
                overwrite_edited=overwrite_edited,
                on_wait=waiting_notice,
                warnings=warnings,
            ) as writer:
                the_plan = plan(cfg, read_source(source, as_name=as_name, known=known_names(cfg)), every_diff=show_all)
                _show(the_plan, report, show_all)
                refused = fail_on_breaking and _breaking(the_plan, show_all)
                if refused:
                    _warn(warnings)
                    _refuse_breaking(the_plan, show_all)
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


def _shown(the_plan: Plan, show_all: bool) -> list[FileChange]:
    """The files the summary covers: those the project generates from, or all."""
    return [change for change in the_plan.files if show_all or change.generated]


def _breaking(the_plan: Plan, show_all: bool) -> int:
    return sum(len(change.diff.breaking) for change in _shown(the_plan, show_all) if change.diff is not None)


def _refuse_breaking(the_plan: Plan, show_all: bool) -> NoReturn:
    """``--fail-on-breaking``: say so and exit 1, before anything is written
    (inside the lock, nothing has been replaced yet)."""
    count = _breaking(the_plan, show_all)
    files = [c.name for c in _shown(the_plan, show_all) if c.diff is not None and c.diff.breaking]
    click.echo(
        f"{count} breaking change{'s' if count != 1 else ''} ({', '.join(files)}): nothing written (--fail-on-breaking)",
        err=True,
    )
    sys.exit(1)


def _show(the_plan: Plan, report: str | None, show_all: bool) -> None:
    _print_plan(the_plan, show_all)
    if report:
        _write_report(Path(report), the_plan, show_all)


def _print_plan(the_plan: Plan, show_all: bool) -> None:
    release = the_plan.release
    if release.single:
        click.echo(f"{release.origin} (a single schema file)")
    else:
        before = the_plan.old_version or "unknown"
        click.echo(f"{release.name or 'package'} {before} -> {release.version} (from {release.origin})")
    for change in _shown(the_plan, show_all):
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
    others = [change for change in the_plan.files if not (show_all or change.generated)]
    if others:
        changed = [c.name for c in others if c.status != "unchanged"]
        click.echo(
            f"  and {len(others)} file(s) no package is generated from, vendored as they are"
            + (f" ({', '.join(changed)} changed)" if changed else "")
            + "; --all shows their changes"
        )


def _write_report(path: Path, the_plan: Plan, show_all: bool) -> None:
    parts = []
    for change in _shown(the_plan, show_all):
        if change.diff is not None:
            parts.append(render_markdown(change.diff, title=change.name))
        else:
            parts.append(f"### `{change.name}`: {change.status}\n" + (f"\n{change.note}\n" if change.note else ""))
    try:
        path.write_text("\n".join(parts), encoding="utf-8")
    except OSError as exc:
        raise AcpgenError(f"cannot write the report: {exc.strerror}", file=str(path)) from None
