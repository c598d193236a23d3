"""Directory trees: a tree a run replaces (:class:`Tree`, shared by
:mod:`acpgen.output.write` and :mod:`acpgen.output.recovery`), the walk the
package marker (:mod:`acpgen.output.manifest`) and the journal's digest
(:mod:`acpgen.output.journal`) share, and the files of a tree read at once
(:func:`read_tree`)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["EMPTY_DIR", "FILE", "IGNORED_DIRS", "SPECIAL", "SYMLINK", "Tree", "read_tree", "walk"]


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


IGNORED_DIRS = ("__pycache__",)
"""Directories left out of a tree (a symbolic link of that name is kept)."""

FILE = "file"
SYMLINK = "symlink"
SPECIAL = "special"
EMPTY_DIR = "empty directory"


def walk(directory: Path) -> Iterator[tuple[str, Path, str]]:
    """``(relative path, path, kind)`` of every entry under ``directory``,
    directory by directory in name order, symbolic links not followed and
    ``__pycache__`` left out: a regular file (``FILE``), a symbolic link to
    anything, a directory among them (``SYMLINK``), anything else that is
    not a directory (``SPECIAL``), and a directory below ``directory`` that
    holds nothing else (``EMPTY_DIR``; one holding only ``__pycache__``
    counts)."""
    for current, dirs, files in os.walk(directory, followlinks=False):
        base = Path(current)
        kept = []
        names = list(files)
        for name in dirs:
            if (base / name).is_symlink():
                names.append(name)
            elif name not in IGNORED_DIRS:
                kept.append(name)
        dirs[:] = sorted(kept)
        if not kept and not names and base != directory:
            yield base.relative_to(directory).as_posix(), base, EMPTY_DIR
        for name in sorted(names):
            path = base / name
            mode = os.lstat(path).st_mode
            kind = FILE if stat.S_ISREG(mode) else SYMLINK if stat.S_ISLNK(mode) else SPECIAL
            yield path.relative_to(directory).as_posix(), path, kind


def read_tree(directory: Path) -> dict[str, bytes]:
    """``{relative path: bytes}`` of the files under ``directory``."""
    if not directory.is_dir():
        return {}
    out = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            out[path.relative_to(directory).as_posix()] = path.read_bytes()
    return out
