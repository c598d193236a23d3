"""``acpgen bridge --client-protocol v1|v2 -- AGENT COMMAND...``."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import click

from ..errors import AcpgenError
from .common import fail

HELP = """Run an agent of one ACP version behind a translating proxy for a client of the other.

The client starts `acpgen bridge --client-protocol v1 -- AGENT COMMAND...`
where it would start the agent: the bridge speaks ACP v1 to the client on
its stdin/stdout and ACP v2 to the agent it starts (`--client-protocol v2`:
the reverse). Every message is translated as it arrives, in both
directions: requests, their answers, session/update notifications (streamed
one by one), the agent's permission requests, session/cancel and
$/cancel_request.

What corresponds between the versions is computed from the two generated
packages' schemas (acp_v1 and acp_v2: the same method, field, variant tag,
enum value); what only the protocol's prose decides (renamed fields, v1's
toolCall against v2's permission subject, v1's prompt answer at the end of
the turn against v2's early answer and idle state_update, methods and
variants one version lacks) is in rules/bridge.toml (--rules gives another
file).

Nothing is dropped silently: every value with no counterpart in the other
version is recorded, with the direction, the method, the JSON pointer of
the field and the value's JSON (cut to 200 characters), once per message,
as a line on stderr or a JSON line in --lost-log, and (unless --no-notes)
under the key "acpgen.bridge/lost" of the translated message's _meta. A
request of a method the other version lacks is answered -32601 by the
bridge itself.

The bridge exits with the agent's exit status when the agent has exited and
its output is passed on; it passes SIGINT, SIGTERM and SIGHUP to the agent
and closes the agent's stdin when the client closes its side.

\b
Examples:
  acpgen bridge --client-protocol v1 -- python examples/echo_agent_v2.py
  acpgen bridge --client-protocol v2 --lost-log lost.jsonl -- my-v1-agent --acp
"""


@click.command("bridge", help=HELP, context_settings={"ignore_unknown_options": True})
@click.option(
    "--client-protocol",
    type=click.Choice(["v1", "v2"]),
    required=True,
    help="The version the client speaks; the agent speaks the other.",
)
@click.option(
    "--lost-log",
    type=click.Path(dir_okay=False),
    help="Write the values lost in translation to this file, one JSON object a line "
    "(direction, sender, method, path, value, reason); default: one line each on stderr.",
)
@click.option("--no-notes", is_flag=True, help="Do not add the _meta note of what was lost to translated messages.")
@click.option(
    "--packages",
    type=click.Path(file_okay=False),
    help="The directory holding acp_v1 and acp_v2 (default: where `acpgen generate` writes them).",
)
@click.option(
    "--rules",
    type=click.Path(dir_okay=False, exists=True),
    help="A rules file in place of the bridge.toml acpgen ships.",
)
@click.option(
    "--max-message",
    type=click.IntRange(min=1),
    default=64 * 1024 * 1024,
    show_default=True,
    help="The longest line (bytes) read from either peer; a longer one is dropped, said on the loss log, "
    "and answered to its sender with a -32600 error of id null.",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- AGENT COMMAND...")
def bridge_command(
    client_protocol: str,
    lost_log: str | None,
    no_notes: bool,
    packages: str | None,
    rules: str | None,
    max_message: int,
    command: tuple[str, ...],
) -> None:
    from ..bridge import Bridge, load_bridge_rules, sides
    from ..bridge.proxy import LossLog, run
    from ..validate.loader import load_package

    try:
        v1 = load_package(
            "acp_v1", packages_dir=packages, option="--packages", hint="give their directory with --packages"
        )
        v2 = load_package(
            "acp_v2", packages_dir=packages, option="--packages", hint="give their directory with --packages"
        )
        both = sides(v1, v2)
        loaded = load_bridge_rules(both, Path(rules) if rules else None)
        log = LossLog(lost_log)
    except AcpgenError as error:
        fail(error)
    except OSError as error:
        fail(AcpgenError(f"cannot write the loss log: {error.strerror}", file=lost_log))
    bridge = Bridge(both, loaded, int(client_protocol[1]), notes=not no_notes)
    try:
        status = run(bridge, list(command), log, max_message)
    finally:
        log.close()
    # The thread reading the client may still be blocked reading stdin: an
    # interpreter shutting down around it aborts ("could not acquire lock
    # for <stdin> at interpreter shutdown"), so end here, all written.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
