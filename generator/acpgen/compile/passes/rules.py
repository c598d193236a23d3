"""The rules files (``rules/*.toml``), read one way for every pass that has
rules: the patch rules (:mod:`.upserts`, and the set names :mod:`.ruleselect`
checks), the session fold (:mod:`.session`), the method handlers
(:mod:`.methods`), the capability gates (:mod:`.gates`), the places of
resumption (:mod:`.resumption`), cancellation (:mod:`.cancellation`) and
the agent's session senders (:mod:`.senders`).

A file that is missing, unreadable or not TOML is an error naming it; what a
file must contain is its pass's to check. A rule set may ``extends`` another
of its file (:func:`extends_chain`).
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ...errors import AcpgenError
from ...jsontypes import TomlTable

__all__ = [
    "CANCELLATION",
    "CAPABILITIES",
    "METHODS",
    "PATCH",
    "RESUMPTION",
    "SENDERS",
    "SESSION",
    "builtin_file",
    "extends_chain",
    "read_rules",
]

PATCH = "patch.toml"
SESSION = "session.toml"
METHODS = "methods.toml"
CAPABILITIES = "capabilities.toml"
RESUMPTION = "resumption.toml"
CANCELLATION = "cancellation.toml"
SENDERS = "senders.toml"


def builtin_file(name: str) -> Path:
    """The rules file ``name`` (:data:`PATCH` ...) that ships with acpgen."""
    return Path(str(resources.files("acpgen.rules").joinpath(name)))


def read_rules(path: Path) -> TomlTable:
    """The table of the rules file at ``path``, read afresh each call.

    Only the parse is kept: the passes of one package read some files more
    than once, and ``generate`` builds several packages in a process (32
    reads of 8 files for the four ACP packages). The file is read every
    time and its text compared with the text the kept table was parsed
    from, so an edited file is parsed again; each caller gets its own copy
    of the table, which it may change."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AcpgenError("no such file", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AcpgenError(f"cannot read the rules: {exc}", file=str(path)) from None
    kept = _PARSED.get(text)
    if kept is None:
        try:
            kept = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise AcpgenError(f"invalid TOML: {exc}", file=str(path)) from None
        if len(_PARSED) >= _KEEP:
            _PARSED.clear()
        _PARSED[text] = kept
    table: TomlTable = _copy(kept)
    return table


_PARSED: dict[str, TomlTable] = {}
"""Parsed rules tables by the exact text they were parsed from."""

_KEEP = 32
"""The most tables kept (the built-in files are 8; ``--rules`` files and
tests add some): past it the store starts again."""


def _copy(value: Any) -> Any:
    """A copy of a parsed TOML value: new tables and arrays, the same
    scalars (strings, numbers, booleans, dates: all immutable)."""
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


def extends_chain(rules: TomlTable, name: str, where: str, label: str = "rule set") -> list[TomlTable]:
    """The tables of set ``name`` and of the sets it ``extends``, in that
    order (``label`` names them in errors)."""
    chain: list[TomlTable] = []
    seen: list[str] = []
    while name:
        if name in seen:
            raise AcpgenError(f"{label} {name!r} extends itself", file=where)
        seen.append(name)
        table = rules.get(name)
        if not isinstance(table, dict):
            raise AcpgenError(f"no {label} named {name!r} (have: {', '.join(sorted(rules))})", file=where)
        chain.append(table)
        name = table.get("extends", "")
    return chain
