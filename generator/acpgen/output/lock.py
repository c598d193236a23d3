"""The lock of an output directory: ``.acpgen.lock``, held with
``fcntl.flock`` by the run that writes there (:mod:`acpgen.output.write`). A second
run on the same directory waits for the first to finish, saying so
(:func:`waiting_notice`), then does its own work."""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from .ownfiles import open_lock

__all__ = ["LOCK_FILE", "locked", "waiting_notice"]

LOCK_FILE = ".acpgen.lock"


@contextmanager
def locked(home: Path, on_wait: Callable[[Path], None] | None = None) -> Iterator[None]:
    """Hold the exclusive lock of ``home``; wait for another holder to finish
    (calling ``on_wait`` first). The lock file is removed on release; a
    link at its name is refused, never followed."""
    path = home / LOCK_FILE
    while True:
        home.mkdir(parents=True, exist_ok=True)
        try:
            fd = open_lock(path)
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
        with suppress(FileNotFoundError):
            os.unlink(path)
        os.close(fd)


def waiting_notice(home: Path) -> None:
    """The default ``on_wait``: say why nothing happens."""
    print(f"acpgen: waiting for another acpgen run writing {home} to finish", file=sys.stderr, flush=True)
