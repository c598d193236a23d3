"""Stage 6, write: put generated packages in place atomically.

Every package is written in full to a staging directory beside its target;
then all of them are swapped in with renames, all or nothing: a failure at any
point leaves the previous output as it was, and a reader never sees half a
package.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def read_tree(directory: Path) -> dict[str, bytes]:
    """``{relative path: bytes}`` of the files under ``directory``."""
    if not directory.is_dir():
        return {}
    out = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            out[path.relative_to(directory).as_posix()] = path.read_bytes()
    return out


def write_packages(out_dir: Path, packages: dict[str, dict[str, str]]) -> None:
    """Replace ``out_dir/<name>`` with the files of each package."""
    staged: list[tuple[Path, Path]] = []
    try:
        for name, files in packages.items():
            staged.append((stage_tree(out_dir, name, {k: v.encode("utf-8") for k, v in files.items()}), out_dir / name))
        swap_dirs(staged)
    finally:
        for stage, _ in staged:
            shutil.rmtree(stage, ignore_errors=True)


def stage_tree(parent: Path, name: str, files: dict[str, bytes]) -> Path:
    """A new directory beside ``parent/name`` holding ``files``, with the
    permissions an ordinary directory of the user would have."""
    parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{name}.new-", dir=parent))
    try:
        for relative, data in files.items():
            target = stage / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        _ordinary_permissions(stage)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


def swap_dirs(pairs: list[tuple[Path, Path]]) -> None:
    """Move each staged directory onto its target, all or nothing.

    A target that existed is set aside first and deleted only once every
    swap has succeeded; on any failure (an interrupt included) the swaps
    done so far are undone and the previous directories put back.
    """
    done: list[tuple[Path, Path | None]] = []
    try:
        for stage, target in pairs:
            old = _aside(target) if target.exists() else None
            try:
                os.rename(stage, target)
            except BaseException:
                if old is not None:
                    os.rename(old, target)
                raise
            done.append((target, old))
    except BaseException:
        for target, old in reversed(done):
            failed = _aside(target)
            if old is not None:
                os.rename(old, target)
            shutil.rmtree(failed, ignore_errors=True)
        raise
    for _, old in done:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _aside(target: Path) -> Path:
    """Rename ``target`` to a fresh name beside it; return that name."""
    place = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    place.rmdir()
    os.rename(target, place)
    return place


def _ordinary_permissions(root: Path) -> None:
    """mkdtemp makes 0700 directories: give the tree the process umask's modes."""
    umask = os.umask(0)
    os.umask(umask)
    for path in [root, *root.rglob("*")]:
        os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~umask)
