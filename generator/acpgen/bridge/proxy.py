"""The bridge between two processes: the client on this process's stdio,
the agent a subprocess.

Two reader threads (the client's lines, the agent's lines) hand each
message to the :class:`~.translate.Bridge` under one lock, and queue what it
gives to two writer threads (one per peer), so a peer that stops reading
never holds the other direction. What waits for a peer is bounded
(:class:`Outbox`): once a message has put lines for a peer past the bound,
its reader reads on only when that peer has taken them down to it, as a pipe
between the two would have it. A line that is not a JSON object (nested
deeper than the parser goes included) is passed on as it is, and said once
on the loss log. A message the bridge cannot translate or write as JSON is
never passed on untranslated: a request is answered with a -32603 error,
any other message is dropped, and either is said on the loss log. The
bridge ends when the agent has exited and its output is drained, with the
agent's exit status; the client closing its side closes the agent's stdin.
"""

from __future__ import annotations

import collections
import contextlib
import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import IO, Any

from ..jsontypes import JsonObject
from .shapes import VALUE_CHARS, LostValue, show
from .translate import Bridge, Routed

_CLOSE = b""


class LossLog:
    """Where lost values are recorded: JSON lines in a file, or one
    readable line each on stderr."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.stream: IO[str] = open(path, "w", encoding="utf-8") if path else sys.stderr  # noqa: SIM115
        self.lock = threading.Lock()

    def write(self, lost: list[LostValue]) -> None:
        with self.lock:
            for item in lost:
                if self.path:
                    self.stream.write(json.dumps(item.record(), ensure_ascii=False) + "\n")
                else:
                    where = f"{item.method} {item.path or '(whole message)'}"
                    self.stream.write(
                        f"acpgen bridge: lost {item.direction} from the {item.sender}: {where}: {item.value}"
                        f" ({item.reason})\n"
                    )
            self.stream.flush()

    def note(self, text: str) -> None:
        with self.lock:
            if self.path:
                self.stream.write(json.dumps({"note": text}) + "\n")
            else:
                self.stream.write(f"acpgen bridge: {text}\n")
            self.stream.flush()

    def close(self) -> None:
        if self.path:
            self.stream.close()


OUTBOX_BYTES = 4 * 1024 * 1024
"""How many bytes of lines may wait for a peer before the reader that made
them waits too (4 MiB; a single longer line still goes, alone)."""


class Outbox:
    """The lines waiting for one peer's writer thread, counted in bytes.

    :meth:`put` never blocks (a reader holds the bridge's lock then); the
    reader whose message put lines here calls :meth:`drain` once it has let
    the lock go, and waits there while more than ``limit`` bytes wait. So
    what the bridge holds is bounded whatever a peer stops reading, and only
    what goes to that peer waits. Once the writer has stopped (the peer
    closed its input), lines are dropped and no reader waits."""

    def __init__(self, limit: int = OUTBOX_BYTES) -> None:
        self.limit = limit
        self.size = 0
        """The bytes waiting."""
        self.stopped = False
        self.waiting = threading.Event()
        """Set while a reader waits in :meth:`drain` (for tests to see)."""
        self._lines: collections.deque[bytes] = collections.deque()
        self._changed = threading.Condition()

    def put(self, line: bytes) -> None:
        with self._changed:
            if not self.stopped:
                self._lines.append(line)
                self.size += len(line)
                self._changed.notify_all()

    def get(self) -> bytes:
        """The next line, waiting for one."""
        with self._changed:
            while not self._lines:
                self._changed.wait()
            line = self._lines.popleft()
            self.size -= len(line)
            self._changed.notify_all()
            return line

    def drain(self) -> None:
        """Wait while more than ``limit`` bytes wait (and the writer runs)."""
        with self._changed:
            while self.size > self.limit and not self.stopped:
                self.waiting.set()
                self._changed.wait()
            self.waiting.clear()

    def stop(self) -> None:
        """The writer has stopped: drop what waits, and what comes."""
        with self._changed:
            self.stopped = True
            self._lines.clear()
            self.size = 0
            self._changed.notify_all()


def _writer(stream: IO[bytes], lines: Outbox) -> None:
    while True:
        line = lines.get()
        if line is _CLOSE:
            break
        try:
            stream.write(line)
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            break
    lines.stop()
    with contextlib.suppress(BrokenPipeError, OSError):
        stream.close()


def _encode(message: JsonObject) -> bytes:
    """``message`` as a line of JSON; ValueError for a float JSON has no
    form for (NaN, Infinity), TypeError for a value that is no JSON."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


def _refusal(message: JsonObject, reason: str) -> bytes | None:
    """The -32603 answer to ``message`` when it is a request the bridge
    could not translate; None for any other message."""
    if not isinstance(message.get("method"), str) or "id" not in message:
        return None
    error = {"code": -32603, "message": f"Internal error: the bridge could not translate the request ({reason})"}
    try:
        return _encode({"jsonrpc": "2.0", "id": message["id"], "error": error})
    except (TypeError, ValueError):  # an id JSON has no form for (NaN)
        return _encode({"jsonrpc": "2.0", "id": None, "error": error})


def _show(message: JsonObject) -> str:
    """``message`` for the loss log (cut), whatever it holds."""
    try:
        return show(message)
    except (TypeError, ValueError, RecursionError):
        return repr(message)[:VALUE_CHARS]


DEFAULT_MAX_MESSAGE = 64 * 1024 * 1024
"""The longest line the bridge reads from either peer (64 MiB, as the
generated packages' connections)."""

_TOO_LARGE = object()


def _lines(source: IO[bytes], limit: int) -> Iterator[bytes | object]:
    """The lines of ``source``; a line over ``limit`` bytes (its newline not
    counted) is read to its end in pieces, never whole, and given as
    ``_TOO_LARGE``."""
    while True:
        line = source.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = source.readline(limit + 1)
        yield _TOO_LARGE


def _too_large(limit: int) -> bytes:
    return _encode(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32600, "message": f"Invalid Request: a message over {limit} bytes was dropped"},
        }
    )


