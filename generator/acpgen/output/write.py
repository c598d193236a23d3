"""Stage 6, write: put generated packages in place, all or nothing, and
never over a directory acpgen did not make.

A run replaces a set of directories (the packages, and for ``acpgen schema
update`` also ``schema/``) as one transaction, under a lock on the output
directory (``.acpgen.lock``, ``fcntl.flock``, :mod:`acpgen.output.lock`): a second run on the same
directory waits for the first to finish, then does its own work. A run
takes the lock and recovers an interrupted run (below) before it reads its
inputs, and builds while it holds the lock (:func:`prepared`): what it
writes is built from what is in place, not from a ``schema/`` an
interrupted run left halfway or another run is about to replace.

Under the lock, a journal (``.acpgen-journal.json`` in the output directory,
:mod:`acpgen.output.journal`) records, before anything is created, every directory
the run will create (``.acpgen-new-<name>-<token>``, the staged trees) or set
aside (``.acpgen-old-<name>-<token>``, the previous trees) and its phase:

1. ``staging``: the new trees are written and fsynced beside their targets;
2. ``swapping``: each target is renamed aside and its staged tree renamed
   onto it;
3. ``committed``: every swap is done; the trees set aside are deleted, then
   the journal.

The lock and the journal are created without following a symbolic link
planted at their names, and such a link stops the run before anything is
written (:mod:`acpgen.output.ownfiles`).

The commit point is the atomic rename that puts the ``committed`` journal in
place. A run that fails before it (the ``committed`` record cannot be
written, say) rolls back at once and says so; a run that cannot even roll
back names what each directory holds and keeps the journal, which the next
run acts on.

A run killed at any point (even with SIGKILL) leaves the journal behind, and
the next run on the directory finishes the job before it starts its own
(:mod:`acpgen.output.recovery`): before ``committed`` it rolls back (the old trees
return, the staged ones are deleted), after it it rolls forward (the trees
set aside are deleted). So once that recovery has run the directory holds
either the complete old set or the complete new set, and no staging
directory the journal names is left. Staging directories no journal accounts
for (journal deleted by hand, or acpgen versions without a journal) are put
back, kept with a warning, or deleted after the commit, as
:mod:`acpgen.output.recovery` says.

A tree may keep what acpgen does not manage in the directory it replaces
(``Tree.keep``, used for ``schema/``): those entries are copied into the
staged tree (:mod:`acpgen.output.staging`) as they are (modes, symbolic links, empty directories), and only
the files the tree names are written.

``ACPGEN_TEST_PAUSE=<phase>`` (``staged``, ``aside`` (the first target set
aside, its new tree not yet in place), ``swap`` or ``committed``) and
``ACPGEN_TEST_PAUSE_FILE=<path>`` make a run create that file at that point
and wait until it is deleted: the tests use it to kill a run mid-swap.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import AcpgenError
from . import manifest
from .journal import (
    JOURNAL_FILE,
    JOURNAL_TEMP,
    NEW_PREFIX,
    OLD_PREFIX,
    directory_digest,
    fsync_dir,
    joined,
    recorded_phase,
)
from .journal import write_journal as _write_journal
from .lock import locked
from .ownfiles import refuse_odd, write_fresh
from .recovery import describe_state, recover, remove_leftovers, settle_leftovers
from .staging import stage_tree
from .trees import Tree

__all__ = [
    "Tree",
    "Writer",
    "check_targets",
    "package_tree",
    "prepared",
    "replace_trees",
    "write_packages",
]

PAUSE_TIMEOUT = 300.0


def package_tree(out_dir: Path, name: str, files: dict[str, str]) -> Tree:
    """The tree of one generated package: its files and its marker."""
    return Tree(out_dir / name, manifest.with_marker(name, {k: v.encode("utf-8") for k, v in files.items()}))


def write_packages(
    out_dir: Path,
    packages: dict[str, dict[str, str]],
    *,
    overwrite_foreign: bool = False,
    overwrite_edited: bool = False,
    on_wait: Callable[[Path], None] | None = None,
    warnings: list[str] | None = None,
) -> None:
    """Replace ``out_dir/<name>`` with the files of each package."""
    trees = [package_tree(out_dir, name, files) for name, files in packages.items()]
    replace_trees(
        out_dir,
        trees,
        overwrite_foreign=overwrite_foreign,
        overwrite_edited=overwrite_edited,
        on_wait=on_wait,
        warnings=warnings,
    )


def replace_trees(
    home: Path,
    trees: list[Tree],
    *,
    overwrite_foreign: bool = False,
    overwrite_edited: bool = False,
    on_wait: Callable[[Path], None] | None = None,
    warnings: list[str] | None = None,
) -> None:
    """Replace every tree's target as one transaction journaled in ``home``;
    what is worth telling about leftovers of interrupted runs is added to
    ``warnings``. For trees built from files a run may be replacing (the
    schemas), build them inside :func:`prepared` instead."""
    with prepared(
        home,
        [(tree.target, tree.guarded) for tree in trees],
        overwrite_foreign=overwrite_foreign,
        overwrite_edited=overwrite_edited,
        on_wait=on_wait,
        warnings=warnings,
    ) as writer:
        writer.replace(trees, overwrite_foreign=overwrite_foreign, overwrite_edited=overwrite_edited)


class Writer:
    """Replaces trees under the lock of ``home``, once the interrupted run
    its journal records is recovered (see :func:`prepared`)."""

    def __init__(self, home: Path, warnings: list[str]) -> None:
        self.home = home
        self.warnings = warnings
        self._settled: set[Path] = set()
        self._doomed: list[Path] = []

    def settle(self, targets: list[tuple[Path, bool]]) -> None:
        """Put back the targets an interrupted run left set aside; note the
        leftovers to delete once this run commits."""
        fresh = [(target, guarded) for target, guarded in targets if target not in self._settled]
        self._doomed += settle_leftovers([Tree(target, {}, guarded) for target, guarded in fresh], self.warnings)
        self._settled.update(target for target, _ in fresh)

    def replace(self, trees: list[Tree], *, overwrite_foreign: bool = False, overwrite_edited: bool = False) -> None:
        """Replace every tree's target as one transaction."""
        self.settle([(tree.target, tree.guarded) for tree in trees])
        check_targets(trees, overwrite_foreign=overwrite_foreign, overwrite_edited=overwrite_edited)
        _Transaction(self.home, trees).run()
        remove_leftovers(self._doomed, self.warnings)
        self._doomed = []


