"""Python identifiers from schema text: the words of a name and their
``PascalCase``, ``snake_case`` and ``UPPER_SNAKE`` forms, ASCII only. The
naming pass (:mod:`.naming`) makes every name of the package with them; the
method table and the patch and session rules name functions with them.
"""

from __future__ import annotations

import functools
import re

__all__ = ["pascal", "snake", "upper_snake", "words"]

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+|[0-9]+")
_NOT_ASCII_WORD = re.compile(r"[^A-Za-z0-9]+")

_KEEP = 8192
"""The most names each form keeps. A form is a function of the text alone
(and a string, which no caller can change), and the packages of one run
share most of their names: the four ACP packages ask for 4,000 forms of
about 400 names."""


def words(text: str) -> list[str]:
    """The ASCII words of a name: ``toolCallId`` -> ``tool Call Id``."""
    ascii_text = _NOT_ASCII_WORD.sub(" ", text)
    return [w for chunk in ascii_text.split() for w in _WORD.findall(chunk)]


@functools.lru_cache(maxsize=_KEEP)
def pascal(text: str) -> str:
    name = "".join(w[:1].upper() + w[1:] for w in words(text))
    return name or "Unnamed"


@functools.lru_cache(maxsize=_KEEP)
def snake(text: str) -> str:
    """``toolCallId`` -> ``tool_call_id``; a name with no ASCII word at all
    becomes ``f_`` and the hex code points of its characters."""
    name = "_".join(w.lower() for w in words(text))
    if name:
        return name
    codes = "_".join(f"{ord(c):x}" for c in text)[:40]
    return "f_" + codes if codes else "unnamed"


@functools.lru_cache(maxsize=_KEEP)
def upper_snake(text: str) -> str:
    return "_".join(w.upper() for w in words(text)) or "VALUE"
