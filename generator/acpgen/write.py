"""Stage 6, write: put generated packages in place, all or nothing, and
never over a directory acpgen did not make.

A run replaces a set of directories (the packages, and for ``acpgen schema
update`` also ``schema/``) as one transaction, under a lock on the output
directory (``.acpgen.lock``, ``fcntl.flock``): a second run on the same
directory waits for the first to finish, then does its own work.

Under the lock, a journal (``.acpgen-journal.json`` in the output directory)
records, before anything is created, every directory the run will create
(``.acpgen-new-<name>-<token>``, the staged trees) or set aside
(``.acpgen-old-<name>-<token>``, the previous trees) and its phase:

1. ``staging``: the new trees are written and fsynced beside their targets;
2. ``swapping``: each target is renamed aside and its staged tree renamed
   onto it;
3. ``committed``: every swap is done; the trees set aside are deleted, then
   the journal.

A run killed at any point (even with SIGKILL) leaves the journal behind, and
the next run on the directory finishes the job before it starts its own:
before ``committed`` it rolls back (the old trees return, the staged ones are
deleted), after it it rolls forward (the trees set aside are deleted). So
once that recovery has run the directory holds either the complete old set
or the complete new set, and no staging directory is left. Recovery deletes
only the directories the journal names, under acpgen's own prefixes, and a
restored target only when its content is what the journal says the run
wrote. Staging directories of acpgen versions without a journal
(``.<name>.new-XXXXXXXX``) are deleted when they hold only acpgen output.

``ACPGEN_TEST_PAUSE=<phase>`` (``staged``, ``swap`` or ``committed``) and
``ACPGEN_TEST_PAUSE_FILE=<path>`` make a run create that file at that point
and wait until it is deleted: the tests use it to kill a run mid-swap.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
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
from .jsontypes import JsonObject

LOCK_FILE = ".acpgen.lock"
JOURNAL_FILE = ".acpgen-journal.json"
NEW_PREFIX = ".acpgen-new-"
OLD_PREFIX = ".acpgen-old-"
_LEGACY_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(new|old)-[A-Za-z0-9_]{8}$")
PAUSE_TIMEOUT = 300.0


@dataclass(frozen=True)
class Tree:
    """A directory to replace with ``files`` (relative path -> bytes)."""

    target: Path
    files: dict[str, bytes]
    guarded: bool = True
    """A generated package: replaced only when acpgen made it."""


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
) -> None:
    """Replace ``out_dir/<name>`` with the files of each package."""
    trees = [package_tree(out_dir, name, files) for name, files in packages.items()]
    replace_trees(out_dir, trees, overwrite_foreign=overwrite_foreign, overwrite_edited=overwrite_edited, on_wait=on_wait)


def replace_trees(
    home: Path,
    trees: list[Tree],
    *,
    overwrite_foreign: bool = False,
    overwrite_edited: bool = False,
    on_wait: Callable[[Path], None] | None = None,
) -> None:
    """Replace every tree's target as one transaction journaled in ``home``."""
    guard = dict(overwrite_foreign=overwrite_foreign, overwrite_edited=overwrite_edited)
    check_targets(trees, **guard)  # refuse before creating anything
    with locked(home, on_wait):
        recover(home)
        clean_legacy_leftovers(home, trees)
        check_targets(trees, **guard)  # again: another run may have been first
        _Transaction(home, trees).run()


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
                file=str(tree.target),
            )
        if owner.status == manifest.EDITED and not (overwrite_edited or overwrite_foreign):
            raise AcpgenError(
                f"refusing to replace a generated package whose files changed since acpgen wrote them "
                f"({owner.describe()}); pass --overwrite-edited to replace it and lose those changes",
                file=str(tree.target),
            )


# ---------------------------------------------------------------- the lock


