"""The files acpgen keeps in an output directory while it writes there: the
lock (:mod:`acpgen.output.lock`), the journal and its temporary copy
(:mod:`acpgen.output.journal`).

They live in a directory a project commits, so anyone able to commit there
may have put a symbolic link at one of those names, aimed at a file of the
user running acpgen. acpgen never makes a link there and never writes
through one: each file is created anew, with ``O_CREAT | O_EXCL |
O_NOFOLLOW`` (the lock without ``O_EXCL``: a lock file that is there is
opened, still without following a link), and a link, or anything but a
regular file, at one of these names stops the run with an error naming it,
before anything is written. A regular file a killed run left at the
temporary name is deleted first (the name is acpgen's, and the run holds the
lock), not written into, so a hard link there is left pointing at what it
did.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from ..errors import AcpgenError

__all__ = ["open_lock", "refuse_odd", "write_fresh"]

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def refuse_odd(path: Path) -> None:
    """Stop when ``path``, one of acpgen's own names, is a symbolic link or
    not a regular file; nothing there, or a regular file, passes."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise _planted(path, "a symbolic link")
    if not stat.S_ISREG(mode):
        raise _planted(path, "not a regular file")


def write_fresh(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data``, fsynced, never through a link: a
    regular file a killed run left there is deleted first; a link or
    anything else there is refused."""
    refuse_odd(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    try:
        fd = os.open(path, _CREATE, 0o666)
    except FileExistsError:
        # Put there since the check: by another process, not by acpgen.
        refuse_odd(path)
        raise _planted(path, "in the way") from None
    with open(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def open_lock(path: Path) -> int:
    """A descriptor of the lock file ``path``, created when missing, opened
    without following a link; a link or anything but a regular file there
    is refused."""
    refuse_odd(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o666)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.EISDIR):  # put there since the check
            refuse_odd(path)
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _planted(path, "not a regular file")
    return fd


def _planted(path: Path, what: str) -> AcpgenError:
    return AcpgenError(
        f"{path.name} is {what}: it is a name acpgen keeps for its own files, and acpgen never writes through "
        "a link or over something it did not create; delete it (and check how it got there), then run again",
        file=os.path.normpath(path),
    )
