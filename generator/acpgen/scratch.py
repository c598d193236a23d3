"""Private temporary directories (:func:`scratch`) that go however a run
ends: the formatter's copies (:mod:`acpgen.emit.fmt`), the schemas ``schema
update`` generates from (:mod:`acpgen.update.applying`).

The directory is removed when the block ends, by an error or by Ctrl-C, and
on SIGTERM and SIGHUP too: when nothing else handles them, they are held off
while a directory exists, and once it is removed acpgen dies by the signal
as it would have. Nothing can run on SIGKILL, so the run holds an ``flock``
on its directory while it uses it, and the next run with the same prefix
deletes the directories no run holds (the user's own, not links), empty or
not. A directory gets its name only once it is locked: it is made as
``acpgen-claim-*``, locked, then renamed (the lock is the directory's, not
its name's), so no run is ever seen under the prefix without its lock. A
run killed between making and locking leaves an empty ``acpgen-claim-*``
directory, which no run deletes (it may be one about to be locked); the
window is a few system calls with every other signal held off.

A directory that lives as long as an object rather than a block (the
probe's, made and removed as its checks start and end) is a
:class:`Claim`: made, locked and swept the same way, removed by
:meth:`Claim.release`. It does not hold signals off: after any kill, the
next run with its prefix deletes it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Claim", "claim", "scratch"]

_HELD_OFF = (signal.SIGTERM, signal.SIGHUP)
_CLAIM = "acpgen-claim-"
"""The name of a directory between its making and its lock."""
_QUIET = (signal.SIGINT, *_HELD_OFF)


class _Terminated(BaseException):
    """SIGTERM or SIGHUP, turned into an exception while a temporary
    directory exists, so that it is removed before acpgen dies by it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated(signum)


@contextmanager
def scratch(prefix: str) -> Iterator[str]:
    """A new private temporary directory named ``<prefix>*``, locked while
    it is in use and removed however the block ends (see the module
    docstring); the directories of ended runs with that prefix go first."""
    with _terminations_deferred():
        held: Claim | None = None
        try:
            held = claim(prefix)
            yield held.path
        finally:
            if held is not None:
                with _signals_blocked():  # no interrupt that cuts the removal short
                    held.release()


class Claim:
    """A private temporary directory (:attr:`path`) locked for as long as
    this object holds it: made by :func:`claim`, removed by
    :meth:`release`."""

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        """The directory."""
        self._fd: int | None = fd

    def release(self) -> None:
        """Remove the directory and let its lock go (again: nothing)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            shutil.rmtree(self.path, ignore_errors=True)
        finally:
            os.close(fd)


def claim(prefix: str) -> Claim:
    """A new private temporary directory named ``<prefix>*`` for an object
    to hold (see the module docstring): the directories of ended runs with
    that prefix go first. Release it with :meth:`Claim.release`. An
    interrupt as it is made leaves nothing: not the directory, nor its
    lock.

    The sweep is interruptible (what an interrupt leaves half deleted is
    unlocked, and the next run finishes it); the directory is made, locked
    and named with interrupts held off, and one that comes as they are let
    through again removes it."""
    home = tempfile.gettempdir()
    _sweep(home, prefix)
    held: Claim | None = None
    try:
        with _signals_blocked():
            held = _make(home, prefix)
    except BaseException:
        if held is not None:
            held.release()
        raise
    return held


def _make(home: str, prefix: str) -> Claim:
    made = tempfile.mkdtemp(prefix=_CLAIM, dir=home)
    fd: int | None = None
    try:
        fd = os.open(made, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        fcntl.flock(fd, fcntl.LOCK_EX)  # before it has a name _sweep looks at
        return Claim(_rename_locked(made, home, prefix), fd)
    except BaseException:
        shutil.rmtree(made, ignore_errors=True)
        if fd is not None:
            os.close(fd)
        raise


@contextmanager
def _terminations_deferred() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP (while nothing else handles them:
    their disposition is the default) raise :class:`_Terminated`; once the
    block has cleaned up, the process dies by the signal, as it would have."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set in the main thread
        return
    previous = {}
    for signum in _HELD_OFF:
        if signal.getsignal(signum) == signal.SIG_DFL:
            previous[signum] = signal.signal(signum, _raise_terminated)
    received = None
    try:
        yield
    except _Terminated as terminated:
        received = terminated.signum
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if received is not None:
        os.kill(os.getpid(), received)  # the default disposition again: acpgen ends here
        raise SystemExit(128 + received)  # pragma: no cover - reached only if the signal did not end it


@contextmanager
def _signals_blocked() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP until the block ends, so that a
    cleanup is not cut short; they are delivered then."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _QUIET)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _rename_locked(made: str, home: str, prefix: str) -> str:
    """Give the locked directory ``made`` a name ``<prefix>*`` in ``home``
    that no other entry has (a rename onto an empty directory would replace
    it), and return its path."""
    suffix = os.path.basename(made)[len(_CLAIM) :]
    for attempt in range(100):
        temp = os.path.join(home, f"{prefix}{suffix}" if attempt == 0 else f"{prefix}{suffix}-{attempt}")
        if not os.path.lexists(temp):
            os.rename(made, temp)
            return temp
    raise FileExistsError(f"no free name {prefix}{suffix}* in {home}")


def _sweep(directory: str, prefix: str) -> None:
    """Delete the temporary directories of runs that ended without removing
    theirs (killed by SIGKILL): those named ``<prefix>*`` of this user that
    no run holds locked, empty or not (a directory is locked before it gets
    that name: see the module docstring)."""
    try:
        names = [name for name in os.listdir(directory) if name.startswith(prefix)]
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a run is using it
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)
