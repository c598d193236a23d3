"""The one error type the generator raises for bad input."""

from __future__ import annotations

from collections.abc import Iterable


class AcpgenError(Exception):
    """A problem with the input, reported as one line naming where it is.

    ``file`` is the file the problem is in and ``pointer`` a JSON pointer
    (RFC 6901) into it, when they are known.
    """

    def __init__(self, message: str, *, file: str | None = None, pointer: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.pointer = pointer

    def __str__(self) -> str:
        where = self.file or ""
        if self.pointer is not None:
            where = f"{where}#{self.pointer}" if where else f"#{self.pointer}"
        text = " ".join(self.message.split())
        return f"{where}: {text}" if where else text


def pointer(parts: Iterable[str | int]) -> str:
    """Render path segments as a JSON pointer, escaping ``~`` and ``/``."""
    out = []
    for part in parts:
        out.append(str(part).replace("~", "~0").replace("/", "~1"))
    return "/" + "/".join(out) if out else ""