@contextmanager
def prepared(
    home: Path,
    targets: list[tuple[Path, bool]],
    *,
    overwrite_foreign: bool = False,
    overwrite_edited: bool = False,
    on_wait: Callable[[Path], None] | None = None,
    warnings: list[str] | None = None,
) -> Iterator[Writer]:
    """Hold the lock of ``home`` with every target (path, guarded) as a
    complete run left it: the interrupted run the journal records is
    finished or rolled back, and a target such a run left set aside is put
    back. Read the inputs (schema/ among them) and build inside, so that
    what is written is built from what is in place once recovered, and no
    other run changes it meanwhile.

    The targets are checked before the lock is taken (refused without
    creating anything); an output directory this call created is removed
    again when the run fails before writing into it."""
    notes: list[str] = [] if warnings is None else warnings
    check_targets(
        [Tree(target, {}, guarded) for target, guarded in targets],
        overwrite_foreign=overwrite_foreign,
        overwrite_edited=overwrite_edited,
        built=False,
    )
    created = [d for d in (home, *home.parents) if not os.path.lexists(d)]
    try:
        with locked(home, on_wait):
            # A link at acpgen's names stops the run before anything moves.
            refuse_odd(home / JOURNAL_TEMP)
            recover(home)
            writer = Writer(home, notes)
            writer.settle(targets)
            yield writer
    except BaseException:
        for directory in created:
            try:
                os.rmdir(directory)  # only when empty: nothing of anyone is lost
            except OSError:
                break
        raise


def check_targets(trees: list[Tree], *, overwrite_foreign: bool, overwrite_edited: bool, built: bool = True) -> None:
    """Refuse to replace what acpgen did not make, or what was edited since.
    Before the files are ``built`` (the check :func:`prepared` makes), a
    directory without a marker but with acpgen's header lines is let
    through: only the built files tell whether it is exactly what acpgen
    writes (:mod:`acpgen.output.manifest`)."""
    for tree in trees:
        if not tree.guarded:
            continue
        owner = manifest.ownership(tree.target, tree.files if built else None)
        if owner.status == manifest.FOREIGN and not overwrite_foreign:
            raise AcpgenError(
                f"refusing to replace a directory acpgen did not generate ({owner.changed_summary()}); "
                "choose another --out or --package, or pass --overwrite-foreign to delete it and write the package",
                file=os.path.normpath(tree.target),
            )
        if owner.status == manifest.EDITED and not owner.marked and not (overwrite_edited or overwrite_foreign):
            raise AcpgenError(
                f"refusing to replace a directory without a {manifest.MARKER} marker whose files are not what acpgen "
                f"writes now ({owner.changed_summary()}): a copy of a generated package changed by hand, or a package "
                "of an acpgen that wrote no marker; pass --overwrite-edited to replace it and lose those changes",
                file=os.path.normpath(tree.target),
            )
        if owner.status == manifest.EDITED and not (overwrite_edited or overwrite_foreign):
            raise AcpgenError(
                f"refusing to replace a generated package whose files changed since acpgen wrote them "
                f"({owner.changed_summary()}); pass --overwrite-edited to replace it and lose those changes",
                file=os.path.normpath(tree.target),
            )


