"""``acpgen validate``: check a recorded ACP transcript against a generated package.

Library use::

    from acpgen.validate import load_package, validate_file
    findings = list(validate_file("session.jsonl", load_package("acp_v1")))

Each :class:`Finding` names the line, a kind, a message and, where a value is
wrong, the RFC 6901 JSON pointer into the line's message.
"""

from .checker import KINDS, Finding, validate_file, validate_lines
from .loader import load_package, package_from_schema

__all__ = ["KINDS", "Finding", "load_package", "package_from_schema", "validate_file", "validate_lines"]
