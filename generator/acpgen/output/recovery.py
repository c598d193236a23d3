"""Recovery of interrupted runs of :mod:`acpgen.output.write`, and of the
directories they leave beside the targets.

:func:`recover` finishes or rolls back the run the journal records. Then,
before a run swaps anything, :func:`settle_leftovers` looks beside each
target for the staging directories no journal accounts for any more:
``.acpgen-new-<name>-<token>`` and ``.acpgen-old-<name>-<token>`` (left when
the journal was deleted by hand, or by an acpgen that did not look for them)
and, for packages, ``.<name>.new-XXXXXXXX`` and ``.<name>.old-XXXXXXXX`` (left
by acpgen versions without a journal). A directory set aside (``old``) may be
the only copy of the user's tree, so:

* target missing: the one directory that set it aside is renamed back onto
  it, when it is unambiguously that (acpgen's journal prefix, or a package
  whose marker matches its files, or with no marker and acpgen's header
  lines, which the check before writing then compares with what the run
  writes); several candidates, or one acpgen cannot
  vouch for, stop the run with an error naming them; nothing is deleted;
* target present: a leftover identical to it is redundant; so is a staged
  or set-aside package from a version without a journal, and a staged
  package, whose marker matches its files (unedited acpgen output), and a
  package a version without a journal staged (no marker, every file with
  acpgen's header: it only ever held what acpgen wrote). A package such a
  version set aside with no marker held the user's package, maybe edited, and
  is never taken for acpgen's output on its header lines. The redundant ones
  are deleted, but only once the new run has committed. Anything else is
  left where it is with a warning naming it and saying what to do.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import AcpgenError
from . import manifest
from .journal import (
    JOURNAL_FILE,
    NEW_PREFIX,
    OLD_PREFIX,
    Entry,
    directory_digest,
    fsync_dir,
    read_journal,
    remove,
)
from .trees import Tree

_LEGACY = re.compile(r"^\.(?P<name>.+)\.(?P<kind>new|old)-[A-Za-z0-9_]{8}$")
_ORPHAN = re.compile(rf"^(?P<prefix>{re.escape(NEW_PREFIX)}|{re.escape(OLD_PREFIX)})(?P<name>.+)-[0-9a-f]{{8}}$")


# ---------------------------------------------------------------- the journal


def recover(home: Path) -> str | None:
    """Finish or roll back the run the journal in ``home`` records; returns
    what was done (``rolled back``, ``completed``) or None without a journal.

    Deletes only the directories the journal names, under acpgen's own
    prefixes, a new tree only when its content is what the journal says the
    run wrote, and a set-aside tree only when the swap finished or when it is
    identical to the target (restored by hand); a set-aside tree that differs
    from a target restored by hand is left for :func:`settle_leftovers`."""
    journal = read_journal(home)
    if journal is None:
        return None
    phase, entries = journal
    if phase == "committed":
        for entry in entries:
            remove(entry.aside)
            remove(entry.stage)
        done = "completed"
    else:
        edited = [
            entry
            for entry in entries
            if _holds_new_tree(entry, phase) and directory_digest(entry.target) != entry.digest
        ]
        if edited:
            # Checked before anything moves, so a refusal leaves every
            # directory as the interrupted run left it.
            raise AcpgenError(
                "cannot roll back an interrupted run: "
                + "; ".join(
                    f"{entry.target} changed since it was written"
                    + (f" (its previous version is in {entry.aside})" if os.path.lexists(entry.aside) else "")
                    for entry in edited
                )
                + ". Move each changed directory out of the way to keep it, then run again: the run is rolled back",
                file=str(home / JOURNAL_FILE),
            )
        for entry in reversed(entries):
            _roll_back(entry, phase)
        done = "rolled back"
    os.unlink(home / JOURNAL_FILE)
    fsync_dir(home)
    return done


def _holds_new_tree(entry: Entry, phase: str) -> bool:
    """The target holds the tree the run wrote: its staged copy was moved
    onto it (the staging directory is gone) and a rollback has not already
    put the previous tree back. An entry whose target existed before and
    whose set-aside copy is gone as well was rolled back (by a rollback that
    was itself interrupted, say): its target is the previous tree."""
    if phase == "staging" or os.path.lexists(entry.stage) or not os.path.lexists(entry.target):
        return False
    return not (entry.existed and not os.path.lexists(entry.aside))


def _roll_back(entry: Entry, phase: str) -> None:
    """Put the previous tree of ``entry`` back. Each step leaves a state
    this function also handles, so a rollback killed midway is finished by
    the next one."""
    target, stage, aside = entry.target, entry.stage, entry.aside
    if os.path.lexists(stage):
        # Not swapped (or moved back already): the target is the old tree, or
        # it is set aside (and maybe restored by hand since).
        if os.path.lexists(aside):
            if not os.path.lexists(target):
                os.rename(aside, target)
            elif _identical(aside, target):
                remove(aside)
        remove(stage)
        return
    if not _holds_new_tree(entry, phase):
        # Never swapped, or rolled back already; a set-aside copy with no
        # target is put back.
        if phase != "staging" and os.path.lexists(aside) and not os.path.lexists(target):
            os.rename(aside, target)
        return
    # Swapped: the target is the new tree. Move it back to its staging name
    # before the old tree returns, so that no tree is deleted before the
    # other is in place.
    os.rename(target, stage)
    if os.path.lexists(aside):
        os.rename(aside, target)
    remove(stage)


def describe_state(home: Path) -> str:
    """What each target of the journal in ``home`` holds now, for an error
    raised when a rollback stopped halfway."""
    try:
        journal = read_journal(home)
    except AcpgenError:
        journal = None
    if journal is None:
        return "acpgen cannot tell what each directory holds"
    phase, entries = journal
    said = []
    for entry in entries:
        target, aside = entry.target, entry.aside
        if phase == "staging" or os.path.lexists(entry.stage):
            if os.path.lexists(target):
                said.append(f"{target} holds its previous version")
            elif os.path.lexists(aside):
                said.append(f"{target} is missing, its previous version is in {aside}")
            else:
                said.append(f"{target} is absent, as before the run")
        elif _holds_new_tree(entry, phase):
            kept = f" (the previous one is in {aside})" if os.path.lexists(aside) else ""
            said.append(f"{target} holds the new version{kept}")
        elif os.path.lexists(target):
            said.append(f"{target} holds its previous version")
        else:
            said.append(
                f"{target} is missing" + (f", its previous version is in {aside}" if os.path.lexists(aside) else "")
            )
    return "; ".join(said)


# ---------------------------------------------------------------- leftovers without a journal


@dataclass(frozen=True)
class Leftover:
    path: Path
    target: Path
    kind: str
    """``new`` (a staged tree) or ``old`` (a tree set aside)."""
    legacy: bool
    """Named by an acpgen without a journal (``.<name>.old-XXXXXXXX``)."""


def find_leftovers(target: Path, guarded: bool) -> list[Leftover]:
    """The staging directories beside ``target`` named for it."""
    parent = target.parent
    if not parent.is_dir():
        return []
    found = []
    for path in sorted(parent.iterdir()):
        if path.is_symlink() or not path.is_dir():
            continue
        orphan = _ORPHAN.match(path.name)
        if orphan and orphan["name"] == target.name:
            found.append(Leftover(path, target, "new" if orphan["prefix"] == NEW_PREFIX else "old", False))
            continue
        legacy = _LEGACY.match(path.name)
        if guarded and legacy and legacy["name"] == target.name:
            found.append(Leftover(path, target, legacy["kind"], True))
    return found


def settle_leftovers(trees: list[Tree], warnings: list[str]) -> list[Path]:
    """Put back every missing target an interrupted run left set aside
    (or refuse, naming the candidates), warn about the leftovers acpgen
    cannot vouch for, and return those to delete once the run commits."""
    doomed: list[Path] = []
    for tree in trees:
        found = find_leftovers(tree.target, tree.guarded)
        if not found:
            continue
        if not os.path.lexists(tree.target):
            restored = _restore(tree.target, tree.guarded, [f for f in found if f.kind == "old"])
            if restored is not None:
                warnings.append(
                    f"restored {tree.target} from {restored}, where an interrupted acpgen run had set it aside"
                )
                found = [f for f in found if f.path != restored]
        for leftover in found:
            if _redundant(leftover, tree.guarded):
                doomed.append(leftover.path)
            else:
                warnings.append(_left_warning(leftover))
    return doomed


def remove_leftovers(doomed: list[Path], warnings: list[str]) -> None:
    """Delete what :func:`settle_leftovers` found redundant (the run has
    committed: a failure here only leaves a directory behind)."""
    for path in doomed:
        try:
            remove(path)
        except OSError as exc:
            warnings.append(
                f"could not delete {path}, left by an interrupted acpgen run ({exc.strerror}); delete it by hand"
            )


def _restore(target: Path, guarded: bool, candidates: list[Leftover]) -> Path | None:
    if not candidates:
        return None
    if len(candidates) > 1:
        names = ", ".join(str(c.path) for c in candidates)
        raise AcpgenError(
            f"{target} is missing, and several directories that interrupted acpgen runs set aside may hold it ({names}); "
            f"rename the one that holds it back to {target.name} and delete the others, then run again",
            file=str(target),
        )
    (candidate,) = candidates
    if candidate.legacy and guarded:
        # A package with no marker but acpgen's header lines is put back as
        # well: a rename loses nothing, and the check before writing compares
        # it with what the run writes.
        owner = manifest.ownership(candidate.path)
        if owner.status not in (manifest.GENERATED, manifest.UNMARKED):
            raise AcpgenError(
                f"{target} is missing, and {candidate.path} may hold it, set aside by an interrupted acpgen run, "
                f"but its files are not what acpgen wrote ({owner.changed_summary()}); if it is your package, rename it back "
                f"to {target.name}, otherwise move it away, then run again",
                file=str(target),
            )
    os.rename(candidate.path, target)
    fsync_dir(target.parent)
    return candidate.path


def _redundant(leftover: Leftover, guarded: bool) -> bool:
    if _identical(leftover.path, leftover.target):
        return True
    if not guarded or (leftover.kind == "old" and not leftover.legacy):
        # A tree a journaled run set aside, unlike the target now: the
        # target was restored by hand from something else.
        return False
    status = manifest.ownership(leftover.path).status
    # Without a marker (every journal-less acpgen wrote none), header lines
    # do not tell that the files are unedited output: a tree set aside held
    # the user's package, maybe edited, and is kept (with a warning). A tree
    # such an acpgen staged only ever held what it wrote itself.
    return status == manifest.GENERATED or (status == manifest.UNMARKED and leftover.legacy and leftover.kind == "new")


def _identical(a: Path, b: Path) -> bool:
    return a.is_dir() and b.is_dir() and not b.is_symlink() and directory_digest(a) == directory_digest(b)


def _left_warning(leftover: Leftover) -> str:
    path, target = leftover.path, leftover.target
    if leftover.kind == "old":
        return (
            f"left {path}: it holds {target} as an interrupted acpgen run set it aside, and differs from {target} "
            f"now (restored by hand?); compare the two, keep what you need, then delete {path}"
        )
    return (
        f"left {path}: it holds what an interrupted acpgen run staged for {target}, with files acpgen did not "
        f"write or that changed since; keep what you need from it, then delete {path}"
    )
