"""A tool call's diff (old text, new text) as the lines a reviewer reads:
hunks of changed lines with three lines of context, each line with its
numbers in the old and the new text."""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

CONTEXT = 3
"""Unchanged lines shown around each change."""
MAX_MATCHED = 4000
"""The most changed lines (after the common start and end are set aside)
matched line by line; beyond that the middle is shown as removed, then
added, which stays fast on any input (matching is quadratic at worst)."""

Opcode = tuple[str, int, int, int, int]
DiffLine = list[object]
"""``[op, old line number or 0, new line number or 0, text]``: op is ``" "``
(context), ``"-"``, ``"+"`` or ``"@"`` (a hunk's header, numbers 0)."""


def line_diff(old: str | None, new: str, context: int = CONTEXT) -> list[DiffLine]:
    """The hunks turning ``old`` into ``new`` (``old`` None: a new file, every
    line added); no lines when the texts are equal."""
    a = [] if old is None else old.splitlines()
    b = new.splitlines()
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    middle_a, middle_b = a[start : len(a) - end], b[start : len(b) - end]
    if not middle_a and not middle_b:
        return []
    if len(middle_a) + len(middle_b) <= MAX_MATCHED:
        matcher = SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        opcodes: list[Opcode] = [
            (tag, i1 + start, i2 + start, j1 + start, j2 + start) for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        ]
    else:
        opcodes = [("replace", start, len(a) - end, start, len(b) - end)]
    if start:
        opcodes.insert(0, ("equal", 0, start, 0, start))
    if end:
        opcodes.append(("equal", len(a) - end, len(a), len(b) - end, len(b)))
    out: list[DiffLine] = []
    for group in _groups(opcodes, context):
        first, last = group[0], group[-1]
        out.append(["@", 0, 0, f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@"])
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend([" ", i + 1, j1 + (i - i1) + 1, a[i]] for i in range(i1, i2))
                continue
            out.extend(["-", i + 1, 0, a[i]] for i in range(i1, i2))
            out.extend(["+", 0, j + 1, b[j]] for j in range(j1, j2))
    return out


def _groups(opcodes: Sequence[Opcode], context: int) -> list[list[Opcode]]:
    """``SequenceMatcher.get_grouped_opcodes`` over opcodes of our own: the
    changes with ``context`` equal lines around them, split where more than
    twice that many equal lines lie between two changes."""
    codes = list(opcodes)
    if codes and codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes and codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return [g for g in groups if any(code[0] != "equal" for code in g)]
