"""Stage 6, write: put generated packages in place atomically.

Each package is written in full to a temporary directory beside its target
and then swapped in with renames, so a failed run leaves the previous output
as it was, and a reader never sees half a package.
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
    """Replace ``out_dir/<name>`` with the files of each package.

    All packages are staged before any is swapped in; an error while staging
    changes nothing.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    try:
        for name, files in packages.items():
            stage = Path(tempfile.mkdtemp(prefix=f".{name}.new-", dir=out_dir))
            staged.append((stage, out_dir / name))
            for relative, text in files.items():
                target = stage / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "w", encoding="utf-8", newline="\n") as handle:
                    handle.write(text)
                    handle.flush()
                    os.fsync(handle.fileno())
    except BaseException:
        for stage, _ in staged:
            shutil.rmtree(stage, ignore_errors=True)
        raise
    for stage, target in staged:
        _swap(stage, target)


def _swap(stage: Path, target: Path) -> None:
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        old.rmdir()
        os.rename(target, old)
    os.rename(stage, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
