"""Staging a new tree beside the directory it replaces (:mod:`acpgen.output.write`):
the files acpgen writes, on a copy of what it keeps of the old directory."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ..errors import AcpgenError

__all__ = ["stage_tree"]


def stage_tree(
    stage: Path, files: dict[str, bytes], *, keep: Path | None = None, drop: frozenset[str] = frozenset()
) -> Path:
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
