"""What the commands share: how errors and warnings are reported, and the
options that guard against replacing what acpgen did not make."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from ..errors import AcpgenError

F = TypeVar("F", bound=Callable[..., Any])
"""A command function, before ``click.command`` makes it a command."""


def fail(error: AcpgenError | str) -> NoReturn:
    """Report bad input as one line and exit with status 2."""
    click.echo(f"acpgen: error: {error}", err=True)
    sys.exit(2)


def warn(warnings: list[str]) -> None:
    for warning in warnings:
        click.echo(f"acpgen: warning: {warning}", err=True)


def overwrite_options(command: F) -> F:
    """``--overwrite-foreign`` and ``--overwrite-edited``."""
    command = click.option(
        "--overwrite-edited",
        is_flag=True,
        help="Replace a generated package even though files in it changed since acpgen wrote it "
        "(by hand or by a merge); those changes are lost. Without it such a package is refused.",
    )(command)
    command = click.option(
        "--overwrite-foreign",
        is_flag=True,
        help="Delete and replace a directory acpgen did not generate (one without its .acpgen marker). "
        "Without it, such a directory is refused with exit status 2 and nothing is touched.",
    )(command)
    return command


SYSTEM_DIRECTORIES = ("/proc", "/sys", "/dev")
"""Where the system keeps what is not files of a project (processes, the
kernel's settings, devices): no output directory is under them."""


def check_out_dir(out_dir: Path, option: str, project_root: Path | None = None) -> None:
    """Refuse an output directory that cannot be one: a file, or one under
    a file; or one whose parent is missing (acpgen creates at most the last
    level, as ``mkdir`` does, so a typo does not become a tree of
    directories); and one that must not be: a directory under /proc, /sys
    or /dev, the root of a file system (or drive), the home directory
    itself, or ``project_root`` itself (the directory of the
    ``pyproject.toml`` whose ``[tool.acpgen] out`` it is). Symbolic links
    are followed. ``option`` names where the path came from (``--out``,
    ``[tool.acpgen] out``)."""
    shown = os.path.normpath(out_dir)
    place = _forbidden_place(out_dir, project_root)
    if place is not None:
        raise AcpgenError(
            f"{option} is {place}: give a directory of its own, which acpgen fills with the packages "
            "(and, while it writes, their lock and journal)",
            file=shown,
        )
    if out_dir.is_dir():
        return
    if os.path.lexists(out_dir):
        what = "a broken symbolic link" if out_dir.is_symlink() else "a file"
        raise AcpgenError(
            f"{option} names {what}, not a directory: give the directory the package goes into", file=shown
        )
    parent = out_dir.parent
    for ancestor in (parent, *parent.parents):
        if ancestor.is_dir():
            break
        if os.path.lexists(ancestor):
            raise AcpgenError(
                f"{option} is under {os.path.normpath(ancestor)}, which is a file, not a directory", file=shown
            )
    if not parent.is_dir():
        raise AcpgenError(
            f"{option}: the directory {os.path.normpath(parent)} does not exist; acpgen creates only the last "
            "level of the output directory (as mkdir does): create the rest first, or check the path",
            file=shown,
        )


def _forbidden_place(out_dir: Path, project_root: Path | None) -> str | None:
    """What ``out_dir`` is, when it is a place no output directory may be
    (see :func:`check_out_dir`); else None."""
    real = Path(os.path.realpath(out_dir))
    if real.parent == real:
        return "the root of a file system"
    for system in SYSTEM_DIRECTORIES:
        base = Path(system)
        if real == base or base in real.parents:
            return f"under {system}, where the system keeps what is not files of a project"
    try:
        home = Path(os.path.realpath(Path.home()))
    except (RuntimeError, KeyError):  # no home directory to be found
        home = None
    if real == home:
        return "the home directory itself"
    if project_root is not None and real == Path(os.path.realpath(project_root)):
        return "the project root itself (the directory of its pyproject.toml)"
    return None


def check_package_target(out_dir: Path, package: str, overwrite_foreign: bool) -> None:
    """A file (or another non-directory) where the package directory goes
    is refused, saying so, unless ``--overwrite-foreign``."""
    target = out_dir / package
    if overwrite_foreign or not os.path.lexists(target) or target.is_dir():
        return
    what = "a symbolic link" if target.is_symlink() else "a file"
    raise AcpgenError(
        f"{what} is where the package directory {package} goes, and acpgen replaces only directories it generated; "
        "move it out, choose another --out or --package, or pass --overwrite-foreign to delete it",
        file=os.path.normpath(target),
    )
