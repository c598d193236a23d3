"""Expected failures (``--expected-failures FILE``), for either direction
of the probe: a known failure is reported but does not fail the run, and a
listed check that passes does (its entry is stale).

The file has one check id a line; ``vN/CHECK`` limits the entry to runs
where protocol version N was negotiated; ``#`` starts a comment (say why
the failure is expected); blank lines are ignored::

    # the client answers session/request_permission with an option it did not offer
    permission-answer
    v2/update-unknown-kind
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

ENTRY = re.compile(r"^(?:v(?P<version>\d+)/)?(?P<check>[A-Za-z0-9_.-]+)$")


class ExpectationError(ValueError):
    """A line of the file that is no entry, or names no check."""


def read_expected(path: str | Path, known: Iterable[str]) -> dict[str, set[int] | None]:
    """The entries of the file: each check id, with the versions it is
    limited to (None: every version). Unknown check ids are an error, so
    that a renamed check does not silently leave an entry behind."""
    names = set(known)
    entries: dict[str, set[int] | None] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        match = ENTRY.match(text)
        if match is None:
            raise ExpectationError(f"{path}:{number}: not a check id (CHECK or vN/CHECK): {text!r}")
        check = match["check"]
        if check not in names:
            raise ExpectationError(f"{path}:{number}: no check is called {check!r}")
        version = match["version"]
        if version is None:
            entries[check] = None
        elif check not in entries or entries[check] is not None:
            versions = entries.get(check) or set()
            versions.add(int(version))
            entries[check] = versions
    return entries


def expected_for(entries: dict[str, set[int] | None], version: int | None) -> set[str]:
    """The checks expected to fail in a run that negotiated ``version``."""
    return {check for check, versions in entries.items() if versions is None or version in versions}