def pump(
    source: IO[bytes],
    translate: Callable[[JsonObject], Routed],
    outboxes: tuple[Outbox, Outbox],
    who: str,
    lock: threading.Lock,
    log: LossLog,
    max_message: int = DEFAULT_MAX_MESSAGE,
) -> None:
    """Read the lines of ``source`` (the ``who`` peer) to its end, and put
    what ``translate`` (called under ``lock``) makes of each in the outboxes
    ``(onward, back)``: the other peer's and the sender's own. After each
    message, waits (no lock held) until the outboxes it put lines in have
    room (:meth:`Outbox.drain`)."""
    onward, back = outboxes
    to_agent, to_client = outboxes if who == "client" else (back, onward)
    for line in _lines(source, max_message):
        if not isinstance(line, bytes):
            log.note(f"a message from the {who} over {max_message} bytes, dropped and answered -32600")
            back.put(_too_large(max_message))
            back.drain()
            continue
        try:
            message: Any = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            message = None
        if not isinstance(message, dict):
            log.note(f"a line from the {who} that is no JSON object, passed on as it is")
            onward.put(line if line.endswith(b"\n") else line + b"\n")
            onward.drain()
            continue
        filled: list[Outbox] = []
        with lock:
            try:
                routed = translate(message)
                agent_lines = [_encode(out) for out in routed.to_agent]
                client_lines = [_encode(out) for out in routed.to_client]
            except Exception as error:
                # Never passed on untranslated: a request is answered -32603, anything else dropped.
                answer = _refusal(message, type(error).__name__)
                done = "answered -32603" if answer is not None else "dropped"
                log.note(f"cannot translate a message from the {who} ({error!r}): {done}: {_show(message)}")
                if answer is not None:
                    back.put(answer)
                    filled.append(back)
                agent_lines = client_lines = []
                routed = None
            for box, lines in ((to_agent, agent_lines), (to_client, client_lines)):
                for out in lines:
                    box.put(out)
                if lines:
                    filled.append(box)
        if routed is not None and routed.lost:
            log.write(routed.lost)
        for box in filled:  # only these: a peer that stops reading holds what goes to it, no more
            box.drain()


def run(
    bridge: Bridge,
    command: list[str],
    log: LossLog,
    max_message: int = DEFAULT_MAX_MESSAGE,
    outbox_bytes: int = OUTBOX_BYTES,
) -> int:
    """Runs ``command`` as the agent behind ``bridge``; its exit status. A
    line over ``max_message`` bytes from either peer is dropped, said on the
    loss log, and answered to its sender with a -32600 error of id null. At
    most about ``outbox_bytes`` wait for each peer (see :class:`Outbox`)."""
    try:
        agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except FileNotFoundError:
        log.note(f"no such command: {command[0]}")
        return 127
    assert agent.stdin is not None and agent.stdout is not None
    to_agent = Outbox(outbox_bytes)
    to_client = Outbox(outbox_bytes)
    lock = threading.Lock()
    client_out = sys.stdout.buffer

    writers = [
        threading.Thread(target=_writer, args=(agent.stdin, to_agent), daemon=True),
        threading.Thread(target=_writer, args=(client_out, to_client), daemon=True),
    ]
    for thread in writers:
        thread.start()

    def from_client() -> None:
        pump(sys.stdin.buffer, bridge.from_client, (to_agent, to_client), "client", lock, log, max_message)
        to_agent.put(_CLOSE)

    reader = threading.Thread(target=from_client, daemon=True)
    reader.start()

    def forward(signum: int, _frame: FrameType | None) -> None:
        if agent.poll() is None:
            agent.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        pump(agent.stdout, bridge.from_agent, (to_client, to_agent), "agent", lock, log, max_message)
        status = agent.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    to_client.put(_CLOSE)
    writers[1].join()
    to_agent.put(_CLOSE)
    return status if status >= 0 else 128 - status
