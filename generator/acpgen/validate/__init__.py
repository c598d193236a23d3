"""``acpgen validate``: check a recorded ACP transcript against a generated package.

Library use::

    from acpgen.validate import load_package, validate_file
    findings = list(validate_file("session.jsonl", load_package("acp_v1")))

Each :class:`Finding` names the line, a kind, a message and, where a value is
wrong, the RFC 6901 JSON pointer into the line's message. A line that cannot
be read (not UTF-8, too deep, longer than ``max_line_bytes``) is a
``bad-line`` finding: no line of a transcript makes it raise.

:class:`Validator` is the same engine fed one line at a time (``acpgen
tap`` validates live with it).
"""

from .checker import KINDS, MAX_LINE_BYTES, Finding, Summary, json_backend, validate_file, validate_lines
from .live import Validator
from .loader import load_package, package_from_schema

__all__ = [
    "KINDS",
    "MAX_LINE_BYTES",
    "Finding",
    "Summary",
    "Validator",
    "json_backend",
    "load_package",
    "package_from_schema",
    "validate_file",
    "validate_lines",
]
