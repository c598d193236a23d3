"""The journal of a run that replaces directories (:mod:`acpgen.output.write`), the
names of the directories it creates, and the digest that tells whether a
directory is still what a run put there."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import AcpgenError
from ..jsontypes import JsonObject
from .ownfiles import refuse_odd, write_fresh
from .trees import EMPTY_DIR, FILE, SYMLINK, walk

JOURNAL_FILE = ".acpgen-journal.json"
JOURNAL_TEMP = JOURNAL_FILE + ".tmp"
"""Where the next record is written before it is renamed onto the journal."""
NEW_PREFIX = ".acpgen-new-"
OLD_PREFIX = ".acpgen-old-"


@dataclass(frozen=True)
class Entry:
    """One directory a run replaces: ``stage`` holds its new tree until it
    is moved onto ``target``, ``aside`` the previous tree once set aside."""

    target: Path
    stage: Path
    aside: Path
    existed: bool
    digest: str
    """:func:`directory_digest` of the new tree (empty before it is staged)."""


def write_journal(home: Path, record: JsonObject) -> None:
    """Replace the journal in ``home`` with ``record``, durably: the rename
    is the moment the new phase counts. Neither name is written through a
    link (:mod:`acpgen.output.ownfiles`)."""
    temporary = home / JOURNAL_TEMP
    refuse_odd(home / JOURNAL_FILE)
    write_fresh(temporary, json.dumps(record, indent=2).encode("utf-8"))
    os.replace(temporary, home / JOURNAL_FILE)
    fsync_dir(home)


def recorded_phase(home: Path) -> str | None:
    """The phase the journal on disk records, or None when there is none or
    it cannot be read."""
    try:
        phase = json.loads((home / JOURNAL_FILE).read_text(encoding="utf-8"))["phase"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return phase if isinstance(phase, str) else None


def read_journal(home: Path) -> tuple[str, list[Entry]] | None:
    """The phase and entries of the journal in ``home``, None without one.
    Refuses a journal naming a directory that is not acpgen's staging
    directory beside its target, and a link at the journal's name."""
    path = home / JOURNAL_FILE
    refuse_odd(path)
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        phase = record["phase"]
        entries = [
            Entry(
                joined(home, e["target"]),
                joined(home, e["stage"]),
                joined(home, e["aside"]),
                bool(e["existed"]),
                str(e["digest"]),
            )
            for e in record["entries"]
        ]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise AcpgenError(
            f"cannot read the journal of an interrupted run ({exc}); inspect and delete it", file=str(path)
        ) from None
    for entry in entries:
        for place, prefix in ((entry.stage, NEW_PREFIX), (entry.aside, OLD_PREFIX)):
            if place.parent != entry.target.parent or not place.name.startswith(f"{prefix}{entry.target.name}-"):
                raise AcpgenError(
                    f"the journal names {place}, which is not acpgen's; inspect and delete it", file=str(path)
                )
    return phase, entries


def joined(home: Path, relative: str) -> Path:
    """``home / relative`` with ``..`` resolved by name, not through
    symbolic links: the journal records each directory relative to the
    output directory (``../schema``), and this gives back the path the run
    named, as it is shown in messages."""
    return Path(os.path.normpath(home / relative))


def directory_digest(directory: Path) -> str:
    """A digest of what ``directory`` holds: the path and content of every
    regular file, the path and destination of every symbolic link, the path
    of every empty directory (``__pycache__`` left out, links not followed).
    For a tree of regular files it is the digest earlier acpgen versions
    journaled."""
    records: dict[str, bytes] = {}
    for relative, path, kind in walk(directory):
        if kind == FILE:
            records[relative] = hashlib.sha256(path.read_bytes()).digest()
        elif kind == SYMLINK:
            records[relative] = b"\0symlink\0" + os.fsencode(os.readlink(path))
        elif kind == EMPTY_DIR:
            records[relative] = b"\0directory"
        else:
            records[relative] = b"\0special"
    digest = hashlib.sha256()
    for relative, record in sorted(records.items()):
        digest.update(relative.encode("utf-8") + b"\0" + record)
    return digest.hexdigest()


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove(path: Path) -> None:
    """Delete a file, a symbolic link or a directory tree, if there. The
    trees given are acpgen's own staging and set-aside copies, which may hold
    a write-protected directory carried over from the user's ``schema/``: a
    deletion refused for lack of permission is retried once the directory in
    the way is made accessible to its owner (the copy in place keeps its
    mode)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=_open_up_and_retry)
        else:
            shutil.rmtree(path, onerror=lambda function, name, info: _open_up_and_retry(function, name, info[1]))


def _open_up_and_retry(function: Callable[..., object], name: str, error: BaseException) -> None:
    if not isinstance(error, PermissionError):
        raise error
    listing = function is os.open or function is os.scandir  # the directory itself could not be read
    blocked = name if listing else os.path.dirname(name)
    mode = stat.S_IMODE(os.lstat(blocked).st_mode)
    if mode & stat.S_IRWXU == stat.S_IRWXU:
        raise error  # its owner could already do everything: not a mode acpgen can fix
    os.chmod(blocked, mode | stat.S_IRWXU)
    if listing:
        remove(Path(name))
    else:
        function(name)
