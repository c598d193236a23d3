"""The forwarding process of ``acpgen tap``: the agent between our stdin and
stdout, every byte passed on as it is read, a copy of each chunk queued for
the observer (see the package's docstring)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from . import frames

CHUNK = 1 << 16
"""The most one read takes (a pipe's buffer on Linux)."""

BACKLOG_BYTES = 64 << 20
"""The most the proxy holds for an observer that does not keep up (or hangs):
past it the observation is dropped, never a byte of the session."""

DRAIN_SECONDS = 2.0
"""After the agent exits, how long its stdout is still read (a child of the
agent may hold it open)."""

FINISH_SECONDS = 5.0
"""After the session, how long the observer has to write the last of the
transcript and its last findings before it is stopped."""

COALESCE_SECONDS = 0.002
"""How long the observer's feeder waits after each write, so that the
observer wakes (and takes a CPU from the session) at most about 500 times a
second however many messages pass; what arrives meanwhile goes in one write."""

PASSED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals passed on to the agent instead of ending the proxy."""


def say(text: str) -> None:
    """A line on stderr, which the agent shares: written whole, in one call,
    and never raising (stderr may be gone)."""
    with contextlib.suppress(OSError, ValueError):
        os.write(2, f"acpgen tap: {text}\n".encode("utf-8", "backslashreplace"))


class Backlog:
    """The chunks the observer has not taken yet. :meth:`put` never blocks:
    past ``limit`` bytes the whole backlog is dropped, said once, and the
    observer is told (a ``DROPPED`` frame) and gets nothing more."""

    def __init__(self, limit: int = BACKLOG_BYTES) -> None:
        self.limit = limit
        self.ready = threading.Condition(threading.Lock())
        self.items: deque[tuple[int, float, bytes]] = deque()
        self.size = 0
        self.dropped = False
        self.closed = False
        self.told = False
        """Whether the observer was sent the DROPPED frame."""

    def put(self, kind: int, when: float, data: bytes = b"") -> None:
        with self.ready:
            if self.dropped or self.closed:
                return
            if self.size + len(data) > self.limit and self.items:
                self.dropped = True
                self.items.clear()
                self.size = 0
                self.ready.notify()  # the feeder says so: stderr may block, forwarding must not
                return
            self.items.append((kind, when, data))
            self.size += len(data)
            self.ready.notify()

    def close(self) -> None:
        with self.ready:
            self.closed = True
            self.ready.notify()

    def take(self) -> list[tuple[int, float, bytes]] | None:
        """What is waiting, once there is something; None once closed and
        empty (or dropped and the observer told)."""
        with self.ready:
            while not self.items and not self.closed and not (self.dropped and not self.told):
                self.ready.wait()
            if self.dropped:
                if self.told:
                    return None
                self.told = True
                return [(frames.DROPPED, time.time(), b"")]
            if not self.items:
                return None
            batch = list(self.items)
            self.items.clear()
            self.size = 0
            return batch


def feed_observer(backlog: Backlog, fd: int, finished: threading.Event) -> None:
    """Write the backlog's frames to the observer's stdin until the backlog
    is closed, then close it. An observer that has gone is said once (unless
    the session is over) and the rest is dropped."""
    pack = frames.HEADER.pack
    try:
        while True:
            batch = backlog.take()
            if batch is None:
                break
            if batch[0][0] == frames.DROPPED:
                say(
                    f"the recorder fell behind ({backlog.limit >> 20} MiB waiting): the transcript and the checks "
                    "stop here; forwarding goes on"
                )
            parts: list[bytes] = []
            for kind, when, chunk in batch:
                parts.append(pack(kind, when, len(chunk)))
                if chunk:
                    parts.append(chunk)
            _writev_all(fd, parts)
            time.sleep(COALESCE_SECONDS)
    except OSError:
        with backlog.ready:
            backlog.dropped = backlog.told = True
            backlog.items.clear()
        if not finished.is_set():
            say("the checks stopped (their process ended); forwarding goes on")
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def _writev_all(fd: int, parts: list[bytes]) -> None:
    """Write ``parts`` in as few calls as the pipe takes, copying none."""
    views = [memoryview(part) for part in parts]
    while views:
        written = os.writev(fd, views[:IOV_MAX])
        while views and written >= len(views[0]):
            written -= len(views[0])
            views.pop(0)
        if written:
            views[0] = views[0][written:]


IOV_MAX = 1024
"""The most buffers one writev takes (Linux's UIO_MAXIOV)."""


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


def pump(source: int, sink: int, kind: int, end: int, backlog: Backlog, sink_gone: Callable[[], None]) -> None:
    """Pass every byte from ``source`` to ``sink`` as it is read, queueing a
    copy for the observer first (so that a request is recorded before any
    answer to it can be). At the end of ``source`` ``sink`` is closed; when
    ``sink``'s reader has gone, ``sink_gone`` closes ``source`` for its
    writer, as a direct pipe would."""
    read, write, put, now = os.read, os.write, backlog.put, time.time
    try:
        while True:
            try:
                data = read(source, CHUNK)
            except OSError:
                data = b""
            if not data:
                break
            try:
                put(kind, now(), data)
            except Exception as exc:  # never the forwarding's business
                say(f"internal error queueing for the checks: {exc!r}; forwarding goes on")
            try:
                written = write(sink, data)
                if written < len(data):
                    _write_all(sink, data[written:])
            except OSError:
                sink_gone()
                return
    finally:
        backlog.put(end, now())
    _close_to(sink)


def exit_status(returncode: int) -> int:
    """The agent's status as a shell reports it: 128 + the signal if a
    signal ended it."""
    return 128 - returncode if returncode < 0 else returncode


def start_observer(config: dict[str, Any]) -> subprocess.Popen[bytes] | None:
    """The observer process (``python -m acpgen.tap.observer CONFIG``), in a
    process group of its own so that a terminal's Ctrl-C does not end it; it
    ends at the end of its stdin. None (said) if it cannot start."""
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "acpgen.tap.observer", json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            **_own_group(),
        )
    except OSError as exc:
        say(f"cannot start the checks ({exc}); forwarding only")
        return None


def _own_group() -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        return {"process_group": 0}
    return {"preexec_fn": os.setpgrp}  # before any thread of ours starts


def run(command: Sequence[str], config: dict[str, Any] | None) -> int:
    """Start ``command`` with its stdin and stdout piped to ours, forward
    until it exits, and return its exit status (127 or 126 when it cannot be
    started, as a shell says). ``config``: the observer's, or None for no
    recording nor checks."""
    try:
        agent = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, **_own_group())
    except OSError as exc:
        say(f"cannot start the agent {command[0]!r}: {exc.strerror or exc}")
        return 127 if isinstance(exc, FileNotFoundError) else 126
    assert agent.stdin is not None and agent.stdout is not None
    for signum in PASSED_SIGNALS:
        signal.signal(signum, lambda signum, frame: _pass_on(agent, signum))
    observer = start_observer(config) if config is not None else None
    backlog = Backlog()
    if observer is None:
        backlog.close()
    finished = threading.Event()
    feeder = None
    if observer is not None:
        assert observer.stdin is not None
        fd = os.dup(observer.stdin.fileno())
        observer.stdin.close()
        feeder = threading.Thread(target=feed_observer, args=(backlog, fd, finished), daemon=True)
        feeder.start()
    to_agent, from_agent = agent.stdin.fileno(), agent.stdout.fileno()
    inbound = threading.Thread(
        target=pump,
        args=(0, to_agent, frames.CLIENT_TO_AGENT, frames.END_CLIENT_TO_AGENT, backlog, lambda: _close_to(0)),
        daemon=True,
    )
    outbound = threading.Thread(
        target=pump,
        args=(
            from_agent,
            1,
            frames.AGENT_TO_CLIENT,
            frames.END_AGENT_TO_CLIENT,
            backlog,
            lambda: _close_to(from_agent),
        ),
        daemon=True,
    )
    inbound.start()
    outbound.start()
    returncode = agent.wait()
    outbound.join(DRAIN_SECONDS)
    finished.set()
    backlog.close()
    if observer is not None and feeder is not None:
        feeder.join(FINISH_SECONDS)
        try:
            observer.wait(FINISH_SECONDS)
        except subprocess.TimeoutExpired:
            say(f"the checks did not finish within {FINISH_SECONDS:g} s of the agent's exit; stopped")
            observer.kill()
            observer.wait()
    return exit_status(returncode)


def _pass_on(agent: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(OSError):
        agent.send_signal(signum)