@contextmanager
def locked(home: Path, on_wait: Callable[[Path], None] | None = None) -> Iterator[None]:
    """Hold the exclusive lock of ``home``; wait for another holder to finish
    (calling ``on_wait`` first). The lock file is removed on release."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / LOCK_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
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


# ---------------------------------------------------------------- the journal


def tree_digest(files: dict[str, bytes]) -> str:
    """A digest of a tree's paths and contents."""
    digest = hashlib.sha256()
    for name, data in sorted(files.items()):
        digest.update(name.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _write_journal(home: Path, record: JsonObject) -> None:
    temporary = home / (JOURNAL_FILE + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=2)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, home / JOURNAL_FILE)
    _fsync_dir(home)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _pause(phase: str) -> None:
    """The test hook of the module docstring."""
    if os.environ.get("ACPGEN_TEST_PAUSE") != phase:
        return
    flag = Path(os.environ["ACPGEN_TEST_PAUSE_FILE"])
    flag.write_text(str(os.getpid()))
    deadline = time.monotonic() + PAUSE_TIMEOUT
    while flag.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


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
                    "digest": tree_digest(tree.files),
                }
            )
        self.trees = trees

    def journal(self, phase: str) -> None:
        _write_journal(self.home, {"acpgen": 1, "pid": os.getpid(), "phase": phase, "entries": self.entries})

    def run(self) -> None:
        self.journal("staging")
        try:
            for tree, entry in zip(self.trees, self.entries):
                stage_tree(self.home / entry["stage"], tree.files)
            _pause("staged")
            self.journal("swapping")
            for index, entry in enumerate(self.entries):
                target, stage, aside = (self.home / entry[k] for k in ("target", "stage", "aside"))
                if entry["existed"]:
                    os.rename(target, aside)
                os.rename(stage, target)
                _fsync_dir(target.parent)
                if index == 0:
                    _pause("swap")
        except BaseException:
            # An error or an interrupt we are alive to handle: roll back now.
            recover(self.home)
            raise
        self.journal("committed")
        _pause("committed")
        recover(self.home)


def recover(home: Path) -> str | None:
    """Finish or roll back the run the journal in ``home`` records; returns
    what was done (``rolled back``, ``completed``) or None without a journal."""
    path = home / JOURNAL_FILE
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        phase = record["phase"]
        entries = [
            {k: (home / e[k]) for k in ("target", "stage", "aside")} | {"existed": bool(e["existed"]), "digest": e["digest"]}
            for e in record["entries"]
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AcpgenError(f"cannot read the journal of an interrupted run ({exc}); inspect and delete it", file=str(path)) from None
    for entry in entries:
        # Only the staging directories acpgen names beside each target.
        target = entry["target"]
        for key, prefix in (("stage", NEW_PREFIX), ("aside", OLD_PREFIX)):
            place = entry[key]
            if place.parent != target.parent or not place.name.startswith(f"{prefix}{target.name}-"):
                raise AcpgenError(f"the journal names {place}, which is not acpgen's; inspect and delete it", file=str(path))
    if phase == "committed":
        for entry in entries:
            _remove(entry["aside"])
            _remove(entry["stage"])
        done = "completed"
    else:
        for entry in reversed(entries):
            target, stage, aside = entry["target"], entry["stage"], entry["aside"]
            if os.path.lexists(stage):
                # Not swapped: the target is the old one, or it is set aside.
                if os.path.lexists(aside) and not os.path.lexists(target):
                    os.rename(aside, target)
                _remove(stage)
                continue
            if phase == "staging" or not os.path.lexists(target):
                continue
            # Swapped: the target is the new tree; put the old one back.
            if tree_digest(read_tree(target)) != entry["digest"]:
                raise AcpgenError(
                    f"cannot roll back an interrupted run: {target} changed since it was written"
                    + (f"; the previous version is in {aside}" if os.path.lexists(aside) else ""),
                    file=str(path),
                )
            shutil.rmtree(target)
            if entry["existed"] and os.path.lexists(aside):
                os.rename(aside, target)
        done = "rolled back"
    os.unlink(path)
    _fsync_dir(home)
    return done


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def clean_legacy_leftovers(home: Path, trees: list[Tree]) -> list[Path]:
    """Delete ``.<name>.new-XXXXXXXX`` and ``.<name>.old-XXXXXXXX`` staging
    directories that acpgen versions without a journal left beside the
    targets, when they hold only acpgen output."""
    removed = []
    names = {tree.target.name for tree in trees if tree.guarded}
    parents = {tree.target.parent for tree in trees if tree.guarded}
    for parent in parents:
        if not parent.is_dir():
            continue
        for entry in parent.iterdir():
            match = _LEGACY_LEFTOVER.match(entry.name)
            if not match or match["name"] not in names or entry.is_symlink() or not entry.is_dir():
                continue
            if manifest.ownership(entry).status == manifest.GENERATED:
                shutil.rmtree(entry)
                removed.append(entry)
    return removed


# ---------------------------------------------------------------- staging


def stage_tree(stage: Path, files: dict[str, bytes]) -> Path:
    """Create ``stage`` holding ``files``, fsynced, with the permissions an
    ordinary directory of the user would have."""
    stage.parent.mkdir(parents=True, exist_ok=True)
    stage.mkdir()
    for relative, data in files.items():
        target = stage / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    _ordinary_permissions(stage)
    return stage


def _ordinary_permissions(root: Path) -> None:
    """Give the tree the process umask's modes."""
    umask = os.umask(0)
    os.umask(umask)
    for path in [root, *root.rglob("*")]:
        os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~umask)


def waiting_notice(home: Path) -> None:
    """The default ``on_wait``: say why nothing happens."""
    print(f"acpgen: waiting for another acpgen run writing {home} to finish", file=sys.stderr, flush=True)
