"""``acpgen replay TRANSCRIPT --as agent|client -- COMMAND...`` and
``acpgen explore SCENARIO``."""

from __future__ import annotations

import asyncio
import json
import sys

import click

from ..errors import AcpgenError
from .common import fail

REPLAY_HELP = """Replay a recorded session against a live peer and say where it diverges.

--as agent: serve the agent side of TRANSCRIPT to a live client. The client
command is run with the replay agent's command in place of a `{agent}`
argument (appended when there is none), so the client starts it as it would
start its agent; with no client command the agent side is served on this
process's stdin and stdout (the command an editor is configured with). Each
client message is matched with a recorded one by method and params, up to
ids (session, tool call, message, terminal and request ids, which are
remapped) and volatile fields (_meta, the peers' names, cwd, the text of an
error); its recorded reaction is sent, at once (--timing compressed) or as
far apart as recorded (--timing recorded; a transcript without timestamps
plays compressed).

--as client: drive the agent command with the client side of TRANSCRIPT,
each client message sent once what the recording has before it has come,
the agent's ids in place of the recorded ones; every agent message that
differs from the recording is reported with the JSON path of each
difference. Updates racing a session/cancel (sent after it and before the
turn ends, which the spec allows) are said, and left out of the folds.

In both directions the session fold of the replayed run (the generated
package's Session, as its client connection folds it) must equal the
recorded one; every difference is reported. TRANSCRIPT is what `acpgen tap`
writes, the relay format of the SDK transcripts, or a hand-written script
(`-> {message}` and `<- {message}` lines). Exit status: 0 when the run
matches the recording, 1 when it diverges, 2 on bad input.
"""


def _show(result: object, fmt: str) -> None:
    from ..replay.script import ReplayResult

    assert isinstance(result, ReplayResult)
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
        return
    for finding in result.findings:
        click.echo(str(finding))
    fold = "equal" if result.fold_equal else "different"
    verdict = "matches the recording" if result.ok else "diverges from the recording"
    click.echo(f"acpgen replay: {result.exchanged} messages; session fold {fold}; the run {verdict}")


@click.command("replay", help=REPLAY_HELP, context_settings={"ignore_unknown_options": True})
@click.argument("transcript", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--as",
    "side",
    type=click.Choice(["agent", "client"]),
    required=True,
    help="The side of the recording acpgen plays.",
)
@click.option(
    "--timing",
    type=click.Choice(["compressed", "recorded"]),
    default="compressed",
    show_default=True,
    help="--as agent: send each recorded message at once, or as long after the one before it as recorded.",
)
@click.option(
    "--package",
    default=None,
    help="The generated package that reads and folds the messages (a directory or an import name). "
    "Default: acp_v1 or acp_v2, by the version the recording negotiated.",
)
@click.option(
    "--patience",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="--as client: seconds to wait for a recorded message before saying it is missing.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="-- COMMAND...")
def replay_command(
    transcript: str, side: str, timing: str, package: str | None, patience: float, fmt: str, command: tuple[str, ...]
) -> None:
    try:
        if side == "client":
            if not command:
                fail("--as client needs the agent's command after --")
            from ..replay.client import replay_to_agent

            result = replay_to_agent(transcript, command, package=package, patience=patience)
        elif command:
            from ..replay.runs import replay_to_client

            result, done = replay_to_client(transcript, command, timing=timing, package=package)
            if done.returncode != 0:
                tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
                click.echo(f"acpgen replay: the client exited with status {done.returncode}", err=True)
                for line in tail:
                    click.echo(f"    {line}", err=True)
        else:
            from ..replay.agent import serve_stdio
            from ..replay.fold import package_for
            from ..replay.transcript import load_transcript

            recording = load_transcript(transcript)
            replayer = asyncio.run(
                serve_stdio(recording, timing, None, package_for(recording.protocol_version, package))
            )
            for finding in replayer.findings:
                click.echo(f"acpgen replay: {finding}", err=True)
            sys.exit(1 if any(f.failure for f in replayer.findings) else 0)
    except AcpgenError as error:
        fail(error)
    _show(result, fmt)
    sys.exit(0 if result.ok else 1)


EXPLORE_HELP = """Run one exchange under many delivery schedules and report the first whose outcome differs.

SCENARIO (a transcript, or a hand-written `->`/`<-` script) is played, in
this process, to a client connection under test: --client acpgen (the
generated package's ClientSideConnection) or python-sdk (the official
Python SDK's, when installed), whose application answers the agent's
requests (permission, fs) as recorded. The agent's messages are delivered
one at a time with the client idle in between (the baseline), with no pause
before each one in turn and before all (what one read of a pipe gives),
with neighbours swapped where JSON-RPC and ACP allow either order, and with
the client cancelling each turn without agent requests after each of its
updates. A schedule's outcome differs when an answer or a request of the
agent reaches the application before the updates delivered ahead of it
were handled, or when its answers, its answers to the agent or its session
fold differ from the baseline's. Exit status: 0 when no schedule differs, 1
when one does (it is printed, with the JSON path of each difference), 2 on
bad input.
"""


@click.command("explore", help=EXPLORE_HELP)
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--client",
    "client",
    type=click.Choice(["acpgen", "python-sdk"]),
    default="acpgen",
    show_default=True,
    help="The client connection under test.",
)
@click.option("--package", default=None, help="The generated package (default: acp_v1 or acp_v2, by the scenario).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Run at most this many schedules.")
@click.option("--list", "listing", is_flag=True, help="List the schedules and run none.")
def explore_command(scenario: str, client: str, package: str | None, limit: int | None, listing: bool) -> None:
    from ..replay.explore import PythonSdkClient, explore, schedules
    from ..replay.transcript import load_transcript

    try:
        if listing:
            for schedule in schedules(load_transcript(scenario)):
                click.echo(schedule.name)
            return
        make = PythonSdkClient if client == "python-sdk" else None
        if make is not None:
            try:
                import acp  # noqa: F401
            except ImportError:
                fail("--client python-sdk needs the official Python SDK: pip install agent-client-protocol")
        result = explore(scenario, make, package=package, limit=limit)
    except (AcpgenError, ValueError) as error:
        fail(str(error))
    click.echo(
        f"acpgen explore: {result.client}: {result.runs} of {result.total} schedules run in {result.seconds:.2f} s"
    )
    if result.divergence is None:
        click.echo("acpgen explore: no schedule differs")
        return
    click.echo(str(result.divergence))
    sys.exit(1)
