"""Stage 5, format: black, called in process.

black is by far the slowest stage, so its results are cached by the hash of
black's version, its mode and the source (``$XDG_CACHE_HOME/acpgen``, or
``ACPGEN_CACHE_DIR``; ``ACPGEN_CACHE_DIR=`` turns the cache off), and the
files of a run are formatted in parallel.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import black

from .errors import AcpgenError

_MODE = black.Mode(target_versions={black.TargetVersion.PY310})


def format_source(source: str, name: str) -> str:
    """``source`` formatted by black; a syntax error is a generator error."""
    cache = _cache_file(source)
    if cache is not None:
        try:
            return cache.read_text(encoding="utf-8")
        except OSError:
            pass
    try:
        formatted = black.format_str(source, mode=_MODE)
    except black.InvalidInput as exc:
        raise AcpgenError(f"the rendered code does not parse: {exc}", file=name) from None
    if cache is not None:
        _store(cache, formatted)
    return formatted


def format_files(files: dict[str, str]) -> dict[str, str]:
    """Format every ``.py`` file of ``{path: source}``, in parallel when there
    is more than one to do and more than one processor."""
    jobs = [(path, text) for path, text in files.items() if path.endswith(".py")]
    todo = [(path, text) for path, text in jobs if not _cached(text)]
    workers = min(len(todo), os.cpu_count() or 1)
    done: dict[str, str] = {}
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {path: pool.submit(format_source, text, path) for path, text in todo}
            for path, future in futures.items():
                done[path] = future.result()
    return {
        path: done[path] if path in done else format_source(text, path) if path.endswith(".py") else text
        for path, text in files.items()
    }


def _cache_dir() -> Path | None:
    configured = os.environ.get("ACPGEN_CACHE_DIR")
    if configured is not None:
        return Path(configured) if configured else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "acpgen"


def _cache_file(source: str) -> Path | None:
    directory = _cache_dir()
    if directory is None:
        return None
    key = hashlib.sha256(f"{black.__version__}\0{_MODE!r}\0{source}".encode("utf-8")).hexdigest()
    return directory / f"{key}.py"


def _cached(source: str) -> bool:
    cache = _cache_file(source)
    return cache is not None and cache.is_file()


def _store(cache: Path, text: str) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=cache.parent, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, cache)
    except OSError:
        pass
