"""The output forms of ``acpgen diff``: plain text (:func:`render_text`),
Markdown for a changelog or pull-request comment (:func:`render_markdown`) and
JSON (:func:`render_json`), the one-line :func:`headline` they share, and
:data:`RENDERERS`, the forms by their ``--format`` name."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from .model import KIND_TITLES, KINDS, Change, SchemaDiff

# ---------------------------------------------------------------- output


def render_json(diff: SchemaDiff) -> str:
    """The JSON form: sorted keys, two-space indent, a final newline."""
    return json.dumps(diff.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _ordered(changes: Iterable[Change]) -> list[Change]:
    return sorted(changes, key=lambda c: (KINDS.index(c.kind), c.path, c.summary))


def _short_sha(sha: str) -> str:
    return sha[:12]


def headline(diff: SchemaDiff) -> str:
    """One line: how many changes, how many break what."""
    counts = diff.summary()
    if not counts["changes"]:
        return "no changes"
    return (
        f"{counts['changes']} change{'s' if counts['changes'] != 1 else ''}: "
        f"{counts['breaking']} breaking ({counts['wire_breaking']} on the wire, "
        f"{counts['api_breaking']} in the Python API), {counts['compatible']} compatible"
    )


def _tags(change: Change) -> str:
    parts = [name for name, impact in (("wire", change.wire), ("api", change.api)) if impact.breaking]
    return "+".join(parts) if parts else "compatible"


def render_text(diff: SchemaDiff, *, verbose: bool = True) -> str:
    """Plain text: a header, then every breaking change with both reasons,
    then the compatible changes one a line (with ``verbose``)."""
    lines = [
        f"old: {diff.old.file} ({diff.old.version or 'version unknown'}, sha256 {_short_sha(diff.old.sha256)})",
        f"new: {diff.new.file} ({diff.new.version or 'version unknown'}, sha256 {_short_sha(diff.new.sha256)})",
        headline(diff),
    ]
    breaking = _ordered(diff.breaking)
    if breaking:
        lines.append("")
        lines.append("breaking:")
        for change in breaking:
            lines.append(f"  [{_tags(change)}] {change.kind} {change.path}: {change.summary}")
            lines.append(f"      wire: {'BREAKING' if change.wire.breaking else 'ok'}: {change.wire.reason}")
            lines.append(f"      api:  {'BREAKING' if change.api.breaking else 'ok'}: {change.api.reason}")
    compatible = _ordered(diff.compatible)
    if compatible and verbose:
        lines.append("")
        lines.append("compatible:")
        for change in compatible:
            lines.append(f"  {change.kind} {change.path}: {change.summary}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    """Plain text made safe to put in Markdown prose; its code spans (the
    backticks the messages put around names and types) are kept as they are."""
    out = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "`":
            run = len(text[index:]) - len(text[index:].lstrip("`"))
            close = text.find("`" * run, index + run)
            if close != -1:
                out.append(text[index : close + run])
                index = close + run
                continue
            out.append("\\`" * run)
            index += run
            continue
        if char in "\\*_":
            out.append("\\" + char)
        elif char == "<":
            out.append("&lt;")
        elif char == ">":
            out.append("&gt;")
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _code(text: str) -> str:
    ticks = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def render_markdown(diff: SchemaDiff, *, title: str | None = None) -> str:
    """Markdown for a changelog entry or a pull-request comment: the
    breaking changes in full, the compatible ones folded, grouped by kind."""
    old, new = diff.old, diff.new
    name = title or _common_name(old.file, new.file)
    counts = diff.summary()
    lines = [
        f"### Schema changes: {_code(name)} {_md(old.label)} → {_md(new.label)}",
        "",
        f"- old: {_code(old.file)} (version {_md(old.version or 'unknown')}, sha256 {_code(_short_sha(old.sha256))})",
        f"- new: {_code(new.file)} (version {_md(new.version or 'unknown')}, sha256 {_code(_short_sha(new.sha256))})",
        "",
    ]
    if not counts["changes"]:
        lines.append("No changes.")
        return "\n".join(lines) + "\n"
    lines.append(
        f"**{counts['changes']} changes: {counts['breaking']} breaking** "
        f"({counts['wire_breaking']} on the wire, {counts['api_breaking']} for the Python API), "
        f"{counts['compatible']} compatible."
    )
    breaking = _ordered(diff.breaking)
    if breaking:
        lines += ["", f"#### Breaking changes ({len(breaking)})", ""]
        for change in breaking:
            where = (
                "wire and Python API"
                if change.wire.breaking and change.api.breaking
                else ("wire" if change.wire.breaking else "Python API")
            )
            lines.append(
                f"- **{_md(KIND_TITLES[change.kind])}** {_code(change.path)}: {_md(change.summary)} _(breaks the {where})_"
            )
            lines.append(
                f"  - wire: {'**breaking**' if change.wire.breaking else 'compatible'}: {_md(change.wire.reason)}"
            )
            lines.append(
                f"  - Python: {'**breaking**' if change.api.breaking else 'compatible'}: {_md(change.api.reason)}"
            )
    compatible = diff.compatible
    if compatible:
        lines += ["", "<details>", f"<summary>Compatible changes ({len(compatible)})</summary>", ""]
        groups: dict[str, list[Change]] = {}
        for change in _ordered(compatible):
            groups.setdefault(change.kind, []).append(change)
        for kind, changes in groups.items():
            lines.append(f"**{_md(KIND_TITLES[kind][:1].upper() + KIND_TITLES[kind][1:])}** ({len(changes)})")
            lines.append("")
            for change in changes:
                lines.append(f"- {_code(change.path)}: {_md(change.summary)}")
            lines.append("")
        lines.append("</details>")
    return "\n".join(lines) + "\n"


def _common_name(old: str, new: str) -> str:
    """The longest common trailing path of the two files (``v2/schema.json``)."""
    a, b = old.replace("\\", "/").split("/"), new.replace("\\", "/").split("/")
    common: list[str] = []
    while a and b and a[-1] == b[-1]:
        common.insert(0, a.pop())
        b.pop()
    return "/".join(common) or new


RENDERERS: dict[str, Callable[[SchemaDiff], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
}
