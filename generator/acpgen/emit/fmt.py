"""Stage 5, format: ``ruff format``, black's style, in one subprocess per run
(two when the pieces it was given cannot be trusted: :func:`format_files`).

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
import heapq
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
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


def format_files(files: dict[str, str], *, batch_lines: int | None = None, whole: bool = False) -> dict[str, str]:
    """``{path: source}`` with every ``.py`` file formatted; other files as
    they are. A file that does not parse is a generator error naming it and
    the line.

    The formatter sees the files' top-level definitions apart: each file is
    cut before every top-level ``def``, ``async def``, ``class`` or
    decorator line that follows a blank line (except where what comes
    before may tie the two: see :func:`_cut`), pieces the formatter treats
    independently and separates by two blank lines. A piece several files
    hold (the packages of one protocol version share most of their
    definitions) is formatted once. The pieces go to the formatter packed in
    files of about ``batch_lines`` lines (default :data:`BATCH_LINES`): each
    file's first piece (its docstring and imports) opens one, the others
    follow each behind a marker comment line by which the formatted text is
    cut apart again; a file of one piece goes as it is. So the formatter
    runs in parallel over files of like size, and its memory stays that of
    one. The test suite checks that the result is that of formatting each
    file whole (``whole=True``).

    Whenever that might not hold, the files are formatted whole:

    - a cut that was not at a statement boundary (inside a string or
      brackets, say) leaves a piece that does not parse, or one whose string
      or bracket another piece closes: then a marker is part of it, and not
      found (it lacks the space the formatter gives a comment, or it is
      indented);
    - a file may end in a decorator with nothing to decorate, or in a
      backslash: alone, that piece would not parse, but it might before
      another piece;
    - the markers do not come back as they went: in their order, two blank
      lines after what comes before them (a decorator that took the next
      piece's definition leaves none); or a file's first piece is empty;
    - a source holds the markers' text, starts with a byte order mark, or
      turns the formatter off (``# fmt: off``) for what may be more than
      one piece.

    So a file that does not parse is reported from formatting it whole, at
    its own line. A formatter that runs out of time is not run again.
    """
    jobs = {path: text for path, text in files.items() if path.endswith(".py") and not _runtime_copy(text)}
    if not jobs:
        return dict(files)
    done = None if whole else _format_shared(jobs, BATCH_LINES if batch_lines is None else batch_lines)
    if done is None:
        names = {f"m{number}.py": path for number, path in enumerate(jobs)}
        formatted = _format_texts({name: jobs[path] for name, path in names.items()}, names)
        done = {path: formatted[name] for name, path in names.items()}
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


BATCH_LINES = 5_000
"""About how many lines each file given to the formatter holds, at most,
unless one piece is longer (the four ACP packages make 30 such files of
about 2,800 lines from 84,000 distinct lines, beside their 8 files of one
piece)."""

_CUT = re.compile(r"\n\n(?=(?:def |class |async def |@))")

_MARKER = "#acpgen-format-piece "
"""The comment line in front of each piece but a file's first in what the
formatter is given, written without the space the formatter puts after a
comment's ``#``: one that comes back as written, or indented, was not a
comment in column 0 but part of a string or an expression (a cut inside
one, whose parts met again in one file), and is not found. No source holds
the marker's text (:func:`_format_shared` checks), so each marker found is
one of those put in."""

_MARKED = "\n# acpgen-format-piece "
"""A marker as the formatter leaves it, with the newline before it."""

_DEFINES = ("def ", "async def ", "class ")
"""How the line of a definition starts, in column 0 (the cut's own forms)."""


def _cut(text: str) -> list[str]:
    """``text`` in pieces, each but the first starting at a column-0
    ``def``/``async def``/``class``/decorator after a blank line; each ends
    with its last line's newline (but the last, when the text does not),
    and they join again with ``"\\n"``. No cut follows what may be a
    decorator without its definition (:func:`_ends_in_decorator`), which
    the formatter would join to the next, nor a line that may tie the two
    (:func:`_tied_to_next`)."""
    parts: list[str] = []
    start = 0
    for match in _CUT.finditer(text):
        if not _tied_to_next(text, start, match.start()) and not _ends_in_decorator(text, start, match.start() + 1):
            parts.append(text[start : match.start() + 1])
            start = match.end()
    parts.append(text[start:])
    return parts


def _tied_to_next(text: str, start: int, end: int) -> bool:
    """Whether the last line of ``text[start:end]`` that is not empty may
    tie it to what follows, so that no cut comes after it: a comment in
    column 0 (the formatter may keep it with the next definition, a
    decorator's comment with the blank lines after it), a line with a
    ``;`` (after a stub's ``...;`` the formatter drops the blank lines
    before the next definition), or one that ends in a backslash."""
    while end > start and text[end - 1] == "\n":
        end -= 1
    if end == start:
        return False
    line = text[max(text.rfind("\n", start, end) + 1, start) : end]
    return line.startswith("#") or ";" in line or line.rstrip().endswith("\\")


def _ends_open(piece: str) -> bool:
    """Whether a file's last piece may end in what does not parse at the
    end of a file but might before more: a decorator without its
    definition, or a line that ends in a backslash."""
    return _ends_in_decorator(piece, 0, len(piece)) or piece.rstrip().endswith("\\")


def _ends_in_decorator(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` may end in a decorator without the
    definition it decorates: it has a column-0 ``@`` line and no column-0
    ``def``, ``async def`` or ``class`` line after the last one. (A line of
    a string may look like either: then the cut is checked after formatting,
    see :func:`_format_shared`.) Only the part after that last ``@`` line,
    found from the end, is read line by line."""
    at = text.rfind("\n@", start, end) + 1
    if at == 0:
        if not text.startswith("@", start):
            return False
        at = start
    line = text.find("\n", at, end)
    while 0 <= line < end - 1:
        if text.startswith(_DEFINES, line + 1):
            return False
        line = text.find("\n", line + 1, end)
    return True


_SUSPENDED = re.compile(r"#\s*(?:fmt\s*:\s*off|yapf\s*:\s*disable)")
"""A comment that stops the formatter until a matching one (or the end of
the file): its reach is not one piece's."""


def _format_shared(jobs: dict[str, str], batch_lines: int) -> dict[str, str] | None:
    """The files of ``jobs`` formatted piece by piece, each distinct piece
    once (see :func:`format_files`); None when that cannot be trusted."""
    if any(
        _SUSPENDED.search(text) or "acpgen-format-piece" in text or text.startswith("\ufeff") for text in jobs.values()
    ):
        # `# fmt: off` reaches past its piece; a source's own marker text
        # could stand in for a lost marker; after a byte order mark the
        # formatter reads a comment on the first line otherwise.
        return None
    cut = {path: _cut(text) for path, text in jobs.items()}
    if any(_ends_open(parts[-1]) for parts in cut.values()):
        # Packed before another piece's definition, it might parse.
        return None
    # A file of one piece is given as it is: its end is the file's.
    alone = list(dict.fromkeys(parts[0] for parts in cut.values() if len(parts) == 1))
    heads = list(dict.fromkeys(parts[0] for parts in cut.values() if len(parts) > 1))
    tails = list(dict.fromkeys(piece for parts in cut.values() for piece in parts[1:]))
    batches = _pack(heads, tails, batch_lines)
    try:
        formatted = _format_texts(_Batches(heads, tails, batches, alone), {})
    except _OutOfTime:
        raise
    except AcpgenError:
        return None
    heads_done: list[str] = [""] * len(heads)
    tails_done: list[str] = [""] * len(tails)
    for number, (head, members) in enumerate(batches):
        # A marker that opens the file has no newline before it.
        first, *chunks = ("\n" + formatted.pop(f"b{number}.py")).split(_MARKED)
        numbered = [chunk.partition("\n") for chunk in chunks]
        if [index for index, _, _ in numbered] != [str(index) for index in members]:
            return None
        # Each marker two blank lines after what came before it (but at the
        # start of a file): none when a decorator took its definition.
        before = [first, *(chunk for _, _, chunk in numbered)][1 if head is None else 0 : len(numbered)]
        if not all(part.endswith("\n\n") for part in before):
            return None
        if head is not None:
            heads_done[head] = first.strip("\n") + "\n"
            if heads_done[head] == "\n":
                return None
        for index, (_, _, chunk) in zip(members, numbered, strict=True):
            tails_done[index] = chunk.rstrip("\n") + "\n"
    head_at = {head: index for index, head in enumerate(heads)}
    tail_at = {tail: index for index, tail in enumerate(tails)}
    alone_at = {text: index for index, text in enumerate(alone)}
    return {
        path: "\n\n".join([heads_done[head_at[parts[0]]], *(tails_done[tail_at[piece]] for piece in parts[1:])])
        if len(parts) > 1
        else formatted[f"a{alone_at[parts[0]]}.py"]
        for path, parts in cut.items()
    }


class _Batches(Mapping[str, str]):
    """The files given to the formatter, ``b<n>.py`` (the batches of
    :func:`_pack`) and ``a<n>.py`` (the files of one piece), each made when
    read: written one by one, they are never all held at once."""

    def __init__(
        self, heads: list[str], tails: list[str], batches: list[tuple[int | None, list[int]]], alone: list[str]
    ) -> None:
        self.heads, self.tails, self.batches, self.alone = heads, tails, batches, alone

    def __getitem__(self, name: str) -> str:
        kind, number = name[0], int(name[1:-3])
        if kind == "a":
            return self.alone[number]
        head, members = self.batches[number]
        return ("" if head is None else self.heads[head]) + "".join(
            f"\n\n{_MARKER}{index}\n{self.tails[index]}" for index in members
        )

    def __iter__(self) -> Iterator[str]:
        yield from (f"b{number}.py" for number in range(len(self.batches)))
        yield from (f"a{number}.py" for number in range(len(self.alone)))

    def __len__(self) -> int:
        return len(self.batches) + len(self.alone)


def _pack(heads: list[str], tails: list[str], batch_lines: int) -> list[tuple[int | None, list[int]]]:
    """The formatter's files: ``(head, tails)``, the index of the first
    piece that opens the file (None for none) and those of the pieces that
    follow it. One file per head, more when the pieces come to over
    ``batch_lines`` lines a file; each piece, longest first, goes to the
    file with the fewest lines so far."""
    sizes = [piece.count("\n") + 1 for piece in tails]
    total = sum(head.count("\n") + 1 for head in heads) + sum(sizes)
    count = max(len(heads), -(-total // max(batch_lines, 1)))
    batches: list[tuple[int | None, list[int]]] = [
        (index if index < len(heads) else None, []) for index in range(count)
    ]
    filled = [(heads[index].count("\n") + 1 if index < len(heads) else 0, index) for index in range(count)]
    heapq.heapify(filled)
    for index in sorted(range(len(tails)), key=lambda i: -sizes[i]):
        lines, batch = heapq.heappop(filled)
        batches[batch][1].append(index)
        heapq.heappush(filled, (lines + sizes[index], batch))
    return batches


def _format_texts(texts: Mapping[str, str], originals: dict[str, str]) -> dict[str, str]:
    """``{file name: source}`` formatted in one formatter run; ``originals``
    maps a file name to the path an error names."""
    with scratch(SCRATCH_PREFIX) as temp:
        for name, text in texts.items():
            Path(temp, name).write_text(text, encoding="utf-8")
        _run(temp, originals)
        return {name: Path(temp, name).read_text(encoding="utf-8") for name in texts}


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
        raise _OutOfTime(
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


class _OutOfTime(AcpgenError):
    """The formatter ran longer than :data:`TIMEOUT` and was stopped."""


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
