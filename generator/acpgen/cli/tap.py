"""``acpgen tap -- AGENT COMMAND...``."""

from __future__ import annotations

import contextlib
import os
import sys

import click

from ..validate.checker import MAX_LINE_BYTES

DRAIN_SECONDS = 30.0
"""The default of ``--drain-seconds``: how long, after the agent exits, its
stdout is still read at most."""

HELP = """Run an ACP agent behind a transparent proxy that records and validates the session.

The editor starts `acpgen tap ... -- AGENT COMMAND...` instead of the agent.
tap starts the agent and passes every byte between the editor and the agent
unchanged, as it is read (partial lines, invalid UTF-8 and huge lines too);
writes the transcript (--out) in the format `acpgen validate` reads, one
record per line with its direction and timestamp, each line recorded before
the bytes that end it are passed on (a kill at any moment loses at most the
line being passed on); and checks it live with the engine of `acpgen
validate` (the ids in flight, the sessions, the tool calls, the negotiated
version), each finding one line on stderr (or in --findings) as it happens:
line of the transcript, direction, level, kind, JSON pointer and message;
then a summary line. The transcript starts with a start record and, when
tap ends normally, ends with an end record: `acpgen validate` reports one
without its end as cut short.

The checks run in a process of their own, which reads the transcript:
forwarding never waits for them, and tap exits as soon as the agent has
exited and its stdout is drained; the checks finish on their own. Validation
that falls --max-backlog lines behind stops, saying so; a transcript that
cannot be written (a full disk) stops recording and the checks with it,
saying so; an error of the checks themselves is said once. The session goes on in every case. tap
passes SIGINT, SIGTERM and SIGHUP to the agent, closes the agent's stdin
when the editor closes its side, and exits with the agent's exit status
(128 + the signal when a signal ended it; 127 when the command is not
found).

The package checked against is picked by the protocol version initialize
negotiates (acp_v1 for 1, acp_v2 for 2) unless --package names one (a
directory, or an import name). A package named by import name is looked
for where `acpgen generate` writes: the 'out' directory of the
[tool.acpgen] table of the nearest pyproject.toml (generated/ of the
working directory when no pyproject.toml has that table); else it is
imported. One not found is said on stderr with where it was looked for,
and the session is forwarded and recorded unchecked.

\b
Zed (settings.json):
  "agent_servers": {
    "My Agent (tapped)": {
      "type": "custom",
      "command": "acpgen",
      "args": ["tap", "--out", "/tmp/my-agent.jsonl",
               "--package", "/path/to/generated/acp_v1",
               "--", "my-agent", "--acp"],
      "env": {}
    }
  }

\b
Any editor that takes a command and its arguments:
  command: acpgen
  args:    tap --out /tmp/my-agent.jsonl -- my-agent --acp
(acpgen by its full path, e.g. /path/to/.venv/bin/acpgen, when the editor
does not run it from that virtual environment). Then, afterwards:
  acpgen validate /tmp/my-agent.jsonl
"""


@click.command(
    "tap",
    help=HELP,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False),
    help="Write the transcript here (replaced); without it nothing is kept (the checks read a temporary copy).",
)
@click.option(
    "--package",
    "package",
    help="The generated package to check against (its directory, or an import name looked for in the 'out' "
    "directory of [tool.acpgen] in the nearest pyproject.toml, else generated/, then imported), instead of "
    "the one the negotiated protocol version picks.",
)
@click.option(
    "--findings",
    "findings",
    type=click.Path(dir_okay=False),
    help="Write the findings to this file (replaced) instead of stderr, each as found, then the summary line "
    "(`summary: ...`) once the checks end: a file without it is from checks that were killed.",
)
@click.option("--strict", is_flag=True, help="Count what lenient decoding repairs, and unanswered requests, as errors.")
@click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1),
    default=MAX_LINE_BYTES,
    show_default=True,
    help="A longer line is forwarded as it is but not held: recorded by its length, a bad-line finding.",
)
@click.option(
    "--max-backlog",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    help="Validation that falls this many lines behind the traffic stops (said on stderr); "
    "forwarding and recording go on.",
)
@click.option(
    "--drain-seconds",
    type=click.FloatRange(min=0),
    default=DRAIN_SECONDS,
    show_default=True,
    help="After the agent exits, read its stdout at most this long for what is left (a child of the agent may "
    "hold it open); tap exits as soon as it ends.",
)
@click.option("--no-checks", is_flag=True, help="No validation (the transcript is still written with --out).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- AGENT COMMAND...")
def tap_command(
    out: str | None,
    package: str | None,
    findings: str | None,
    strict: bool,
    max_line_bytes: int,
    max_backlog: int,
    drain_seconds: float,
    no_checks: bool,
    command: tuple[str, ...],
) -> None:
    from ..tap.proxy import run

    config = None
    if not no_checks:
        config = {
            "out": out,
            "package": package,
            "findings": findings,
            "strict": strict,
            "max_line_bytes": max_line_bytes,
            "max_backlog": max_backlog,
        }
    status = run(command, config, out=out, max_line_bytes=max_line_bytes, drain_seconds=drain_seconds)
    # Out now, not through the interpreter's shutdown: that restores the
    # default handlers of the signals passed on to the agent, and an editor's
    # SIGTERM for the agent's process tree, arriving then, would end tap with
    # it instead of the agent's status (everything is written: raw writes).
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


__all__ = ["tap_command"]
