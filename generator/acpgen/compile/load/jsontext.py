"""Schema text checked as JSON (RFC 8259) before it is parsed.

Python's ``json`` module accepts ``NaN``, ``Infinity`` and ``-Infinity``,
turns ``1e999`` into an infinite float, raises a bare ``ValueError`` for an
integer of more than 4,300 digits and a ``RecursionError`` for deep nesting.
None of these is JSON a schema can mean, and none has a Python literal that
round-trips, so :func:`check` refuses them with the JSON pointer of the
value, scanning the text iteratively (no recursion). Malformed text is left
for ``json`` to report.

:func:`loads` parses first, with hooks that stop at any of these values, and
scans only when a hook stopped it, the parse failed or the document nests too
deeply: the scan costs several times the parse, and a schema that passes needs
none.

A string (or a member's name) holding a lone surrogate, which JSON text can
write as an escape (``"\\ud800"``), is not Unicode text: it has no UTF-8
form, and the schema validator of the later stages cannot take it. The
reference's JSON parser (serde_json) refuses it; :func:`loads` does too,
with the JSON pointer of the string (of the object, for a member's name),
looking only when the text holds such an escape.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from ...errors import AcpgenError, pointer

MAX_DEPTH = 100
"""The deepest nesting of arrays and objects accepted (the ACP schemas
nest about 10 deep; the metaschema check and the generator's stages recurse
on the schema, and handle this depth)."""
MAX_INT_DIGITS = 4300
"""Python's default limit for converting integer text (sys.int_info)."""

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],:]|[^\s{}\[\],:"]+|\s+|.', re.S)
_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\Z")
_CONSTANTS = ("NaN", "Infinity", "-Infinity")


class _Stopped(Exception):
    """A hook of the quick parse met a value :func:`check` refuses."""


def _constant(name: str) -> NoReturn:
    raise _Stopped


def _float(token: str) -> float:
    value = float(token)
    if math.isinf(value):
        raise _Stopped
    return value


def _int(token: str) -> int:
    if len(token) > MAX_INT_DIGITS:  # the sign counted: the scan decides
        raise _Stopped
    return int(token)


def depth_of(document: Any) -> int:
    """How deep arrays and objects nest in a parsed ``document`` (0 for a
    scalar), walked without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            values: Any = node.values()
        elif isinstance(node, list):
            values = node
        else:
            continue
        if depth > deepest:
            deepest = depth
        stack.extend((value, depth + 1) for value in values if isinstance(value, (dict, list)))
    return deepest


def loads(text: str, file: str) -> tuple[Any, int]:
    """The JSON document of ``text`` and how deep it nests, refusing the
    values of the module docstring as :func:`check` does (with the JSON
    pointer of the value). Malformed text raises ``json.JSONDecodeError``."""
    # Python refuses integer text longer than its own limit (ValueError, as
    # _int stops): under the default limit, the one accepted here, an int
    # needs no hook, which would be a call per integer of the schema.
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    parse_int = int if 0 < limit <= MAX_INT_DIGITS else _int
    try:
        document = json.loads(text, parse_constant=_constant, parse_float=_float, parse_int=parse_int)
    except (_Stopped, RecursionError, ValueError):
        pass
    else:
        depth = depth_of(document)
        if depth <= MAX_DEPTH:
            _refuse_lone_surrogates(text, document, file)
            return document, depth
    depth = check(text, file)
    document = json.loads(text, parse_constant=_not_json)
    _refuse_lone_surrogates(text, document, file)
    return document, depth


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""The escape of a UTF-16 surrogate, the only way one reaches a parsed
string: ``json`` joins an escaped pair into its character, and UTF-8 text
holds none. (Text this finds may hold no lone one: a pair, or an escaped
backslash before ``u``; the walk decides.)"""
_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_lone_surrogates(text: str, document: Any, file: str) -> None:
    """Refuse a string or member name of ``document`` holding a lone
    surrogate, with its JSON pointer (see the module docstring)."""
    if _SURROGATE_ESCAPE.search(text) is None:
        return
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(document, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            found = _SURROGATE.search(node)
            if found is not None:
                raise AcpgenError(_lone(found.group(), "the string"), file=file, pointer=pointer(path))
        elif isinstance(node, dict):
            for key, value in node.items():
                found = _SURROGATE.search(key)
                if found is not None:
                    raise AcpgenError(_lone(found.group(), "a member's name"), file=file, pointer=pointer(path))
                stack.append((value, (*path, key)))
        elif isinstance(node, list):
            stack.extend((value, (*path, index)) for index, value in enumerate(node))


def _lone(surrogate: str, what: str) -> str:
    return (
        f"{what} holds a lone surrogate (\\u{ord(surrogate):04x}), which is not Unicode text"
        " (JSON parsers such as serde_json refuse it)"
    )


def _not_json(name: str) -> NoReturn:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


def check(text: str, file: str) -> int:
    """Refuse the values of the module docstring; ``file`` names the text.
    Returns how deep arrays and objects nest in it."""
    # Each frame: [is_object, key or index, expecting a key].
    frames: list[list[bool | str | int | None]] = []
    deepest = 0

    def where() -> str:
        return pointer(frame[1] for frame in frames if frame[1] is not None)

    for match in _TOKEN.finditer(text):
        token = match.group()
        first = token[0]
        if first.isspace():
            continue
        if first in "{[":
            if len(frames) >= MAX_DEPTH:
                raise AcpgenError(
                    f"nested more than {MAX_DEPTH} levels deep (arrays and objects)", file=file, pointer=where()
                )
            frames.append([first == "{", None if first == "{" else 0, first == "{"])
            deepest = max(deepest, len(frames))
        elif first in "}]":
            if frames:
                frames.pop()
        elif first == ",":
            if frames:
                top = frames[-1]
                if top[0]:
                    top[2] = True
                elif isinstance(top[1], int):
                    top[1] += 1
        elif first == ":":
            continue
        elif first == '"':
            if frames and frames[-1][0] and frames[-1][2]:
                try:
                    frames[-1][1] = json.loads(token)
                except ValueError:
                    return deepest  # malformed: json reports it
                frames[-1][2] = False
        else:
            _check_literal(token, file, where)
    return deepest


def _check_literal(token: str, file: str, where: Callable[[], str]) -> None:
    if token in _CONSTANTS:
        raise AcpgenError(f"{token} is not JSON (JSON numbers are finite)", file=file, pointer=where())
    if not _NUMBER.match(token):
        return  # true, false, null, or malformed: json reports it
    if "." not in token and "e" not in token and "E" not in token:
        if len(token.lstrip("-")) > MAX_INT_DIGITS:
            raise AcpgenError(
                f"an integer of {len(token.lstrip('-'))} digits (more than {MAX_INT_DIGITS})",
                file=file,
                pointer=where(),
            )
    elif math.isinf(float(token)):
        raise AcpgenError(f"the number {_short(token)} is too large to be a finite float", file=file, pointer=where())


def _short(token: str) -> str:
    return token if len(token) <= 40 else token[:20] + "..." + token[-10:]
