"""Stage 5, format: ``ruff format``, black's style, in one subprocess per run.

The templates print every line, so formatting only wraps what is too long
and normalises quotes; ruff does that for the four ACP packages (100,000
lines) in well under a second, where black took minutes. Its output is
black's on what the templates print (the test suite checks the generated
packages with black itself), so nothing is cached: each run formats what it
rendered, and what it writes is only ever what the formatter returned.

The formatter runs with its configuration fixed here (``--isolated``: no
``pyproject.toml`` or ``ruff.toml`` of the machine takes part), on copies of
the sources in a temporary directory. It is a child process that ends with
its parent: when acpgen stops, however it stops, the formatter is killed.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from .errors import AcpgenError

LINE_LENGTH = 88
TARGET_VERSION = "py310"

_ARGS = (
    "format",
    "--isolated",
    "--no-cache",
    f"--line-length={LINE_LENGTH}",
    f"--target-version={TARGET_VERSION}",
)


def format_files(files: dict[str, str]) -> dict[str, str]:
    """``{path: source}`` with every ``.py`` file formatted; other files as
    they are. A file that does not parse is a generator error naming it."""
    jobs = {path: text for path, text in files.items() if path.endswith(".py")}
    if not jobs:
        return dict(files)
    with tempfile.TemporaryDirectory(prefix="acpgen-fmt-") as temp:
        # Flat numbered copies: the paths are "<package>/<module>.py".
        names = {path: f"m{index}.py" for index, path in enumerate(jobs)}
        for path, name in names.items():
            Path(temp, name).write_text(jobs[path], encoding="utf-8")
        _run(temp, {name: path for path, name in names.items()})
        done = {path: Path(temp, name).read_text(encoding="utf-8") for path, name in names.items()}
    return {path: done.get(path, text) for path, text in files.items()}


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
        out, err = process.communicate()
    finally:
        # Interrupted (Ctrl-C, an exception): the formatter goes too.
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


def _die_with(parent: int):
    """In the child, before exec: ask Linux to kill it when acpgen dies, even
    by SIGKILL, which leaves no chance to clean up."""

    def arm() -> None:
        import ctypes

        PR_SET_PDEATHSIG = 1
        try:
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:  # acpgen died before the request was made
            os._exit(1)

    return arm
