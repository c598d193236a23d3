"""``acpgen validate TRANSCRIPT.jsonl``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn, TextIO

import click

from ..errors import AcpgenError
from ..validate.checker import KINDS, MAX_LINE_BYTES, Finding, Summary, validate_file
from ..validate.loader import load_package, package_from_schema
from .common import fail

DEFAULT_PACKAGE = "acp_v1"
"""The package a transcript is checked against when neither --package nor
--schema is given: v1, what the official Python SDK and today's editors speak."""

INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as shells report it."""


@click.command("validate")
@click.argument("transcript", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--package",
    "package",
    default=None,
    help="The generated package to check against: its directory, or an import name looked for in the 'out' "
    "directory of [tool.acpgen] in the nearest pyproject.toml (else generated/), then imported. "
    f"Without it (and without --schema), {DEFAULT_PACKAGE}, said on stderr with where it was found.",
)
@click.option(
    "--schema",
    "schema",
    type=click.Path(exists=True, dir_okay=False),
    help="Generate the package from this schema instead (into a temporary directory, removed before checking starts).",
)
@click.option(
    "--rules", "rules", help="With --schema: the rule set (v1, v1_unstable, v2, v2_unstable) for the session checks."
)
@click.option("--strict", is_flag=True, help="Count what lenient decoding repairs, and unanswered requests, as errors.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1),
    default=MAX_LINE_BYTES,
    show_default=True,
    help="A longer line is a bad-line finding, skipped without being read into memory.",
)
@click.option(
    "--html",
    "html",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the transcript with these findings as an HTML page there (what `acpgen report` writes).",
)
def validate_command(
    transcript: str,
    package: str | None,
    schema: str | None,
    rules: str | None,
    strict: bool,
    fmt: str,
    max_line_bytes: int,
    html: str | None,
) -> None:
    """Check a recorded ACP transcript, one JSON-RPC message per line.

    A line is a bare message or {"direction": "client_to_agent" |
    "agent_to_client", "message": {...}}. Reports, per line: invalid messages
    (with the JSON pointer), what lenient decoding silently drops or repairs,
    responses to unknown ids, duplicate ids, messages for unknown sessions,
    v1 tool call updates never started, a protocol version mismatch at
    initialize, and lines that are not JSON (not UTF-8, nested too deeply,
    longer than --max-line-bytes). Exit 1 when anything is wrong (warnings
    only count with --strict), 0 otherwise, 2 on a usage error (or a
    transcript that cannot be read), 130 when interrupted. A reader that
    stops early (| head) ends the output, not the check: the exit status
    still tells the whole transcript. --html also writes the page `acpgen
    report` writes, with these findings.

    Each finding names its line, the direction the line was sent in
    (client_to_agent or agent_to_client, where the transcript says) and,
    in --format json, the method (a response: of the request it answers).
    --format json writes one object a finding and, last, always, a summary
    object: {"summary": {"lines", "messages", "findings" (a count by kind),
    "errors", "warnings", "clean" (no errors: exit status 0)}}. A file that
    is one JSON array, not JSON Lines, is one finding saying so.

    The package checked against: --package (a directory, or an import name),
    else acp_v1. An import name is looked for where `acpgen generate` writes,
    the 'out' directory of the [tool.acpgen] table of the nearest
    pyproject.toml (generated/ of the working directory when no
    pyproject.toml has that table), and imported when it is not there; one
    not found is an error saying where it was looked for.
    """
    try:
        module = _generated(schema, rules) if schema else _package("validate", package)
    except AcpgenError as exc:
        fail(exc)
    except KeyboardInterrupt:
        _interrupted()
    out = _Output(sys.stdout)
    summary = Summary()
    kept: list[Finding] | None = [] if html is not None else None
    try:
        for finding in validate_file(transcript, module, strict=strict, max_line_bytes=max_line_bytes, summary=summary):
            if kept is not None:
                kept.append(finding)
            out.write(_json(finding) if fmt == "json" else str(finding))
    except KeyboardInterrupt:
        _interrupted()
    except OSError as exc:
        out.flush()
        fail(f"cannot read {transcript}: {exc.strerror or exc}")
    if fmt == "json":
        out.write(json.dumps(summary.to_json()))
    out.flush()
    if fmt == "text":
        _say(f"{transcript}: {summary.errors} error(s), {summary.warnings} warning(s)")
    if html is not None:
        _page(transcript, html, module, kept or [], max_line_bytes)
    sys.exit(1 if summary.errors else 0)


def _page(transcript: str, html: str, module: Any, findings: list[Finding], max_line_bytes: int) -> None:
    """``--html``: the report page of the transcript with the findings at hand."""
    from ..report import write_report

    if Path(html).resolve() == Path(transcript).resolve():
        fail(f"{html}: the page would replace the transcript; give another --html")
    try:
        write_report(transcript, html, module, findings, max_line_bytes=max_line_bytes)
    except AcpgenError as exc:
        fail(exc)
    except KeyboardInterrupt:
        _interrupted()
    except OSError as exc:
        fail(f"cannot read {transcript}: {exc.strerror or exc}")
    _say(f"acpgen validate: wrote {html}")


def _package(command: str, package: str | None) -> ModuleType:
    """The package of ``--package``, or the default, said on stderr with
    where it was found."""
    module = load_package(package or DEFAULT_PACKAGE)
    if package is None:
        where = os.path.dirname(getattr(module, "__file__", None) or "") or DEFAULT_PACKAGE
        _say(
            f"acpgen {command}: checking against {DEFAULT_PACKAGE} (the default; --package or --schema to choose): "
            f"{os.path.relpath(where)}"
        )
    return module


def _generated(schema: str, rules: str | None) -> Any:
    """The package generated from ``schema``; a SIGTERM meanwhile unwinds
    (so that the temporary directory goes) instead of killing at once."""
    previous = signal.getsignal(signal.SIGTERM)

    def terminated(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    try:
        signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread: no handler
        return package_from_schema(schema, rules)
    try:
        return package_from_schema(schema, rules)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _json(finding: Finding) -> str:
    return json.dumps(finding.to_json())


class _Output:
    """Lines to stdout, until the reader goes: a closed pipe (``| head``)
    makes the rest of the output go nowhere, quietly, while the check goes
    on. Text that stdout's encoding cannot hold (a lone surrogate in a
    pointer) is written escaped."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.closed = False
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # A stream that refuses keeps its own error handling.
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")

    def write(self, line: str) -> None:
        if self.closed:
            return
        try:
            self.stream.write(line + "\n")
        except BrokenPipeError:
            self._gone()
        except UnicodeEncodeError:
            self.write(line.encode("ascii", "backslashreplace").decode("ascii"))

    def flush(self) -> None:
        if self.closed:
            return
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._gone()

    def _gone(self) -> None:
        """Point stdout at /dev/null, so that the interpreter's own flush at
        exit has somewhere to write what is still buffered."""
        self.closed = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):  # no file descriptor (a test's stream)
            pass


def _say(text: str) -> None:
    """A line to stderr, unless stderr is gone too."""
    with contextlib.suppress(BrokenPipeError):  # stderr closed as well
        click.echo(text, err=True)


def _interrupted() -> NoReturn:
    _say("acpgen: interrupted")
    sys.exit(INTERRUPTED)


__all__ = ["KINDS", "validate_command"]