# ---------------------------------------------------------------- the transaction


def _pause(phase: str) -> None:
    """The test hook of the module docstring."""
    if os.environ.get("ACPGEN_TEST_PAUSE") != phase:
        return
    flag = Path(os.environ["ACPGEN_TEST_PAUSE_FILE"])
    write_fresh(flag, str(os.getpid()).encode("ascii"))
    deadline = time.monotonic() + PAUSE_TIMEOUT
    while flag.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error) or type(error).__name__


class _Transaction:
    def __init__(self, home: Path, trees: list[Tree]) -> None:
        self.home = home
        token = secrets.token_hex(4)
        self.entries: list[dict[str, Any]] = []
        for tree in trees:
            parent, name = tree.target.parent, tree.target.name
            self.entries.append(
                {
                    "target": os.path.relpath(tree.target, home),
                    "stage": os.path.relpath(parent / f"{NEW_PREFIX}{name}-{token}", home),
                    "aside": os.path.relpath(parent / f"{OLD_PREFIX}{name}-{token}", home),
                    "existed": os.path.lexists(tree.target),
                    "digest": "",
                }
            )
        self.trees = trees

    def journal(self, phase: str) -> None:
        _write_journal(self.home, {"acpgen": 1, "pid": os.getpid(), "phase": phase, "entries": self.entries})

    def run(self) -> None:
        self.journal("staging")
        try:
            for tree, entry in zip(self.trees, self.entries, strict=False):
                stage = joined(self.home, entry["stage"])
                stage_tree(stage, tree.files, keep=tree.keep, drop=tree.drop)
                entry["digest"] = directory_digest(stage)
            _pause("staged")
            self.journal("swapping")
            for index, entry in enumerate(self.entries):
                target, stage, aside = (joined(self.home, entry[k]) for k in ("target", "stage", "aside"))
                if entry["existed"]:
                    os.rename(target, aside)
                    if index == 0:
                        _pause("aside")
                os.rename(stage, target)
                fsync_dir(target.parent)
                if index == 0:
                    _pause("swap")
        except BaseException as error:
            # An error or an interrupt we are alive to handle: roll back now.
            self._roll_back(error, "writing the new version failed")
            raise
        pending: BaseException | None = None
        try:
            self.journal("committed")
        except BaseException as error:
            # Past the commit point (only syncing failed), the run is done: an
            # interrupt is raised again once the previous trees are deleted.
            pending = None if isinstance(error, Exception) else error
            if recorded_phase(self.home) != "committed":
                # The commit point was not reached: undo the swaps.
                self._roll_back(error, "could not record that every new version is in place")
                if not isinstance(error, Exception):
                    raise
                raise AcpgenError(
                    f"could not record that every new version is in place ({_reason(error)}); rolled back: "
                    f"{self._targets()} are as they were before this run, and nothing of it is left",
                    file=str(self.home / JOURNAL_FILE),
                ) from error
        _pause("committed")
        try:
            recover(self.home)
        except Exception as error:
            raise AcpgenError(
                f"the new versions of {self._targets()} are in place, but deleting the previous ones failed "
                f"({_reason(error)}); the next acpgen run writing to {self.home} deletes them",
                file=str(self.home / JOURNAL_FILE),
            ) from error
        if pending is not None:
            raise pending

    def _targets(self) -> str:
        return ", ".join(str(joined(self.home, entry["target"])) for entry in self.entries)

    def _roll_back(self, error: BaseException, what: str) -> None:
        """Roll back now; when that fails too, say what the disk holds and
        what the next run does."""
        try:
            recover(self.home)
        except Exception as failure:
            raise AcpgenError(
                f"{what} ({_reason(error)}), and rolling back failed too ({_reason(failure)}): "
                f"{describe_state(self.home)}. {JOURNAL_FILE} keeps the record of this run, so the next acpgen run "
                f"writing to {self.home} (generate or schema update) first puts every previous version back "
                "(`acpgen check` reports the interrupted run meanwhile)",
                file=str(self.home / JOURNAL_FILE),
            ) from failure
