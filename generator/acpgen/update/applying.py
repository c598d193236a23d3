"""Applying a :class:`~acpgen.update.planning.Plan`: generate the packages
from the new schemas in a scratch directory, then replace ``schema/`` and
the packages as one transaction."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ..config import Config
from ..errors import AcpgenError
from ..output.trees import Tree
from ..output.write import Writer, check_targets, package_tree, replace_trees
from ..pipeline import build_all
from ..scratch import scratch
from .planning import Plan, under_schema
from .release import SCHEMA_DIR, SOURCE_FILE

SCRATCH_PREFIX = "acpgen-updating-"
"""The scratch directories' prefix (earlier versions, which did not lock
theirs, used ``acpgen-update-``: those are never swept)."""


def build(
    plan_: Plan,
    *,
    generate: bool = True,
    templates: str | Path | None = None,
    warnings: list[str] | None = None,
) -> tuple[dict[str, dict[str, str]], list[Tree]]:
    """Everything :func:`apply` writes, worked out without writing anything
    in the project: the packages generated from the new schemas (with
    ``generate``) and the trees that replace ``schema/`` and the packages.
    A release the configured packages cannot be generated from (a rule set
    that does not fit, a schema the generator refuses) fails here, before
    anything is written; ``acpgen schema update --dry-run`` runs this too."""
    config = plan_.config
    root = config.root
    built: dict[str, dict[str, str]] = {}
    if generate:
        # Generate from the new schemas, staged where the configuration
        # expects them, in a scratch directory outside the project (removed
        # however the run ends, :mod:`acpgen.scratch`).
        with scratch(SCRATCH_PREFIX) as directory:
            stage_root = Path(directory)
            for relative, data in plan_.contents.items():
                staged = stage_root / SCHEMA_DIR / relative
                staged.parent.mkdir(parents=True, exist_ok=True)
                staged.write_bytes(data)
            for target in config.targets:
                if under_schema(target.schema) is None:
                    _copy_outside(root, stage_root, target.schema)
            built = build_all(config.targets, stage_root, templates, warnings=warnings)
    trees = []
    if plan_.changed:
        # The files acpgen manages, on a copy of everything else in schema/.
        schema_dir = root / SCHEMA_DIR
        trees.append(Tree(schema_dir, plan_.writes, guarded=False, keep=schema_dir, drop=frozenset(plan_.removed)))
    trees += [package_tree(config.out_dir, name, files) for name, files in built.items()]
    return built, trees


def targets(config: Config) -> list[tuple[Path, bool]]:
    """What an update replaces, (path, guarded): ``schema/`` and every
    configured package (guarded: only one acpgen generated is replaced)."""
    return [(config.root / SCHEMA_DIR, False)] + [(config.out_dir / t.package, True) for t in config.targets]


def check(
    config: Config, trees: list[Tree], *, overwrite_foreign: bool = False, overwrite_edited: bool = False
) -> None:
    """The refusals a writing run makes before it writes (those of
    :func:`acpgen.output.write.prepared` on the :func:`targets`, then those
    on the built trees), for a run that writes nothing (``--dry-run``): a
    package directory acpgen did not generate, or one edited since, without
    the option that overwrites it."""
    check_targets(
        [Tree(target, {}, guarded) for target, guarded in targets(config)],
        overwrite_foreign=overwrite_foreign,
        overwrite_edited=overwrite_edited,
        built=False,
    )
    check_targets(trees, overwrite_foreign=overwrite_foreign, overwrite_edited=overwrite_edited)


def apply(
    plan_: Plan,
    *,
    generate: bool = True,
    templates: str | Path | None = None,
    warnings: list[str] | None = None,
    overwrite_foreign: bool = False,
    overwrite_edited: bool = False,
    on_wait: Callable[[Path], None] | None = None,
    writer: Writer | None = None,
) -> dict[str, dict[str, str]]:
    """Write the new ``schema/`` and, with ``generate``, the packages; returns
    the packages written, and adds the generator's warnings (and those about
    leftovers of interrupted runs) to ``warnings``.
    ``schema/`` and the packages are replaced as one transaction of
    :mod:`acpgen.output.write`, journaled in the output directory: by ``writer``
    when the plan was made under its lock (:func:`acpgen.output.write.prepared`,
    as ``acpgen schema update`` does), otherwise under a lock taken here."""
    config = plan_.config
    built, trees = build(plan_, generate=generate, templates=templates, warnings=warnings)
    # schema/ and every package, all or nothing.
    if writer is not None:
        writer.replace(trees, overwrite_foreign=overwrite_foreign, overwrite_edited=overwrite_edited)
    else:
        replace_trees(
            config.out_dir,
            trees,
            overwrite_foreign=overwrite_foreign,
            overwrite_edited=overwrite_edited,
            on_wait=on_wait,
            warnings=warnings,
        )
    return built


def _copy_outside(root: Path, stage_root: Path, configured: str) -> None:
    """A target's schema outside ``schema/``, with the SOURCE.json files
    ``schema_version`` would look at, copied into the staging root."""
    if ".." in PurePosixPath(configured.replace("\\", "/")).parts:
        raise AcpgenError(
            f"cannot stage the schema {configured!r} of [tool.acpgen] (it climbs out of the project); "
            "update with --no-generate, then run `acpgen generate`"
        )
    source = root / configured
    if not source.is_file() or Path(configured).is_absolute():
        return
    target = stage_root / configured
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    for up in (source.parent, source.parent.parent):
        record = up / SOURCE_FILE
        if record.is_file():
            copy = stage_root / up.relative_to(root) / SOURCE_FILE
            copy.parent.mkdir(parents=True, exist_ok=True)
            if not copy.exists():
                shutil.copyfile(record, copy)
