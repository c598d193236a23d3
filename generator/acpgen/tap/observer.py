"""The observer process of ``acpgen tap``: the proxy's frames (see
:mod:`.frames`) on stdin, split into lines per direction, each line written
to the transcript as a record and checked by a :class:`~acpgen.validate.Validator`
in a thread of its own behind a bounded queue.

A record is ``{"direction": ..., "timestamp": ..., "message": LINE}`` with
the line's bytes as they were (when the line is one JSON value), else
``{"direction": ..., "timestamp": ..., "line": TEXT}`` (not JSON; bytes
that are not UTF-8 as ``\\udcXX`` escapes) or ``..., "omitted": N}`` (a line
longer than the limit, not held). ``acpgen validate`` reads all three, and
the validator checks the records themselves: the findings live and offline
are the same.

    python -m acpgen.tap.observer CONFIG_JSON
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections import deque
from typing import IO, Any

from . import frames

try:  # as the validator does: the fast parser when it is there
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None  # type: ignore[assignment]

BACKLOG_LINES = 100_000
"""The most lines validation may fall behind before it stops (the default
of ``--max-backlog``)."""

BACKLOG_BYTES = 64 << 20
"""The most bytes of lines waiting for validation (one line is always taken)."""

HOLD_LINES = 1000
"""How many lines (at most :data:`BACKLOG_BYTES` of them) wait for
initialize's answer, which picks the package, before the default is taken."""

DEFAULT_PACKAGE = "acp_v1"


def say(text: str) -> None:
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
        lines: list[bytes | int] = []
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


class Findings:
    """Where findings go: stderr (prefixed ``acpgen tap:``) or a file; a file
    that cannot be written is said once and stderr takes over."""

    def __init__(self, path: str | None) -> None:
        self.stream: IO[str] | None = None
        self.path = path
        if path is not None:
            try:
                self.stream = open(path, "w", encoding="utf-8", errors="backslashreplace")  # noqa: SIM115
            except OSError as exc:
                say(f"cannot write the findings to {path}: {exc.strerror or exc}; they go to stderr")

    def write(self, text: str) -> None:
        if self.stream is not None:
            try:
                self.stream.write(text + "\n")
                self.stream.flush()
                return
            except OSError as exc:
                say(f"cannot write the findings to {self.path}: {exc.strerror or exc}; they go to stderr")
                self.stream = None
        say(text)


def describe(finding: Any) -> str:
    """One line: where (line, direction), the level, the kind, the JSON
    pointer and the message."""
    where = f"line {finding.line}" + (f" ({finding.direction})" if finding.direction else "")
    label = "error" if finding.error else "warning"
    at = f" at {finding.pointer}" if finding.pointer else ""
    return f"{where}: {label}: {finding.kind}{at}: {finding.message}"


class Checks:
    """The validation thread: lines from a bounded queue to the validator,
    findings out as they are found. Falling behind (``max_backlog`` lines or
    :data:`BACKLOG_BYTES` waiting) stops it, said; an exception of the
    engine is said once (later ones counted) and checking goes on."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.out = Findings(config.get("findings"))
        self.max_backlog: int = config.get("max_backlog") or BACKLOG_LINES
        self.queue: deque[tuple[bytes, str] | None] = deque()
        """(record, direction), None at the end."""
        self.size = 0
        self.ready = threading.Condition(threading.Lock())
        self.stopped = False
        self.errors = self.warnings = self.failures = 0
        self.validator: Any = None
        self.held: list[tuple[bytes, str]] = []
        self.asked: dict[Any, Any] = {}
        """initialize requests seen: id -> the protocol version asked for."""
        self.thread = threading.Thread(target=self.work, name="acpgen-tap-checks", daemon=True)

    # -- the recorder's side
    def put(self, item: tuple[bytes, str]) -> None:
        with self.ready:
            if self.stopped:
                return
            size = len(item[0])
            if self.queue and (len(self.queue) >= self.max_backlog or self.size + size > BACKLOG_BYTES):
                self.stopped = True
                self.queue.clear()
                self.size = 0
                self.ready.notify()
                say(
                    f"validation fell behind ({self.max_backlog} lines or {BACKLOG_BYTES >> 20} MiB waiting) and "
                    "stops here; forwarding and the transcript go on (check the transcript with acpgen validate)"
                )
                return
            self.queue.append(item)
            self.size += size
            self.ready.notify()

    def close(self) -> None:
        with self.ready:
            self.queue.append(None)
            self.ready.notify()

    def stop(self) -> None:
        """No more validation (the traffic seen is no longer whole)."""
        with self.ready:
            self.stopped = True
            self.queue.clear()
            self.ready.notify()

    # -- the thread
    def work(self) -> None:
        package = self.config.get("package")
        if package:
            self.start(package, "--package")
        held_bytes = 0
        while True:
            with self.ready:
                while not self.queue and not self.stopped:
                    self.ready.wait()
                if self.stopped:
                    return
                item = self.queue.popleft()
                if item is not None:
                    self.size -= len(item[0])
            if item is None:
                break
            if self.validator is None and not package:
                self.held.append(item)
                held_bytes += len(item[0])
                version = self.negotiated(*item)
                if version is None and len(self.held) < HOLD_LINES and held_bytes <= BACKLOG_BYTES:
                    continue
                self.choose(version)
                held, self.held = self.held, []
                for line in held:
                    self.check(*line)
                continue
            self.check(*item)
        if self.validator is None and self.held:
            self.choose(None)
            for line in self.held:
                self.check(*line)
        if self.validator is not None:
            self.report(self.validator.close())

    def negotiated(self, record_line: bytes, direction: str) -> int | None:
        """The protocol version initialize's answer names, once it passes."""
        try:
            message = json.loads(record_line.decode("utf-8")).get("message")
        except (ValueError, RecursionError):
            return None
        if not isinstance(message, dict):
            return None
        params, result = message.get("params"), message.get("result")
        if direction == "client_to_agent" and message.get("method") == "initialize" and isinstance(params, dict):
            self.asked[_key(message.get("id"))] = params.get("protocolVersion")
        elif direction == "agent_to_client" and _key(message.get("id")) in self.asked:
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if type(version) is int:
                return version
            asked = self.asked[_key(message.get("id"))]
            return asked if type(asked) is int else DEFAULT_VERSION
        return None

    def choose(self, version: int | None) -> None:
        if version is None:
            asked = [v for v in self.asked.values() if type(v) is int]
            if asked:
                name, why = f"acp_v{asked[-1]}", "the version initialize asked for; no answer seen"
            else:
                name, why = DEFAULT_PACKAGE, "the default: no initialize seen"
        else:
            name, why = f"acp_v{version}", f"protocol version {version}, negotiated at initialize"
        self.start(name, why)

    def start(self, name: str, why: str) -> None:
        from ..errors import AcpgenError
        from ..validate import Validator, load_package

        try:
            package = load_package(name)
            # The limit is the recorder's, on the lines of traffic; a record is
            # longer than its line (escapes: at most 6 bytes a byte, and the
            # direction and timestamp), and is not held to it again.
            limit = self.config["max_line_bytes"] * 6 + 256
            self.validator = Validator(package, strict=bool(self.config.get("strict")), max_line_bytes=limit)
        except (AcpgenError, ImportError, SyntaxError) as exc:
            say(f"cannot validate: {exc}; the session is forwarded and recorded unchecked")
            self.stop()
            return
        say(f"checking against {name} ({why})")

    def check(self, record_line: bytes, direction: str) -> None:
        if self.validator is None:
            return
        try:
            found = self.validator.feed(record_line, direction)
        except Exception as exc:
            self.failures += 1
            if self.failures == 1:
                say(
                    f"internal error in the checks at line {self.validator.lines} ({exc!r}); that line is not "
                    "checked, checking and forwarding go on"
                )
            return
        self.report(found)

    def report(self, found: list[Any]) -> None:
        for finding in found:
            if finding.error:
                self.errors += 1
            else:
                self.warnings += 1
            self.out.write(describe(finding))


