"""The defence of strict mode against patterns that backtrack
catastrophically.

Strict mode checks ``pattern`` and ``patternProperties`` with Python's
backtracking ``re``, where a repeated group that can match the same text in
more than one way (``(a+)+$``, ``(a|a)*$``) takes time exponential in the
length of the input. acpgen refuses such a pattern when it generates: a
quantifier that repeats (``*``, ``+``, ``{m,}``, ``{m,n}`` with ``n > 1``) a
group that holds a quantifier or an alternation. What is left backtracks at
most polynomially (``a*a*$`` is quadratic); no pattern of the ACP schemas
comes near either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BRACES = re.compile(r"\{(\d+)(,(\d*))?\}")


@dataclass
class _Group:
    ambiguous: bool = False
    """The group holds a quantifier or an alternation."""


def nested_repetition(pattern: str) -> int | None:
    """The index in ``pattern`` (a valid Python regular expression) of the
    first quantifier that repeats a group holding a quantifier or an
    alternation, or None when there is none."""
    stack = [_Group()]
    last: _Group | None = None  # the group just closed, if that is the last atom
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            last = None
            continue
        if char == "[":
            i = _class_end(pattern, i)
            last = None
            continue
        if char == "(":
            stack.append(_Group())
            i += 1
            if pattern.startswith("?", i):
                i += 1  # (?:, (?=, (?P<name> ...: the ? is no quantifier
            last = None
            continue
        if char == ")":
            group = stack.pop()
            stack[-1].ambiguous |= group.ambiguous
            last = group
            i += 1
            continue
        if char == "|":
            stack[-1].ambiguous = True
            last = None
            i += 1
            continue
        repeats, end = _quantifier(pattern, i)
        if end == i:  # an ordinary character
            last = None
            i += 1
            continue
        if repeats and last is not None and last.ambiguous:
            return i
        stack[-1].ambiguous = True
        last = None
        i = end
        if pattern.startswith(("?", "+"), i):  # lazy or possessive
            i += 1
    return None


def _quantifier(pattern: str, i: int) -> tuple[bool, int]:
    """(whether the quantifier at ``i`` repeats, the index after it); the end
    is ``i`` when there is no quantifier there."""
    char = pattern[i]
    if char in "*+":
        return True, i + 1
    if char == "?":
        return False, i + 1
    if char == "{":
        match = _BRACES.match(pattern, i)
        if match is not None:
            low, comma, high = match.group(1), match.group(2), match.group(3)
            top = int(low) if comma is None else (int(high) if high else None)
            return top is None or top > 1, match.end()
    return False, i


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class that opens at ``i``."""
    i += 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1  # a ] first in the class is a character
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1
