"""The checker fed one line at a time: what ``acpgen tap`` validates live
with, the same engine ``validate_file`` runs over a file.

    validator = Validator(load_package("acp_v1"))
    for line in lines_as_they_come:
        for finding in validator.feed(line):
            print(finding)
    for finding in validator.close():  # the requests never answered
        print(finding)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from types import ModuleType

from .checker import MAX_LINE_BYTES, PAUSE, PAUSED, Finding, _check_limit, _Checker, _Line, _Pause, within


class Validator:
    """A transcript checked as its lines arrive. :meth:`feed` gives the
    findings of one line, :meth:`close` those of the end of the transcript
    (``unanswered``). Line numbers count the lines fed, blank ones included,
    so that they are the lines of the transcript the caller writes.

    A line the engine fails on (an exception that is not a finding: a bug,
    or a package of another shape) makes :meth:`feed` raise it, once the
    line is counted; the ids in flight, the sessions and the started tool
    calls are kept, and the next line is checked as if nothing happened."""

    def __init__(self, package: ModuleType, *, strict: bool = False, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        _check_limit(max_line_bytes)
        self.package = package
        self.limit = max_line_bytes
        self.lines = 0
        """How many lines were fed."""
        self._checker = _Checker(package, strict)
        self._source = _Source()
        self._run: Iterator[Finding] = self._checker.run(self._source, max_line_bytes)
        self._closed = False

    def feed(self, line: str | bytes, direction: str | None = None) -> list[Finding]:
        """The findings of the next line of the transcript (a bare JSON-RPC
        message or a record with its direction, as ``validate_file`` reads),
        each with ``direction`` set to the one given."""
        if self._closed:
            raise ValueError("the validator is closed")
        self.lines += 1
        self._source.line = within(line, self.limit)
        found: list[Finding] = []
        try:
            for finding in self._run:
                if finding is PAUSED:
                    break
                found.append(finding)
        except BaseException:
            self._source.line = None
            self._run = self._checker.run(self._source, self.limit, first=self.lines + 1)
            raise
        if direction is not None:
            found = [dataclasses.replace(finding, direction=direction) for finding in found]
        return found

    def close(self) -> list[Finding]:
        """The findings of the end of the transcript: the requests still in
        flight (``unanswered``), each with the direction it was sent in."""
        if self._closed:
            return []
        self._closed = True
        self._source.done = True
        return [finding for finding in self._run if finding is not PAUSED]


class _Source:
    """The engine's lines: the one fed, then ``PAUSE``; nothing once closed."""

    def __init__(self) -> None:
        self.line: _Line | None = None
        self.done = False

    def __iter__(self) -> _Source:
        return self

    def __next__(self) -> _Line | _Pause:
        if self.done:
            raise StopIteration
        line, self.line = self.line, None
        return PAUSE if line is None else line


__all__ = ["Validator"]
