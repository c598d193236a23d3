"""The forwarding process of ``acpgen tap``: the agent between our stdin and
stdout, every byte passed on as it is read, the transcript written here, as
the lines end, before the chunk that ends them is passed on (see the
package's docstring)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from .records import Transcript, say

CHUNK = 1 << 16
"""The most one read takes (a pipe's buffer on Linux)."""

PASSED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals passed on to the agent instead of ending the proxy."""


class Bell:
    """The observer's stdin: a byte written (never waiting: a full pipe
    means the observer has a ring it has not read yet) each time records
    were written; its end (our exit, or our death) tells the observer there
    will be no more. An observer that has gone is said once (unless the
    session is over). Both pumps ring: the descriptor is used and closed
    under a lock, so that a number closed is never written to again."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.lock = threading.Lock()
        self.finished = False
        if fd is not None:
            os.set_blocking(fd, False)

    def ring(self) -> None:
        with self.lock:
            fd = self.fd
            if fd is None:
                return
            try:
                os.write(fd, b"\0")
            except BlockingIOError:
                pass
            except OSError:
                self.fd = None
                with contextlib.suppress(OSError):
                    os.close(fd)
                if not self.finished:
                    say("the checks stopped (their process ended); forwarding and recording go on")

    def close(self) -> None:
        with self.lock:
            self.finished = True
            fd, self.fd = self.fd, None
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _close_to(fd: int) -> None:
    """Close ``fd`` for whoever is at its other end, keeping the number
    taken (by /dev/null) so that nothing else opened lands on it."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, fd)
        os.close(devnull)


def pump(
    source: int,
    sink: int,
    direction: str,
    transcript: Transcript | None,
    bell: Bell,
    sink_gone: Callable[[], None],
) -> None:
    """Pass every byte from ``source`` to ``sink`` as it is read, writing
    the records of the lines it completes first (so that what the other side
    got is in the transcript, and a request is recorded before any answer to
    it can be). At the end of ``source`` ``sink`` is closed; when ``sink``'s
    reader has gone, ``sink_gone`` closes ``source`` for its writer, as a
    direct pipe would."""
    read, write, now = os.read, os.write, time.time
    failed = False
    try:
        while True:
            try:
                data = read(source, CHUNK)
            except OSError:
                data = b""
            if not data:
                break
            recorded = False
            if transcript is not None:
                try:
                    recorded = transcript.add(direction, data, now())
                except Exception as exc:  # never the forwarding's business
                    if not failed:
                        failed = True
                        say(f"internal error recording ({exc!r}); forwarding goes on")
            try:
                written = write(sink, data)
                if written < len(data):
                    _write_all(sink, data[written:])
            except OSError:
                sink_gone()
                return
            if recorded:
                bell.ring()  # after the forwarding: the observer is no hurry
    finally:
        if transcript is not None:
            with contextlib.suppress(Exception):
                if transcript.end(direction, now()):
                    bell.ring()
    _close_to(sink)


def exit_status(returncode: int) -> int:
    """The agent's status as a shell reports it: 128 + the signal if a
    signal ended it."""
    return 128 - returncode if returncode < 0 else returncode


def open_transcript(out: str | None, checks: bool, limit: int) -> tuple[Transcript | None, int | None]:
    """The transcript (``out``, replaced) and the fd of a regular file
    holding the records for the observer: ``out`` itself, or an unlinked
    temporary file when there is no ``out``, it cannot be opened or it is
    not a regular file (a device, a pipe). (None, None) when there is
    nothing to write."""
    fds: list[tuple[int, str]] = []
    readable = None
    if out is not None:
        try:
            fd = os.open(out, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        except OSError as exc:
            say(f"cannot write the transcript {out}: {exc.strerror or exc}; not recording (forwarding goes on)")
        else:
            fds.append((fd, out))
            with contextlib.suppress(OSError):
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    readable = fd
    if checks and readable is None:
        try:
            copy = tempfile.TemporaryFile(prefix="acpgen-tap-")  # noqa: SIM115 (the fd outlives it)
            readable = os.dup(copy.fileno())
            copy.close()
            fcntl.fcntl(readable, fcntl.F_SETFL, fcntl.fcntl(readable, fcntl.F_GETFL) | os.O_APPEND)
            fds.append((readable, "(the checks' copy)"))
        except OSError as exc:
            say(f"cannot make a file for the checks: {exc.strerror or exc}; forwarding only")
            readable = None
    if not fds:
        return None, None
    return Transcript(fds, limit), readable


def start_observer(config: dict[str, Any], transcript_fd: int) -> subprocess.Popen[bytes] | None:
    """The observer process (``python -m acpgen.tap.observer CONFIG``),
    niced, in a process group of its own so that a terminal's Ctrl-C does
    not end it, reading the transcript through ``transcript_fd``; it ends at
    the end of its stdin (our exit) once it has checked the whole
    transcript. None (said) if it cannot start."""
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "acpgen.tap.observer", json.dumps({**config, "transcript_fd": transcript_fd})],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            pass_fds=(transcript_fd,),
            **_own_group(),
        )
    except OSError as exc:
        say(f"cannot start the checks ({exc}); forwarding and recording only")
        return None


def _own_group() -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        return {"process_group": 0}
    return {"preexec_fn": os.setpgrp}  # before any thread of ours starts


def run(
    command: Sequence[str],
    config: dict[str, Any] | None,
    *,
    out: str | None = None,
    max_line_bytes: int,
    drain_seconds: float,
) -> int:
    """Start ``command`` with its stdin and stdout piped to ours, forward
    until it exits and its stdout is drained (``drain_seconds`` at most: a
    child of the agent may hold it open; an agent's stdout ends with the
    agent as a rule, and tap exits then),
    and return its exit status (127 or 126 when it cannot be started, as a
    shell says). ``out``: the transcript; ``config``: the observer's, or
    None for no checks. The observer is not waited for: it checks the
    transcript to its end on its own."""
    transcript, readable = open_transcript(out, config is not None, max_line_bytes)
    try:
        agent = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, **_own_group())
    except OSError as exc:
        say(f"cannot start the agent {command[0]!r}: {exc.strerror or exc}")
        status = 127 if isinstance(exc, FileNotFoundError) else 126
        if transcript is not None:
            transcript.finish(status)
        return status
    assert agent.stdin is not None and agent.stdout is not None
    for signum in PASSED_SIGNALS:
        signal.signal(signum, lambda signum, frame: _pass_on(agent, signum))
    observer = None
    if config is not None and transcript is not None and any(fd == readable for fd, _ in transcript.fds):
        assert readable is not None
        observer = start_observer(config, readable)
    bell = Bell(None)
    if observer is not None:
        assert observer.stdin is not None
        bell = Bell(os.dup(observer.stdin.fileno()))
        observer.stdin.close()
    to_agent, from_agent = agent.stdin.fileno(), agent.stdout.fileno()
    inbound = threading.Thread(
        target=pump,
        args=(0, to_agent, "client_to_agent", transcript, bell, lambda: _close_to(0)),
        daemon=True,
    )
    outbound = threading.Thread(
        target=pump,
        args=(from_agent, 1, "agent_to_client", transcript, bell, lambda: _close_to(from_agent)),
        daemon=True,
    )
    inbound.start()
    outbound.start()
    returncode = agent.wait()
    outbound.join(drain_seconds)
    if outbound.is_alive():
        say(
            f"the agent's stdout is still open {drain_seconds:g} s after the agent exited (a child of it holds "
            "it?); exiting (--drain-seconds)"
        )
    status = exit_status(returncode)
    if transcript is not None:
        transcript.finish(status)
    bell.close()
    return status


def _pass_on(agent: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(OSError):
        agent.send_signal(signum)
