"""``acpgen report``: a transcript as one self-contained HTML page.

Library use::

    from acpgen.report import write_report
    from acpgen.validate import load_package
    write_report("session.jsonl", "session.html", load_package("acp_v1"))

The transcript is folded in Python (:mod:`.fold`: chunks joined into
messages, tool calls with their updates, diffs as line diffs, permission
requests with their answers) and checked with :mod:`acpgen.validate`, whose
findings the page pins to their lines; :mod:`.page` writes the HTML, whose
script (``page.js``) draws only the rows in view.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import __version__
from ..validate.checker import KINDS, MAX_LINE_BYTES, Finding, _file_lines, _TooLong, validate_file
from .fold import DIRECTIONS, MAX_RAW, Fold
from .page import page_parts, script_json, write_atomically


def fold_file(path: str | Path, max_line_bytes: int = MAX_LINE_BYTES) -> tuple[Fold, list[str], str]:
    """The fold of a transcript file, its lines as text (each cut at
    :data:`~.fold.MAX_RAW` characters) and their directions (one character
    a line: ``c``, ``a`` or ``-``)."""
    fold = Fold()
    raw: list[str] = []
    directions: list[str] = []
    with open(path, "rb", buffering=1 << 20) as stream:
        for n, line in enumerate(_file_lines(stream, max_line_bytes), 1):
            if isinstance(line, _TooLong):
                raw.append("")
                directions.append("-")
                fold.bad(n, f"line too long: over {max_line_bytes} bytes; not read")
                continue
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            raw.append(
                text if len(text) <= MAX_RAW else text[:MAX_RAW] + f"\u2026 [{len(text) - MAX_RAW} more characters]"
            )
            value = _parse(line)
            if isinstance(value, str):
                directions.append("-")
                if value:
                    fold.bad(n, value)
                continue
            record = value[0]
            direction = ""
            if isinstance(record, dict) and "message" in record and "jsonrpc" not in record:
                direction = DIRECTIONS.get(str(record.get("direction")), "")
            directions.append(direction or "-")
            fold.add(n, record)
    return fold, raw, "".join(directions)


def _parse(line: bytes) -> tuple[Any] | str:
    """``(value,)``, or why the line is not JSON (``""``: a blank line)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8: byte 0x{line[exc.start]:02x} at offset {exc.start}"
    if not text.strip():
        return ""
    try:
        return (json.loads(text),)
    except RecursionError:
        return "nested too deeply to parse"
    except ValueError as exc:
        return f"not JSON: {exc}"


def report_data(
    path: str | Path,
    package: ModuleType | None,
    findings: Iterable[Finding] | None = None,
    *,
    strict: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    title: str | None = None,
) -> dict[str, Any]:
    """What the page shows, as JSON-ready values (``lines``: the lines as
    recorded and their directions, the rest: the fold). ``findings``: those of
    :func:`acpgen.validate.validate_file` already at hand; else they are
    computed here with ``package`` (None: no findings)."""
    fold, raw, directions = fold_file(path, max_line_bytes)
    if findings is None:
        findings = [] if package is None else validate_file(path, package, strict=strict, max_line_bytes=max_line_bytes)
    found = [[f.line, f.kind, f.message, f.pointer, f.error] for f in findings]
    return {
        "title": title or Path(path).name,
        "source": str(path),
        "package": getattr(package, "__name__", "") if package is not None else "",
        "generator": f"acpgen {__version__}",
        "lineCount": len(raw),
        "lines": {"raw": raw, "dirs": directions},
        "rows": [row.to_json() for row in fold.rows],
        "sessions": [session.to_json() for session in fold.sessions],
        "terminals": fold.terminals,
        "findings": found,
        "kinds": KINDS,
    }


def render_report(data: dict[str, Any]) -> str:
    """The page, whole, as a string."""
    return "".join(_parts(data))


def _parts(data: dict[str, Any]) -> Iterable[str]:
    lines = data["lines"]
    return page_parts(str(data["title"]), {k: v for k, v in data.items() if k != "lines"}, lines)


def write_report(
    path: str | Path,
    output: str | Path,
    package: ModuleType | None,
    findings: Iterable[Finding] | None = None,
    *,
    strict: bool = False,
    max_line_bytes: int = MAX_LINE_BYTES,
    title: str | None = None,
) -> dict[str, Any]:
    """Fold and check ``path`` and write its page to ``output`` atomically;
    returns the data the page holds."""
    data = report_data(path, package, findings, strict=strict, max_line_bytes=max_line_bytes, title=title)
    write_atomically(Path(output), _parts(data))
    return data


__all__ = ["fold_file", "render_report", "report_data", "script_json", "write_report"]
