"""``acpgen report TRANSCRIPT.jsonl -o session.html``."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from ..errors import AcpgenError
from ..report.live import DEFAULT_INTERVAL
from ..validate.checker import MAX_LINE_BYTES
from .common import fail
from .validate import DEFAULT_PACKAGE, _generated, _interrupted, _package, _say


@click.command("report")
@click.argument("transcript", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(dir_okay=False),
    default=None,
    help="The HTML file to write (replaced whole, never left half written). Default: the transcript's name with .html.",
)
@click.option(
    "--package",
    "package",
    default=None,
    help="The generated package the findings come from: its directory, or an import name looked for in the "
    "'out' directory of [tool.acpgen] in the nearest pyproject.toml (else generated/), then imported. "
    f"Without it (and without --schema), {DEFAULT_PACKAGE}, said on stderr with where it was found.",
)
@click.option(
    "--schema",
    "schema",
    type=click.Path(exists=True, dir_okay=False),
    help="Generate that package from this schema instead (into a temporary directory, removed before checking starts).",
)
@click.option(
    "--rules", "rules", help="With --schema: the rule set (v1, v1_unstable, v2, v2_unstable) for the session checks."
)
@click.option("--strict", is_flag=True, help="Show what lenient decoding repairs, and unanswered requests, as errors.")
@click.option("--title", default=None, help="The page's title. Default: the transcript's file name.")
@click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1),
    default=MAX_LINE_BYTES,
    show_default=True,
    help="A longer line is a bad-line finding, skipped without being read into memory.",
)
@click.option(
    "--live",
    is_flag=True,
    help="Serve the page on 127.0.0.1 instead of writing it, drawn again as the transcript grows "
    "(while acpgen tap writes it); the address is said on stderr. Ctrl-C stops.",
)
@click.option(
    "--port",
    type=click.IntRange(min=0, max=65535),
    default=0,
    show_default=True,
    help="With --live: the port to serve on (0: a free one).",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05),
    default=DEFAULT_INTERVAL,
    show_default=True,
    help="With --live: seconds between the page's questions whether the transcript grew.",
)
def report_command(
    transcript: str,
    output: str | None,
    package: str | None,
    schema: str | None,
    rules: str | None,
    strict: bool,
    title: str | None,
    max_line_bytes: int,
    live: bool,
    port: int,
    interval: float,
) -> None:
    """Write a recorded ACP transcript as one self-contained HTML page.

    The page shows the session as an editor would: user and agent messages
    and thoughts (streamed chunks joined), tool calls with their status,
    content and diffs (old and new text as a line diff), plans, permission
    requests with their answers, usage and the end of each turn; every
    finding of `acpgen validate` pinned to its line with its JSON pointer; a
    session filter; and every line as it was recorded (Lines). It loads
    nothing (no network, scripts, fonts or images from elsewhere; a
    Content-Security-Policy says so) and draws only the rows in view, so a
    transcript of 100,000 lines opens at once. Transcript text is shown as
    text, never run as markup. Exit 0 once the page is written, 2 on a usage
    error or a file that cannot be read or written, 130 when interrupted.

    Search (Ctrl+F) looks through every message, not only the rows drawn,
    and goes to each match. A transcript with timestamps (acpgen tap writes
    them) shows each request's round trip, each turn's time and time to its
    first chunk, each tool call's duration and each permission wait, and a
    Timings view with p50/p99 round trips by method.

    --live serves the page on 127.0.0.1 (--port, else a free port, said on
    stderr) instead of writing it: the page asks every --interval seconds
    whether the transcript grew and then draws it again, keeping its place
    (at the end, it follows the end). Ctrl-C stops the server (exit 0).

    The package the findings come from is found as `acpgen validate` finds
    it: --package (a directory, or an import name), else acp_v1; an import
    name is looked for in the 'out' directory of the [tool.acpgen] table of
    the nearest pyproject.toml (generated/ of the working directory when no
    pyproject.toml has that table), then imported.
    """
    from ..report import write_report

    if live:
        _live(transcript, output, package, schema, rules, strict, title, max_line_bytes, port, interval)
    target = Path(output) if output is not None else Path(transcript).with_suffix(".html")
    if target.resolve() == Path(transcript).resolve():
        fail(f"{target}: the output would replace the transcript; give another -o")
    try:
        module = _generated(schema, rules) if schema else _package("report", package)
        data = write_report(transcript, target, module, strict=strict, max_line_bytes=max_line_bytes, title=title)
    except AcpgenError as exc:
        fail(exc)
    except KeyboardInterrupt:
        _interrupted()
    except OSError as exc:
        fail(f"cannot read {transcript}: {exc.strerror or exc}")
    errors = sum(1 for finding in data["findings"] if finding[4])
    _say(
        f"acpgen report: wrote {target} ({data['lineCount']} lines, {len(data['sessions'])} session(s), "
        f"{errors} error(s), {len(data['findings']) - errors} warning(s))"
    )
    sys.exit(0)


def _live(
    transcript: str,
    output: str | None,
    package: str | None,
    schema: str | None,
    rules: str | None,
    strict: bool,
    title: str | None,
    max_line_bytes: int,
    port: int,
    interval: float,
) -> NoReturn:
    """``--live``: serve the page until Ctrl-C (or SIGTERM)."""
    from ..report.live import LiveReport, serve

    if output is not None:
        fail("--live serves the page and writes no file: give -o or --live, not both")
    try:
        module = _generated(schema, rules) if schema else _package("report", package)
        report = LiveReport(
            transcript, module, strict=strict, max_line_bytes=max_line_bytes, title=title, interval=interval
        )
        report.page()  # a transcript that cannot be read fails here, before serving
        server = serve(report, port=port)
    except AcpgenError as exc:
        fail(exc)
    except KeyboardInterrupt:
        _interrupted()
    except OSError as exc:
        fail(f"cannot serve {transcript} on 127.0.0.1:{port}: {exc.strerror or exc}")
    _say(f"acpgen report: serving {transcript} at http://127.0.0.1:{server.server_port}/ (Ctrl-C stops)")
    previous = signal.getsignal(signal.SIGTERM)

    def terminated(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminated)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
    _say("acpgen report: stopped")
    sys.exit(0)


__all__ = ["report_command"]