DEFAULT_VERSION = 1


def _key(request_id: Any) -> Any:
    return (type(request_id).__name__, request_id) if isinstance(request_id, (int, str)) else None


class Recorder:
    """The transcript: records written as the lines end, each batch in one
    write; a write that fails (a full disk) is said once and recording stops."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.fd: int | None = None
        if path is not None:
            try:
                self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            except OSError as exc:
                say(f"cannot write the transcript {path}: {exc.strerror or exc}; not recording (forwarding goes on)")
        self.pending: list[bytes] = []
        self.lines = 0

    def add(self, line: bytes) -> None:
        self.lines += 1
        if self.fd is not None:
            self.pending.append(line)

    def flush(self) -> None:
        if self.fd is None or not self.pending:
            return
        data = memoryview(b"".join(self.pending))
        self.pending.clear()
        try:
            while data:
                data = data[os.write(self.fd, data) :]
        except OSError as exc:
            say(
                f"cannot write the transcript {self.path}: {exc.strerror or exc}; it stops before line "
                f"{self.lines} (forwarding and the checks go on)"
            )
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None

    def close(self) -> None:
        self.flush()
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def observe(config: dict[str, Any], source: int = 0) -> None:
    limit: int = config["max_line_bytes"]
    recorder = Recorder(config.get("out"))
    checks = Checks(config)
    checks.thread.start()
    splitters = {kind: Splitter(limit) for kind in frames.DIRECTIONS}
    stamps = Stamps()
    buffer = bytearray()
    header = frames.HEADER
    failed = False
    dropped = False
    while not dropped:
        try:
            data = os.read(source, 1 << 20)
        except OSError:
            data = b""
        if not data:
            break
        buffer += data
        offset = 0
        while len(buffer) - offset >= header.size:
            kind, when, length = header.unpack_from(buffer, offset)
            if len(buffer) - offset - header.size < length:
                break
            start = offset + header.size
            chunk = bytes(buffer[start : start + length])
            offset = start + length
            try:
                if kind == frames.DROPPED:
                    checks.stop()
                    dropped = True
                    break
                direction = kind if kind in frames.DIRECTIONS else frames.ENDS[kind]
                lines = splitters[direction].feed(chunk) if kind in frames.DIRECTIONS else splitters[direction].end()
                name = frames.DIRECTIONS[direction]
                for line in lines:
                    entry = record(name, stamps(when), line)
                    recorder.add(entry)
                    checks.put((entry, name))
            except Exception as exc:  # a bug of ours: said once, the rest goes on
                if not failed:
                    failed = True
                    say(f"internal error recording ({exc!r}); recording goes on")
        del buffer[:offset]
        recorder.flush()
    recorder.close()
    checks.close()
    checks.thread.join()
    summary = f"{recorder.lines} lines, {checks.errors} error(s), {checks.warnings} warning(s)"
    if checks.failures:
        summary += f", {checks.failures} line(s) the checks failed on"
    if recorder.path is not None and recorder.lines:
        summary += f"; transcript {recorder.path}"
    say(summary)


def main() -> None:
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)  # the end of stdin ends this process
    with contextlib.suppress(OSError):
        os.nice(10)  # on a busy machine the session's processes go first
    observe(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
