"""Stage 6, write: put generated packages in place, all or nothing, and
never over a directory acpgen did not make.

A run replaces a set of directories (the packages, and for ``acpgen schema
update`` also ``schema/``) as one transaction, under a lock on the output
directory (``.acpgen.lock``, ``fcntl.flock``): a second run on the same
directory waits for the first to finish, then does its own work. A run
takes the lock and recovers an interrupted run (below) before it reads its
inputs, and builds while it holds the lock (:func:`prepared`): what it
writes is built from what is in place, not from a ``schema/`` an
interrupted run left halfway or another run is about to replace.

Under the lock, a journal (``.acpgen-journal.json`` in the output directory,
:mod:`acpgen.journal`) records, before anything is created, every directory
the run will create (``.acpgen-new-<name>-<token>``, the staged trees) or set
aside (``.acpgen-old-<name>-<token>``, the previous trees) and its phase:

1. ``staging``: the new trees are written and fsynced beside their targets;
2. ``swapping``: each target is renamed aside and its staged tree renamed
   onto it;
3. ``committed``: every swap is done; the trees set aside are deleted, then
   the journal.

The commit point is the atomic rename that puts the ``committed`` journal in
place. A run that fails before it (the ``committed`` record cannot be
written, say) rolls back at once and says so; a run that cannot even roll
back names what each directory holds and keeps the journal, which the next
run acts on.

A run killed at any point (even with SIGKILL) leaves the journal behind, and
the next run on the directory finishes the job before it starts its own
(:mod:`acpgen.recovery`): before ``committed`` it rolls back (the old trees
return, the staged ones are deleted), after it it rolls forward (the trees
set aside are deleted). So once that recovery has run the directory holds
either the complete old set or the complete new set, and no staging
directory the journal names is left. Staging directories no journal accounts
for (journal deleted by hand, or acpgen versions without a journal) are put
back, kept with a warning, or deleted after the commit, as
:mod:`acpgen.recovery` says.

A tree may keep what acpgen does not manage in the directory it replaces
(``Tree.keep``, used for ``schema/``): those entries are copied into the
staged tree as they are (modes, symbolic links, empty directories), and only
the files the tree names are written.

``ACPGEN_TEST_PAUSE=<phase>`` (``staged``, ``aside`` (the first target set
aside, its new tree not yet in place), ``swap`` or ``committed``) and
``ACPGEN_TEST_PAUSE_FILE=<path>`` make a run create that file at that point
and wait until it is deleted: the tests use it to kill a run mid-swap.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from . import manifest
from .errors import AcpgenError
from .journal import JOURNAL_FILE, NEW_PREFIX, OLD_PREFIX, directory_digest, fsync_dir, joined, recorded_phase
from .journal import write_journal as _write_journal
from .recovery import describe_state, recover, remove_leftovers, settle_leftovers

__all__ = [
    "JOURNAL_FILE",
    "LOCK_FILE",
    "NEW_PREFIX",
    "OLD_PREFIX",
    "Tree",
    "check_targets",
    "locked",
    "package_tree",
    "prepared",
    "read_tree",
    "recover",
    "replace_trees",
    "stage_tree",
    "waiting_notice",
    "write_packages",
    "Writer",
]

LOCK_FILE = ".acpgen.lock"
PAUSE_TIMEOUT = 300.0


@dataclass(frozen=True)
class Tree:
    """A directory to replace with ``files`` (relative path -> bytes)."""

    target: Path
    files: dict[str, bytes]
    guarded: bool = True
    """A generated package: replaced only when acpgen made it."""
    keep: Path | None = None
    """A directory whose other entries (not in ``files`` nor ``drop``) the
    new tree holds as they are: usually ``target`` itself."""
    drop: frozenset[str] = frozenset()
    """Files of ``keep`` the new tree leaves out."""


def read_tree(directory: Path) -> dict[str, bytes]:
    """``{relative path: bytes}`` of the files under ``directory``."""
    if not directory.is_dir():
        return {}
    out = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            out[path.relative_to(directory).as_posix()] = path.read_bytes()
    return out


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
    )
    created = [d for d in (home, *home.parents) if not os.path.lexists(d)]
    try:
        with locked(home, on_wait):
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


def check_targets(trees: list[Tree], *, overwrite_foreign: bool, overwrite_edited: bool) -> None:
    """Refuse to replace what acpgen did not make, or what was edited since."""
    for tree in trees:
        if not tree.guarded:
            continue
        owner = manifest.ownership(tree.target)
        if owner.status == manifest.FOREIGN and not overwrite_foreign:
            raise AcpgenError(
                f"refusing to replace a directory acpgen did not generate ({owner.describe()}); "
                "choose another --out or --package, or pass --overwrite-foreign to delete it and write the package",
                file=os.path.normpath(tree.target),
            )
        if owner.status == manifest.EDITED and not (overwrite_edited or overwrite_foreign):
            raise AcpgenError(
                f"refusing to replace a generated package whose files changed since acpgen wrote them "
                f"({owner.describe()}); pass --overwrite-edited to replace it and lose those changes",
                file=os.path.normpath(tree.target),
            )


# ---------------------------------------------------------------- the lock


@contextmanager
def locked(home: Path, on_wait: Callable[[Path], None] | None = None) -> Iterator[None]:
    """Hold the exclusive lock of ``home``; wait for another holder to finish
    (calling ``on_wait`` first). The lock file is removed on release."""
    path = home / LOCK_FILE
    while True:
        home.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except FileNotFoundError:
            continue  # a run that failed removed the directory it had created
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if on_wait is not None:
                    on_wait(home)
                fcntl.flock(fd, fcntl.LOCK_EX)
            # The holder before us may have removed the file: lock the one
            # that is there now.
            held = os.fstat(fd)
            try:
                now = os.stat(path)
            except FileNotFoundError:
                now = None
        except BaseException:
            os.close(fd)
            raise
        if now is not None and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            break
        os.close(fd)
    try:
        yield
    finally:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.close(fd)


# ---------------------------------------------------------------- the transaction


def _pause(phase: str) -> None:
    """The test hook of the module docstring."""
    if os.environ.get("ACPGEN_TEST_PAUSE") != phase:
        return
    flag = Path(os.environ["ACPGEN_TEST_PAUSE_FILE"])
    flag.write_text(str(os.getpid()))
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
            for tree, entry in zip(self.trees, self.entries):
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


# ---------------------------------------------------------------- staging


def stage_tree(stage: Path, files: dict[str, bytes], *, keep: Path | None = None, drop: frozenset[str] = frozenset()) -> Path:
    """Create ``stage`` holding ``files``, fsynced: with ``keep``, on a copy
    of its other entries; what acpgen creates gets the permissions an
    ordinary directory or file of the user would have, a file it rewrites
    keeps its mode."""
    stage.parent.mkdir(parents=True, exist_ok=True)
    created: list[Path] = []
    directories: list[tuple[Path, Path]] = []
    if keep is not None and keep.is_dir() and not keep.is_symlink():
        _carry_over(keep, stage, set(files) | set(drop), "", directories)
    else:
        stage.mkdir()
        created.append(stage)
    for relative, data in files.items():
        target = stage / relative
        _make_parents(stage, relative, created, keep)
        previous = None if keep is None else keep / relative
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        with open(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if previous is not None and previous.is_file() and not previous.is_symlink():
            os.chmod(target, previous.stat().st_mode & 0o7777)
        else:
            created.append(target)
    _ordinary_permissions(created)
    for copy, source in reversed(directories):
        shutil.copystat(source, copy, follow_symlinks=False)  # last: it may make the directory read-only
    return stage


def _make_parents(stage: Path, relative: str, created: list[Path], keep: Path | None) -> None:
    """Create the directories a file goes in, refusing to write through a
    symbolic link or over a file that was carried over."""
    current = stage
    for part in Path(relative).parts[:-1]:
        current = current / part
        if current.is_symlink() or (os.path.lexists(current) and not current.is_dir()):
            shown = keep / current.relative_to(stage) if keep is not None else current
            raise AcpgenError(
                f"{shown} is a symbolic link or not a directory, and acpgen would write {relative} under it; "
                "make it a plain directory, or move it out, then run again",
                file=str(shown),
            )
        if not current.exists():
            current.mkdir()
            created.append(current)


def _carry_over(source: Path, copy: Path, skip: set[str], relative: str, directories: list[tuple[Path, Path]]) -> None:
    """Copy ``source`` to ``copy`` as it is (modes, times, symbolic links as
    links, empty directories), leaving out the paths in ``skip``."""
    copy.mkdir()
    directories.append((copy, source))
    for entry in sorted(os.scandir(source), key=lambda e: e.name):
        path = f"{relative}{entry.name}"
        if path in skip:
            continue
        origin, target = Path(entry.path), copy / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(origin), target)
        elif entry.is_dir(follow_symlinks=False):
            _carry_over(origin, target, skip, f"{path}/", directories)
        elif entry.is_file(follow_symlinks=False):
            shutil.copy2(origin, target, follow_symlinks=False)
            with open(target, "rb") as handle:
                os.fsync(handle.fileno())
        else:
            raise AcpgenError(
                "neither a file, a directory nor a symbolic link, which acpgen cannot copy into the new version "
                "of the directory it replaces; move it out, then run again",
                file=str(origin),
            )


def _ordinary_permissions(paths: list[Path]) -> None:
    """Give what acpgen created the process umask's modes."""
    umask = os.umask(0)
    os.umask(umask)
    for path in paths:
        os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~umask)


def waiting_notice(home: Path) -> None:
    """The default ``on_wait``: say why nothing happens."""
    print(f"acpgen: waiting for another acpgen run writing {home} to finish", file=sys.stderr, flush=True)
