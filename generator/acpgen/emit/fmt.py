"""Stage 5, format: ``ruff format``, black's style, in one subprocess per run.

The templates print every line, so formatting only wraps what is too long
and normalises quotes; ruff does that for the four ACP packages (100,000
lines) in well under a second, where black took minutes. black leaves its
output as it is (the test suite runs black over the generated packages), so
the code is in black's style. Nothing is cached: each run formats what it
rendered, and what it writes is only ever what the formatter returned, except
acpgen's runtime modules copied as they are, which the formatter leaves
unchanged (the test suite checks it) and so does not see.

The formatter runs with its configuration fixed here (``--isolated``: no
``pyproject.toml`` or ``ruff.toml`` of the machine takes part), on copies of
the sources in a temporary directory. It is a child process that ends with
its parent: when acpgen stops, however it stops, the formatter is killed.
One that runs longer than :data:`TIMEOUT` is killed, and the run fails
saying so.

The temporary directory (``acpgen-format-*`` in the system's temporary
directory, :mod:`acpgen.scratch`) goes when formatting ends, however it
ends: an error, a killed or timed-out formatter, Ctrl-C, SIGTERM, SIGHUP;
after a SIGKILL, the next format deletes it.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ..errors import AcpgenError
from ..scratch import scratch

LINE_LENGTH = 88
TARGET_VERSION = "py310"
TIMEOUT = 300.0
"""Seconds the formatter may take for one run (the four ACP packages take
well under one)."""
SCRATCH_PREFIX = "acpgen-format-"
"""The temporary directories' prefix (earlier versions, which did not lock
theirs, used ``acpgen-fmt-``: those are never swept, as a run of such a
version may still be using one)."""

_ARGS = (
    "format",
    "--isolated",
    "--no-cache",
    f"--line-length={LINE_LENGTH}",
    f"--target-version={TARGET_VERSION}",
)


def format_files(files: dict[str, str], *, piece_lines: int | None = None) -> dict[str, str]:
    """``{path: source}`` with every ``.py`` file formatted; other files as
    they are. A file that does not parse is a generator error naming it.

    A file longer than ``piece_lines`` (default :data:`PIECE_LINES`) is
    formatted in pieces cut before top-level ``def``, ``class`` or decorator
    lines, which the formatter treats independently and separates by two
    blank lines: the pieces are formatted in parallel and the formatter's
    memory stays that of one piece (the test suite checks that the result is
    that of the whole file). A cut that was not at a statement boundary
    (inside a string, say) leaves a piece that does not parse; then the file
    is formatted whole.
    """
    jobs = {path: text for path, text in files.items() if path.endswith(".py") and not _runtime_copy(text)}
    if not jobs:
        return dict(files)
    limit = PIECE_LINES if piece_lines is None else piece_lines
    pieces = {path: _cut(text, limit) for path, text in jobs.items()}
    try:
        done = _format_pieces(pieces)
    except AcpgenError:
        if all(len(parts) == 1 for parts in pieces.values()):
            raise
        done = _format_pieces({path: [text] for path, text in jobs.items()})
    return {path: done.get(path, text) for path, text in files.items()}


def _runtime_copy(text: str) -> bool:
    """``text`` is one of acpgen's runtime modules as it is, behind ``#``
    comment lines (the generated header): source the formatter leaves as it
    is (the test suite checks each module is), so it is not formatted again."""
    for source in _runtime_sources():
        if text.endswith(source):
            head = text[: len(text) - len(source)]
            return all(line.startswith("#") for line in head.splitlines())
    return False


def _runtime_sources() -> tuple[str, ...]:
    global _RUNTIME
    if _RUNTIME is None:
        from ..runtime import SOURCES

        _RUNTIME = tuple(path.read_text(encoding="utf-8") for path in SOURCES.values())
    return _RUNTIME


_RUNTIME: tuple[str, ...] | None = None


PIECE_LINES = 5_000
"""Files up to this many lines are formatted whole; longer ones (the ACP
codecs have 13,000 to 20,000) in pieces of about this size."""

_CUT = re.compile(r"\n\n(?=(?:def |class |async def |@))")


def _cut(text: str, limit: int) -> list[str]:
    """``text`` in pieces of at least ``limit`` lines, each but the first
    starting at a column-0 ``def``/``class``/decorator after a blank line."""
    if text.count("\n") <= limit:
        return [text]
    parts: list[str] = []
    start = 0
    lines = 0
    position = 0
    for match in _CUT.finditer(text):
        lines += text.count("\n", position, match.start())
        position = match.start()
        if lines >= limit:
            parts.append(text[start : match.start() + 1])
            start = match.end()
            lines = 0
    parts.append(text[start:])
    return parts


def _format_pieces(pieces: dict[str, list[str]]) -> dict[str, str]:
    with scratch(SCRATCH_PREFIX) as temp:
        # Flat numbered copies: the paths are "<package>/<module>.py".
        names = {
            (path, index): f"m{number}_{index}.py"
            for number, (path, parts) in enumerate(pieces.items())
            for index in range(len(parts))
        }
        for (path, index), name in names.items():
            Path(temp, name).write_text(pieces[path][index], encoding="utf-8")
        _run(temp, {name: path for (path, _), name in names.items()})
        # Two blank lines before a top-level def or class, as in a whole file.
        return {
            path: "\n\n".join(Path(temp, names[path, index]).read_text(encoding="utf-8") for index in range(len(parts)))
            for path, parts in pieces.items()
        }


def format_source(source: str, name: str) -> str:
    """``source`` formatted; ``name`` is what an error calls the file."""
    return format_files({name if name.endswith(".py") else f"{name}.py": source}).popitem()[1]


def ruff_binary() -> str:
    """The ``ruff`` executable installed with acpgen."""
    try:
        from ruff.__main__ import find_ruff_bin
    except ImportError:  # pragma: no cover - ruff is a dependency
        raise AcpgenError("ruff is not installed: pip install ruff") from None
    try:
        return os.fsdecode(find_ruff_bin())
    except FileNotFoundError:  # pragma: no cover
        raise AcpgenError("the ruff executable was not found: reinstall ruff") from None


def _run(directory: str, originals: dict[str, str]) -> None:
    process = subprocess.Popen(
        [ruff_binary(), *_ARGS, "."],
        cwd=directory,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_die_with(os.getpid()) if sys.platform == "linux" else None,
    )
    try:
        out, err = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AcpgenError(
            f"ruff format did not finish within {TIMEOUT:g} seconds and was stopped; nothing was written"
        ) from None
    finally:
        # Interrupted (Ctrl-C, an exception, the timeout): the formatter goes too.
        if process.poll() is None:
            process.kill()
            process.wait()
    if process.returncode == 0:
        return
    message = re.sub(r"\x1b\[[0-9;]*m", "", (err or out).decode("utf-8", "replace"))
    for name, path in originals.items():
        found = re.search(rf"{re.escape(name)}:(\d+):(\d+): (.*)", message)
        if found:
            line, column, reason = found.groups()
            raise AcpgenError(
                f"the rendered code does not parse: {reason.strip()} (line {line}, column {column})", file=path
            )
    raise AcpgenError(f"ruff format failed (exit {process.returncode}): {message.strip()}")


def _die_with(parent: int) -> Callable[[], None]:
    """In the child, before exec: ask Linux to kill it when acpgen dies, even
    by SIGKILL, which leaves no chance to clean up."""

    def arm() -> None:
        import ctypes

        PR_SET_PDEATHSIG = 1
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # acpgen died before the request was made
            os._exit(1)

    return arm
