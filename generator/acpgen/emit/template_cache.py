"""Compiled templates kept between runs, in a directory only the user can
read or write.

Compiling the templates is most of what a small ``acpgen generate`` or
``acpgen check`` costs (a few tenths of a second of every run, every
pre-commit hook). Jinja2 can keep the compiled code of a template and use it
again while the template's source is unchanged: each entry holds the sha1 of
the source it was compiled from and Jinja's own version magic (which names
the Python version), and an entry that does not match is compiled again and
replaced. Entries are keyed by template name and file, salted with the Jinja
version and the environment options that change compiled code.

An entry is code the process runs, so the directory is trusted only as the
user's own: ``$ACPGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/acpgen/templates``,
else ``~/.cache/acpgen/templates``; created with mode 0700 when missing, and
used only when it is a real directory (not a link) owned by the user with no
permission for group or others. Entries are opened without following links
and must be regular files owned by the user; they are written to a new
temporary file and renamed into place. Anything else (a directory someone
else can write to, a planted link, a read-only home, a corrupt entry) means
no cache: the templates are compiled as if there were none, and the output is
the same. ``ACPGEN_CACHE_DIR=`` (empty) turns the cache off.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from pathlib import Path

import jinja2

CACHE_ENV = "ACPGEN_CACHE_DIR"
_SUFFIX = ".jinja-code"


def cache_directory() -> Path | None:
    """Where compiled templates are kept (None: nowhere)."""
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return Path(value) if value else None
    base = os.environ.get("XDG_CACHE_HOME")
    try:
        root = Path(base) if base else Path.home() / ".cache"
    except RuntimeError:  # no home directory
        return None
    return root / "acpgen" / "templates"


def _private_directory(directory: Path) -> int | None:
    """A descriptor of ``directory`` (made if missing) when it is the user's
    own real directory with no permission for anyone else; else None."""
    with contextlib.suppress(FileExistsError, OSError):
        directory.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(directory, 0o700)
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        os.close(fd)
        return None
    return fd


class PrivateBytecodeCache(jinja2.BytecodeCache):
    """Jinja's bytecode cache over :func:`cache_directory` (see the module
    docstring); every failure is a miss."""

    def __init__(self, directory: Path, salt: str) -> None:
        self.directory = directory
        self.salt = salt
        self._fd: int | None = None
        self._opened = False

    def _dir_fd(self) -> int | None:
        if not self._opened:
            self._opened = True
            self._fd = _private_directory(self.directory)
        return self._fd

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        key = f"{self.salt}\0{name}\0{filename or ''}"
        return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        dir_fd = self._dir_fd()
        if dir_fd is None:
            return
        try:
            fd = os.open(bucket.key + _SUFFIX, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dir_fd)
        except OSError:
            return
        with os.fdopen(fd, "rb") as entry:
            info = os.fstat(entry.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                return
            try:
                data = entry.read()
            except OSError:
                return
        try:
            bucket.bytecode_from_string(data)  # checks the magic and the source's checksum
        except Exception:  # a corrupt entry (its checksum unreadable): a miss
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        dir_fd = self._dir_fd()
        if dir_fd is None:
            return
        name = bucket.key + _SUFFIX
        temporary = f".{bucket.key}.{os.getpid()}.tmp"
        try:
            data = bucket.bytecode_to_string()
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dir_fd)
        except Exception:
            return
        try:
            with os.fdopen(fd, "wb") as entry:
                entry.write(data)
            os.replace(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=dir_fd)

    def clear(self) -> None:
        dir_fd = self._dir_fd()
        if dir_fd is None:
            return
        for entry in os.listdir(dir_fd):
            if entry.endswith(_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(entry, dir_fd=dir_fd)


def bytecode_cache(options: tuple[object, ...]) -> PrivateBytecodeCache | None:
    """The cache for an environment built with ``options`` (what changes
    the compiled code), or None when there is no cache directory."""
    directory = cache_directory()
    if directory is None:
        return None
    salt = repr((jinja2.__version__, *options))
    return PrivateBytecodeCache(directory, salt)
