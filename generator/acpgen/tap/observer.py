"""The observer process of ``acpgen tap``: it reads the transcript the
proxy writes (through a file descriptor the proxy passes it, from its own
offset) and checks each record with a :class:`~acpgen.validate.Validator`
in a thread of its own behind a bounded queue, reporting each finding as it
is found, then a summary.

Its stdin is the proxy's bell: a byte each time records were written, and
its end when the proxy has gone (exited, or killed). The observer then
reads the transcript to its end, checks the rest and writes the summary:
the proxy does not wait for it, and it runs on after the proxy has exited
for as long as the checks take.

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

from .records import say

BACKLOG_LINES = 100_000
"""The most lines validation may fall behind before it stops (the default
of ``--max-backlog``)."""

BACKLOG_BYTES = 64 << 20
"""The most bytes of lines waiting for validation (one line is always taken)."""

HOLD_LINES = 1000
"""How many lines (at most :data:`BACKLOG_BYTES` of them) wait for
initialize's answer, which picks the package, before the default is taken."""

DEFAULT_PACKAGE = "acp_v1"

COALESCE_SECONDS = 0.002
"""How long the observer waits after reading, so that it wakes (and takes a
CPU from the session) at most about 500 times a second however many
messages pass; what is written meanwhile is read in one go."""

READ = 1 << 20
"""The most one read of the transcript takes."""


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

    def write(self, text: str, *, also_stderr: bool = False) -> None:
        """``text`` as one line, flushed; on stderr too when ``also_stderr``
        (the summary)."""
        if self.stream is not None:
            try:
                self.stream.write(text + "\n")
                self.stream.flush()
                if also_stderr:
                    say(text)
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
        self.queue: deque[tuple[bytes, str | None] | None] = deque()
        """(record, direction), None at the end."""
        self.size = 0
        self.ready = threading.Condition(threading.Lock())
        self.stopped = False
        self.why_stopped = ""
        """Why validation stopped before the end, if it did."""
        self.checked = 0
        """How many lines the validator was given."""
        self.errors = self.warnings = self.failures = 0
        self.validator: Any = None
        self.held: list[tuple[bytes, str | None]] = []
        self.asked: dict[Any, Any] = {}
        """initialize requests seen: id -> the protocol version asked for."""
        self.thread = threading.Thread(target=self.work, name="acpgen-tap-checks", daemon=True)

    # -- the recorder's side
    def put(self, item: tuple[bytes, str | None]) -> None:
        with self.ready:
            if self.stopped:
                return
            size = len(item[0])
            if self.queue and (len(self.queue) >= self.max_backlog or self.size + size > BACKLOG_BYTES):
                self.stopped = True
                self.why_stopped = "validation fell behind"
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

    def stop(self, why: str) -> None:
        """No more validation."""
        with self.ready:
            self.stopped = True
            self.why_stopped = why
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

    def negotiated(self, record_line: bytes, direction: str | None) -> int | None:
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
            self.stop(f"cannot validate: {exc}")
            return
        say(f"checking against {name} ({why})")

    def check(self, record_line: bytes, direction: str | None) -> None:
        if self.validator is None:
            return
        self.checked += 1
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


def direction_of(line: bytes) -> str | None:
    """The direction of a record the proxy wrote (None for the start and end
    records, or a line cut short)."""
    if line.startswith(b'{"direction": "client_to_agent"'):
        return "client_to_agent"
    if line.startswith(b'{"direction": "agent_to_client"'):
        return "agent_to_client"
    return None


class Reader:
    """The transcript's records from ``fd``, read from an offset of our own
    (``os.pread``: the proxy appends through its own descriptor), each whole
    line as it is complete."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.offset = 0
        self.part = b""
        self.lines = 0
        self.failed = False

    def read(self) -> list[bytes] | None:
        """The whole lines of the next :data:`READ` bytes written (maybe
        none); None at the end of what is written so far."""
        if self.failed:
            return None
        try:
            data = os.pread(self.fd, READ, self.offset)
        except OSError as exc:
            say(f"cannot read the transcript: {exc.strerror or exc}; the checks stop here")
            self.failed = True
            return None
        if not data:
            return None
        self.offset += len(data)
        if self.part:
            data = self.part + data
        cut = data.rfind(b"\n") + 1
        self.part = data[cut:]
        lines = data[: cut - 1].split(b"\n") if cut else []  # at \n only: a JSON line may hold a \r
        self.lines += len(lines)
        return lines

    def rest(self) -> list[bytes]:
        """A last line with no newline (the proxy was killed while writing it)."""
        part, self.part = self.part, b""
        if part:
            self.lines += 1
            return [part]
        return []


def observe(config: dict[str, Any], bell: int = 0) -> None:
    reader = Reader(config["transcript_fd"])
    checks = Checks(config)
    checks.thread.start()
    put = checks.put
    while True:
        try:
            rung = os.read(bell, 1 << 16)
        except OSError:
            rung = b""
        while (lines := reader.read()) is not None:
            for line in lines:
                put((line, direction_of(line)))
        if reader.failed and not checks.stopped:
            checks.stop("cannot read the transcript")
        if not rung:
            break
        time.sleep(COALESCE_SECONDS)
    for line in reader.rest():
        put((line, direction_of(line)))
    checks.close()
    checks.thread.join()
    summary = f"summary: {reader.lines} lines, {checks.errors} error(s), {checks.warnings} warning(s)"
    if checks.failures:
        summary += f", {checks.failures} line(s) the checks failed on"
    if checks.why_stopped:
        summary += f"; not checked past line {checks.checked}: {checks.why_stopped}"
    out = config.get("out")
    if out is not None and reader.lines:
        summary += f"; transcript {out}"
    checks.out.write(summary, also_stderr=True)


def main() -> None:
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)  # the end of stdin ends this process
    with contextlib.suppress(OSError):
        os.nice(10)  # on a busy machine the session's processes go first
    observe(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
