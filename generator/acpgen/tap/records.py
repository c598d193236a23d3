"""The transcript of ``acpgen tap``, written by the forwarding process itself
as it forwards: each chunk read is split into lines per direction, and the
records of the lines it completes are written (one ``os.write`` of whole
lines) before the chunk is passed on. A SIGKILL of the whole process tree
at any moment so loses at most the line being forwarded.

A transcript starts with a start record and, when tap ends normally (its
agent exited and the agent's stdout was drained), ends with an end record::

    {"start": "2026-12-01T18:35:02.311619Z", "recorder": "acpgen tap"}
    {"direction": "client_to_agent", "timestamp": "...", "message": LINE}
    ...
    {"end": "2026-12-01T18:35:04.000120Z", "status": 0}

A record of traffic is ``{"direction": ..., "timestamp": ..., "message":
LINE}`` with the line's bytes as they were (when the line is one JSON
value), else ``{"direction": ..., "timestamp": ..., "line": TEXT}`` (not
JSON; bytes that are not UTF-8 as ``\\udcXX`` escapes) or ``...,
"omitted": N}`` (a line longer than the limit, not held). ``acpgen
validate`` reads them all, and reports a transcript with a start record but
no end record as cut short (``cut-short``).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time

try:  # as the validator does: the fast parser when it is there
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None  # type: ignore[assignment]

DIRECTIONS = ("client_to_agent", "agent_to_client")


def say(text: str) -> None:
    """A line on stderr, which the agent shares: written whole, in one call,
    and never raising (stderr may be gone)."""
    with contextlib.suppress(OSError, ValueError):
        os.write(2, f"acpgen tap: {text}\n".encode("utf-8", "backslashreplace"))


class Splitter:
    """One direction's bytes as lines (without their ``\\n``): at most
    ``limit`` bytes of a line are held; a longer line becomes its length
    (an int) once it ends."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.part = bytearray()
        self.over = 0
        """The length of the line being skipped (over the limit), or 0."""

    def feed(self, data: bytes) -> list[bytes | int]:
        if not self.part and not self.over:  # the common case: whole short lines, one split
            lines: list[bytes | int] = data.split(b"\n")  # type: ignore[assignment]
            rest = lines.pop()
            if not lines or max(map(len, lines)) <= self.limit:  # type: ignore[arg-type]
                if rest:
                    self._hold(rest, 0, len(rest))  # type: ignore[arg-type]
                return lines
        lines = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                self._hold(data, start, len(data))
                return lines
            if not self.part and not self.over:
                if end - start <= self.limit:
                    lines.append(data[start:end])
                else:
                    lines.append(end - start)
            else:
                self._hold(data, start, end)
                lines.append(self.over or bytes(self.part))
                self.part.clear()
                self.over = 0
            start = end + 1

    def _hold(self, data: bytes, start: int, end: int) -> None:
        if self.over:
            self.over += end - start
        elif len(self.part) + end - start > self.limit:
            self.over = len(self.part) + end - start
            self.part = bytearray()
        else:
            self.part += data[start:end]

    def end(self) -> list[bytes | int]:
        """The last line, if the stream did not end with a newline."""
        if self.over or self.part:
            line: bytes | int = self.over or bytes(self.part)
            self.part, self.over = bytearray(), 0
            return [line]
        return []


def is_json(line: bytes) -> bool:
    """Whether ``line`` is one JSON value (what the validator would parse)."""
    if _orjson is not None:
        try:
            _orjson.loads(line)
            return True
        except _orjson.JSONDecodeError:
            pass
    try:
        json.loads(line.decode("utf-8"))
        return True
    except (ValueError, RecursionError):
        return False


class Stamps:
    """RFC 3339 UTC times with microseconds, the seconds part cached."""

    def __init__(self) -> None:
        self.second = -1
        self.prefix = ""

    def __call__(self, when: float) -> bytes:
        second = int(when)
        if second != self.second:
            self.second = second
            self.prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        return f"{self.prefix}.{int((when - second) * 1e6):06d}Z".encode("ascii")


def record(direction: str, stamp: bytes, line: bytes | int) -> bytes:
    """The transcript's line for one line of traffic."""
    head = b'{"direction": "' + direction.encode("ascii") + b'", "timestamp": "' + stamp + b'", '
    if isinstance(line, int):
        return head + b'"omitted": ' + str(line).encode("ascii") + b"}\n"
    if is_json(line):
        return head + b'"message": ' + line + b"}\n"
    text = json.dumps(line.decode("utf-8", "surrogateescape"))
    return head + b'"line": ' + text.encode("ascii") + b"}\n"


_HEADS = {direction: b'{"direction": "' + direction.encode("ascii") + b'", "timestamp": "' for direction in DIRECTIONS}


def start_record(stamp: bytes) -> bytes:
    return b'{"start": "' + stamp + b'", "recorder": "acpgen tap"}\n'


def end_record(stamp: bytes, status: int) -> bytes:
    return b'{"end": "' + stamp + b'", "status": ' + str(status).encode("ascii") + b"}\n"


class Transcript:
    """The records, written to ``fds`` (the transcript, and a file of the
    checks' own when the transcript is not a regular file they can read) as
    the lines end: one ``os.write`` of whole records a chunk, under a lock
    so that the two directions' records never interleave. A write that
    fails (a full disk) is said once and that file gets no more."""

    def __init__(self, fds: list[tuple[int, str]], limit: int) -> None:
        self.fds = list(fds)
        """(fd, its name for messages)"""
        self.lock = threading.Lock()
        self.splitters = {direction: Splitter(limit) for direction in DIRECTIONS}
        self.stamps = Stamps()
        self.lines = 0
        self.closed = False
        self._write(start_record(self.stamps(time.time())), 1)

    def add(self, direction: str, data: bytes, when: float) -> bool:
        """Record the lines ``data`` completes (read at ``when``); whether any."""
        with self.lock:
            if self.closed:
                return False
            lines = self.splitters[direction].feed(data)
            if not lines:
                return False
            head = _HEADS[direction] + self.stamps(when) + b'", "message": '
            parts: list[bytes] = []
            for line in lines:
                if type(line) is bytes and _orjson is not None:
                    try:
                        _orjson.loads(line)
                        parts += (head, line, b"}\n")
                        continue
                    except _orjson.JSONDecodeError:
                        pass
                parts.append(record(direction, self.stamps(when), line))
            self._write(b"".join(parts), len(lines))
            return True

    def end(self, direction: str, when: float) -> bool:
        """Record the last line of ``direction`` (its stream ended) if it had
        no newline; whether there was one."""
        with self.lock:
            if self.closed:
                return False
            lines = self.splitters[direction].end()
            if lines:
                self._write(record(direction, self.stamps(when), lines[0]), 1)
            return bool(lines)

    def finish(self, status: int) -> None:
        """The unfinished lines of both directions (forwarded, but with no
        newline yet), the end record; nothing is written after it."""
        when = time.time()
        for direction in DIRECTIONS:
            self.end(direction, when)
        with self.lock:
            if self.closed:
                return
            self._write(end_record(self.stamps(when), status), 1)
            self.closed = True
            for fd, _name in self.fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self.fds = []

    def _write(self, data: bytes, count: int) -> None:
        self.lines += count
        for entry in list(self.fds):
            fd, name = entry
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(fd, view) :]
            except OSError as exc:
                say(
                    f"cannot write the transcript {name}: {exc.strerror or exc}; it stops before line "
                    f"{self.lines - count + 1} (forwarding goes on)"
                )
                self.fds.remove(entry)
                with contextlib.suppress(OSError):
                    os.close(fd)
