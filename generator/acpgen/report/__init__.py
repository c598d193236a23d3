"""``acpgen report``: a transcript as one self-contained HTML page.

Library use::

    from acpgen.report import write_report
    from acpgen.validate import load_package
    write_report("session.jsonl", "session.html", load_package("acp_v1"))

The transcript is folded in Python (:mod:`.fold`: chunks joined into
messages, tool calls with their updates, diffs as line diffs, permission
requests with their answers; the messages carrying trace context grouped
by trace, :mod:`.traces`) and checked with :mod:`acpgen.validate`, whose
findings the page pins to their lines; :mod:`.page` writes the HTML, whose
script (``page.js``) draws only the rows in view.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import __version__
from ..validate.checker import KINDS, MAX_LINE_BYTES, Finding, _file_lines, _TooLong, validate_file
from . import values as v
from .fold import DIRECTIONS, MAX_PAYLOAD, MAX_RAW, Fold
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
                    fold.bad(n, value, "", text)
                continue
            record = value[0]
            direction = ""
            if isinstance(record, dict) and "jsonrpc" not in record:
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
    recorded, their directions and what the sequence view draws of them,
    read when a view needs them; the rest: the fold). ``findings``: those of
    :func:`acpgen.validate.validate_file` already at hand; else they are
    computed here with ``package`` (None: no findings)."""
    fold, raw, directions = fold_file(path, max_line_bytes)
    if findings is None:
        findings = [] if package is None else validate_file(path, package, strict=strict, max_line_bytes=max_line_bytes)
    found = [
        [f.line, f.kind, f.message, f.pointer, f.error, DIRECTIONS.get(f.direction or "", ""), f.method or ""]
        for f in findings
    ]
    _payloads(fold, raw, found)
    return {
        "title": title or Path(path).name,
        "source": str(path),
        "package": getattr(package, "__name__", "") if package is not None else "",
        "generator": f"acpgen {__version__}",
        "lineCount": len(raw),
        "lines": {"raw": raw, "dirs": directions, "seq": fold.sequence(len(raw))},
        "rows": [row.to_json() for row in fold.rows],
        "sessions": [session.to_json() for session in fold.sessions],
        "terminals": fold.terminals,
        "findings": found,
        "kinds": KINDS,
        "latency": latency(fold.latency),
        "traces": fold.traces.to_json(),
        "timed": fold.origin is not None,
    }


def _payloads(fold: Fold, raw: list[str], found: list[list[Any]]) -> None:
    """The raw payload of each line an ``invalid`` or ``bad-line`` finding
    names, on the row that holds it (what the conversation cannot draw)."""
    lines = {finding[0] for finding in found if finding[1] in ("invalid", "bad-line")}
    if not lines:
        return
    for row in fold.rows:
        have = {entry[0] for entry in row.data.get("raw", [])}
        for line in row.lines:
            if line in lines and line not in have and 0 < line <= len(raw):
                row.data.setdefault("raw", []).append([line, v.cut(raw[line - 1], MAX_PAYLOAD)])


def latency(times: dict[str, list[float]]) -> list[list[Any]]:
    """Per method, ``[method, count, p50, p99, max]`` of its round trips in
    milliseconds (nearest-rank percentiles), the slowest p99 first."""
    rows: list[tuple[str, int, float, float, float]] = []
    for method, values in times.items():
        ordered = sorted(values)
        rows.append((method, len(ordered), _rank(ordered, 0.50), _rank(ordered, 0.99), ordered[-1]))
    rows.sort(key=lambda entry: (-entry[3], entry[0]))
    return [list(entry) for entry in rows]


def _rank(ordered: list[float], share: float) -> float:
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def render_report(data: dict[str, Any], *, live: bool = False) -> str:
    """The page, whole, as a string (``live``: one ``acpgen report --live``
    serves, which may ask its server whether the transcript grew)."""
    return "".join(_parts(data, live))


def _parts(data: dict[str, Any], live: bool = False) -> Iterable[str]:
    lines = data["lines"]
    return page_parts(str(data["title"]), {k: v for k, v in data.items() if k != "lines"}, lines, live=live)


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


__all__ = ["fold_file", "latency", "render_report", "report_data", "script_json", "write_report"]
